// The Skills page's list (issue 61): the skills in the person's skills folder as Rust reads them
// (each with its switch for every conversation, or why it cannot be used), a skill in full when
// the page opens it (its instructions, files and the conversations that used it), and the
// actions: add from a folder or a .zip (Rust's native dialog picks it and Rust checks it), switch
// on or off, let the model ask to run its scripts, export, remove. Rust owns the folder, the checks and the switches; after each change
// the list is read again from Rust.

import * as ipc from "../lib/ipc";
import { LatestOnly } from "../shared/latest";
import type { Skill, SkillDetail } from "../lib/types";
import type { UiStore } from "../app/ui.svelte";

export class SkillsStore {
  /** the skills, by name; null until first read */
  list = $state.raw<Skill[] | null>(null);
  /** the skills opened to their details, by name */
  details = $state<Record<string, SkillDetail>>({});
  busy = $state(false);

  readonly #ui: UiStore;
  readonly #guard = new LatestOnly();

  constructor(ui: UiStore) {
    this.#ui = ui;
  }

  async load(): Promise<void> {
    const isLatest = this.#guard.begin();
    try {
      const skills = await ipc.listSkills();
      if (isLatest()) this.list = skills;
    } catch (err) {
      if (!isLatest()) return;
      this.list ??= [];
      this.#ui.report(err);
    }
  }

  /** Runs `action` (one at a time), then reads the list again; its result, or null if it failed. */
  async #change<T>(action: () => Promise<T>): Promise<T | null> {
    this.busy = true;
    try {
      return await action();
    } catch (err) {
      this.#ui.report(err);
      return null;
    } finally {
      await this.load();
      this.busy = false;
    }
  }

  /** Asks for a skill's folder (or .zip) and keeps it; the skill, or null (closed, refused). */
  add(fromZip: boolean): Promise<Skill | null> {
    return this.#change(() => ipc.addSkill(fromZip));
  }

  /** Switches a skill on or off for every conversation; a server's skill is approved as it was
   *  shown (`approval`: Rust refuses if it changed since). */
  async setEnabled(name: string, enabled: boolean, approval: string | null = null): Promise<void> {
    await this.#change(() => ipc.setSkillEnabled(name, enabled, null, approval));
    if (this.details[name]) await this.open(name);
  }

  /** Lets the model ask to run a skill's scripts (each run asks, in Rust's sandbox), or no
   *  longer; allowing sends the digest of the skill as it was shown (`asShown`), which Rust
   *  checks and binds the allowance to. Whether it was done. */
  async setScripts(name: string, allowed: boolean, asShown: string | null = null): Promise<boolean> {
    const done = await this.#change(async () => {
      await ipc.setSkillScripts(name, allowed, asShown);
      return true;
    });
    if (this.details[name]) await this.open(name);
    return done === true;
  }

  /** A skill in full, read for a question about it (not kept open under its card). */
  async read(name: string): Promise<SkillDetail | null> {
    try {
      return await ipc.skillDetail(name);
    } catch (err) {
      this.#ui.report(err);
      return null;
    }
  }

  async remove(name: string): Promise<boolean> {
    const done = await this.#change(async () => {
      await ipc.removeSkill(name);
      return true;
    });
    delete this.details[name];
    return done === true;
  }

  /** Asks where to save the skill's .zip and writes it; the path, or null. */
  exportZip(name: string): Promise<string | null> {
    return this.#change(() => ipc.exportSkill(name));
  }

  /** Reads a skill in full (shown under its card). */
  async open(name: string): Promise<void> {
    try {
      this.details[name] = await ipc.skillDetail(name);
    } catch (err) {
      this.#ui.report(err);
    }
  }

  close(name: string): void {
    delete this.details[name];
  }
}
