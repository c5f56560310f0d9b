// What the composer holds for one conversation until it is sent: the text, the files attached,
// why files were not, and the models a comparison would ask. Kept by the window's chat sessions
// (one per conversation, while the window lives), so a message half written in one conversation
// is still there after a look at another.

import type { Attachment, ComparedModel } from "./types";

export class ComposerDraft {
  text = $state("");
  files = $state<Attachment[]>([]);
  /** Why files the person chose, pasted or dropped were not attached. */
  refusals = $state<string[]>([]);
  /** Compare is on: the message goes to the models checked in `compared`. */
  comparing = $state(false);
  compared = $state<ComparedModel[]>([]);

  /** Nothing written, attached or picked: nothing to keep. */
  get empty(): boolean {
    return this.text === "" && this.files.length === 0 && this.refusals.length === 0 && !this.comparing && this.compared.length === 0;
  }

  /** After a send: the box empties, and the next message goes to the answer picked (Compare off). */
  sent(): void {
    this.text = "";
    this.files = [];
    this.refusals = [];
    this.comparing = false;
  }
}
