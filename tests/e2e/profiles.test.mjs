// Profiles in the real window (issue 18): one made in Settings › Profiles (a system prompt, a
// model, a server switched off, a limit), made the default, is what a new conversation is told
// and asks (read back from the model's side, aimock's journal), shows in the conversation's
// header, and is switched off there; the command line reads the same profile from Rust.
import assert from "node:assert/strict";
import { test } from "node:test";
import { chooseOption, cli, launch, pasteInto, sendInNewConversation, serverRunning, textOf, tid, withMockModel } from "./harness.mjs";

/** What aimock was asked, oldest first. */
async function journal(mock) {
  const entries = await (await fetch(`${mock.root}/__aimock/journal?limit=1000`)).json();
  return entries.sort((a, b) => a.timestamp - b.timestamp);
}

test("a profile made in Settings and made the default gives a new conversation its prompt, model and tools; the header switches it off", async () => {
  await withMockModel("profiles", { everything: true }, async (home, mock) => {
    const app = await launch(home);
    try {
      const b = app.browser;
      await serverRunning(b, "everything");
      await b.$(tid("nav-settings")).click();
      await b.$(tid("profiles-section")).waitForDisplayed({ timeout: 20000 });
      await b.$(tid("profile-new")).click();
      await b.$(tid("profile-form")).waitForDisplayed();
      await pasteInto(b, tid("profile-name"), "Pirate");
      await pasteInto(b, tid("profile-system-prompt"), "Talk like a pirate.");
      // The composer's own model picker: a model the provider lists (aimock lists its fixtures').
      const model = JSON.stringify(["Mock", "gpt-4o-mini"]);
      await b.waitUntil(
        () => b.execute((sel, v) => [...(document.querySelector(sel)?.options ?? [])].some((o) => o.value === v), tid("profile-model"), model),
        { timeout: 15000, timeoutMsg: "the profile's model picker does not list gpt-4o-mini" },
      );
      await chooseOption(b, tid("profile-model"), model);
      await pasteInto(b, tid("profile-max-rounds"), "3");
      const everything = b.$(`${tid("profile-server-switch")}[data-server="everything"]`);
      await everything.waitForDisplayed();
      assert.equal(await everything.isSelected(), true, "a server the profile does not name is on");
      await everything.click();
      await app.screenshot("profile-form");
      await b.$(tid("profile-save")).click();
      const item = `${tid("profile-item")}[data-name="Pirate"]`;
      await b.$(item).waitForDisplayed({ timeout: 10000 });
      await b.$(`${item} ${tid("profile-menu")}`).click();
      await b.$(`${item} ${tid("profile-default")}`).click();
      await b.$(`${item} ${tid("profile-default-badge")}`).waitForDisplayed({ timeout: 10000 });
      assert.match(await textOf(b, `${item} ${tid("profile-model-label")}`), /Mock.*gpt-4o-mini/);
      await app.screenshot("profiles");

      const kept = JSON.parse(cli(home, ["profile", "show", "Pirate", "--json"]).stdout);
      assert.equal(kept.system_prompt, "Talk like a pirate.");
      assert.deepEqual([kept.provider, kept.model, kept.max_rounds, kept.is_default], ["Mock", "gpt-4o-mini", 3, true]);
      assert.deepEqual(kept.tools, [{ server: "everything", tool: null, enabled: false }]);

      // New conversation starts from the default profile: the model is told and asked what it says.
      const before = (await journal(mock)).length;
      await sendInNewConversation(b, "Say hello");
      await b.waitUntil(async () => (await textOf(b, tid("answer-text")).catch(() => "")) === "Hello.", { timeout: 20000, timeoutMsg: "no answer" });
      const body = (await journal(mock))[before].body;
      assert.equal(body.model, "gpt-4o-mini");
      assert.deepEqual(body.messages[0], { role: "system", content: "Talk like a pirate." });
      assert.ok(!(body.tools ?? []).some((t) => t.function.name.startsWith("everything__")), "everything is off in this profile");
      await b.$(tid("conversation-profile-name")).waitForDisplayed({ timeout: 10000 });
      assert.equal(await textOf(b, tid("conversation-profile-name")), "Pirate");
      await app.screenshot("conversation-profile");

      // The header switches the conversation to no profile; Rust says so.
      await b.$(tid("conversation-profile")).click();
      await b.$(`${tid("conversation-profile-option")}[data-kind="none"]`).click();
      await b.waitUntil(async () => (await textOf(b, tid("conversation-profile-name"))) !== "Pirate", {
        timeout: 10000,
        timeoutMsg: "the header still says Pirate",
      });
      const id = await b.execute(() => document.querySelector('[data-testid="conversation-item"][aria-current="page"]')?.dataset.id);
      const listed = JSON.parse(cli(home, ["conversations", "list", "--json"]).stdout).find((c) => c.id === id);
      assert.equal(listed.profile_id, null);
      assert.equal(listed.system_prompt, "Talk like a pirate.", "it keeps what the profile gave it");
      await app.screenshot("conversation-no-profile");
    } finally {
      await app.close();
    }
  });
});
