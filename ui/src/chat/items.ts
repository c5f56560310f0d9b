// The chat's items: user and assistant turns, each answer with its tool cards, and the one
// reducer that builds them (`reduceItems`), applying a run's events to them one by one. What was
// saved is first turned into the events a live run sends (`eventsFrom`), so reopening shows
// exactly what was shown live (`itemsFrom`). Also how the answers' rounds make turns: which
// rounds are one turn (`turnsIn`), what a turn used and cost in all (`turnUse`), and whether a
// round's tool cards show unasked (`toolsStartOpen`). No IPC and no state of its own: the feeds
// that hold the items (run-feed.svelte.ts) make them reactive.

import type { RunEvent } from "../lib/run-events";
import type { Attachment, CallRef, CallTask, ConversationDetail, Finish, KnowledgeUse, Message, MessageStatus, ToolRun } from "../lib/types";

/** The `name` of a task's late result (a `system` message; its `tool_call_id` is the call's
 *  answer's id, ":", then the call's id, as `lateResultCall` reads it). */
export const LATE_RESULT = "task_result";

/** The call a late result is of, or null for any other message. */
export function lateResultCall(m: Message): CallRef | null {
  if (m.role !== "system" || m.name !== LATE_RESULT || !m.tool_call_id) return null;
  const at = m.tool_call_id.indexOf(":");
  return at < 0 ? null : { message_id: m.tool_call_id.slice(0, at), call_id: m.tool_call_id.slice(at + 1) };
}

/** `waiting`: for the person's approval; `reviewing`: it ran, and its result waits for the
 *  person's review before the model reads it. */
export type ToolCardState = "proposed" | "waiting" | "running" | "reviewing" | "done" | "error" | "denied";

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
  /** `content` is the server's answer (an error it reported included), not Switchboard's words
   *  about the call: the card then never reads it for what happened */
  answered: boolean;
  /** the result has more than text to show (images, audio, links, structured content) */
  rich: boolean;
  /** what decided the call, in Rust's words ("rule 1 of your policy.json: …", "you, when asked
   *  (…)", with what the person did with a result they reviewed); null: not said */
  decided_by: string | null;
  /** the files the result carried, kept by Rust (the canvas shows them) */
  artifacts: Attachment[];
  /** the server's task the call runs as (MCP Tasks), and where it stands */
  task: CallTask | null;
  /** what its task came to after the call was answered without it (server text when
   *  `answered`; Switchboard's words otherwise) */
  late: { content: string; is_error: boolean } | null;
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
      /** what of its project's files and its memory its request was given, when any */
      given?: KnowledgeUse | null;
    };

export type AssistantItem = Extract<ChatItem, { kind: "assistant" }>;

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
    given: m.given ?? null,
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
    answered: false,
    rich: false,
    artifacts: [],
    decided_by: null,
    task: null,
    late: null,
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
          events.push({
            type: "tool_decided",
            call_id: call.id,
            decision: run.decision,
            scope: run.decision_scope,
            reason: run.deny_reason,
            decided_by: run.decided_by,
          });
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
          answered: run.answered,
          rich: run.rich,
          artifacts: m.attachments,
          // Asked once, when the result came: reopening does not open the canvas again.
          open_canvas: null,
          decided_by: run.decided_by,
          task: run.task,
        });
      }
      events.push({ type: "message_saved", message: m });
    } else if (lateResultCall(m)) {
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

/** The answer of that id, if it is shown. */
export function assistantIn(items: ChatItem[], id: string): AssistantItem | undefined {
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
      if (card) card.decided_by = event.decided_by ?? card.decided_by;
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
    case "result_review_required": {
      // Until its `tool_finished`, which Rust sends whatever the person's word (none, when the
      // run stops: the result is withheld).
      const card = cardIn(items, cursor, event.call_id);
      if (card && (card.state === "running" || card.state === "proposed")) {
        card.state = "reviewing";
        card.progress = null;
      }
      break;
    }
    case "tool_described": {
      const card = cardIn(items, cursor, event.call_id);
      if (card) card.description = event.description;
      break;
    }
    case "tool_task": {
      const card = cardIn(items, cursor, event.call_id);
      if (card) card.task = { id: event.task_id, state: "running" };
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
        card.answered = event.answered;
        card.rich = event.rich;
        // (Runs recorded before files were kept send none.)
        card.artifacts = event.artifacts ?? [];
        card.decided_by = event.decided_by ?? card.decided_by;
        card.task = event.task ?? card.task;
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
  } else if (lateResultCall(message)) {
    // Its call is an earlier answer's (call ids repeat across answers with Ollama and Gemini).
    const call = lateResultCall(message)!;
    const card = assistantIn(items, call.message_id)?.tools.find((c) => c.call_id === call.call_id);
    if (card) card.late = { content: message.content ?? "", is_error: message.is_error };
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

/**
 * The turns among `rows`, by the id of each of their rounds: answers that follow one another
 * (a tool round, the words after it, a retry) are the rounds of one turn, in order. A question
 * of yours, or any other row (a summary), ends a turn.
 */
export function turnsIn(rows: readonly { kind: string; id: string }[]): Map<string, AssistantItem[]> {
  const turns = new Map<string, AssistantItem[]>();
  let turn: AssistantItem[] = [];
  for (const row of rows) {
    if (row.kind !== "assistant") {
      turn = [];
      continue;
    }
    turn.push(row as AssistantItem);
    turns.set(row.id, turn);
  }
  return turns;
}

/** What one round of a turn used, as its answer was saved. */
export interface RoundUse {
  /** its place in the turn, from 1 */
  round: number;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  /** null: its model had no price */
  cost_pico: number | null;
}

/** What a turn used over all its rounds. */
export interface TurnUse {
  /** the models its rounds used, each once, in the order they were first used */
  models: string[];
  /** the prompt tokens of the rounds that said theirs; null when none did */
  input_tokens: number | null;
  /** the answer tokens of the rounds that said theirs; null when none did */
  output_tokens: number | null;
  /** what its priced rounds cost, in pico-dollars; null when none had a price */
  cost_pico: number | null;
  /** how many rounds said their tokens but had no price (their tokens count, their cost cannot) */
  unpriced: number;
  /** each round that said what it used, in order */
  rounds: RoundUse[];
  /** what of its project's files and its memory the turn was given, when any */
  given: KnowledgeUse | null;
}

/** What the rounds of one turn used in all: tokens and cost summed, each model once. */
export function turnUse(rounds: readonly AssistantItem[]): TurnUse {
  const use: TurnUse = { models: [], input_tokens: null, output_tokens: null, cost_pico: null, unpriced: 0, rounds: [], given: null };
  rounds.forEach((r, i) => {
    use.given ??= r.given ?? null;
    if (r.model !== null && !use.models.includes(r.model)) use.models.push(r.model);
    if (r.input_tokens === null && r.output_tokens === null && r.cost_pico === null) return;
    use.rounds.push({ round: i + 1, model: r.model, input_tokens: r.input_tokens, output_tokens: r.output_tokens, cost_pico: r.cost_pico });
    if (r.input_tokens !== null) use.input_tokens = (use.input_tokens ?? 0) + r.input_tokens;
    if (r.output_tokens !== null) use.output_tokens = (use.output_tokens ?? 0) + r.output_tokens;
    if (r.cost_pico !== null) use.cost_pico = (use.cost_pico ?? 0) + r.cost_pico;
    else use.unpriced += 1;
  });
  return use;
}

/**
 * Whether a round's tool cards show without the person asking: while its turn is the one being
 * written or the newest one seen (`current`), while it streams, while a card has not finished
 * (proposed, waiting for approval, running), and whenever a card failed or was denied. An
 * older round whose calls all worked starts folded under its "Used N tools" row.
 */
export function toolsStartOpen(round: AssistantItem, current: boolean): boolean {
  return current || round.status === "streaming" || round.tools.some((c) => c.state !== "done");
}
