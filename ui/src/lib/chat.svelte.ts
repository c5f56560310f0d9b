// One open conversation as the chat shows it: user and assistant turns, each
// answer with its tool cards. One reducer (`reduceItems`) builds them: what was
// saved is first turned into the events a live run sends (`eventsFrom`), so
// reopening shows exactly what was shown live. Sending, stopping, retrying and
// answering approvals go through ipc.ts. The live events are passed on, once applied, to
// whoever built the session (the canvas's files are kept in a store of their own). A tool card's
// MCP App is asked for here, once per call, and what the app asks of its server goes from here.
//
// A run as the window follows it (its items, status line, approval, notice, deltas shown once a
// frame) is a `RunFeed`; the session is one, and so is each model of a comparison (issue 18,
// seed 003): the comparison's `lane` events are each given to that model's `Lane`, a feed of its
// own that the comparison's columns show, until the answers are folded into the conversation as
// branches and the conversation is read again.

import * as ipc from "./ipc";
import { IpcError } from "./errors";
import type { ApprovalAnswer, ApprovalItem, RunEvent, StopReason } from "./run-events";
import type { McpAppCalls } from "./mcpAppBridge";
import type {
  Finish,
  JsonValue,
  Attachment,
  AttachmentRef,
  BranchPoint,
  CallRef,
  ComparedModel,
  ConversationDetail,
  McpAppView,
  Message,
  MessageStatus,
  ContextUse,
  ResultView,
  Summary,
  ToolRun,
} from "./types";

export type ToolCardState = "proposed" | "waiting" | "running" | "done" | "error" | "denied";

/** The tools a run gave the model when it gave a choice of them (display names, the search last found last). */
export interface ToolsGiven {
  offered: string[];
  of: number;
  why: string;
}

/** What the newest answer of `detail` was given when it was given a choice of tools (its record), else null. */
export function toolsGivenFrom(detail: Pick<ConversationDetail, "messages" | "offers">): ToolsGiven | null {
  let newest: string | undefined;
  for (const m of detail.messages) if (m.role === "assistant") newest = m.id;
  const offer = newest === undefined ? undefined : (detail.offers ?? []).find((o) => o.message_id === newest);
  return offer ? { offered: offer.offered, of: offer.of, why: offer.why } : null;
}

export interface ToolCard {
  call_id: string;
  /** the server it runs on; null for a tool the model made up */
  server: string | null;
  /** the tool's name on that server; null for a tool the model made up */
  tool: string | null;
  display_name: string;
  arguments: string;
  state: ToolCardState;
  /** what the model got back */
  content: string | null;
  duration_ms: number | null;
  /** why it was denied */
  reason: string | null;
  /** the server's last progress report while it runs (not kept once it finishes) */
  progress: { progress: number; total: number | null; message: string | null } | null;
  /** the failed call this one ran again (from a Retry) */
  retry_of: CallRef | null;
  /** the model's few words on what it does (Settings › Describe each tool call) */
  description: string | null;
  /** when `content` is only the start of a long result: how many characters the whole has */
  full_length: number | null;
  /** the saved tool message that holds the result, to read it whole */
  result_id: string | null;
  /** the core says its Retry can run it again (it failed on a real tool with object arguments) */
  can_retry: boolean;
  /** the result has more than text to show (images, audio, links, structured content) */
  rich: boolean;
  /** the files the result carried, kept by Rust (the canvas shows them) */
  artifacts: Attachment[];
}

/** How many calls' MCP Apps a session remembers (the newest asked for): fewer than Rust serves. */
const KEPT_APPS = 32;

/** What a tool card needs for the MCP App of its call (ChatSession.appHost builds it). */
export interface McpAppHost extends McpAppCalls {
  /** the call's app, null when its tool has none; asked of Rust once per call while it answers */
  prepare(): Promise<McpAppView | null>;
  /** Switchboard's version, told to the app */
  hostVersion: string;
}

export type ChatItem =
  | { kind: "user"; id: string; text: string; created_at: number; attachments: Attachment[] }
  | {
      kind: "assistant";
      id: string;
      text: string;
      reasoning: string;
      status: MessageStatus;
      finish_reason: Finish | null;
      error: string | null;
      model: string | null;
      input_tokens: number | null;
      output_tokens: number | null;
      /** what the answer cost in pico-dollars, when its model had a price */
      cost_pico: number | null;
      tools: ToolCard[];
    };

export type AssistantItem = Extract<ChatItem, { kind: "assistant" }>;

/** Which branch is shown where branches part, and how many there are. */
export interface BranchAt {
  position: number;
  count: number;
  /** At a comparison, the model ("Provider · model") that wrote each branch, by position; else empty. */
  models: (string | null)[];
}

function branchesFrom(points: BranchPoint[]): Record<string, BranchAt> {
  return Object.fromEntries(
    points.map((p) => [p.message_id, { position: p.position, count: p.count, models: p.models ?? [] }]),
  );
}

/** The kept files a message names, as a command takes them. */
function refsOf(attachments: Attachment[]): AttachmentRef[] {
  return attachments.map((a) => ({ sha256: a.sha256, name: a.name }));
}

/** The largest page of messages the core reads at once. */
const MAX_PAGE = 1000;

/** One key for the call `call_id` of the answer `message_id`. */
export function callKey(call: CallRef): string {
  return `${call.message_id}\u0000${call.call_id}`;
}

function assistantFrom(m: Message): AssistantItem {
  return {
    kind: "assistant",
    id: m.id,
    text: m.content ?? "",
    reasoning: m.reasoning ?? "",
    status: m.status,
    finish_reason: m.finish_reason,
    error: m.error,
    model: m.model,
    input_tokens: m.input_tokens,
    output_tokens: m.output_tokens,
    cost_pico: m.cost_pico ?? null,
    tools: [],
  };
}

/** A card as its call was proposed, before anything else is known of it. */
function cardFrom(call: Extract<RunEvent, { type: "tool_call_proposed" }>["call"]): ToolCard {
  return {
    call_id: call.call_id,
    server: call.server,
    tool: call.tool,
    display_name: call.display_name,
    arguments: call.arguments,
    state: "proposed",
    content: null,
    duration_ms: null,
    reason: null,
    progress: null,
    retry_of: call.retry_of,
    description: null,
    full_length: null,
    result_id: null,
    can_retry: false,
    rich: false,
    artifacts: [],
  };
}

/**
 * What was saved, as the events a live run sent for it, in the same order: each answer, its
 * calls as proposed and decided, and each result as finished and saved. Reduced by
 * `reduceItems`, they build the chat as the run built it.
 */
export function eventsFrom(detail: Pick<ConversationDetail, "messages" | "tool_runs">): RunEvent[] {
  const runs = new Map<string, ToolRun>(detail.tool_runs.map((r) => [callKey(r), r]));
  const events: RunEvent[] = [];
  /** The calls of the answer before the tool messages that follow it. */
  let calls = new Map<string, ToolRun>();
  for (const m of detail.messages) {
    if (m.role === "assistant") {
      events.push({ type: "answer_started", message: m });
      calls = new Map();
      for (const call of m.tool_calls ?? []) {
        const run = runs.get(callKey({ message_id: m.id, call_id: call.id }));
        // A call with no record never got as far as one (the run stopped first): the model's name.
        events.push({
          type: "tool_call_proposed",
          call: {
            call_id: call.id,
            message_id: m.id,
            wire_name: call.name,
            server: run && run.server !== "" ? run.server : null,
            tool: run && run.server !== "" ? run.tool : null,
            display_name: run?.display_name ?? call.name,
            arguments: call.arguments,
            retry_of: run?.retry_of ?? null,
          },
        });
        if (!run) continue;
        calls.set(call.id, run);
        if (run.decision !== null) {
          events.push({ type: "tool_decided", call_id: call.id, decision: run.decision, scope: run.decision_scope, reason: run.deny_reason });
        }
        if (run.description !== null) events.push({ type: "tool_described", call_id: call.id, description: run.description });
      }
    } else if (m.role === "tool" && m.tool_call_id) {
      const run = calls.get(m.tool_call_id);
      if (run?.started_at != null && run.finished_at !== null) {
        events.push({
          type: "tool_finished",
          call_id: m.tool_call_id,
          is_error: m.is_error,
          content: m.content ?? "",
          full_length: m.full_length,
          duration_ms: run.finished_at - run.started_at,
          can_retry: run.can_retry,
          rich: run.rich,
          artifacts: m.attachments,
          // Asked once, when the result came: reopening does not open the canvas again.
          open_canvas: null,
        });
      }
      events.push({ type: "message_saved", message: m });
    } else if (m.role === "user") {
      events.push({ type: "message_saved", message: m });
    }
  }
  return events;
}

/** Where the reducer is: the answer the run is on. */
export interface ItemsCursor {
  /** The calls its events name are that answer's (call ids repeat across answers with Ollama and
   * Gemini, and a replayed run must not touch a later card). */
  answerId: string | null;
  /** Where in that answer's cards the last one looked up is: a run's events (and a saved
   * answer's, replayed) name its calls in order, so the next is there or just after, and a
   * chat of hundreds of calls is built without searching the cards for each event. */
  at?: number;
}

function assistantIn(items: ChatItem[], id: string): AssistantItem | undefined {
  const found = items.find((i) => i.kind === "assistant" && i.id === id);
  return found?.kind === "assistant" ? found : undefined;
}

/** The card of that id in the answer the run is on, else the newest card of that id. */
function cardIn(items: ChatItem[], cursor: ItemsCursor, callId: string): ToolCard | undefined {
  const tools = cursor.answerId ? assistantIn(items, cursor.answerId)?.tools : undefined;
  if (tools) {
    const hint = cursor.at ?? 0;
    const at = tools[hint]?.call_id === callId ? hint : tools[hint + 1]?.call_id === callId ? hint + 1 : tools.findIndex((c) => c.call_id === callId);
    if (at >= 0) {
      cursor.at = at;
      return tools[at];
    }
  }
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.kind !== "assistant") continue;
    const card = item.tools.find((c) => c.call_id === callId);
    if (card) return card;
  }
  return undefined;
}

/**
 * The one reducer of the chat's items: applies one event (live, or made from what was saved by
 * `eventsFrom`) to `items`. Deltas add to their answer's text; the rest of a run's events
 * (status, approvals, notices) are the session's, not the items'.
 */
export function reduceItems(items: ChatItem[], cursor: ItemsCursor, event: RunEvent): void {
  switch (event.type) {
    case "answer_started": {
      // Replayed to a window that attached, the answer may be on screen already (as saved so
      // far): it starts again from the event and the replay rebuilds it.
      const fresh = assistantFrom(event.message);
      cursor.answerId = fresh.id;
      const at = items.findIndex((i) => i.kind === "assistant" && i.id === fresh.id);
      if (at >= 0) items[at] = fresh;
      else items.push(fresh);
      break;
    }
    case "text_delta":
    case "reasoning_delta": {
      const item = assistantIn(items, event.message_id);
      if (item && event.type === "text_delta") item.text += event.text;
      else if (item) item.reasoning += event.text;
      break;
    }
    case "tool_call_proposed": {
      const item = assistantIn(items, event.call.message_id);
      if (item && !item.tools.some((c) => c.call_id === event.call.call_id)) item.tools.push(cardFrom(event.call));
      break;
    }
    case "approval_required":
      for (const call of event.calls) {
        const card = cardIn(items, cursor, call.call_id);
        if (card) card.state = "waiting";
      }
      break;
    case "tool_decided": {
      const card = cardIn(items, cursor, event.call_id);
      if (card && event.decision === "denied") {
        card.state = "denied";
        card.reason = event.reason;
      } else if (card) {
        card.state = "proposed";
      }
      break;
    }
    case "tool_started": {
      const card = cardIn(items, cursor, event.call_id);
      if (card) card.state = "running";
      break;
    }
    case "tool_described": {
      const card = cardIn(items, cursor, event.call_id);
      if (card) card.description = event.description;
      break;
    }
    case "tool_progress": {
      const card = cardIn(items, cursor, event.call_id);
      if (card && card.state === "running") {
        card.progress = { progress: event.progress, total: event.total, message: event.message };
      }
      break;
    }
    case "tool_finished": {
      const card = cardIn(items, cursor, event.call_id);
      if (card) {
        card.progress = null;
        card.state = event.is_error ? "error" : "done";
        card.content = event.content;
        card.full_length = event.full_length;
        card.duration_ms = event.duration_ms;
        card.can_retry = event.can_retry;
        card.rich = event.rich;
        // (Runs recorded before files were kept send none.)
        card.artifacts = event.artifacts ?? [];
      }
      break;
    }
    case "message_saved":
      savedIn(items, cursor, event.message);
      break;
    case "run_finished":
      cursor.answerId = null;
      break;
    default:
      break;
  }
}

function savedIn(items: ChatItem[], cursor: ItemsCursor, message: Message): void {
  if (message.role === "user") {
    if (!items.some((i) => i.id === message.id)) {
      items.push({
        kind: "user",
        id: message.id,
        text: message.content ?? "",
        created_at: message.created_at,
        attachments: message.attachments,
      });
    }
  } else if (message.role === "assistant") {
    const item = assistantIn(items, message.id);
    if (!item) return;
    const saved = assistantFrom(message);
    item.text = saved.text;
    item.status = saved.status;
    item.finish_reason = saved.finish_reason;
    item.error = saved.error;
    item.input_tokens = saved.input_tokens;
    item.output_tokens = saved.output_tokens;
    item.cost_pico = saved.cost_pico;
  } else if (message.role === "tool" && message.tool_call_id) {
    const card = cardIn(items, cursor, message.tool_call_id);
    if (card) {
      // Saved, so finished: Rust shows the result only once it is written.
      card.progress = null;
      card.content = message.content;
      card.full_length = message.full_length;
      card.result_id = message.id;
      card.artifacts = message.attachments;
      if (card.state !== "denied") card.state = message.is_error ? "error" : "done";
    }
  }
}

/** The chat as saved: what the live run built, built again by the same reducer. */
export function itemsFrom(detail: Pick<ConversationDetail, "messages" | "tool_runs">): ChatItem[] {
  const items: ChatItem[] = [];
  const cursor: ItemsCursor = { answerId: null };
  for (const event of eventsFrom(detail)) reduceItems(items, cursor, event);
  return items;
}

export interface PendingApproval {
  request_id: string;
  calls: ApprovalItem[];
}

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

/** An approval to ask now: whose run waits for it, and the model that asks (null: the conversation's own run). */
export interface Asking {
  approval: PendingApproval;
  askedBy: string | null;
  feed: RunFeed;
}

export class ChatSession extends RunFeed {
  readonly conversationId: string;
  /** Where the page of older messages ends (ipc.getOlderMessages); null once the first is shown. */
  older = $state<number | null>(null);
  /** Where branches part, by the id of the first message shown at each point. */
  branches = $state.raw<Record<string, BranchAt>>({});
  /** The comparison under way (or just folded, until the conversation is read again); null otherwise. */
  comparison = $state.raw<Comparison | null>(null);
  /** The summaries of earlier messages made to fit the model's window, oldest first. */
  summaries = $state.raw<Summary[]>([]);
  /** A branch was started: once its run ends, the conversation is read again (its new point). */
  #reloadWhenDone = false;
  /** A page of older messages is on its way (nothing shows it: it only keeps a second one back). */
  #loadingOlder = false;
  /** Counts the times the history was replaced: a page asked for before is not added after. */
  #loads = 0;
  readonly #onFinished: () => void;
  /** The MCP Apps of calls asked of Rust, by "message id/call id". */
  readonly #apps = new Map<string, Promise<McpAppView | null>>();
  /** Hears every event of the run but the deltas, once applied (the canvas's files). */
  readonly #onEvent: (event: RunEvent) => void;

  /** `items`: what `detail` holds, built by `itemsFrom` ahead of the session (else built here). */
  constructor(
    detail: ConversationDetail,
    onFinished: () => void,
    scheduleFrame: FrameScheduler = nextFrame,
    onEvent: (event: RunEvent) => void = () => {},
    items: ChatItem[] = itemsFrom(detail),
  ) {
    super(scheduleFrame);
    this.conversationId = detail.conversation.id;
    this.items = items;
    this.older = detail.older;
    this.branches = branchesFrom(detail.branches);
    this.summaries = detail.summaries ?? [];
    this.context = detail.context ?? null;
    this.toolsGiven = toolsGivenFrom(detail);
    this.#onFinished = onFinished;
    this.#onEvent = onEvent;
  }

  /**
   * Replaces what is shown with what was saved (not while a run is under way). Deltas still
   * waiting for a frame go first, so none is added to what was saved. A comparison's columns go:
   * its answers are in what was saved. `items`: as the constructor's.
   */
  load(detail: ConversationDetail, items?: ChatItem[]): void {
    if (this.running || detail.conversation.id !== this.conversationId) return;
    this.flush();
    this.items = items ?? itemsFrom(detail);
    this.older = detail.older;
    this.branches = branchesFrom(detail.branches);
    this.summaries = detail.summaries ?? [];
    this.context = detail.context ?? this.context;
    this.toolsGiven = toolsGivenFrom(detail);
    this.comparison = null;
    this.#loads++;
  }

  /** Shows the page of messages before the first one shown (`limit` messages at most), if there is one. */
  async loadOlder(limit?: number): Promise<void> {
    const before = this.older;
    if (before === null || this.#loadingOlder) return;
    const loads = this.#loads;
    this.#loadingOlder = true;
    try {
      const page = await ipc.getOlderMessages(this.conversationId, before, limit);
      if (loads !== this.#loads || this.older !== before) return;
      const shown = new Set(this.items.map((i) => i.id));
      this.items.unshift(...itemsFrom(page).filter((i) => !shown.has(i.id)));
      this.older = page.older;
      this.branches = { ...branchesFrom(page.branches), ...this.branches };
    } finally {
      this.#loadingOlder = false;
    }
  }

  /**
   * Reads older pages until the message numbered `seq` (a search hit's) is shown, in pages as
   * large as the core gives (so a hit far back costs a few reads, not one a page).
   */
  async loadUntil(seq: number): Promise<void> {
    while (this.older !== null && this.older > seq) {
      const before = this.older;
      await this.loadOlder(Math.min(MAX_PAGE, before - seq + 20));
      if (this.older === before) return;
    }
  }

  /** The id of the chat item that shows message `messageId` (a tool result shows in its answer's card). */
  itemShowing(messageId: string): string | null {
    for (const item of this.items) {
      if (item.id === messageId) return item.id;
      if (item.kind === "assistant" && item.tools.some((c) => c.result_id === messageId)) return item.id;
    }
    return null;
  }

  /** Reads the whole of a result its card shows only the start of. */
  async showWholeResult(messageId: string, callId: string): Promise<void> {
    const card = assistantIn(this.items, messageId)?.tools.find((c) => c.call_id === callId);
    if (!card?.result_id || card.full_length === null) return;
    const whole = await ipc.getMessageText(this.conversationId, card.result_id);
    card.content = whole;
    card.full_length = null;
  }

  /**
   * Sends `text` with the kept files `attachments` in place of the message of yours `messageId`;
   * what followed stays as another branch. Rejects (with the IpcError) when it cannot start.
   */
  async editAndResend(messageId: string, text: string, attachments: Attachment[] = []): Promise<void> {
    await this.#branch(messageId, (onEvent) => ipc.editMessage(this.conversationId, messageId, text, refsOf(attachments), onEvent));
  }

  /** Asks again for the answer that starts at `messageId`; the old one stays as another branch. */
  async regenerate(messageId: string): Promise<void> {
    await this.#branch(messageId, (onEvent) => ipc.regenerate(this.conversationId, messageId, onEvent));
  }

  /** The chat from `messageId` on leaves the screen (Rust keeps it as a branch) as the run starts. */
  async #branch(messageId: string, begin: (onEvent: (event: RunEvent) => void) => Promise<string>): Promise<void> {
    const at = this.items.findIndex((i) => i.id === messageId);
    if (this.running || at < 0) return;
    const kept = this.items;
    this.flush();
    this.items = this.items.slice(0, at);
    this.#reloadWhenDone = true;
    try {
      await this.#start(begin);
    } catch (err) {
      this.items = kept;
      this.#reloadWhenDone = false;
      throw err;
    }
  }

  /**
   * Shows branch `position` where `messageId` is the first message shown, reading the
   * conversation again and back to that point. Resolves with the first message of the branch
   * now shown there. (At a comparison this picks that branch's model, which Rust makes the
   * conversation's.)
   */
  async switchBranch(messageId: string, position: number): Promise<string> {
    const switched = await ipc.switchBranch(this.conversationId, messageId, position);
    this.load(await ipc.getConversation(this.conversationId));
    await this.loadUntil(switched.seq);
    return switched.point.message_id;
  }

  /** Deletes the question `messageId` and its answers, then shows the chat without them. */
  async deleteTurn(messageId: string): Promise<void> {
    const deleted = new Set(await ipc.deleteTurn(this.conversationId, messageId));
    this.items = this.items.filter((i) => !deleted.has(i.id));
  }

  /** Files now kept with the result of call `callId` of the answer `messageId` (a link it returned, read): its card counts them. */
  addResultFiles(messageId: string, callId: string, files: Attachment[]): void {
    const card = assistantIn(this.items, messageId)?.tools.find((c) => c.call_id === callId);
    if (!card) return;
    const have = new Set(card.artifacts.map((f) => f.sha256));
    const fresh = files.filter((f) => !have.has(f.sha256) && have.add(f.sha256));
    if (fresh.length > 0) card.artifacts = [...card.artifacts, ...fresh];
  }

  /**
   * What the card of call `callId` of the answer `messageId` needs for its MCP App: the app (asked
   * of Rust once per call, so a card built again does not ask again; a failure is asked again),
   * and the app's calls of its server's tools and links, each for this call.
   */
  appHost(messageId: string, callId: string, hostVersion: string): McpAppHost {
    const key = `${messageId}/${callId}`;
    return {
      prepare: () => {
        let app = this.#apps.get(key);
        if (!app) {
          app = ipc.prepareMcpApp(this.conversationId, messageId, callId);
          this.#apps.set(key, app);
          const asked = app;
          asked.catch(() => {
            if (this.#apps.get(key) === asked) this.#apps.delete(key);
          });
          // Rust serves the pages it handed out last (64); an older card asks again.
          for (const old of this.#apps.keys()) {
            if (this.#apps.size <= KEPT_APPS) break;
            this.#apps.delete(old);
          }
        }
        return app;
      },
      callTool: (tool, args) => ipc.appCallTool(this.conversationId, messageId, callId, tool, args as { [key: string]: JsonValue }),
      openLink: (url) => ipc.openLink(url),
      hostVersion,
    };
  }

  /** What the result of call `callId` of the answer `messageId` holds beyond its text. */
  resultView(messageId: string, callId: string): Promise<ResultView> {
    return ipc.getToolResultView(this.conversationId, messageId, callId);
  }

  /**
   * Starts a turn with the kept files `attachments`; `text` null retries. Rejects (with the
   * IpcError) when it cannot start.
   */
  async send(text: string | null, attachments: Attachment[] = []): Promise<void> {
    await this.#start((onEvent) => ipc.sendMessage(this.conversationId, text, onEvent, refsOf(attachments)));
  }

  /**
   * Asks `models` (two to four) the question `text` with the kept files `attachments`, each
   * answering in a lane of its own; once all have answered, the answers are branches of the
   * conversation and it is read again. Rejects (with the IpcError) when it cannot start.
   */
  async compare(text: string, attachments: Attachment[], models: ComparedModel[]): Promise<void> {
    await this.#start((onEvent) => ipc.compareModels(this.conversationId, text, refsOf(attachments), models, onEvent));
  }

  /** Runs a failed call of the answer `messageId` again. Rejects when it cannot start. */
  async retryCall(messageId: string, callId: string): Promise<void> {
    await this.#start((onEvent) => ipc.retryToolCall(this.conversationId, messageId, callId, onEvent));
  }

  async #start(begin: (onEvent: (event: RunEvent) => void) => Promise<string>): Promise<void> {
    if (this.running) return;
    this.notice = null;
    this.comparison = null;
    this.running = true;
    this.status = "Starting…";
    try {
      this.runId = await begin((event) => this.apply(event));
    } catch (err) {
      this.running = false;
      this.status = null;
      throw err;
    }
  }

  /**
   * Attaches to the run under way in this conversation, if any (the window was reloaded, or
   * shows the conversation again): the run is replayed from its start, then goes on live (a
   * comparison's columns are built again from its lanes' events).
   */
  async attach(): Promise<void> {
    if (this.running) return;
    try {
      const runId = await ipc.attachRun(this.conversationId, (event) => this.apply(event));
      if (runId && this.runId === null && this.running) this.runId = runId;
      // The run ended between reading the conversation and asking: what is on screen may be
      // an answer half-written; read it again, whole.
      if (!runId && this.items.some((i) => i.kind === "assistant" && i.status === "streaming")) {
        this.load(await ipc.getConversation(this.conversationId));
      }
    } catch {
      // Nothing to attach to is not an error worth showing: the saved history is on screen.
    }
  }

  /** Stops the run (a comparison: every model of it). */
  async stop(): Promise<void> {
    if (this.runId) await ipc.stopRun(this.runId);
  }

  /** Stops the model of lane `index` of the comparison under way, and only it. */
  async stopLane(index: number): Promise<void> {
    const lane = this.comparison?.lanes.find((l) => l.index === index);
    if (lane?.running && lane.runId) await ipc.stopRun(lane.runId);
  }

  /** The approval to ask now: the run's own, else the first model's of a comparison that waits for one. */
  get asking(): Asking | null {
    if (this.approval) return { approval: this.approval, askedBy: null, feed: this };
    for (const lane of this.comparison?.lanes ?? []) {
      if (lane.approval) return { approval: lane.approval, askedBy: lane.label, feed: lane };
    }
    return null;
  }

  /** Answers the approval asked now (`asking`): the run's own or a compared model's. */
  override async answer(answers: ApprovalAnswer[]): Promise<void> {
    const asking = this.asking;
    if (!asking) return;
    await (asking.feed === this ? super.answer(answers) : asking.feed.answer(answers));
  }

  protected override summarised(summary: Summary): void {
    this.summaries = [...this.summaries, summary];
  }

  protected override heard(event: RunEvent): void {
    this.#onEvent(event);
    if (event.type === "lane") {
      // The columns say how each model is doing: the conversation's status line gives way.
      this.status = null;
      this.#reloadWhenDone = true;
      this.#lane(event).apply(event.event);
    } else if (event.type === "comparison_folded") {
      this.#reloadWhenDone = true;
      if (this.comparison) this.comparison.folded = true;
    }
  }

  /** The lane a `lane` event is for, made when first heard of. */
  #lane(event: Extract<RunEvent, { type: "lane" }>): Lane {
    const comparison = (this.comparison ??= new Comparison());
    let lane = comparison.lanes.find((l) => l.index === event.lane);
    if (!lane) {
      lane = new Lane(event.lane, event.provider, event.model, this.scheduleFrame);
      comparison.lanes = [...comparison.lanes, lane].sort((a, b) => a.index - b.index);
    }
    return lane;
  }

  protected override finished(): void {
    this.#onFinished();
    if (!this.#reloadWhenDone) return;
    this.#reloadWhenDone = false;
    ipc.getConversation(this.conversationId).then(
      (detail) => {
        // Another run started meanwhile: the conversation is read again when it ends.
        if (this.running) this.#reloadWhenDone = true;
        else this.load(detail);
      },
      () => {
        this.comparison = null;
      },
    );
  }
}
