// The tool loop in the real window, against aimock playing the model and server-everything
// running the tool: send a prompt, approve the call in the in-app dialog, see the tool card and
// the streamed answer, then relaunch and see exactly the same chat. Then: a failed call retried
// from its card, a server crashing mid-call, a server's forms, and MCP Apps in a card. (Answers
// over time — Stop, a kill, a reload — are in streaming.test.mjs.)
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { allowInDialog, ANSWER, answerSays, chooseInFileDialog, enterFrame, cli, fakeBrowser, openNewConversation, serverRunning, launch, nativeWindow, pressIn, screenshotScreen, sendInNewConversation, textOf, tid, watchingServer, windowGone, withMockModel } from "./harness.mjs";

/** Opens a tool card and waits for its body, which the card builds only once it is open. */
async function openCard(card) {
  await card.$("summary").click();
  await card.$(tid("tool-result")).waitForExist({ timeout: 10000 });
}

/** Waits until the Servers page shows `name` running, then returns to the first conversation. */
test("a prompt, an approval in the dialog, a tool card and the answer — and the same after a relaunch", async () => {
  await withMockModel("chat", { everything: true }, async (home) => {
    let app = await launch(home);
    let live;
    try {
      const b = app.browser;
      await serverRunning(b, "everything");
      await openNewConversation(b);
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await input.setValue("Add 2 and 3");
      await b.keys("Enter");

      const dialog = b.$(tid("approval-dialog"));
      await dialog.waitForDisplayed({ timeout: 20000 });
      assert.match(await textOf(b, tid("approval-arguments")), /"a": 2,\s*"b": 3/);
      await app.screenshot("chat-approval");
      await b.$(tid("approval-more")).click();
      await b.$(tid("approval-allow-always")).click();
      // "Always" is confirmed in Rust's own dialog, outside the webview.
      const always = await nativeWindow("Stop asking before");
      screenshotScreen("chat-always-confirm");
      pressIn(always, "alt+s");

      await b.waitUntil(async () => (await textOf(b, ANSWER).catch(() => "")).includes("The sum of 2 and 3 is 5."), {
        timeout: 20000,
        timeoutMsg: "the answer does not appear",
      });
      const card = b.$(tid("tool-card"));
      assert.equal(await card.getAttribute("data-state"), "done");
      await openCard(card);
      assert.match(await textOf(b, tid("tool-result")), /5/);
      await b.$(tid("composer-send")).waitForExist({ timeout: 10000 });
      await app.screenshot("chat-answered");
      live = await b.execute((sel) => document.querySelector(sel).innerText, tid("message-list"));

      // "Always allow" is listed in Settings, and revoked there in one click.
      await b.$(tid("nav-settings")).click();
      const item = b.$(tid("approval-item"));
      await item.waitForDisplayed({ timeout: 10000 });
      assert.match(await textOf(b, tid("approval-item")), /everything · Get Sum.*in every conversation/s);
      await item.scrollIntoView();
      await app.screenshot("settings-approvals");
      await b.$(tid("approval-revoke")).click();
      await b.$(tid("approvals-empty")).waitForDisplayed({ timeout: 10000 });
      await b.$(tid("conversation-item")).click();
      await b.$(tid("tool-card")).waitForDisplayed({ timeout: 10000 });
      await openCard(b.$(tid("tool-card")));
    } finally {
      await app.close();
    }

    app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("conversation-item")).waitForDisplayed({ timeout: 20000 });
      assert.equal(await textOf(b, tid("conversation-title")), "Add 2 and 3");
      await b.$(tid("conversation-item")).click();
      await b.$(tid("tool-card")).waitForDisplayed({ timeout: 20000 });
      await openCard(b.$(tid("tool-card")));
      const reopened = await b.execute((sel) => document.querySelector(sel).innerText, tid("message-list"));
      assert.equal(reopened, live);
      await app.screenshot("chat-reopened");
    } finally {
      await app.close();
    }
  });
});

/** Sends `prompt` in a new conversation and allows the call it makes (once). */
async function askAndAllow(b, prompt) {
  await sendInNewConversation(b, prompt);
  await allowInDialog(b);
}

test("a failed call's Retry runs it again and the model goes on; calls described in words; a server that crashes mid-call is a red card with its last words", async () => {
  await withMockModel("chat-retry", { fault: true }, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "fault");
      // Settings › Describe each tool call in words (used by the last prompt).
      await b.$(tid("nav-settings")).click();
      const describe = b.$('[name="describe_calls"]');
      await describe.waitForDisplayed({ timeout: 10000 });
      await describe.click();
      await describe.scrollIntoView();
      await app.screenshot("settings-describe");
      await b.$(tid("settings-save")).click();
      await b.$(tid("settings-saved")).waitForDisplayed({ timeout: 10000 });
      await askAndAllow(b, "Try the flaky tool");
      await answerSays(b, "The flaky tool failed");
      await b.$(tid("composer-send")).waitForExist({ timeout: 10000 });
      const failed = b.$(tid("tool-card"));
      assert.equal(await failed.getAttribute("data-state"), "error");
      await failed.$(tid("retry-call")).click();
      await allowInDialog(b);
      await answerSays(b, "The flaky tool worked when you ran it again.");
      const cards = await b.$$(tid("tool-card"));
      assert.equal(cards.length, 2);
      assert.equal(await cards[1].getAttribute("data-state"), "done");
      assert.equal((await b.$$(tid("retry-call"))).length, 0, "the failed call's Retry has done its job");
      await openCard(cards[1]);
      assert.match(await cards[1].$(tid("tool-result")).getText(), /worked for k1/);
      await app.screenshot("chat-retry");

      await askAndAllow(b, "Show me progress");
      await answerSays(b, "It finished in three steps.");
      assert.equal(await textOf(b, tid("tool-description")), "Counting through three slow steps");
      await app.screenshot("chat-described");

      await askAndAllow(b, "Crash the server");
      await answerSays(b, "The server crashed while working; I could not finish.");
      const crashed = b.$(tid("tool-card"));
      assert.equal(await crashed.getAttribute("data-state"), "error");
      await openCard(crashed);
      assert.match(await textOf(b, tid("tool-result")), /about to crash on purpose/);
      await app.screenshot("chat-crash");

    } finally {
      await app.close();
    }
  });
});

test("a server's form (elicitation) is shown over the chat, filled in and sent; the tool gets the answer", async () => {
  await withMockModel("chat-form", { fault: true }, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "fault");
      await askAndAllow(b, "Ask me where to deploy");
      const form = b.$(tid("mcp-form"));
      await form.waitForDisplayed({ timeout: 20000 });
      assert.equal(await textOf(b, tid("mcp-form-message")), "Where should this deploy go?");
      const replicas = form.$('input[type="number"]');
      assert.equal(await replicas.getValue(), "2", "the server's default is filled in");
      await app.screenshot("mcp-form");
      await form.$("select").selectByAttribute("value", "production");
      await replicas.setValue("3");
      await b.$(tid("mcp-form-send")).click();
      await form.waitForDisplayed({ reverse: true, timeout: 10000 });
      await answerSays(b, "It goes to production with 3 replicas, as you said.");
      const card = b.$(tid("tool-card"));
      await openCard(card);
      assert.match(await textOf(b, tid("tool-result")), /chose production with 3 replicas/);
      await app.screenshot("chat-form-answered");
    } finally {
      await app.close();
    }
  });
});
test("a server asks the person to visit a page (URL mode, inside a 2026-07-28 input_required result): its host is shown, Rust opens it only on Open", async () => {
  await withMockModel("chat-url-form", { fault: true }, async (home) => {
    const { opened, env } = fakeBrowser(home);
    const app = await launch(home, env);
    try {
      const b = app.browser;
      await serverRunning(b, "fault");
      await askAndAllow(b, "Pay for the upgrade");
      const form = b.$(tid("mcp-form"));
      await form.waitForDisplayed({ timeout: 20000 });
      assert.equal(await textOf(b, tid("mcp-form-url-host")), "pay.example.com");
      assert.equal(await textOf(b, tid("mcp-form-url")), "https://pay.example.com/checkout?order=42");
      assert.match(await textOf(b, tid("mcp-form-message")), /Pay for the upgrade on the payment page/);
      assert.equal(fs.existsSync(opened), false, "nothing opens before the person clicks Open");
      await app.screenshot("mcp-form-url");
      // Rust asks in its own dialog, showing the address; no keeps the request open.
      await b.$(tid("mcp-form-open")).click();
      let dialog = await nativeWindow("Open the page “fault” asks for, at pay.example.com?");
      screenshotScreen("mcp-form-url-native");
      pressIn(dialog, "Escape");
      await windowGone("Open the page “fault” asks for");
      assert.ok(await form.isDisplayed(), "a no leaves the request open");
      assert.equal(fs.existsSync(opened), false, "nothing opens on a no");
      await b.$(tid("mcp-form-open")).click();
      dialog = await nativeWindow("Open the page “fault” asks for, at pay.example.com?");
      pressIn(dialog, "alt+o");
      await form.waitForDisplayed({ reverse: true, timeout: 10000 });
      await b.waitUntil(() => fs.existsSync(opened), { timeout: 10000, timeoutMsg: "the browser was not asked to open the page" });
      assert.equal(fs.readFileSync(opened, "utf8").trim(), "https://pay.example.com/checkout?order=42");
      await answerSays(b, "You went to the payment page; the upgrade is on its way.");
      await app.screenshot("chat-url-form-visited");
    } finally {
      await app.close();
    }
  });
});

test("an MCP App in a tool card: the call's result shown in its sandboxed frame, no way to the app's commands, the parent or the network; its tool call asks first", async () => {
  // The app tries a server this test runs on loopback: blocked means no request arrived there,
  // offline or not.
  const watcher = await watchingServer();
  try {
    await mcpAppInACard(watcher);
  } finally {
    await watcher.close();
  }
});

async function mcpAppInACard(watcher) {
  await withMockModel("chat-mcp-app", { fault: true, faultEnv: [`FAULT_NETWORK_PROBE=${watcher.url}`] }, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "fault");
      await askAndAllow(b, "Show the Oslo dashboard");
      await answerSays(b, "Here is the dashboard for Oslo.");
      const frame = b.$(tid("mcp-app-frame"));
      await frame.waitForDisplayed({ timeout: 20000 });
      assert.equal(await frame.getAttribute("sandbox"), "allow-scripts");
      assert.match(await textOf(b, tid("mcp-app-caption")), /fault/);
      await enterFrame(b, tid("mcp-app-frame"));
      const probe = () => b.$("#probe").getText();
      const probed = (text) => ["host: Switchboard", "network: ", "ipc_fetch: ", "tauri_fetch: ", "invoke: ", "input: "].every((k) => text.includes(k));
      await b.waitUntil(async () => probed(await probe()), { timeout: 20000 }).catch(async () => {
        throw new Error(`the app did not finish probing; it found:\n${await probe()}`);
      });
      const found = await probe();
      for (const wall of ["parent: blocked", "storage: blocked", "ipc_fetch: blocked", "tauri_fetch: blocked", "invoke: blocked", "network: blocked"]) {
        assert.ok(found.includes(wall), `${wall} in:\n${found}`);
      }
      // The fetch was stopped by the frame's policy, which reported it (not a network that is
      // down), and nothing reached the server it tried.
      await b.waitUntil(async () => (await probe()).includes("csp-connect-src: blocked"), {
        timeout: 10000,
        timeoutMsg: "no policy violation was reported for the network fetch",
      });
      assert.deepEqual(watcher.requests, [], "the app's frame reached the network");
      assert.match(found, /input: \{"city":"Oslo"\}/);
      await b.waitUntil(async () => (await b.$("#result").getText()) === "result: dashboard for Oslo: 21 degrees", {
        timeout: 10000,
        timeoutMsg: "the app was not handed the call's result",
      });
      // The app asks for a tool of its server: the person is asked, outside the webview.
      await b.$("#echo").click();
      await b.switchToParentFrame();
      let dialog = await nativeWindow("Let the “fault” app run “echo”?");
      screenshotScreen("mcp-app-asks");
      pressIn(dialog, "Escape");
      await enterFrame(b, tid("mcp-app-frame"));
      await b.waitUntil(async () => /^refused: .*you said no/.test(await b.$("#echoed").getText()), {
        timeout: 10000,
        timeoutMsg: "a call the person refused was not refused",
      });
      await b.$("#echo").click();
      await b.switchToParentFrame();
      dialog = await nativeWindow("Let the “fault” app run “echo”?");
      pressIn(dialog, "alt+r");
      await enterFrame(b, tid("mcp-app-frame"));
      await b.waitUntil(async () => (await b.$("#echoed").getText()) === "echoed: from the app", {
        timeout: 10000,
        timeoutMsg: "the app's allowed call did not come back",
      });
      await b.switchToParentFrame();
      await app.screenshot("chat-mcp-app");
    } finally {
      await app.close();
    }
  });
  // Blocked means it never left the frame: the loopback server heard nothing.
  assert.deepEqual(watcher.requests, [], "the app's frame reached the network");
}

test("the MCP Apps reference example (ext-apps' basic-server-vanillajs) shows the server's time in its card through Switchboard's bridge", async () => {
  await withMockModel("chat-reference-app", { basicApp: true }, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "basic");
      await askAndAllow(b, "What time is it on the server");
      await answerSays(b, "The server's clock is in its app.");
      const frame = b.$(tid("mcp-app-frame"));
      await frame.waitForDisplayed({ timeout: 20000 });
      await enterFrame(b, tid("mcp-app-frame"));
      await b.waitUntil(async () => /^\d{4}-\d{2}-\d{2}T/.test(await b.$("#server-time").getText()), {
        timeout: 20000,
        timeoutMsg: "the reference app did not show the time from the call's result",
      });
      await b.switchToParentFrame();
      await app.screenshot("chat-reference-app");
    } finally {
      await app.close();
    }
  });
});
