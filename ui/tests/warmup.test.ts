import { afterEach, describe, expect, it, vi } from "vitest";
import hljs from "highlight.js/lib/common";
import { AFTER_ANSWER_MS, answeringLately, CODE_LANGUAGES, FACES, warmUp } from "../src/app/warmup";
import { manualClock } from "./manual-clock";

const box = () => document.body.querySelector<HTMLElement>('div[aria-hidden="true"]');

afterEach(() => {
  document.body.replaceChildren();
});

describe("warming up after the window shows", () => {
  it("lays out the sample answer and every face a task at a time, hidden, then removes what it added", () => {
    const clock = manualClock();
    warmUp(document, clock);
    expect(box()).toBeNull(); // nothing happens in the caller's task

    clock.pending.shift()!(); // the first task: the sample answer
    const added = box();
    expect(added).not.toBeNull();
    expect(added!.hasAttribute("inert")).toBe(true);
    expect(added!.style.visibility).toBe("hidden");
    expect(added!.style.position).toBe("fixed");
    // The answer went through the app's own Markdown pipeline.
    for (const tag of ["h1", "h2", "h3", "strong", "em", "code", "pre", "table", "blockquote", "ol", "ul"]) {
      expect(added!.querySelector(tag), tag).not.toBeNull();
    }
    expect(added!.querySelector("a")?.hasAttribute("href")).toBe(true);

    // One task per few faces, never all of them at once.
    clock.pending.shift()!();
    const first = added!.querySelectorAll("span").length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(FACES.length);

    const rest = clock.runAll();
    expect(rest).toBeGreaterThan(1);
    expect(box()).toBeNull(); // removed once done
  });

  it("gives each face its family, size, weight and style", () => {
    const clock = manualClock();
    const faces = [
      { family: "var(--font-mono)", size: "calc(var(--text-md) * 0.92)", weight: 400 },
      { family: "var(--font-ui)", size: "var(--text-sm)", weight: 700, style: "italic" as const },
    ];
    warmUp(document, clock, faces);
    clock.pending.shift()!();
    const added = box()!;
    clock.pending.shift()!(); // the faces
    clock.pending.shift()!(); // the box goes once its faces are laid out
    expect(box()).toBeNull();
    const spans = [...added.querySelectorAll("span")].filter((s) => s.style.fontFamily);
    expect(spans.map((s) => [s.style.fontFamily, s.style.fontSize, s.style.fontWeight, s.style.fontStyle])).toEqual([
      ["var(--font-mono)", "calc(var(--text-md) * 0.92)", "400", ""],
      ["var(--font-ui)", "var(--text-sm)", "700", "italic"],
    ]);
  });

  it("covers each size of the type scale in each weight, and code at the size code is set", () => {
    const sizes = ["--text-xs", "--text-sm", "--text-base", "--text-md", "--text-lg"];
    for (const size of sizes) {
      for (const weight of [400, 500, 600, 650, 700]) {
        expect(FACES.some((f) => f.family === "var(--font-ui)" && f.size === `var(${size})` && f.weight === weight), `${size} ${weight}`).toBe(true);
      }
    }
    expect(FACES.some((f) => f.family === "var(--font-mono)" && f.size === "calc(var(--text-md) * 0.92)")).toBe(true);
  });

  it("stops when told, removing what it added and running nothing more", () => {
    const clock = manualClock();
    const stop = warmUp(document, clock);
    clock.pending.shift()!();
    expect(box()).not.toBeNull();
    stop();
    expect(box()).toBeNull();
    expect(clock.pending).toHaveLength(0);
  });

  it("runs no step while an answer is coming: each waits for a task after the answer ends", () => {
    const clock = manualClock();
    let answering = true;
    warmUp(document, clock, FACES, undefined, () => answering);
    for (let i = 0; i < 5; i++) clock.pending.shift()!();
    expect(box()).toBeNull(); // nothing laid out while the answer streams
    expect(clock.pending).toHaveLength(1); // the first step, put off again

    answering = false;
    clock.pending.shift()!();
    expect(box()).not.toBeNull(); // the sample answer, once the answer has ended
    answering = true;
    clock.pending.shift()!();
    expect([...box()!.querySelectorAll("span")].filter((s) => s.style.fontFamily)).toHaveLength(0); // the faces wait again
    answering = false;
    clock.runAll();
    expect(box()).toBeNull(); // and the warm-up ends as before
  });

  it("waits while an answer comes and for a second after it ends", () => {
    let running = false;
    let now = 0;
    const wait = answeringLately(() => running, () => now);
    expect(wait()).toBe(false);
    running = true;
    now = 5_000;
    expect(wait()).toBe(true);
    running = false;
    now += AFTER_ANSWER_MS - 1;
    expect(wait()).toBe(true); // the answer's end is still being drawn
    now += 1;
    expect(wait()).toBe(false);
  });

  it("then loads the code highlighter and compiles the grammars answers use most, one a task", async () => {
    const clock = manualClock();
    warmUp(document, clock, []);
    clock.pending.shift()!(); // the sample answer
    clock.pending.shift()!(); // the box goes
    expect(box()).toBeNull();
    clock.pending.shift()!(); // the highlighter is asked for
    await vi.waitFor(() => expect(clock.pending).toHaveLength(1));
    const compiled = () => CODE_LANGUAGES.filter((l) => (hljs.getLanguage(l) as { isCompiled?: boolean } | undefined)?.isCompiled);
    clock.pending.shift()!();
    expect(compiled()).toContain(CODE_LANGUAGES[0]);
    clock.runAll();
    expect(compiled()).toEqual(CODE_LANGUAGES);
  });
});
