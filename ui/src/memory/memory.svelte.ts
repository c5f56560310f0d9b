// Memory (issue 62): the facts kept across conversations, every memory's, as Rust lists them
// (newest first, each with the conversation it came from). Adds one the person writes, edits
// and deletes one; after each change the list is read again. Adding and editing reject, for the
// page to show a refusal of the words (blank, too long) beside the field and anything else in the
// toast; a failed delete goes to the toast.

import * as ipc from "../lib/ipc";
import { LatestOnly } from "../shared/latest";
import type { Memory } from "../lib/types";
import type { UiStore } from "../app/ui.svelte";

export class MemoryStore {
  /** every fact, newest first; null until first read */
  list = $state.raw<Memory[] | null>(null);

  readonly #ui: UiStore;
  readonly #guard = new LatestOnly();

  constructor(ui: UiStore) {
    this.#ui = ui;
  }

  /** The facts of one memory: a project's (its id), or the person's own (null). */
  of(projectId: string | null): Memory[] {
    return (this.list ?? []).filter((m) => m.project_id === projectId);
  }

  async load(): Promise<void> {
    const isLatest = this.#guard.begin();
    try {
      const list = await ipc.listMemories();
      if (isLatest()) this.list = list;
    } catch (err) {
      if (!isLatest()) return;
      this.list ??= [];
      this.#ui.report(err);
    }
  }

  /** @throws IpcError on the words (field "text") */
  async add(projectId: string | null, text: string): Promise<void> {
    try {
      await ipc.addMemory(projectId, text);
    } finally {
      await this.load();
    }
  }

  /** @throws IpcError on the words (field "text") */
  async edit(id: string, text: string): Promise<void> {
    try {
      await ipc.updateMemory(id, text);
    } finally {
      await this.load();
    }
  }

  async remove(id: string): Promise<void> {
    try {
      await ipc.deleteMemory(id);
    } catch (err) {
      this.#ui.report(err);
    }
    await this.load();
  }
}
