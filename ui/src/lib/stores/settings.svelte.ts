// The Settings as Rust keeps them (theme, default provider and model, tool-loop limits), whether
// the first load failed, and saving them. Applies the saved theme through the UI store, which also
// shows a failure to load. Only the latest-issued load or save may be applied (`LatestOnly`), so a
// slow load never overwrites what was just saved.

import * as ipc from "../ipc";
import { LatestOnly } from "../latest";
import type { Settings } from "../types";
import type { UiStore } from "./ui.svelte";

export class SettingsStore {
  /** null until first loaded */
  current = $state.raw<Settings | null>(null);
  /** true when the first load failed (nothing to show yet) */
  loadFailed = $state(false);

  readonly #ui: UiStore;
  readonly #guard = new LatestOnly();

  constructor(ui: UiStore) {
    this.#ui = ui;
  }

  async load(): Promise<void> {
    const isLatest = this.#guard.begin();
    try {
      const settings = await ipc.getSettings();
      if (!isLatest()) return;
      this.current = settings;
      this.loadFailed = false;
      this.#ui.applyTheme(settings.theme);
    } catch (err) {
      if (!isLatest()) return;
      this.loadFailed = this.current === null;
      this.#ui.report(err);
    }
  }

  /**
   * Saves and applies the settings Rust returned.
   * @throws IpcError, whose `field` names the Settings key at fault
   */
  async save(settings: Settings): Promise<Settings> {
    const isLatest = this.#guard.begin();
    const saved = await ipc.updateSettings(settings);
    if (isLatest()) {
      this.current = saved;
      this.#ui.applyTheme(saved.theme);
    }
    return saved;
  }
}
