// What the first conversation opened after launch would otherwise pay for, done while the
// window is idle just after it shows: the Markdown parser and sanitiser run once (their first
// run is several times slower than the next), and text in each face the chat uses (family,
// size, weight, style) is laid out once, out of sight; then the code highlighter is loaded and
// the grammars answers use most are compiled (each costs a few ms on its first use). A face's
// first use costs a fontconfig lookup, ~5 ms each on Linux (measured in WebKitGTK:
// BENCHMARKS.md), and an answer brings half a dozen at once, all inside the frame that paints it. Nothing here is shown, focusable
// or read out, and the element it lays out is removed when it is done. While an answer is
// coming, and for a second after it ends, no step runs (each waits for a later idle moment): a
// step's layout would also lay out the streamed answer, a frame of 50 ms or more at the start
// or the end of a stream.

import { loadHighlighter, prepareLanguage } from "../shared/highlight";
import { renderMarkdown } from "../shared/markdown";

/** A face of the chat's text: family and size as CSS values (the theme's variables), weight, style. */
export interface Face {
  family: string;
  size: string;
  weight: number;
  style?: "italic";
}

const UI = "var(--font-ui)";
const MONO = "var(--font-mono)";

/**
 * The faces of the interface's type scale (app.css: --text-xs … --text-lg) in the weights the
 * components use, italics where they use them, and code as `code` sets it (0.92em of the
 * text around it). An answer's headings, code blocks and tables come from the sample Markdown.
 */
export const FACES: readonly Face[] = [
  ...["--text-xs", "--text-sm", "--text-base", "--text-md", "--text-lg"].flatMap((size) =>
    [400, 500, 600, 650, 700].map((weight) => ({ family: UI, size: `var(${size})`, weight })),
  ),
  { family: UI, size: "var(--text-sm)", weight: 400, style: "italic" },
  { family: UI, size: "var(--text-md)", weight: 400, style: "italic" },
  ...["--text-xs", "--text-sm", "--text-base", "--text-md"].flatMap((size) => [
    { family: MONO, size: `var(${size})`, weight: 400 },
    { family: MONO, size: `calc(var(${size}) * 0.92)`, weight: 400 },
  ]),
  // Highlighted code: comments in italics, `hljs-strong` in bold.
  { family: MONO, size: "calc(var(--text-md) * 0.92)", weight: 400, style: "italic" },
  { family: MONO, size: "calc(var(--text-md) * 0.92)", weight: 600 },
];

/** The languages whose grammars are compiled ahead: what answers hold most often. */
export const CODE_LANGUAGES: readonly string[] = [
  "python", "javascript", "typescript", "bash", "json", "rust", "shell", "sql", "go", "java", "cpp", "xml", "css", "yaml",
];

/** Markdown with every construct an answer's renderer handles (one of each). */
export const SAMPLE_MARKDOWN = [
  "# Heading\n\n## Heading\n\n### Heading\n\n#### Heading",
  "A paragraph with **bold**, *italic*, ~~struck~~, `inline code` and a [link](https://example.com).",
  "1. first\n2. second\n\n- one\n- two",
  "```rust\nfn main() {\n    println!(\"hello\");\n}\n```",
  "| key | value |\n| --- | --- |\n| a | 1 |",
  "> quoted\n\n---",
].join("\n\n");

/** Faces laid out per task: each new one costs a few ms, so a task stays well under a frame. */
const FACES_PER_TASK = 3;

export interface WarmupClock {
  /** runs `task` once the window is idle (or soon); returns a cancel */
  later(task: () => void): () => void;
}

/** The browser's clock: idle callbacks where the engine has them, else short timeouts. */
export const browserClock: WarmupClock = {
  later(task) {
    if (typeof requestIdleCallback === "function") {
      const id = requestIdleCallback(task, { timeout: 1000 });
      return () => cancelIdleCallback(id);
    }
    const id = setTimeout(task, 16);
    return () => clearTimeout(id);
  },
};

/** How long after an answer ends the warm-up still waits (the end's own work: lists, usage). */
export const AFTER_ANSWER_MS = 1000;

/**
 * Whether the warm-up should wait: `running()` (an answer is coming) now, or it was when last
 * asked less than `quietMs` ago by `now`.
 */
export function answeringLately(running: () => boolean, now: () => number = () => performance.now(), quietMs = AFTER_ANSWER_MS): () => boolean {
  let last = -Infinity;
  return () => {
    if (running()) last = now();
    return now() - last < quietMs;
  };
}

/** Steps run after the warm-up's own (one a task), and what stops them (removes what they added). */
export interface MoreSteps {
  steps: ReadonlyArray<() => void | Promise<void>>;
  done: () => void;
}

/**
 * Starts warming up in `doc`, a task at a time on `clock`, then runs `more` (warm-chat.ts:
 * opening a made-up chat); returns a function that stops it (and removes what it added).
 * `faces` defaults to FACES. While `answering()` (an answer is coming in some conversation)
 * no step runs.
 */
export function warmUp(
  doc: Document,
  clock: WarmupClock = browserClock,
  faces: readonly Face[] = FACES,
  more: MoreSteps = { steps: [], done: () => {} },
  answering: () => boolean = () => false,
): () => void {
  const box = doc.createElement("div");
  box.setAttribute("aria-hidden", "true");
  box.setAttribute("inert", "");
  // Laid out (so its fonts load) but never painted, out of the way of the layout around it.
  box.style.cssText =
    "position:fixed;left:-10000px;top:0;width:600px;visibility:hidden;pointer-events:none;contain:layout style paint;";

  const steps: Array<() => void | Promise<void>> = [
    () => {
      const html = renderMarkdown(SAMPLE_MARKDOWN);
      renderMarkdown(SAMPLE_MARKDOWN); // the second run is the one the optimiser has seen
      const answer = doc.createElement("div");
      answer.style.cssText = "font-family:var(--font-ui);font-size:var(--text-md);";
      answer.innerHTML = html; // sanitised by renderMarkdown
      box.append(answer);
      doc.body.append(box);
      void box.offsetHeight;
    },
  ];
  for (let i = 0; i < faces.length; i += FACES_PER_TASK) {
    const some = faces.slice(i, i + FACES_PER_TASK);
    steps.push(() => {
      for (const face of some) {
        const line = doc.createElement("span");
        line.textContent = "Text 0123 → · … fn x() {}";
        line.style.fontFamily = face.family;
        line.style.fontSize = face.size;
        line.style.fontWeight = String(face.weight);
        if (face.style) line.style.fontStyle = face.style;
        box.append(line);
      }
      void box.offsetHeight;
    });
  }

  steps.push(
    () => box.remove(),
    () => loadHighlighter(),
    ...CODE_LANGUAGES.map((language) => () => prepareLanguage(language)),
    ...more.steps,
  );
  return runTasks(
    clock,
    steps,
    () => {
      box.remove();
      more.done();
    },
    answering,
  );
}

/**
 * Runs `steps` one a task on `clock`, each after the one before (and after the promise it
 * returned, if any), then `done`; returns a function that stops them (and runs `done`). A
 * step's promise that fails ends them as stopping does. A step whose task comes while
 * `wait()` is put off to the clock's next task.
 */
export function runTasks(
  clock: WarmupClock,
  steps: ReadonlyArray<() => void | Promise<void>>,
  done: () => void,
  wait: () => boolean = () => false,
): () => void {
  let cancel: (() => void) | null = null;
  let stopped = false;
  const finish = (): void => {
    if (stopped) return;
    stopped = true;
    cancel?.();
    done();
  };
  const next = (i: number): void => {
    if (stopped) return;
    if (i === steps.length) {
      finish();
      return;
    }
    cancel = clock.later(() => {
      if (stopped) return;
      if (wait()) {
        next(i);
        return;
      }
      const ran = steps[i]();
      if (ran instanceof Promise) void ran.then(() => next(i + 1), finish);
      else next(i + 1);
    });
  };
  next(0);
  return finish;
}
