// The conversation view under load, measured in the real window (Xvfb, WebDriver through
// tests/e2e/harness.mjs). Owns three scenarios, a scripted model server and the homes it makes
// (left in /tmp); each run starts the app afresh and stops it:
//
//   stream  In a fresh home, a new conversation is sent STREAM_PROMPT and the model server (in
//           this file) streams an 80,000-character (~20,000-token) Markdown answer in
//           16-character chunks every 20 ms (~200 tokens/s, 100 s). Measured: the longest gap
//           between animation frames from the first chunk sent to the end painted, how many
//           gaps exceed 50 ms, and the time from the server sending the last chunk to its text
//           being in the DOM and painted.
//   open    "Ten thousand messages" (bench/seed_conversations.py: every tenth tool result has an
//           image; two branches near its end, first versions shown), opened from "Empty" by a
//           click on its sidebar item. Measured: click to the newest answer's last words in the DOM and
//           painted; frame gaps from the click to 1 s after painted; DOM elements inside
//           [data-testid="message-list"]; PSS and RSS of the app's WebKitWebProcess with "Empty"
//           open (3 s after it shows) and with this conversation open (3 s after painted).
//           The first run saves a screenshot, tests/e2e/artifacts/bench-ten-thousand-open.png.
//   cards   "Two hundred tool cards" (one answer that made 200 calls), opened the same way; the
//           same metrics.
//   short   "A short chat" (three turns that fill the window), opened the same way: the same
//           metrics, the reference for the two above (what opening any chat costs here).
//           Open, cards and short runs share one seeded home, made once per invocation.
//
// Run it through the wrapper, which gives it a virtual display and an unlocked keyring as the
// e2e tests have (paths are taken from the repository root):
//
//   PATH="$HOME/.cache/switchboard-dev/tools/bin:$PATH" \
//     bash bench/conversation_view.sh --app target/release/switchboard [--runs 3] [--only stream|open|cards|short]
//
// (--only may be given more than once; --trace logs, for each chat opened, what the page's main
// thread did from the click to the newest message painted, and for a streamed answer the stretches
// the thread was busy for STREAM_BUSY_MS or more: see installTrace; --css TEXT adds a style sheet
// to the page before the click (or, for a stream, before the question is sent), to measure what a
// style costs without a build; --stream-chars N streams an answer of about N characters instead of
// 80,000, for a quick look at a stream's start or end; --send-after MS sends the stream's question
// MS after launch; --threads samples which threads of the machine ran or waited for a CPU
// (bench/threads.py) and logs them for each frame gap of a stream over 40 ms, the busiest over the
// whole stream, and what the page's main thread ran in each 10 s of it.) It prints a Markdown table
// of medians with every run's value and writes everything measured to
// bench/results/conversation-view-<app>-<time>.json.
//
// How it measures, inside the page (one script injected after launch):
// - a requestAnimationFrame loop records every frame's time (WebKitGTK has no long-task
//   entries); a gap is the time between two frames, or between a window's bound and the nearest
//   frame inside it;
// - a MutationObserver on the body looks, after each batch of changes, at the last
//   [data-testid="answer"] in the message list, and only at the last text nodes of its
//   [data-testid="answer-text"], for the words that end the newest answer.
//   "In the DOM" is that moment; "painted" is the second animation frame after it: the next
//   frame draws the change, and the one after begins once that frame is on screen. (Checked
//   against xwd captures of the screen taken in a loop: the captured window changed within a
//   few ms of that second frame, while a task queued from the first frame ran 0.6 s before.)
// - times are performance.timeOrigin + performance.now(), comparable with Date.now() in this
//   process (same machine clock): the server's send times are Date.now().
// A scenario that does not show its end in time is stopped and reported as "> N s".
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const SCENARIOS = ["stream", "open", "cards", "short"];
const { values: options } = parseArgs({
  options: {
    app: { type: "string" },
    runs: { type: "string", default: "3" },
    only: { type: "string", multiple: true },
    trace: { type: "boolean", default: false },
    css: { type: "string" },
    "stream-chars": { type: "string", default: "80000" },
    "send-after": { type: "string" },
    threads: { type: "boolean", default: false },
  },
});
if (!options.app) throw new Error("--app PATH (the switchboard binary to measure) is required");
const chosen = options.only ?? SCENARIOS;
for (const s of chosen) if (!SCENARIOS.includes(s)) throw new Error(`--only takes ${SCENARIOS.join(", ")}, not ${s}`);
const RUNS = Number(options.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs takes a whole number of runs, not ${options.runs}`);
process.env.SWITCHBOARD_BIN = path.resolve(options.app);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(ROOT); // the harness keeps its artifacts under tests/e2e/ of the working directory
const { launch, run, tempHome, tid } = await import("../tests/e2e/harness.mjs");

const STREAM_CHARS = Number(options["stream-chars"]);
if (!Number.isInteger(STREAM_CHARS) || STREAM_CHARS < 1) throw new Error(`--stream-chars takes a whole number, not ${options["stream-chars"]}`);
// --send-after MS: the stream's question is sent this long after launch (by default as soon as
// the composer takes it, about a second after launch: the start-up's idle work unfinished).
const SEND_AFTER_MS = options["send-after"] === undefined ? null : Number(options["send-after"]);
if (SEND_AFTER_MS !== null && !(SEND_AFTER_MS >= 0)) throw new Error(`--send-after takes milliseconds, not ${options["send-after"]}`);
const CHUNK_CHARS = 16;
const CHUNK_EVERY_MS = 20;
const STREAM_PROMPT = "Write the long benchmark answer.";
const STREAM_END = "This is where the long benchmark answer ends.";
const TIMEOUT_S = { stream: 480, open: 180, cards: 180, short: 60 };
const TAIL_MS = 1000; // frame gaps are watched this long after the newest message is painted
const SETTLE_MS = 3000; // memory is read this long after a conversation shows
const LONG_GAP_MS = 50;
const STREAM_BUSY_MS = 30; // with --trace, a stream's busy stretches this long or longer are logged

const log = (line) => console.error(`# ${line}`);

// ---------------------------------------------------------------- the machine beside the page

const USER_HZ = 100; // /proc/stat's unit of time on Linux

/**
 * Whether the machine stalled, not the page: on each CPU (taskset) a process beside the app
 * sleeps 2 ms at a time and notes each sleep that overran by 20 ms or more (its start, epoch ms,
 * and the overrun), and the CPU time the hypervisor took ("steal", /proc/stat) is read at both
 * ends. A long frame gap with a stall of a probe inside it may be the machine's (a CPU the app
 * needed was taken from it); one with none is the app's.
 */
function startHostProbe() {
  const script = [
    "import sys, time",
    "while True:",
    "    t = time.time(); time.sleep(0.002); d = time.time() - t - 0.002",
    "    if d >= 0.020: print(f'{t * 1000:.0f} {d * 1000:.0f}', flush=True)",
  ].join("\n");
  const stalls = [];
  const children = os.cpus().map((_, cpu) => {
    const child = spawn("taskset", ["-c", String(cpu), "python3", "-c", script], { stdio: ["ignore", "pipe", "inherit"] });
    let rest = "";
    child.stdout.on("data", (chunk) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop();
      for (const line of lines) stalls.push(line.split(" ").map(Number));
    });
    return child;
  });
  const steal = () => Number(fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/)[8] ?? 0);
  const stealAtStart = steal();
  return {
    /** Stops the probe: its stalls, and the steal time (ms, all CPUs) since it started. */
    stop() {
      for (const child of children) child.kill();
      return { stalls, steal_ms: (steal() - stealAtStart) * (1000 / USER_HZ) };
    },
  };
}

/** Starts bench/threads.py; `stop()` ends it and resolves to its readings ({t, s: [[pid, tid, process, thread, ran ns, waited ns]]}). */
function startThreadProbe() {
  const child = spawn("python3", [path.join(ROOT, "bench/threads.py")], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  const ended = once(child, "exit");
  return {
    async stop() {
      child.kill("SIGTERM");
      await ended;
      return out.split("\n").filter(Boolean).map((line) => JSON.parse(line));
    },
  };
}

/** What each thread did in the readings from `start` to `end` (epoch ms): "process[pid]/thread[tid]" → { main: whether it is its process's first thread, ran, waited } (ms). */
function threadSums(readings, start, end) {
  const sums = new Map();
  for (const r of readings) {
    if (r.t <= start || r.t > end) continue;
    for (const [pid, tid, proc, thread, ran, waited] of r.s) {
      const key = `${proc}[${pid}]/${thread}[${tid}]`;
      const sum = sums.get(key) ?? { main: pid === tid, ran: 0, waited: 0 };
      sum.ran += ran / 1e6;
      sum.waited += waited / 1e6;
      sums.set(key, sum);
    }
  }
  return sums;
}

/** The threads that ran or waited for a CPU most in the readings from `start` to `end` (epoch ms), as text: "process[pid]/thread[tid] ran R waited W" (ms). */
function busiestThreads(readings, start, end, count = 8) {
  const top = [...threadSums(readings, start, end)].sort((a, b) => b[1].ran + b[1].waited - (a[1].ran + a[1].waited)).slice(0, count);
  return top.map(([k, { ran, waited }]) => `${k} ran ${ran.toFixed(1)} waited ${waited.toFixed(1)}`).join("; ");
}

/** CPU ms the web process's main thread ran in each `window` ms from `start` to `end` (epoch ms): whether its cost follows the answer's length. */
function pageThreadPerWindow(readings, start, end, window) {
  const per = [];
  for (let from = start; from < end; from += window) {
    let ran = 0;
    for (const [key, sum] of threadSums(readings, from, Math.min(from + window, end))) if (key.startsWith("WebKitWebProc") && sum.main) ran += sum.ran;
    per.push(Math.round(ran));
  }
  return per;
}

/** For each gap ([at, ms, …] after `from`), a line naming the threads that ran or waited for a CPU most inside it (a reading up to 10 ms after it counts). */
function threadLines(gaps, from, readings) {
  return gaps.map(([at, ms]) => `gap at ${at} ms, ${ms} ms: ${busiestThreads(readings, from + at, from + at + ms + 10)}`);
}

/** Each long gap ([at, ms] after `from`) with the longest stall of the probe that overlaps it (0: none). */
function withHostStalls(longGaps, from, stalls) {
  return longGaps.map(([at, ms]) => {
    const start = from + at;
    const overlapping = stalls.filter(([t, over]) => t < start + ms && t + over > start);
    return [at, ms, Math.max(0, ...overlapping.map(([, over]) => over))];
  });
}

// ---------------------------------------------------------------- in the page

/** Installs the frame recorder and the watch for the newest answer's last words (once per page). */
function installProbe() {
  if (window.__bench) return;
  const now = () => performance.timeOrigin + performance.now();
  const probe = { frames: [], words: null, clickAt: null, seen: null };
  window.__bench = probe;
  const frame = () => {
    probe.frames.push(now());
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  addEventListener(
    "click",
    (e) => {
      if (e.target instanceof Element && e.target.closest('[data-testid="conversation-item"]')) probe.clickAt = now();
    },
    true,
  );
  // The last characters of `el`'s text, read from its last text nodes backwards.
  const tail = (el) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let text = "";
    for (let node = walker.lastChild(); node && text.length < 2 * probe.words.length; node = walker.previousNode()) {
      text = node.data + text;
    }
    return text;
  };
  new MutationObserver(() => {
    if (!probe.words || probe.seen) return;
    const answers = document.querySelector('[data-testid="message-list"]')?.querySelectorAll('[data-testid="answer"]') ?? [];
    const text = answers[answers.length - 1]?.querySelector('[data-testid="answer-text"]');
    if (!text || !tail(text).includes(probe.words)) return;
    const seen = { dom: now(), painted: null };
    probe.seen = seen;
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        seen.painted = now();
      }),
    );
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
}

/** With --css: adds a style sheet to the page, to try a style's cost without a build. */
function addStyle(css) {
  // A constructed sheet: the page's CSP does not apply to it, as it would to a <style>.
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}

/** Starts watching for `words` at the end of the newest answer, and records frames afresh. */
function watchFor(words) {
  const probe = window.__bench;
  probe.words = words;
  probe.seen = null;
  probe.clickAt = null;
  probe.frames = [];
}

/**
 * With --trace: a timeline of what the page's main thread did, to tell script from rendering.
 * A task loop (MessageChannel) records when tasks can run, so a gap between two of its tasks
 * is the thread busy; animation-frame callbacks, ResizeObserver callbacks (as the virtualiser
 * measures rows), DOM mutation batches and calls that force a layout are recorded with their
 * times. Time inside DOM, Intl and JSON calls that can be slow is summed per call, and so are
 * the page's own User Timing measures (`performance.measure`), so a build with a few measures
 * added tells where its script time goes. The task loop keeps a core busy: timings taken with
 * --trace are not the bench's figures.
 */
function installTrace() {
  if (window.__trace) return;
  const now = () => performance.timeOrigin + performance.now();
  const trace = { on: false, events: [] };
  window.__trace = trace;
  const channel = new MessageChannel();
  // A long trace (a streamed answer) keeps only the stretches the thread was busy for
  // `minBusy` ms or more, not every task.
  let lastTask = 0;
  channel.port1.onmessage = () => {
    if (!trace.on) return;
    const t = now();
    if (trace.minBusy) {
      if (lastTask && t - lastTask >= trace.minBusy) trace.events.push(["busy", lastTask, t - lastTask]);
      lastTask = t;
    } else {
      trace.events.push(["task", t]);
    }
    channel.port2.postMessage(0);
  };
  // One busy stretch of the thread, from `start` for `ms`, as a line: when (ms after `from`,
  // padded to `width`), how long, the frames in it and what ran inside it (`events`, those of
  // its kinds that are not the stretches themselves).
  trace.stretch = (from, width, start, ms, events, frames) => {
    const at = (t) => (t - from).toFixed(1).padStart(width);
    const inside = events.filter((e) => e[1] >= start && e[1] < start + ms);
    const frameIn = frames.filter((t) => t >= start && t < start + ms);
    const what = inside.map((e) => `${e[0]}@${at(e[1]).trim()}${e[2] ? `(${e[2].toFixed(1)}ms)` : ""}${e[3] !== undefined ? `[${e[3]}]` : ""}`);
    return `${at(start)} busy ${ms.toFixed(1).padStart(6)} ms${frameIn.length ? ` frame@${frameIn.map((t) => at(t).trim()).join(",")}` : ""} ${what.join(" ")}`;
  };
  trace.start = (minBusy = 0) => {
    trace.minBusy = minBusy;
    lastTask = 0;
    trace.on = true;
    trace.events = [];
    trace.sums = {};
    channel.port2.postMessage(0);
  };
  // Runs `f`, recording it as `kind` while tracing (only when it took `atLeast` ms or more).
  const timed = (kind, f, detail, atLeast = 0) => {
    const at = now();
    try {
      return f();
    } finally {
      const ms = now() - at;
      if (trace.on && ms >= atLeast) trace.events.push([kind, at, ms, detail]);
    }
  };
  const Observer = window.ResizeObserver;
  window.ResizeObserver = class extends Observer {
    constructor(callback) {
      super((entries, observer) => timed("resize-observer", () => callback(entries, observer), entries.length));
    }
  };
  const frame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => frame((ts) => timed("raf", () => callback(ts)));
  // A batch of DOM changes: how many, and where (the test ids of the nearest marked elements
  // around the changed nodes, a few at most).
  const where = (records) => {
    const ids = new Set();
    for (const r of records) {
      const el = r.target instanceof Element ? r.target : r.target.parentElement;
      ids.add(el?.closest("[data-testid]")?.getAttribute("data-testid") ?? el?.tagName?.toLowerCase() ?? "?");
      if (ids.size === 4) break;
    }
    return `${records.length} in ${[...ids].join(",")}`;
  };
  new MutationObserver((records) => {
    if (trace.on) trace.events.push(["mutations", now(), 0, where(records)]);
  }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  addEventListener("click", () => trace.start(), true);
  // Each call to a Rust command (Tauri sends them with fetch to its ipc: scheme): when it was
  // made and, with its time, when its answer came.
  const fetch = window.fetch.bind(window);
  window.fetch = (input, ...rest) => {
    const at = now();
    const cmd = String(input?.url ?? input).split("/").pop();
    if (trace.on) trace.events.push([`call ${cmd}`, at, 0]);
    return fetch(input, ...rest).finally(() => {
      if (trace.on) trace.events.push([`answer ${cmd}`, now(), now() - at]);
    });
  };
  // Each message Rust sends the page (a run's event on its channel, or a command's answer):
  // when it came, how long its handler ran, and the event's type.
  // (`__TAURI_INTERNALS__`'s functions cannot be replaced; the Map of callbacks it exposes can.)
  const callbacks = window.__TAURI_INTERNALS__?.callbacks;
  const kind = (raw) => raw?.message?.type ?? (raw && typeof raw === "object" && "end" in raw ? "end" : "answer");
  if (callbacks instanceof Map) {
    callbacks.set = function (id, callback) {
      return Map.prototype.set.call(this, id, (raw) => timed("ipc", () => callback(raw), kind(raw)));
    };
  }
  // Time spent inside calls that can be slow, summed per name while tracing.
  trace.sums = {};
  const summed = (obj, name, label) => {
    const original = Object.getOwnPropertyDescriptor(obj, name);
    if (!original) return;
    const add = (t0) => {
      if (!trace.on) return;
      const s = (trace.sums[label] ??= [0, 0]);
      s[0] += 1;
      s[1] += performance.now() - t0;
    };
    if (original.value) {
      Object.defineProperty(obj, name, { ...original, value(...args) { const t0 = performance.now(); try { return original.value.apply(this, args); } finally { add(t0); } } });
    } else if (original.set) {
      Object.defineProperty(obj, name, { ...original, set(v) { const t0 = performance.now(); try { original.set.call(this, v); } finally { add(t0); } } });
    }
  };
  summed(Date.prototype, "toLocaleTimeString", "Date.toLocaleTimeString");
  summed(Date.prototype, "toLocaleDateString", "Date.toLocaleDateString");
  summed(Date.prototype, "toLocaleString", "Date.toLocaleString");
  summed(Number.prototype, "toLocaleString", "Number.toLocaleString");
  summed(String.prototype, "localeCompare", "String.localeCompare");
  summed(DOMParser.prototype, "parseFromString", "DOMParser.parseFromString");
  summed(Element.prototype, "innerHTML", "set innerHTML");
  summed(Document.prototype, "importNode", "importNode");
  summed(Node.prototype, "cloneNode", "cloneNode");
  summed(DOMImplementation.prototype, "createHTMLDocument", "createHTMLDocument");
  summed(Document.prototype, "createTreeWalker", "createTreeWalker");
  summed(window, "getComputedStyle", "getComputedStyle");
  summed(Element.prototype, "setAttribute", "setAttribute");
  summed(Node.prototype, "appendChild", "appendChild");
  summed(Node.prototype, "insertBefore", "insertBefore");
  summed(JSON, "parse", "JSON.parse");
  // Calls that make the engine lay out there and then (reading a size, setting a scroll),
  // recorded when they take 1 ms or more.
  for (const name of ["scrollTop", "scrollHeight", "clientHeight", "offsetHeight", "getBoundingClientRect", "scrollTo", "scrollBy"]) {
    const proto = Object.getOwnPropertyDescriptor(Element.prototype, name) ? Element.prototype : HTMLElement.prototype;
    const original = Object.getOwnPropertyDescriptor(proto, name);
    Object.defineProperty(proto, name, {
      ...original,
      ...(original.get && { get() { return timed(`get ${name}`, () => original.get.call(this), undefined, 1); } }),
      ...(original.set && { set(v) { timed(`set ${name}`, () => original.set.call(this, v), undefined, 1); } }),
      ...(original.value && { value(...args) { return timed(`${name}()`, () => original.value.apply(this, args), undefined, 1); } }),
    });
  }
}

/** The trace from `from` to `to` as lines: busy stretches of the thread (gaps between the task
 * loop's tasks over 3 ms) with what ran inside them, and the frames. */
function traceLines(from, to) {
  const trace = window.__trace;
  trace.on = false;
  const frames = window.__bench.frames.filter((t) => t >= from && t <= to);
  const events = trace.events.filter((e) => e[1] >= from && e[1] <= to);
  const tasks = events.filter((e) => e[0] === "task").map((e) => e[1]);
  const others = events.filter((e) => e[0] !== "task");
  const lines = [];
  for (let i = 1; i < tasks.length; i++) {
    const gap = tasks[i] - tasks[i - 1];
    if (gap < 3) continue;
    lines.push(trace.stretch(from, 7, tasks[i - 1], gap, others, frames));
  }
  const sums = { ...trace.sums };
  for (const m of performance.getEntriesByType("measure")) {
    const begun = performance.timeOrigin + m.startTime;
    if (begun < from || begun > to) continue;
    const s = (sums[`measure ${m.name}`] ??= [0, 0]);
    s[0] += 1;
    s[1] += m.duration;
  }
  lines.push(`sums ${Object.entries(sums).map(([k, [n, ms]]) => `${k} ${n}× ${ms.toFixed(1)} ms`).join(", ")}`);
  return lines;
}

/** With --trace on a streamed answer: the stretches the thread was busy for `minBusy` ms or
 * more (as `trace.start(minBusy)` kept them), each with what ran inside it and the frames. */
function busyLines(from, to) {
  const trace = window.__trace;
  trace.on = false;
  const frames = window.__bench.frames.filter((t) => t >= from && t <= to);
  const others = trace.events.filter((e) => e[0] !== "busy");
  return trace.events
    .filter((e) => e[0] === "busy" && e[1] >= from && e[1] <= to)
    .map(([, start, ms]) => trace.stretch(from, 9, start, ms, others, frames));
}

function probeState() {
  const { clickAt, seen } = window.__bench;
  return { clickAt, seen };
}

/** Frame gaps between `from` and `to` (page times, ms); each long one with when it began (ms after `from`). */
function frameGaps(from, to, longGap) {
  const points = [from, ...window.__bench.frames.filter((t) => t > from && t < to), to];
  const gaps = points.slice(1).map((t, i) => ({ at: points[i] - from, ms: t - points[i] }));
  const long = gaps.filter((g) => g.ms > longGap).map((g) => [Math.round(g.at), Math.round(g.ms)]);
  return { max_gap_ms: Math.max(...gaps.map((g) => g.ms)), long_gaps: long.length, frames: points.length - 2, long_gaps_at_ms: long };
}

function messageListElements() {
  return document.querySelector('[data-testid="message-list"]')?.getElementsByTagName("*").length ?? null;
}

// ---------------------------------------------------------------- in this process

function cli(home, args) {
  const done = run(process.env.SWITCHBOARD_BIN, args, { env: { ...process.env, SWITCHBOARD_HOME: home } });
  if (done.status !== 0) throw new Error(`switchboard ${args.join(" ")}: ${done.stdout}${done.stderr}`);
}

/**
 * `cli` for a command that asks the model: it runs beside this process (the model server is in
 * it, and a synchronous run would leave it unable to answer).
 */
function cliAsking(home, args) {
  return new Promise((resolve, reject) => {
    execFile(process.env.SWITCHBOARD_BIN, args, { env: { ...process.env, SWITCHBOARD_HOME: home }, timeout: 120000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`switchboard ${args.join(" ")}: ${error.message}\n${stdout}${stderr}`)) : resolve(stdout),
    );
  });
}

/** Waits until the page has painted the words it watches for, or until `deadline` (Date.now()). */
async function waitShown(browser, deadline) {
  let state = null;
  while (Date.now() < deadline) {
    try {
      state = await browser.execute(probeState);
    } catch (e) {
      log(`the page did not answer (${e.message.split("\n")[0]}); asking again`);
    }
    if (state?.seen?.painted) return state;
    await sleep(500);
  }
  return state;
}

/** The page's frame gaps from `from` to `to`, once `to` has passed; null when the page does not answer. */
async function gapsUntil(browser, from, to) {
  if (to > Date.now()) await sleep(to - Date.now());
  try {
    return await browser.execute(frameGaps, from, to, LONG_GAP_MS);
  } catch (e) {
    log(`cannot read the frame gaps: ${e.message.split("\n")[0]}`);
    return null;
  }
}

/** PSS and RSS (MiB) of the WebKitWebProcess below the app running on `home`. */
function webProcessMemory(home) {
  const appPid = JSON.parse(fs.readFileSync(path.join(home, "data", "instance.json"), "utf8")).pid;
  const children = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // the process ended meanwhile
    }
  }
  const web = [];
  for (const stack = [appPid]; stack.length > 0; ) {
    const pid = stack.pop();
    stack.push(...(children.get(pid) ?? []));
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("WebKitWebProces")) web.push(pid);
    } catch {
      // the process ended meanwhile
    }
  }
  if (web.length !== 1) throw new Error(`expected one WebKitWebProcess below the app (pid ${appPid}), found ${web.length}`);
  const rollup = fs.readFileSync(`/proc/${web[0]}/smaps_rollup`, "utf8");
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)[1]);
  return { pss_mib: kib("Pss") / 1024, rss_mib: kib("Rss") / 1024 };
}

// ---------------------------------------------------------------- the streamed answer

/** About `STREAM_CHARS` of varied Markdown (headings, paragraphs, lists, inline code, code, tables), ending with STREAM_END. */
function longAnswer() {
  const words = "the request handler returns a value from the cache while the index keeps each query table column stream buffer client server session config file path error retry timeout worker queue batch schema".split(" ");
  let seed = 7;
  const next = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const sentence = () => {
    const s = Array.from({ length: 8 + next(12) }, () => words[next(words.length)]).join(" ");
    return `${s[0].toUpperCase()}${s.slice(1)}.`;
  };
  const blocks = [];
  let length = 0;
  for (let part = 1; length < STREAM_CHARS; part++) {
    const section = [
      `## Part ${part}: ${sentence().slice(0, 40)}`,
      `${sentence()} ${sentence()} The \`${words[next(words.length)]}_${part}\` field is **${words[next(words.length)]}**. ${sentence()}`,
      Array.from({ length: 4 }, (_, i) => `${i + 1}. ${sentence()} Use \`step_${part}_${i}()\` here.`).join("\n"),
      `\`\`\`rust\nfn part_${part}(input: &[u8]) -> usize {\n    input.iter().filter(|b| **b == b'${part % 10}').count()\n}\n\`\`\``,
      `| key | value |\n| --- | --- |\n| ${words[next(words.length)]} | ${part * 3} |\n| ${words[next(words.length)]} | ${part * 7} |`,
      `> ${sentence()}`,
      `- ${sentence()}\n- ${sentence()}\n- ${sentence()}`,
    ].join("\n\n");
    blocks.push(section);
    length += section.length + 2;
  }
  blocks.push(STREAM_END);
  return blocks.join("\n\n");
}

/**
 * An OpenAI-compatible server on a port of its own, the model of every home the bench makes.
 * A chat request whose last message contains STREAM_PROMPT gets `text` streamed on schedule
 * (chunk i at start + i × 20 ms, late chunks sent at once); any other request a short answer;
 * the model list names gpt-4o. `sent` records when the first and last chunks of the latest
 * long answer went out (Date.now()).
 */
async function startModel(text) {
  const chunks = [];
  for (let i = 0; i < text.length; i += CHUNK_CHARS) chunks.push(text.slice(i, i + CHUNK_CHARS));
  const sent = { first: null, last: null };
  const event = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 0, model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const part of req) body += part;
    if (req.method === "GET" && req.url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "gpt-4o", object: "model", owned_by: "bench" }] }));
      return;
    }
    if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const request = JSON.parse(body);
    const long = JSON.stringify(request.messages?.at(-1)?.content ?? "").includes(STREAM_PROMPT);
    if (!request.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion", created: 0, model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: "OK." }, finish_reason: "stop" }] }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(event({ role: "assistant", content: "" }));
    if (long) {
      sent.first = sent.last = null;
      const start = Date.now();
      for (let i = 0; i < chunks.length; i++) {
        const wait = start + i * CHUNK_EVERY_MS - Date.now();
        if (wait > 0) await sleep(wait);
        if (res.destroyed) return;
        res.write(event({ content: chunks[i] }));
        if (i === 0) sent.first = Date.now();
      }
      sent.last = Date.now();
    } else {
      res.write(event({ content: "OK." }));
    }
    res.write(event({}, "stop"));
    res.end("data: [DONE]\n\n");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    root: `http://127.0.0.1:${server.address().port}`,
    sent,
    async stop() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

// ---------------------------------------------------------------- scenarios

/** A fresh home whose one provider, "Mock", is `model`. */
function homeWith(model, label) {
  const home = tempHome(label);
  cli(home, ["provider", "add", "Mock", "--kind", "openai_compatible", "--base-url", `${model.root}/v1`, "--model", "gpt-4o"]);
  return home;
}

async function streamRun(model) {
  const home = homeWith(model, "bench-stream");
  const launched = Date.now();
  const app = await launch(home);
  try {
    const b = app.browser;
    await b.execute(installProbe);
    if (options.trace) await b.execute(installTrace);
    if (options.css) await b.execute(addStyle, options.css);
    const threads = options.threads ? startThreadProbe() : null;
    if (SEND_AFTER_MS !== null) await sleep(Math.max(0, launched + SEND_AFTER_MS - Date.now()));
    await b.$(tid("new-conversation")).click();
    const input = b.$(tid("composer-input"));
    await input.waitForEnabled({ timeout: 20000 });
    await input.setValue(STREAM_PROMPT);
    await b.execute(watchFor, STREAM_END);
    if (options.trace) await b.execute((minBusy) => window.__trace.start(minBusy), STREAM_BUSY_MS);
    const host = startHostProbe();
    await b.keys("Enter");
    const deadline = Date.now() + TIMEOUT_S.stream * 1000;
    const state = await waitShown(b, deadline);
    const seen = state?.seen?.painted ? state.seen : null;
    const { first, last } = model.sent;
    if (!last) throw new Error(`the server had not sent the whole answer after ${TIMEOUT_S.stream} s`);
    // the stream's end: its last words painted, or the deadline if they never were
    const end = seen?.painted ?? deadline;
    const gaps = await gapsUntil(b, first, end);
    const { stalls, steal_ms } = host.stop();
    if (threads) {
      const readings = await threads.stop();
      // the gaps over 40 ms, so that near misses are seen too
      const near = gaps ? (await b.execute(frameGaps, first, end, 40)).long_gaps_at_ms : [];
      for (const line of threadLines(near, first, readings)) log(`threads ${line}`);
      log(`threads over the whole stream: ${busiestThreads(readings, first, end, 12)}`);
      log(`the page's main thread, CPU ms in each 10 s of the stream: ${pageThreadPerWindow(readings, first, end, 10000).join(" ")}`);
    }
    if (options.trace) for (const line of await b.execute(busyLines, first, end)) log(`trace ${line}`);
    return {
      home,
      stream_s: (last - first) / 1000,
      ...gaps,
      // [ms after the first chunk, gap ms, the longest stall of the machine inside it (0: none)]
      long_gaps_at_ms: gaps ? withHostStalls(gaps.long_gaps_at_ms, first, stalls) : null,
      host_stalls: stalls.length,
      host_longest_stall_ms: Math.max(0, ...stalls.map(([, over]) => over)),
      host_steal_ms: Math.round(steal_ms),
      last_chunk_to_dom_ms: seen ? seen.dom - last : null,
      last_chunk_to_painted_ms: seen ? seen.painted - last : null,
    };
  } finally {
    await app.close();
  }
}

/** A home with `model` as its provider and the seeded conversations. */
async function seededHome(model) {
  const home = homeWith(model, "bench-seeded");
  const seeded = run("python3", ["bench/seed_conversations.py", "--home", home], { timeout: 120000 });
  if (seeded.status !== 0) throw new Error(`seeding failed: ${seeded.stderr}`);
  const conversations = JSON.parse(seeded.stdout);
  // Two branches near the end of the ten thousand, made as a person makes them (the command
  // line, the model answering "OK."), then the first versions shown again: the chat opens with
  // a switcher at its last answer and one at its third question from the end.
  const { id, last_answer_id: lastAnswer, questions } = conversations.ten_thousand;
  await cliAsking(home, ["chat", "--conversation", id, "--tools", "none", "--regenerate", lastAnswer]);
  await cliAsking(home, ["chat", "--conversation", id, "--tools", "none", "--edit", questions[0], "That question, asked again."]);
  cli(home, ["conversations", "reveal", id, lastAnswer]);
  return { home, conversations };
}

/** Opens "Empty", then `target` from the sidebar, in a fresh app on `seeded.home`. */
async function openRun(seeded, target, timeoutS, screenshot) {
  const app = await launch(seeded.home);
  try {
    const b = app.browser;
    await b.execute(installProbe);
    if (options.trace) await b.execute(installTrace);
    if (options.css) await b.execute(addStyle, options.css);
    await b.$(`${tid("conversation-item")}[data-id="${seeded.conversations.empty.id}"]`).click();
    await b.waitUntil(async () => b.execute(() => document.querySelector('[data-testid="message-list"]')?.textContent.includes("No messages yet") ?? false), {
      timeout: 20000,
      timeoutMsg: "Empty does not show",
    });
    await sleep(SETTLE_MS);
    const empty = webProcessMemory(seeded.home);
    await b.execute(watchFor, target.last_words);
    await b.$(`${tid("conversation-item")}[data-id="${target.id}"]`).click();
    const deadline = Date.now() + timeoutS * 1000;
    const state = await waitShown(b, deadline);
    const seen = state?.seen?.painted ? state.seen : null;
    if (!state?.clickAt) throw new Error("the click on the sidebar item was not seen in the page");
    const gaps = await gapsUntil(b, state.clickAt, seen ? seen.painted + TAIL_MS : deadline);
    const elements = await b.execute(messageListElements);
    if (options.trace && seen) for (const line of await b.execute(traceLines, state.clickAt, seen.painted + 300)) log(`trace ${line}`);
    if (seen) await sleep(Math.max(0, seen.painted + SETTLE_MS - Date.now()));
    const open = webProcessMemory(seeded.home);
    if (screenshot) log(`screenshot: ${await app.screenshot(screenshot)}`);
    return {
      click_to_dom_ms: seen ? seen.dom - state.clickAt : null,
      click_to_painted_ms: seen ? seen.painted - state.clickAt : null,
      ...gaps,
      elements,
      empty_pss_mib: empty.pss_mib,
      empty_rss_mib: empty.rss_mib,
      open_pss_mib: open.pss_mib,
      open_rss_mib: open.rss_mib,
    };
  } finally {
    await app.close();
  }
}

// ---------------------------------------------------------------- report

// [scenario, key, label, unit]. A time to the DOM or to paint that is null means "not shown
// within the scenario's timeout": longer than any that came.
const METRICS = [
  ["stream", "max_gap_ms", "longest frame gap, first chunk → end painted", "ms"],
  ["stream", "long_gaps", "frame gaps > 50 ms, first chunk → end painted", ""],
  ["stream", "last_chunk_to_dom_ms", "last chunk sent → in the DOM", "ms"],
  ["stream", "last_chunk_to_painted_ms", "last chunk sent → painted", "ms"],
  ["open", "click_to_dom_ms", "click → newest message in the DOM", "ms"],
  ["open", "click_to_painted_ms", "click → newest message painted", "ms"],
  ["open", "max_gap_ms", "longest frame gap, click → painted + 1 s", "ms"],
  ["open", "long_gaps", "frame gaps > 50 ms, click → painted + 1 s", ""],
  ["open", "elements", "DOM elements in message-list", ""],
  ["open", "empty_pss_mib", "web process PSS, Empty open", "MiB"],
  ["open", "open_pss_mib", "web process PSS, 10,000 messages open", "MiB"],
  ["open", "empty_rss_mib", "web process RSS, Empty open", "MiB"],
  ["open", "open_rss_mib", "web process RSS, 10,000 messages open", "MiB"],
  ["cards", "click_to_dom_ms", "click → closing answer in the DOM", "ms"],
  ["cards", "click_to_painted_ms", "click → closing answer painted", "ms"],
  ["cards", "max_gap_ms", "longest frame gap, click → painted + 1 s", "ms"],
  ["cards", "long_gaps", "frame gaps > 50 ms, click → painted + 1 s", ""],
  ["cards", "elements", "DOM elements in message-list", ""],
  ["cards", "open_pss_mib", "web process PSS, 200 tool cards open", "MiB"],
  ["short", "click_to_painted_ms", "click → newest answer painted", "ms"],
  ["short", "max_gap_ms", "longest frame gap, click → painted + 1 s", "ms"],
  ["short", "long_gaps", "frame gaps > 50 ms, click → painted + 1 s", ""],
  ["short", "elements", "DOM elements in message-list", ""],
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function shown(value, unit, scenario) {
  if (value === null || value === undefined) return "n/a";
  if (value === Infinity) return `> ${TIMEOUT_S[scenario]} s`;
  if (unit === "ms") return value >= 10000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
  if (unit === "MiB") return `${value.toFixed(0)} MiB`;
  return String(Math.round(value));
}

function table(results) {
  const lines = [`| scenario | metric | median of ${RUNS} | runs |`, "| --- | --- | ---: | --- |"];
  for (const [scenario, key, label, unit] of METRICS) {
    if (!results[scenario]) continue;
    const values = results[scenario].map((r) => r[key] ?? (/_to_(dom|painted)_ms$/.test(key) ? Infinity : null));
    const known = values.filter((v) => v !== null);
    const middle = known.length > 0 ? median(known) : null;
    lines.push(`| ${scenario} | ${label} | ${shown(middle, unit, scenario)} | ${values.map((v) => shown(v, unit, scenario)).join(", ")} |`);
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------- main

const startedAt = new Date();
const results = {};
const streamed = longAnswer();
const model = await startModel(streamed);
let seeded = null;
try {
  seeded = chosen.some((s) => s !== "stream") ? await seededHome(model) : null;
  for (const scenario of SCENARIOS.filter((s) => chosen.includes(s))) {
    results[scenario] = [];
    for (let i = 1; i <= RUNS; i++) {
      log(`${scenario}, run ${i} of ${RUNS}`);
      const loadavg = os.loadavg()[0]; // other work on the machine shows in every figure
      const r =
        scenario === "stream"
          ? await streamRun(model)
          : scenario === "open"
            ? await openRun(seeded, seeded.conversations.ten_thousand, TIMEOUT_S.open, i === 1 ? "bench-ten-thousand-open" : null)
            : await openRun(seeded, seeded.conversations[scenario === "cards" ? "tool_cards" : "short"], TIMEOUT_S[scenario], null);
      log(JSON.stringify(r));
      results[scenario].push({ ...r, loadavg_1min_at_start: loadavg });
    }
  }
} finally {
  await model.stop();
}

const report = table(results);
console.log(report);
const out = path.join(ROOT, "bench", "results", `conversation-view-${path.basename(options.app)}-${startedAt.toISOString().replace(/[:.]/g, "-")}.json`);
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(
  out,
  `${JSON.stringify(
    {
      app: process.env.SWITCHBOARD_BIN,
      started_at: startedAt.toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memory_gib: os.totalmem() / 2 ** 30 },
      settings: {
        streamed_chars: streamed.length,
        chunk_chars: CHUNK_CHARS,
        chunk_every_ms: CHUNK_EVERY_MS,
        timeout_s: TIMEOUT_S,
        tail_ms: TAIL_MS,
        settle_ms: SETTLE_MS,
        long_gap_ms: LONG_GAP_MS,
        runs: RUNS,
      },
      seeded_home: seeded?.home ?? null,
      results,
      table: report,
    },
    null,
    2,
  )}\n`,
);
log(`raw results: ${path.relative(ROOT, out)}`);
