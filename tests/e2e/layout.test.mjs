// The layout rules of docs/DESIGN.md, measured in the real window: at 1000, 1200 and 1440 px
// nothing in the conversation header, the composer's bar or the sidebar leaves its container
// or clips its text without an ellipsis, their rows stay one row, and the title keeps its room,
// with the longest title, model name and server name the tests use.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { answerSays, cli, launch, nativeWindow, openNewConversation, pressIn, serverRunning, textOf, tid, withMockModel } from "./harness.mjs";

const LONG_TITLE = "A conversation about the quarterly planning of the infrastructure migration, with notes from every team involved";
const LONG_MODEL = "a-very-long-model-name-from-a-local-server-llama-3.3-70b-instruct-q4_K_M-2026-12-06";
const LONG_SERVER = "a-server-with-a-rather-long-name-for-its-tools";

/** What in `selectors` breaks the rules at the window's present width: one line per problem. */
function problems(b, selectors) {
  return b.execute((sels) => {
    const found = [];
    const describe = (el) => `${el.tagName.toLowerCase()}${el.dataset.testid ? `[${el.dataset.testid}]` : el.className ? `.${String(el.className).split(" ")[0]}` : ""}`;
    for (const sel of sels) {
      const box = document.querySelector(sel);
      if (!box) {
        found.push(`${sel}: not on the page`);
        continue;
      }
      const outer = box.getBoundingClientRect();
      for (const el of box.querySelectorAll("*")) {
        if (el.getClientRects().length === 0 || el.closest(".visually-hidden, [role='menu'], [role='listbox']")) continue;
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.height === 0) continue;
        if (r.left < outer.left - 1 || r.right > outer.right + 1 || r.top < outer.top - 1 || r.bottom > outer.bottom + 1) {
          found.push(`${sel} › ${describe(el)} leaves its container (${Math.round(r.left)}–${Math.round(r.right)} in ${Math.round(outer.left)}–${Math.round(outer.right)})`);
        }
        const style = getComputedStyle(el);
        const clips = el.scrollWidth > el.clientWidth + 1 && style.overflowX === "hidden" && style.textOverflow !== "ellipsis";
        if (clips && el.children.length === 0 && el.textContent.trim()) found.push(`${sel} › ${describe(el)} clips its text without an ellipsis`);
      }
    }
    return found;
  }, selectors);
}

/** Whether the children of `selector` lie on one row (each one overlaps every other vertically). */
function oneRow(b, selector) {
  return b.execute((sel) => {
    const kids = [...(document.querySelector(sel)?.children ?? [])].filter((k) => k.getClientRects().length > 0 && !k.classList.contains("visually-hidden"));
    const rects = kids.map((k) => k.getBoundingClientRect()).filter((r) => r.height > 0);
    if (rects.length < 2) return `only ${rects.length} child shown`;
    const top = Math.max(...rects.map((r) => r.top));
    const bottom = Math.min(...rects.map((r) => r.bottom));
    return top < bottom || `children from ${top} to ${bottom}`;
  }, selector);
}

test("at 1000, 1200 and 1440 px the header, the composer and the sidebar keep to their boxes and their rows", async () => {
  await withMockModel("layout", { fault: true }, async (home, mock) => {
    cli(home, ["provider", "add", "A local server with a long name", "--kind", "openai_compatible", "--base-url", `${mock.root}/v1`, "--model", LONG_MODEL]);
    // A profile new conversations follow: its name shows in the header.
    cli(home, ["profile", "create", "Research assistant for the migration", "--default"]);
    cli(home, ["mcp", "add", LONG_SERVER, "--", path.resolve("tests/peers/.venv/bin/python"), path.resolve("tests/peers/fault_server.py")]);
    const app = await launch(home);
    try {
      const b = app.browser;
      // Both servers run first, so the header counts their tools (its widest state).
      await serverRunning(b, "fault");
      await serverRunning(b, LONG_SERVER);
      await openNewConversation(b);
      await b.$(tid("conversation-menu")).click();
      await b.$(tid("rename-conversation")).click();
      const input = b.$(tid("rename-input"));
      await input.setValue(LONG_TITLE);
      await b.keys("Enter");
      await b.waitUntil(async () => (await textOf(b, tid("conversation-header-title"))).startsWith("A conversation about"), {
        timeoutMsg: "the long title was not saved",
      });
      // The long model is the conversation's pick.
      const wanted = await b.execute((model) => [...document.querySelector('[data-testid="model-picker"]').options].find((o) => o.textContent.trim() === model)?.value ?? null, LONG_MODEL);
      assert.ok(wanted, "the long model is not in the picker");
      await b.execute((value) => {
        const select = document.querySelector('[data-testid="model-picker"]');
        select.value = value;
        select.dispatchEvent(new Event("change", { bubbles: true }));
      }, wanted);
      // One answer: the window's fill and the cost so far show in the header; auto-approve on
      // (after Rust's own dialog) shows its chip. The header is then as full as it gets.
      await b.$(tid("composer-input")).setValue("Say hello");
      await b.keys("Enter");
      await answerSays(b, "Hello");
      await b.$(tid("conversation-window")).waitForExist({ timeoutMsg: "no window fill in the header" });
      await b.$(tid("conversation-menu")).click();
      await b.$(tid("auto-approve")).click();
      pressIn(await nativeWindow("Run every tool without asking"), "alt+r");
      await b.$(tid("auto-approve-chip")).waitForDisplayed({ timeoutMsg: "auto-approve did not turn on" });
      await b.$(tid("composer-input")).setValue("A question long enough to fill the box a little");
      // The tools' count is in the header once the long-named server runs (a CI run showed it
      // where a quicker local one had not yet).
      await b.$(tid("tools-count")).waitForExist({ timeout: 20000, timeoutMsg: "the header shows no tools count" });

      for (const [width, height] of [
        [1000, 700],
        [1200, 780],
        [1440, 900],
      ]) {
        await app.resize(width, height);
        const found = await problems(b, [tid("conversation-header"), tid("composer-bar"), tid("sidebar")]);
        assert.deepEqual(found, [], `at ${width} px`);
        assert.equal(await oneRow(b, tid("conversation-header")), true, `the header wraps at ${width} px`);
        assert.equal(await oneRow(b, tid("composer-bar")), true, `the composer's bar wraps at ${width} px`);
        if (width >= 1200) {
          const title = await b.$(tid("conversation-header-title")).getSize("width");
          assert.ok(title >= 240, `the title has ${title} px at ${width} px`);
        }
        await app.screenshot(`layout-${width}`);
      }
      await app.resize(1200, 780);
    } finally {
      await app.close();
    }
  });
});
