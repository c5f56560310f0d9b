// Answers over time in the real window, against aimock playing the model: Stop mid-answer, the
// app killed mid-answer (everything shown is there after a relaunch), the tools panel, a
// streaming answer that outlives a visit elsewhere and a reload, the Servers page as Rust
// pushes changes, and a result's files in the canvas. (Split from chat.test.mjs so that each
// file stays well inside the runner's 300 s per file.)
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { allowInDialog, ANSWER, answerSays, chooseInFileDialog, enterFrame, cli, fakeBrowser, openNewConversation, serverRunning, launch, nativeWindow, pressIn, screenshotScreen, sendInNewConversation, textOf, tid, watchingServer, windowGone, withMockModel } from "./harness.mjs";

/** Sends `prompt` in a new conversation and allows the call it makes (once). */
async function askAndAllow(b, prompt) {
  await sendInNewConversation(b, prompt);
  await allowInDialog(b);
}

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
