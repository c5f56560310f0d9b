// Skills in the real window (issue 61): a skill added from the command line is listed on the
// Skills page, the model (aimock, tool-loop.json) loads it and one of its files on demand
// without being asked about, the tool cards say so, the conversation's tools panel has its
// switch, and the skill's details name the conversation that used it. Nothing the skill holds
// runs: its hook and its script would leave a file behind.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { answerSays, cli, launch, openNewConversation, textOf, tid, withMockModel } from "./harness.mjs";

const RAN = ["/tmp/switchboard-skill-hook-ran", "/tmp/switchboard-skill-script-ran"];

test("a skill is loaded on demand, switched per conversation, and its page says who used it", async () => {
  for (const file of RAN) fs.rmSync(file, { force: true });
  await withMockModel("skills", {}, async (home) => {
    const added = cli(home, ["skills", "add", path.resolve("tests/fixtures/skills/pdf-forms")]);
    assert.match(added.stdout, /Ignored \(Switchboard never acts on these\): allowed-tools, hooks/);
    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("nav-skills")).click();
      await b.$(`${tid("skill-item")}[data-name="pdf-forms"]`).waitForDisplayed({ timeout: 15000 });
      await app.screenshot("skills-page");

      await openNewConversation(b);
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await input.setValue("Fill the form with the skill");
      await b.keys("Enter");
      await answerSays(b, "The form is filled as the skill says.");
      const cards = await textOf(b, tid("message-list"));
      assert.match(cards, /Load Skill/);
      assert.equal(await b.$(tid("approval-dialog")).isExisting(), false, "loading a skill asks nobody");
      await app.screenshot("skills-loaded");

      await b.$(tid("tools-button")).click();
      const skillSwitch = b.$(`${tid("tools-skill-switch")}[data-skill="pdf-forms"]`);
      await skillSwitch.waitForDisplayed({ timeout: 10000 });
      await skillSwitch.scrollIntoView();
      assert.equal(await skillSwitch.isSelected(), true);
      await app.screenshot("skills-tools-panel");

      await b.$(tid("nav-skills")).click();
      await b.$(tid("skill-details-toggle")).click();
      const used = b.$(tid("skill-used-in"));
      await used.waitForDisplayed({ timeout: 10000 });
      assert.match(await textOf(b, tid("skill-instructions")), /Read `reference\/FORMS\.md`/);
      await app.screenshot("skills-details");
    } finally {
      await app.close();
    }
  });
  for (const file of RAN) assert.equal(fs.existsSync(file), false, `${file}: nothing a skill holds runs`);
});

// Issue 61: a skill's scripts, allowed on its card after the window showed them, are run by the
// model through a call that asks (in Rust's sandbox); the card's result shows what it printed.
test("a skill's script runs only after its scripts were allowed, and asks before it runs", async () => {
  await withMockModel("skill-script", {}, async (home) => {
    cli(home, ["skills", "add", path.resolve("tests/fixtures/skills/tally")]);
    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("nav-skills")).click();
      const card = `${tid("skill-item")}[data-name="tally"]`;
      await b.$(card).waitForDisplayed({ timeout: 15000 });
      await b.$(`${card} ${tid("skill-scripts-switch")}`).click();
      const dialog = b.$(tid("confirm-dialog"));
      await dialog.waitForDisplayed({ timeout: 10000 });
      assert.match(await textOf(b, tid("skill-script-text")), /TALLY/);
      await app.screenshot("skill-scripts-allow");
      await b.$(tid("confirm-ok")).click();
      await b.waitUntil(async () => (await b.$(`${card} ${tid("skill-scripts")}`).getAttribute("data-state")) === "on", {
        timeout: 10000,
        timeoutMsg: "the scripts were not allowed",
      });
      await app.screenshot("skill-scripts-on");

      await openNewConversation(b);
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await input.setValue("Tally with the skill");
      await b.keys("Enter");
      const asking = b.$(tid("approval-dialog"));
      await asking.waitForDisplayed({ timeout: 20000 });
      assert.match(await textOf(b, tid("approval-name")), /Run Skill Script/);
      assert.match(await textOf(b, tid("approval-arguments")), /scripts\/tally\.py/);
      assert.equal(await b.$(tid("approval-allow-conversation")).isExisting(), false, "a script is allowed once at a time");
      await app.screenshot("skill-script-asks");
      await b.$(tid("approval-submit")).click();
      await answerSays(b, "The tally is 7.");
      const round = b.$(tid("tool-round"));
      if ((await round.getAttribute("aria-expanded")) !== "true") await round.click();
      const result = b.$(tid("tool-card"));
      await result.$("summary").click();
      await result.$(tid("tool-result")).waitForExist({ timeout: 10000 });
      assert.match(await textOf(b, tid("tool-result")), /TALLY 7 from stdin/);
      await app.screenshot("skill-script-ran");
    } finally {
      await app.close();
    }
  });
});
