// The chat sessions of the window, keyed by conversation id, living outside any component: a
// conversation that is answering keeps its session (its live answer, its Stop) while the person
// looks at another page, and gets it back when they return. A conversation shown for the first
// time (or again after a reload of the window) is built from what was saved and then attached to
// the run under way there, if any, which replays that run from its start. Every run event a
// session applies is passed on with its conversation's id (the canvas's files hear them).
// Each conversation's composer draft lives here too; what it holds is told to Rust once typing
// rests, so it is found again after the app is closed and opened.

import { itemsFrom, type ChatItem } from "./items";
import { ChatSession } from "./session.svelte";
import { ComposerDraft } from "./composer-draft.svelte";
import * as ipc from "../lib/ipc";
import type { RunEvent } from "../lib/run-events";
import type { ConversationDetail } from "../lib/types";

/** How long a composer rests before what it holds is told to Rust. */
export const DRAFT_SAVE_MS = 300;

export class ChatSessions {
  readonly #sessions = new Map<string, ChatSession>();
  /** What the composer holds, by conversation: kept while the window lives, whatever is open. */
  readonly #drafts = new Map<string, ComposerDraft>();
  /** Drafts changed and not yet told to Rust, by conversation. */
  readonly #unsaved = new Map<string, { draft: ComposerDraft; timer: ReturnType<typeof setTimeout> }>();
  /** The save of each conversation's draft under way: the next waits for it (in order). */
  readonly #saving = new Map<string, Promise<void>>();
  /** Conversations whose composer was written in since this window began: what Rust kept
   * for them is older than what the window holds, and is never restored. */
  readonly #written = new Set<string>();
  /** Chat items built from a conversation read before its session shows them (`prepare`), by
   * the read; each is taken once. */
  readonly #prepared = new WeakMap<ConversationDetail, ChatItem[]>();
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
    const items = this.#prepared.get(detail);
    this.#prepared.delete(detail);
    let session = this.#sessions.get(id);
    if (session) {
      session.load(detail, items);
      return session;
    }
    session = new ChatSession(detail, () => this.#onFinished(id), undefined, (event) => this.#onEvent(id, event), items);
    this.#sessions.set(id, session);
    void session.attach();
    // What the composer held when the conversation was last left (unless it was written in
    // since this window began).
    if (detail.draft && !this.#written.has(id)) this.draftOf(id).restore(detail.draft);
    return session;
  }

  /**
   * Builds the chat items of a conversation just read, for the session that will show them
   * (`open`), unless its session is running (it keeps what it shows). A long chat's items (an
   * answer of hundreds of calls) take a good part of a frame to build: built as the read comes,
   * they are not built in the frame that mounts the chat.
   */
  prepare(detail: ConversationDetail): void {
    if (this.#sessions.get(detail.conversation.id)?.running) return;
    this.#prepared.set(detail, itemsFrom(detail));
  }

  /** Rust says each conversation a task's late result lands in (a task followed outside its
   *  run): the session showing it reads it again (once its run ends, if one runs). Nothing polls. */
  async watchTasks(): Promise<void> {
    try {
      await ipc.watchTasks((conversationId) => this.#sessions.get(conversationId)?.readAgain());
    } catch (err) {
      // A late result still shows when the conversation is opened again.
      console.error("cannot listen for tasks' late results", err);
    }
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
      const made = new ComposerDraft(() => {
        this.#written.add(conversationId);
        this.#saveSoon(conversationId, made);
      });
      draft = made;
      this.#drafts.set(conversationId, draft);
    }
    return draft;
  }

  #saveSoon(conversationId: string, draft: ComposerDraft): void {
    clearTimeout(this.#unsaved.get(conversationId)?.timer);
    const timer = setTimeout(() => this.#save(conversationId), DRAFT_SAVE_MS);
    this.#unsaved.set(conversationId, { draft, timer });
  }

  #save(conversationId: string): void {
    const unsaved = this.#unsaved.get(conversationId);
    if (!unsaved) return;
    clearTimeout(unsaved.timer);
    this.#unsaved.delete(conversationId);
    // One at a time per conversation, each sending what the composer holds when it goes, so
    // an older draft never lands after a newer one. Not kept is not lost: the window still
    // holds it, and the next change tries again.
    const send = (): Promise<void> => ipc.saveDraft(conversationId, unsaved.draft.saved);
    const before = this.#saving.get(conversationId);
    // Sent now when none is under way (a window going away has no later).
    const saving: Promise<void> = (before ? before.then(send) : send())
      .catch((err: unknown) => console.warn("a draft was not kept", err))
      .finally(() => {
        if (this.#saving.get(conversationId) === saving) this.#saving.delete(conversationId);
      });
    this.#saving.set(conversationId, saving);
  }

  /** Tells Rust now what every composer not yet saved holds (the window is going away). */
  flush(): void {
    for (const conversationId of [...this.#unsaved.keys()]) this.#save(conversationId);
  }

  /**
   * Nothing was asked or written in `conversationId` in this window: no message shown, no run,
   * an empty composer with nothing waiting to be saved. Rust has the last word on whether it
   * was used ([`discard_if_unused`]); this only spares it the question.
   */
  untouched(conversationId: string): boolean {
    const session = this.#sessions.get(conversationId);
    if (session && (session.running || session.items.length > 0)) return false;
    const draft = this.#drafts.get(conversationId);
    return (!draft || draft.empty) && !this.#unsaved.has(conversationId) && !this.#saving.has(conversationId);
  }

  /** A deleted conversation's session and draft go with it. */
  forget(conversationId: string): void {
    this.#sessions.delete(conversationId);
    this.#drafts.delete(conversationId);
    clearTimeout(this.#unsaved.get(conversationId)?.timer);
    this.#unsaved.delete(conversationId);
    this.#written.delete(conversationId);
  }
}
