// Hands the window's stores to its components through Svelte context: `App.svelte` calls
// `setStores` once, and each component takes the stores it uses with `getUi()`,
// `getConversations()` and the like, never through a prop. The key is private to this module;
// `storesContext` builds the context map a test (or `mount`) passes in to render one component on
// its own. (Svelte's `createContext` hides its key, so a test could not build that map.)

import { getContext, setContext } from "svelte";
import type { ActivityStore } from "../activity/activity.svelte";
import type { SchedulesStore } from "../schedules/schedules.svelte";
import type { SkillsStore } from "../skills/skills.svelte";
import type { ArtifactsStore } from "../canvas/artifacts.svelte";
import type { AttachmentsStore } from "../chat/attachments.svelte";
import type { ChatSessions } from "../chat/chat-sessions.svelte";
import type { ConversationsStore } from "../chat/conversations.svelte";
import type { ProfilesStore } from "../profiles/profiles.svelte";
import type { ProjectsStore } from "../projects/projects.svelte";
import type { MemoryStore } from "../memory/memory.svelte";
import type { ProvidersStore } from "../providers/providers.svelte";
import type { ServersStore } from "../servers/servers.svelte";
import type { PoliciesStore } from "../settings/policies.svelte";
import type { SettingsStore } from "../settings/settings.svelte";
import type { Stores } from "./stores";
import type { UiStore } from "./ui.svelte";
import type { UsageStore } from "../usage/usage.svelte";

const KEY = Symbol("switchboard.stores");

/** Makes `stores` the stores of the calling component and everything below it. */
export function setStores(stores: Stores): Stores {
  return setContext(KEY, stores);
}

/** The context map for `mount` / `render(Component, { context })`. */
export function storesContext(stores: Stores): Map<unknown, unknown> {
  return new Map<unknown, unknown>([[KEY, stores]]);
}

function stores(): Stores {
  const found = getContext<Stores | undefined>(KEY);
  if (!found) throw new Error("no stores in context: render the component below App (or with storesContext)");
  return found;
}

export function getUi(): UiStore {
  return stores().ui;
}

export function getConversations(): ConversationsStore {
  return stores().conversations;
}

export function getChats(): ChatSessions {
  return stores().chats;
}

export function getProviders(): ProvidersStore {
  return stores().providers;
}

export function getServers(): ServersStore {
  return stores().servers;
}

export function getSettings(): SettingsStore {
  return stores().settings;
}

export function getAttachments(): AttachmentsStore {
  return stores().attachments;
}

export function getArtifacts(): ArtifactsStore {
  return stores().artifacts;
}

export function getUsage(): UsageStore {
  return stores().usage;
}

export function getProfiles(): ProfilesStore {
  return stores().profiles;
}

export function getPolicies(): PoliciesStore {
  return stores().policies;
}

export function getActivity(): ActivityStore {
  return stores().activity;
}

export function getSkills(): SkillsStore {
  return stores().skills;
}

export function getProjects(): ProjectsStore {
  return stores().projects;
}

export function getMemory(): MemoryStore {
  return stores().memory;
}

export function getSchedules(): SchedulesStore {
  return stores().schedules;
}
