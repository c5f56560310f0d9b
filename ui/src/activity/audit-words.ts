// The audit record's entries as the Activity page shows and exports them: who asked, what was
// decided, how long a call took, an entry's arguments laid out to read, and the JSON lines of
// the entries shown. Pure functions: no DOM, no IPC.

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

/** How much of an entry's arguments the page shows at most, in characters (UTF-16 units): an
 *  argument of megabytes would take the page's whole frame to lay out. */
export const ARGUMENTS_SHOWN = 200_000;

const SPACE = /[ \t\n\r]/;
/** What ends a number or a literal (`true`, `false`, `null`). */
const DELIMITER = /[ \t\n\r,:{}[\]"]/;

/**
 * `raw` laid out as `JSON.stringify(value, null, 2)` lays it out, when it is JSON; `raw` as it is
 * otherwise. Only the whitespace between tokens changes: each string, number and literal is
 * kept as it was written (a number too long for a double, an escape, a repeated key), so what
 * is shown is what the call was given.
 */
export function prettyJson(raw: string): string {
  try {
    JSON.parse(raw);
  } catch {
    return raw;
  }
  const out: string[] = [];
  let depth = 0;
  const newline = (): string => `\n${"  ".repeat(depth)}`;
  let i = 0;
  while (i < raw.length) {
    const c = raw[i];
    if (c === '"') {
      // Valid JSON: the string ends at the first quote after an even run of backslashes.
      let end = raw.indexOf('"', i + 1);
      while (escaped(raw, end)) end = raw.indexOf('"', end + 1);
      out.push(raw.slice(i, end + 1));
      i = end + 1;
    } else if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      let next = i + 1;
      while (SPACE.test(raw[next])) next++;
      if (raw[next] === close) {
        out.push(c + close);
        i = next + 1;
      } else {
        depth++;
        out.push(c + newline());
        i++;
      }
    } else if (c === "}" || c === "]") {
      depth--;
      out.push(newline() + c);
      i++;
    } else if (c === ",") {
      out.push(`,${newline()}`);
      i++;
    } else if (c === ":") {
      out.push(": ");
      i++;
    } else if (SPACE.test(c)) {
      i++;
    } else {
      // A number or a literal, up to the next delimiter.
      let end = i + 1;
      while (end < raw.length && !DELIMITER.test(raw[end])) end++;
      out.push(raw.slice(i, end));
      i = end;
    }
  }
  return out.join("");
}

/** Whether the character at `at` follows an odd run of backslashes. */
function escaped(text: string, at: number): boolean {
  let before = at - 1;
  while (text[before] === "\\") before--;
  return (at - 1 - before) % 2 === 1;
}

/** An entry's arguments as the page shows them: pretty-printed when they are JSON
 *  (`prettyJson`), cut to `limit` characters (never inside a character), and how many more
 *  there are. */
export function argumentsShown(raw: string, limit: number = ARGUMENTS_SHOWN): { text: string; more: number } {
  const pretty = prettyJson(raw);
  if (pretty.length <= limit) return { text: pretty, more: 0 };
  // Not between the two halves of a character beyond U+FFFF.
  const at = /[\uDC00-\uDFFF]/.test(pretty[limit]) ? limit - 1 : limit;
  return { text: pretty.slice(0, at), more: pretty.length - at };
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
