// Several models side by side in the real window (issue 18, seed 003): two models of two
// providers answer one question, each in its column with its own tool call and an approval
// dialog that names it; when both are done the first answer is shown, "Also answered by" picks
// the other, and the next message goes to the picked model — read back from aimock's journal.
import assert from "node:assert/strict";
import { test } from "node:test";
import { cli, launch, openNewConversation, serverRunning, textOf, tid, withMockModel } from "./harness.mjs";

async function journal(mock) {
  const entries = await (await fetch(`${mock.root}/__aimock/journal?limit=1000`)).json();
  return entries.sort((a, b) => a.timestamp - b.timestamp);
}

const option = (provider, model) => `${tid("compare-model-option")}[data-provider="${provider}"][data-model="${model}"]`;

test("two models answer in their own columns with their own approvals; one is picked and answers next", async () => {
  await withMockModel("compare", { everything: true }, async (home, mock) => {
    cli(home, ["provider", "add", "Other", "--kind", "openai_compatible", "--base-url", `${mock.root}/v1`, "--model", "gpt-4o-mini"]);
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "everything");
      await openNewConversation(b);
      const input = b.$(tid("composer-input"));
      await input.waitForEnabled({ timeout: 20000 });
      await b.$(tid("compare-toggle")).click();
      await b.$(tid("compare-models")).waitForDisplayed();
      await b.$(option("Mock", "gpt-4o")).click();
      await b.$(option("Other", "gpt-4o-mini")).click();
      await input.setValue("Compare the sum");
      await b.waitUntil(async () => (await input.getValue()) === "Compare the sum", { timeout: 5000 });
      await app.screenshot("compare-picking");
      await b.keys("Enter");

      // Each model asks on its own, named in the dialog; the columns are behind it.
      await b.$(tid("compare-columns")).waitForDisplayed({ timeout: 20000 });
      const asked = [];
      for (let i = 0; i < 2; i++) {
        await b.$(tid("approval-dialog")).waitForDisplayed({ timeout: 20000 });
        const who = await textOf(b, tid("approval-asked-by"));
        asked.push(who);
        if (i === 0) await app.screenshot("compare-approval");
        await b.$(tid("approval-submit")).click();
        await b.waitUntil(async () => !(await b.$(tid("approval-dialog")).isDisplayed()) || (await textOf(b, tid("approval-asked-by")).catch(() => "")) !== who, {
          timeout: 10000,
          timeoutMsg: "the dialog stayed",
        });
      }
      assert.deepEqual(asked.map((a) => a.match(/Mock · gpt-4o|Other · gpt-4o-mini/)?.[0]).sort(), ["Mock · gpt-4o", "Other · gpt-4o-mini"]);

      // Both done: the first answer is shown, the other a click away.
      const answer = async () => (await b.$$(tid("answer-text"))).length && (await b.$$(tid("answer-text"))).at(-1).getText();
      await b.waitUntil(async () => (await answer()) === "gpt-4o: the sum is 5.", { timeout: 30000, timeoutMsg: "the first model's answer is not shown" });
      await b.$(tid("branch-models")).waitForDisplayed({ timeout: 10000 });
      await app.screenshot("compare-folded");
      const other = b.$(`${tid("branch-model-option")}[data-position="1"]`);
      assert.match(await other.getText(), /Other · gpt-4o-mini/);
      await other.click();
      await b.waitUntil(async () => (await answer()) === "gpt-4o-mini: it echoed five.", { timeout: 10000, timeoutMsg: "picking did not show the other answer" });
      await b.waitUntil(async () => (await b.$(tid("model-picker")).getAttribute("title")) === "Other: gpt-4o-mini", {
        timeout: 10000,
        timeoutMsg: "the model picker does not show the picked model",
      });
      await app.screenshot("compare-picked");

      // The next message goes to the picked model, with the picked answer in its history.
      const before = (await journal(mock)).length;
      await input.setValue("And after the comparison");
      await b.keys("Enter");
      await b.waitUntil(async () => (await answer()) === "Going on from the picked answer.", { timeout: 20000, timeoutMsg: "no answer after the pick" });
      const body = (await journal(mock))[before].body;
      assert.equal(body.model, "gpt-4o-mini");
      const history = JSON.stringify(body.messages);
      assert.ok(history.includes("it echoed five") && !history.includes("the sum is 5"), history);
    } finally {
      await app.close();
    }
  });
});
