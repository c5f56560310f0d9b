// The chat sessions of the window, keyed by conversation id, living outside any component: a
// conversation that is answering keeps its session (its live answer, its Stop) while the person
// looks at another page, and gets it back when they return. A conversation shown for the first
// time (or again after a reload of the window) is built from what was saved and then attached to
// the run under way there, if any, which replays that run from its start. Every run event a
// session applies is passed on with its conversation's id (the canvas's files hear them).

import { ChatSession } from "../chat.svelte";
import { ComposerDraft } from "../composer-draft.svelte";
import type { RunEvent } from "../run-events";
import type { ConversationDetail } from "../types";

export class ChatSessions {
  readonly #sessions = new Map<string, ChatSession>();
  /** What the composer holds, by conversation: kept while the window lives, whatever is open. */
  readonly #drafts = new Map<string, ComposerDraft>();
  readonly #onFinished: (conversationId: string) => void;
  readonly #onEvent: (conversationId: string, event: RunEvent) => void;

  /**
   * `onFinished` hears of every run that ends, shown or not (the sidebar's order changes);
   * `onEvent` of every event a session applies but the text deltas.
   */
  constructor(onFinished: (conversationId: string) => void, onEvent: (conversationId: string, event: RunEvent) => void = () => {}) {
    this.#onFinished = onFinished;
    this.#onEvent = onEvent;
  }

  /**
   * The session of the conversation `detail` shows. One that is running keeps what it shows;
   * an idle one is brought up to date with what was saved. Sessions of other conversations that
   * are not running are let go (their history is on disk).
   */
  open(detail: ConversationDetail): ChatSession {
    const id = detail.conversation.id;
    for (const [other, session] of this.#sessions) {
      if (other !== id && !session.running) this.#sessions.delete(other);
    }
    let session = this.#sessions.get(id);
    if (session) {
      session.load(detail);
      return session;
    }
    session = new ChatSession(detail, () => this.#onFinished(id), undefined, (event) => this.#onEvent(id, event));
    this.#sessions.set(id, session);
    void session.attach();
    return session;
  }

  /** Whether an answer is coming in any conversation. */
  get running(): boolean {
    for (const session of this.#sessions.values()) if (session.running) return true;
    return false;
  }

  /** The session of `conversationId`, if the window has one. */
  get(conversationId: string): ChatSession | undefined {
    return this.#sessions.get(conversationId);
  }

  /**
   * The composer's draft for `conversationId`: the same one each time it is asked for, so what
   * was written there is found again. Others left empty are let go.
   */
  draftOf(conversationId: string): ComposerDraft {
    let draft = this.#drafts.get(conversationId);
    if (!draft) {
      for (const [other, kept] of this.#drafts) if (kept.empty) this.#drafts.delete(other);
      draft = new ComposerDraft();
      this.#drafts.set(conversationId, draft);
    }
    return draft;
  }

  /** A deleted conversation's session and draft go with it. */
  forget(conversationId: string): void {
    this.#sessions.delete(conversationId);
    this.#drafts.delete(conversationId);
  }
}
