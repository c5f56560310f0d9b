// The Settings as Rust keeps them (theme, default provider and model, tool-loop limits), whether
// the first load failed, and saving them. Applies the saved theme through the UI store, which also
// shows a failure to load. Only the latest-issued load or save may be applied (`LatestOnly`), so a
// slow load never overwrites what was just saved. Also the app's own updates, checked and
// installed only when the person asks (Rust checks the signature), and the `switchboard` command
// in a terminal.

import * as ipc from "../lib/ipc";
import { LatestOnly } from "../shared/latest";
import type { Settings, ShellCommandStatus, UpdateProgress, UpdateStatus } from "../lib/types";
import type { UiStore } from "../app/ui.svelte";

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

  // ------------------------------------------------------------------ the command line

  /** What `switchboard` runs in a terminal, and where it would be put. @throws IpcError */
  shellCommand(): Promise<ShellCommandStatus> {
    return ipc.shellCommandStatus();
  }

  /** Makes `switchboard` in new terminals run this app. @throws IpcError (kind install) */
  installShellCommand(): Promise<ShellCommandStatus> {
    return ipc.installShellCommand();
  }

  /** Takes away the `switchboard` this app put. @throws IpcError (kind install) */
  removeShellCommand(): Promise<ShellCommandStatus> {
    return ipc.removeShellCommand();
  }

  // ------------------------------------------------------------------ the app's own updates

  /**
   * Asks this build's update address for a newer release.
   * @throws IpcError (kind update: the address could not be reached or answered nonsense)
   */
  checkForUpdate(): Promise<UpdateStatus> {
    return ipc.checkForUpdate();
  }

  /**
   * Downloads and installs the release the last check found; Rust refuses one whose signature
   * does not match. Resolves the version installed.
   * @throws IpcError (kind update)
   */
  installUpdate(onProgress: (progress: UpdateProgress) => void): Promise<string> {
    return ipc.installUpdate(onProgress);
  }

  /** Quits and starts again into the installed update. */
  async restart(): Promise<void> {
    try {
      await ipc.restartApp();
    } catch (err) {
      this.#ui.report(err);
    }
  }
}
