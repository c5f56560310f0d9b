// An answer's many tool cards are built newest first, then older ones a batch a frame from the
// frame after the first: the cards at the end (an opened chat sits there) come at once and are
// painted on their own, they stay put while older ones arrive above them, and a card that comes
// while the answer runs shows at once. Their "Used N tools" row folds them (letting them go) and
// unfolds them (built the same way again).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/svelte";
import { createRawSnippet, flushSync } from "svelte";
import ToolCardList from "../src/chat/ToolCardList.svelte";
import type { ToolCard } from "../src/chat/items";

function cardNumbered(n: number): ToolCard {
  return {
    call_id: `call_${n}`, server: "s", tool: `tool_${n}`, display_name: `Tool ${n}`, arguments: "{}", state: "done", content: "ok",
    duration_ms: 1, reason: null, progress: null, retry_of: null, description: null, full_length: null,
    result_id: null, can_retry: false, answered: false, rich: false, artifacts: [], decided_by: null, task: null, late: null,
  };
}

const card = createRawSnippet((one: () => ToolCard) => ({
  render: () => `<p data-id="${one().call_id}"></p>`,
}));

const ids = (root: HTMLElement) => [...root.querySelectorAll("p")].map((p) => p.dataset.id);
const frame = () => new Promise((done) => requestAnimationFrame(() => done(undefined)));

afterEach(cleanup);

describe("an answer's tool cards", () => {
  it("builds the newest twenty first, then older batches of ten above them from the frame after, in order", async () => {
    const cards = Array.from({ length: 65 }, (_, i) => cardNumbered(i));
    const view = render(ToolCardList, { cards, card });
    expect(ids(view.container)).toEqual(cards.slice(45).map((c) => c.call_id));
    await frame(); // the frame that paints the newest cards builds nothing more
    flushSync();
    expect(ids(view.container)).toEqual(cards.slice(45).map((c) => c.call_id));
    await frame();
    flushSync();
    expect(ids(view.container)).toEqual(cards.slice(35).map((c) => c.call_id));
    await frame();
    flushSync();
    expect(ids(view.container)).toEqual(cards.slice(25).map((c) => c.call_id));
    for (let i = 0; i < 3; i++) await frame();
    flushSync();
    expect(ids(view.container)).toEqual(cards.map((c) => c.call_id));
  });

  it("shows a card that comes while older ones are still being built", async () => {
    const cards = $state(Array.from({ length: 50 }, (_, i) => cardNumbered(i)));
    const view = render(ToolCardList, { cards, card });
    cards.push(cardNumbered(50));
    flushSync();
    expect(ids(view.container).at(-1)).toBe("call_50");
    expect(ids(view.container)).toHaveLength(21);
    for (let i = 0; i < 5; i++) await frame();
    flushSync();
    expect(ids(view.container)).toEqual(cards.map((c) => c.call_id));
  });

  it("folded, lets its cards go and says on its row how many calls there were and which did not work", async () => {
    const cards = $state(Array.from({ length: 65 }, (_, i) => cardNumbered(i)));
    cards[3].state = "error";
    cards[4].state = "denied";
    const props = $state({ cards, card, open: true, onToggle: () => (props.open = !props.open) });
    const view = render(ToolCardList, props);
    const row = view.getByRole("button", { name: /^Used 65 tools/ });
    expect(row.textContent?.replace(/\s+/g, " ").trim()).toBe("Used 65 tools · 1 failed · 1 denied ›");
    for (let i = 0; i < 8; i++) await frame();
    flushSync();
    expect(ids(view.container)).toHaveLength(65);
    row.click();
    flushSync();
    expect(row.getAttribute("aria-expanded")).toBe("false");
    expect(ids(view.container)).toEqual([]);
    // Unfolded again: built as the first time, the newest twenty at once, older ones after.
    row.click();
    flushSync();
    expect(ids(view.container)).toEqual(cards.slice(45).map((c) => c.call_id));
    for (let i = 0; i < 8; i++) await frame();
    flushSync();
    expect(ids(view.container)).toEqual(cards.map((c) => c.call_id));
  });

  it("says one tool in the singular, and keeps its own fold where the parent keeps none", () => {
    const view = render(ToolCardList, { cards: [cardNumbered(0)], card });
    const row = view.getByTestId("tool-round");
    expect(row.textContent?.replace(/\s+/g, " ").trim()).toBe("Used 1 tool ›");
    expect(ids(view.container)).toEqual(["call_0"]);
    row.click();
    flushSync();
    expect(row.getAttribute("aria-expanded")).toBe("false");
    expect(ids(view.container)).toEqual([]);
    row.click();
    flushSync();
    expect(ids(view.container)).toEqual(["call_0"]);
  });

  it("a short answer's cards are all there at once", () => {
    const cards = Array.from({ length: 3 }, (_, i) => cardNumbered(i));
    const view = render(ToolCardList, { cards, card });
    expect(ids(view.container)).toEqual(["call_0", "call_1", "call_2"]);
  });
});

describe("an answer's older tool cards, where the engine can tell what is near the screen", () => {
  /** An IntersectionObserver the test drives: `show(true)` says the blank came near. */
  class Watch {
    static all: Watch[] = [];
    readonly options: IntersectionObserverInit | undefined;
    readonly #callback: (entries: Array<{ isIntersecting: boolean }>) => void;
    target: Element | null = null;
    constructor(callback: (entries: Array<{ isIntersecting: boolean }>) => void, options?: IntersectionObserverInit) {
      this.#callback = callback;
      this.options = options;
      Watch.all.push(this);
    }
    observe(target: Element): void {
      this.target = target;
    }
    disconnect(): void {
      this.target = null;
    }
    show(near: boolean): void {
      this.#callback([{ isIntersecting: near }]);
    }
  }

  let saved: unknown;
  beforeEach(() => {
    saved = (globalThis as { IntersectionObserver?: unknown }).IntersectionObserver;
    Watch.all = [];
    (globalThis as { IntersectionObserver?: unknown }).IntersectionObserver = Watch;
  });
  afterEach(() => {
    (globalThis as { IntersectionObserver?: unknown }).IntersectionObserver = saved;
  });

  const blank = (root: HTMLElement) => root.querySelector<HTMLElement>(".older");
  const watching = () => Watch.all.filter((w) => w.target !== null);

  it("builds none while the person stays at the end, holding their room with a blank", async () => {
    const cards = Array.from({ length: 65 }, (_, i) => cardNumbered(i));
    const scroller = document.createElement("div");
    const view = render(ToolCardList, { cards, card, scroller });
    for (let i = 0; i < 4; i++) await frame();
    flushSync();
    expect(ids(view.container)).toEqual(cards.slice(45).map((c) => c.call_id));
    expect(blank(view.container)?.getAttribute("aria-hidden")).toBe("true");
    expect(blank(view.container)?.style.getPropertyValue("--waiting")).toBe("45"); // the room of 45 cards
    expect(watching()).toHaveLength(1);
    expect(watching()[0].options?.root).toBe(scroller);
    expect(watching()[0].target).toBe(blank(view.container));
  });

  it("builds older batches a frame apart while their blank is near, and stops when it is not", async () => {
    const cards = Array.from({ length: 65 }, (_, i) => cardNumbered(i));
    const view = render(ToolCardList, { cards, card });
    await frame(); // the newest cards' frame
    watching()[0].show(true);
    await frame();
    flushSync();
    expect(ids(view.container)).toEqual(cards.slice(35).map((c) => c.call_id));
    watching()[0].show(false);
    for (let i = 0; i < 3; i++) await frame();
    flushSync();
    expect(ids(view.container)).toHaveLength(30);
    watching()[0].show(true);
    for (let i = 0; i < 4; i++) await frame();
    flushSync();
    expect(ids(view.container)).toEqual(cards.map((c) => c.call_id));
    expect(blank(view.container)).toBeNull();
  });
});
