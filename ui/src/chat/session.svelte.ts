// One open conversation as the chat shows it (`ChatSession`): a feed (run-feed.svelte.ts) whose
// items are first built from what was saved (items.ts) and then by its runs' events, with its
// older pages, where its branches part, its summaries and the comparison under way
// (comparison.svelte.ts). Sending, stopping, retrying,
// branching and answering approvals and result reviews go through ipc.ts. The live events are
// passed on, once applied, to whoever built the session (the canvas's files are kept in a store
// of their own). A tool card's MCP App is asked for here, once per call, and what the app asks of
// its server goes from here.

import * as ipc from "../lib/ipc";
import type { ApprovalAnswer, ReviewVerdict, RunEvent } from "../lib/run-events";
import type {
  JsonValue,
  Attachment,
  AttachmentRef,
  BranchPoint,
  CallControl,
  ComparedModel,
  ConversationDetail,
  McpAppView,
  ResultView,
  Summary,
} from "../lib/types";
import { Comparison, Lane } from "./comparison.svelte";
import { assistantIn, itemsFrom, type ChatItem } from "./items";
import type { McpAppCalls } from "./mcpAppBridge";
import { RunFeed, type FrameScheduler, type PendingApproval, type PendingReview, type ToolsGiven } from "./run-feed.svelte";

/** What the newest answer of `detail` was given when it was given a choice of tools (its record), else null. */
export function toolsGivenFrom(detail: Pick<ConversationDetail, "messages" | "offers">): ToolsGiven | null {
  let newest: string | undefined;
  for (const m of detail.messages) if (m.role === "assistant") newest = m.id;
  const offer = newest === undefined ? undefined : (detail.offers ?? []).find((o) => o.message_id === newest);
  return offer ? { offered: offer.offered, of: offer.of, why: offer.why } : null;
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

/** An approval to ask now: whose run waits for it, and the model that asks (null: the conversation's own run). */
export interface Asking {
  approval: PendingApproval;
  askedBy: string | null;
  feed: RunFeed;
}

/** A result to review now: whose run waits for it, and the model whose call it is (null: the conversation's own run). */
export interface Reviewing {
  review: PendingReview;
  /** how many more results wait after it, in the same run */
  more: number;
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
    scheduleFrame?: FrameScheduler,
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

  /** The result to review now: the run's own first, else the first of a compared model's that waits. */
  get reviewing(): Reviewing | null {
    const [review, ...more] = this.reviews;
    if (review) return { review, more: more.length, askedBy: null, feed: this };
    for (const lane of this.comparison?.lanes ?? []) {
      const [first, ...rest] = lane.reviews;
      if (first) return { review: first, more: rest.length, askedBy: lane.label, feed: lane };
    }
    return null;
  }

  /** Gives the person's word on the result reviewed now (`reviewing`): the run's own or a compared model's. */
  override async answerReview(verdict: ReviewVerdict): Promise<void> {
    const reviewing = this.reviewing;
    if (!reviewing) return;
    await (reviewing.feed === this ? super.answerReview(verdict) : reviewing.feed.answerReview(verdict));
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

  /** Reads what was saved again (something besides a run of this window's wrote there: a
   *  task's late result): now, or when the run under way ends. */
  readAgain(): void {
    if (this.running) {
      this.#reloadWhenDone = true;
      return;
    }
    this.#readKeepingPages(() => {});
  }

  /** Reads the conversation again, keeping the pages read before (what was scrolled back to is
   *  not taken away); `failed` when it cannot be read. One that runs meanwhile is read again
   *  when it ends. */
  #readKeepingPages(failed: () => void): void {
    const had = this.older;
    ipc.getConversation(this.conversationId).then(
      (detail) => {
        if (this.running) {
          this.#reloadWhenDone = true;
          return;
        }
        this.load(detail);
        if (this.older !== null && (had === null || had < this.older)) void this.loadUntil(had ?? 0);
      },
      (err: unknown) => {
        console.error("cannot read the conversation again", err);
        failed();
      },
    );
  }

  async controlCall(messageId: string, callId: string, control: CallControl): Promise<boolean> {
    return ipc.controlCall(messageId, callId, control);
  }

  protected override finished(): void {
    this.#onFinished();
    if (!this.#reloadWhenDone) return;
    this.#reloadWhenDone = false;
    this.#readKeepingPages(() => {
      this.comparison = null;
    });
  }
}
