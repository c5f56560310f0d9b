// How far a model's download has come, as the Providers page says it (PullDialog's bar and line,
// the Models section's head): the bytes across every file of the model begun so far when Rust
// says them (a model comes in several files, and a bar of these does not start again with
// each), else those of the file downloading; the speed and time left are the file's.
import type { PullProgress } from "../lib/types";
import { bytes, bytesPerSecond, timeLeft } from "../shared/format";

/** The bytes downloaded and in all, for a bar; null while the server says no size. */
export function pullShare(progress: PullProgress): { completed: number; total: number } | null {
  const [completed, total] =
    progress.all_completed !== undefined && progress.all_total !== undefined
      ? [progress.all_completed, progress.all_total]
      : [progress.completed, progress.total];
  if (completed === undefined || total === undefined || total <= 0) return null;
  return { completed: Math.min(completed, total), total };
}

/** "412 MB of 523 MB · 45 MB/s · 12 s left", as much as is known; "Working…" when none of it is. */
export function pullLine(progress: PullProgress): string {
  const share = pullShare(progress);
  const parts: string[] = [];
  if (share) parts.push(`${bytes(share.completed)} of ${bytes(share.total)}`);
  if (progress.bytes_per_second !== undefined) parts.push(bytesPerSecond(progress.bytes_per_second));
  if (progress.seconds_left !== undefined) parts.push(timeLeft(progress.seconds_left));
  return parts.length > 0 ? parts.join(" · ") : "Working…";
}
