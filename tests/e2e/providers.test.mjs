// Providers in the real window: field errors, and a key that goes to the OS keychain only.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { cli, filesContaining, fillProvider, launch, openProviders, pasteInto, run, tempHome, tid } from "./harness.mjs";

test("a provider with an empty name or a malformed base URL is refused beside the field", async () => {
  const app = await launch(tempHome("provider-errors"));
  try {
    const b = app.browser;
    await openProviders(b);
    assert.equal(await b.$(tid("composer-input")).isExisting(), false);

    await fillProvider(b, { preset: "openai", name: "   " });
    await b.$(tid("provider-submit")).click();
    await b.$(tid("error-name")).waitForDisplayed();

    await fillProvider(b, { preset: "openai", name: "OpenAI", baseUrl: "htp:/not a url" });
    await b.$(tid("provider-submit")).click();
    await b.$(tid("error-base_url")).waitForDisplayed();
    await app.screenshot("provider-field-errors");
    assert.equal((await b.$$(tid("provider-item"))).length, 0, "nothing was added");
  } finally {
    await app.close();
  }
});

test("a provider key goes to the OS keychain and nowhere else on disk", async () => {
  const home = tempHome("provider-key");
  const key = `sk-e2e-${randomUUID()}`;
  const app = await launch(home);
  try {
    const b = app.browser;
    // Without a provider the composer is disabled with a hint, and adding one is its main action.
    await b.$(tid("new-conversation")).click();
    await b.$(tid("composer-add-provider")).waitForDisplayed();
    assert.equal(await b.$(tid("composer-input")).isEnabled(), false);
    assert.equal(await b.$(tid("composer-send")).isExisting(), false);
    await b.$(tid("composer-add-provider")).waitForDisplayed();

    await openProviders(b);
    await fillProvider(b, { preset: "openai", name: "OpenAI", model: "gpt-4o-mini", key });
    await b.$(tid("provider-submit")).click();
    const item = b.$(`${tid("provider-item")}[data-name="OpenAI"]`);
    await item.waitForDisplayed();
    await b.waitUntil(async () => /keychain/i.test(await item.$(tid("provider-key-state")).getText()), {
      timeoutMsg: "the provider does not say its key is stored",
    });
    const keyField = await b.$(`${tid("provider-form")} [name="api_key"]`).getValue();
    assert.equal(keyField, "", "the key field is cleared after saving");
    const pageText = await b.execute(() => document.documentElement.outerHTML);
    assert.ok(!pageText.includes(key), "the key is not in the page");
    await app.screenshot("provider-added");
  } finally {
    await app.close();
  }

  const service = `switchboard:${home}`;
  const lookup = run("secret-tool", ["lookup", "service", service, "username", "provider/OpenAI"]);
  assert.equal(lookup.stdout.trim(), key, `secret-tool found the key (${lookup.stderr})`);
  assert.deepEqual(filesContaining(home, key), [], "no file under the app's home holds the key");
  assert.ok(!app.log.join().includes(key), "the app's output does not hold the key");
  run("secret-tool", ["clear", "service", service, "username", "provider/OpenAI"]);
});

test("a model's window is shown with whose word it is, and set on the Providers page as the command line sets it", async () => {
  const home = tempHome("provider-window");
  cli(home, ["provider", "add", "Local", "--kind", "openai_compatible", "--base-url", "http://127.0.0.1:9/v1", "--model", "gpt-4o"]);
  const app = await launch(home);
  try {
    const b = app.browser;
    await openProviders(b);
    const item = `${tid("provider-item")}[data-name="Local"]`;
    const shown = b.$(`${item} ${tid("provider-window")}`);
    await shown.waitForDisplayed();
    await b.waitUntil(async () => /128,000 tokens\s+From Switchboard's table/.test(await shown.getText()), {
      timeout: 10000,
      timeoutMsg: "the table's window is not shown",
    });
    await b.$(`${item} ${tid("provider-window-edit")}`).click();
    const input = b.$(`${item} ${tid("provider-window-input")}`);
    await input.waitForDisplayed();
    await pasteInto(b, `${item} ${tid("provider-window-input")}`, "8192");
    await app.screenshot("provider-window-editing");
    await b.$(`${item} ${tid("provider-window-save")}`).click();
    await b.waitUntil(async () => /8,192 tokens\s+Custom/.test(await shown.getText()), {
      timeout: 10000,
      timeoutMsg: "the person's window is not shown",
    });
    await app.screenshot("provider-window");
    const said = JSON.parse(cli(home, ["provider", "window", "Local", "gpt-4o", "--json"]).stdout);
    assert.deepEqual(said, { provider: "Local", model: "gpt-4o", tokens: 8192, said_by: "person" });
  } finally {
    await app.close();
  }
});
