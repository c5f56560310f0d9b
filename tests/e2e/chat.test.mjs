// The tool loop in the real window, against aimock playing the model and server-everything
// running the tool: send a prompt, approve the call in the in-app dialog, see the tool card and
// the streamed answer, then relaunch and see exactly the same chat.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { BIN, launch, run, startAimock, tempHome, textOf, tid } from "./harness.mjs";

function cli(home, args) {
  const done = run(BIN, args, { env: { ...process.env, SWITCHBOARD_HOME: home } });
  assert.equal(done.status, 0, `${args.join(" ")}: ${done.stderr}`);
}

/** Waits until the Servers page shows `name` running, then returns to the first conversation. */
async function serverRunning(b, name) {
  await b.$(tid("nav-servers")).click();
  const state = `${tid("server-item")}[data-name="${name}"] ${tid("server-state")}`;
  await b.waitUntil(async () => /^Running/.test(await textOf(b, state).catch(() => "")), {
    timeout: 30000,
    timeoutMsg: `${name} does not start`,
  });
}

test("a prompt, an approval in the dialog, a tool card and the answer — and the same after a relaunch", async () => {
  const mock = await startAimock(undefined, "tool-loop.json");
  const home = tempHome("chat");
  try {
    cli(home, ["provider", "add", "Mock", "--kind", "openai_compatible", "--base-url", `${mock.root}/v1`, "--model", "gpt-4o"]);
    cli(home, ["mcp", "add", "everything", "--", path.resolve("tests/peers/node_modules/.bin/mcp-server-everything"), "stdio"]);

    let app = await launch(home);
    let live;
    try {
      const b = app.browser;
      await serverRunning(b, "everything");
      await b.$(tid("new-conversation")).click();
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await input.setValue("Add 2 and 3");
      await b.keys("Enter");

      const dialog = b.$(tid("approval-dialog"));
      await dialog.waitForDisplayed({ timeout: 20000 });
      assert.match(await textOf(b, tid("approval-arguments")), /"a": 2,\s*"b": 3/);
      await app.screenshot("chat-approval");
      await b.$(tid("approval-submit")).click();

      const answer = `${tid("answer")}:last-child ${tid("answer-text")}`;
      await b.waitUntil(async () => (await textOf(b, answer).catch(() => "")).includes("The sum of 2 and 3 is 5."), {
        timeout: 20000,
        timeoutMsg: "the answer does not appear",
      });
      const card = b.$(tid("tool-card"));
      assert.equal(await card.getAttribute("data-state"), "done");
      await card.$("summary").click();
      assert.match(await textOf(b, tid("tool-result")), /5/);
      await b.$(tid("composer-send")).waitForExist({ timeout: 10000 });
      await app.screenshot("chat-answered");
      live = await b.execute((sel) => document.querySelector(sel).innerText, tid("message-list"));
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
      await b.$(`${tid("tool-card")} summary`).click();
      const reopened = await b.execute((sel) => document.querySelector(sel).innerText, tid("message-list"));
      assert.equal(reopened, live);
      await app.screenshot("chat-reopened");
    } finally {
      await app.close();
    }
  } finally {
    await mock.stop();
  }
});
