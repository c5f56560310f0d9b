// A long conversation in the real window (issue 55): its history is more than the model's
// window of 8,192 tokens, so a new question has the oldest turns summarised by the model
// (aimock plays it). The conversation shows "Earlier messages summarised", folded, first, with
// the summary readable; unfolding shows every message it covers; the database keeps them all.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { answerSays, cli, framesDrawn, launch, textOf, tid, withMockModel } from "./harness.mjs";

/** An export of 40 turns of about 2 KB each (about 20,000 tokens). */
function longTrip() {
  const start = 1_750_000_000_000;
  const messages = [];
  for (let i = 0; i < 40; i++) {
    messages.push({ id: `q${i}`, role: "user", content: `Day ${i} of the island trip: what should we see?`, created_at: start + 2 * i, status: "complete" });
    messages.push({
      id: `a${i}`,
      role: "assistant",
      content: `Day ${i}: walk the old town, then the beach. ${"Sunny and calm, with a light breeze from the sea. ".repeat(40)}`,
      created_at: start + 2 * i + 1,
      status: "complete",
    });
  }
  return {
    format: "switchboard.conversation",
    version: 1,
    exported_at: start,
    conversation: { title: "Island trip", created_at: start, updated_at: start + 80, provider: null, model: null, system_prompt: "" },
    messages,
    tool_runs: [],
  };
}

test("a conversation longer than the model's window is summarised, folded in the conversation, and nothing is deleted", async () => {
  await withMockModel("compaction", {}, async (home) => {
    cli(home, ["provider", "window", "Mock", "gpt-4o", "8192"]);
    const seed = path.join(home, "trip.json");
    fs.writeFileSync(seed, JSON.stringify(longTrip()));
    const imported = JSON.parse(cli(home, ["conversations", "import", seed, "--json"]).stdout);
    const id = imported.id ?? imported.conversation?.id;
    assert.ok(id, JSON.stringify(imported));

    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(`${tid("conversation-item")}[data-id="${id}"]`).click();
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await input.setValue("When does the ferry leave?");
      await b.keys("Enter");
      await answerSays(b, "At nine, from pier three.");

      // The header says how full the window was for the answer, and what filled it.
      const fill = b.$(tid("conversation-window"));
      await fill.waitForDisplayed({ timeout: 10000 });
      // It needed more than the window, and says so.
      assert.match(await fill.getText(), /^[\d.]+k? of 8\.2k · needs [\d.]+k$/);
      const fillTitle = await fill.getAttribute("title");
      assert.match(fillTitle, /^The conversation needs about [\d,]+ tokens; this model runs with a window of 8,192/);
      assert.match(fillTitle, /of its window of 8,192/);
      assert.match(fillTitle, /Counted with o200k_base/);

      // Folded: the summary stands first, the messages it covers are not shown.
      const notice = await b.$(tid("run-notice")).getText();
      assert.match(notice, /earlier messages were summarised to fit the model's window of 8192 tokens/);
      const list = '[data-testid="message-list"]';
      const days = () =>
        b.execute(
          () =>
            [...document.querySelectorAll('[data-role="user"] .content')]
              .map((e) => /^Day (\d+) /.exec(e.textContent)?.[1])
              .filter(Boolean)
              .map(Number),
        );
      // Up to the top, once the run has ended (its end moves a list that follows it to the end).
      await b.$(tid("run-status")).waitForExist({ reverse: true, timeout: 20000 });
      const summary = b.$(tid("summary"));
      await b.waitUntil(
        async () => {
          await b.execute((sel) => (document.querySelector(sel).scrollTop = 0), list);
          return summary.isDisplayed();
        },
        { timeout: 20000, timeoutMsg: "no summary at the top of the conversation" },
      );
      const kept = await days();
      assert.ok(kept.length > 0 && !kept.includes(0), `rows shown under the summary: days ${kept}`);
      const firstKept = Math.min(...kept);
      assert.ok(firstKept > 0, "the first turns are folded away");
      // Once the rows brought in at the top are measured and laid out (a click lands where it aims).
      await framesDrawn(b);
      await summary.$("summary").click();
      await b.$(tid("summary-text")).waitForDisplayed({ timeout: 10000 });
      assert.match(await b.$(tid("summary-text")).getText(), /The ferry to Hvar leaves at nine from pier three/);
      await framesDrawn(b);
      await app.screenshot("compaction-folded");

      // Unfolded: the messages it covers are shown again, above the summary, which stays in view.
      await b.execute(() => document.querySelector('[data-testid="summary-fold"]').scrollIntoView({ block: "center" }));
      await b.$(tid("summary-fold")).click();
      await b.waitUntil(async () => (await textOf(b, tid("summary-fold")).catch(() => "")) === "Hide the earlier messages", {
        timeout: 10000,
        timeoutMsg: "the fold did not open",
      });
      // A message it covers comes into view above it as the person scrolls up.
      await b.waitUntil(
        () =>
          b.execute((sel) => {
            const scroller = document.querySelector(sel);
            scroller.scrollTop -= 200;
            const rows = [...scroller.querySelectorAll("[data-item]")].map((r) => r.dataset.item);
            return rows.findIndex((id) => id.startsWith("summary:")) > 0;
          }, list),
        { timeout: 10000, timeoutMsg: "the earlier messages were not shown again" },
      );
      await framesDrawn(b);
      await app.screenshot("compaction-unfolded");
    } finally {
      await app.close();
    }

    // Nothing deleted: the export holds every message and the summary.
    const exported = JSON.parse(cli(home, ["conversations", "export", id, "--format", "json"]).stdout);
    assert.equal(exported.messages.length, 82);
    assert.equal(exported.summaries.length, 1);
    assert.match(exported.summaries[0].text, /SUMMARY: The person is planning an island trip/);
  });
});
