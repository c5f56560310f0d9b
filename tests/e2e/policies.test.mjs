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
      // The rule made from the call takes the place of the one that asked.
      assert.equal(rules.file.rules.length, 1, JSON.stringify(rules));
      assert.match(rules.said[0], /^allow everything · get-sum/);

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

test("a reviewed result waits for the person: the page's injection is cut out before the model reads it", async () => {
  await withMockModel("review", {}, async (home, mock) => {
    cli(home, ["mcp", "add", "web", "--", path.resolve("tests/peers/.venv/bin/python"), path.resolve("tests/peers/web_reader_server.py")]);
    cli(home, ["policy", "allow", "web", "--yes"]);
    cli(home, ["policy", "review", "web"]);
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "web");
      await openNewConversation(b);
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await input.setValue("Read the release notes page");
      await b.keys("Enter");

      const dialog = b.$(tid("review-dialog"));
      await dialog.waitForDisplayed({ timeout: 20000 });
      assert.match(await textOf(b, tid("review-content")), /IGNORE ALL PREVIOUS INSTRUCTIONS/);
      await app.screenshot("policies-review");
      await b.$(tid("review-cut")).click();
      const kept = b.$(tid("review-kept"));
      await kept.waitForDisplayed({ timeout: 5000 });
      // Keep the page's greeting, cut the injection.
      await b.execute((sel) => {
        const box = document.querySelector(sel);
        const text = box.value;
        const cut = text.slice(0, text.indexOf("Welcome!") + "Welcome!".length);
        const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set;
        set.call(box, cut);
        box.dispatchEvent(new Event("input", { bubbles: true }));
      }, tid("review-kept"));
      await app.screenshot("policies-review-cut");
      await b.$(tid("review-pass-left")).click();
      await answerSays(b, "I read what you let me see of the page.");

      // What the model was sent after the call: the kept words, and that parts were cut.
      const journal = await mock.journal();
      const sent = JSON.stringify(journal.at(-1).body.messages);
      assert.match(sent, /Welcome!/);
      assert.match(sent, /The user cut parts of this result out before you read it/);
      assert.doesNotMatch(sent, /IGNORE ALL/);
    } finally {
      await app.close();
    }
  });
});
