// A long task outlives the process that started it (issue 61): `switchboard chat` calls a tool
// a server (over HTTP) runs as a task and is killed with SIGKILL while the task runs; the window
// started next finds the call cut off, follows the task again on its server, and shows its
// result under the call's card when it ends. The command line's `tasks list` says it completed.
// Then, in the window, the person goes on without a running task from its card.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { test } from "node:test";
import { BIN, allowInDialog, answerSays, cli, launch, sendInNewConversation, tid, withMockModel } from "./harness.mjs";

/** tests/peers/tasks_server.py over HTTP: its URL, and stop(). */
async function tasksServer(home) {
  const child = spawn(path.resolve("tests/peers/.venv/bin/python"), [path.resolve("tests/peers/tasks_server.py"), path.join(home, "tasks.log"), "--http"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the tasks server did not start in 20 s")), 20000);
    readline.createInterface({ input: child.stdout }).once("line", (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once("exit", (code) => reject(new Error(`the tasks server exited (${code})`)));
  });
  const url = /^LISTENING (\S+)/.exec(line)?.[1];
  assert.ok(url, line);
  return { url, stop: () => child.kill() };
}

const tasks = (home) => JSON.parse(cli(home, ["tasks", "list", "--json"]).stdout);

test("a task cut off by kill -9 is followed again by the window, and its result shows under its card", async () => {
  await withMockModel("tasks", {}, async (home) => {
    const server = await tasksServer(home);
    try {
      cli(home, ["mcp", "add", "tasks", "--url", server.url]);
      const chat = spawn(BIN, ["chat", "--approve", "all", "Task: slow report"], {
        env: { ...process.env, SWITCHBOARD_HOME: home },
        stdio: "ignore",
      });
      const exited = new Promise((resolve) => chat.once("exit", (code, signal) => resolve(signal ?? code)));
      // Killed once the call is recorded as running as a task (not before: then it is a call
      // that may have run, and nothing to follow).
      const deadline = Date.now() + 30000;
      while (!tasks(home).some((t) => t.task?.state === "running")) {
        assert.ok(Date.now() < deadline, "the call did not run as a task in 30 s");
        await new Promise((r) => setTimeout(r, 200));
      }
      chat.kill("SIGKILL");
      assert.equal(await exited, "SIGKILL");

      const app = await launch(home);
      try {
        const b = app.browser;
        const item = b.$(tid("conversation-item"));
        await item.waitForDisplayed({ timeout: 20000 });
        await item.click();
        const late = b.$(tid("tool-late-result"));
        await late.waitForDisplayed({ timeout: 60000 });
        assert.match(await late.getText(), /Its result, which came later[\s\S]*slow report on tides/);
        assert.equal(await late.getAttribute("data-task-state"), "completed");
        await app.screenshot("task-late-result");
        const listed = tasks(home);
        assert.equal(listed.length, 1);
        assert.equal(listed[0].task.state, "completed");
        assert.equal(listed[0].task.id, "task-1");

        // In the window: the person goes on without a task from its card; the answer comes at
        // once, the card says its task runs in the background, and its result follows.
        await sendInNewConversation(b, "Task: long report");
        await allowInDialog(b);
        const goOn = b.$(tid("tool-go-on"));
        await goOn.waitForDisplayed({ timeout: 30000 });
        await app.screenshot("task-running");
        await goOn.click();
        await answerSays(b, "Going on while the long report is written.");
        const card = b.$(`${tid("tool-card")}[data-call-id="call_task_long"]`);
        const state = card.$(tid("tool-state"));
        assert.equal(await state.getText(), "In the background");
        await app.screenshot("task-in-background");
        await b.waitUntil(async () => (await state.getText()) === "Done later", {
          timeout: 60000,
          timeoutMsg: "the task's result did not come to its card",
        });
        assert.match(await card.$(tid("tool-late-result")).getText(), /slow report on tides/);
        await app.screenshot("task-done-later");
        assert.equal(tasks(home).find((t) => t.call_id === "call_task_long")?.task.state, "completed");
      } finally {
        await app.close();
      }
    } finally {
      server.stop();
    }
  });
});
