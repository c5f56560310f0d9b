// Settings in the real window: checked values, kept across a relaunch, the theme applied.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { launch, pasteInto, tempHome, tid } from "./harness.mjs";

const field = (name) => `${tid("settings-form")} [name="${name}"]`;
const theme = (b) => b.execute(() => document.documentElement.dataset.theme);

test("settings are checked, saved to settings.json, kept across a relaunch and the theme applies", async () => {
  const home = tempHome("settings");
  let app = await launch(home);
  try {
    const b = app.browser;
    await b.$(tid("nav-settings")).click();
    await b.$(tid("settings-form")).waitForDisplayed();
    assert.equal(await b.$(field("max_rounds")).getValue(), "10");
    assert.equal(await b.$(field("tool_timeout_secs")).getValue(), "60");
    assert.equal(await b.$(field("run_time_limit_minutes")).getValue(), "10");

    await pasteInto(b, field("max_rounds"), "0");
    await b.$(tid("settings-save")).click();
    await b.$(tid("error-max_rounds")).waitForDisplayed();

    await pasteInto(b, field("max_rounds"), "25");
    await b.$(field("theme")).selectByAttribute("value", "dark");
    await b.$(tid("settings-save")).click();
    await b.$(tid("settings-saved")).waitForDisplayed();
    await b.waitUntil(async () => (await theme(b)) === "dark", { timeoutMsg: "the dark theme was not applied" });
    await app.screenshot("settings-dark");
  } finally {
    await app.close();
  }

  const saved = JSON.parse(fs.readFileSync(path.join(home, "config", "settings.json"), "utf8"));
  assert.equal(saved.max_rounds, 25);
  assert.equal(saved.theme, "dark");

  app = await launch(home);
  try {
    const b = app.browser;
    await b.waitUntil(async () => (await theme(b)) === "dark", { timeoutMsg: "the theme was not kept" });
    await b.$(tid("new-conversation")).click();
    await b.$(tid("composer-hint")).waitForDisplayed();
    await app.screenshot("conversation-dark");
    await b.$(tid("nav-settings")).click();
    await b.waitUntil(async () => (await b.$(field("max_rounds")).getValue()) === "25");
  } finally {
    await app.close();
  }
});
