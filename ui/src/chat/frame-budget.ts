//! Keeps a large answer's reading and the work it starts out of one frame. Reading a large IPC
//! answer (its JSON parsed on the main thread) can take much of a frame by itself; the update
//! it starts (building a chat, then laying it out) would then run in the same frame and make
//! it long. `afterLateFrame` hands the answer on at once when it came early in a frame, and
//! otherwise in a task just after the next frame begins, so the update has a frame of its own.
//! Knows nothing of IPC or the UI.

/** An answer that comes later than this after its frame began waits for the next frame. */
export const LATE_IN_FRAME_MS = 8;

export interface Frames {
  /** now, in ms */
  now(): number;
  /** runs `callback` when the next frame begins */
  onFrame(callback: () => void): void;
  /** runs `callback` in a task of its own, as soon as possible */
  soon(callback: () => void): void;
}

/** The window's frames; null where there are none (then answers are handed on at once). */
export function browserFrames(): Frames | null {
  if (typeof requestAnimationFrame !== "function" || typeof performance === "undefined") return null;
  return {
    now: () => performance.now(),
    onFrame: (callback) => requestAnimationFrame(() => callback()),
    soon: (callback) => setTimeout(callback, 0),
  };
}

/**
 * `pending`'s value, handed on at once if it came within `lateMs` of the start of the frame it
 * came in (or before any frame began since the call), else in a task just after the next frame
 * begins. A rejection is handed on at once.
 */
export function afterLateFrame<T>(pending: Promise<T>, frames: Frames | null = browserFrames(), lateMs = LATE_IN_FRAME_MS): Promise<T> {
  if (frames === null) return pending;
  let frameBegan = frames.now();
  let watching = true;
  const watch = (): void => {
    if (!watching) return;
    frameBegan = frames.now();
    frames.onFrame(watch);
  };
  frames.onFrame(watch);
  const stop = (): void => {
    watching = false;
  };
  return pending.then(
    (value) => {
      if (frames.now() - frameBegan <= lateMs) {
        stop();
        return value;
      }
      return new Promise<T>((resolve) => {
        frames.onFrame(() => {
          stop();
          frames.soon(() => resolve(value));
        });
      });
    },
    (err: unknown) => {
      stop();
      throw err;
    },
  );
}
