// The canvas's state (issue 17, seed 002), by conversation: the files its tools produced (read
// from Rust with `listArtifacts`, then added to live from the runs there), whether its canvas is
// open and which file it shows. Hears every run event of every conversation (ChatSessions passes
// them on): a tool message saved with files adds them, a `tool_finished` adds any not seen yet
// and, when the result asked for it (`open_canvas`), opens the canvas at that file. Bytes are
// read and saved through ipc.ts only when the canvas asks; none are kept here. A link a tool's
// result returned is read here too (`readLink`): what Rust keeps of it joins the list. Knows
// nothing of the DOM or of how a file is shown.

import * as ipc from "../lib/ipc";
import type { RunEvent } from "../lib/run-events";
import { toIpcError } from "../lib/errors";
import { LatestOnly } from "../shared/latest";
import type { ConversationArtifact } from "../lib/types";

/** One conversation's canvas. */
export interface Canvas {
  /** The files its tools produced, oldest first, each once per tool message. */
  files: CanvasFile[];
  /** The list was read from Rust at least once. */
  loaded: boolean;
  /** Why the list could not be read, the last time it was asked for (the canvas says it). */
  error: string | null;
  open: boolean;
  /** The SHA-256 of the file shown; null: none chosen (the newest is shown). */
  selected: string | null;
}

/**
 * A file of the canvas. `message_id` is "" while the tool message that carries it is not
 * known yet (heard in a `tool_finished` before its `message_saved`).
 */
export interface CanvasFile extends ConversationArtifact {
  /** 0 for a file Rust listed; else when it was heard (a list read meanwhile keeps it). */
  heard: number;
}

const CLOSED: Canvas = Object.freeze({ files: [], loaded: false, error: null, open: false, selected: null }) as Canvas;

/** What the run under way in a conversation has said of its answer's calls so far. */
interface AnswerCalls {
  /** call id → the tool's name as the model called it */
  tools: Map<string, string>;
  /** call id → the tool message saved for it */
  saved: Map<string, string>;
}

/** One key for a file of one tool message. */
export function canvasFileKey(file: Pick<CanvasFile, "message_id" | "call_id" | "file">): string {
  return `${file.message_id}\u0000${file.call_id}\u0000${file.file.sha256}`;
}

export class ArtifactsStore {
  /** By conversation id; a conversation not here has a closed, empty canvas. */
  #canvases = $state<Record<string, Canvas>>({});
  /** By conversation id: the calls of the answer its run is on. */
  readonly #answers = new Map<string, AnswerCalls>();
  /** Counts the files heard live, so a list read while they came keeps them. */
  #heard = 0;
  /** By conversation id: only the list asked for last is applied. */
  readonly #reads = new Map<string, LatestOnly>();

  /** The canvas of `conversationId` (never changes anything: safe in a `$derived`). */
  of(conversationId: string): Canvas {
    return this.#canvases[conversationId] ?? CLOSED;
  }

  /** The file the canvas of `conversationId` shows: the one chosen, else the newest; null when it has none. */
  shown(conversationId: string): CanvasFile | null {
    const canvas = this.of(conversationId);
    for (let i = canvas.files.length - 1; canvas.selected !== null && i >= 0; i--) {
      if (canvas.files[i].file.sha256 === canvas.selected) return canvas.files[i];
    }
    return canvas.files.at(-1) ?? null;
  }

  #canvas(conversationId: string): Canvas {
    this.#canvases[conversationId] ??= { files: [], loaded: false, error: null, open: false, selected: null };
    return this.#canvases[conversationId];
  }

  /**
   * Reads the list again from Rust (the conversation opened, a branch was switched). Files heard
   * while it was read stay; on a failure the list stays as it was and the canvas says why.
   */
  async load(conversationId: string): Promise<void> {
    const since = this.#heard;
    let guard = this.#reads.get(conversationId);
    if (!guard) {
      guard = new LatestOnly();
      this.#reads.set(conversationId, guard);
    }
    const isLatest = guard.begin();
    let listed: ConversationArtifact[];
    try {
      listed = await ipc.listArtifacts(conversationId);
    } catch (err) {
      if (isLatest()) this.#canvas(conversationId).error = toIpcError(err).message;
      return;
    }
    if (!isLatest()) return;
    const canvas = this.#canvas(conversationId);
    canvas.error = null;
    const files: CanvasFile[] = listed.map((a) => ({ ...a, heard: 0 }));
    const keys = new Set(files.map(canvasFileKey));
    const calls = new Set(files.map((f) => `${f.call_id}\u0000${f.file.sha256}`));
    for (const file of canvas.files) {
      if (file.heard <= since || keys.has(canvasFileKey(file))) continue;
      // A file heard before its tool message, now listed with it.
      if (file.message_id === "" && calls.has(`${file.call_id}\u0000${file.file.sha256}`)) continue;
      files.push(file);
    }
    canvas.files = files;
    canvas.loaded = true;
  }

  /** Opens the canvas of `conversationId`, at the file `sha256` if given; reads its list the first time. */
  open(conversationId: string, sha256: string | null = null): void {
    const canvas = this.#canvas(conversationId);
    canvas.open = true;
    if (sha256 !== null) canvas.selected = sha256;
    if (!canvas.loaded) void this.load(conversationId);
  }

  close(conversationId: string): void {
    if (this.#canvases[conversationId]) this.#canvases[conversationId].open = false;
  }

  toggle(conversationId: string): void {
    if (this.of(conversationId).open) this.close(conversationId);
    else this.open(conversationId);
  }

  select(conversationId: string, sha256: string): void {
    this.#canvas(conversationId).selected = sha256;
  }

  /** The bytes of a file, as base64. Rejects (with Rust's words) above 20 MB. */
  read(conversationId: string, sha256: string): Promise<string> {
    return ipc.readArtifact(conversationId, sha256);
  }

  /** Rust's Save As dialog for a file; the path written, or null when the person closed it. Rejects with Rust's words. */
  save(conversationId: string, sha256: string): Promise<string | null> {
    return ipc.saveArtifact(conversationId, sha256);
  }

  /**
   * Reads the link `uri` that call `callId` of the answer `messageId` returned, through the
   * server that returned it; Rust keeps what it reads as files of that call's result. They join
   * the canvas's list at once, then the list is read again. Resolves with those files (the
   * first is the one to open); rejects with Rust's words.
   */
  async readLink(conversationId: string, messageId: string, callId: string, uri: string): Promise<ConversationArtifact[]> {
    const read = await ipc.readToolLink(conversationId, messageId, callId, uri);
    for (const artifact of read) this.#add(conversationId, artifact);
    await this.load(conversationId);
    return read;
  }

  /** One event of a run in `conversationId` (from its chat session). */
  heard(conversationId: string, event: RunEvent): void {
    switch (event.type) {
      case "answer_started":
        this.#answers.set(conversationId, { tools: new Map(), saved: new Map() });
        break;
      case "tool_call_proposed":
        this.#answer(conversationId).tools.set(event.call.call_id, event.call.wire_name);
        break;
      case "message_saved": {
        const m = event.message;
        if (m.role !== "tool" || !m.tool_call_id) break;
        this.#answer(conversationId).saved.set(m.tool_call_id, m.id);
        for (const file of m.attachments) {
          this.#add(conversationId, { file, message_id: m.id, call_id: m.tool_call_id, tool: m.name ?? "", created_at: m.created_at });
        }
        break;
      }
      case "tool_finished": {
        const answer = this.#answer(conversationId);
        const messageId = answer.saved.get(event.call_id) ?? "";
        const tool = answer.tools.get(event.call_id) ?? "";
        for (const file of event.artifacts ?? []) {
          this.#add(conversationId, { file, message_id: messageId, call_id: event.call_id, tool, created_at: Date.now() });
        }
        if (event.open_canvas) this.open(conversationId, event.open_canvas);
        break;
      }
      case "run_finished":
        this.#answers.delete(conversationId);
        // What the run changed (a branch started, an edit) may show other files: read them again.
        if (this.#canvases[conversationId]?.loaded) void this.load(conversationId);
        break;
      default:
        break;
    }
  }

  #answer(conversationId: string): AnswerCalls {
    let answer = this.#answers.get(conversationId);
    if (!answer) {
      answer = { tools: new Map(), saved: new Map() };
      this.#answers.set(conversationId, answer);
    }
    return answer;
  }

  /** Adds a file heard live, unless it is there already (a replayed run, a result heard twice). */
  #add(conversationId: string, artifact: ConversationArtifact): void {
    const canvas = this.#canvas(conversationId);
    const sha = artifact.file.sha256;
    const same = (f: CanvasFile) => f.file.sha256 === sha && f.call_id === artifact.call_id;
    if (artifact.message_id !== "") {
      if (canvas.files.some((f) => same(f) && f.message_id === artifact.message_id)) return;
      // Heard in its call's `tool_finished` first: now its tool message is known.
      const waiting = canvas.files.find((f) => same(f) && f.message_id === "");
      if (waiting) {
        waiting.message_id = artifact.message_id;
        waiting.created_at = artifact.created_at;
        if (artifact.tool !== "") waiting.tool = artifact.tool;
        return;
      }
    } else if (canvas.files.some((f) => same(f) && f.message_id === "")) {
      return;
    }
    canvas.files.push({ ...artifact, heard: ++this.#heard });
  }
}
