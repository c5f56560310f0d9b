// The chat built from a run's live events and the chat built from what that run saved are the
// same picture: one reducer builds both. The runs are real ones, recorded by the core's
// `the_golden_runs_the_window_reads_match_rust` (tool_loop.rs) into golden/runs.json.

import { describe, expect, it } from "vitest";
import { itemsFrom } from "../src/chat/items";
import { ChatSession } from "../src/chat/session.svelte";
import type { RunEvent } from "../src/lib/run-events";
import type { ConversationDetail } from "../src/lib/types";
import golden from "./golden/runs.json";

interface GoldenRun {
  name: string;
  events: RunEvent[];
  saved: ConversationDetail;
}

const runs = golden.runs as unknown as GoldenRun[];

/** Plain data, without Svelte's proxies. */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("a real run, live and saved", () => {
  it("has runs to check", () => {
    expect(runs.length).toBeGreaterThanOrEqual(3);
  });

  for (const run of runs) {
    it(`shows the same chat live as reopened: ${run.name}`, () => {
      const empty: ConversationDetail = { ...run.saved, messages: [], tool_runs: [], older: null };
      const live = new ChatSession(empty, () => {}, (frame) => frame());
      for (const event of run.events) live.apply(event);
      const reopened = itemsFrom(run.saved);
      expect(plain(live.items)).toEqual(plain(reopened));
      expect(live.running).toBe(false);
      // Not vacuous: every run has an answer with a card that reached an end.
      const cards = reopened.flatMap((i) => (i.kind === "assistant" ? i.tools : []));
      expect(cards.length).toBeGreaterThan(0);
      expect(cards.every((c) => ["done", "error", "denied"].includes(c.state))).toBe(true);
    });
  }

  it("offers Retry where the core says so, and only there", () => {
    const states = runs.map((run) =>
      itemsFrom(run.saved).flatMap((i) => (i.kind === "assistant" ? i.tools.map((c) => [c.state, c.can_retry]) : [])),
    );
    expect(states).toEqual([
      [
        ["error", false],
        ["done", false],
      ],
      [["denied", false]],
      [["error", true]],
    ]);
  });
});
