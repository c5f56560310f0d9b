// Talking to providers from the real window, against aimock (a real third-party mock of the
// provider APIs): the first-start offer of a local Ollama, "Test connection", and the model
// picker in the composer, persisted per conversation.
import assert from "node:assert/strict";
import { test } from "node:test";
import { chooseOption, cli, fillProvider, launch, openProviders, pasteInto, portAnswers, sidebarIds, startAimock, tempHome, textOf, tid } from "./harness.mjs";

const OLLAMA_PORT = 11434;

test("a local Ollama is offered at first start, one click adds it, and the composer lists its models", async (t) => {
  if (await portAnswers(OLLAMA_PORT)) {
    t.skip(`something already listens on ${OLLAMA_PORT}; this test needs the port for a stand-in Ollama`);
    return;
  }
  // aimock speaks Ollama's /api/tags and /api/chat: it stands in for an Ollama on its usual port.
  const ollama = await startAimock(OLLAMA_PORT);
  const home = tempHome("local-offer");
  try {
    let app = await launch(home);
    try {
      const b = app.browser;
      const offerSel = `${tid("local-offer")}[data-preset="ollama"]`;
      const offer = b.$(offerSel);
      await offer.waitForDisplayed({ timeout: 20000 });
      assert.match(await offer.getText(), /Ollama/);
      await app.screenshot("local-offer");
      await b.$(`${offerSel} ${tid("local-offer-use")}`).click();
      await offer.waitForExist({ reverse: true, timeoutMsg: "the offer stays after it was taken" });

      await b.$(tid("new-conversation")).click();
      const picker = b.$(tid("model-picker"));
      await picker.waitForDisplayed({ timeout: 20000 });
      await b.waitUntil(async () => (await b.$$(`${tid("model-picker")} option`)).length >= 3, {
        timeoutMsg: "the picker does not list the server's models",
      });
      const options = await b.execute(
        (sel) => [...document.querySelector(sel).options].map((o) => o.value + "|" + o.textContent.trim()),
        tid("model-picker"),
      );
      assert.ok(options.some((o) => o.includes("gpt-4o")), options.join("\n"));
      // Pick another model; it is remembered for this conversation across a relaunch.
      const wanted = options.find((o) => o.includes("claude-3-5-sonnet"));
      assert.ok(wanted, options.join("\n"));
      // Option values are JSON ([provider, model]), which a CSS attribute selector cannot quote.
      await chooseOption(b, tid("model-picker"), wanted.split("|")[0]);
      await b.waitUntil(async () => (await picker.getValue()) === wanted.split("|")[0]);
      await app.screenshot("model-picker");
      // A question half written keeps the conversation (one left with nothing in it is not kept).
      const [id] = await sidebarIds(b);
      await pasteInto(b, tid("composer-input"), "Which model answers here?");
      await b.waitUntil(async () => JSON.parse(cli(home, ["conversations", "draft", id, "--json"]).stdout)?.text === "Which model answers here?", {
        timeout: 10000,
        timeoutMsg: "the draft was not saved",
      });
    } finally {
      await app.close();
    }

    app = await launch(home);
    try {
      const b = app.browser;
      await b.$(tid("conversation-item")).click();
      const picker = b.$(tid("model-picker"));
      await picker.waitForDisplayed({ timeout: 20000 });
      await b.waitUntil(async () => /claude-3-5-sonnet/.test(await picker.getValue()), {
        timeoutMsg: "the conversation's model was not remembered",
      });
      // With a provider configured, nothing is offered any more.
      assert.equal(await b.$(tid("local-offer")).isExisting(), false);
    } finally {
      await app.close();
    }
  } finally {
    await ollama.stop();
  }
});

test("test connection lists a server's models, or says exactly what failed", async () => {
  const mock = await startAimock();
  const app = await launch(tempHome("test-connection"));
  try {
    const b = app.browser;
    await openProviders(b);
    await fillProvider(b, { preset: "lm_studio", name: "Studio", baseUrl: `${mock.root}/v1` });
    await b.$(tid("provider-submit")).click();
    // A dead address: nothing listens on port 9 of loopback.
    await fillProvider(b, { preset: "custom", name: "Nowhere", baseUrl: "http://127.0.0.1:9/v1" });
    await b.$(tid("provider-submit")).click();

    const studio = `${tid("provider-item")}[data-name="Studio"]`;
    const nowhere = `${tid("provider-item")}[data-name="Nowhere"]`;
    // Both listed before a click: Nowhere, listed above Studio when it came, once took the
    // click meant for Studio's Test.
    await b.$(studio).waitForDisplayed();
    await b.$(nowhere).waitForDisplayed();
    await b.$(`${studio} ${tid("provider-test")}`).click();
    const good = b.$(`${studio} ${tid("provider-test-result")}`);
    await good.waitForDisplayed({ timeout: 20000 });
    await b.waitUntil(async () => (await good.getAttribute("data-ok")) === "true", { timeoutMsg: "no success shown" });
    const goodText = await textOf(b, `${tid("provider-item")}[data-name="Studio"] ${tid("provider-test-result")}`);
    assert.match(goodText, /Connected in \d+ ms: \d+ models\./);
    assert.match(goodText, /gpt-4o/);

    await b.$(`${nowhere} ${tid("provider-test")}`).click();
    const bad = b.$(`${nowhere} ${tid("provider-test-result")}`);
    await bad.waitForDisplayed({ timeout: 20000 });
    await b.waitUntil(async () => (await bad.getAttribute("data-ok")) === "false", { timeoutMsg: "no failure shown" });
    const badText = await textOf(b, `${tid("provider-item")}[data-name="Nowhere"] ${tid("provider-test-result")}`);
    assert.match(badText, /Cannot reach the provider/);
    await app.screenshot("test-connection");
  } finally {
    await app.close();
    await mock.stop();
  }
});
