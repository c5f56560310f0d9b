//! Profiles on the page's side: the draft the profile form edits and the fields it sends, its
//! checks before sending (Rust checks again), the tool switches as the form flips them, and the
//! words a profile's line in Settings says of it. Pure functions: no IPC, no DOM.

import type { Profile, ProfileFields, ToolToggle } from "../lib/types";
import { MAX_ROUNDS, MAX_SYSTEM_PROMPT_CHARS, TOOL_TIMEOUT_SECS, type FieldErrors } from "../shared/validation";

/** The longest profile name Rust keeps, in characters (`MAX_PROFILE_NAME_CHARS`). */
export const MAX_PROFILE_NAME_CHARS = 60;
/** A profile's run time limit, in seconds (`RUN_TIME_LIMIT_RANGE`). */
export const RUN_TIME_LIMIT_SECS = { min: 10, max: 86_400 } as const;

/** The form's fields (their `name` attributes, as Rust names them in errors), in focus order. */
export const PROFILE_FIELDS = [
  "name",
  "system_prompt",
  "provider",
  "model",
  "max_rounds",
  "tool_timeout_secs",
  "run_time_limit_secs",
  "tools",
] as const;

export type LimitField = "max_rounds" | "tool_timeout_secs" | "run_time_limit_secs";

/** The three limits, in the order shown, with their ranges. */
export const PROFILE_LIMITS: readonly { field: LimitField; label: string; range: { min: number; max: number }; testid: string }[] = [
  { field: "max_rounds", label: "Max rounds", range: MAX_ROUNDS, testid: "profile-max-rounds" },
  { field: "tool_timeout_secs", label: "Tool timeout (seconds)", range: TOOL_TIMEOUT_SECS, testid: "profile-tool-timeout" },
  { field: "run_time_limit_secs", label: "Run time limit (seconds)", range: RUN_TIME_LIMIT_SECS, testid: "profile-time-limit" },
];

/** What the profile form edits: text as typed; a blank limit is Settings' value; "" for no provider. */
export interface ProfileDraft {
  name: string;
  system_prompt: string;
  provider: string;
  model: string;
  max_rounds: string;
  tool_timeout_secs: string;
  run_time_limit_secs: string;
  tools: ToolToggle[];
}

export function profileToDraft(profile: Profile | null): ProfileDraft {
  const limit = (value: number | null | undefined) => (value === null || value === undefined ? "" : String(value));
  return {
    name: profile?.name ?? "",
    system_prompt: profile?.system_prompt ?? "",
    provider: profile?.provider ?? "",
    model: profile?.model ?? "",
    max_rounds: limit(profile?.max_rounds),
    tool_timeout_secs: limit(profile?.tool_timeout_secs),
    run_time_limit_secs: limit(profile?.run_time_limit_secs),
    tools: (profile?.tools ?? []).map((t) => ({ ...t })),
  };
}

/** A limit as typed: null when blank (Settings' value), NaN when not a number. */
function readLimit(text: string): number | null {
  const trimmed = text.trim();
  return trimmed === "" ? null : Number(trimmed);
}

export function validateProfileDraft(draft: ProfileDraft): FieldErrors {
  const errors: FieldErrors = {};
  const name = draft.name.trim();
  if (name === "") errors.name = "Name the profile.";
  else if ([...name].length > MAX_PROFILE_NAME_CHARS) errors.name = `Keep the name to ${MAX_PROFILE_NAME_CHARS} characters or fewer.`;
  if ([...draft.system_prompt].length > MAX_SYSTEM_PROMPT_CHARS) {
    errors.system_prompt = `A system prompt can be at most ${MAX_SYSTEM_PROMPT_CHARS} characters long.`;
  }
  if (draft.provider === "" && draft.model.trim() !== "") errors.provider = "Choose the model's provider too.";
  for (const { field, range } of PROFILE_LIMITS) {
    const value = readLimit(draft[field]);
    if (value !== null && (!Number.isInteger(value) || value < range.min || value > range.max)) {
      errors[field] = `Enter a whole number from ${range.min} to ${range.max}, or leave it blank for Settings' value.`;
    }
  }
  return errors;
}

/** Call only after `validateProfileDraft` found nothing. */
export function draftToFields(draft: ProfileDraft, servers: readonly string[] = []): ProfileFields {
  const provider = draft.provider === "" ? null : draft.provider;
  const model = draft.model.trim();
  return {
    system_prompt: draft.system_prompt,
    provider,
    model: provider === null || model === "" ? null : model,
    max_rounds: readLimit(draft.max_rounds),
    tool_timeout_secs: readLimit(draft.tool_timeout_secs),
    run_time_limit_secs: readLimit(draft.run_time_limit_secs),
    // Every server the form showed is named, on or off: a server the profile does not name
    // (one added later) follows the switches new conversations start with.
    tools: [
      ...draft.tools.map((t) => ({ ...t })),
      ...servers
        .filter((server) => !draft.tools.some((t) => t.server === server && t.tool === null))
        .map((server) => ({ server, tool: null, enabled: true })),
    ],
  };
}

// ----------------------------------------------------------------- tool switches

/** The "server" a profile's (and a conversation's) switch for a skill is kept under, its "tool"
 *  the skill's name: Rust's `skills::SWITCHES`, a name no configured server can have. */
export const SKILL_SWITCHES = "switchboard/skills";

/** The servers a form's switches show: the configured ones, then any the switches name that is
 *  not configured here (never the skills' switches). */
export function switchedServers(configured: readonly { name: string }[] | null, tools: readonly ToolToggle[]): string[] {
  const names = (configured ?? []).map((s) => s.name);
  return [...names, ...[...new Set(tools.map((t) => t.server))].filter((name) => !names.includes(name) && name !== SKILL_SWITCHES)];
}

/** Whether a server is on: its own switch, else on (anything not listed is on). */
export function serverOn(tools: readonly ToolToggle[], server: string): boolean {
  return tools.find((t) => t.server === server && t.tool === null)?.enabled ?? true;
}

/** Whether a tool is on: its own switch beats its server's. */
export function toolOn(tools: readonly ToolToggle[], server: string, tool: string): boolean {
  return tools.find((t) => t.server === server && t.tool === tool)?.enabled ?? serverOn(tools, server);
}

/** Whether any tool of `server` has a switch of its own that says otherwise than the server's. */
export function serverMixed(tools: readonly ToolToggle[], server: string): boolean {
  const on = serverOn(tools, server);
  return tools.some((t) => t.server === server && t.tool !== null && t.enabled !== on);
}

/** Switches a whole server: its tools' own switches go (as a conversation's do); on is not listed. */
export function withServer(tools: readonly ToolToggle[], server: string, on: boolean): ToolToggle[] {
  const rest = tools.filter((t) => t.server !== server);
  return on ? rest : [...rest, { server, tool: null, enabled: false }];
}

/** Switches one tool; a switch that says what its server says is not listed. */
export function withTool(tools: readonly ToolToggle[], server: string, tool: string, on: boolean): ToolToggle[] {
  const rest = tools.filter((t) => !(t.server === server && t.tool === tool));
  return on === serverOn(rest, server) ? rest : [...rest, { server, tool, enabled: on }];
}

// ----------------------------------------------------------------- a profile's line

/** The model a profile names, in words. */
export function modelLabel(profile: Pick<Profile, "provider" | "model">): string {
  if (profile.provider === null) return "Settings' default";
  return profile.model === null ? `${profile.provider} · default model` : `${profile.provider} · ${profile.model}`;
}

function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** What a profile switches off, in words: "All on", "1 server and 2 tools off". */
export function toolsOffLabel(tools: readonly ToolToggle[]): string {
  const isSkill = (t: ToolToggle) => t.server === SKILL_SWITCHES;
  const servers = tools.filter((t) => !isSkill(t) && t.tool === null && !t.enabled).length;
  const single = tools.filter((t) => !isSkill(t) && t.tool !== null && !t.enabled && serverOn(tools, t.server)).length;
  const skills = tools.filter((t) => isSkill(t) && t.tool !== null && !t.enabled).length;
  if (servers === 0 && single === 0 && skills === 0) return "All on";
  const parts = [
    servers > 0 ? counted(servers, "server", "servers") : null,
    single > 0 ? counted(single, "tool", "tools") : null,
    skills > 0 ? counted(skills, "skill", "skills") : null,
  ];
  return `${parts.filter((p) => p !== null).join(" and ")} off`;
}

/** The limits a profile sets, in words; null when it keeps Settings' values. */
export function limitsLabel(profile: Pick<Profile, LimitField>): string | null {
  const parts = [
    profile.max_rounds === null ? null : counted(profile.max_rounds, "round", "rounds"),
    profile.tool_timeout_secs === null ? null : `${profile.tool_timeout_secs} s per tool`,
    profile.run_time_limit_secs === null ? null : `${profile.run_time_limit_secs} s per run`,
  ].filter((p) => p !== null);
  return parts.length === 0 ? null : parts.join(" · ");
}
