// The Schedules page's state (issue 61): the schedules as Rust keeps them (each with its rule in
// words and its next time), the record of recent runs, how many runs wait for the person's
// approval (the sidebar's badge, pushed by Rust at each change), and the actions: add, switch on or off, run now, remove. A
// draft the page's form starts from can be set from elsewhere (a conversation's "Schedule
// this…"). Rust owns the rules, the times and the runs; after each change the lists are read
// again from Rust.

import * as ipc from "../lib/ipc";
import { LatestOnly } from "../shared/latest";
import type { NewSchedule, Schedule, ScheduleRun } from "../lib/types";
import type { UiStore } from "../app/ui.svelte";

/** How many recent runs the page shows. */
export const RUNS_SHOWN = 50;

/** What the form starts from: a prompt and a profile (from a conversation), or nothing. */
export interface ScheduleDraft {
  prompt: string;
  profile: string | null;
}

export class SchedulesStore {
  /** the schedules, by name; null until first read */
  list = $state.raw<Schedule[] | null>(null);
  /** the latest runs of every schedule, newest first */
  runs = $state.raw<ScheduleRun[]>([]);
  /** runs whose call waits for the person's approval now */
  waiting = $state(0);
  busy = $state(false);
  /** the form's starting point, set by "Schedule this…" and taken by the page */
  draft = $state.raw<ScheduleDraft | null>(null);

  readonly #ui: UiStore;
  readonly #guard = new LatestOnly();

  constructor(ui: UiStore) {
    this.#ui = ui;
  }

  async load(): Promise<void> {
    const isLatest = this.#guard.begin();
    try {
      const [list, runs, waiting] = await Promise.all([
        ipc.listSchedules(),
        ipc.scheduleRuns(null, RUNS_SHOWN),
        ipc.scheduleRunsWaiting(),
      ]);
      if (!isLatest()) return;
      this.list = list;
      this.runs = runs;
      this.waiting = waiting;
    } catch (err) {
      if (!isLatest()) return;
      this.list ??= [];
      this.#ui.report(err);
    }
  }

  /** Rust pushes how many runs wait for an approval at every change of a schedule or a run
   *  (the sidebar's badge); the page's lists, once read, are read again then, and `onChange`
   *  is told (a run's new conversation). Nothing polls. */
  async watch(onChange: () => void = () => {}): Promise<void> {
    let first = true;
    try {
      await ipc.watchSchedules((waiting) => {
        this.waiting = waiting;
        if (this.list !== null) void this.load();
        if (!first) onChange();
        first = false;
      });
    } catch (err) {
      // The page still reads its lists when opened and after each action.
      console.error("cannot listen for schedule changes", err);
    }
  }

  /** Runs `action` (one at a time), then reads the lists again; its result, or null if it failed. */
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

  /** Keeps a new schedule; it, or null when Rust refused it (the error is thrown for the form). */
  async add(schedule: NewSchedule): Promise<Schedule> {
    this.busy = true;
    try {
      return await ipc.addSchedule(schedule);
    } finally {
      await this.load();
      this.busy = false;
    }
  }

  setEnabled(id: string, enabled: boolean): Promise<Schedule | null> {
    return this.#change(() => ipc.setScheduleEnabled(id, enabled));
  }

  async remove(id: string): Promise<boolean> {
    const done = await this.#change(async () => {
      await ipc.removeSchedule(id);
      return true;
    });
    return done === true;
  }

  /** Starts a run now; the conversation it landed in, or null. */
  async runNow(id: string): Promise<string | null> {
    const started = await this.#change(() => ipc.runScheduleNow(id));
    return started?.conversation_id ?? null;
  }

  /** Opens the page's form from a conversation's prompt and profile. */
  startFrom(draft: ScheduleDraft): void {
    this.draft = draft;
    this.#ui.showSchedules();
  }

  /** The draft, once: the form takes it. */
  takeDraft(): ScheduleDraft | null {
    const draft = this.draft;
    this.draft = null;
    return draft;
  }
}
