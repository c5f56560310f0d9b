// afterLateFrame: an answer that comes early in a frame is handed on at once; one that comes
// late in a frame waits for the next frame to begin and is then handed on in a task of its own;
// a rejection is handed on at once; with no frames, the answer is handed on as it comes.
import { describe, expect, it } from "vitest";
import { afterLateFrame, type Frames } from "../src/chat/frame-budget";

/** Frames the test drives: `frame()` begins one, `tasks()` runs the tasks queued. */
function testFrames() {
  let now = 0;
  let callbacks: Array<() => void> = [];
  let queued: Array<() => void> = [];
  const frames: Frames = {
    now: () => now,
    onFrame: (callback) => void callbacks.push(callback),
    soon: (callback) => void queued.push(callback),
  };
  return {
    frames,
    advance: (ms: number) => void (now += ms),
    frame: () => {
      const run = callbacks;
      callbacks = [];
      for (const callback of run) callback();
    },
    tasks: () => {
      const run = queued;
      queued = [];
      for (const task of run) task();
    },
    waiting: () => callbacks.length,
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("afterLateFrame", () => {
  it("hands on an answer that comes early in a frame at once", async () => {
    const t = testFrames();
    let answer: (v: string) => void = () => {};
    const handed = afterLateFrame(new Promise<string>((resolve) => (answer = resolve)), t.frames, 8);
    t.advance(20);
    t.frame(); // a frame begins at 20
    t.advance(5);
    answer("read");
    expect(await handed).toBe("read");
    // It stops watching frames once the answer is handed on.
    t.frame();
    expect(t.waiting()).toBe(0);
  });

  it("holds an answer that comes late in a frame until the next frame has begun, then hands it on in a task", async () => {
    const t = testFrames();
    let answer: (v: string) => void = () => {};
    let got: string | null = null;
    void afterLateFrame(new Promise<string>((resolve) => (answer = resolve)), t.frames, 8).then((v) => (got = v));
    t.advance(16);
    t.frame(); // a frame begins at 16
    t.advance(12); // the answer took 12 ms to read
    answer("read");
    await settle();
    expect(got).toBeNull();
    t.advance(4);
    t.frame(); // the next frame begins
    await settle();
    expect(got).toBeNull();
    t.tasks(); // the task after it
    await settle();
    expect(got).toBe("read");
    t.frame();
    expect(t.waiting()).toBe(0);
  });

  it("counts from the call when no frame has begun since", async () => {
    const t = testFrames();
    const handed = afterLateFrame(Promise.resolve("at once"), t.frames, 8);
    expect(await handed).toBe("at once");
    let got: string | null = null;
    let answer: (v: string) => void = () => {};
    void afterLateFrame(new Promise<string>((resolve) => (answer = resolve)), t.frames, 8).then((v) => (got = v));
    t.advance(30);
    answer("late");
    await settle();
    expect(got).toBeNull();
    t.frame();
    t.tasks();
    await settle();
    expect(got).toBe("late");
  });

  it("hands on a rejection at once", async () => {
    const t = testFrames();
    t.advance(100);
    const handed = afterLateFrame(Promise.reject(new Error("gone")), t.frames, 8);
    await expect(handed).rejects.toThrow("gone");
  });

  it("hands the answer on as it comes where there are no frames", async () => {
    const pending = Promise.resolve(1);
    expect(afterLateFrame(pending, null)).toBe(pending);
  });
});
