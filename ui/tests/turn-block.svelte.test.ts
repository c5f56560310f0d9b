// One block per turn (issue 57): an answer's rounds (tool rounds, the words after them, a retry)
// are one assistant block that says its model, tokens and cost once, summed over the rounds (each
// round's a click away), and each tool round's cards sit under a "Used N tools" row that folds
// them: open while the turn is the newest or a card has not finished, failed or was denied; an
// older round whose calls all worked starts folded. The chat here is built by hand (the pieces
// a run's events make); turn-block.test.ts runs the same against the real core.
import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { cleanup, fireEvent, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { flushSync } from "svelte";
import CompareColumns from "../src/chat/CompareColumns.svelte";
import MessageList from "../src/chat/MessageList.svelte";
import { Comparison, Lane } from "../src/chat/comparison.svelte";
import { toolsStartOpen, turnsIn, turnUse, type AssistantItem, type ChatItem, type ToolCard, type ToolCardState } from "../src/chat/items";
import { renderWithStores } from "./render-with-stores";

afterEach(cleanup);

function card(id: string, state: ToolCardState = "done"): ToolCard {
  return {
    call_id: id, server: "fault", tool: "echo", display_name: "fault · Echo", arguments: "{}", state, content: state === "done" ? "ok" : null,
    duration_ms: 3, reason: state === "denied" ? "Not now" : null, progress: null, retry_of: null, description: null, full_length: null,
    result_id: `r-${id}`, can_retry: false, answered: false, rich: false, artifacts: [], decided_by: null, task: null, late: null,
  };
}

function round(id: string, over: Partial<AssistantItem> = {}): AssistantItem {
  return {
    kind: "assistant", id, text: "", reasoning: "", status: "complete", finish_reason: "stop", error: null,
    model: "gpt-4o", input_tokens: null, output_tokens: null, cost_pico: null, tools: [], ...over,
  };
}

function question(id: string, text = "Question"): ChatItem {
  return { kind: "user", id, text, created_at: 1, attachments: [] };
}

/** The answer blocks' parts: the rounds of the turn that starts at round `index`'s block. */
function blocks(root: HTMLElement): HTMLElement[] {
  return within(root).getAllByTestId("answer");
}

describe("a turn's rounds and what they used", () => {
  it("groups answers that follow one another into a turn, ended by a question or a summary", () => {
    const a1 = round("a1");
    const a2 = round("a2");
    const b1 = round("b1");
    const c1 = round("c1");
    const turns = turnsIn([question("q1"), a1, a2, question("q2"), b1, { kind: "summary", id: "summary:s" }, c1]);
    expect(turns.get("a1")).toEqual([a1, a2]);
    expect(turns.get("a2")).toBe(turns.get("a1"));
    expect(turns.get("b1")).toEqual([b1]);
    expect(turns.get("c1")).toEqual([c1]);
    expect(turns.has("q1")).toBe(false);
  });

  it("sums the tokens and the cost of the rounds that said theirs, names each model once, and counts the unpriced", () => {
    const use = turnUse([
      round("a1", { model: "gpt-4o", input_tokens: 1200, output_tokens: 35, cost_pico: 4_200_000_000 }),
      round("a2", { model: null }), // a retry of yours: no model asked
      round("a3", { model: "llama3", input_tokens: 1300, output_tokens: 80, cost_pico: null }),
      round("a4", { model: "gpt-4o", input_tokens: 1500, output_tokens: null, cost_pico: 3_000_000_000 }),
    ]);
    expect(use.models).toEqual(["gpt-4o", "llama3"]);
    expect(use.input_tokens).toBe(4000);
    expect(use.output_tokens).toBe(115);
    expect(use.cost_pico).toBe(7_200_000_000);
    expect(use.unpriced).toBe(1);
    expect(use.rounds.map((r) => r.round)).toEqual([1, 3, 4]);
  });

  it("says nothing of tokens or cost when no round said them", () => {
    const use = turnUse([round("a1"), round("a2", { model: "o3" })]);
    expect(use).toEqual({ models: ["gpt-4o", "o3"], input_tokens: null, output_tokens: null, cost_pico: null, unpriced: 0, rounds: [], given: null });
  });

  it("says on the turn's tokens which of its project's passages and which facts its request was given", () => {
    const given = { whole: [], passages: ["manual.txt, passage 3 of 400"], facts: ["The bike is blue."] };
    const items: ChatItem[] = [question("q1"), round("a1", { text: "It is 420.", input_tokens: 900, output_tokens: 9, given })];
    const view = renderWithStores(MessageList, { items });
    expect(view.getByTestId("answer-tokens").title.split("\n")).toEqual([
      "Tokens: prompt / answer. This model has no price, so only its tokens are shown; give it one in Providers › Prices.",
      "Given with the system prompt: 1 passage, 1 fact",
      "· manual.txt, passage 3 of 400",
      "· The bike is blue.",
    ]);
  });

  it("opens a round's cards unasked while it is current or streams, while a card has not finished, and when one failed or was denied", () => {
    const worked = round("a", { tools: [card("c1"), card("c2")] });
    expect(toolsStartOpen(worked, true)).toBe(true);
    expect(toolsStartOpen(worked, false)).toBe(false);
    expect(toolsStartOpen({ ...worked, status: "streaming" }, false)).toBe(true);
    for (const state of ["proposed", "waiting", "running", "error", "denied"] as const) {
      expect(toolsStartOpen({ ...worked, tools: [card("c1"), card("c2", state)] }, false)).toBe(true);
    }
  });
});

describe("a turn of several rounds, shown", () => {
  it("says the model, the tokens and the cost once, summed, and each round's on request", async () => {
    const user = userEvent.setup();
    const items: ChatItem[] = [
      question("q"),
      round("a1", { input_tokens: 1000, output_tokens: 20, cost_pico: 4_000_000_000, finish_reason: "tool_calls", tools: [card("c1")] }),
      round("a2", { text: "It is noon.", input_tokens: 1100, output_tokens: 8, cost_pico: 3_000_000_000 }),
    ];
    const view = renderWithStores(MessageList, { items });
    const [first, second] = blocks(view.container);
    // One "Assistant", one model, one count: on the block's first round.
    expect(within(first).getByText("Assistant")).toBeTruthy();
    expect(view.getAllByTestId("answer-model").map((m) => m.textContent)).toEqual(["gpt-4o"]);
    expect(within(first).getByTestId("answer-model").title).toBe("Model: gpt-4o");
    const tokens = within(first).getByTestId("answer-tokens");
    expect(view.getAllByTestId("answer-tokens")).toHaveLength(1);
    expect(within(tokens).getByTestId("answer-cost").textContent).toBe("$0.007");
    expect(tokens.textContent).toBe("2,100 → 28 tokens · $0.007›");
    // The second round carries the block on: no meta line of its own.
    expect(second.classList.contains("continued")).toBe(true);
    expect(first.classList.contains("continues")).toBe(true);
    expect(second.querySelector(".meta")).toBeNull();
    expect(second.textContent).toContain("Assistant, continued");
    // Each round's use: in the title, and unfolded under the line.
    expect(tokens.title).toContain("over 2 rounds:\nRound 1: 1,000 → 20 tokens · $0.004\nRound 2: 1,100 → 8 tokens · $0.003");
    expect(tokens.getAttribute("aria-expanded")).toBe("false");
    expect(view.queryByTestId("turn-rounds")).toBeNull();
    await user.click(tokens);
    expect(tokens.getAttribute("aria-expanded")).toBe("true");
    const rounds = view.getByTestId("turn-rounds");
    expect(tokens.getAttribute("aria-controls")).toBe(rounds.id);
    expect(within(rounds).getAllByTestId("turn-round").map((r) => r.textContent)).toEqual([
      "Round 1: 1,000 → 20 tokens · $0.004",
      "Round 2: 1,100 → 8 tokens · $0.003",
    ]);
    await user.click(tokens);
    expect(view.queryByTestId("turn-rounds")).toBeNull();
  });

  it("names every model a turn used, and says which round used which", async () => {
    const user = userEvent.setup();
    const items: ChatItem[] = [
      question("q"),
      round("a1", { model: "gpt-4o", input_tokens: 10, output_tokens: 2, tools: [card("c1", "error")] }),
      round("a2", { model: null, tools: [{ ...card("c2"), retry_of: { message_id: "a1", call_id: "c1" } }] }),
      round("a3", { model: "llama3", text: "Done.", input_tokens: 30, output_tokens: 4 }),
    ];
    const view = renderWithStores(MessageList, { items });
    const model = view.getByTestId("answer-model");
    expect(model.textContent).toBe("gpt-4o, llama3");
    expect(model.title).toBe("Models: gpt-4o, llama3 (this answer's rounds used more than one)");
    const tokens = view.getByTestId("answer-tokens");
    // No round had a price: tokens only, and why.
    expect(tokens.textContent).toBe("40 → 6 tokens›");
    expect(tokens.title).toContain("This model has no price");
    await user.click(tokens);
    expect(within(view.getByTestId("turn-rounds")).getAllByTestId("turn-round").map((r) => r.textContent)).toEqual([
      "Round 1 · gpt-4o: 10 → 2 tokens · no price",
      "Round 3 · llama3: 30 → 4 tokens · no price",
    ]);
    // The retry keeps its own line, and its model-less round no meta of the model's.
    const retry = blocks(view.container)[1];
    expect(within(retry).getByText("Retried by you")).toBeTruthy();
    expect(within(retry).queryByTestId("answer-tokens")).toBeNull();
  });

  it("says when only some rounds had a price, and a single round's use as before", () => {
    const items: ChatItem[] = [
      question("q1"),
      round("a1", { input_tokens: 100, output_tokens: 10, cost_pico: 1_000_000_000, tools: [card("c1")] }),
      round("a2", { model: "llama3", text: "Hi", input_tokens: 200, output_tokens: 20 }),
      question("q2"),
      round("b1", { text: "Hello", input_tokens: 134, output_tokens: 11, cost_pico: 600_000_000 }),
    ];
    const view = renderWithStores(MessageList, { items });
    const [partial, single] = view.getAllByTestId("answer-tokens");
    expect(partial.textContent).toBe("300 → 30 tokens · $0.001›");
    expect(partial.title).toContain("1 round had no price: its tokens count, its cost cannot");
    // One round: a line of text, not a button.
    expect(single.tagName).toBe("SPAN");
    expect(single.textContent).toBe("134 → 11 tokens · $0.0006");
    expect(single.title).toBe("Tokens: prompt / answer, and what the answer cost");
  });

  it("keeps a round's status on that round, and its meta line only for it", () => {
    const items: ChatItem[] = [
      question("q"),
      round("a1", { input_tokens: 5, output_tokens: 5, tools: [card("c1")] }),
      round("a2", { text: "Half an ans", status: "interrupted", finish_reason: "stopped" }),
    ];
    const view = renderWithStores(MessageList, { items });
    const [first, second] = blocks(view.container);
    expect(within(first).queryByTestId("answer-status")).toBeNull();
    expect(within(second).getByTestId("answer-status").textContent).toBe("Stopped");
    expect(within(second).queryByTestId("answer-model")).toBeNull();
  });
});

describe("a round's Used N tools row", () => {
  /** The rows, in order: what each says, whether it is expanded, and how many cards it shows. */
  function rows(root: HTMLElement) {
    return within(root)
      .getAllByTestId("tool-round")
      .map((row) => ({
        text: row.textContent?.replace(/\s+/g, " ").trim(),
        expanded: row.getAttribute("aria-expanded"),
        cards: within(row.closest<HTMLElement>('[data-testid="answer"]')!).queryAllByTestId("tool-card").length,
      }));
  }

  it("says how many tools the round used, folds an older round whose calls worked, and keeps the newest, failed and denied ones open", () => {
    const items: ChatItem[] = [
      question("q1"),
      round("a1", { tools: [card("c1")] }),
      round("a2", { text: "One." }),
      question("q2"),
      round("b1", { tools: [card("c2"), card("c3", "error"), card("c4")] }),
      round("b2", { text: "Two." }),
      question("q3"),
      round("d1", { tools: [card("c5", "denied")] }),
      round("d2", { text: "Three." }),
      question("q4"),
      round("e1", { tools: [card("c6"), card("c7")] }),
      round("e2", { text: "Four." }),
    ];
    const view = renderWithStores(MessageList, { items });
    expect(rows(view.container)).toEqual([
      { text: "Used 1 tool ›", expanded: "false", cards: 0 },
      { text: "Used 3 tools · 1 failed ›", expanded: "true", cards: 3 },
      { text: "Used 1 tool · 1 denied ›", expanded: "true", cards: 1 },
      { text: "Used 2 tools ›", expanded: "true", cards: 2 },
    ]);
  });

  it("is a button with a name and aria-expanded that folds and unfolds its round's cards, from the keyboard too", async () => {
    const user = userEvent.setup();
    const items: ChatItem[] = [question("q1"), round("a1", { text: "Looked.", tools: [card("c1"), card("c2")] }), question("q2"), round("b1", { text: "Newest." })];
    const view = renderWithStores(MessageList, { items });
    const row = view.getByRole("button", { name: /^Used 2 tools/ });
    expect(row.getAttribute("type")).toBe("button");
    expect(row.getAttribute("aria-expanded")).toBe("false");
    expect(row.getAttribute("aria-controls")).toBeNull();
    expect(view.queryAllByTestId("tool-card")).toHaveLength(0);

    row.focus();
    await user.keyboard("{Enter}");
    expect(row.getAttribute("aria-expanded")).toBe("true");
    const cards = view.getAllByTestId("tool-card");
    expect(cards.map((c) => c.dataset.callId)).toEqual(["c1", "c2"]);
    expect(document.getElementById(row.getAttribute("aria-controls")!)?.contains(cards[0])).toBe(true);
    expect(row.title).toBe("Hide these tool calls");

    await user.keyboard(" ");
    expect(row.getAttribute("aria-expanded")).toBe("false");
    expect(view.queryAllByTestId("tool-card")).toHaveLength(0);
    expect(row.title).toBe("Show these tool calls");
  });

  it("keeps the cards of a run under way open, those awaiting approval too, and the newest turn's open after a newer one comes", async () => {
    const items = $state<ChatItem[]>([question("q1"), round("a1", { status: "streaming", finish_reason: null, tools: [card("c1", "waiting")] })]);
    const view = renderWithStores(MessageList, { items, running: true });
    expect(rows(view.container)).toEqual([{ text: "Used 1 tool ›", expanded: "true", cards: 1 }]);
    // Allowed, run, answered: still open, the turn is the newest.
    const first = items[1] as AssistantItem;
    first.tools[0].state = "done";
    first.status = "complete";
    items.push(round("a2", { text: "Done." }));
    flushSync();
    expect(rows(view.container)).toEqual([{ text: "Used 1 tool ›", expanded: "true", cards: 1 }]);
    // A newer turn: the one the person watched stays as it was.
    items.push(question("q2"), round("b1", { text: "Next." }));
    flushSync();
    expect(rows(view.container)).toEqual([{ text: "Used 1 tool ›", expanded: "true", cards: 1 }]);
    // Folded by the person, it stays folded as the chat goes on.
    await fireEvent.click(view.getByTestId("tool-round"));
    items.push(question("q3"), round("c1", { text: "Later." }));
    flushSync();
    await waitFor(() => expect(rows(view.container)).toEqual([{ text: "Used 1 tool ›", expanded: "false", cards: 0 }]));
  });

  it("unfolds a folded round that a search hit brings into view (its words or a call's result)", async () => {
    const items: ChatItem[] = [question("q1"), round("a1", { tools: [card("c1")] }), round("a2", { text: "One." }), question("q2"), round("b1", { text: "Two." })];
    const props = $state({ items, revealId: null as string | null });
    const view = renderWithStores(MessageList, props);
    expect(rows(view.container)).toEqual([{ text: "Used 1 tool ›", expanded: "false", cards: 0 }]);
    props.revealId = "a1";
    flushSync();
    await waitFor(() => expect(rows(view.container)).toEqual([{ text: "Used 1 tool ›", expanded: "true", cards: 1 }]));
  });

  it("shows the version pager on the turn's first line, never among its tool cards", () => {
    const items: ChatItem[] = [question("q"), round("a1", { tools: [card("c1")] }), round("a2", { text: "After the call." })];
    const view = renderWithStores(MessageList, { items, branches: { a1: { position: 0, count: 2, models: ["Work · gpt-b", "Local · qwen"] } } });
    const pager = view.getByTestId("branch-switcher");
    const [first] = blocks(view.container);
    expect(pager.parentElement).toBe(first.querySelector(".meta"));
    expect(pager.closest('[data-testid="tool-card"], .tools')).toBeNull();
    expect(view.getByTestId("branch-position").textContent).toBe("Version 1 of 2");
    // "Also answered by" goes under the whole turn, after its last round.
    const also = view.getByTestId("branch-models");
    expect(also.closest("li")?.dataset.item).toBe("a2");
  });
});

describe("a comparison's column", () => {
  it("shows each round's cards under its Used N tools row, open as a run's are, folded only by the person; no pager of its own", async () => {
    const user = userEvent.setup();
    const comparison = new Comparison();
    const lane = new Lane(0, "Work", "gpt-b");
    lane.items.push(round("a1", { status: "streaming", finish_reason: null, tools: [card("c1", "running"), card("c2")] }));
    comparison.lanes = [lane];
    const view = renderWithStores(CompareColumns, { comparison, running: true, onStop: () => {}, onStopAll: () => {} });
    const row = view.getByTestId("tool-round");
    expect(row.textContent?.replace(/\s+/g, " ").trim()).toBe("Used 2 tools ›");
    expect(row.getAttribute("aria-expanded")).toBe("true");
    expect(view.getAllByTestId("tool-card").map((c) => c.dataset.state)).toEqual(["running", "done"]);
    await user.click(row);
    expect(row.getAttribute("aria-expanded")).toBe("false");
    expect(view.queryAllByTestId("tool-card")).toHaveLength(0);
    await user.click(row);
    expect(view.getAllByTestId("tool-card")).toHaveLength(2);
    expect(view.queryByTestId("branch-switcher")).toBeNull();
  });
});
