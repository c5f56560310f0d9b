// A warm-up clock whose tasks run only when a test says so (warmup.ts, warm-chat.ts). Test-only code.

import { flushSync } from "svelte";
import type { WarmupClock } from "../src/app/warmup";

export interface ManualClock extends WarmupClock {
  /** the tasks asked for and not run yet, oldest first */
  pending: Array<() => void>;
  /** runs the oldest task, then Svelte's pending updates */
  step(): void;
  /** runs tasks until none is left (tasks a task asks for too); how many ran */
  runAll(): number;
}

export function manualClock(): ManualClock {
  const pending: Array<() => void> = [];
  const clock: ManualClock = {
    pending,
    later(task) {
      pending.push(task);
      return () => {
        const i = pending.indexOf(task);
        if (i >= 0) pending.splice(i, 1);
      };
    },
    step() {
      pending.shift()!();
      flushSync();
    },
    runAll() {
      let ran = 0;
      while (pending.length > 0) {
        clock.step();
        ran++;
      }
      return ran;
    },
  };
  return clock;
}
