// What an answer and a tool card show in the real window: a long Markdown answer with
// highlighted code (with Copy), a table, a task list, a link that asks before it opens (the
// window stays where it is) and an image address that is shown, never fetched; and tool
// results with an image (shown from a blob, larger on click), structured content as a tree and
// resource links as cards, all from server-everything's own tools; and files attached to a
// message (from the command line, and through Attach… and the native picker).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { chooseInFileDialog, dropFilesOnWindow, openNewConversation, serverRunning, cli, fakeBrowser, launch, sidebarIds, nativeWindow, pressIn, screenshotScreen, sendInNewConversation, textOf, tid, windowGone, withMockModel } from "./harness.mjs";

test("a long Markdown answer: highlighted code with Copy, a table, a task list; its link asks first and its image is never fetched", async () => {
  await withMockModel("render-markdown", {}, async (home) => {
    const { opened, env } = fakeBrowser(home);
    const app = await launch(home, env);
    try {
      const b = app.browser;
      const own = await b.execute(() => location.href);
      await sendInNewConversation(b, "Write it up in Markdown");
      const answer = b.$(tid("answer-text"));
      await answer.waitForDisplayed({ timeout: 20000 });
      // The highlighter arrives after the first paint; the code is coloured once it has.
      await b.$(`${tid("answer-text")} .code-block .hljs-keyword`).waitForExist({ timeout: 10000, timeoutMsg: "the code was never highlighted" });
      assert.equal(await textOf(b, `${tid("answer-text")} .code-lang`), "rust");
      assert.deepEqual(
        await b.execute((sel) => [...document.querySelectorAll(`${sel} th`)].map((th) => th.textContent), tid("answer-text")),
        ["Step", "Tool", "Status"],
      );
      assert.equal(await b.execute((sel) => document.querySelectorAll(`${sel} .task-box`).length, tid("answer-text")), 2);
      // Math is typeset as MathML once KaTeX (a chunk loaded when math first shows) is here.
      await b.$(`${tid("answer-text")} .math-block math[display="block"] mfrac`).waitForExist({ timeout: 10000, timeoutMsg: "the math was never typeset" });
      assert.equal(await b.execute((sel) => document.querySelectorAll(`${sel} math`).length, tid("answer-text")), 2);
      assert.equal(await b.execute((sel) => document.querySelectorAll(`${sel} .math-source`).length, tid("answer-text")), 0);
      // The webview lays MathML out: the fraction is taller than a line of text.
      assert.ok(
        await b.execute((sel) => document.querySelector(`${sel} .math-block math`).getBoundingClientRect().height > 30, tid("answer-text")),
        "the display math was not laid out as math",
      );
      // The image is an address on the page; nothing asked aimock's host (or any) for it.
      assert.equal(await b.execute((sel) => document.querySelectorAll(`${sel} img`).length, tid("answer-text")), 0);
      assert.match(await textOf(b, `${tid("answer-text")} a.image-link`), /^Image “a chart”: https:\/\/tracker\.example\.net\/pixel\.png\?user=secret$/);
      assert.equal(
        await b.execute(() => performance.getEntriesByType("resource").filter((e) => e.name.includes("tracker.example.net")).length),
        0,
      );

      const copy = b.$(`${tid("answer-text")} button.code-copy`);
      await copy.click();
      await b.waitUntil(async () => (await copy.getText()) === "Copied", { timeout: 5000, timeoutMsg: "Copy did not copy" });
      await app.screenshot("markdown-answer");

      // The link asks first, with the whole address; no, and nothing opens and the window stays.
      await b.$(`${tid("answer-text")} a[href="https://example.com/guide"]`).click();
      const dialog = await nativeWindow("Open example.com in your browser?");
      screenshotScreen("markdown-link-dialog");
      pressIn(dialog, "Escape");
      await windowGone("Open example.com in your browser?");
      assert.ok(!fs.existsSync(opened), "a link opened that the person did not allow");
      assert.equal(await b.execute(() => location.href), own, "a clicked link navigated the window");
      await b.$(`${tid("answer-text")} a[href="https://example.com/guide"]`).click();
      pressIn(await nativeWindow("Open example.com in your browser?"), "alt+o");
      await b.waitUntil(() => fs.existsSync(opened), { timeout: 10000, timeoutMsg: "the allowed link did not open" });
      assert.equal(fs.readFileSync(opened, "utf8"), "https://example.com/guide\n");
      assert.equal(await b.execute(() => location.href), own);
    } finally {
      await app.close();
    }
  });
});

test("a tool's image shows in its card (larger on click), structured content as a tree, resource links as cards", async () => {
  await withMockModel("render-tools", { everything: true }, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("nav-servers")).click();
      const state = `${tid("server-item")}[data-name="everything"] ${tid("server-state")}`;
      await b.waitUntil(async () => /^Running/.test(await textOf(b, state).catch(() => "")), { timeout: 30000, timeoutMsg: "everything does not start" });
      await sendInNewConversation(b, "Show me pictures and data");
      await b.$(tid("approval-dialog")).waitForDisplayed({ timeout: 20000 });
      await b.$(tid("approval-submit")).click();
      await b.waitUntil(async () => (await textOf(b, tid("answer-text")).catch(() => "")).includes("two resources"), {
        timeout: 30000,
        timeoutMsg: "the answer does not appear",
      });
      const image = b.$(tid("tool-image"));
      await image.waitForDisplayed({ timeout: 10000 });
      // Drawn from a blob: the CSP lets it in and the PNG decodes.
      assert.match(await image.getAttribute("src"), /^blob:/);
      await b.waitUntil(() => b.execute((sel) => document.querySelector(sel).naturalWidth, tid("tool-image")).then((w) => w === 20), {
        timeout: 5000,
        timeoutMsg: "the image did not decode",
      });
      await app.screenshot("tool-image");
      await image.click();
      await b.$(tid("image-viewer")).waitForDisplayed({ timeout: 5000 });
      await app.screenshot("tool-image-larger");
      await b.keys("Escape");
      await b.$(tid("image-viewer")).waitForExist({ reverse: true, timeout: 5000 });

      const cards = await b.$$(tid("tool-card"));
      assert.equal(cards.length, 3);
      await cards[1].$("summary").click();
      const tree = cards[1].$(tid("tool-structured"));
      await tree.waitForDisplayed({ timeout: 10000 });
      assert.match(await tree.getText(), /temperature/);
      assert.match(await tree.getText(), /conditions/);
      await cards[2].$("summary").click();
      await cards[2].$(tid("tool-link")).waitForDisplayed({ timeout: 10000 });
      assert.equal((await cards[2].$$(tid("tool-link"))).length, 2);
      assert.match(await cards[2].$(tid("tool-link")).getText(), /demo:\/\/resource/);
      await app.screenshot("tool-structured-and-links");

      // A link is read only when asked, through the server that returned it, into the canvas.
      const links = await cards[2].$$(tid("tool-link"));
      await links[1].$(tid("tool-link-open")).click();
      await b.$(tid("canvas")).waitForDisplayed({ timeout: 15000 });
      const current = `${tid("canvas-file")}[aria-current="true"]`;
      await b.waitUntil(async () => /Text Resource 2/.test((await textOf(b, current).catch(() => "")) ?? ""), {
        timeout: 15000,
        timeoutMsg: "the canvas is not at the link's file",
      });
      await b.$(tid("canvas-code")).waitForDisplayed({ timeout: 10000 });
      assert.match(await textOf(b, tid("canvas-code")), /Resource 2/);
      const names = await b.execute((sel) => [...document.querySelectorAll(sel)].map((f) => f.textContent.replace(/\s+/g, " ").trim()), tid("canvas-file"));
      assert.equal(names.length, 2, `the tool's image and the link's file: ${names}`);
      await app.screenshot("canvas-link");

      // Exported with its calls through the save dialog and imported back: the same
      // conversation, its cards and the image drawn again from the imported result.
      await b.$(tid("canvas-close")).click();
      const [first] = await sidebarIds(b);
      const out = path.join(home, "tools-export.json");
      await b.$(tid("conversation-menu")).click();
      await b.$(tid("export-json")).click();
      await chooseInFileDialog("Export as JSON", out, { replace: true });
      await b.$(tid("export-saved")).waitForDisplayed({ timeout: 15000 });
      const written = JSON.parse(fs.readFileSync(out, "utf8"));
      assert.equal(written.tool_runs.length, 3);
      assert.ok(written.tool_runs.every((run) => run.result && run.decision === "allowed"), "each call is exported with its decision and result");
      assert.ok(written.messages.some((m) => m.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length === 3));
      await b.$(tid("import-conversation")).click();
      await chooseInFileDialog("Import a conversation", out);
      await b.waitUntil(async () => (await sidebarIds(b)).length === 2, { timeout: 15000, timeoutMsg: "the import did not arrive" });
      const imported = (await sidebarIds(b)).find((id) => id !== first);
      await b.$(`${tid("conversation-item")}[data-id="${imported}"][aria-current="page"]`).waitForExist({ timeout: 10000, timeoutMsg: "the import is not opened" });
      // What the import holds is what was exported, the calls tied to the same answers.
      const again = JSON.parse(cli(home, ["conversations", "export", imported, "--format", "json"]).stdout);
      const same = (file) => {
        const at = new Map(file.messages.map((m, i) => [m.id, i]));
        return {
          messages: file.messages.map(({ id: _id, ...m }) => m),
          tool_runs: file.tool_runs.map(({ message_id, ...run }) => ({ ...run, message: at.get(message_id) })),
        };
      };
      assert.deepEqual(same(again), same(written));
      await b.waitUntil(async () => (await b.$$(tid("tool-card"))).length === 3, { timeout: 10000, timeoutMsg: "the imported calls' cards are not shown" });
      await b.waitUntil(() => b.execute((sel) => document.querySelector(sel)?.naturalWidth ?? 0, tid("tool-image")).then((w) => w === 20), {
        timeout: 10000,
        timeoutMsg: "the imported call's image is not drawn",
      });
      await app.screenshot("imported-tool-calls");
    } finally {
      await app.close();
    }
  });
});

test("an edited message keeps the old branch behind ‹ 1/2 ›, Regenerate adds another, and a message pair deletes", async () => {
  await withMockModel("render-branches", {}, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      const answers = () => b.execute((sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent.trim()), tid("answer-text"));
      const hoverAndClick = async (row, id) => {
        await row.moveTo();
        const button = row.$(tid(id));
        await button.waitForClickable({ timeout: 5000 });
        await button.click();
      };
      await sendInNewConversation(b, "Say hello");
      await b.waitUntil(async () => (await answers()).join() === "Hello.", { timeout: 20000, timeoutMsg: "no first answer" });

      // Up in the empty composer edits the last message of yours.
      const input = b.$(tid("composer-input"));
      await b.$(tid("composer-send")).waitForExist({ timeout: 10000 });
      await input.click();
      await b.keys("ArrowUp");
      const box = b.$(tid("edit-input"));
      await box.waitForDisplayed({ timeout: 5000 });
      assert.equal(await box.getValue(), "Say hello");
      await box.clearValue();
      await box.setValue("Say goodbye");
      await app.screenshot("branch-editing");
      await b.keys("Enter");
      await b.waitUntil(async () => (await answers()).join() === "Goodbye.", { timeout: 20000, timeoutMsg: "the edited message got no answer" });
      await b.waitUntil(async () => (await textOf(b, tid("branch-position")).catch(() => "")) === "Version 2 of 2", { timeout: 10000, timeoutMsg: "no switcher" });

      // Regenerate the answer: a second point, on the answer.
      const answerRow = b.$(`${tid("message-list")} [data-role="assistant"]`);
      await hoverAndClick(answerRow, "regenerate");
      await b.waitUntil(async () => (await b.$$(tid("branch-switcher"))).length === 2, { timeout: 20000, timeoutMsg: "no second switcher" });
      await b.waitUntil(async () => (await answers()).join() === "Goodbye.", { timeout: 20000 });
      await app.screenshot("branch-switchers");

      // Back to the first branch: the first question and its answer, whole.
      await b.$(`${tid("message-list")} [data-role="user"] [aria-label="Previous version"]`).click();
      await b.waitUntil(async () => (await answers()).join() === "Hello.", { timeout: 10000, timeoutMsg: "the old branch did not come back" });
      assert.equal(await textOf(b, tid("branch-position")), "Version 1 of 2");
      assert.equal((await b.$$(tid("branch-switcher"))).length, 1, "the answer's point is in the other branch");
      await app.screenshot("branch-switched-back");

      // Search finds the edited question in the branch not shown, says so, and opens it.
      await b.keys(["Control", "k"]);
      const search = b.$(tid("search-input"));
      await search.waitForDisplayed({ timeout: 5000 });
      await search.setValue("say goodbye");
      const hit = b.$(tid("search-hit"));
      await hit.waitForDisplayed({ timeout: 10000 });
      assert.match(await hit.getText(), /You, another version/);
      await app.screenshot("search-another-version");
      await b.keys("Enter");
      await b.waitUntil(async () => (await answers()).join() === "Goodbye.", { timeout: 10000, timeoutMsg: "the hit's branch was not shown" });
      assert.equal(await textOf(b, tid("branch-position")), "Version 2 of 2");
      const marked = b.$(`${tid("message-list")} .row.marked`);
      await marked.waitForDisplayed({ timeout: 10000, timeoutMsg: "the hit was not marked" });
      assert.match(await marked.getText(), /Say goodbye/);

      // Delete the pair: asks first, then nothing is left.
      await hoverAndClick(b.$(`${tid("message-list")} [data-role="user"]`), "delete-turn");
      const dialog = b.$(tid("confirm-dialog"));
      await dialog.waitForDisplayed({ timeout: 5000 });
      await dialog.$("button=Delete").click();
      await b.waitUntil(async () => (await answers()).length === 0, { timeout: 10000, timeoutMsg: "the pair stayed" });
    } finally {
      await app.close();
    }
  });
});

test("files attached from the command line reach the model and show on the message in the window", async () => {
  await withMockModel("render-files", {}, async (home, mock) => {
    const png = path.join(home, "pixel.png");
    fs.writeFileSync(
      png,
      Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64"),
    );
    const csv = path.join(home, "scores.csv");
    fs.writeFileSync(csv, "team,points\nred,3\n");
    cli(home, ["chat", "--attach", png, "--attach", csv, "Say hello"]);
    const sent = (await mock.journal()).at(-1).body.messages.find((m) => m.role === "user").content;
    assert.deepEqual(
      sent.map((part) => part.type),
      ["image_url", "text", "text"],
      "the image, the table, then the words",
    );
    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("conversation-item")).click();
      const files = tid("message-files");
      await b.$(files).waitForDisplayed({ timeout: 20000 });
      assert.deepEqual(
        await b.execute((sel) => [...document.querySelectorAll(`${sel} li`)].map((li) => li.textContent.replace(/\s+/g, " ").trim()), files),
        ["Image pixel.png 70 B", "Text scores.csv 18 B"],
      );
      await app.screenshot("message-with-files");
    } finally {
      await app.close();
    }
  });
});

/**
 * Clicks Attach… until Rust's file dialog is up: a click made while the new conversation is
 * still being laid out can land beside the button (seen once in six runs). A second click
 * cannot open a second dialog: the first one, when it is up, is modal over the window.
 */
async function openAttachDialog(b) {
  for (let i = 0; i < 3; i++) {
    await b.$(tid("composer-attach")).click();
    try {
      await nativeWindow("Attach files", 15000);
      return;
    } catch {
      screenshotScreen(`attach-dialog-missing-${i}`);
    }
  }
  assert.fail("the Attach files dialog never appeared");
}

test("Attach… picks a file in the native dialog; it shows as a chip, goes with the message and stays on it, and an edit keeps it", async () => {
  await withMockModel("render-attach", {}, async (home, mock) => {
    const csv = path.join(home, "scores.csv");
    fs.writeFileSync(csv, "team,points\nred,3\nblue,5\n");
    const app = await launch(home);
    try {
      const b = app.browser;
      await openNewConversation(b);
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await openAttachDialog(b);
      await chooseInFileDialog("Attach files", csv);
      const chip = tid("composer-file");
      await b.$(chip).waitForDisplayed({ timeout: 10000 });
      assert.equal((await textOf(b, chip)).replace(/\s+/g, " ").replace("×", "").trim(), "Text scores.csv 25 B");
      await app.screenshot("composer-with-a-file");
      // gpt-4o is known to take images; the person can say otherwise, and take it back.
      const images = b.$(tid("model-images"));
      await b.waitUntil(async () => (await images.getAttribute("aria-pressed").catch(() => null)) === "true", { timeout: 10000, timeoutMsg: "the images switch is not on" });
      await images.click();
      await b.waitUntil(async () => (await images.getAttribute("aria-pressed")) === "false", { timeout: 10000, timeoutMsg: "the images switch did not turn off" });
      await images.click();
      await b.waitUntil(async () => (await images.getAttribute("aria-pressed")) === "true", { timeout: 10000, timeoutMsg: "the images switch did not turn back on" });
      await input.setValue("Say hello");
      await b.keys("Enter");
      await b.$(tid("message-files")).waitForDisplayed({ timeout: 20000 });
      await b.$(tid("answer")).waitForDisplayed({ timeout: 20000 });
      assert.equal(await b.execute((sel) => document.querySelectorAll(sel).length, chip), 0, "the chip went with the message");
      const sent = (await mock.journal()).at(-1).body.messages.find((m) => m.role === "user").content;
      assert.equal(sent[0].text, "The attached file “scores.csv”:\n```\nteam,points\nred,3\nblue,5\n```");
      assert.equal(sent[1].text, "Say hello");

      // Edited, the message keeps its file (shown as a chip in the edit form) unless removed.
      const question = b.$('[data-role="user"]');
      await question.moveTo();
      await question.$(tid("edit-message")).waitForClickable({ timeout: 5000 });
      await question.$(tid("edit-message")).click();
      await b.$(tid("edit-file")).waitForDisplayed({ timeout: 5000 });
      assert.match(await textOf(b, tid("edit-file")), /scores\.csv/);
      await app.screenshot("edit-with-a-file");
      await b.$(tid("edit-input")).setValue("Say goodbye");
      await b.$(tid("edit-send")).click();
      await b.waitUntil(async () => (await textOf(b, tid("answer-text")).catch(() => "")) === "Goodbye.", { timeout: 20000, timeoutMsg: "no answer to the edit" });
      assert.match(await textOf(b, tid("message-files")), /scores\.csv/);
      const edited = (await mock.journal()).at(-1).body.messages.find((m) => m.role === "user").content;
      assert.equal(edited[0].text, sent[0].text);
      assert.equal(edited[1].text, "Say goodbye");
    } finally {
      await app.close();
    }
  });
});

test("files dropped on the window become chips; a CSV suggests the switched-off tool that fits it, and one click turns it on", async () => {
  await withMockModel("render-drop", { fault: true }, async (home) => {
    const csv = path.join(home, "scores.csv");
    fs.writeFileSync(csv, "team,points\nred,3\nblue,5\n");
    const notes = path.join(home, "notes.md");
    fs.writeFileSync(notes, "# Notes\n\nBring the scores.\n");
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "fault");
      await openNewConversation(b);
      // fault's report tool (its description says "CSV") off in this conversation.
      await b.$(tid("tools-button")).click();
      await b.$(tid("tools-panel")).waitForDisplayed({ timeout: 20000 });
      await b.waitUntil(async () => /tools offered/.test((await textOf(b, tid("tools-summary")).catch(() => "")) ?? ""), {
        timeout: 20000,
        timeoutMsg: "the panel lists no tools",
      });
      const total = Number(/of (\d+) tools/.exec(await textOf(b, tid("tools-summary")))[1]);
      await b.$(`${tid("tools-tool-switch")}[data-tool="report"]`).click();
      await b.waitUntil(async () => (await textOf(b, tid("tools-summary"))).startsWith(`${total - 1} of ${total}`), {
        timeout: 10000,
        timeoutMsg: "switching report off is not counted",
      });
      await b.$(tid("tools-close")).click();
      await b.$(tid("composer-input")).waitForEnabled({ timeout: 20000 });

      await dropFilesOnWindow([csv, notes]);
      const chips = tid("composer-file");
      await b.waitUntil(async () => (await b.$$(chips)).length === 2, { timeout: 15000, timeoutMsg: "the dropped files are not chips" });
      const shown = await b.execute((sel) => [...document.querySelectorAll(sel)].map((c) => c.textContent.replace(/\s+/g, " ").replace("×", "").trim()), chips);
      assert.deepEqual(shown.sort(), ["Text notes.md 27 B", "Text scores.csv 25 B"]);
      const suggestion = b.$(tid("tool-suggestion"));
      await suggestion.waitForDisplayed({ timeout: 15000 });
      const said = (await suggestion.getText()).replace(/\s+/g, " ");
      assert.match(said, /A tool that is off fits these files: .*Report/);
      assert.match(said, /scores\.csv: its description says “csv”/);
      await app.screenshot("composer-dropped-files");
      await b.$(tid("tool-suggestion-enable")).click();
      await suggestion.waitForDisplayed({ reverse: true, timeout: 10000 });
      await b.$(tid("tools-button")).click();
      await b.waitUntil(async () => (await textOf(b, tid("tools-summary"))).startsWith(`${total} of ${total}`), {
        timeout: 10000,
        timeoutMsg: "the suggested tool was not turned on",
      });
    } finally {
      await app.close();
    }
  });
});

test("/ picks a running server's prompt with its arguments (completed by the server) and @ attaches its resource", async () => {
  await withMockModel("render-pickers", { everything: true }, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await openNewConversation(b);
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      // server-everything starts with the window; its prompts are listed once it runs.
      const picker = tid("composer-picker");
      await b.waitUntil(
        async () => {
          await input.setValue("/");
          await b.$(picker).waitForDisplayed({ timeout: 5000 });
          await sleep(300);
          const n = await b.execute((sel) => document.querySelectorAll(sel).length, tid("picker-entry"));
          if (n === 0) await b.keys("Escape");
          return n > 0;
        },
        { timeout: 60000, interval: 500, timeoutMsg: "server-everything's prompts never showed" },
      );
      await b.$(tid("picker-search")).setValue("completable");
      await app.screenshot("composer-prompt-picker");
      await b.keys("Enter");
      const argument = tid("picker-argument");
      await b.$(argument).waitForDisplayed({ timeout: 10000 });
      await b.$(argument).setValue("Eng");
      // The server completes the department as it is typed (a datalist under the field).
      await b.waitUntil(
        async () => (await b.execute(() => [...document.querySelectorAll("datalist option")].map((o) => o.value))).includes("Engineering"),
        { timeout: 10000, timeoutMsg: "no completion came" },
      );
      const fields = await b.$$(argument);
      await fields[0].setValue("Engineering");
      await fields[1].setValue("Alice");
      await b.$(tid("picker-use")).click();
      await b.waitUntil(async () => (await input.getValue()) === "Please promote Alice to the head of the Engineering team.", {
        timeout: 10000,
        timeoutMsg: "the prompt did not fill the composer",
      });
      await input.addValue(" See @");
      await b.$(picker).waitForDisplayed({ timeout: 10000 });
      await b.$(tid("picker-search")).setValue("features.md");
      await b.keys("Enter");
      await b.$(tid("composer-file")).waitForDisplayed({ timeout: 10000 });
      assert.match(await textOf(b, tid("composer-file")), /Text\s+features\.md/);
      assert.equal(await input.getValue(), "Please promote Alice to the head of the Engineering team. See ");
      await app.screenshot("composer-after-pickers");
    } finally {
      await app.close();
    }
  });
});
