import { afterEach, describe, expect, it, vi } from "vitest";
import { flushSync } from "svelte";
import { chatWarmup, QUIET_MS, warmChat, WARM_ROUNDS, type WarmRound, type WarmWhen } from "../src/chat/warm-chat";
import { warmUp } from "../src/app/warmup";
import { manualClock, type ManualClock } from "./manual-clock";
import { storesContext } from "../src/app/context";
import { AnswerBlocks, finishedAnswer } from "../src/chat/markdown-blocks";
import { newStores } from "./render-with-stores";

/** A quiet window: no answer coming, time moving on by a second at each look. */
function quietWhen(overrides: Partial<WarmWhen> = {}): WarmWhen & { time: number } {
  const when: WarmWhen & { time: number } = {
    time: 10_000,
    running: () => false,
    now: () => when.time,
    sleep: (ms) => {
      when.time += ms;
      return Promise.resolve();
    },
    ...overrides,
  };
  return when;
}

/** Runs `clock`'s tasks (waiting for the ones a loading step leaves for later) until `done` says so. */
async function stepUntil(clock: ManualClock, done: () => boolean): Promise<void> {
  for (let turns = 0; !done(); turns++) {
    if (turns > 1000) throw new Error("the warm-up never got there");
    if (clock.pending.length > 0) clock.step();
    else await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

/** The warm-up's host: the one element it adds to the page. */
const host = () => [...document.body.children].find((el): el is HTMLElement => el instanceof HTMLElement && el.shadowRoot !== null) ?? null;

afterEach(() => {
  document.body.replaceChildren();
  vi.restoreAllMocks();
});

describe("opening a made-up chat out of sight after start-up", () => {
  it("mounts the real chat list once per round in a hidden shadow root, unmounts it, then removes everything", async () => {
    const sheet = document.createElement("link");
    sheet.rel = "stylesheet";
    sheet.href = "/assets/app.css";
    const inline = document.createElement("style");
    inline.textContent = ".marker-rule { color: red; }";
    document.head.append(sheet, inline);
    const rounds: WarmRound[] = [
      { cards: 3, rows: 5 },
      { cards: 5, rows: 17 },
      { cards: 2, rows: 5 },
    ];
    const clock = manualClock();
    warmUp(document, clock, [], chatWarmup(document, storesContext(newStores()), quietWhen(), rounds));
    await stepUntil(clock, () => host() !== null); // the warm-up's own steps, then the chat's first

    const added = host()!;
    expect(added.getAttribute("aria-hidden")).toBe("true");
    expect(added.hasAttribute("inert")).toBe(true);
    expect(added.style.visibility).toBe("hidden");
    expect(added.style.position).toBe("fixed");
    const shadow = added.shadowRoot!;
    // The page's style sheets go with it (the list's scoped styles apply inside), linked: an
    // inline copy would be refused by the CSP.
    expect([...shadow.querySelectorAll<HTMLLinkElement>('link[rel="stylesheet"]')].map((l) => l.getAttribute("href"))).toEqual(["/assets/app.css"]);
    expect(shadow.querySelector("style")).toBeNull();
    expect(shadow.querySelector('[data-testid="message-list"]')).toBeNull();

    // Round one (after its wait for a quiet window): a plain list with its question, the
    // answer that made 3 calls, the closing answer.
    await stepUntil(clock, () => shadow.querySelector('[data-testid="message-list"]') !== null);
    expect(shadow.querySelectorAll('[data-testid="tool-card"]')).toHaveLength(3);
    expect(shadow.querySelectorAll('[data-testid="answer"]').length).toBeGreaterThanOrEqual(2);
    expect(shadow.querySelector('[data-testid="answer-text"] h1')?.textContent).toBe("Heading");
    // From outside, the page has no chat, answer or card.
    expect(document.querySelector('[data-testid="message-list"]')).toBeNull();
    expect(document.querySelector('[data-testid="answer"]')).toBeNull();
    expect(document.querySelector('[data-testid="tool-card"]')).toBeNull();

    clock.step(); // unmounted
    expect(shadow.querySelector('[data-testid="message-list"]')).toBeNull();

    await stepUntil(clock, () => shadow.querySelector('[data-testid="message-list"]') !== null); // round two: virtualised
    expect(shadow.querySelector('[data-testid="message-list"] ol')).not.toBeNull();
    expect(shadow.querySelector("ol.list")).toBeNull(); // not the plain list
    clock.step();
    expect(shadow.querySelector('[data-testid="message-list"]')).toBeNull();

    await stepUntil(clock, () => shadow.querySelector('[data-testid="message-list"]') !== null); // round three: plain again
    expect(shadow.querySelector("ol.list")).not.toBeNull();

    await stepUntil(clock, () => host() === null); // the last step
    expect(clock.pending).toHaveLength(0);
    // The made-up answers are not kept among the finished answers' HTML.
    const earlier = warmChat(2, rounds[2])[1]; // an answer the plain list of the last round showed, with neither code nor math
    expect(earlier.kind).toBe("assistant");
    const blocks = new AnswerBlocks();
    const finish = vi.spyOn(blocks, "finish");
    finishedAnswer(earlier.id, earlier.kind === "assistant" ? earlier.text : "", blocks);
    expect(finish).toHaveBeenCalledOnce();
    sheet.remove();
    inline.remove();
  });

  it("stopped part-way, removes what it added", async () => {
    const clock = manualClock();
    const stop = warmUp(document, clock, [], chatWarmup(document, storesContext(newStores()), quietWhen(), [{ cards: 2, rows: 4 }]));
    await stepUntil(clock, () => host()?.shadowRoot?.querySelector('[data-testid="tool-card"]') != null); // the list is mounted
    const shadow = host()!.shadowRoot!;
    expect(shadow.querySelectorAll('[data-testid="tool-card"]')).toHaveLength(2);
    const unlisten = vi.spyOn(window, "removeEventListener");
    stop();
    expect(host()).toBeNull();
    expect(shadow.querySelector('[data-testid="message-list"]')).toBeNull(); // unmounted, not only taken off the page
    expect(clock.pending).toHaveLength(0);
    // It no longer hears the person's input.
    expect(unlisten.mock.calls.map(([type]) => type).sort()).toEqual(["keydown", "pointerdown", "wheel"]);
  });

  it("stops at an error, removing what it added, and never throws into the page", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const clock = manualClock();
    // No stores in the context: a tool card cannot find the servers, so mounting throws.
    const { steps, done } = chatWarmup(document, new Map(), quietWhen(), [{ cards: 2, rows: 4 }]);
    void steps[0]();
    expect(host()).not.toBeNull();
    await steps[1](); // the wait for a quiet window
    expect(() => steps[2]()).not.toThrow();
    expect(host()).toBeNull();
    expect(warn).toHaveBeenCalledOnce();
    for (const step of steps.slice(3)) await expect(Promise.resolve().then(step)).resolves.toBeUndefined();
    done();
    expect(clock.pending).toHaveLength(0);
  });

  it("waits while an answer is coming and until a second after the person's last input", async () => {
    let running = true;
    const when = quietWhen({ running: () => running });
    const { steps, done } = chatWarmup(document, storesContext(newStores()), when, [{ cards: 1, rows: 3 }]);
    void steps[0]();
    const sleep = when.sleep;
    let looks = 0;
    when.sleep = (ms) => {
      looks++;
      if (looks === 3) {
        running = false; // the answer ends while it waits, and the person types
        window.dispatchEvent(new KeyboardEvent("keydown"));
      }
      return sleep(ms);
    };
    const typedAt = () => when.time;
    let keyAt = 0;
    window.addEventListener("keydown", () => (keyAt = typedAt()), { capture: true, once: true });
    await steps[1]();
    expect(looks).toBeGreaterThan(3); // it went on waiting after the answer ended
    expect(when.time - keyAt).toBeGreaterThanOrEqual(QUIET_MS);
    done();
    // Once stopped, it no longer listens: a key does not matter and the wait ends at once.
    const before = looks;
    await steps[1]();
    expect(looks).toBe(before);
  });

  it("leaves a round out when the person starts something between its wait and its task", async () => {
    const when = quietWhen();
    const { steps, done } = chatWarmup(document, storesContext(newStores()), when, [{ cards: 1, rows: 3 }]);
    void steps[0]();
    await steps[1](); // calm: the wait ends at once
    window.dispatchEvent(new KeyboardEvent("keydown")); // then a key, before the round's task
    void steps[2]();
    expect(host()!.shadowRoot!.querySelector('[data-testid="message-list"]')).toBeNull();
    when.time += QUIET_MS; // a second later, a round would go ahead
    void steps[2]();
    flushSync();
    expect(host()!.shadowRoot!.querySelector('[data-testid="message-list"]')).not.toBeNull();
    done();
  });

  it("has rounds with plain and virtualised lists, and enough cards for the engine to compile a card", () => {
    const lengths = WARM_ROUNDS.map((round, n) => warmChat(n, round).length);
    expect(lengths.some((n) => n <= 12)).toBe(true);
    expect(lengths.some((n) => n > 12)).toBe(true);
    expect(WARM_ROUNDS.reduce((sum, r) => sum + r.cards, 0)).toBeGreaterThanOrEqual(60);
    // Each round's closing answer is new text, so its Markdown is rendered, not taken from the cache.
    const closing = WARM_ROUNDS.map((round, n) => warmChat(n, round).at(-1));
    expect(new Set(closing.map((item) => item?.kind === "assistant" && item.text)).size).toBe(WARM_ROUNDS.length);
  });
});
