// A summary the person opened to read stays open when its row is made again: a virtualised row
// leaves the DOM as it scrolls out of view, and the rows are rebuilt when the conversation is
// read again (its older pages come back a moment later). The fold is the list's, not the row's.
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render } from "@testing-library/svelte";
import { flushSync } from "svelte";
import MessageList from "../src/chat/MessageList.svelte";
import type { ChatItem } from "../src/chat/items";
import type { Summary } from "../src/lib/types";

afterEach(cleanup);

const user = (id: string): ChatItem => ({ kind: "user", id, text: `question ${id}`, created_at: 0, attachments: [] });
const answer = (id: string): ChatItem => ({
  kind: "assistant", id, text: `answer ${id}`, reasoning: "", status: "complete", finish_reason: "stop", error: null,
  model: "m", input_tokens: null, output_tokens: null, cost_pico: null, tools: [],
});
const summary: Summary = {
  id: "s1", conversation_id: "c", through_message_id: "a1", text: "The ferry leaves at nine.", summarised: 2, left_out: 0,
  provider: "P", model: "m", created_at: 0,
};

describe("a summary's fold", () => {
  it("stays open when its row leaves and comes back", async () => {
    const all = [user("u1"), answer("a1"), user("u2"), answer("a2")];
    const props = $state({ items: all, summaries: [summary] });
    const view = render(MessageList, props);
    const details = () => view.container.querySelector<HTMLDetailsElement>('[data-testid="summary"]');
    expect(details()?.open).toBe(false);

    const first = details()!;
    first.open = true;
    await fireEvent(first, new Event("toggle"));
    flushSync();

    // The page that held the summary's last message is read again: the row goes, then comes back.
    props.items = all.slice(2);
    flushSync();
    expect(details()).toBeNull();
    props.items = all.map((i) => ({ ...i }));
    flushSync();
    expect(details()).not.toBe(first);
    expect(details()?.open).toBe(true);
    expect(view.getByTestId("summary-text").textContent).toBe("The ferry leaves at nine.");
  });
});
