//! Which model a conversation chats with, and what the composer's model picker
//! offers. Pure functions over the lists the stores hold: no IPC, no DOM.

import type { Conversation, ModelInfo, Provider, Settings } from "../lib/types";

/** One provider's model list as far as this session knows it. */
export type ModelList =
  /** being asked for; `models` keeps what an earlier answer said, if any */
  | { state: "loading"; models: ModelInfo[] }
  | { state: "ready"; models: ModelInfo[] }
  /** `list_models` failed; `message` says why */
  | { state: "failed"; models: ModelInfo[]; message: string };

/** Provider name → its model list; a provider not here has not been asked yet. */
export type ModelLists = Readonly<Record<string, ModelList>>;

export interface ModelChoice {
  provider: string;
  model: string;
}

/** The model to use with `provider` when none is named: its default, else the first one it lists. */
export function fallbackModel(provider: Provider, lists: ModelLists): string | null {
  return provider.default_model ?? lists[provider.name]?.models[0]?.id ?? null;
}

/**
 * The model a conversation chats with: the one picked for it (if its provider
 * still exists), else the Settings default provider and model, else the first
 * provider that has a default or a listed model. Null when nothing is known yet.
 */
export function chosenModel(
  conversation: Pick<Conversation, "provider" | "model"> | null,
  providers: readonly Provider[],
  settings: Pick<Settings, "default_provider" | "default_model"> | null,
  lists: ModelLists,
): ModelChoice | null {
  const byName = (name: string | null | undefined) =>
    name ? providers.find((p) => p.name === name) : undefined;

  const picked = byName(conversation?.provider);
  if (picked) {
    const model = conversation?.model ?? fallbackModel(picked, lists);
    if (model) return { provider: picked.name, model };
  }

  const preferred = byName(settings?.default_provider);
  if (preferred) {
    const model = settings?.default_model ?? fallbackModel(preferred, lists);
    if (model) return { provider: preferred.name, model };
  }

  for (const provider of providers) {
    const model = fallbackModel(provider, lists);
    if (model) return { provider: provider.name, model };
  }
  return null;
}

/** One optgroup of the picker. */
export interface PickerGroup {
  provider: string;
  /** model ids: the ones listed, after any the provider or the conversation names that the list lacks */
  models: string[];
  loading: boolean;
  /** why the list could not be fetched, when it could not (the banner above the composer,
   *  ProviderBanner.svelte, says it: one source for the picker and the banner) */
  failure: string | null;
}

/** The picker's groups, one per provider in the order configured. */
export function pickerGroups(
  providers: readonly Provider[],
  lists: ModelLists,
  choice: ModelChoice | null,
): PickerGroup[] {
  return providers.map((provider) => {
    const list = lists[provider.name];
    const listed = (list?.models ?? []).map((m) => m.id);
    const extras = [provider.default_model, choice?.provider === provider.name ? choice.model : null].filter(
      (id): id is string => id !== null && id !== "" && !listed.includes(id),
    );
    return {
      provider: provider.name,
      models: [...new Set([...extras, ...listed])],
      loading: list === undefined || list.state === "loading",
      failure: list?.state === "failed" ? list.message : null,
    };
  });
}

/** The `<option>` value for a provider + model (names may hold any character). */
export function choiceValue(choice: ModelChoice | null): string {
  return choice ? JSON.stringify([choice.provider, choice.model]) : "";
}

/** The provider + model an `<option>` value stands for; null for anything else. */
export function parseChoiceValue(value: string): ModelChoice | null {
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((part) => typeof part === "string")) {
      return { provider: parsed[0] as string, model: parsed[1] as string };
    }
  } catch {
    // not one of ours
  }
  return null;
}
