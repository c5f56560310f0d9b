// Projects in the real window (issue 62): projects made on the command line group the sidebar's
// list; a conversation started in one from its group's menu is told the project's instructions
// (read back from the model's side, aimock's journal) and shows its project in the header, which
// moves it to another; asked again there, the header says which of the project's files and facts
// the model was given; the project's dialog lists the files the command line added; the
// Memory page lists the facts kept; the command line reads the same from Rust.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { answerSays, cli, framesDrawn, launch, textOf, tid, withMockModel } from "./harness.mjs";

/** What aimock was asked, oldest first. */
async function journal(mock) {
  const entries = await (await fetch(`${mock.root}/__aimock/journal?limit=1000`)).json();
  return entries.sort((a, b) => a.timestamp - b.timestamp);
}

/** The titles listed under the project group named `name`. */
function titlesIn(b, name) {
  return b.execute((n) => {
    const group = [...document.querySelectorAll('[data-testid="project-group"]')].find(
      (g) => g.querySelector('[data-testid="project-name-label"]')?.textContent === n,
    );
    return group ? [...group.querySelectorAll('[data-testid="conversation-title"]')].map((t) => t.textContent) : null;
  }, name);
}

test("projects group the sidebar; a conversation started in one is told its instructions and moves to another from its header", async () => {
  await withMockModel("projects", {}, async (home, mock) => {
    cli(home, ["project", "add", "Bridge", "--instructions", "Steel, not wood."]);
    cli(home, ["project", "add", "Garden", "--instructions", "Water on Sundays."]);
    const notes = path.join(home, "bridge-notes.md");
    fs.writeFileSync(notes, "The bridge opens at dawn.\n");
    const manual = path.join(home, "maintenance-manual.txt");
    fs.writeFileSync(manual, "Rivets are checked each spring. ".repeat(400));
    cli(home, ["project", "files", "Bridge", "--add", notes, manual]);
    cli(home, ["chat", "--tools", "none", "--project", "Bridge", "Say goodbye"]);
    cli(home, ["chat", "--tools", "none", "Say goodbye"]);
    cli(home, ["memory", "on"]);
    cli(home, ["memory", "add", "Prefers metric units."]);
    cli(home, ["memory", "on", "--project", "Bridge"]);
    cli(home, ["memory", "add", "--project", "Bridge", "Rivets are steel, torqued to 420 newton metres."]);

    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("project-group")).waitForDisplayed({ timeout: 20000 });
      assert.deepEqual(await titlesIn(b, "Bridge"), ["Say goodbye"]);
      assert.deepEqual(await titlesIn(b, "Garden"), []);
      assert.equal(await textOf(b, tid("no-project-label")), "Conversations");

      // New conversation here, in Garden: the model is told Garden's instructions.
      const gardenId = JSON.parse(cli(home, ["project", "show", "Garden", "--json"]).stdout).id;
      const garden = `${tid("project-group")}[data-id="${gardenId}"]`;
      assert.equal(await textOf(b, `${garden} ${tid("project-name-label")}`), "Garden");
      await b.$(`${garden} ${tid("project-menu")}`).click();
      await b.$(tid("project-new-conversation")).click();
      await b.waitUntil(async () => ((await titlesIn(b, "Garden")) ?? []).length === 1, {
        timeout: 10000,
        timeoutMsg: "no conversation under Garden",
      });
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      const before = (await journal(mock)).length;
      await input.setValue("Say hello");
      await b.keys("Enter");
      await answerSays(b, "Hello.");
      const body = (await journal(mock))[before].body;
      assert.equal(body.messages[0].role, "system");
      assert.match(body.messages[0].content, /## Project “Garden”\n\nWater on Sundays\.$/);
      assert.equal(await textOf(b, tid("conversation-project-name")), "Garden");
      await framesDrawn(b);
      await app.screenshot("projects-sidebar");

      // The header moves it to Bridge; the list and Rust say so.
      await b.$(tid("conversation-project")).click();
      await b.$(tid("conversation-project-option")).waitForDisplayed();
      await framesDrawn(b);
      await app.screenshot("projects-move-menu");
      const bridgeId = JSON.parse(cli(home, ["project", "show", "Bridge", "--json"]).stdout).id;
      await b.$(`${tid("conversation-project-option")}[data-id="${bridgeId}"]`).click();
      await b.waitUntil(async () => ((await titlesIn(b, "Bridge")) ?? []).length === 2, {
        timeout: 10000,
        timeoutMsg: "the conversation did not move under Bridge",
      });
      assert.deepEqual(await titlesIn(b, "Garden"), []);
      assert.equal(await textOf(b, tid("conversation-project-name")), "Bridge");
      const shown = JSON.parse(cli(home, ["project", "show", "Bridge", "--json"]).stdout);
      assert.equal(shown.conversations, 2);
      await framesDrawn(b);
      await app.screenshot("projects-moved");

      // Asked again, now in Bridge: the header says what of the project's files and memory the
      // model was given, and its panel which.
      await input.setValue("Say hello");
      await b.keys("Enter");
      const given = b.$(tid("conversation-given"));
      await given.waitForDisplayed({ timeout: 20000 });
      assert.equal(await given.getAttribute("aria-label"), "Given with the system prompt: 2 files · 1 fact");
      await given.click();
      const panel = await textOf(b, tid("conversation-given-panel"));
      for (const said of ["bridge-notes.md", "maintenance-manual.txt", "Rivets are steel, torqued to 420 newton metres."]) {
        assert.ok(panel.includes(said), `${said} is not in: ${panel}`);
      }
      await framesDrawn(b);
      await app.screenshot("given-knowledge");
      await b.keys("Escape");
      await b.$(tid("conversation-given-panel")).waitForExist({ reverse: true, timeout: 5000 });

      // The project's dialog, from the header's menu: what it holds, to edit.
      await b.$(tid("conversation-project")).click();
      await b.$(tid("conversation-project-edit")).click();
      await b.$(tid("project-dialog")).waitForDisplayed({ timeout: 10000 });
      assert.equal(await b.$(tid("project-instructions")).getValue(), "Steel, not wood.");
      await b.waitUntil(async () => (await b.$$(tid("project-file"))).length === 2, {
        timeout: 10000,
        timeoutMsg: "the project's files are not listed",
      });
      // Its tool switches fold open; with no server configured, every tool is on.
      await b.$(`${tid("project-tools")} summary`).click();
      await b.$(tid("project-no-servers")).waitForDisplayed({ timeout: 5000 });
      await framesDrawn(b);
      await app.screenshot("project-dialog");
      await b.$(tid("project-cancel")).click();
      await b.$(tid("project-dialog")).waitForExist({ reverse: true, timeout: 10000 });

      // The Memory page: each memory's facts, where they came from, and its switch.
      await b.$(tid("nav-memory")).click();
      await b.$(tid("memory-scope")).waitForDisplayed({ timeout: 10000 });
      const facts = await b.execute(() => [...document.querySelectorAll('[data-testid="memory-fact-text"]')].map((f) => f.textContent));
      assert.deepEqual(facts.sort(), ["Prefers metric units.", "Rivets are steel, torqued to 420 newton metres."]);
      await framesDrawn(b);
      await app.screenshot("memory-page");
    } finally {
      await app.close();
    }
  });
});
