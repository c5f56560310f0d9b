// Long conversations in the real window: one of 10,000 messages opens at its newest answer with
// a bounded DOM and shows its older messages, page by page, as the person scrolls up; one whose
// answer made 200 tool calls opens with its cards collapsed; a long tool result shows its start
// and is read whole on demand. The conversations are written by bench/seed_conversations.py,
// the script the conversation-view bench uses.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { BIN, framesDrawn, launch, run, tempHome, tid } from "./harness.mjs";

/** A home with a provider (so the store exists) and the bench's three seeded conversations. */
function seededHome() {
  const home = tempHome("long");
  const env = { ...process.env, SWITCHBOARD_HOME: home };
  const added = run(BIN, ["provider", "add", "Mock", "--kind", "openai_compatible", "--base-url", "http://127.0.0.1:9/v1", "--model", "gpt-4o"], { env });
  assert.equal(added.status, 0, added.stderr);
  const seeded = run("python3", [path.resolve("bench/seed_conversations.py"), "--home", home], { env });
  assert.equal(seeded.status, 0, seeded.stderr);
  return { home, seeded: JSON.parse(seeded.stdout) };
}

async function open(b, id) {
  await b.$(`${tid("conversation-item")}[data-id="${id}"]`).click();
}

/** How many elements the chat holds, and whether the text is among its answers. */
async function listState(b, text) {
  return b.execute((words) => {
    const list = document.querySelector('[data-testid="message-list"]');
    return {
      nodes: list ? list.getElementsByTagName("*").length : 0,
      shown: [...document.querySelectorAll('[data-testid="answer-text"]')].some((e) => e.textContent.includes(words)),
      firstQuestion: list?.querySelector('[data-role="user"] .content')?.textContent ?? null,
      scrollTop: list?.scrollTop ?? 0,
      atEnd: list ? list.scrollHeight - list.scrollTop - list.clientHeight < 80 : false,
    };
  }, text);
}

test("a conversation of 10,000 messages opens at its newest answer with a bounded DOM, and scrolling up shows older pages", async () => {
  const { home, seeded } = seededHome();
  const app = await launch(home);
  try {
    const b = app.browser;
    await open(b, seeded.ten_thousand.id);
    await b.waitUntil(async () => (await listState(b, seeded.ten_thousand.last_words)).shown, {
      timeout: 20000,
      timeoutMsg: "the newest answer is not shown",
    });
    const opened = await listState(b, seeded.ten_thousand.last_words);
    assert.ok(opened.nodes < 2000, `${opened.nodes} elements in the chat`);
    assert.ok(opened.scrollTop > 0, "the chat is scrolled to its end");
    await app.screenshot("long-conversation-open");

    // Up to the top, a few times: each time an older page comes, the first question shown changes.
    const firsts = new Set();
    for (let i = 0; i < 6; i++) {
      await b.execute(() => {
        document.querySelector('[data-testid="message-list"]').scrollTop = 0;
      });
      await b.pause(400);
      const now = await listState(b, seeded.ten_thousand.last_words);
      if (now.firstQuestion) firsts.add(now.firstQuestion);
      assert.ok(now.nodes < 2000, `${now.nodes} elements after scrolling up`);
    }
    assert.ok(firsts.size >= 3, `older pages came as the chat scrolled up: ${[...firsts].join(" | ")}`);
    await app.screenshot("long-conversation-older");

    // Scrolled up in one chat, another opens at its own end.
    const atItsEnd = async (c) => {
      await b.waitUntil(async () => (await listState(b, c.last_words)).shown, {
        timeout: 20000,
        timeoutMsg: `“${c.title}” does not show its newest answer`,
      });
      await b.waitUntil(async () => (await listState(b, c.last_words)).atEnd, {
        timeout: 5000,
        timeoutMsg: `“${c.title}” is not at its end`,
      });
    };
    await open(b, seeded.tool_cards.id);
    await atItsEnd(seeded.tool_cards);
    await b.execute(() => {
      const list = document.querySelector('[data-testid="message-list"]');
      list.scrollTop = list.scrollHeight / 3;
    });
    await b.pause(400);
    await open(b, seeded.ten_thousand.id);
    await atItsEnd(seeded.ten_thousand);
  } finally {
    await app.close();
  }
});

test("an answer that made 200 tool calls opens with its cards collapsed, builds older ones as the person scrolls up to them, and a card opens to show its result", async () => {
  const { home, seeded } = seededHome();
  const app = await launch(home);
  try {
    const b = app.browser;
    await open(b, seeded.tool_cards.id);
    await b.waitUntil(async () => (await listState(b, seeded.tool_cards.last_words)).shown, {
      timeout: 20000,
      timeoutMsg: "the closing answer is not shown",
    });
    // The newest cards come first; older ones wait, as a blank of their room, until the person
    // scrolls up to them.
    const newest = await b.execute(() => [...document.querySelectorAll('[data-testid="tool-card"]')].at(-1)?.dataset.callId);
    assert.ok(newest, "cards are shown");
    // Half a second of frames: what would build cards while the chat sits at its end has had
    // its chances.
    await framesDrawn(b, 30);
    const atTheEnd = (await b.$$(tid("tool-card"))).length;
    assert.ok(atTheEnd >= 20 && atTheEnd < 200, `${atTheEnd} cards built while the chat sits at its end`);
    // Scrolled up into the blank, the cards come, and what is on screen stays where it is.
    const before = await b.execute(() => {
      const oldest = document.querySelector('[data-testid="tool-card"]');
      oldest.scrollIntoView({ block: "center" });
      return { id: oldest.dataset.callId, top: oldest.getBoundingClientRect().top, count: document.querySelectorAll('[data-testid="tool-card"]').length };
    });
    await b.waitUntil(async () => (await b.$$(tid("tool-card"))).length > before.count, {
      timeout: 10000,
      timeoutMsg: "no older cards are built when the person scrolls up to them",
    });
    const after = await b.execute((id) => document.querySelector(`[data-call-id="${id}"]`).getBoundingClientRect().top, before.id);
    assert.ok(Math.abs(after - before.top) <= 4, `the card on screen moved from ${before.top} to ${after} px as older ones came`);
    await b.waitUntil(
      async () => {
        await b.execute(() => {
          const list = document.querySelector('[data-testid="message-list"]');
          list.scrollTop = Math.max(0, list.scrollTop - 600);
        });
        return (await b.$$(tid("tool-card"))).length === 200;
      },
      { timeout: 20000, interval: 200, timeoutMsg: "the 200 cards are not all built as the person scrolls to the top" },
    );
    const state = await listState(b, seeded.tool_cards.last_words);
    assert.ok(state.nodes < 2000, `${state.nodes} elements in the chat`);
    const cards = await b.$$(tid("tool-card"));
    assert.equal(await cards[cards.length - 1].getAttribute("data-call-id"), newest, "the newest card is still the last");
    assert.equal((await b.$$(tid("tool-result"))).length, 0, "no card body is built while collapsed");
    // The last card, brought back on screen and opened.
    const last = cards[cards.length - 1];
    await b.execute((card) => card.scrollIntoView({ block: "center" }), last);
    await last.$("summary").click();
    const result = await last.$(tid("tool-result"));
    await result.waitForExist({ timeout: 5000 });
    assert.ok((await result.getProperty("textContent")).length > 0);
    await app.screenshot("two-hundred-tool-cards");
  } finally {
    await app.close();
  }
});
