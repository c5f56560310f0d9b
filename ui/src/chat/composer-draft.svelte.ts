// What the composer holds for one conversation until it is sent: the text, the files attached,
// why files were not, the models a comparison would ask and whether their list is folded. Kept
// by the window's chat sessions (one per conversation, while the window lives), so a message
// half written in one conversation is still there after a look at another; and told to Rust as
// it changes (all but the refusals and the fold), so it is there again after the app is closed
// and opened.

import type { Attachment, ComparedModel, Draft } from "../lib/types";

export class ComposerDraft {
  #text = $state("");
  #files = $state<Attachment[]>([]);
  #comparing = $state(false);
  #compared = $state<ComparedModel[]>([]);
  /** Why files the person chose, pasted or dropped were not attached. */
  refusals = $state<string[]>([]);
  /** While comparing: whether the list of models to compare is shown (the "N models ▾" button).
   *  Kept while the app runs, not told to Rust. */
  showCompared = $state(true);
  readonly #onChange: () => void;

  /** `onChange` hears of every change to what is kept (not the refusals). */
  constructor(onChange: () => void = () => {}) {
    this.#onChange = onChange;
  }

  get text(): string {
    return this.#text;
  }
  set text(value: string) {
    if (value === this.#text) return;
    this.#text = value;
    this.#onChange();
  }

  get files(): Attachment[] {
    return this.#files;
  }
  set files(value: Attachment[]) {
    this.#files = value;
    this.#onChange();
  }

  /** Compare is on: the message goes to the models checked in `compared`. */
  get comparing(): boolean {
    return this.#comparing;
  }
  set comparing(value: boolean) {
    if (value === this.#comparing) return;
    this.#comparing = value;
    this.#onChange();
  }

  get compared(): ComparedModel[] {
    return this.#compared;
  }
  set compared(value: ComparedModel[]) {
    this.#compared = value;
    this.#onChange();
  }

  /** Nothing written, attached, picked or folded: nothing to keep. */
  get empty(): boolean {
    return (
      this.text === "" &&
      this.files.length === 0 &&
      this.refusals.length === 0 &&
      !this.comparing &&
      this.compared.length === 0 &&
      this.showCompared
    );
  }

  /** What is kept of it, as Rust keeps it. */
  get saved(): Draft {
    return {
      text: this.#text,
      attachments: $state.snapshot(this.#files),
      comparing: this.#comparing,
      compared: $state.snapshot(this.#compared),
    };
  }

  /** Takes what was kept when the conversation was last left. Not a change itself. */
  restore(kept: Draft): void {
    this.#text = kept.text;
    this.#files = kept.attachments;
    this.#comparing = kept.comparing;
    this.#compared = kept.compared;
  }

  /** After a send: the box empties, and the next message goes to the answer picked (Compare off). */
  sent(): void {
    this.text = "";
    this.files = [];
    this.refusals = [];
    this.comparing = false;
  }
}
