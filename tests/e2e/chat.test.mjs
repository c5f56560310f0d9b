// The tool loop in the real window, against aimock playing the model and server-everything
// running the tool: send a prompt, approve the call in the in-app dialog, see the tool card and
// the streamed answer, then relaunch and see exactly the same chat. Then: Stop mid-answer, the
// app killed mid-answer (everything shown is there after a relaunch), a failed call retried
// from its card, a server crashing mid-call, and the tools panel.
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

/** The newest conversation's last answer as the database keeps it (the CLI reads it). */
function storedAnswer(home) {
  const [newest] = JSON.parse(cli(home, ["conversations", "list", "--json"]).stdout);
  const shown = JSON.parse(cli(home, ["conversations", "show", newest.id, "--json"]).stdout);
  return shown.messages.filter((m) => m.role === "assistant").at(-1);
}

const STORY = "Once upon a time a switchboard operator connected every call in town, one plug at a time, all night.";

/** Sends the slow story prompt in a new conversation and waits until part of it is shown. */
async function startStory(b, atLeast) {
  await openNewConversation(b);
  const input = b.$(tid("composer-input"));
  await input.waitForEnabled({ timeout: 20000 });
  await input.setValue("Tell me a slow story");
  await b.keys("Enter");
  await b.waitUntil(async () => ((await textOf(b, ANSWER).catch(() => "")) ?? "").length >= atLeast, {
    timeout: 20000,
    timeoutMsg: "the answer does not start streaming",
  });
}

test("Stop mid-answer keeps what was shown, marked stopped, and the composer is back", async () => {
  await withMockModel("chat-stop", {}, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await startStory(b, 20);
      await b.$(tid("composer-stop")).click();
      await b.$(tid("composer-send")).waitForExist({ timeout: 10000 });
      const kept = await textOf(b, ANSWER);
      assert.ok(kept.length >= 20 && kept.length < STORY.length, `kept: ${kept}`);
      assert.ok(STORY.startsWith(kept), `kept: ${kept}`);
      await b.waitUntil(async () => (await textOf(b, tid("answer-status")).catch(() => "")) === "Stopped", {
        timeout: 10000,
        timeoutMsg: "the answer is not marked stopped",
      });
      // Nothing more arrives after Stop: the run is over and what it saved is what is shown.
      await b.waitUntil(() => storedAnswer(home).status === "interrupted", { timeout: 10000, interval: 250, timeoutMsg: "the stopped answer is not saved as interrupted" });
      assert.equal(storedAnswer(home).content, kept);
      assert.equal(await textOf(b, ANSWER), kept);
      await app.screenshot("chat-stopped");
    } finally {
      await app.close();
    }
  });
});

test("the app killed with SIGKILL mid-answer: after a relaunch everything that was shown is there", async () => {
  await withMockModel("chat-kill", {}, async (home) => {
    let app = await launch(home);
    let shown;
    try {
      const b = app.browser;
      await startStory(b, 30);
      const { pid } = JSON.parse(fs.readFileSync(path.join(home, "data", "instance.json"), "utf8"));
      shown = await textOf(b, ANSWER);
      process.kill(pid, "SIGKILL");
    } finally {
      await app.close();
    }
    assert.ok(shown.length >= 30 && STORY.startsWith(shown), `shown: ${shown}`);

    app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("conversation-item")).waitForDisplayed({ timeout: 20000 });
      await b.$(tid("conversation-item")).click();
      await b.$(tid("answer-text")).waitForDisplayed({ timeout: 20000 });
      const saved = await textOf(b, ANSWER);
      // What was on screen when the app died is there, and nothing that was not streamed.
      assert.ok(saved.startsWith(shown), `shown: ${shown}\nsaved: ${saved}`);
      assert.ok(STORY.startsWith(saved), `saved: ${saved}`);
      assert.equal(await textOf(b, tid("answer-status")), "Interrupted");
      await app.screenshot("chat-after-kill");
    } finally {
      await app.close();
    }
  });
});

test("the tools panel switches a server's tools off, and the model is not offered them", async () => {
  await withMockModel("chat-tools", { everything: true }, async (home, mock) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "everything");
      await openNewConversation(b);
      await b.$(tid("tools-button")).click();
      const panel = b.$(tid("tools-panel"));
      await panel.waitForDisplayed({ timeout: 20000 });
      await b.waitUntil(async () => /tools offered/.test((await textOf(b, tid("tools-summary")).catch(() => "")) ?? ""), {
        timeout: 20000,
        timeoutMsg: "the panel lists no tools",
      });
      const before = await textOf(b, tid("tools-summary"));
      const total = Number(/of (\d+) tools/.exec(before)[1]);
      assert.ok(total > 5, before);
      // One tool off, then the whole server off.
      await b.$(`${tid("tools-tool-switch")}[data-tool="echo"]`).click();
      await b.waitUntil(async () => (await textOf(b, tid("tools-summary"))).startsWith(`${total - 1} of ${total}`), {
        timeout: 10000,
        timeoutMsg: "switching echo off is not counted",
      });
      await app.screenshot("tools-panel");
      // From "some on", the server's switch first turns all its tools on, then all off.
      await b.$(tid("tools-server-switch")).click();
      await b.waitUntil(async () => (await textOf(b, tid("tools-summary"))).startsWith(`${total} of ${total}`), {
        timeout: 10000,
        timeoutMsg: "switching the server on is not counted",
      });
      await b.$(tid("tools-server-switch")).click();
      await b.waitUntil(async () => (await textOf(b, tid("tools-summary"))).startsWith(`0 of ${total}`), {
        timeout: 10000,
        timeoutMsg: "switching the server off is not counted",
      });

      const input = b.$(tid("composer-input"));
      await input.setValue("Which tools do you have");
      await b.keys("Enter");
      await b.waitUntil(async () => (await textOf(b, ANSWER).catch(() => "")) === "I can see the tools you gave me.", {
        timeout: 20000,
        timeoutMsg: "the answer does not appear",
      });
      // What the model was offered, from what aimock received.
      const journal = await (await fetch(`${mock.root}/__aimock/journal?limit=1000`)).json();
      const asked = journal.filter((e) => e.path === "/v1/chat/completions" && JSON.stringify(e.body).includes("Which tools do you have"));
      assert.equal(asked.length, 1);
      assert.deepEqual(asked[0].body.tools ?? [], [], "a switched-off server's tools were offered");
    } finally {
      await app.close();
    }
  });
});

const LONG_STORY =
  "Once upon a long night the switchboard hummed. An operator named Ada answered every light on the board, patched the doctor through to the farm, the mayor to the baker, and a child to a grandmother three valleys away. Near dawn a single lamp stayed lit; she plugged it in and heard only rain, so she listened until it stopped. The end.";

/** Starts the ten-second story in a new conversation and waits until `atLeast` characters show. */
async function startLongStory(b, atLeast) {
  await openNewConversation(b);
  const input = b.$(tid("composer-input"));
  await input.waitForEnabled({ timeout: 20000 });
  await input.setValue("Tell me a long slow story");
  await b.keys("Enter");
  await growsTo(b, atLeast);
}

async function growsTo(b, atLeast) {
  await b.waitUntil(async () => ((await textOf(b, ANSWER).catch(() => "")) ?? "").length >= atLeast, {
    timeout: 20000,
    timeoutMsg: `the answer does not reach ${atLeast} characters`,
  });
  return textOf(b, ANSWER);
}

test("a streaming answer outlives a visit to Settings and a reload: it is live when shown again, Stop works, and its end pulls the window nowhere", async () => {
  await withMockModel("chat-sessions", {}, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      // Away and back mid-answer: the answer is still streaming, with its Stop.
      await startLongStory(b, 20);
      await b.$(tid("nav-settings")).click();
      await b.$(tid("settings-form")).waitForDisplayed({ timeout: 10000 });
      await b.$(tid("conversation-item")).click();
      const back = await growsTo(b, 40);
      assert.ok(LONG_STORY.startsWith(back), `shown: ${back}`);
      assert.ok(await b.$(tid("composer-stop")).isDisplayed(), "Stop is there");
      const later = await growsTo(b, back.length + 10);
      assert.ok(later.length > back.length, "it goes on live");

      // Away while it ends: Settings stays open.
      await b.$(tid("nav-settings")).click();
      await b.$(tid("settings-form")).waitForDisplayed({ timeout: 10000 });
      // Waits for the answer's end as the database records it, not for a time.
      await b.waitUntil(() => storedAnswer(home).status === "complete", { timeout: 30000, interval: 500, timeoutMsg: "the answer never ended" });
      assert.ok(await b.$(tid("settings-form")).isDisplayed(), "the window stayed on Settings");
      assert.equal(await b.$(tid("message-list")).isExisting(), false);
      await b.$(tid("conversation-item")).click();
      await b.waitUntil(async () => (await textOf(b, ANSWER).catch(() => "")) === LONG_STORY, {
        timeout: 20000,
        timeoutMsg: "the finished answer is not shown whole",
      });
      await b.$(tid("composer-send")).waitForExist({ timeout: 10000 });

      // A reload mid-answer: the same conversation comes back and the answer finishes on screen.
      await startLongStory(b, 20);
      await b.execute(() => location.reload());
      await b.$(tid("message-list")).waitForDisplayed({ timeout: 30000 });
      await b.$(tid("composer-stop")).waitForDisplayed({ timeout: 10000 });
      await app.screenshot("chat-reloaded-mid-answer");
      await b.waitUntil(async () => (await textOf(b, ANSWER).catch(() => "")) === LONG_STORY, {
        timeout: 30000,
        timeoutMsg: "the reloaded window does not see the answer finish",
      });
      await b.$(tid("composer-send")).waitForExist({ timeout: 10000 });

      // Away and back once more, then Stop: it stops.
      await startLongStory(b, 20);
      await b.$(tid("nav-settings")).click();
      await b.$(tid("settings-form")).waitForDisplayed({ timeout: 10000 });
      await b.$(tid("conversation-item")).click();
      await b.$(tid("composer-stop")).waitForDisplayed({ timeout: 10000 });
      await b.$(tid("composer-stop")).click();
      await b.$(tid("composer-send")).waitForExist({ timeout: 10000 });
      await b.waitUntil(async () => (await textOf(b, tid("answer-status")).catch(() => "")) === "Stopped", {
        timeout: 10000,
        timeoutMsg: "the answer is not marked stopped",
      });
      const kept = await textOf(b, ANSWER);
      assert.ok(kept.length < LONG_STORY.length && LONG_STORY.startsWith(kept), `kept: ${kept}`);
    } finally {
      await app.close();
    }
  });
});

test("the Servers page shows a new tool, a crash and the restart as Rust pushes them", async () => {
  await withMockModel("servers-pushed", { fault: true }, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "fault");
      const state = `${tid("server-item")}[data-name="fault"] ${tid("server-state")}`;
      const count = `${tid("server-item")}[data-name="fault"] ${tid("server-tool-count")}`;
      const tools = Number(/^(\d+) tools?$/.exec(await textOf(b, count))[1]);

      // A tool the server adds while the person chats is on the page when they open it.
      await askAndAllow(b, "Grow a tool");
      await b.waitUntil(async () => (await textOf(b, ANSWER).catch(() => "")) === "Added a tool called sprout.", {
        timeout: 20000,
        timeoutMsg: "the model does not answer after growing a tool",
      });
      await b.$(tid("nav-servers")).click();
      await b.waitUntil(async () => (await textOf(b, state).catch(() => "")) === "Running" && (await textOf(b, count).catch(() => "")) === `${tools + 1} tools`, {
        timeout: 10000,
        timeoutMsg: "the new tool is not shown",
      });

      // The server dies: the page says so, then shows it running again, each as it happens.
      await b.execute((sel) => {
        window.__serverStates = [];
        let last = "";
        new MutationObserver(() => {
          const now = document.querySelector(sel)?.textContent.trim() ?? "";
          if (now !== last) window.__serverStates.push([Date.now(), (last = now)]);
        }).observe(document.body, { childList: true, characterData: true, subtree: true });
      }, state);
      const { pgid } = JSON.parse(fs.readFileSync(path.join(home, "data", "mcp-processes.json"), "utf8")).fault;
      const killed = Date.now();
      process.kill(-pgid, "SIGKILL");
      await b.waitUntil(async () => /^Crashed/.test((await textOf(b, state).catch(() => "")) ?? ""), {
        timeout: 10000,
        timeoutMsg: "the crash is not shown",
      });
      await b.waitUntil(async () => /^Running/.test((await textOf(b, state).catch(() => "")) ?? ""), {
        timeout: 20000,
        timeoutMsg: "the restart is not shown",
      });
      const seen = await b.execute(() => window.__serverStates);
      const crashed = seen.find(([, text]) => text.startsWith("Crashed"));
      assert.ok(crashed, JSON.stringify(seen));
      console.log(`the crash was shown ${crashed[0] - killed} ms after the kill`);
      await app.screenshot("servers-restarted");
    } finally {
      await app.close();
    }
  });
});

/** Clicks the canvas's file named `name`. */
async function openInCanvas(b, name) {
  const clicked = await b.execute(
    (sel, wanted) => {
      const file = [...document.querySelectorAll(sel)].find((f) => f.textContent.includes(wanted));
      file?.click();
      return Boolean(file);
    },
    tid("canvas-file"),
    name,
  );
  assert.ok(clicked, `${name} is in the canvas`);
}

test("a result's files open in the canvas at its primary file; an HTML file's script never runs; Save As writes the very bytes", async () => {
  await withMockModel("canvas", { fault: true }, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "fault");
      await askAndAllow(b, "Make the quarterly report");
      await answerSays(b, "The report is ready");
      // The result asked for the canvas at scores.csv: it is open there, as a table.
      const canvas = b.$(tid("canvas"));
      await canvas.waitForDisplayed({ timeout: 15000 });
      const current = `${tid("canvas-file")}[aria-current="true"]`;
      await b.waitUntil(async () => ((await textOf(b, current).catch(() => "")) ?? "").includes("scores.csv"), {
        timeout: 10000,
        timeoutMsg: "the canvas is not at the primary file",
      });
      await b.$(tid("canvas-table")).waitForDisplayed({ timeout: 10000 });
      assert.equal(await textOf(b, tid("canvas-table")), "namescoreAda92Grace88Linus75");
      const names = await b.execute((sel) => [...document.querySelectorAll(sel)].map((f) => f.textContent), tid("canvas-file"));
      assert.equal(names.length, 3, names.join(" | "));
      for (const name of ["report.html", "scores.csv", "image-1.png"]) {
        assert.ok(names.some((n) => n.includes(name)), `${name} is listed: ${names.join(" | ")}`);
      }
      // At 1200 px the sidebar folds away while the canvas is open; the splitter's arrow keys set its width.
      assert.equal(await b.$(tid("sidebar")).isDisplayed(), false, "the sidebar folds beside the canvas at 1200 px");
      const splitter = b.$(tid("canvas-splitter"));
      const wide = Number(await splitter.getAttribute("aria-valuenow"));
      await b.execute((sel) => document.querySelector(sel).focus(), tid("canvas-splitter"));
      await b.keys("ArrowLeft");
      assert.equal(Number(await splitter.getAttribute("aria-valuenow")), wide + 16);
      await app.screenshot("canvas-csv");

      // Save As… through the native dialog writes exactly the file's bytes.
      const out = path.join(home, "saved-scores.csv");
      await b.$(tid("canvas-save")).click();
      await nativeWindow("Save As");
      await chooseInFileDialog("Save As", out, { replace: true });
      await b.$(tid("canvas-saved")).waitForDisplayed({ timeout: 15000 });
      assert.equal(await textOf(b, tid("canvas-saved")), `Saved to ${out}`);
      assert.equal(fs.readFileSync(out, "utf8"), "name,score\nAda,92\nGrace,88\nLinus,75\n");

      // The HTML file: its source first; rendered, in a frame where its script does not run.
      await openInCanvas(b, "report.html");
      await b.$(tid("canvas-code")).waitForDisplayed({ timeout: 10000 });
      assert.match(await textOf(b, tid("canvas-code")), /<script>/);
      await b.$(tid("canvas-render")).click();
      const frame = b.$(tid("canvas-html-frame"));
      await frame.waitForDisplayed({ timeout: 10000 });
      assert.equal(await frame.getAttribute("sandbox"), "");
      const title = await b.getTitle();
      await enterFrame(b, tid("canvas-html-frame"));
      let heading = null;
      for (let i = 0; i < 20 && heading === null; i++) {
        heading = await b.execute(() => document.querySelector("h1")?.textContent ?? null);
        if (heading === null) await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(await b.execute(() => document.location.href), "about:srcdoc");
      await b.switchToParentFrame();
      assert.equal(heading, "Quarterly report", "the page's script did not run");
      assert.equal(await b.getTitle(), title);
      await app.screenshot("canvas-html");

      // The picture of 5 MB is there as an image.
      await openInCanvas(b, "image-1.png");
      await b.$(tid("canvas-image")).waitForDisplayed({ timeout: 15000 });
      await app.screenshot("canvas-image");
    } finally {
      await app.close();
    }
  });
});
