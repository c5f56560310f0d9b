// A policy rule in words, as the window says one Rust has not seen yet (the rule an approval
// offers to make): the same words as the core's `describe`, checked against the core itself
// for rules of every kind written to a real policy.json.
import { describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import * as ipc from "../src/lib/ipc";
import type { Rule } from "../src/lib/types";
import { describeRule, describeTarget, describeTest } from "../src/shared/policy-words";
import { installRealBackend } from "./real-backend";

/** Rules of every shape a policy file takes. */
const RULES: Rule[] = [
  { server: "fs", tool: "read_file", when: { path: { inside: ["/home/x/notes"] } }, outcome: "allow" },
  { server: "fs", tool: "write_file", when: { path: { not: { inside: ["~/notes"] } } }, outcome: "ask", note: "keep writes in notes" },
  { server: "fs", outcome: "block" },
  { server: "*", outcome: "ask" },
  { server: "*", tool: "delete", outcome: "block" },
  { server: "fetch", tool: "fetch", when: { url: { host: ["example.com", "*.example.org"] } }, outcome: "allow" },
  { server: "fetch", tool: "fetch", when: { url: { not: { host: ["evil.example"] } } }, outcome: "ask" },
  { server: "db", tool: "query", when: { sql: { matches: "SELECT .*" } }, outcome: "allow" },
  { server: "db", tool: "query", when: { sql: { not: { matches: "DROP.*" } } }, outcome: "ask" },
  { server: "shop", tool: "pay", when: { amount: { range: { min: 0.5, max: 20 } } }, outcome: "allow" },
  { server: "shop", tool: "pay", when: { amount: { range: { min: 100 } } }, outcome: "block" },
  { server: "shop", tool: "pay", when: { amount: { range: { max: 3 } } }, outcome: "ask" },
  { server: "git", tool: "push", when: { branch: { one_of: ["main", "dev", 2, true, null] } }, outcome: "block" },
  // Several tests, written out of order: said in the order of their names.
  { server: "fs", tool: "copy", when: { to: { inside: ["/tmp"] }, from: { inside: ["/srv"] }, "/options/mode": { one_of: ["fast"] } }, outcome: "allow" },
];

describe("a rule in words", () => {
  it("says what it does, to which tools, when", () => {
    expect(describeRule(RULES[0])).toBe("allow fs · read_file when path is inside /home/x/notes");
    expect(describeRule(RULES[1])).toBe("ask before fs · write_file when path is not inside ~/notes (“keep writes in notes”)");
    expect(describeRule(RULES[2])).toBe("block every tool of fs");
    expect(describeRule(RULES[3])).toBe("ask before every tool");
    expect(describeRule(RULES[4])).toBe("block delete of any server");
    expect(describeRule(RULES[5])).toBe("allow fetch · fetch when url is on example.com, *.example.org");
    expect(describeRule(RULES[9])).toBe("allow shop · pay when amount is from 0.5 to 20");
    expect(describeRule(RULES[12])).toBe('block git · push when branch is one of "main", "dev", 2, true, null');
    expect(describeRule(RULES[13])).toBe(
      'allow fs · copy when /options/mode is one of "fast" and from is inside /srv and to is inside /tmp',
    );
  });

  it("says each kind of test", () => {
    expect(describeTest({ not: { matches: "DROP.*" } })).toBe("does not hold: matches /DROP.*/");
    expect(describeTest({ range: { min: 100 } })).toBe("is at least 100");
    expect(describeTest({ range: { max: 3 } })).toBe("is at most 3");
    expect(describeTest({ range: {} })).toBe("is any number");
    expect(describeTest({ not: { host: ["evil.example"] } })).toBe("is not on evil.example");
  });

  it("leaves out a blank note and writes hidden characters as escapes, never as themselves", () => {
    expect(describeRule({ server: "fs", tool: "read", outcome: "allow", note: "  " })).toBe("allow fs · read");
    const said = describeRule({ server: "f\u202es", tool: "re\u200bad", outcome: "allow", note: "why\u{e0041}" });
    expect(said).toBe("allow f\\u202es · re\\u200bad (“why\\udb40\\udc41”)");
    expect(said).not.toMatch(/[\u202e\u200b]/u);
  });

  it("names a marked server or one of its tools", () => {
    expect(describeTarget({ server: "fetch" })).toBe("fetch");
    expect(describeTarget({ server: "mail", tool: "read" })).toBe("mail · read");
  });

  it("says every rule as the core says it", async () => {
    const backend = await installRealBackend();
    const view = await backend.seed(() => ipc.replacePolicy(JSON.stringify({ rules: RULES })));
    expect(view.said).toHaveLength(RULES.length);
    expect(RULES.map(describeRule)).toEqual(view.said);
    // …and so does a note or a name with hidden characters in it.
    const hidden: Rule = { server: "f\u202es", tool: "re\u200bad", outcome: "ask", note: "why\u{e0041}" };
    const again = await backend.seed(() => ipc.replacePolicy(JSON.stringify({ rules: [hidden] })));
    expect(again.said).toEqual([describeRule(hidden)]);
  });
});
