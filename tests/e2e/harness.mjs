// Launches the real Switchboard binary under tauri-driver for one WebDriver session, with its
// own SWITCHBOARD_HOME, and stops everything it started.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { remote } from "webdriverio";

export const BIN = process.env.SWITCHBOARD_BIN;
export const ARTIFACTS = path.resolve("tests/e2e/artifacts");
fs.mkdirSync(ARTIFACTS, { recursive: true });

/** A selector for a data-testid. */
export const tid = (id, extra = "") => `[data-testid="${id}"]${extra}`;

/** A fresh, empty app home for one test; never the person's real folders. */
export function tempHome(label) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `switchboard-e2e-${label}-`));
}

/** `count` different ports, free a moment ago. Only for programs that cannot be given port 0
 * (tauri-driver and its WebKitWebDriver): all are held open until all are chosen, so they
 * differ from each other, and a start whose port was taken in between is retried (startDriver). */
async function portsFreeNow(count) {
  const servers = [];
  for (let i = 0; i < count; i++) {
    const server = net.createServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    servers.push(server);
  }
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  return ports;
}

/** `bytes` of a file, from its start or its end (a driver gone wrong can write gigabytes). */
function part(file, bytes, end) {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, bytes));
    fs.readSync(fd, buffer, 0, buffer.length, end ? size - buffer.length : 0);
    return buffer.toString("utf8");
  } finally {
    fs.closeSync(fd);
  }
}

async function waitForPort(port, child, log) {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`tauri-driver exited early:\n${log.tail()}`);
    if (await portAnswers(port)) return;
    await sleep(50);
  }
  throw new Error(`tauri-driver did not listen on ${port}:\n${log.tail()}`);
}

/**
 * Starts tauri-driver for `home`. It takes its ports on the command line, so they are probed
 * first; a start that fails (the driver died, or its WebKitWebDriver could not listen because
 * the port was taken between the probe and its bind, which leaves tauri-driver proxying to
 * whatever holds the port) is stopped and tried again on other ports.
 */
async function startDriver(home, env) {
  for (let attempt = 1; ; attempt++) {
    const [port, nativePort] = await portsFreeNow(2);
    // The driver's and the app's output go to a file, not a pipe: an app that outlived its
    // driver would otherwise hold this test process open.
    const logFile = path.join(ARTIFACTS, `${path.basename(home)}-${port}.log`);
    const logFd = fs.openSync(logFile, "a");
    const driver = spawn("tauri-driver", ["--port", String(port), "--native-port", String(nativePort)], {
      env: { ...process.env, SWITCHBOARD_HOME: home, RUST_LOG: "info", ...env },
      stdio: ["ignore", logFd, logFd],
    });
    fs.closeSync(logFd);
    // join: all of it (a test may check what it holds); tail: its end, for an error message.
    const log = { join: () => fs.readFileSync(logFile, "utf8"), tail: () => part(logFile, 64 * 1024, true) };
    const refused = () => /Unable to listen/.test(part(logFile, 64 * 1024, false));
    try {
      // tauri-driver listens before the WebKitWebDriver it starts does: wait for both.
      await waitForPort(port, driver, log);
      await waitForPort(nativePort, driver, log);
      await sleep(100);
      if (driver.exitCode !== null) throw new Error(`tauri-driver exited early:\n${log.tail()}`);
      if (refused()) throw new Error(`WebKitWebDriver could not listen on ${nativePort}:\n${log.tail()}`);
      return { driver, port, log };
    } catch (e) {
      if (driver.exitCode === null) {
        driver.kill("SIGTERM");
        await Promise.race([once(driver, "exit"), sleep(5000)]);
      }
      if (attempt >= 5) throw e;
    }
  }
}

/**
 * Starts the app on `home`. `env` adds or overrides variables for the app (for example a
 * D-Bus address that leads nowhere, to test a machine without a keychain).
 */
export async function launch(home, env = {}) {
  if (!BIN) throw new Error("SWITCHBOARD_BIN is not set");
  const { driver, port, log } = await startDriver(home, env);
  let browser;
  try {
    browser = await remote({
      hostname: "127.0.0.1",
      port,
      logLevel: "error",
      connectionRetryCount: 0,
      capabilities: {
        "tauri:options": { application: BIN },
        "wdio:enforceWebDriverClassic": true,
      },
    });
    await browser.$("#app > *").waitForExist({ timeout: 30000 });
  } catch (e) {
    driver.kill("SIGTERM");
    throw new Error(`the app did not start: ${e.message}\n${log.tail()}`);
  }
  return {
    browser,
    home,
    log,
    /**
     * Saves `name.png`: the window as it is (1200×780 in the theme the test set), and beside it
     * the same view at 1440×900 and in the other theme (`name@1440.png`, `name-dark.png` or
     * `name-light.png`, and both), so every picture can be looked at as DESIGN.md asks. Each
     * time, every control on the page must have an accessible name.
     */
    async screenshot(name) {
      const file = path.join(ARTIFACTS, `${name}.png`);
      await shoot(browser, file);
      await assertControlsNamed(browser, name);
      if (process.env.SWITCHBOARD_E2E_VARIANTS === "0") return file;
      const base = await browser.execute(() => ({
        theme: document.documentElement.dataset.theme ?? "light",
        width: window.innerWidth,
        height: window.innerHeight,
      }));
      const other = base.theme === "dark" ? "light" : "dark";
      try {
        await setTheme(browser, other);
        await shoot(browser, path.join(ARTIFACTS, `${name}-${other}.png`));
        await resizeView(browser, 1440, 900);
        await shoot(browser, path.join(ARTIFACTS, `${name}-${other}@1440.png`));
        await setTheme(browser, base.theme);
        await shoot(browser, path.join(ARTIFACTS, `${name}@1440.png`));
      } finally {
        await setTheme(browser, base.theme);
        await resizeView(browser, base.width, base.height);
      }
      return file;
    },
    /** Makes the view `width`×`height` (CSS pixels) and waits until the page has laid itself out. */
    resize: (width, height) => resizeView(browser, width, height),
    async close() {
      try {
        await browser.deleteSession();
      } catch {
        /* the app may already be gone */
      }
      // SIGTERM, not SIGKILL: tauri-driver then stops WebKitWebDriver and the app with it.
      if (driver.exitCode === null) {
        driver.kill("SIGTERM");
        await Promise.race([once(driver, "exit"), sleep(10000)]);
      }
      // The app removes instance.json when it exits; give it a moment, then stop it if it
      // is still there (stop what you start: no app may outlive its test).
      const info = path.join(home, "data", "instance.json");
      for (let i = 0; i < 100 && fs.existsSync(info); i++) await sleep(50);
      await stopLeftoverApp(info);
    },
  };
}

/**
 * The text of the first element matching `selector`, from the DOM. (WebKitWebDriver's
 * getText answers "" for text cut with `text-overflow: ellipsis`, so tests read textContent.)
 */
export async function textOf(browser, selector) {
  return browser.execute((sel) => document.querySelector(sel)?.textContent.trim() ?? null, selector);
}

/** Stops the app recorded in `instance.json` if its process is still alive. */
async function stopLeftoverApp(info) {
  let pid;
  try {
    pid = JSON.parse(fs.readFileSync(info, "utf8")).pid;
  } catch {
    return; // the app exited and removed the file
  }
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  console.log(`# note: the app (pid ${pid}) did not exit when its window closed; stopping it`);
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 100 && alive(); i++) await sleep(50);
  if (alive()) process.kill(pid, "SIGKILL");
}

/** The conversation titles shown in the sidebar, top to bottom. */
export async function sidebarTitles(browser) {
  return browser.execute(() =>
    [...document.querySelectorAll('[data-testid="conversation-title"]')].map((e) => e.textContent.trim()),
  );
}

/** The data-id of every conversation in the sidebar, top to bottom. */
export async function sidebarIds(browser) {
  return browser.execute(() =>
    [...document.querySelectorAll('[data-testid="conversation-item"]')].map((e) => e.getAttribute("data-id")),
  );
}

/** Sets an input's value in one step (as a paste would) and tells the UI it changed. */
export async function pasteInto(browser, selector, value) {
  await browser.execute(
    (sel, v) => {
      const el = document.querySelector(sel);
      el.focus();
      el.value = v;
      el.dispatchEvent(new Event("input", { bubbles: true }));
    },
    selector,
    value,
  );
}

/** Every file under `dir` whose bytes contain `needle`. */
export function filesContaining(dir, needle) {
  const hits = [];
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile() && fs.readFileSync(p).includes(Buffer.from(needle))) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** Whether process `pid` is running (and not a zombie). */
export function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 1).trim().startsWith("Z");
  } catch {
    return false;
  }
}

/** Runs a program and returns { status, stdout, stderr }. */
export function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 30000, ...options });
  return { status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "", error: r.error };
}

/** The X window whose title contains `title`, once it is shown (xdotool). */
export async function nativeWindow(title, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    // Only a window that is mapped (viewable) yet: focusing one that exists but is not shown
    // yet fails with BadMatch (X_SetInputFocus), seen once in a few dozen runs.
    const found = run("xdotool", ["search", "--onlyvisible", "--name", title]);
    const id = found.stdout.trim().split("\n").filter(Boolean).at(-1);
    if (id) return id;
    if (Date.now() > deadline) throw new Error(`no window titled “${title}” appeared`);
    await sleep(200);
  }
}

/** Waits until no window titled `title` is on the X screen (a native dialog was answered). */
export async function windowGone(title, ms = 15000) {
  const deadline = Date.now() + ms;
  while (run("xdotool", ["search", "--name", title]).stdout.trim()) {
    if (Date.now() > deadline) throw new Error(`the window “${title}” is still there`);
    await sleep(100);
  }
}

/** A picture of the webview as it is now. */
async function shoot(browser, file) {
  // Let the page render its latest state before the picture is taken.
  await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
  await sleep(250);
  // WebKitWebDriver takes its picture after the view's next presentation update; without
  // accelerated compositing (the app's choice on a machine with no GPU, such as this
  // Xvfb) an idle page has none, and the request hangs. An invisible pixel that changes
  // every frame while the picture is taken gives it one.
  await browser.execute(() => {
    const dot = document.createElement("div");
    dot.dataset.screenshotNudge = "";
    dot.style.cssText = "position:fixed;left:0;top:0;width:1px;height:1px;pointer-events:none;opacity:0";
    document.body.append(dot);
    let shown = false;
    const nudge = () => {
      shown = !shown;
      dot.style.opacity = shown ? "0.01" : "0";
      dot.dataset.frame = String(requestAnimationFrame(nudge));
    };
    nudge();
  });
  try {
    await browser.saveScreenshot(file);
  } finally {
    await browser.execute(() => {
      const dot = document.querySelector("[data-screenshot-nudge]");
      if (dot) cancelAnimationFrame(Number(dot.dataset.frame));
      dot?.remove();
    });
  }
}

/** Shows the page in `theme` ("light" or "dark") without changing the person's setting. */
async function setTheme(browser, theme) {
  await browser.execute((t) => {
    document.documentElement.dataset.theme = t;
  }, theme);
}

/**
 * Resizes the app's window so its view is `width`×`height`, over WebDriver (Set Window Rect),
 * or with xdotool where the driver cannot, and waits until the page sees the new size.
 */
async function resizeView(browser, width, height) {
  const now = () => browser.execute(() => [window.innerWidth, window.innerHeight]);
  let [w, h] = await now();
  if (w === width && h === height) return;
  const settled = async (ms) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      [w, h] = await now();
      if (w === width && h === height) return true;
      await sleep(50);
    }
    return false;
  };
  let asked = true;
  try {
    await browser.setWindowSize(width + (await browser.execute(() => window.outerWidth - window.innerWidth)), height + (await browser.execute(() => window.outerHeight - window.innerHeight)));
  } catch {
    asked = false;
  }
  // The driver may also answer without resizing: xdotool then, as where it refuses.
  if (!asked || !(await settled(2000))) {
    const id = run("xdotool", ["search", "--onlyvisible", "--name", "^Switchboard$"]).stdout.trim().split("\n")[0];
    if (id) run("xdotool", ["windowsize", id, String(width), String(height)]);
    await settled(5000);
  }
  assert.deepEqual([w, h], [width, height], `the view did not become ${width}×${height}`);
  await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
}

/**
 * Fails when a control on the page (a button, a link, a field, anything with a control's role)
 * has no accessible name: no text, no aria-label or aria-labelledby, no label, no title.
 */
export async function assertControlsNamed(browser, where) {
  const unnamed = await browser.execute(() => {
    const controls = document.querySelectorAll(
      'button, a[href], input:not([type="hidden"]), select, textarea, summary, [role="button"], [role="menuitem"], [role="menuitemcheckbox"], [role="menuitemradio"], [role="tab"], [role="switch"], [role="checkbox"], [role="option"]',
    );
    const named = (el) => {
      if (el.getAttribute("aria-label")?.trim()) return true;
      const by = el.getAttribute("aria-labelledby");
      if (by && by.split(/\s+/).some((id) => document.getElementById(id)?.textContent?.trim())) return true;
      if (el.labels && [...el.labels].some((l) => l.textContent?.trim())) return true;
      if (el.getAttribute("title")?.trim()) return true;
      if (["INPUT", "TEXTAREA"].includes(el.tagName)) return Boolean(el.getAttribute("placeholder")?.trim()) || ["submit", "button", "reset"].includes(el.type) && Boolean(el.value);
      if (el.tagName === "SELECT") return false;
      // textContent too: innerText is "" where the engine skips rendering (content-visibility).
      const text = (el.innerText || el.textContent || "").trim();
      if (text) return true;
      return [...el.querySelectorAll("img[alt], svg[aria-label]")].some((i) => (i.getAttribute("alt") ?? i.getAttribute("aria-label"))?.trim());
    };
    const shown = (el) => el.getClientRects().length > 0 || el.closest("[popover], dialog");
    return [...controls]
      .filter((el) => shown(el) && !el.closest('[aria-hidden="true"], [inert]') && !named(el))
      .map((el) => el.outerHTML.slice(0, 160));
  });
  assert.deepEqual(unnamed, [], `controls without an accessible name (${where})`);
}

/** A picture of the whole X screen (the webview screenshot does not show native dialogs). */
export function screenshotScreen(name) {
  const shot = run("import", ["-window", "root", path.join(ARTIFACTS, `${name}.png`)]);
  assert.equal(shot.status, 0, shot.stderr);
}

/** The largest window shown on the X screen (the app's own, when no dialog is up): its place and size. */
export function largestWindow() {
  const ids = run("xdotool", ["search", "--onlyvisible", "--name", "."]).stdout.trim().split("\n").filter(Boolean);
  let best = null;
  for (const id of ids) {
    const shape = run("xdotool", ["getwindowgeometry", "--shell", id]).stdout;
    const value = (key) => Number(new RegExp(`^${key}=(-?\\d+)$`, "m").exec(shape)?.[1] ?? 0);
    const place = { x: value("X"), y: value("Y"), width: value("WIDTH"), height: value("HEIGHT") };
    if (!best || place.width * place.height > best.width * best.height) best = place;
  }
  assert.ok(best, "no window is shown");
  return best;
}

/**
 * Drags `files` from a file manager's stand-in (tests/e2e/drag_source.py, GTK 3: a real X
 * drag and drop, text/uri-list) and drops them in the middle of the app's window, with the
 * mouse moved by xdotool as a person would. Returns once the drag has ended.
 */
export async function dropFilesOnWindow(files) {
  const target = largestWindow();
  const source = spawn("/usr/bin/python3", [path.join(path.dirname(new URL(import.meta.url).pathname), "drag_source.py"), ...files], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let said = "";
  source.stdout.on("data", (chunk) => (said += chunk));
  try {
    const deadline = Date.now() + 15000;
    while (!said.includes("ready")) {
      assert.ok(Date.now() < deadline, "the drag source never showed");
      assert.equal(source.exitCode, null, "the drag source stopped (python3-gi and GTK 3 are needed)");
      await sleep(100);
    }
    await sleep(300);
    const [x, y] = [Math.round(target.x + target.width / 2), Math.round(target.y + target.height / 2)];
    // Press on the source, pass the drag threshold, then move over the window in steps (GTK
    // and WebKit see "enter" and "over" before the drop) and let go.
    const steps = ["mousemove", "20", "20", "sleep", "0.3", "mousedown", "1", "sleep", "0.2", "mousemove", "30", "30", "sleep", "0.2", "mousemove", "60", "50", "sleep", "0.2"];
    for (let i = 1; i <= 6; i++) {
      steps.push("mousemove", String(Math.round(60 + ((x - 60) * i) / 6)), String(Math.round(50 + ((y - 50) * i) / 6)), "sleep", "0.15");
    }
    steps.push("sleep", "0.5", "mouseup", "1");
    const moved = run("xdotool", steps);
    assert.equal(moved.status, 0, moved.stderr);
    while (!said.includes("drag ended")) {
      assert.ok(Date.now() < deadline + 10000, "the drag never ended");
      await sleep(100);
    }
  } finally {
    source.kill();
  }
}

/** Presses `keys` in the native window `id` (no window manager under Xvfb: focus it directly). */
export function pressIn(id, keys) {
  // A window mapped a moment ago may not take focus yet (BadMatch): try again for a while.
  let focused;
  for (let tries = 0; tries < 20; tries++) {
    focused = run("xdotool", ["windowfocus", "--sync", id, "key", "--clearmodifiers", keys]);
    if (focused.status === 0 || !/BadMatch/.test(focused.stderr)) break;
    run("sleep", ["0.1"]);
  }
  assert.equal(focused.status, 0, focused.stderr);
}

/**
 * Resolves once the window has drawn `frames` more frames: what a frame's observers and effects
 * do (a card built as it scrolls into view) is done by then. The signal a check that something
 * did *not* happen on screen waits for, instead of a time.
 */
export async function framesDrawn(b, frames = 5) {
  await b.executeAsync((n, done) => {
    const step = () => (n-- <= 0 ? done() : requestAnimationFrame(step));
    step();
  }, frames);
}

/** Runs a command line verb of the app on `home`, which must succeed; its result. */
export function cli(home, args) {
  const done = run(BIN, args, { env: { ...process.env, SWITCHBOARD_HOME: home } });
  assert.equal(done.status, 0, `${args.join(" ")}: ${done.stderr}`);
  return done;
}

/**
 * An HTTP server on 127.0.0.1 (a port it chose) that answers 200 to anything and keeps what it
 * was asked: `{ url, requests, close() }`.
 */
export async function watchingServer() {
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "Access-Control-Allow-Origin": "*" });
    res.end("reached");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${server.address().port}/probe`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * Runs `body(home, mock)` with aimock playing the model (tool-loop.json) and a fresh home that
 * has it as its provider, `everything` and our `fault` server added too when asked; stops the mock however it ends.
 */
export async function withMockModel(label, { everything = false, fault = false, faultEnv = [], basicApp = false } = {}, body) {
  const mock = await startAimock(undefined, "tool-loop.json");
  const home = tempHome(label);
  try {
    cli(home, ["provider", "add", "Mock", "--kind", "openai_compatible", "--base-url", `${mock.root}/v1`, "--model", "gpt-4o"]);
    if (everything) {
      cli(home, ["mcp", "add", "everything", "--", path.resolve("tests/peers/node_modules/.bin/mcp-server-everything"), "stdio"]);
    }
    if (fault) {
      const env = faultEnv.flatMap((pair) => ["--env", pair]);
      cli(home, ["mcp", "add", "fault", ...env, "--", path.resolve("tests/peers/.venv/bin/python"), path.resolve("tests/peers/fault_server.py")]);
    }
    if (basicApp) {
      // The MCP Apps extension's own reference example (ext-apps' basic-server-vanillajs).
      cli(home, ["mcp", "add", "basic", "--", path.resolve("tests/peers/node_modules/.bin/mcp-server-basic-vanillajs"), "--stdio"]);
    }
    await body(home, mock);
  } finally {
    await mock.stop();
  }
}

/**
 * Clicks New conversation and waits until the new one is open. It is made in Rust before it is
 * shown: until then the composer on screen is the last conversation's, and text typed into it
 * stays there (seen once in twelve runs).
 */
export async function openNewConversation(b) {
  const openNow = () =>
    b.execute(() => document.querySelector('[data-testid="conversation-item"][aria-current="page"]')?.dataset.id ?? null);
  const before = await openNow();
  await b.$(tid("new-conversation")).click();
  await b.waitUntil(async () => ![null, before].includes(await openNow()), {
    timeout: 20000,
    timeoutMsg: "the new conversation was not opened in 20 s",
  });
}

/** Opens the Servers page and waits until server `name` runs. */
export async function serverRunning(b, name) {
  await b.$(tid("nav-servers")).click();
  const state = `${tid("server-item")}[data-name="${name}"] ${tid("server-state")}`;
  await b.waitUntil(async () => /^Running/.test(await textOf(b, state).catch(() => "")), {
    timeout: 30000,
    timeoutMsg: `${name} does not start`,
  });
}

/** Starts a new conversation and sends `text` in it; returns once it is shown as sent. */
export async function sendInNewConversation(b, text) {
  await openNewConversation(b);
  const input = b.$(tid("composer-input"));
  await input.waitForEnabled({ timeout: 20000 });
  await input.setValue(text);
  await b.waitUntil(async () => (await input.getValue()) === text, { timeout: 5000, timeoutMsg: `the composer does not hold "${text}"` });
  await b.keys("Enter");
  await b.waitUntil(
    async () =>
      b.execute(
        (sent) => [...document.querySelectorAll('[data-role="user"]')].some((m) => m.textContent.includes(sent)),
        text,
      ),
    { timeout: 20000, timeoutMsg: `"${text}" was not shown as sent in 20 s` },
  );
}

/**
 * A stand-in for the person's browser under `home`: `env` makes the app use it, and each address
 * it is asked to open is a line of the file `opened` (which exists once one was).
 */
export function fakeBrowser(home) {
  const opened = path.join(home, "browser-opened");
  const browser = path.join(home, "browser.sh");
  fs.writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`, { mode: 0o755 });
  return { opened, env: { BROWSER: browser } };
}

/** Types `text` into the native window `id` (a file dialog's name field, say). */
export function typeIn(id, text) {
  const typed = run("xdotool", ["windowfocus", "--sync", id, "type", "--delay", "20", "--clearmodifiers", text]);
  assert.equal(typed.status, 0, typed.stderr);
}

/**
 * Answers the native file dialog titled `title` with `file`: its name field (a save dialog's,
 * `replace`d) or its location field (an open dialog's, from Ctrl+L, given time to appear: keys
 * typed before it is there are lost) gets the whole path, then Return until the dialog is no
 * longer shown (GTK's completion may take the first Return; a closed dialog may be
 * kept unmapped, so it is looked for among the windows shown).
 */
export async function chooseInFileDialog(title, file, { replace = false } = {}) {
  const id = await nativeWindow(title);
  const shown = () => run("xdotool", ["search", "--onlyvisible", "--name", title]).stdout.trim() !== "";
  await sleep(300);
  pressIn(id, replace ? "ctrl+a" : "ctrl+l");
  await sleep(300);
  typeIn(id, file);
  for (let i = 0; i < 5; i++) {
    await sleep(400);
    if (!shown()) return;
    // Not pressIn: the dialog may close between the check and the key.
    run("xdotool", ["windowfocus", "--sync", id, "key", "--clearmodifiers", "Return"], { timeout: 3000 });
  }
  await sleep(400);
  if (shown()) {
    screenshotScreen("file-dialog-stuck");
    assert.fail("the file dialog did not close");
  }
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function portAnswers(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => { s.end(); resolve(true); });
    s.on("error", () => resolve(false));
  });
}

/**
 * Starts aimock (tests/peers) with the provider fixtures on 127.0.0.1:`port`, or on a port of
 * its own choosing, read back from what it prints, when none is given. Returns
 * `{ root, port, stop }`; stop() ends it.
 */
export async function startAimock(port, fixtures = "providers.json") {
  const cli = path.resolve("tests/peers/node_modules/@copilotkit/aimock/dist/cli.js");
  if (!fs.existsSync(cli)) throw new Error("aimock is not installed in tests/peers (scripts/bootstrap.sh test installs it)");
  const logFile = path.join(ARTIFACTS, `aimock-${port ?? "any"}-${process.pid}-${Date.now()}.log`);
  const logFd = fs.openSync(logFile, "a");
  // `info` is the level at which it prints the address it listens on.
  const child = spawn(
    "node",
    [cli, "--host", "127.0.0.1", "--port", String(port ?? 0), "--fixtures", path.resolve("tests/fixtures/aimock", fixtures), "--log-level", "info"],
    { stdio: ["ignore", logFd, logFd] },
  );
  fs.closeSync(logFd);
  let root;
  for (let i = 0; i < 400 && !root; i++) {
    if (child.exitCode !== null) throw new Error(`aimock exited early:\n${fs.readFileSync(logFile, "utf8")}`);
    root = /aimock server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(fs.readFileSync(logFile, "utf8"))?.[1];
    if (!root) await sleep(50);
  }
  if (!root) throw new Error(`aimock did not say where it listens:\n${fs.readFileSync(logFile, "utf8")}`);
  return {
    root,
    port: Number(new URL(root).port),
    /** What aimock received, oldest first (each request body up to its 64 KB journal cap). */
    async journal() {
      const answer = await fetch(`${root}/__aimock/journal?limit=1000`);
      return answer.json();
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill();
        await once(child, "exit");
      }
    },
  };
}

/** Opens the Providers page. */
export async function openProviders(b) {
  await b.$(tid("nav-providers")).click();
  await b.$(tid("provider-form")).waitForDisplayed();
}

/** Fills the "Add a provider" form; `preset` is a preset id (openai, lm_studio, custom, …). */
export async function fillProvider(b, { preset, name, baseUrl = "", model = "", key = "" }) {
  await b.$(`${tid("provider-form")} [name="preset"]`).selectByAttribute("value", preset);
  await pasteInto(b, `${tid("provider-form")} [name="name"]`, name);
  await pasteInto(b, `${tid("provider-form")} [name="base_url"]`, baseUrl);
  await pasteInto(b, `${tid("provider-form")} [name="default_model"]`, model);
  if (await b.$(`${tid("provider-form")} [name="api_key"]`).isExisting()) {
    await pasteInto(b, `${tid("provider-form")} [name="api_key"]`, key);
  }
}

/** Chooses the option with `value` in a <select> as a person would (any characters in it). */
export async function chooseOption(browser, selector, value) {
  await browser.execute(
    (sel, v) => {
      const el = document.querySelector(sel);
      el.focus();
      el.value = v;
      el.dispatchEvent(new Event("change", { bubbles: true }));
    },
    selector,
    value,
  );
}

/** The port `child` (started with tests/peers/loopback.cjs and LOOPBACK_REPORT_PORT) says it got. */
export function listeningPort(child, timeout) {
  return new Promise((resolve, reject) => {
    let said = "";
    const timer = setTimeout(() => reject(new Error(`no port said within ${timeout} ms: ${said}`)), timeout);
    child.stderr.on("data", (chunk) => {
      said += chunk;
      const found = /loopback: listening on 127\.0\.0\.1:(\d+)/.exec(said);
      if (found) {
        clearTimeout(timer);
        resolve(Number(found[1]));
      }
    });
    child.once("exit", (code) => reject(new Error(`it exited (${code}) before listening: ${said}`)));
  });
}

/** server-everything in an HTTP `mode` (streamableHttp, sse), bound to 127.0.0.1 port 0 by
 * tests/peers/loopback.cjs, which says the port it got on stderr (read it with listeningPort). */
export function everythingOverHttp(mode) {
  return spawn(path.resolve("tests/peers/node_modules/.bin/mcp-server-everything"), [mode], {
    env: { ...process.env, PORT: "0", LOOPBACK_REPORT_PORT: "1", NODE_OPTIONS: `--require ${path.resolve("tests/peers/loopback.cjs")}` },
    stdio: ["ignore", "ignore", "pipe"],
  });
}

/** The text of the conversation's last answer. */
export const ANSWER = `${tid("message-list")} > ol > li:last-child ${tid("answer-text")}`;

/** Waits for the approval dialog of a tool call and allows it once. */
export async function allowInDialog(b) {
  const dialog = b.$(tid("approval-dialog"));
  await dialog.waitForDisplayed({ timeout: 20000 });
  await b.$(tid("approval-submit")).click();
  await dialog.waitForDisplayed({ reverse: true, timeout: 10000 });
}

/** Waits until the last answer says `text`. */
export async function answerSays(b, text) {
  await b.waitUntil(async () => ((await textOf(b, ANSWER).catch(() => "")) ?? "").includes(text), {
    timeout: 30000,
    timeoutMsg: `the answer does not say “${text}”`,
  });
}

/**
 * Switches into the frame `selector` finds, finding it again while the page replaces it: a
 * card drawn again between the find and the switch leaves WebKitWebDriver holding a frame it
 * calls "Invalid frame ID object" (seen under load).
 */
export async function enterFrame(b, selector, timeout = 20000) {
  await b.waitUntil(
    async () => {
      try {
        await b.switchToFrame(await b.$(selector));
        return true;
      } catch (e) {
        if (/invalid frame|stale element|no such (element|frame)/i.test(String(e))) return false;
        throw e;
      }
    },
    { timeout, interval: 200, timeoutMsg: `could not enter the frame ${selector}` },
  );
}
