// A run as the window follows it (`RunFeed`): the items its events build (items.ts's reducer),
// its status line, the approval it waits for and its answer (through ipc.ts), the results it
// waits for the person to review (in the order they came) and their answers, its notice with
// the tools it left out, how full the model's window was, and text deltas shown once a frame.
// The chat session is one (session.svelte.ts), and so is each model of a comparison
// (comparison.svelte.ts).

import * as ipc from "../lib/ipc";
import { IpcError } from "../lib/errors";
import type { ApprovalAnswer, ApprovalItem, ReviewVerdict, RunEvent, StopReason } from "../lib/run-events";
import type { ContextUse, Summary } from "../lib/types";
import { reduceItems, type ChatItem, type ItemsCursor } from "./items";

/** The tools a run gave the model when it gave a choice of them (display names, the search last found last). */
export interface ToolsGiven {
  offered: string[];
  of: number;
  why: string;
}

export interface PendingApproval {
  request_id: string;
  calls: ApprovalItem[];
}

/** A call's result the run waits for the person to review before the model reads it. */
export type PendingReview = Omit<Extract<RunEvent, { type: "result_review_required" }>, "type">;

export interface RunNotice {
  message: string;
  retryable: boolean;
  kind: "error" | "info";
  /** Says which tools this run left out, a line each; later ones are added to it. */
  leftOut?: boolean;
}

/** Runs `callback` once, before the window next draws; tests pass one that runs it when they say. */
export type FrameScheduler = (callback: () => void) => void;

/** The window's next animation frame, or 16 ms from now where there are no frames. */
const nextFrame: FrameScheduler = (callback) => {
  if (typeof requestAnimationFrame === "function") requestAnimationFrame(() => callback());
  else setTimeout(callback, 16);
};

/** Text that arrived for an answer and is not on screen yet. */
interface PendingText {
  text: string;
  reasoning: string;
}

/**
 * One run as the window follows it: the items its events build (`reduceItems`), its status
 * line, the approval it waits for and what went wrong. Text and reasoning deltas wait for the
 * next frame, which shows all that arrived since the last at once; any other event first shows
 * the text waiting, so everything is shown in the order it came (a saved answer's text replaces
 * all of its deltas). The chat session is one; each model of a comparison is another (`Lane`).
 */
export class RunFeed {
  items = $state<ChatItem[]>([]);
  running = $state(false);
  runId = $state<string | null>(null);
  status = $state<string | null>(null);
  approval = $state<PendingApproval | null>(null);
  /** Results waiting for the person's word before the model reads them, oldest first (parallel
   *  calls: several at once); the first is the one asked about. */
  reviews = $state<PendingReview[]>([]);
  notice = $state<RunNotice | null>(null);
  /** What the model was last given, in tokens (the header's "18.2k of 128k"). */
  context = $state.raw<ContextUse | null>(null);
  /** The tools the model was given in the newest run when it was given a choice of them, and why. */
  toolsGiven = $state.raw<ToolsGiven | null>(null);
  protected readonly scheduleFrame: FrameScheduler;
  /** Where the reducer is in the run's events. */
  readonly #cursor: ItemsCursor = { answerId: null };
  /** Deltas are shown once a frame, all that arrived since the last: these, by answer id. */
  readonly #pending = new Map<string, PendingText>();
  #frameScheduled = false;
  /** This run's tools left out, a line each: said under whatever notice the run shows. */
  #leftOut: string[] = [];

  constructor(scheduleFrame: FrameScheduler = nextFrame) {
    this.scheduleFrame = scheduleFrame;
  }

  /** `notice` with the run's left-out tools under it, a line each. */
  #withLeftOut(notice: RunNotice): RunNotice {
    if (this.#leftOut.length === 0) return notice;
    return { ...notice, message: `${notice.message}\n${this.#leftOut.join("\n")}`, leftOut: true };
  }

  /** Applies one event of the run. */
  apply(event: RunEvent): void {
    if (event.type === "text_delta" || event.type === "reasoning_delta") {
      this.#hold(event.message_id, event.type === "text_delta" ? "text" : "reasoning", event.text);
      return;
    }
    this.flush();
    reduceItems(this.items, this.#cursor, event);
    this.heard(event);
    switch (event.type) {
      case "run_started":
        this.runId = event.run_id;
        this.running = true;
        this.#leftOut = [];
        this.toolsGiven = null;
        break;
      case "status":
        this.status = event.text;
        break;
      case "approval_required":
        this.approval = { request_id: event.request_id, calls: event.calls };
        break;
      case "tool_decided":
        // Decided means answered: a replayed request (the window attached after it was
        // answered) is not asked again.
        if (this.approval?.calls.some((c) => c.call_id === event.call_id)) this.approval = null;
        break;
      case "result_review_required":
        // A replayed request (the window attached) is asked once.
        if (!this.reviews.some((r) => r.request_id === event.request_id)) {
          this.reviews.push({ request_id: event.request_id, call_id: event.call_id, display_name: event.display_name, content: event.content });
        }
        break;
      case "tool_finished":
        // Finished means reviewed: a replayed request answered before is not asked again.
        if (this.reviews.some((r) => r.call_id === event.call_id)) this.reviews = this.reviews.filter((r) => r.call_id !== event.call_id);
        break;
      case "tool_warning":
        this.#sayAboutTools(`${event.tool} was left out: ${event.message}`);
        break;
      case "context_used":
        this.context = event.used;
        break;
      case "history_fitted":
        this.#sayAboutTools(event.message);
        if (event.summary) this.summarised(event.summary);
        break;
      case "tools_offered":
        this.toolsGiven = { offered: event.offered, of: event.of, why: event.why };
        this.#sayAboutTools(
          event.found.length === 0
            ? `The model is offered ${Math.max(event.offered.length - 1, 0)} of ${event.of} tools and a search for the rest: ${event.why}.`
            : `The model's search found ${event.found.join(", ")}.`,
        );
        break;
      case "error":
        this.notice = this.#withLeftOut({ kind: "error", message: event.message, retryable: event.retryable });
        break;
      case "run_finished":
        this.running = false;
        this.runId = null;
        this.status = null;
        this.approval = null;
        // Rust withholds what was still waiting.
        this.reviews = [];
        if (event.message && event.reason !== "error") {
          this.notice = this.#withLeftOut({ kind: event.reason === "max_rounds" ? "info" : "error", message: event.message, retryable: false });
        } else if (event.message && this.notice === null) {
          this.notice = this.#withLeftOut({ kind: "error", message: event.message, retryable: false });
        }
        this.finished(event.reason);
        break;
      default:
        break;
    }
  }

  /** A line about the tools the model was given: each said once, not only the last (a run's
   * start may report several, and each request again), and an error already shown stays, with
   * the line under it. */
  #sayAboutTools(said: string): void {
    if (this.#leftOut.includes(said)) return;
    this.#leftOut.push(said);
    const kept = this.notice?.leftOut || this.notice?.kind === "error" ? this.notice : null;
    this.notice = kept
      ? { ...kept, message: `${kept.message}\n${said}`, leftOut: true }
      : { kind: "info", message: said, retryable: false, leftOut: true };
  }

  /** A summary of earlier messages was made during the run. */
  protected summarised(_summary: Summary): void {}

  /** Every event but the deltas, once applied to the items (before the run's own state). */
  protected heard(_event: RunEvent): void {}

  /** The run ended, its state already reset. */
  protected finished(_reason: StopReason): void {}

  /** Answers the approval this run waits for. */
  async answer(answers: ApprovalAnswer[]): Promise<void> {
    const pending = this.approval;
    if (!pending) return;
    this.approval = null;
    try {
      await ipc.answerApproval(pending.request_id, answers);
    } catch (err) {
      // Not confirmed in Rust's own dialog: nothing was answered and the request still waits,
      // so it is shown again.
      if (err instanceof IpcError && err.kind === "not_confirmed" && this.approval === null) {
        this.approval = pending;
      }
      throw err;
    }
  }

  /**
   * Gives the person's word on the result asked about now (the first waiting). One that no
   * longer waits (the run ended or it was answered) is let go quietly; on any other failure it
   * is asked again.
   */
  async answerReview(verdict: ReviewVerdict): Promise<void> {
    const pending = this.reviews[0];
    if (!pending) return;
    this.reviews = this.reviews.slice(1);
    try {
      await ipc.answerResultReview(pending.request_id, verdict);
    } catch (err) {
      if (err instanceof IpcError && err.kind === "not_found") return;
      if (this.running && !this.reviews.some((r) => r.request_id === pending.request_id)) this.reviews = [pending, ...this.reviews];
      throw err;
    }
  }

  /** Keeps a delta for the next frame, which is asked for if it was not already. */
  #hold(messageId: string, field: keyof PendingText, text: string): void {
    let pending = this.#pending.get(messageId);
    if (!pending) {
      pending = { text: "", reasoning: "" };
      this.#pending.set(messageId, pending);
    }
    pending[field] += text;
    if (this.#frameScheduled) return;
    this.#frameScheduled = true;
    this.scheduleFrame(() => {
      this.#frameScheduled = false;
      this.flush();
    });
  }

  /** Shows the deltas waiting for a frame. */
  protected flush(): void {
    for (const [messageId, pending] of this.#pending) {
      if (pending.text !== "") reduceItems(this.items, this.#cursor, { type: "text_delta", message_id: messageId, text: pending.text });
      if (pending.reasoning !== "") {
        reduceItems(this.items, this.#cursor, { type: "reasoning_delta", message_id: messageId, text: pending.reasoning });
      }
    }
    this.#pending.clear();
  }
}
