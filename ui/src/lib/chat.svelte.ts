// One open conversation as the chat shows it: user and assistant turns, each
// answer with its tool cards, built the same way from what was saved (on open)
// and from the live events of a run, so reopening shows exactly what was shown
// live. Sending, stopping, retrying and answering approvals go through ipc.ts.

import * as ipc from "./ipc";
import type { ApprovalAnswer, ApprovalItem, RunEvent } from "./run-events";
import type { CallRef, ConversationDetail, Message, MessageStatus, ToolRun } from "./types";

export type ToolCardState = "proposed" | "waiting" | "running" | "done" | "error" | "denied";

export interface ToolCard {
  call_id: string;
  /** the server it runs on; null for a tool the model made up */
  server: string | null;
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
}

/** Whether a card's Retry can run it again: it failed on a real tool with arguments that are an object. */
export function canRetry(card: ToolCard): boolean {
  if (card.state !== "error" || !card.server) return false;
  // As Rust reads them: no argument text at all is an empty object.
  if (card.arguments.trim() === "") return true;
  try {
    const args: unknown = JSON.parse(card.arguments);
    return typeof args === "object" && args !== null && !Array.isArray(args);
  } catch {
    return false;
  }
}

export type ChatItem =
  | { kind: "user"; id: string; text: string; created_at: number }
  | {
      kind: "assistant";
      id: string;
      text: string;
      reasoning: string;
      status: MessageStatus;
      finish_reason: string | null;
      error: string | null;
      model: string | null;
      input_tokens: number | null;
      output_tokens: number | null;
      tools: ToolCard[];
    };

export type AssistantItem = Extract<ChatItem, { kind: "assistant" }>;

interface StoredCall {
  id: string;
  name: string;
  arguments: string;
}

function storedCalls(value: unknown): StoredCall[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (c): c is StoredCall => typeof c === "object" && c !== null && typeof c.id === "string" && typeof c.name === "string",
  );
}

/** One key for the call `call_id` of the answer `message_id`. */
export function callKey(call: CallRef): string {
  return `${call.message_id}\u0000${call.call_id}`;
}

/** "get-current_time" → "Get Current Time", as the core names tools for people. */
export function titleCase(name: string): string {
  return name
    .split(/[-_\s]+/)
    .filter((w) => w !== "")
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(" ");
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
    tools: [],
  };
}

/** The chat as saved: each answer with its tool cards, results from the tool messages. */
export function itemsFrom(detail: Pick<ConversationDetail, "messages" | "tool_runs">): ChatItem[] {
  const runs = new Map<string, ToolRun>(detail.tool_runs.map((r) => [callKey(r), r]));
  const items: ChatItem[] = [];
  const cards = new Map<string, ToolCard>();
  for (const m of detail.messages) {
    if (m.role === "user") {
      items.push({ kind: "user", id: m.id, text: m.content ?? "", created_at: m.created_at });
    } else if (m.role === "assistant") {
      const item = assistantFrom(m);
      for (const call of storedCalls(m.tool_calls)) {
        const run = runs.get(callKey({ message_id: m.id, call_id: call.id }));
        const card: ToolCard = {
          call_id: call.id,
          server: run && run.server !== "" ? run.server : null,
          display_name: run?.display_name ?? (run && run.server !== "" ? `${run.server} · ${titleCase(run.tool)}` : call.name),
          arguments: call.arguments,
          state: run?.decision === "denied" ? "denied" : "proposed",
          content: null,
          duration_ms: run?.started_at != null && run.finished_at != null ? run.finished_at - run.started_at : null,
          reason: run?.deny_reason ?? null,
          progress: null,
          retry_of: run?.retry_of ?? null,
          description: run?.description ?? null,
          full_length: null,
          result_id: null,
        };
        cards.set(call.id, card);
        item.tools.push(card);
      }
      items.push(item);
    } else if (m.role === "tool" && m.tool_call_id) {
      const card = cards.get(m.tool_call_id);
      if (card) {
        showResult(card, m);
        if (card.state !== "denied") card.state = m.is_error ? "error" : "done";
      }
    }
  }
  return items;
}

/** A saved tool message's result on its card (a long one as its start). */
function showResult(card: ToolCard, message: Message): void {
  card.content = message.content;
  card.full_length = message.full_length;
  card.result_id = message.id;
}

export interface PendingApproval {
  request_id: string;
  calls: ApprovalItem[];
}

export interface RunNotice {
  message: string;
  retryable: boolean;
  kind: "error" | "info";
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

export class ChatSession {
  readonly conversationId: string;
  items = $state<ChatItem[]>([]);
  running = $state(false);
  runId = $state<string | null>(null);
  status = $state<string | null>(null);
  approval = $state<PendingApproval | null>(null);
  notice = $state<RunNotice | null>(null);
  /** Where the page of older messages ends (ipc.getOlderMessages); null once the first is shown. */
  older = $state<number | null>(null);
  /** A page of older messages is on its way (nothing shows it: it only keeps a second one back). */
  #loadingOlder = false;
  /** Counts the times the history was replaced: a page asked for before is not added after. */
  #loads = 0;
  readonly #onFinished: () => void;
  /** The answer the run is on: the calls its events name are that answer's (call ids repeat
   * across answers with Ollama and Gemini, and a replayed run must not touch a later card). */
  #answerId: string | null = null;
  /** Deltas are shown once a frame, all that arrived since the last: these, by answer id. */
  readonly #pending = new Map<string, PendingText>();
  readonly #scheduleFrame: FrameScheduler;
  #frameScheduled = false;

  constructor(detail: ConversationDetail, onFinished: () => void, scheduleFrame: FrameScheduler = nextFrame) {
    this.conversationId = detail.conversation.id;
    this.items = itemsFrom(detail);
    this.older = detail.older;
    this.#onFinished = onFinished;
    this.#scheduleFrame = scheduleFrame;
  }

  /**
   * Replaces what is shown with what was saved (not while a run is under way). Deltas still
   * waiting for a frame go first, so none is added to what was saved.
   */
  load(detail: ConversationDetail): void {
    if (this.running || detail.conversation.id !== this.conversationId) return;
    this.#flush();
    this.items = itemsFrom(detail);
    this.older = detail.older;
    this.#loads++;
  }

  /** Shows the page of messages before the first one shown, if there is one. */
  async loadOlder(): Promise<void> {
    const before = this.older;
    if (before === null || this.#loadingOlder) return;
    const loads = this.#loads;
    this.#loadingOlder = true;
    try {
      const page = await ipc.getOlderMessages(this.conversationId, before);
      if (loads !== this.#loads || this.older !== before) return;
      const shown = new Set(this.items.map((i) => i.id));
      this.items.unshift(...itemsFrom(page).filter((i) => !shown.has(i.id)));
      this.older = page.older;
    } finally {
      this.#loadingOlder = false;
    }
  }

  /** Reads the whole of a result its card shows only the start of. */
  async showWholeResult(messageId: string, callId: string): Promise<void> {
    const card = this.#assistant(messageId)?.tools.find((c) => c.call_id === callId);
    if (!card?.result_id || card.full_length === null) return;
    const whole = await ipc.getMessageText(this.conversationId, card.result_id);
    card.content = whole;
    card.full_length = null;
  }

  /** Starts a turn; `text` null retries. Rejects (with the IpcError) when it cannot start. */
  async send(text: string | null): Promise<void> {
    await this.#start((onEvent) => ipc.sendMessage(this.conversationId, text, onEvent));
  }

  /** Runs a failed call of the answer `messageId` again. Rejects when it cannot start. */
  async retryCall(messageId: string, callId: string): Promise<void> {
    await this.#start((onEvent) => ipc.retryToolCall(this.conversationId, messageId, callId, onEvent));
  }

  async #start(begin: (onEvent: (event: RunEvent) => void) => Promise<string>): Promise<void> {
    if (this.running) return;
    this.notice = null;
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
   * shows the conversation again): the run is replayed from its start, then goes on live.
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

  async stop(): Promise<void> {
    if (this.runId) await ipc.stopRun(this.runId);
  }

  async answer(answers: ApprovalAnswer[]): Promise<void> {
    const pending = this.approval;
    if (!pending) return;
    this.approval = null;
    await ipc.answerApproval(pending.request_id, answers);
  }

  #assistant(id: string): AssistantItem | undefined {
    const found = this.items.find((i) => i.kind === "assistant" && i.id === id);
    return found?.kind === "assistant" ? found : undefined;
  }

  /** The card of that id in the answer the run is on, else the newest card of that id. */
  #card(callId: string): ToolCard | undefined {
    const current = this.#answerId ? this.#assistant(this.#answerId) : undefined;
    const own = current?.tools.find((c) => c.call_id === callId);
    if (own) return own;
    for (const item of [...this.items].reverse()) {
      if (item.kind !== "assistant") continue;
      const card = item.tools.find((c) => c.call_id === callId);
      if (card) return card;
    }
    return undefined;
  }

  /**
   * Applies one event of the run. Text and reasoning deltas wait for the next frame, which shows
   * all that arrived since the last at once; any other event first shows the text waiting, so
   * everything is shown in the order it came (a saved answer's text replaces all of its deltas).
   */
  apply(event: RunEvent): void {
    if (event.type === "text_delta" || event.type === "reasoning_delta") {
      this.#hold(event.message_id, event.type === "text_delta" ? "text" : "reasoning", event.text);
      return;
    }
    this.#flush();
    switch (event.type) {
      case "run_started":
        this.runId = event.run_id;
        this.running = true;
        break;
      case "status":
        this.status = event.text;
        break;
      case "answer_started": {
        // Replayed to a window that attached, the answer may be on screen already (as saved so
        // far): it starts again from the event and the replay rebuilds it.
        const fresh = assistantFrom(event.message);
        this.#answerId = fresh.id;
        const at = this.items.findIndex((i) => i.kind === "assistant" && i.id === fresh.id);
        if (at >= 0) this.items[at] = fresh;
        else this.items.push(fresh);
        break;
      }
      case "tool_call_proposed": {
        const item = this.#assistant(event.call.message_id);
        if (!item || item.tools.some((c) => c.call_id === event.call.call_id)) break;
        item.tools.push({
          call_id: event.call.call_id,
          server: event.call.server,
          display_name: event.call.display_name,
          arguments: event.call.arguments,
          state: "proposed",
          content: null,
          duration_ms: null,
          reason: null,
          progress: null,
          retry_of: event.call.retry_of,
          description: null,
          full_length: null,
          result_id: null,
        });
        break;
      }
      case "approval_required":
        for (const call of event.calls) {
          const card = this.#card(call.call_id);
          if (card) card.state = "waiting";
        }
        this.approval = { request_id: event.request_id, calls: event.calls };
        break;
      case "tool_decided": {
        // Decided means answered: a replayed request (the window attached after it was
        // answered) is not asked again.
        if (this.approval?.calls.some((c) => c.call_id === event.call_id)) this.approval = null;
        const card = this.#card(event.call_id);
        if (card && !event.allowed) {
          card.state = "denied";
          card.reason = event.reason;
        } else if (card) {
          card.state = "proposed";
        }
        break;
      }
      case "tool_started": {
        const card = this.#card(event.call_id);
        if (card) card.state = "running";
        break;
      }
      case "tool_described": {
        const card = this.#card(event.call_id);
        if (card) card.description = event.description;
        break;
      }
      case "tool_progress": {
        const card = this.#card(event.call_id);
        if (card && card.state === "running") {
          card.progress = { progress: event.progress, total: event.total, message: event.message };
        }
        break;
      }
      case "tool_finished": {
        const card = this.#card(event.call_id);
        if (card) {
          card.progress = null;
          card.state = event.is_error ? "error" : "done";
          card.content = event.content;
          card.full_length = event.full_length;
          card.duration_ms = event.duration_ms;
        }
        break;
      }
      case "message_saved":
        this.#saved(event.message);
        break;
      case "tool_warning":
        this.notice = { kind: "info", message: `${event.tool} was left out: ${event.message}`, retryable: false };
        break;
      case "error":
        this.notice = { kind: "error", message: event.message, retryable: event.retryable };
        break;
      case "run_finished":
        this.#answerId = null;
        this.running = false;
        this.runId = null;
        this.status = null;
        this.approval = null;
        if (event.message && event.reason !== "error") {
          this.notice = { kind: event.reason === "max_rounds" ? "info" : "error", message: event.message, retryable: false };
        }
        this.#onFinished();
        break;
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
    this.#scheduleFrame(() => {
      this.#frameScheduled = false;
      this.#flush();
    });
  }

  /** Shows the deltas waiting for a frame. */
  #flush(): void {
    for (const [messageId, pending] of this.#pending) {
      const item = this.#assistant(messageId);
      if (!item) continue;
      if (pending.text !== "") item.text += pending.text;
      if (pending.reasoning !== "") item.reasoning += pending.reasoning;
    }
    this.#pending.clear();
  }

  #saved(message: Message): void {
    if (message.role === "user") {
      if (!this.items.some((i) => i.id === message.id)) {
        this.items.push({ kind: "user", id: message.id, text: message.content ?? "", created_at: message.created_at });
      }
    } else if (message.role === "assistant") {
      const item = this.#assistant(message.id);
      if (!item) return;
      const saved = assistantFrom(message);
      item.text = saved.text;
      item.status = saved.status;
      item.finish_reason = saved.finish_reason;
      item.error = saved.error;
      item.input_tokens = saved.input_tokens;
      item.output_tokens = saved.output_tokens;
    } else if (message.role === "tool" && message.tool_call_id) {
      const card = this.#card(message.tool_call_id);
      if (card) {
        // Saved, so finished: Rust shows the result only once it is written.
        card.progress = null;
        showResult(card, message);
        if (card.state !== "denied") card.state = message.is_error ? "error" : "done";
      }
    }
  }
}
