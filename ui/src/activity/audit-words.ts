// The audit record's entries as the Activity page shows and exports them: who asked, what was
// decided, how long a call took, and the JSON lines of the entries shown. Pure functions: no
// DOM, no IPC.

import type { AuditDecision, AuditEntry, AuditOrigin } from "../lib/types";

export const ORIGIN_LABEL: Record<AuditOrigin, string> = {
  model: "Model",
  retry: "Retry",
  app: "App",
  cli: "Command line",
};

export const ORIGIN_HINT: Record<AuditOrigin, string> = {
  model: "The model asked for it",
  retry: "You ran a failed call again",
  app: "An MCP App in a tool card asked for it",
  cli: "switchboard mcp call ran it",
};

export const DECISION_LABEL: Record<AuditDecision, string> = {
  allowed: "Allowed",
  denied: "Denied",
  not_run: "Not run",
};

/** Which tool was called: "fs · read_file"; a tool that does not exist (no server) by the name
 *  the model gave it. */
export function callName(entry: Pick<AuditEntry, "server" | "tool">): string {
  return entry.server === "" ? entry.tool : `${entry.server} · ${entry.tool}`;
}

/** How long a call ran: "85 ms", "2.4 s", "3 min 5 s"; "—" when it did not run. */
export function took(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const seconds = Math.round(ms / 1000);
  const rest = seconds % 60;
  return rest === 0 ? `${Math.floor(seconds / 60)} min` : `${Math.floor(seconds / 60)} min ${rest} s`;
}

/** The entries as JSON lines, one entry (as Rust sent it) a line, in the order given. */
export function jsonLines(entries: readonly AuditEntry[]): string {
  return entries.map((entry) => `${JSON.stringify(entry)}\n`).join("");
}

/** The start of the local day written `YYYY-MM-DD` (a date input's value), in ms since 1970;
 *  null for anything else. */
export function localDayStart(day: string): number | null {
  const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!parts) return null;
  const ms = new Date(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3])).getTime();
  return Number.isNaN(ms) ? null : ms;
}
