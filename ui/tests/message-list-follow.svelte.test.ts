// While an answer streams the list follows its end, unless the person scrolled up to read; back
// near the end, it follows again. jsdom lays nothing out, so the list's heights are the test's:
// the answer "grows" by its text and by the height the test gives it.
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, waitFor } from "@testing-library/svelte";
import { flushSync } from "svelte";
import MessageList from "../src/chat/MessageList.svelte";
import type { ChatItem } from "../src/chat/items";

afterEach(cleanup);

function streaming(): ChatItem[] {
  return [
    { kind: "user", id: "q", text: "Tell me a long story.", created_at: 1, attachments: [] },
    {
      kind: "assistant", id: "a", text: "Once", reasoning: "", status: "streaming", finish_reason: null, error: null,
      model: null, input_tokens: null, output_tokens: null, cost_pico: null, tools: [],
    },
  ];
}

/** The list's geometry, set by the test: content `height` in a 400 px viewport, and its scroll. */
function geometry(list: HTMLElement) {
  const box = { height: 1_000, top: 0 };
  Object.defineProperty(list, "scrollHeight", { configurable: true, get: () => box.height });
  Object.defineProperty(list, "clientHeight", { configurable: true, get: () => 400 });
  Object.defineProperty(list, "scrollTop", {
    configurable: true,
    get: () => box.top,
    set: (v: number) => (box.top = Math.max(0, Math.min(v, box.height - 400))),
  });
  return box;
}

describe("following the answer", () => {
  it("follows the end as the answer grows, stops while the person reads above, and follows again back at the end", async () => {
    const items = $state(streaming());
    const view = render(MessageList, { items, running: true });
    const list = view.getByTestId("message-list");
    const box = geometry(list);
    const answer = items[1] as Extract<ChatItem, { kind: "assistant" }>;
    const grow = async (height: number, words: string) => {
      box.height = height;
      answer.text += words;
      flushSync();
      await Promise.resolve();
    };

    await grow(1_500, " upon a time");
    await waitFor(() => expect(box.top).toBe(1_100));

    // The person scrolls up to read: the answer grows below without moving them.
    box.top = 200;
    await fireEvent.scroll(list);
    await grow(2_000, " there was");
    await grow(2_600, " a list");
    await new Promise((done) => setTimeout(done, 20));
    expect(box.top).toBe(200);

    // Back within a line of the end: following again.
    box.top = 2_150;
    await fireEvent.scroll(list);
    await grow(3_000, " that kept up.");
    await waitFor(() => expect(box.top).toBe(2_600));
  });
});
