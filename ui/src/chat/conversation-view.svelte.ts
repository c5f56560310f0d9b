// What the conversation page (ConversationView.svelte, which only shows it) knows and does: the
// open conversation and its chat session (kept by the window's store), the one side panel open
// at a time (the tools, the system prompt, or the canvas, whose chunk is loaded the first time it
// opens), what the conversation has cost and how full the model's window is, a search hit brought
// into view, export, copying the last answer, branches, deleting a turn, sending (and the images a
// model is not known to take), a comparison's Stop, renaming and deleting the conversation, and
// the rule an approval offers to make, and the results put to the person before the model reads
// them.
// Built by the component as it mounts, so its effects are the component's; it acts through the
// stores only, and reports failures through the UI store's toast.

import { tick, untrack } from "svelte";
import { IpcError } from "../lib/errors";
import type { ApprovalAnswer, ReviewVerdict } from "../lib/run-events";
import type { Attachment, CallControl, ComparedModel, ConversationDetail, ExportFormat, ResultView, Rule } from "../lib/types";
import type { Confirmed } from "../settings/policies.svelte";
import { getArtifacts, getChats, getConversations, getPolicies, getProviders, getSchedules, getServers, getSettings, getUi, getUsage } from "../app/context";
import { copyText } from "../shared/clipboard";
import { count, usd } from "../shared/money";
import { contextLabel, givenLabel } from "./context-use";
import type { ConversationTools } from "./conversation-tools.svelte";
import type { ChatSession, McpAppHost } from "./session.svelte";

/** The canvas's chunk, asked for once (again only if it failed): start-up never loads it. */
let canvasChunk: Promise<typeof import("../canvas/Canvas.svelte")> | null = null;
export function loadCanvas(): Promise<typeof import("../canvas/Canvas.svelte")> {
  canvasChunk ??= import("../canvas/Canvas.svelte").catch((err: unknown) => {
    canvasChunk = null;
    throw err;
  });
  return canvasChunk;
}

function counted(n: number, one: string, many: string): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** Images a model is not known to take, refused by Rust: the person may say it takes them. */
interface ImagesRefused {
  message: string;
  text: string;
  files: Attachment[];
  resolve: (sent: boolean) => void;
}

export class ConversationPage {
  readonly ui = getUi();
  readonly conversations = getConversations();
  readonly chats = getChats();
  readonly providers = getProviders();
  readonly servers = getServers();
  readonly settings = getSettings();
  readonly artifacts = getArtifacts();
  readonly usage = getUsage();
  readonly policies = getPolicies();
  readonly schedules = getSchedules();

  readonly conversation = $derived(this.conversations.current);
  readonly detail = $derived(
    this.conversations.detail && this.conversations.detail.conversation.id === this.ui.openId ? this.conversations.detail : null,
  );

  // The session lives in the window's store, not here: leaving this page mid-answer and
  // coming back finds the answer still streaming, with its Stop.
  session = $state<ChatSession | null>(null);
  /** The approval to ask: the run's own, or a compared model's (the first that waits). */
  readonly asking = $derived(this.session?.asking ?? null);
  /** The result to review: the run's own, or a compared model's (the first that waits). */
  readonly reviewing = $derived(this.session?.reviewing ?? null);
  /** What the composer holds for this conversation: the window keeps it while another is open. */
  readonly draft = $derived.by(() => {
    const id = this.ui.openId;
    return id ? untrack(() => this.chats.draftOf(id)) : undefined;
  });

  // The tools panel's switches, read again whenever another conversation opens or the panel
  // opens (servers may have started or stopped since).
  tools = $state<ConversationTools | null>(null);
  toolsOpen = $state(false);

  // Following another profile (or none) changes the prompt and the tool switches: the tools are
  // read again, an open prompt panel starts again from the new prompt, and a note says so.
  promptVersion = $state(0);
  profileNote = $state<{ conversationId: string; text: string } | null>(null);
  #profileNoteTimer: ReturnType<typeof setTimeout> | undefined;

  // One side panel at a time: the tools, the system prompt or the canvas.
  promptOpen = $state(false);

  // The canvas: its files are listed when the conversation is read (the header counts them);
  // a tool's result may open it (the artifacts store hears the run), and then it takes the
  // side. Opened by the person, it takes the focus, and gives it back to Files when it closes.
  readonly canvas = $derived(this.ui.openId ? this.artifacts.of(this.ui.openId) : null);
  focusCanvas = $state(false);
  filesButton = $state<HTMLButtonElement>();

  // What the conversation has cost: read when it is read, and again (by the stores) whenever an
  // answer of it is saved or a run of it ends. With no priced request, its tokens instead.
  readonly spent = $derived.by(() => {
    const total = this.ui.openId ? this.usage.totalOf(this.ui.openId) : null;
    if (!total || total.requests === 0) return null;
    const priced = total.requests > total.unpriced;
    const lines = [
      priced
        ? `This conversation has cost ${usd(total.cost_pico)} so far.`
        : "No request in this conversation had a price, so only its tokens are counted.",
      `${counted(total.requests, "request", "requests")} · ${count(total.input_tokens)} tokens in · ${count(total.output_tokens)} tokens out`,
    ];
    if (total.unpriced > 0) {
      lines.push(
        `${counted(total.unpriced, "request", "requests")} had no price: ${total.unpriced === 1 ? "its" : "their"} tokens are counted, not ${total.unpriced === 1 ? "its" : "their"} cost (give a model a price in Providers › Prices).`,
      );
    }
    if (this.tools?.tools) {
      lines.push(
        this.tools.tokens > 0
          ? `The tools offered now add about ${count(this.tools.tokens)} tokens to every request.`
          : "No tool is offered now, so no tool definitions go with a request.",
      );
    }
    return {
      label: priced ? usd(total.cost_pico) : `${count(total.input_tokens + total.output_tokens)} tokens`,
      title: lines.join("\n"),
    };
  });

  // How full the model's window is: what the model was last given.
  readonly fill = $derived(this.session?.context ? contextLabel(this.session.context) : null);
  /** what of its project's files and its memory the model was last given, if anything */
  readonly given = $derived(this.session?.context ? givenLabel(this.session.context) : null);

  // A search hit opened here: older pages are read until its message is shown, then the list
  // brings it into view (and does not follow the end meanwhile).
  revealing = $state(false);
  revealId = $state<string | null>(null);

  // Export: the format is chosen in the header's menu, where to save in the native dialog (Rust).
  saved = $state<string | null>(null);
  #savedTimer: ReturnType<typeof setTimeout> | undefined;

  // Branches: the message of yours being edited (Up in an empty composer picks the last one),
  // and switching, which brings the switched point into view.
  editingMessage = $state<string | null>(null);

  // Deleting a question and its answer asks first, in the window's own dialog.
  deletingTurn = $state<string | null>(null);

  imagesRefused = $state<ImagesRefused | null>(null);

  // Renaming the conversation in the header, and deleting it.
  editing = $state(false);
  draftTitle = $state("");
  titleError = $state<string | null>(null);
  saving = $state(false);
  confirmingDelete = $state(false);
  titleInput = $state<HTMLInputElement>();
  /** The header's "⋯" button (Rename is in its menu): the focus goes back to it after renaming. */
  menuButton = $state<HTMLButtonElement>();

  constructor() {
    // A read of the conversation (re)opens its session. A change of its own fields only (a
    // rename, a model, a profile) swaps `detail.conversation` and keeps the read's messages,
    // older than what the session shows since: reopening from them would drop what was said
    // in this window since the read (all of it, in a conversation opened empty).
    let opened: ConversationDetail["messages"] | null = null;
    $effect.pre(() => {
      const loaded = this.detail;
      if (!loaded || loaded.messages === opened) return;
      opened = loaded.messages;
      untrack(() => {
        this.session = this.chats.open(loaded);
      });
    });

    $effect(() => {
      const id = this.ui.openId;
      if (!id) return;
      untrack(() => {
        if (this.tools?.conversationId === id) return;
        this.tools = this.conversations.tools(id);
        void this.tools.load();
      });
    });

    // Servers start, crash and change their tools on their own: an open panel follows what
    // Rust pushes (the servers store's list) instead of going stale. The tool cards read that
    // list too (a failed call's server may want a sign-in): the store listens from the start,
    // and the list is read here only if it never came (the watch failed, or the stores were not
    // started).
    $effect(() => {
      if (untrack(() => this.servers.list) === null) void this.servers.load();
    });
    $effect(() => {
      void this.servers.list;
      if (!untrack(() => this.toolsOpen)) return;
      untrack(() => void this.tools?.load());
    });

    $effect(() => {
      const id = this.detail?.conversation.id;
      if (id) untrack(() => void this.artifacts.load(id));
    });

    $effect(() => {
      const id = this.detail?.conversation.id;
      if (id) untrack(() => void this.usage.readTotal(id));
    });

    $effect(() => {
      if (!this.canvas?.open) return;
      untrack(() => {
        this.toolsOpen = false;
        this.promptOpen = false;
      });
    });

    $effect(() => {
      const want = this.conversations.reveal;
      const open = this.session;
      if (!want || !open || want.conversationId !== open.conversationId) return;
      untrack(() => {
        this.conversations.reveal = null;
        this.revealing = true;
        this.revealId = null;
        open
          .loadUntil(want.seq)
          .then(() => (this.revealId = open.itemShowing(want.messageId)))
          .catch((err: unknown) => this.ui.report(err))
          .finally(() => (this.revealing = false));
      });
    });
  }

  toggleTools = (): void => {
    this.toolsOpen = !this.toolsOpen;
    if (this.toolsOpen) {
      this.promptOpen = false;
      this.closeCanvas(false);
      void this.tools?.load();
    }
  };

  profileChanged = (text: string): void => {
    const id = this.ui.openId;
    if (!id) return;
    void this.tools?.load();
    this.promptVersion++;
    this.profileNote = { conversationId: id, text };
    clearTimeout(this.#profileNoteTimer);
    this.#profileNoteTimer = setTimeout(() => (this.profileNote = null), 8000);
  };

  togglePrompt = (): void => {
    this.promptOpen = !this.promptOpen;
    if (this.promptOpen) {
      this.toolsOpen = false;
      this.closeCanvas(false);
      if (this.settings.current === null) void this.settings.load();
    }
  };

  openCanvas = (sha256: string | null = null): void => {
    const id = this.ui.openId;
    if (!id) return;
    this.focusCanvas = true;
    this.artifacts.open(id, sha256);
  };

  closeCanvas = (refocus: boolean): void => {
    const id = this.ui.openId;
    if (!id || !this.artifacts.of(id).open) return;
    this.artifacts.close(id);
    this.focusCanvas = false;
    if (refocus) this.filesButton?.focus();
  };

  toggleCanvas = (): void => {
    if (this.canvas?.open) this.closeCanvas(false);
    else this.openCanvas();
  };

  exportAs = async (format: ExportFormat): Promise<void> => {
    if (!this.conversation) return;
    try {
      const path = await this.conversations.exportAs(this.conversation.id, format);
      if (path === null) return;
      this.saved = path;
      clearTimeout(this.#savedTimer);
      this.#savedTimer = setTimeout(() => (this.saved = null), 6000);
    } catch (err) {
      this.ui.report(err);
    }
  };

  /** Ctrl/Cmd+Shift+C: the last answer's text, as Markdown, to the clipboard. */
  onWindowKeydown = (event: KeyboardEvent): void => {
    if (!(event.ctrlKey || event.metaKey) || !event.shiftKey || event.altKey || event.key.toLowerCase() !== "c") return;
    const last = [...(this.session?.items ?? [])].reverse().find((i) => i.kind === "assistant" && i.text !== "");
    if (!last || last.kind !== "assistant") return;
    event.preventDefault();
    copyText(last.text).catch((err: unknown) => this.ui.report(err));
  };

  /** Opens the Schedules page's form with this conversation's last message of yours and its
   *  profile: "run this every morning". */
  scheduleThis = (): void => {
    const items = this.session?.items ?? [];
    const last = [...items].reverse().find((i) => i.kind === "user");
    this.schedules.startFrom({
      prompt: last?.kind === "user" ? last.text : "",
      profile: this.conversation?.profile_id ?? null,
    });
  };

  editLast = (): void => {
    const items = this.session?.items ?? [];
    for (let i = items.length - 1; i >= 0; i--) {
      if (items[i].kind === "user") {
        this.editingMessage = items[i].id;
        return;
      }
    }
  };

  switchBranch = (messageId: string, position: number): void => {
    const open = this.session;
    if (!open) return;
    open.switchBranch(messageId, position).then(
      async (shown) => {
        void this.artifacts.load(open.conversationId);
        // At a comparison, the branch picked is its model's: Rust made that model the
        // conversation's, which the model picker shows.
        void this.conversations.refresh();
        this.revealId = null;
        await tick();
        this.revealId = shown;
      },
      (err: unknown) => this.ui.report(err),
    );
  };

  confirmDeleteTurn = (): void => {
    const id = this.deletingTurn;
    this.deletingTurn = null;
    const open = this.session;
    if (id && open) {
      open.deleteTurn(id).then(
        () => void this.artifacts.load(open.conversationId),
        (err: unknown) => this.ui.report(err),
      );
    }
  };

  /** Sends `text` with `files`; whether it started (a refusal is shown, the box kept). */
  send = async (text: string, files: Attachment[]): Promise<boolean> => {
    if (!this.session) return false;
    try {
      await this.session.send(text, files);
      return true;
    } catch (err) {
      // Rust refused the images for a model it does not know to take them: the person may
      // know better, and say so here (kept for that model) before it is sent again.
      if (err instanceof IpcError && err.field === "attachments" && /not known to take images/.test(err.message)) {
        return new Promise<boolean>((resolve) => (this.imagesRefused = { message: err.message, text, files, resolve }));
      }
      this.ui.report(err);
      return false;
    }
  };

  /** Asks `models` the question `text` with `files` at once; whether they were asked (a refusal is shown, the box kept). */
  compare = async (text: string, files: Attachment[], models: ComparedModel[]): Promise<boolean> => {
    if (!this.session) return false;
    try {
      await this.session.compare(text, files, models);
      return true;
    } catch (err) {
      this.ui.report(err);
      return false;
    }
  };

  stopLane = (index: number): void => {
    this.session?.stopLane(index).catch((err: unknown) => this.ui.report(err));
  };

  sendWithImages = async (): Promise<void> => {
    const refused = this.imagesRefused;
    this.imagesRefused = null;
    if (!refused || !this.conversation) return;
    try {
      await this.providers.allowImagesIn(this.conversation.id);
      await this.session?.send(refused.text, refused.files);
      refused.resolve(true);
    } catch (err) {
      this.ui.report(err);
      refused.resolve(false);
    }
  };

  keepImages = (): void => {
    this.imagesRefused?.resolve(false);
    this.imagesRefused = null;
  };

  retry = (): void => {
    this.session?.send(null).catch((err: unknown) => this.ui.report(err));
  };

  controlCall = async (messageId: string, callId: string, control: CallControl): Promise<boolean> => {
    return (await this.session?.controlCall(messageId, callId, control)) ?? false;
  };

  retryCall = (messageId: string, callId: string): void => {
    this.session?.retryCall(messageId, callId).catch((err: unknown) => this.ui.report(err));
  };

  loadOlder = async (): Promise<void> => {
    try {
      await this.session?.loadOlder();
    } catch (err) {
      this.ui.report(err);
    }
  };

  showWhole = async (messageId: string, callId: string): Promise<void> => {
    try {
      await this.session?.showWholeResult(messageId, callId);
    } catch (err) {
      this.ui.report(err);
    }
  };

  /** Sends `text` with `files` in place of the message of yours `messageId`. */
  edit = (messageId: string, text: string, files: Attachment[]): void => {
    this.session?.editAndResend(messageId, text, files).catch((err: unknown) => this.ui.report(err));
  };

  regenerate = (messageId: string): void => {
    this.session?.regenerate(messageId).catch((err: unknown) => this.ui.report(err));
  };

  /**
   * Has the server that returned a link read it; what Rust keeps joins the canvas, which opens at
   * the first of it. Rejects with Rust's words, which the link's card shows.
   */
  readLink = async (messageId: string, callId: string, uri: string): Promise<void> => {
    const open = this.session;
    if (!open) return;
    const read = await this.artifacts.readLink(open.conversationId, messageId, callId, uri);
    open.addResultFiles(messageId, callId, read.map((a) => a.file));
    if (read.length > 0 && this.ui.openId === open.conversationId) this.openCanvas(read[0].file.sha256);
  };

  /** What the tool cards of `open` need for their calls' MCP Apps. */
  appHostOf(open: ChatSession): (messageId: string, callId: string) => McpAppHost {
    return (messageId, callId) => open.appHost(messageId, callId, this.ui.status?.version ?? "");
  }

  loadView = (messageId: string, callId: string): Promise<ResultView> => {
    if (!this.session) return Promise.reject(new Error("The conversation is not open."));
    return this.session.resultView(messageId, callId);
  };

  stop = (): void => {
    this.session?.stop().catch((err: unknown) => this.ui.report(err));
  };

  /** "Always allow calls like this…": the rule an approval offers, added to the policy (Rust
   *  confirms it in its own dialog first). @throws IpcError when Rust refuses it */
  addRule = (rule: Rule): Promise<Confirmed> => this.policies.addRule(rule);

  /** Answers the approval asked now. */
  answer = (answers: ApprovalAnswer[]): void => {
    this.session?.answer(answers).catch((err: unknown) => this.ui.report(err));
  };

  /** Gives the person's word on the result reviewed now. */
  answerReview = (verdict: ReviewVerdict): void => {
    this.session?.answerReview(verdict).catch((err: unknown) => this.ui.report(err));
  };

  toggleAutoApprove = async (): Promise<void> => {
    if (!this.conversation) return;
    try {
      await this.conversations.setAutoApprove(this.conversation.id, !this.conversation.auto_approve);
    } catch (err) {
      this.ui.report(err);
    }
  };

  startRename = async (): Promise<void> => {
    if (!this.conversation) return;
    this.draftTitle = this.conversation.title;
    this.titleError = null;
    this.editing = true;
    await tick();
    this.titleInput?.focus();
    this.titleInput?.select();
  };

  stopRename = async (): Promise<void> => {
    this.editing = false;
    this.titleError = null;
    await tick();
    this.menuButton?.focus();
  };

  saveRename = async (): Promise<void> => {
    if (!this.conversation || this.saving) return;
    if (this.draftTitle.trim() === "") {
      this.titleError = "Enter a title.";
      this.titleInput?.focus();
      return;
    }
    this.saving = true;
    try {
      await this.conversations.rename(this.conversation.id, this.draftTitle);
      await this.stopRename();
    } catch (err) {
      if (err instanceof IpcError && err.field === "title") {
        this.titleError = err.message;
        this.titleInput?.focus();
      } else {
        this.ui.report(err);
      }
    } finally {
      this.saving = false;
    }
  };

  onTitleKeydown = (event: KeyboardEvent): void => {
    if (event.key === "Enter") {
      event.preventDefault();
      void this.saveRename();
    } else if (event.key === "Escape") {
      event.preventDefault();
      void this.stopRename();
    }
  };

  confirmDelete = (): void => {
    const id = this.conversation?.id;
    this.confirmingDelete = false;
    if (id) void this.conversations.remove(id);
  };
}
