// Conversations in the real window: create, rename, delete, survive a relaunch; search that
// opens a conversation at its hit; export through the native save dialog and import back.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { chooseInFileDialog, cli, launch, nativeWindow, openNewConversation, pasteInto, screenshotScreen, sidebarIds, sidebarTitles, tempHome, textOf, tid, withMockModel } from "./harness.mjs";

async function createConversation(b) {
  const before = (await sidebarIds(b)).length;
  await b.$(tid("new-conversation")).click();
  await b.waitUntil(async () => (await sidebarIds(b)).length === before + 1, {
    timeoutMsg: "the new conversation did not appear in the sidebar",
  });
  await b.$(tid("conversation-header-title")).waitForDisplayed();
}

async function renameOpenConversation(b, title) {
  await b.$(tid("conversation-menu")).click();
  await b.$(tid("rename-conversation")).click();
  const input = b.$(tid("rename-input"));
  await input.waitForDisplayed();
  await pasteInto(b, tid("rename-input"), title);
  await b.$(tid("rename-save")).click();
}

test("a conversation created and renamed is still there after quitting and relaunching", async () => {
  const home = tempHome("rename");
  let app = await launch(home);
  try {
    const b = app.browser;
    await createConversation(b);
    await b.waitUntil(async () => (await textOf(b, tid("conversation-header-title"))) === "New conversation", {
      timeoutMsg: "a new conversation is not called New conversation",
    });
    await renameOpenConversation(b, "Trip to Lisbon");
    await b.waitUntil(async () => (await textOf(b, tid("conversation-header-title"))) === "Trip to Lisbon", {
      timeoutMsg: "the header did not show the new title",
    });
    assert.deepEqual(await sidebarTitles(b), ["Trip to Lisbon"]);
    await app.screenshot("conversation-renamed");
  } finally {
    await app.close();
  }

  app = await launch(home);
  try {
    const b = app.browser;
    await b.waitUntil(async () => (await sidebarTitles(b)).length === 1, { timeoutMsg: "the list did not load" });
    assert.deepEqual(await sidebarTitles(b), ["Trip to Lisbon"]);
    await app.screenshot("after-relaunch");
  } finally {
    await app.close();
  }
});

test("a message half written is in its composer again after quitting and relaunching, and goes once sent", async () => {
  await withMockModel("draft", {}, async (home) => {
    const thought = "Half a thought about the ferries to Hvar";
    let app = await launch(home);
    let id;
    try {
      const b = app.browser;
      await openNewConversation(b);
      [id] = await sidebarIds(b);
      await pasteInto(b, tid("composer-input"), thought);
      // Rust has it once typing rests (the command line reads the same database).
      await b.waitUntil(async () => JSON.parse(cli(home, ["conversations", "draft", id, "--json"]).stdout)?.text === thought, {
        timeout: 10000,
        timeoutMsg: "the draft was not saved",
      });
    } finally {
      await app.close();
    }

    app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("conversation-item")).waitForDisplayed({ timeout: 20000 });
      await b.$(tid("conversation-item")).click();
      await b.waitUntil(async () => (await b.$(tid("composer-input")).getValue()) === thought, {
        timeout: 10000,
        timeoutMsg: "the composer did not get its draft back",
      });
      await app.screenshot("draft-after-relaunch");
      await b.$(tid("composer-send")).click();
      await b.waitUntil(async () => (await textOf(b, tid("message-list")).catch(() => "")).includes(thought), {
        timeout: 20000,
        timeoutMsg: "the message was not sent",
      });
      await b.waitUntil(async () => (await b.$(tid("composer-input")).getValue()) === "", {
        timeout: 10000,
        timeoutMsg: "the composer kept the sent message",
      });
      await b.waitUntil(async () => JSON.parse(cli(home, ["conversations", "draft", id, "--json"]).stdout) === null, {
        timeout: 10000,
        timeoutMsg: "the sent message's draft was still kept",
      });
    } finally {
      await app.close();
    }
  });
});

test("a 100 000-character title is trimmed, not stored whole", async () => {
  const app = await launch(tempHome("long-title"));
  try {
    const b = app.browser;
    await createConversation(b);
    await renameOpenConversation(b, "L".repeat(100_000));
    await b.waitUntil(async () => (await sidebarTitles(b))[0]?.startsWith("LLL"), {
      timeoutMsg: "the long title was not saved",
    });
    const shown = await textOf(b, tid("conversation-header-title"));
    assert.ok(shown.length <= 200, `the title kept ${shown.length} characters`);
    const sidebar = await sidebarTitles(b);
    assert.ok(sidebar[0].length <= 200);
  } finally {
    await app.close();
  }
});

test("deleting the open conversation asks first and leaves the window usable", async () => {
  const app = await launch(tempHome("delete"));
  try {
    const b = app.browser;
    await createConversation(b);
    await renameOpenConversation(b, "Keep me");
    await createConversation(b);
    await renameOpenConversation(b, "Delete me");
    await b.waitUntil(async () => (await sidebarTitles(b))[0] === "Delete me");

    // Cancel first: nothing is deleted.
    await b.$(tid("conversation-menu")).click();
    await b.$(tid("delete-conversation")).click();
    await b.$(tid("confirm-dialog")).waitForDisplayed();
    await b.$(tid("confirm-cancel")).click();
    await b.$(tid("confirm-dialog")).waitForDisplayed({ reverse: true });
    assert.deepEqual(await sidebarTitles(b), ["Delete me", "Keep me"]);

    await b.$(tid("conversation-menu")).click();
    await b.$(tid("delete-conversation")).click();
    await b.$(tid("confirm-ok")).click();
    await b.waitUntil(async () => (await sidebarTitles(b)).length === 1, { timeoutMsg: "not deleted" });
    assert.deepEqual(await sidebarTitles(b), ["Keep me"]);
    await b.$(tid("welcome")).waitForDisplayed();

    // Still usable: open the other one, make a new one.
    await b.$(tid("conversation-item")).click();
    await b.waitUntil(async () => (await textOf(b, tid("conversation-header-title"))) === "Keep me");
    await createConversation(b);
    assert.equal((await sidebarTitles(b)).length, 2);
  } finally {
    await app.close();
  }
});

test("a hundred creates and deletes fired as fast as the UI allows leave a consistent list; what was left unused is not kept", async () => {
  const home = tempHome("burst");
  // Forty conversations with something in them, made by the command line.
  for (let i = 0; i < 40; i++) {
    const file = path.join(home, `seed-${i}.json`);
    fs.writeFileSync(file, JSON.stringify(exportOf(`Kept ${i}`, 2, -1, "")));
    cli(home, ["conversations", "import", file, "--json"]);
  }
  let app = await launch(home);
  let shownIds;
  try {
    const b = app.browser;
    await b.waitUntil(async () => (await sidebarIds(b)).length === 40, { timeout: 20000, timeoutMsg: "the list did not load" });
    const newButton = await b.$(tid("new-conversation"));
    for (let i = 0; i < 60; i++) await newButton.click();
    // Each new one was left with nothing in it when the next was made: only the last is kept,
    // and it is the one open.
    await b.waitUntil(async () => (await sidebarTitles(b)).filter((t) => t === "New conversation").length === 1, {
      timeout: 30000,
      timeoutMsg: "the unused conversations did not go",
    });
    await b.waitUntil(async () => (await sidebarIds(b)).length === 41, { timeout: 30000, timeoutMsg: "the list did not settle at 41" });
    assert.equal((await sidebarTitles(b))[0], "New conversation");
    await b.waitUntil(async () => (await textOf(b, tid("conversation-header-title"))) === "New conversation");
    for (let i = 0; i < 20; i++) {
      await b.$(tid("conversation-item")).click();
      await b.$(tid("conversation-menu")).click();
      await b.$(tid("delete-conversation")).click();
      await b.$(tid("confirm-ok")).click();
    }
    await b.waitUntil(async () => (await sidebarIds(b)).length === 21, {
      timeout: 30000,
      timeoutMsg: "the list did not settle at 21",
    });
    shownIds = await sidebarIds(b);
    assert.equal(new Set(shownIds).size, 21, "no duplicates in the list");
    await app.screenshot("after-burst");
    // One more, left open and unused when the window closes: the next start does not keep it.
    await openNewConversation(b);
    await b.waitUntil(async () => (await sidebarIds(b)).length === 22);
  } finally {
    await app.close();
  }

  app = await launch(home);
  try {
    const b = app.browser;
    await b.waitUntil(async () => (await sidebarIds(b)).length === 21, { timeoutMsg: "the list did not load" });
    assert.deepEqual(await sidebarIds(b), shownIds, "what was shown is what was stored, in the same order");
  } finally {
    await app.close();
  }
});

test("a new conversation starts with Settings' system prompt, edited from its header, kept after a relaunch", async () => {
  const home = tempHome("system-prompt");
  let app = await launch(home);
  try {
    const b = app.browser;
    await createConversation(b);
    await b.$(tid("system-prompt-button")).click();
    const input = b.$(tid("system-prompt-input"));
    await input.waitForDisplayed();
    const shown = await input.getValue();
    assert.match(shown, /^You can use tools when they help with the task\./);
    assert.match(shown, /try another approach/);
    await app.screenshot("system-prompt-default");
    await pasteInto(b, tid("system-prompt-input"), "Answer in French, in two sentences at most.");
    await b.$(tid("system-prompt-save")).click();
    await b.$(tid("system-prompt-saved")).waitForDisplayed({ timeoutMsg: "the system prompt was not saved" });
    await app.screenshot("system-prompt-edited");
  } finally {
    await app.close();
  }

  app = await launch(home);
  try {
    const b = app.browser;
    await b.waitUntil(async () => (await sidebarIds(b)).length === 1, { timeoutMsg: "the list did not load" });
    await b.$(tid("conversation-item")).click();
    await b.$(tid("system-prompt-button")).click();
    const input = b.$(tid("system-prompt-input"));
    await input.waitForDisplayed();
    assert.equal(await input.getValue(), "Answer in French, in two sentences at most.");
  } finally {
    await app.close();
  }
});

/** An export of a conversation of `count` messages (questions and answers), `special` at `at`. */
function exportOf(title, count, at, special) {
  const start = 1_750_000_000_000;
  return {
    format: "switchboard.conversation",
    version: 1,
    exported_at: start,
    conversation: { title, created_at: start, updated_at: start + count, provider: null, model: null, system_prompt: "" },
    messages: Array.from({ length: count }, (_, i) => ({
      id: `m${i}`,
      role: i % 2 === 0 ? "user" : "assistant",
      content: i === at ? special : i % 2 === 0 ? `Question number ${i}` : `Answer number ${i}, with a few words to fill the row.`,
      created_at: start + i,
      status: "complete",
    })),
    tool_runs: [],
  };
}

test("Ctrl+K finds a message far back in a long conversation and opens it there; export to JSON and import give the same conversation", async () => {
  const home = tempHome("search-export");
  const seed = path.join(home, "seed.json");
  const seeded = exportOf("Island trip", 600, 44, "The ferry to Hvar leaves at nine from pier three.");
  // The last answer was asked for again: the first answer is kept as a branch beside it.
  seeded.version = 2;
  seeded.branches = [
    {
      after: "m598",
      shown: 1,
      others: [
        {
          position: 0,
          messages: [{ id: "b0", role: "assistant", content: "An earlier answer to the last question.", created_at: seeded.exported_at + 600, status: "complete" }],
          tool_runs: [],
        },
      ],
    },
  ];
  fs.writeFileSync(seed, JSON.stringify(seeded));
  cli(home, ["conversations", "import", seed, "--json"]);
  const app = await launch(home);
  try {
    const b = app.browser;
    await b.$(tid("conversation-item")).waitForDisplayed({ timeout: 20000 });
    await b.keys(["Control", "k"]);
    const input = b.$(tid("search-input"));
    await input.waitForDisplayed({ timeout: 5000 });
    await input.setValue("hvar pier");
    const hit = b.$(tid("search-hit"));
    await hit.waitForDisplayed({ timeout: 10000 });
    await app.screenshot("search-hits");
    assert.match(await b.execute((sel) => document.querySelector(sel).textContent, tid("search-hit")), /Island trip/);
    assert.deepEqual(
      await b.execute((sel) => [...document.querySelectorAll(`${sel} mark`)].map((m) => m.textContent), tid("search-snippet")),
      ["Hvar", "pier"],
    );
    await b.keys("Enter");
    // Opened at the hit: the row is on screen, marked, 556 messages above the newest.
    const row = b.$(`${tid("message-list")} .row.marked`);
    await row.waitForDisplayed({ timeout: 15000, timeoutMsg: "the hit was not brought into view" });
    assert.match(await row.getText(), /The ferry to Hvar leaves at nine from pier three\./);
    assert.ok(await row.isDisplayed({ withinViewport: true }), "the hit is not in the viewport");
    await app.screenshot("search-opened-at-hit");

    // Export as JSON through the native save dialog, then import that file back.
    const out = path.join(home, "island-trip-export.json");
    await b.$(tid("conversation-menu")).click();
    await b.$(tid("export-json")).click();
    await nativeWindow("Export as JSON");
    screenshotScreen("export-save-dialog");
    await chooseInFileDialog("Export as JSON", out, { replace: true });
    await b.$(tid("export-saved")).waitForDisplayed({ timeout: 15000 });
    assert.equal(await textOf(b, tid("export-saved")), `Saved to ${out}`);
    const written = JSON.parse(fs.readFileSync(out, "utf8"));
    assert.equal(written.messages.length, 600);
    assert.equal(written.branches.length, 1, "the branch kept beside the last answer is exported");
    assert.equal(written.branches[0].others[0].messages[0].content, "An earlier answer to the last question.");

    await b.$(tid("import-conversation")).click();
    await chooseInFileDialog("Import a conversation", out);
    await b.waitUntil(async () => (await sidebarTitles(b)).length === 2, { timeout: 15000, timeoutMsg: "the import did not arrive" });
    // Told apart from the original it was exported from.
    assert.deepEqual(await sidebarTitles(b), ["Island trip (imported)", "Island trip"]);
    await b.waitUntil(async () => (await textOf(b, tid("conversation-header-title")).catch(() => "")) === "Island trip (imported)", { timeout: 10000 });
    // The same conversation: what the export of the import holds is what the first export held.
    const ids = await sidebarIds(b);
    const again = cli(home, ["conversations", "export", ids[0], "--format", "json"]);
    const strip = (file) => file.messages.map(({ id: _id, ...m }) => m);
    const exportedAgain = JSON.parse(again.stdout);
    assert.deepEqual(strip(exportedAgain), strip(written));
    const kept = (file) => file.branches.map((p) => [p.shown, p.others.map((o) => [o.position, o.messages.map((m) => m.content)])]);
    assert.deepEqual(kept(exportedAgain), kept(written));
    // The import shows the answer it was exported showing, with the other one to switch to.
    await b.$(tid("branch-position")).waitForDisplayed({ timeout: 10000, timeoutMsg: "the imported answer has no branch switcher" });
    assert.equal(await textOf(b, tid("branch-position")), "Version 2 of 2");
    await b.$(`${tid("branch-switcher")} button[aria-label="Previous version"]`).click();
    await b.waitUntil(async () => (await textOf(b, tid("branch-position"))) === "Version 1 of 2", { timeout: 10000, timeoutMsg: "the switcher did not go to the first answer" });
    await b.waitUntil(async () => /An earlier answer to the last question\./.test(await textOf(b, tid("message-list"))), {
      timeout: 10000,
      timeoutMsg: "the imported branch's answer is not shown",
    });
    await app.screenshot("imported");
  } finally {
    await app.close();
  }
});
