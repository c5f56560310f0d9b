//! The made-up chat the window opens out of sight, a few times, while it is idle after start-up
//! (warmup.ts runs these steps after its own), so that the first chat a person opens does not
//! pay for running the chat's code for the first time. JavaScriptCore runs a function in its
//! slowest tier until it has been called some dozens of times; a chat's first opening runs the
//! list's, the rows' and each tool card's code cold, which measured about 1.6 times as long as
//! the same opening after other chats had been opened (BENCHMARKS.md, session 24). Each round mounts
//! the real `MessageList` with made-up rows (answers in Markdown, a batch of tool cards, a list
//! long enough to be virtualised in some rounds), built from made-up saved messages by the same
//! reducer as a chat read from the core, lets it lay out, and unmounts it.
//!
//! A round waits while the person is using the window (input in the last second) or an answer
//! is coming (`running`), and is left out if either began by the time its task runs; a round
//! already mounting runs to its end (a few tens of ms the first time, less after).
//!
//! The list is built in a shadow root that links the page's own style sheets (no inline style:
//! the CSP allows none), in a box that is laid out but never painted or read out: nothing of it
//! can be seen, focused or clicked, and nothing in the page finds its rows (its test ids, its
//! "answers") from outside.

import { mount, unmount } from "svelte";
import MessageList from "./MessageList.svelte";
import { itemsFrom, type ChatItem } from "./items";
import type { ConversationDetail, Message } from "../lib/types";
import { forgetFinished } from "./markdown-blocks";
import { SAMPLE_MARKDOWN, type MoreSteps } from "../app/warmup";

/** One opening of the made-up chat: how many tool calls its answer made, and its length in rows (at most). */
export interface WarmRound {
  cards: number;
  rows: number;
}

/**
 * The openings, smallest first (the first, run cold, is the longest task per card). Some have
 * more rows than the list shows plainly (12), so the virtualised list is warmed too; the cards
 * add up to more calls than the engine needs to compile a card's code.
 */
export const WARM_ROUNDS: readonly WarmRound[] = [
  { cards: 4, rows: 6 },
  { cards: 12, rows: 6 },
  { cards: 20, rows: 17 },
  { cards: 20, rows: 6 },
  { cards: 20, rows: 17 },
  { cards: 20, rows: 6 },
];

/** The ids of the made-up answers: the same each round, so the cache of finished answers holds
 *  a few of them at most (each round's text differs, so each renders again); let go at the end. */
const answerId = (i: number | "calls" | "closing"): string => `warm-up-answer-${i}`;

/** The made-up chat as the core would send it: messages, and a record of each call. */
type Saved = Pick<ConversationDetail, "messages" | "tool_runs">;

function message(id: string, role: Message["role"], content: string | null, more: Partial<Message> = {}): Message {
  return {
    id,
    conversation_id: "warm-up",
    role,
    content,
    created_at: 0,
    tool_calls: null,
    tool_call_id: null,
    name: null,
    finish_reason: role === "assistant" ? "stop" : null,
    status: "complete",
    provider: role === "assistant" ? "warm-up" : null,
    model: role === "assistant" ? "warm-up" : null,
    input_tokens: role === "assistant" ? 1_200 : null,
    output_tokens: role === "assistant" ? 340 : null,
    reasoning: null,
    error: null,
    is_error: false,
    full_length: null,
    attachments: [],
    cost_pico: role === "assistant" ? 2_000_000 : null,
    ...more,
  };
}

/** Call `i` of round `round`, made by the answer `answer`: its record and its result's message. */
function toolCall(saved: Saved, answer: string, round: number, i: number): { id: string; name: string; arguments: string } {
  const failed = i % 7 === 6;
  const id = `warm-up-${round}-${i}`;
  const args = JSON.stringify({ path: `notes/${i}.md` });
  const took = i % 2 === 0 ? 120 + i : 1450 + i;
  saved.tool_runs.push({
    id: `warm-up-run-${round}-${i}`,
    conversation_id: "warm-up",
    message_id: answer,
    call_id: id,
    server: "warm-up",
    tool: "read_note",
    display_name: "warm-up · read_note",
    arguments: args,
    decision: "allowed",
    decision_scope: "once",
    deny_reason: null,
    started_at: 1_000,
    finished_at: 1_000 + took,
    is_error: failed,
    retry_of: null,
    description: i % 3 === 0 ? "Reads one note" : null,
    can_retry: failed,
    answered: false,
    rich: false,
  });
  saved.messages.push(
    message(`warm-up-result-${round}-${i}`, "tool", failed ? "The note could not be read." : `Note ${i}: what it says.`, {
      tool_call_id: id,
      is_error: failed,
      full_length: i % 5 === 0 ? 12_000 + i : null,
    }),
  );
  return { id, name: "warm-up__read_note", arguments: args };
}

/**
 * Round `round`'s rows (`rows` at most): earlier turns, then a question, an answer that made the
 * calls, and a closing answer. Built from made-up saved messages by the reducer that builds a
 * chat read from the core (`itemsFrom`), so that code is warm too.
 */
export function warmChat(round: number, { cards, rows }: WarmRound): ChatItem[] {
  const saved: Saved = { messages: [], tool_runs: [] };
  for (let i = 0; saved.messages.length + 5 <= rows; i++) {
    saved.messages.push(message(`warm-up-${round}-q${i}`, "user", `An earlier question, number ${i}?`));
    saved.messages.push(message(answerId(i), "assistant", `An earlier answer with **bold** and \`code\`, number ${i}, round ${round}.`));
  }
  saved.messages.push(message(`warm-up-${round}-q`, "user", "Read my notes and sum them up."));
  const calls = message(answerId("calls"), "assistant", "", { finish_reason: "tool_calls" });
  saved.messages.push(calls);
  calls.tool_calls = Array.from({ length: cards }, (_, i) => toolCall(saved, calls.id, round, i));
  saved.messages.push(message(answerId("closing"), "assistant", `${SAMPLE_MARKDOWN}\n\nRound ${round}.`));
  return itemsFrom(saved);
}

/**
 * The page's style sheets for the shadow root: its `<link rel="stylesheet">` elements cloned
 * (the same files, which the CSP allows, `style-src 'self'`, and the engine has already read).
 * A `<style>` element is not copied: the CSP allows none, so a copy would only be refused.
 */
function pageStyles(doc: Document): Node[] {
  return Array.from(doc.querySelectorAll('link[rel="stylesheet"]'), (link) => link.cloneNode());
}

/** A round waits until this long after the person's last input (a key, a click, the wheel). */
export const QUIET_MS = 1000;
/** While it waits, it looks again this often. */
const WAIT_STEP_MS = 250;
const INPUTS = ["pointerdown", "keydown", "wheel"] as const;

/** What a round waits for, and how it tells time (a test gives its own). */
export interface WarmWhen {
  /** whether an answer is coming in some conversation (a round then waits) */
  running: () => boolean;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

const browserWhen = (running: () => boolean): WarmWhen => ({
  running,
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
});

/**
 * The steps that open the made-up chat in `doc` once per round of `rounds`, the list mounted
 * with `context` (the window's stores: a tool card reads the servers' states), each opening
 * unmounted in the step after it. Each round first waits for a quiet window (`when`: whether
 * an answer is coming, or the clock to use). A step that throws stops the rest (the warm-up only saves
 * time; it is never worth an error).
 */
export function chatWarmup(
  doc: Document,
  context: Map<unknown, unknown>,
  when: WarmWhen | (() => boolean),
  rounds: readonly WarmRound[] = WARM_ROUNDS,
): MoreSteps {
  const clock = typeof when === "function" ? browserWhen(when) : when;
  let host: HTMLElement | null = null;
  let target: HTMLElement | null = null;
  let shown: ReturnType<typeof mount> | null = null;
  let broken = false;
  /** The made-up answers mounted so far (their HTML is let go at the end). */
  const answers = new Set<string>();
  let lastInput = -Infinity;
  const heard = (): void => {
    lastInput = clock.now();
  };
  const view = doc.defaultView;
  for (const type of INPUTS) view?.addEventListener(type, heard, { capture: true, passive: true });

  /** Whether no answer is coming and the person has been still for QUIET_MS. */
  const calm = (): boolean => !clock.running() && clock.now() - lastInput >= QUIET_MS;
  /** Resolves once it is calm (or the warm-up has stopped). */
  const quiet = async (): Promise<void> => {
    while (!broken && !calm()) await clock.sleep(WAIT_STEP_MS);
  };

  const close = (): void => {
    if (shown === null) return;
    const list = shown;
    shown = null;
    void unmount(list);
  };
  const done = (): void => {
    broken = true;
    close();
    for (const id of answers) forgetFinished(id);
    host?.remove();
    host = null;
    for (const type of INPUTS) view?.removeEventListener(type, heard, { capture: true });
  };
  const guarded = (step: () => void) => (): void => {
    if (broken) return;
    try {
      step();
    } catch (err) {
      done();
      console.warn("the chat's warm-up stopped", err);
    }
  };

  const steps: Array<() => void | Promise<void>> = [
    guarded(() => {
      host = doc.createElement("div");
      host.setAttribute("aria-hidden", "true");
      host.setAttribute("inert", "");
      // Laid out (as a chat pane is) but never painted, out of the way of the layout around it.
      host.style.cssText =
        "position:fixed;left:-10000px;top:0;width:1000px;height:800px;visibility:hidden;pointer-events:none;contain:strict;";
      const shadow = host.attachShadow({ mode: "open" });
      target = doc.createElement("div");
      target.style.cssText = "display:flex;flex-direction:column;height:100%;";
      shadow.append(...pageStyles(doc), target);
      doc.body.append(host);
    }),
  ];
  rounds.forEach((round, n) => {
    steps.push(
      quiet,
      guarded(() => {
        // The task comes a moment after the wait ended: a round that would now be in the way is left out.
        if (!target || !calm()) return;
        const items = warmChat(n, round);
        for (const item of items) if (item.kind === "assistant") answers.add(item.id);
        shown = mount(MessageList, {
          target,
          context,
          props: {
            items,
            onRetry: () => {},
            onRetryCall: () => {},
            onShowWhole: () => Promise.resolve(),
            onDeleteTurn: () => {},
            onEdit: () => {},
            onRegenerate: () => {},
          },
        });
      }),
      guarded(close),
    );
  });
  steps.push(guarded(done));
  return { steps, done };
}
