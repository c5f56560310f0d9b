// Settings in the real window: checked values, kept across a relaunch, the theme applied.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { launch, nativeWindow, pasteInto, pressIn, screenshotScreen, tempHome, tid, windowGone } from "./harness.mjs";

const field = (name) => `${tid("settings-form")} [name="${name}"]`;
const theme = (b) => b.execute(() => document.documentElement.dataset.theme);
/** What Settings › Command line said of the last press ("" before any). */
const doneSays = (b) => b.execute(() => document.querySelector('[data-testid="command-line-done"]')?.textContent?.trim() ?? "");

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
    await b.$(tid("composer-add-provider")).waitForDisplayed();
    await app.screenshot("conversation-dark");
    await b.$(tid("nav-settings")).click();
    await b.waitUntil(async () => (await b.$(field("max_rounds")).getValue()) === "25");
  } finally {
    await app.close();
  }
});

test("Settings › Command line links switchboard into the user's bin, which runs this app, and takes it away again", async () => {
  const home = tempHome("command-line");
  // The app's own HOME, so the link lands in a folder of the test's; the login shell names the
  // file the hint speaks of.
  const user = tempHome("command-line-user");
  const link = path.join(user, ".local", "bin", "switchboard");
  // Its PATH without /usr/local/bin, which root (the CI machine's user) could write to and
  // would be given instead.
  const PATH = process.env.PATH.split(path.delimiter)
    .filter((dir) => !dir.startsWith("/usr/local/"))
    .join(path.delimiter);
  const app = await launch(home, { HOME: user, SHELL: "/bin/zsh", PATH });
  try {
    const b = app.browser;
    await b.$(tid("nav-settings")).click();
    const status = await b.$(tid("command-line-status"));
    await status.waitForDisplayed();
    assert.match(await status.getText(), /No switchboard command is on your PATH yet\. Adding it puts it at .*\.local\/bin\/switchboard\./);

    // Rust asks first, outside the webview, naming the binary and where it goes: a no changes
    // nothing.
    const question = "Make “switchboard” in a terminal run this app?";
    await b.$(tid("command-line-install")).click();
    pressIn(await nativeWindow(question), "Escape");
    await windowGone(question);
    await b.waitUntil(async () => (await doneSays(b)) === "Nothing to change.", {
      timeout: 10000,
      timeoutMsg: "a no was not said",
    });
    assert.equal(fs.lstatSync(link, { throwIfNoEntry: false }), undefined, "a no puts nothing there");
    await b.$(tid("command-line-install")).click();
    const dialog = await nativeWindow(question);
    screenshotScreen("settings-command-line-asks");
    pressIn(dialog, "alt+p");
    await b.waitUntil(async () => (await doneSays(b)) === "Added.", {
      timeout: 10000,
      timeoutMsg: "the command was not added",
    });
    assert.equal(fs.readlinkSync(link), fs.realpathSync(process.env.SWITCHBOARD_BIN));
    assert.match(await b.$(tid("command-line-status")).getText(), /runs this app, but a terminal does not look there yet/);
    assert.match(
      await b.$(tid("command-line-hint")).getText(),
      /is not on your PATH; add this line to ~\/\.zprofile and open a new terminal: export PATH="\$HOME\/\.local\/bin:\$PATH"/,
    );
    await b.$(tid("command-line-section")).scrollIntoView();
    await app.screenshot("settings-command-line");
    assert.match(execFileSync(link, ["--version"], { encoding: "utf8" }), /^switchboard \d+\.\d+\.\d+/);

    await b.$(tid("command-line-remove")).click();
    await b.waitUntil(async () => (await b.$(tid("command-line-done")).getText()).startsWith("Removed"));
    assert.equal(fs.lstatSync(link, { throwIfNoEntry: false }), undefined, "the link is gone");
  } finally {
    await app.close();
  }
});
