// Bad situations in the real window: a damaged database, a second copy, no keychain.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { BIN, launch, pasteInto, run, sidebarIds, tempHome, tid } from "./harness.mjs";

test("a damaged database is shown as a clear message and left untouched", async () => {
  const home = tempHome("corrupt");
  const db = path.join(home, "data", "switchboard.db");
  fs.mkdirSync(path.dirname(db), { recursive: true });
  const garbage = Buffer.from("these are somebody's notes, not SQLite\n".repeat(500));
  fs.writeFileSync(db, garbage);
  const app = await launch(home);
  try {
    const b = app.browser;
    const message = b.$(tid("database-error"));
    await message.waitForDisplayed({ timeout: 20000 });
    assert.match(await message.getText(), /left untouched/i);
    await app.screenshot("database-damaged");
  } finally {
    await app.close();
  }
  assert.ok(fs.readFileSync(db).equals(garbage), "the file was not modified");
});

test("a second copy started on the same home brings the first forward and exits", async () => {
  const home = tempHome("second");
  const app = await launch(home);
  try {
    const b = app.browser;
    await b.$(tid("new-conversation")).click();
    await b.waitUntil(async () => (await sidebarIds(b)).length === 1);
    const [first] = await sidebarIds(b);

    const second = run(BIN, [], { env: { ...process.env, SWITCHBOARD_HOME: home } });
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stderr, /already running/);
    // It did not tidy the first copy's new conversation away as left unused.
    const listed = JSON.parse(run(BIN, ["conversations", "list", "--json"], { env: { ...process.env, SWITCHBOARD_HOME: home } }).stdout);
    assert.ok(JSON.stringify(listed).includes(first), "the open conversation is still stored");

    // The first copy is unharmed and still works: a new conversation takes the place of the
    // one left unused.
    await b.$(tid("new-conversation")).click();
    await b.waitUntil(async () => {
      const ids = await sidebarIds(b);
      return ids.length === 1 && ids[0] !== first;
    });
  } finally {
    await app.close();
  }
});

test("with no keychain reachable the Providers page says so and saves nothing", async () => {
  const home = tempHome("no-keychain");
  const app = await launch(home, { DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/switchboard-bus" });
  try {
    const b = app.browser;
    await b.$(tid("nav-providers")).click();
    const banner = b.$(tid("keychain-banner"));
    await banner.waitForDisplayed({ timeout: 20000 });
    assert.match(await banner.getText(), /keychain/i);

    await b.$(`${tid("provider-form")} [name="preset"]`).selectByAttribute("value", "openai");
    await pasteInto(b, `${tid("provider-form")} [name="name"]`, "OpenAI");
    await pasteInto(b, `${tid("provider-form")} [name="api_key"]`, "sk-e2e-nowhere-to-go");
    await b.$(tid("provider-submit")).click();
    await b.waitUntil(
      async () =>
        (await b.$(tid("provider-form-error")).isExisting()) || (await b.$(tid("error-api_key")).isExisting()),
      { timeoutMsg: "no error was shown" },
    );
    assert.equal((await b.$$(tid("provider-item"))).length, 0);
    await app.screenshot("no-keychain");
  } finally {
    await app.close();
  }
});
