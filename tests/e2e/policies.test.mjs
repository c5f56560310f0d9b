// Policies in the real window (issue 59): a rule that asks is named in the approval dialog,
// which makes a rule from the call after Rust's own confirmation; the Activity page lists the
// record of every call, with what decided each; Settings › Policies shows the rules, the
// organisation's among them. aimock plays the model, server-everything runs the tool.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { answerSays, cli, launch, nativeWindow, openNewConversation, pressIn, screenshotScreen, serverRunning, textOf, tid, withMockModel } from "./harness.mjs";

test("the dialog names the rule that asks and makes a rule from the call; the Activity page and Settings › Policies show what decided", async () => {
  await withMockModel("policies", { everything: true }, async (home) => {
    cli(home, ["policy", "ask", "everything", "get-sum"]);
    // The organisation's file (a home's own, as tests and several profiles have it).
    fs.mkdirSync(path.join(home, "managed"), { recursive: true });
    fs.writeFileSync(
      path.join(home, "managed", "policy.json"),
      JSON.stringify({ rules: [{ server: "*", tool: "delete_everything", outcome: "block", note: "never" }] }),
    );
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "everything");
      await openNewConversation(b);
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await input.setValue("Add 2 and 3");
      await b.keys("Enter");

      await b.$(tid("approval-dialog")).waitForDisplayed({ timeout: 20000 });
      assert.match(
        await textOf(b, tid("approval-asked-because")),
        /rule 1 of your policy\.json: ask before everything · get-sum/,
      );
      await app.screenshot("policies-approval-rule");
      await b.$(tid("approval-allow-like")).click();
      // Making a rule that allows is confirmed in Rust's own dialog, outside the webview.
      const confirm = await nativeWindow("Let tool calls run without asking");
      screenshotScreen("policies-rule-confirm");
      pressIn(confirm, "alt+a");
      await answerSays(b, "The sum of 2 and 3 is 5.");

      const rules = JSON.parse(cli(home, ["policy", "list", "--json"]).stdout);
      assert.equal(rules.file.rules.length, 2, JSON.stringify(rules));
      assert.match(rules.said[1], /^allow everything · get-sum/);

      await b.$(tid("nav-activity")).click();
      const row = b.$(tid("activity-row"));
      await row.waitForDisplayed({ timeout: 10000 });
      assert.match(await textOf(b, tid("activity-table")), /everything · get-sum/);
      assert.match(await textOf(b, tid("activity-table")), /you, when asked \(rule 1 of your policy\.json/);
      await b.$(tid("activity-toggle")).click();
      assert.match(await textOf(b, tid("activity-arguments")), /"a":\s*2/);
      await app.screenshot("policies-activity");

      await b.$(tid("nav-settings")).click();
      const managed = b.$(tid("policies-managed"));
      await managed.waitForExist({ timeout: 10000 });
      await managed.scrollIntoView();
      assert.match(await textOf(b, tid("policies-managed")), /block delete_everything of any server/);
      await app.screenshot("policies-settings");
    } finally {
      await app.close();
    }
  });
});
