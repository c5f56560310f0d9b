//! Client-side checks and the conversions between form drafts and the
//! mirrored IPC types. Pure functions: no DOM, no IPC.

import type { NewProvider, ProviderKind, ProviderKindInfo, Settings, Theme } from "./types";

/** Field name → message, for the fields that have a problem. */
export type FieldErrors = Record<string, string>;

/** True for an absolute http:// or https:// address with a host. */
export function isHttpUrl(text: string): boolean {
  const value = text.trim();
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- providers

export const PROVIDER_FIELDS = ["name", "kind", "base_url", "default_model", "api_key"] as const;
export type ProviderField = (typeof PROVIDER_FIELDS)[number];

export interface ProviderDraft {
  kind: ProviderKind | "";
  name: string;
  base_url: string;
  default_model: string;
  api_key: string;
}

export function emptyProviderDraft(kind: ProviderKind | "" = ""): ProviderDraft {
  return { kind, name: "", base_url: "", default_model: "", api_key: "" };
}

export function validateProviderDraft(draft: ProviderDraft): FieldErrors {
  const errors: FieldErrors = {};
  if (draft.kind === "") errors.kind = "Choose the kind of provider.";
  if (draft.name.trim() === "") errors.name = "Enter a name for this provider.";
  if (draft.base_url.trim() !== "" && !isHttpUrl(draft.base_url)) {
    errors.base_url = "Enter an address that starts with http:// or https://, or leave it empty for the default.";
  }
  return errors;
}

function orNull(text: string): string | null {
  const value = text.trim();
  return value === "" ? null : value;
}

/** The `NewProvider` to send. The key is left out for kinds that need none. */
export function toNewProvider(draft: ProviderDraft, kind: ProviderKindInfo): NewProvider {
  return {
    name: draft.name.trim(),
    kind: kind.kind,
    base_url: orNull(draft.base_url),
    default_model: orNull(draft.default_model),
    api_key: kind.needs_key && draft.api_key !== "" ? draft.api_key : null,
  };
}

// ----------------------------------------------------------------- settings

export const MAX_ROUNDS = { min: 1, max: 100 } as const;
export const TOOL_TIMEOUT_SECS = { min: 1, max: 3600 } as const;
export const RUN_TIME_LIMIT_MINUTES = { min: 1, max: 1440 } as const;

/** What the settings form edits: the run time limit in minutes, "" for no default provider. */
export interface SettingsDraft {
  theme: Theme;
  default_provider: string;
  default_model: string;
  max_rounds: number | null;
  tool_timeout_secs: number | null;
  run_time_limit_minutes: number | null;
}

export function settingsToDraft(settings: Settings): SettingsDraft {
  return {
    theme: settings.theme,
    default_provider: settings.default_provider ?? "",
    default_model: settings.default_model ?? "",
    max_rounds: settings.max_rounds,
    tool_timeout_secs: settings.tool_timeout_secs,
    run_time_limit_minutes: Math.round((settings.run_time_limit_secs / 60) * 100) / 100,
  };
}

function checkRange(
  value: number | null,
  range: { min: number; max: number },
  what: string,
  integer: boolean,
): string | null {
  if (value === null || !Number.isFinite(value)) return `Enter ${what}.`;
  if (integer && !Number.isInteger(value)) return `Enter a whole number from ${range.min} to ${range.max}.`;
  if (value < range.min || value > range.max) return `Enter a number from ${range.min} to ${range.max}.`;
  return null;
}

export function validateSettingsDraft(draft: SettingsDraft): FieldErrors {
  const errors: FieldErrors = {};
  const rounds = checkRange(draft.max_rounds, MAX_ROUNDS, "the number of rounds", true);
  if (rounds) errors.max_rounds = rounds;
  const timeout = checkRange(draft.tool_timeout_secs, TOOL_TIMEOUT_SECS, "a timeout in seconds", true);
  if (timeout) errors.tool_timeout_secs = timeout;
  const limit = checkRange(draft.run_time_limit_minutes, RUN_TIME_LIMIT_MINUTES, "a time limit in minutes", false);
  if (limit) errors.run_time_limit_minutes = limit;
  return errors;
}

/** Call only after `validateSettingsDraft` returned no errors. */
export function draftToSettings(draft: SettingsDraft): Settings {
  return {
    theme: draft.theme,
    default_provider: orNull(draft.default_provider),
    default_model: orNull(draft.default_model),
    max_rounds: draft.max_rounds ?? MAX_ROUNDS.min,
    tool_timeout_secs: draft.tool_timeout_secs ?? TOOL_TIMEOUT_SECS.min,
    run_time_limit_secs: Math.round((draft.run_time_limit_minutes ?? RUN_TIME_LIMIT_MINUTES.min) * 60),
  };
}

/** The settings form field that shows an error Rust reported for a `Settings` key. */
export function settingsInputFor(field: string): string {
  return field === "run_time_limit_secs" ? "run_time_limit_minutes" : field;
}
