// Scheduled runs in the real window (issue 61): schedules kept from the command line are listed
// on the Schedules page; one falls due while the window is open and runs there, in a
// conversation of its own; its tool call is not approved by anyone but the person: it waits,
// the sidebar counts it, the page says so and opens its conversation, where the approval is
// asked; allowed, the run finishes and the page records it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { allowInDialog, answerSays, cli, launch, textOf, tid, withMockModel } from "./harness.mjs";

/** "YYYY-MM-DD HH:MM", local time, of the first whole minute at least 15 s from now. */
function nextMinute() {
  const at = new Date(Date.now() + 15_000);
  at.setSeconds(0, 0);
  at.setMinutes(at.getMinutes() + 1);
  const two = (n) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}`;
}

test("a schedule runs at its time in the window, and its call waits for the person", async () => {
  await withMockModel("schedules", { fault: true }, async (home) => {
    cli(home, ["schedule", "add", "Weekday digest", "--prompt", "Scheduled: say good morning", "--every", "1d", "--at", "08:00", "--weekdays"]);
    // Off, so it cannot fall due while the test runs (at 07:59 on a weekday).
    cli(home, ["schedule", "disable", "Weekday digest"]);
    const due = nextMinute();
    cli(home, ["schedule", "add", "Check in", "--prompt", "Scheduled: check in with fault", "--once", due, "--approval-wait", "15"]);
    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("nav-schedules")).click();
      await b.$(`${tid("schedule-item")}[data-name="Check in"]`).waitForDisplayed({ timeout: 15000 });
      assert.match(await textOf(b, `${tid("schedule-item")}[data-name="Weekday digest"] ${tid("schedule-rule")}`), /every day at 08:00, weekdays only/);
      await app.screenshot("schedules-page");
      await b.$(tid("schedules-new")).click();
      await b.$(tid("schedule-form")).waitForDisplayed({ timeout: 10000 });
      await b.$(tid("schedule-name")).setValue("Evening summary");
      await b.$(tid("schedule-prompt")).setValue("Summarise what changed today.");
      await app.screenshot("schedules-form");
      await b.$(tid("schedule-cancel")).click();

      // At its time the window runs it; its call waits, and the sidebar counts it.
      await b.$(tid("schedules-waiting")).waitForDisplayed({ timeout: 150000 });
      assert.match(await textOf(b, tid("schedules-waiting")), /^1/);
      await b.$(tid("nav-settings")).click();
      await b.$(tid("nav-schedules")).click();
      const waiting = b.$(`${tid("schedule-run")}[data-status="waiting"]`);
      await waiting.waitForDisplayed({ timeout: 15000 });
      assert.match(await waiting.getText(), /Waits for your approval/);
      await app.screenshot("schedules-waiting");

      await waiting.$(tid("schedule-run-open")).click();
      await allowInDialog(b);
      await answerSays(b, "Checked in on schedule.");
      await app.screenshot("schedules-run-conversation");

      await b.$(tid("nav-schedules")).click();
      const finished = b.$(`${tid("schedule-run")}[data-status="completed"]`);
      await finished.waitForDisplayed({ timeout: 15000 });
      assert.equal(await b.$(tid("schedules-waiting")).isExisting(), false);
      const runs = JSON.parse(cli(home, ["schedule", "logs", "--json"]).stdout);
      assert.equal(runs.length, 1);
      assert.equal(runs[0].status, "completed");
      assert.equal(runs[0].manual, false);
    } finally {
      await app.close();
    }
  });
});
