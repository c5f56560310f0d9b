// The conversations: the list in the sidebar, the open one with its messages (`detail`), and
// every action on one (create, from a profile or not, open, rename, auto-approve, model choice,
// profile, delete), plus the tools panel's state for one. Navigates through the UI store (which
// also shows failures) and, when a conversation is deleted, forgets its chat session in
// `ChatSessions`.
//
// Consistency rule: after every mutation the list is refreshed from Rust, and only the
// latest-issued refresh may be applied (`LatestOnly`), so quick creates and deletes always settle
// on exactly what Rust has. A deleted conversation leaves the list at once (ids are never reused,
// so no stale answer may bring it back), which keeps rapid open → delete → open sequences from
// acting on a conversation that is already on its way out. A create navigates to what it created
// only if the person has not gone elsewhere meanwhile (the UI store's navigation ticket).
//
// A conversation is not kept until something is in it: one made by New and left (another
// conversation opened, a new one made, the welcome page) with nothing asked or written is
// deleted by Rust (`discard_if_unused`) and leaves the list; one made but never shown (the
// person went elsewhere first) goes at once. What a closed window left so goes when the next
// one starts (Rust).

import * as ipc from "../lib/ipc";
import { IpcError } from "../lib/errors";
import { LatestOnly } from "../shared/latest";
import { afterLateFrame } from "./frame-budget";
import { ConversationTools } from "./conversation-tools.svelte";
import type { Conversation, ConversationDetail, ExportFormat, ProfileChoice, SearchHit } from "../lib/types";
import type { ChatSessions } from "./chat-sessions.svelte";
import type { UiStore } from "../app/ui.svelte";

/** How long opening a conversation keeps the page shown while its messages are read. */
const HOLD_MS = 150;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export class ConversationsStore {
  list = $state.raw<Conversation[]>([]);
  /** the open conversation with its messages; null while loading */
  detail = $state.raw<ConversationDetail | null>(null);
  /** a message to bring into view once its conversation is open (a search hit) */
  reveal = $state.raw<{ conversationId: string; messageId: string; seq: number } | null>(null);

  readonly #ui: UiStore;
  readonly #chats: ChatSessions;
  readonly #listGuard = new LatestOnly();
  readonly #detailGuard = new LatestOnly();
  /** conversations deleted (or being deleted) in this session */
  readonly #deleted = new Set<string>();
  /** the conversation last opened: the one left when another opens */
  #lastOpen: string | null = null;
  /** conversations whose name or system prompt is being saved: never taken for unused */
  readonly #saving = new Set<string>();
  /** conversations Rust is asked to delete as unused, until it answers */
  readonly #discarding = new Map<string, Promise<void>>();

  constructor(ui: UiStore, chats: ChatSessions) {
    this.#ui = ui;
    this.#chats = chats;
  }

  /**
   * The open conversation as best known: the list entry (read again after every change, so it
   * has the title Rust gave from the first message), else the loaded detail.
   */
  get current(): Conversation | null {
    const id = this.#ui.openId;
    if (id === null) return null;
    return this.list.find((c) => c.id === id) ?? (this.detail?.conversation.id === id ? this.detail.conversation : null);
  }

  // ------------------------------------------------------------ navigation

  /** Leaves the open conversation for the welcome page. */
  showWelcome(): void {
    void this.#leave(null);
    this.#ui.go({ name: "welcome" });
    this.detail = null;
  }

  /** The person leaves the conversation last opened for `next` (null: none); done once Rust decided. */
  #leave(next: string | null): Promise<void> {
    const left = this.#lastOpen;
    this.#lastOpen = next;
    return left !== null && left !== next ? this.#discardIfUnused(left) : Promise.resolve();
  }

  /** Deletes conversation `id` if nobody used it, in Rust's judgement; it then leaves the list. */
  #discardIfUnused(id: string): Promise<void> {
    if (this.#deleted.has(id) || this.#saving.has(id) || !this.#chats.untouched(id)) return Promise.resolve();
    const asked = this.#discardNow(id).finally(() => this.#discarding.delete(id));
    this.#discarding.set(id, asked);
    return asked;
  }

  async #discardNow(id: string): Promise<void> {
    try {
      if (!(await ipc.discardIfUnused(id))) return;
    } catch {
      // Kept for now: the next start deletes it if it is still unused.
      return;
    }
    this.#deleted.add(id);
    this.#chats.forget(id);
    this.list = this.list.filter((c) => c.id !== id);
  }

  async open(id: string, known?: ConversationDetail): Promise<void> {
    // Left unused a moment ago and being deleted: opened only if Rust kept it.
    const discarding = this.#discarding.get(id);
    if (discarding) {
      await discarding;
      if (this.#deleted.has(id)) return;
    }
    void this.#leave(id);
    const isLatest = this.#detailGuard.begin();
    // A large conversation's answer can take much of a frame to read, and its chat items more
    // (built as it comes, `ChatSessions.prepare`): the chat is then mounted in the next frame,
    // not in the same one.
    const reading = afterLateFrame(
      ipc.getConversation(id).then((detail) => {
        this.#chats.prepare(detail);
        return detail;
      }),
    );
    const shown = known ?? (this.detail?.conversation.id === id ? this.detail : null);
    let early: ConversationDetail | null = null;
    if (shown === null) {
      // Nothing of it to show yet: the page shown stays until its messages come (in a few ms,
      // usually) or HOLD_MS pass, so it paints once, finished, not empty first and then again
      // (an empty frame in between held the newest messages back by ~50 ms).
      const stillWanted = this.#ui.beginNavigation();
      early = await Promise.race([reading.catch(() => null), sleep(HOLD_MS).then(() => null)]);
      if (!isLatest() || !stillWanted()) return;
    }
    this.#ui.go({ name: "conversation", id });
    this.detail = early ?? shown;
    if (early !== null) return;
    try {
      const detail = await reading;
      if (isLatest() && this.#ui.openId === id) this.detail = detail;
    } catch (err) {
      if (!isLatest() || this.#deleted.has(id)) return;
      this.#ui.report(err);
      if (err instanceof IpcError && err.kind === "not_found" && this.#ui.openId === id) {
        this.showWelcome();
        void this.refresh();
      }
    }
  }

  /**
   * Opens a search hit's conversation, at the message that matched when it was a message. A
   * message in a branch not shown is shown first: Rust switches to its branch (refused while the
   * conversation answers), and the conversation is read once, as it is now.
   */
  async openHit(hit: SearchHit): Promise<void> {
    if (hit.other_version && hit.message_id !== null) {
      const isLatest = this.#detailGuard.begin();
      const stillWanted = this.#ui.beginNavigation();
      try {
        const seq = await ipc.revealMessage(hit.conversation_id, hit.message_id);
        // The branch shown may be another model's answer, which now answers next (the list
        // says which).
        void this.refresh();
        const detail = await ipc.getConversation(hit.conversation_id);
        if (!isLatest() || !stillWanted()) return;
        this.reveal = { conversationId: hit.conversation_id, messageId: hit.message_id, seq };
        void this.#leave(hit.conversation_id);
        this.#ui.go({ name: "conversation", id: hit.conversation_id });
        this.detail = detail;
      } catch (err) {
        if (isLatest()) this.#ui.report(err);
      }
      return;
    }
    this.reveal =
      hit.message_id !== null && hit.seq !== null ? { conversationId: hit.conversation_id, messageId: hit.message_id, seq: hit.seq } : null;
    await this.open(hit.conversation_id);
  }

  // ------------------------------------------------------------ the list

  async refresh(): Promise<void> {
    const isLatest = this.#listGuard.begin();
    try {
      const list = await ipc.listConversations();
      if (isLatest()) this.list = this.#withoutDeleted(list);
    } catch (err) {
      if (isLatest()) this.#ui.report(err);
    }
  }

  #withoutDeleted(list: Conversation[]): Conversation[] {
    return this.#deleted.size === 0 ? list : list.filter((c) => !this.#deleted.has(c.id));
  }

  #replace(updated: Conversation): void {
    this.list = this.list.map((c) => (c.id === updated.id ? updated : c));
    if (this.detail?.conversation.id === updated.id) {
      this.detail = { ...this.detail, conversation: updated };
    }
  }

  // ------------------------------------------------------------ actions

  /**
   * Creates a conversation and opens it, unless the person went elsewhere meanwhile. `profile`
   * absent: it starts from the default profile, if there is one (else Settings' defaults). In a
   * project (`projectId`), it starts from the project's profile.
   */
  async create(profile?: ProfileChoice, projectId?: string): Promise<void> {
    const stillWanted = this.#ui.beginNavigation();
    try {
      const created = projectId === undefined ? await ipc.createConversation(null, profile) : await ipc.createConversationIn(projectId, null);
      this.list = [created, ...this.list.filter((c) => c.id !== created.id)];
      if (stillWanted()) {
        const leaving = this.#leave(created.id);
        void this.open(created.id, { conversation: created, messages: [], tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [] });
        await leaving;
      } else {
        // Never shown (the person went elsewhere first): not kept.
        await this.#discardIfUnused(created.id);
      }
    } catch (err) {
      this.#ui.report(err);
    }
    await this.refresh();
  }

  /** Asks for an exported conversation, keeps it as a new one and opens it; false when the person closed the dialog. */
  async importFile(): Promise<boolean> {
    const stillWanted = this.#ui.beginNavigation();
    try {
      const imported = await ipc.importConversation();
      if (imported === null) return false;
      this.list = [imported, ...this.list.filter((c) => c.id !== imported.id)];
      if (stillWanted()) void this.open(imported.id);
      return true;
    } catch (err) {
      this.#ui.report(err);
      return false;
    } finally {
      await this.refresh();
    }
  }

  /**
   * Saves conversation `id` as `format` where the person picks in the native save dialog;
   * the file's path, or null when they closed the dialog.
   * @throws IpcError, for the caller to show
   */
  exportAs(id: string, format: ExportFormat): Promise<string | null> {
    return ipc.exportConversation(id, format);
  }

  /**
   * At most `limit` hits for `query` across every conversation (or those of the project
   * `projectId`), newest first.
   * @throws IpcError, for the caller to show beside the query
   */
  search(query: string, limit: number, projectId: string | null = null): Promise<SearchHit[]> {
    return ipc.searchConversations(query, limit, projectId);
  }

  /**
   * Renames and shows the title Rust returned (it may be trimmed).
   * @throws IpcError, for the caller to show beside the title input
   */
  async rename(id: string, title: string): Promise<Conversation> {
    this.#saving.add(id);
    try {
      const renamed = await ipc.renameConversation(id, title);
      this.#replace(renamed);
      return renamed;
    } finally {
      this.#saving.delete(id);
      void this.refresh();
    }
  }

  /**
   * Sets what the model is told before the conversation and shows what Rust kept (trimmed).
   * @throws IpcError, for the caller to show beside the text
   */
  async setSystemPrompt(id: string, text: string): Promise<Conversation> {
    this.#saving.add(id);
    try {
      const updated = await ipc.setSystemPrompt(id, text);
      this.#replace(updated);
      return updated;
    } finally {
      this.#saving.delete(id);
    }
  }

  /**
   * Puts a conversation in or out of auto-approve, then shows it as Rust has it.
   * @throws IpcError
   */
  async setAutoApprove(id: string, on: boolean): Promise<void> {
    await ipc.setAutoApprove(id, on);
    await this.open(id);
    void this.refresh();
  }

  /**
   * Picks the model a conversation chats with and shows what Rust stored.
   * @throws IpcError
   */
  async setModel(id: string, provider: string | null, model: string | null): Promise<Conversation> {
    try {
      const updated = await ipc.setConversationModel(id, provider, model);
      this.#replace(updated);
      return updated;
    } finally {
      void this.refresh();
    }
  }

  /**
   * Puts a profile on a conversation (null: it follows none and keeps what it has) and shows
   * what Rust stored: its system prompt, model and tool switches are the profile's from the next
   * message (the caller reads the tools panel again).
   * @throws IpcError
   */
  async setProfile(id: string, profileId: string | null): Promise<Conversation> {
    try {
      const updated = await ipc.setConversationProfile(id, profileId);
      this.#replace(updated);
      return updated;
    } finally {
      void this.refresh();
    }
  }

  /**
   * Takes the conversation out of the list (and closes it) at once, with its chat session; puts
   * it back if Rust refuses.
   */
  async remove(id: string): Promise<void> {
    this.#deleted.add(id);
    this.#chats.forget(id);
    this.list = this.list.filter((c) => c.id !== id);
    if (this.#ui.openId === id) this.showWelcome();
    try {
      await ipc.deleteConversation(id);
    } catch (err) {
      // Not found: it is gone already (left unused, or deleted elsewhere), as asked.
      if (!(err instanceof IpcError && err.kind === "not_found")) {
        this.#deleted.delete(id);
        this.#ui.report(err);
      }
    }
    await this.refresh();
  }

  /** The tools panel's switches for one conversation (not loaded yet: call `load`). */
  tools(id: string): ConversationTools {
    return new ConversationTools(id, (err) => this.#ui.report(err));
  }
}
