// A policy rule in words, as the core says it (`policy::rules::describe`): "allow fs · read_file
// when path is inside /home/x/notes". For a rule the window has not sent to Rust yet (the one an
// approval offers to make); a rule Rust read from a file comes with its words (`said`). Pure
// functions: no DOM, no IPC. The words are text, never markup.

import type { Outcome, Rule, Target, Test } from "../lib/types";
import { escapeHidden } from "./visible";

const VERB: Record<Outcome, string> = {
  allow: "allow",
  ask: "ask before",
  block: "block",
};

/** Code point by code point, as Rust orders a `BTreeMap`'s keys (UTF-8 bytes sort the same). */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** What one test on an argument says: "is inside ~/notes", "is not on example.com". */
export function describeTest(test: Test): string {
  if ("inside" in test) return `is inside ${test.inside.join(", ")}`;
  if ("host" in test) return `is on ${test.host.join(", ")}`;
  if ("matches" in test) return `matches /${test.matches}/`;
  if ("range" in test) {
    const { min, max } = test.range;
    if (min != null && max != null) return `is from ${min} to ${max}`;
    if (min != null) return `is at least ${min}`;
    if (max != null) return `is at most ${max}`;
    return "is any number";
  }
  if ("one_of" in test) return `is one of ${test.one_of.map((v) => JSON.stringify(v)).join(", ")}`;
  const inner = test.not;
  if ("inside" in inner) return `is not inside ${inner.inside.join(", ")}`;
  if ("host" in inner) return `is not on ${inner.host.join(", ")}`;
  return `does not hold: ${describeTest(inner)}`;
}

/** Which tools a rule names: "fs · read_file", "every tool of fs", "read_file of any server". */
function whatItNames(server: string, tool: string | null | undefined): string {
  if (server === "*") return tool == null ? "every tool" : `${tool} of any server`;
  return tool == null ? `every tool of ${server}` : `${server} · ${tool}`;
}

/** A rule in words: "ask before fs · write_file when path is not inside ~/notes (“keep writes in
 *  notes”)"; hidden characters written as escapes. */
export function describeRule(rule: Rule): string {
  let said = `${VERB[rule.outcome]} ${whatItNames(rule.server, rule.tool)}`;
  const tests = Object.keys(rule.when ?? {})
    .sort(byCodePoint)
    .map((argument) => `${argument} ${describeTest(rule.when![argument])}`);
  if (tests.length > 0) said += ` when ${tests.join(" and ")}`;
  const note = rule.note?.trim();
  if (note) said += ` (“${note}”)`;
  return escapeHidden(said);
}

/** A server, or one of its tools, on a list of the policy: "fetch", "fs · read_file". */
export function describeTarget(target: Target): string {
  return escapeHidden(target.tool == null ? target.server : `${target.server} · ${target.tool}`);
}
