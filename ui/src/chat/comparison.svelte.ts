// A comparison (issue 18, seed 003): several models asked one question at once, each answering
// in a `Lane` of its own, a feed (run-feed.svelte.ts) that the comparison's columns show. The
// session gives each lane the comparison's `lane` events for it, until the answers are folded
// into the conversation as branches and the conversation is read again.

import type { RunEvent, StopReason } from "../lib/run-events";
import type { AssistantItem } from "./items";
import { RunFeed, type FrameScheduler } from "./run-feed.svelte";

/** One model of a comparison: its own run (its rounds, tool calls and approvals), shown in a column. */
export class Lane extends RunFeed {
  /** Its place among the models compared, from 0, in the order they were asked. */
  readonly index: number;
  readonly provider: string;
  readonly model: string;
  /** How its run ended; null while it runs (or before it started). */
  ended = $state<StopReason | null>(null);

  constructor(index: number, provider: string, model: string, scheduleFrame?: FrameScheduler) {
    super(scheduleFrame);
    this.index = index;
    this.provider = provider;
    this.model = model;
  }

  /** "Provider · model", as Rust names a compared model. */
  get label(): string {
    return `${this.provider} · ${this.model}`;
  }

  /** Its answers: its rounds, each with its text and tool cards (the question is the conversation's). */
  get answers(): AssistantItem[] {
    return this.items.filter((i): i is AssistantItem => i.kind === "assistant");
  }

  protected override heard(event: RunEvent): void {
    if (event.type === "run_started") this.ended = null;
  }

  protected override finished(reason: StopReason): void {
    this.ended = reason;
  }
}

/** Several models answering one question, each in a lane of its own, until their answers are folded into branches. */
export class Comparison {
  /** The lanes heard of so far, in the order the models were asked. */
  lanes = $state<Lane[]>([]);
  /** The answers are branches of the conversation now. */
  folded = $state(false);
}
