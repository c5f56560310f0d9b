//! Client-side checks and the conversions between form drafts and the
//! mirrored IPC types. Pure functions: no DOM, no IPC.

import type { NewProvider, ProviderKind, Settings, Theme } from "../lib/types";

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

/** The add-provider form's inputs, in focus order. The preset select stands for `kind`. */
export const PROVIDER_FIELDS = ["preset", "name", "base_url", "default_model", "api_key"] as const;
export type ProviderField = (typeof PROVIDER_FIELDS)[number];

/** The form input that shows an error reported on a `NewProvider` field. */
export function providerInputFor(field: string): string {
  return field === "kind" ? "preset" : field;
}

/** `label`, or "label 2", "label 3", … : the first that no provider is named yet. */
export function uniqueProviderName(label: string, taken: readonly string[]): string {
  if (!taken.includes(label)) return label;
  for (let n = 2; ; n++) {
    const name = `${label} ${n}`;
    if (!taken.includes(name)) return name;
  }
}

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

/**
 * The draft's problems. `baseUrlRequired`: the chosen provider has no usual
 * address (a custom OpenAI-compatible server), so an empty base URL is one.
 */
export function validateProviderDraft(draft: ProviderDraft, { baseUrlRequired = false } = {}): FieldErrors {
  const errors: FieldErrors = {};
  if (draft.kind === "") errors.kind = "Choose a provider.";
  if (draft.name.trim() === "") errors.name = "Enter a name for this provider.";
  const baseUrl = draft.base_url.trim();
  if (baseUrl === "" && baseUrlRequired) {
    errors.base_url = "Enter the server's address, such as http://127.0.0.1:1234/v1.";
  } else if (baseUrl !== "" && !isHttpUrl(baseUrl)) {
    errors.base_url = baseUrlRequired
      ? "Enter an address that starts with http:// or https://."
      : "Enter an address that starts with http:// or https://, or leave it empty for the default.";
  }
  return errors;
}

function orNull(text: string): string | null {
  const value = text.trim();
  return value === "" ? null : value;
}

/**
 * The `NewProvider` to send; call only after `validateProviderDraft` found
 * nothing. The key goes whenever one was typed: local and custom servers may
 * ask for one too. (The form clears the key when another provider is chosen,
 * so a key typed for one service never goes to another.)
 */
export function toNewProvider(draft: ProviderDraft, kind: ProviderKind): NewProvider {
  return {
    name: draft.name.trim(),
    kind,
    base_url: orNull(draft.base_url),
    default_model: orNull(draft.default_model),
    api_key: draft.api_key !== "" ? draft.api_key : null,
  };
}

// ----------------------------------------------------------------- settings

export const MAX_ROUNDS = { min: 1, max: 100 } as const;
export const TOOL_TIMEOUT_SECS = { min: 1, max: 3600 } as const;
export const RUN_TIME_LIMIT_MINUTES = { min: 1, max: 1440 } as const;
/** How many days the record of tool calls keeps each (Rust's `AUDIT_RETENTION_RANGE`). */
export const AUDIT_RETENTION_DAYS = { min: 1, max: 36_500 } as const;

/** What the settings form edits: the run time limit in minutes, "" for no default provider. */
export interface SettingsDraft {
  theme: Theme;
  default_provider: string;
  default_model: string;
  max_rounds: number | null;
  tool_timeout_secs: number | null;
  run_time_limit_minutes: number | null;
  describe_calls: boolean;
  default_system_prompt: string;
  mcp_registry: string;
  /** how long a local server keeps a model loaded ("5m", "-1"…); "" for the server's default */
  keep_alive: string;
  /** how many days the record of tool calls keeps each */
  audit_retention_days: number | null;
  keep_running_in_background: boolean;
  memory: boolean;
}

/** The longest system prompt Rust keeps, in characters (`MAX_SYSTEM_PROMPT_CHARS`). */
export const MAX_SYSTEM_PROMPT_CHARS = 32_000;

export function settingsToDraft(settings: Settings): SettingsDraft {
  return {
    theme: settings.theme,
    default_provider: settings.default_provider ?? "",
    default_model: settings.default_model ?? "",
    max_rounds: settings.max_rounds,
    tool_timeout_secs: settings.tool_timeout_secs,
    run_time_limit_minutes: Math.round((settings.run_time_limit_secs / 60) * 100) / 100,
    describe_calls: settings.describe_calls,
    default_system_prompt: settings.default_system_prompt,
    mcp_registry: settings.mcp_registry,
    keep_alive: settings.keep_alive ?? "",
    audit_retention_days: settings.audit_retention_days,
    keep_running_in_background: settings.keep_running_in_background,
    memory: settings.memory,
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
  const retention = checkRange(draft.audit_retention_days, AUDIT_RETENTION_DAYS, "a number of days", true);
  if (retention) errors.audit_retention_days = retention;
  if ([...draft.default_system_prompt].length > MAX_SYSTEM_PROMPT_CHARS) {
    errors.default_system_prompt = `A system prompt can be at most ${MAX_SYSTEM_PROMPT_CHARS} characters long.`;
  }
  const registry = draft.mcp_registry.trim();
  if (registry !== "" && !isWebAddress(registry)) errors.mcp_registry = "Enter the registry's http:// or https:// address.";
  if (!isKeepAlive(draft.keep_alive)) {
    errors.keep_alive = "Enter how long as 30s, 5m or 1h, 0 to unload at once, or -1 to keep it loaded; or leave it empty.";
  }
  return errors;
}

/**
 * Whether `text` (trimmed) is a `keep_alive` a local server (Ollama) reads, as Rust's
 * `settings::is_keep_alive` says: a whole number of seconds (negative: for ever), or one
 * followed by `s`, `m` or `h`, at most 9 digits; empty for the server's own default.
 */
export function isKeepAlive(text: string): boolean {
  const value = text.trim();
  return value === "" || /^(-?\d{1,9}|\d{1,9}[smh])$/.test(value);
}

/** Whether `text` is an http:// or https:// address with a host. */
function isWebAddress(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
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
    describe_calls: draft.describe_calls,
    default_system_prompt: draft.default_system_prompt,
    mcp_registry: draft.mcp_registry.trim(),
    keep_alive: draft.keep_alive.trim(),
    audit_retention_days: draft.audit_retention_days ?? AUDIT_RETENTION_DAYS.max,
    keep_running_in_background: draft.keep_running_in_background,
    memory: draft.memory,
  };
}

/** The settings form field that shows an error Rust reported for a `Settings` key. */
export function settingsInputFor(field: string): string {
  return field === "run_time_limit_secs" ? "run_time_limit_minutes" : field;
}
