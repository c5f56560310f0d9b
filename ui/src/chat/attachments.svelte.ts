// Files into a message (issue 17): the native picker, a pasted image, and files dropped on the
// window. The page never names a path: Rust opens the picker and reads dropped files, and a
// paste hands over bytes the page already has. This store hears what became of each (kept, or
// refused with the reason) and keeps, until the open composer takes them, the files dropped and
// the reasons for those refused. An MCP bundle dropped goes to the Servers page's consent screen
// instead (Rust read and checked it, as if chosen with the button).

import * as ipc from "../lib/ipc";
import { errorText } from "../lib/errors";
import type { Attached, Attachment, DropEvent, OffersOf, PromptUse } from "../lib/types";
import type { UiStore } from "../app/ui.svelte";

/** An MCP bundle dropped on the window, as Rust tells of it. */
export type BundleDrop = Extract<DropEvent, { type: "bundle" | "bundle_refused" }>;

export class AttachmentsStore implements PickerStore {
  /** Something is being dragged over the window. */
  over = $state(false);
  /** Files dropped on the window that the composer has not taken yet. */
  dropped = $state<Attachment[]>([]);
  /** Why files dropped were refused, until the composer takes them. */
  droppedRefusals = $state<string[]>([]);
  readonly #ui: UiStore;
  readonly #onBundle: (event: BundleDrop) => void;

  /** `onBundle` is given each MCP bundle dropped (offered for install, or refused). */
  constructor(ui: UiStore, onBundle: (event: BundleDrop) => void) {
    this.#ui = ui;
    this.#onBundle = onBundle;
  }

  /** Listens for files dragged over the window (once, at start). */
  async watchDrops(): Promise<void> {
    try {
      await ipc.watchDroppedFiles((event) => this.heard(event));
    } catch (err) {
      console.error("cannot listen for dropped files", err);
    }
  }

  /** What Rust says of files dragged over the window. */
  heard(event: DropEvent): void {
    if (event.type === "over") {
      this.over = true;
    } else if (event.type === "left") {
      this.over = false;
    } else if (event.type === "bundle" || event.type === "bundle_refused") {
      this.over = false;
      this.#onBundle(event);
    } else {
      this.over = false;
      this.dropped = [...this.dropped, ...event.attached.kept];
      this.droppedRefusals = [...this.droppedRefusals, ...event.attached.refused];
    }
  }

  /** The files dropped and the reasons for those refused, handed over once. */
  takeDropped(): { kept: Attachment[]; refused: string[] } {
    const taken = { kept: this.dropped, refused: this.droppedRefusals };
    this.dropped = [];
    this.droppedRefusals = [];
    return taken;
  }

  /** Rust's native picker; what was kept and why any other was not (nothing if it failed). */
  async choose(): Promise<{ kept: Attachment[]; refused: string[] }> {
    try {
      return await ipc.chooseAttachments();
    } catch (err) {
      this.#ui.report(err);
      return { kept: [], refused: [] };
    }
  }

  // ------------------------------------------------------------ the "/" and "@" pickers

  /** Every running server's resources and prompts; none (and the error shown) if it failed. */
  async offers(): Promise<OffersOf[]> {
    try {
      return await ipc.listRunningOffers();
    } catch (err) {
      this.#ui.report(err);
      return [];
    }
  }

  /** A resource kept as files. Rejects with the server's words. */
  attachResource(server: string, uri: string, name: string | null): Promise<Attached> {
    return ipc.attachResource(server, uri, name);
  }

  /** A prompt made ready for the composer. Rejects with the server's words. */
  usePrompt(server: string, prompt: string, args: Record<string, string>): Promise<PromptUse> {
    return ipc.usePrompt(server, prompt, args);
  }

  /** What the server suggests for an argument; nothing if it cannot say. */
  async complete(
    server: string,
    of: { prompt: string } | { template: string },
    argument: string,
    value: string,
    context: Record<string, string>,
  ): Promise<string[]> {
    try {
      return await ipc.completeArgument(
        server,
        "prompt" in of ? of.prompt : null,
        "template" in of ? of.template : null,
        argument,
        value,
        context,
      );
    } catch {
      return [];
    }
  }

  /** Keeps a pasted file; the file, or why it was refused. */
  async paste(file: File): Promise<Attachment | string> {
    try {
      return await ipc.attachPasted(file.name || pastedName(file.type), await base64Of(file));
    } catch (err) {
      return errorText(err);
    }
  }
}

export interface PickerStore {
  offers(): Promise<OffersOf[]>;
  attachResource(server: string, uri: string, name: string | null): Promise<Attached>;
  usePrompt(server: string, prompt: string, args: Record<string, string>): Promise<PromptUse>;
  complete(
    server: string,
    of: { prompt: string } | { template: string },
    argument: string,
    value: string,
    context: Record<string, string>,
  ): Promise<string[]>;
}

/** A name for a pasted image, which has none of its own. */
function pastedName(mime: string): string {
  const extension = mime.split("/")[1]?.replace("jpeg", "jpg") || "bin";
  return `pasted.${extension}`;
}

/** A file's bytes as base64. */
function base64Of(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error ?? new Error("the pasted file could not be read"));
    reader.readAsDataURL(file);
  });
}
