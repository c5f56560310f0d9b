//! The window's state and every action a person can take in it. Owns the
//! lists shown (conversations, providers, presets, settings, each provider's
//! models, the local model servers found at first start), which page is open
//! and the error toast. Talks to Rust only through `ipc.ts`; knows nothing of the
//! DOM except through the injected `ThemeController`.
//!
//! Consistency rule: after every mutation the list is refreshed from Rust, and
//! only the latest-issued refresh may be applied (`LatestOnly`), so quick
//! creates and deletes always settle on exactly what Rust has. A deleted
//! conversation leaves the list at once (ids are never reused, so no stale
//! answer may bring it back), which keeps rapid open → delete → open sequences
//! from acting on a conversation that is already on its way out.

import * as ipc from "./ipc";
import { IpcError, toIpcError } from "./ipc";
import { LatestOnly } from "./latest";
import { ChatSessions } from "./stores/chat-sessions.svelte";
import type { ModelList, ModelLists } from "./model-choice";
import type { ThemeController } from "./theme";
import type {
  McpForm,
  McpFormAnswer,
  AppStatus,
  ConnectionReport,
  Conversation,
  ConversationDetail,
  KeychainStatus,
  LocalServer,
  McpServerStatus,
  McpServerView,
  NewMcpServer,
  ImportPreview,
  ToolReview,
  ModelInfo,
  NewProvider,
  Provider,
  ProviderKindInfo,
  ProviderPreset,
  Settings,
} from "./types";

export type Page =
  | { name: "welcome" }
  | { name: "conversation"; id: string }
  | { name: "providers" }
  | { name: "settings" }
  | { name: "servers" };

export interface Toast {
  id: number;
  message: string;
}

export class AppState {
  status = $state.raw<AppStatus | null>(null);
  keychain = $state.raw<KeychainStatus | null>(null);
  /** true once the first round of loading has finished (successfully or not) */
  ready = $state(false);
  conversations = $state.raw<Conversation[]>([]);
  providers = $state.raw<Provider[]>([]);
  kinds = $state.raw<ProviderKindInfo[]>([]);
  presets = $state.raw<ProviderPreset[]>([]);
  /** provider name → its models, each asked for once per session (see `ensureModels`) */
  modelLists = $state.raw<ModelLists>({});
  /** local model servers found at first start and not yet used or dismissed */
  localServers = $state.raw<LocalServer[]>([]);
  settings = $state.raw<Settings | null>(null);
  /** MCP servers with their states; null until first loaded. */
  servers = $state.raw<McpServerStatus[] | null>(null);
  settingsLoadFailed = $state(false);
  page = $state.raw<Page>({ name: "welcome" });
  /** the open conversation with its messages; null while loading */
  detail = $state.raw<ConversationDetail | null>(null);
  toast = $state.raw<Toast | null>(null);
  /** The chat sessions, by conversation: a running answer outlives the page that shows it. */
  readonly chats = new ChatSessions(() => void this.refreshConversations());

  readonly #theme: ThemeController;
  readonly #conversationsGuard = new LatestOnly();
  readonly #providersGuard = new LatestOnly();
  readonly #detailGuard = new LatestOnly();
  readonly #settingsGuard = new LatestOnly();
  /** any navigation begins a new ticket, so a slow create does not pull the person away */
  readonly #navigation = new LatestOnly();
  #toastCount = 0;
  /** whether `list_providers` has answered at least once */
  #providersLoaded = false;
  /** provider name → the ticket of its latest model request; a forgotten list's answer is dropped */
  readonly #modelTickets = new Map<string, number>();
  /** how many server lists Rust has pushed (a fetched list older than a push is dropped) */
  #serverPushes = 0;
  /** conversations deleted (or being deleted) in this session */
  readonly #deleted = new Set<string>();

  constructor(theme: ThemeController) {
    this.#theme = theme;
  }

  // ------------------------------------------------------------ derived

  get databaseError() {
    return this.status?.database_error ?? null;
  }

  get hasProvider(): boolean {
    return this.providers.length > 0;
  }

  get openId(): string | null {
    return this.page.name === "conversation" ? this.page.id : null;
  }

  /** The open conversation as best known: the loaded detail, else the list entry. */
  get current(): Conversation | null {
    const id = this.openId;
    if (id === null) return null;
    if (this.detail?.conversation.id === id) return this.detail.conversation;
    return this.conversations.find((c) => c.id === id) ?? null;
  }

  kindInfo(kind: string): ProviderKindInfo | undefined {
    return this.kinds.find((k) => k.kind === kind);
  }

  /**
   * The "Add a provider" choices: Rust's presets, or, should those not have
   * loaded, one per kind so the form still works.
   */
  get presetChoices(): ProviderPreset[] {
    if (this.presets.length > 0) return this.presets;
    return this.kinds.map((k) => ({
      id: k.kind,
      label: k.label,
      kind: k.kind,
      base_url: k.default_base_url,
      needs_key: k.needs_key,
      local: k.kind === "ollama",
    }));
  }

  /** Local servers to offer: only while no provider is configured. */
  get localOffers(): LocalServer[] {
    return this.providers.length === 0 ? this.localServers : [];
  }

  // ------------------------------------------------------------ startup

  async start(): Promise<void> {
    try {
      this.status = await ipc.appStatus();
    } catch (err) {
      this.report(err);
    }
    if (this.databaseError) {
      this.ready = true;
      return;
    }
    await Promise.all([
      this.refreshKeychain(),
      this.refreshConversations(),
      this.refreshProviders(),
      this.loadKinds(),
      this.loadPresets(),
      this.loadSettings(),
      this.#watchForms(),
      this.#watchServers(),
    ]);
    this.ready = true;
    // A reloaded window opens the conversation it showed (and attaches to its run, if any).
    const before = rememberedPage();
    if (before?.name === "conversation" && this.conversations.some((c) => c.id === before.id)) {
      void this.openConversation(before.id);
    }
    await this.#lookForLocalServers();
  }

  /** At a first start (no provider yet), asks once which local model servers are running. */
  async #lookForLocalServers(): Promise<void> {
    if (!this.#providersLoaded || this.providers.length > 0) return;
    try {
      this.localServers = await ipc.detectLocalProviders();
    } catch {
      // Only an offer: a failed probe is not worth an error.
    }
  }

  async refreshKeychain(): Promise<void> {
    try {
      this.keychain = await ipc.keychainStatus();
    } catch (err) {
      this.report(err);
    }
  }

  // ------------------------------------------------------------ errors

  /** Shows an error in the toast; never throws. */
  report(err: unknown): void {
    const error = toIpcError(err);
    this.toast = { id: ++this.#toastCount, message: error.message };
  }

  dismissToast(id: number): void {
    if (this.toast?.id === id) this.toast = null;
  }

  // ------------------------------------------------------------ navigation

  #go(page: Page): void {
    this.#navigation.begin();
    this.page = page;
    rememberPage(page);
  }

  showWelcome(): void {
    this.#go({ name: "welcome" });
    this.detail = null;
  }

  showProviders(): void {
    this.#go({ name: "providers" });
  }

  showSettings(): void {
    this.#go({ name: "settings" });
  }

  showServers(): void {
    this.#go({ name: "servers" });
    void this.loadServers();
  }

  async openConversation(id: string, known?: ConversationDetail): Promise<void> {
    this.#go({ name: "conversation", id });
    this.detail = known ?? (this.detail?.conversation.id === id ? this.detail : null);
    const isLatest = this.#detailGuard.begin();
    try {
      const detail = await ipc.getConversation(id);
      if (isLatest() && this.openId === id) this.detail = detail;
    } catch (err) {
      if (!isLatest() || this.#deleted.has(id)) return;
      this.report(err);
      if (err instanceof IpcError && err.kind === "not_found" && this.openId === id) {
        this.showWelcome();
        void this.refreshConversations();
      }
    }
  }

  // ------------------------------------------------------------ conversations

  async refreshConversations(): Promise<void> {
    const isLatest = this.#conversationsGuard.begin();
    try {
      const list = await ipc.listConversations();
      if (isLatest()) this.conversations = this.#withoutDeleted(list);
    } catch (err) {
      if (isLatest()) this.report(err);
    }
  }

  #withoutDeleted(list: Conversation[]): Conversation[] {
    return this.#deleted.size === 0 ? list : list.filter((c) => !this.#deleted.has(c.id));
  }

  /** Creates a conversation and opens it, unless the person went elsewhere meanwhile. */
  async newConversation(): Promise<void> {
    const stillWanted = this.#navigation.begin();
    try {
      const created = await ipc.createConversation(null);
      this.conversations = [created, ...this.conversations.filter((c) => c.id !== created.id)];
      if (stillWanted()) void this.openConversation(created.id, { conversation: created, messages: [], tool_runs: [], older: null });
    } catch (err) {
      this.report(err);
    }
    await this.refreshConversations();
  }

  /**
   * Renames and shows the title Rust returned (it may be trimmed).
   * @throws IpcError, for the caller to show beside the title input
   */
  async renameConversation(id: string, title: string): Promise<Conversation> {
    try {
      const renamed = await ipc.renameConversation(id, title);
      this.conversations = this.conversations.map((c) => (c.id === renamed.id ? renamed : c));
      if (this.detail?.conversation.id === renamed.id) {
        this.detail = { ...this.detail, conversation: renamed };
      }
      return renamed;
    } finally {
      void this.refreshConversations();
    }
  }

  /**
   * Puts a conversation in or out of auto-approve, then shows it as Rust has it.
   * @throws IpcError
   */
  async setAutoApprove(id: string, on: boolean): Promise<void> {
    await ipc.setAutoApprove(id, on);
    await this.openConversation(id);
    void this.refreshConversations();
  }

  /** Takes the conversation out of the list (and closes it) at once; puts it back if Rust refuses. */
  async deleteConversation(id: string): Promise<void> {
    this.#deleted.add(id);
    this.chats.forget(id);
    this.conversations = this.conversations.filter((c) => c.id !== id);
    if (this.openId === id) this.showWelcome();
    try {
      await ipc.deleteConversation(id);
    } catch (err) {
      if (!(err instanceof IpcError && err.kind === "not_found")) this.#deleted.delete(id);
      this.report(err);
    }
    await this.refreshConversations();
  }

  // ------------------------------------------------------------ providers

  async refreshProviders(): Promise<void> {
    const isLatest = this.#providersGuard.begin();
    try {
      const list = await ipc.listProviders();
      this.#providersLoaded = true;
      if (isLatest()) this.providers = list;
    } catch (err) {
      if (isLatest()) this.report(err);
    }
  }

  async loadKinds(): Promise<void> {
    try {
      this.kinds = await ipc.listProviderKinds();
    } catch (err) {
      this.report(err);
    }
  }

  async loadPresets(): Promise<void> {
    try {
      this.presets = await ipc.listProviderPresets();
    } catch (err) {
      this.report(err);
    }
  }

  #replaceProvider(updated: Provider): void {
    this.providers = this.providers.map((p) => (p.name === updated.name ? updated : p));
  }

  /**
   * @throws IpcError, for the form to show beside the field at fault
   */
  async addProvider(provider: NewProvider): Promise<Provider> {
    try {
      const added = await ipc.addProvider(provider);
      this.#forgetModels(added.name);
      this.providers = [...this.providers.filter((p) => p.name !== added.name), added];
      return added;
    } finally {
      void this.refreshProviders();
    }
  }

  /**
   * @throws IpcError
   */
  async setProviderKey(name: string, apiKey: string): Promise<Provider> {
    try {
      const updated = await ipc.setProviderKey(name, apiKey);
      this.#replaceProvider(updated);
      this.#forgetModels(name);
      return updated;
    } finally {
      void this.refreshProviders();
    }
  }

  async deleteProviderKey(name: string): Promise<void> {
    try {
      this.#replaceProvider(await ipc.deleteProviderKey(name));
      this.#forgetModels(name);
    } catch (err) {
      this.report(err);
    }
    await this.refreshProviders();
  }

  async removeProvider(name: string): Promise<void> {
    try {
      await ipc.removeProvider(name);
      this.providers = this.providers.filter((p) => p.name !== name);
      this.#forgetModels(name);
    } catch (err) {
      this.report(err);
    }
    // Rust may have cleared a default that named this provider.
    await Promise.all([this.refreshProviders(), this.loadSettings()]);
  }

  /** Never rejects: a failure to reach the provider comes back as a report with `ok` false. */
  async testProvider(name: string): Promise<ConnectionReport> {
    try {
      const report = await ipc.testProvider(name);
      if (report.ok) this.#setModels(name, { state: "ready", models: report.models });
      return report;
    } catch (err) {
      const error = toIpcError(err);
      return { ok: false, elapsed_ms: 0, models: [], error_kind: error.kind, message: error.message };
    }
  }

  // ------------------------------------------------------------ local servers

  /**
   * Adds a local server found at start as a provider (named as the server,
   * its first model as the default) and stops offering it. A failure goes to
   * the toast.
   */
  async useLocalServer(server: LocalServer): Promise<void> {
    try {
      const added = await this.addProvider({
        name: server.label,
        kind: server.kind,
        base_url: server.base_url,
        default_model: server.suggested_model ?? server.models[0]?.id ?? null,
        api_key: null,
      });
      this.#setModels(added.name, { state: "ready", models: server.models });
      this.localServers = this.localServers.filter((s) => s.preset_id !== server.preset_id);
    } catch (err) {
      this.report(err);
    }
  }

  /** "Not now": no more offer of this server in this session. */
  dismissLocalServer(presetId: string): void {
    this.localServers = this.localServers.filter((s) => s.preset_id !== presetId);
  }

  // ------------------------------------------------------------ models

  #setModels(name: string, list: ModelList): void {
    this.modelLists = { ...this.modelLists, [name]: list };
  }

  /** Drops a provider's list (its key or existence changed); an answer on its way is ignored. */
  #forgetModels(name: string): void {
    this.#modelTickets.set(name, (this.#modelTickets.get(name) ?? 0) + 1);
    if (name in this.modelLists) {
      const { [name]: _dropped, ...rest } = this.modelLists;
      this.modelLists = rest;
    }
  }

  /** Asks for each named provider's models, unless this session already has (or is asking). */
  ensureModels(names: readonly string[]): void {
    for (const name of names) {
      if (!(name in this.modelLists)) void this.loadModels(name);
    }
  }

  /** Asks every provider for its models again ("Refresh models"). */
  refreshModels(): Promise<void> {
    return Promise.all(this.providers.map((p) => this.loadModels(p.name))).then(() => undefined);
  }

  /** Asks one provider for its models; a failure is kept in its list, not toasted. */
  async loadModels(name: string): Promise<void> {
    const ticket = (this.#modelTickets.get(name) ?? 0) + 1;
    this.#modelTickets.set(name, ticket);
    const isLatest = () => this.#modelTickets.get(name) === ticket;
    const known: ModelInfo[] = this.modelLists[name]?.models ?? [];
    this.#setModels(name, { state: "loading", models: known });
    try {
      const models = await ipc.listModels(name);
      if (isLatest()) this.#setModels(name, { state: "ready", models });
    } catch (err) {
      if (isLatest()) this.#setModels(name, { state: "failed", models: known, message: toIpcError(err).message });
    }
  }

  /**
   * Picks the model a conversation chats with and shows what Rust stored.
   * @throws IpcError
   */
  async setConversationModel(id: string, provider: string | null, model: string | null): Promise<Conversation> {
    try {
      const updated = await ipc.setConversationModel(id, provider, model);
      this.conversations = this.conversations.map((c) => (c.id === updated.id ? updated : c));
      if (this.detail?.conversation.id === updated.id) {
        this.detail = { ...this.detail, conversation: updated };
      }
      return updated;
    } finally {
      void this.refreshConversations();
    }
  }

  // ------------------------------------------------------------ MCP servers

  async loadServers(): Promise<void> {
    const pushesBefore = this.#serverPushes;
    try {
      const servers = await ipc.listMcpServers();
      // A list Rust pushed while this one was on its way is newer: keep that.
      if (this.#serverPushes === pushesBefore) this.servers = servers;
    } catch (err) {
      this.report(err);
    }
  }

  /** Runs one action on a server, reports a failure in the toast, then reloads the list. */
  async #onServer<T>(action: () => Promise<T>): Promise<T | undefined> {
    try {
      return await action();
    } catch (err) {
      this.report(err);
      return undefined;
    } finally {
      await this.loadServers();
    }
  }

  /** Rust shows its own native dialog; resolves whether the person approved. */
  async approveServer(name: string): Promise<boolean> {
    return (await this.#onServer(() => ipc.approveMcpServer(name))) ?? false;
  }

  async setServerEnabled(name: string, enabled: boolean): Promise<void> {
    await this.#onServer(() => ipc.setMcpServerEnabled(name, enabled));
  }

  /** Forms MCP servers are waiting on, oldest first; the window shows the first. */
  forms = $state.raw<McpForm[]>([]);

  /** Rust pushes the server list at every change: the Servers page never polls. */
  async #watchServers(): Promise<void> {
    try {
      await ipc.watchMcpServers((servers) => {
        this.#serverPushes++;
        this.servers = servers;
      });
    } catch (err) {
      // The page still loads the list when opened and after each action.
      console.error("cannot listen for MCP server changes", err);
    }
  }

  async #watchForms(): Promise<void> {
    try {
      await ipc.watchMcpForms((form) => {
        this.forms = [...this.forms.filter((f) => f.id !== form.id), form];
      });
    } catch (err) {
      // Without a listener Rust declines every form (and logs it); nothing to show here.
      console.error("cannot listen for MCP servers' forms", err);
    }
  }

  /**
   * Sends the person's answer to a form; the form closes when Rust took it.
   * @throws IpcError when the values do not fit the form (it stays open)
   */
  async answerForm(id: string, answer: McpFormAnswer): Promise<void> {
    try {
      await ipc.answerMcpForm(id, answer);
    } catch (err) {
      const error = toIpcError(err);
      if (error.kind !== "not_found" && !error.message.includes("no longer open")) throw error;
    }
    this.forms = this.forms.filter((f) => f.id !== id);
  }

  async signInServer(name: string): Promise<void> {
    await this.#onServer(() => ipc.signInMcpServer(name));
  }

  async signOutServer(name: string): Promise<void> {
    await this.#onServer(() => ipc.signOutMcpServer(name));
  }

  async restartServer(name: string): Promise<void> {
    await this.#onServer(() => ipc.restartMcpServer(name));
  }

  async removeServer(name: string): Promise<void> {
    await this.#onServer(() => ipc.removeMcpServer(name));
  }

  /**
   * @throws IpcError (for the form: `field` is name, command_line or url)
   */
  async addServer(server: NewMcpServer): Promise<McpServerView> {
    try {
      return await ipc.addMcpServer(server);
    } finally {
      void this.loadServers();
    }
  }

  /**
   * Rust stops the server and asks for approval of the new command line in its own dialog.
   * @throws IpcError (for the form: `field` is command_line or url)
   */
  async editServer(name: string, typed: { command_line?: string; url?: string }): Promise<McpServerView> {
    try {
      return await ipc.editMcpServer(name, typed);
    } finally {
      void this.loadServers();
    }
  }

  /**
   * @throws IpcError (shown by the import panel)
   */
  async previewImport(text: string | null): Promise<ImportPreview> {
    return ipc.previewMcpImport(text);
  }

  /**
   * @throws IpcError (shown by the import panel)
   */
  async importServers(text: string | null): Promise<string[]> {
    try {
      return await ipc.importMcpServers(text);
    } finally {
      void this.loadServers();
    }
  }

  /** A running server's tools; a failure is reported and reads as none. */
  async serverTools(name: string): Promise<ToolReview[]> {
    try {
      return await ipc.listMcpTools(name);
    } catch (err) {
      this.report(err);
      return [];
    }
  }

  /** Rust asks in its native dialog; resolves whether the change was accepted. */
  async acceptTool(name: string, tool: string): Promise<boolean> {
    try {
      return await ipc.acceptMcpTool(name, tool);
    } catch (err) {
      this.report(err);
      return false;
    }
  }

  /** The end of a server's stderr log; a failure is reported and reads as empty. */
  async serverLog(name: string): Promise<string> {
    try {
      return await ipc.mcpServerLog(name);
    } catch (err) {
      this.report(err);
      return "";
    }
  }

  // ------------------------------------------------------------ settings

  async loadSettings(): Promise<void> {
    const isLatest = this.#settingsGuard.begin();
    try {
      const settings = await ipc.getSettings();
      if (!isLatest()) return;
      this.settings = settings;
      this.settingsLoadFailed = false;
      this.#theme.set(settings.theme);
    } catch (err) {
      if (!isLatest()) return;
      this.settingsLoadFailed = this.settings === null;
      this.report(err);
    }
  }

  /**
   * Saves and applies the settings Rust returned.
   * @throws IpcError, whose `field` names the Settings key at fault
   */
  async saveSettings(settings: Settings): Promise<Settings> {
    const isLatest = this.#settingsGuard.begin();
    const saved = await ipc.updateSettings(settings);
    if (isLatest()) {
      this.settings = saved;
      this.#theme.set(saved.theme);
    }
    return saved;
  }
}

const PAGE_KEY = "switchboard.page";

/** The page shown, kept for this window's life only (a reload, not a relaunch). */
function rememberPage(page: Page): void {
  try {
    sessionStorage.setItem(PAGE_KEY, JSON.stringify(page));
  } catch {
    // No storage (a test's DOM, a locked-down webview): a reload just starts at the welcome page.
  }
}

function rememberedPage(): Page | null {
  try {
    const page: unknown = JSON.parse(sessionStorage.getItem(PAGE_KEY) ?? "null");
    if (typeof page === "object" && page !== null && (page as Page).name === "conversation") {
      const id = (page as { id?: unknown }).id;
      return typeof id === "string" ? { name: "conversation", id } : null;
    }
  } catch {
    // As above.
  }
  return null;
}
