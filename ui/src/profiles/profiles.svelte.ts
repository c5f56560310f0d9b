// The profiles (issue 18): each a name, a system prompt, a default model, a tool set and the
// loop's limits, kept by Rust. Lists them (by name), creates, edits, copies and deletes one,
// chooses the default (the one new conversations start from), and exports or imports one through
// Rust's native file dialogs. Putting a profile on a conversation is the conversations store's
// (`setProfile`), as is starting a conversation from one (`create`).
//
// After every mutation the list is read again and only the latest-issued read is applied
// (`LatestOnly`). Deleting a profile reads the conversations again too: those that followed it
// follow none now. Failures of the list's own actions go to the UI store's toast; the form's
// save rejects, for the form to show Rust's refusal beside the field it names.

import * as ipc from "../lib/ipc";
import { LatestOnly } from "../shared/latest";
import type { ImportedProfile, Profile, ProfileFields } from "../lib/types";
import type { ConversationsStore } from "../chat/conversations.svelte";
import type { UiStore } from "../app/ui.svelte";

export class ProfilesStore {
  /** every profile, by name; null until first read */
  list = $state.raw<Profile[] | null>(null);

  readonly #ui: UiStore;
  readonly #conversations: ConversationsStore;
  readonly #guard = new LatestOnly();

  constructor(ui: UiStore, conversations: ConversationsStore) {
    this.#ui = ui;
    this.#conversations = conversations;
  }

  // ------------------------------------------------------------ derived

  /** The profiles as last read (none while not read yet). */
  get all(): Profile[] {
    return this.list ?? [];
  }

  /** The profile new conversations start from, if one is. */
  get defaultProfile(): Profile | null {
    return this.all.find((p) => p.is_default) ?? null;
  }

  byId(id: string | null | undefined): Profile | undefined {
    return id ? this.all.find((p) => p.id === id) : undefined;
  }

  // ------------------------------------------------------------ loading

  async load(): Promise<void> {
    const isLatest = this.#guard.begin();
    try {
      const list = await ipc.listProfiles();
      if (isLatest()) this.list = list;
    } catch (err) {
      if (!isLatest()) return;
      this.list ??= [];
      this.#ui.report(err);
    }
  }

  // ------------------------------------------------------------ the form's actions

  /**
   * @throws IpcError, whose `field` names the field at fault (a taken name: kind "conflict" on "name")
   */
  async create(name: string, fields: ProfileFields): Promise<Profile> {
    try {
      return await ipc.createProfile(name, fields);
    } finally {
      await this.load();
    }
  }

  /**
   * @throws IpcError, as `create`
   */
  async update(id: string, name: string, fields: ProfileFields): Promise<Profile> {
    try {
      return await ipc.updateProfile(id, name, fields);
    } finally {
      await this.load();
    }
  }

  // ------------------------------------------------------------ the list's actions

  /** Runs one action, reports a failure in the toast (resolving null), then reads the list again. */
  async #act<T>(action: () => Promise<T>): Promise<T | null> {
    try {
      return await action();
    } catch (err) {
      this.#ui.report(err);
      return null;
    } finally {
      await this.load();
    }
  }

  /** A copy named "… (copy)"; null when it failed (reported). */
  duplicate(id: string): Promise<Profile | null> {
    return this.#act(() => ipc.duplicateProfile(id));
  }

  /** Conversations that followed it keep what it gave them and follow no profile. */
  async remove(id: string): Promise<void> {
    await this.#act(() => ipc.deleteProfile(id));
    await this.#conversations.refresh();
  }

  /** Makes `id` the default profile; null: none is. */
  async setDefault(id: string | null): Promise<void> {
    await this.#act(() => ipc.setDefaultProfile(id));
  }

  /** Rust's Save dialog, then the file: the path written, or null (closed, or failed and reported). */
  async exportFile(id: string): Promise<string | null> {
    try {
      return await ipc.exportProfile(id);
    } catch (err) {
      this.#ui.report(err);
      return null;
    }
  }

  /** Rust's Open dialog, then the profile kept: it and what was changed, or null (closed, or failed and reported). */
  importFile(): Promise<ImportedProfile | null> {
    return this.#act(() => ipc.importProfile());
  }
}
