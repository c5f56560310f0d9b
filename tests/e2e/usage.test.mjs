// What answers cost in the real window (issue 18): a price typed on the Providers page, an
// answer's cost beside its tokens, the conversation's total in its header, and the Usage page's
// chart and table — the same figures the command line reads from Rust.
import assert from "node:assert/strict";
import { test } from "node:test";
import { chooseOption, cli, sendInNewConversation, textOf, tid, withMockModel, launch } from "./harness.mjs";

test("a price set on the Providers page prices each answer; the header adds the conversation up and the Usage page charts it", async () => {
  await withMockModel("usage", {}, async (home) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("nav-providers")).click();
      await b.$(tid("price-form")).waitForDisplayed({ timeout: 20000 });
      await chooseOption(b, tid("price-provider"), "Mock");
      await b.$(tid("price-model")).setValue("gpt-4o");
      await b.$(tid("price-input")).setValue("2.50");
      await b.$(tid("price-output")).setValue("10");
      await b.$(tid("price-save")).click();
      const row = `${tid("price-row")}[data-model="gpt-4o"]`;
      await b.$(row).waitForDisplayed({ timeout: 10000 });
      assert.equal(await textOf(b, `${row} ${tid("price-row-input")}`), "$2.5");
      assert.equal(await textOf(b, `${row} ${tid("price-source")}`), "Custom price");
      await app.screenshot("prices");
      const said = JSON.parse(cli(home, ["provider", "price", "Mock", "gpt-4o", "--json"]).stdout);
      assert.deepEqual(said.price, { input: 2_500_000, output: 10_000_000, cached_input: null });

      await sendInNewConversation(b, "Say hello");
      await b.waitUntil(async () => (await textOf(b, tid("answer-text")).catch(() => "")) === "Hello.", { timeout: 20000, timeoutMsg: "no answer" });
      const cost = tid("answer-cost");
      await b.$(cost).waitForDisplayed({ timeout: 10000 });
      // Rust's figures: tokens × price, in pico-dollars.
      const report = JSON.parse(cli(home, ["usage", "--json"]).stdout);
      assert.equal(report.total.requests, 1);
      const { input_tokens: inTokens, output_tokens: outTokens, cost_pico: pico } = report.total;
      assert.equal(pico, inTokens * 2_500_000 + outTokens * 10_000_000);
      const shown = (await textOf(b, cost)).replace(/^·\s*/, "");
      assert.match(shown, /^\$0\.\d+$/);
      await b.waitUntil(async () => (await textOf(b, tid("conversation-cost")).catch(() => "")) === shown, {
        timeout: 10000,
        timeoutMsg: "the header does not add the conversation up",
      });
      await app.screenshot("answer-cost");

      await b.$(tid("nav-usage")).click();
      await b.$(tid("usage-chart")).waitForDisplayed({ timeout: 10000 });
      const rows = await b.$$(tid("usage-row"));
      assert.equal(rows.length, 1);
      assert.match(await rows[0].getText(), /Mock[\s\S]*gpt-4o/);
      assert.match(await textOf(b, tid("usage-total")), new RegExp(shown.replace(/[$.]/g, "\\$&")));
      assert.equal((await b.$$(tid("usage-segment"))).length, 1);
      await app.screenshot("usage-page");
    } finally {
      await app.close();
    }
  });
});
