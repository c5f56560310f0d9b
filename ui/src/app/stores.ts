// The window's stores, one per domain, built together with what each needs passed in (no
// globals, no module-level instances: a test builds its own), and the first round of loading
// (`start`). `main.ts` builds one; `App.svelte` hands it to the components through context
// (`context.ts`). Owns no state of its own.

import type { ThemeController } from "./theme";
import { ActivityStore } from "../activity/activity.svelte";
import { ArtifactsStore } from "../canvas/artifacts.svelte";
import { AttachmentsStore } from "../chat/attachments.svelte";
import { ChatSessions } from "../chat/chat-sessions.svelte";
import { ConversationsStore } from "../chat/conversations.svelte";
import { ProfilesStore } from "../profiles/profiles.svelte";
import { ProjectsStore } from "../projects/projects.svelte";
import { MemoryStore } from "../memory/memory.svelte";
import { ProvidersStore } from "../providers/providers.svelte";
import { ServersStore } from "../servers/servers.svelte";
import { PoliciesStore } from "../settings/policies.svelte";
import { SettingsStore } from "../settings/settings.svelte";
import { SchedulesStore } from "../schedules/schedules.svelte";
import { SkillsStore } from "../skills/skills.svelte";
import { UiStore } from "./ui.svelte";
import { UsageStore } from "../usage/usage.svelte";

export class Stores {
  readonly ui: UiStore;
  readonly settings: SettingsStore;
  readonly providers: ProvidersStore;
  readonly servers: ServersStore;
  /** The chat sessions, by conversation: a running answer outlives the page that shows it. */
  readonly chats: ChatSessions;
  readonly conversations: ConversationsStore;
  /** Files into a message: picked, pasted, dropped on the window. */
  readonly attachments: AttachmentsStore;
  /** The canvas: the files tools produced, by conversation. */
  readonly artifacts: ArtifactsStore;
  /** What models cost: prices, each conversation's total, the Usage page's report. */
  readonly usage: UsageStore;
  /** Profiles: a system prompt, a model, a tool set and limits under a name. */
  readonly profiles: ProfilesStore;
  /** The policy: the rules that allow, ask or block tool calls, and the untrusted and reviewed marks. */
  readonly policies: PoliciesStore;
  /** The Activity page: the record of every tool call. */
  readonly activity: ActivityStore;
  /** The Skills page: the skills folder's skills. */
  readonly skills: SkillsStore;
  /** The Schedules page: prompts that run on a time rule, and their runs. */
  readonly schedules: SchedulesStore;
  readonly projects: ProjectsStore;
  readonly memory: MemoryStore;

  constructor(theme: ThemeController) {
    this.ui = new UiStore(theme);
    this.settings = new SettingsStore(this.ui);
    this.providers = new ProvidersStore(this.ui, this.settings);
    this.servers = new ServersStore(this.ui);
    this.artifacts = new ArtifactsStore();
    this.usage = new UsageStore(this.ui);
    // A run that ends (shown or not) changes the sidebar's order and what the conversation has
    // cost, as does each answer saved; the files its tools produce go to the canvas.
    this.chats = new ChatSessions(
      (conversationId) => {
        void this.conversations.refresh();
        void this.usage.readTotal(conversationId);
      },
      (conversationId, event) => {
        this.artifacts.heard(conversationId, event);
        if (event.type === "message_saved" && event.message.role === "assistant") void this.usage.readTotal(conversationId);
      },
    );
    this.conversations = new ConversationsStore(this.ui, this.chats);
    this.attachments = new AttachmentsStore(this.ui, (bundle) => this.servers.bundleDropped(bundle));
    this.profiles = new ProfilesStore(this.ui, this.conversations);
    this.policies = new PoliciesStore();
    this.activity = new ActivityStore(this.ui);
    this.skills = new SkillsStore(this.ui);
    this.schedules = new SchedulesStore(this.ui);
    this.projects = new ProjectsStore(this.ui, this.conversations);
    this.memory = new MemoryStore(this.ui);
  }

  /** The first round of loading; `ui.ready` once it is done (successfully or not). */
  async start(): Promise<void> {
    const { ui, conversations, providers, servers, settings } = this;
    await ui.loadStatus();
    if (ui.databaseError) {
      ui.ready = true;
      return;
    }
    await Promise.all([
      providers.refreshKeychain(),
      conversations.refresh(),
      this.profiles.load(),
      this.projects.load(),
      providers.refresh(),
      providers.loadKinds(),
      providers.loadPresets(),
      settings.load(),
      servers.watchForms(),
      servers.watchServers(),
      servers.watchProposals(),
      // A scheduled run's conversation joins the list as it starts.
      this.schedules.watch(() => void conversations.refresh()),
      // A task's late result shows on its card as it lands.
      this.chats.watchTasks(),
      this.attachments.watchDrops(),
    ]);
    ui.ready = true;
    // A reloaded window opens the conversation it showed (and attaches to its run, if any).
    const before = ui.rememberedPage();
    if (before?.name === "conversation" && conversations.list.some((c) => c.id === before.id)) {
      void conversations.open(before.id);
    }
    await providers.lookForLocalServers();
  }
}
