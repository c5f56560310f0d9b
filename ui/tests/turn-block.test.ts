// One block per turn (issue 57), in the window against the real core: an answer made of a tool
// round and the words after it says its model once and its tokens and cost once, summed as Rust
// priced each request (the header's total agrees); each round's use is a click away. Each tool
// round's cards sit under "Used N tools": open while the run is under way and while a call
// waits for approval, kept open for the turn the person watched, and, in a conversation opened
// later, folded for older rounds whose calls worked (a failed or denied one stays open).
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend, type Turn } from "./real-backend";
import { renderAppAt } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
  sessionStorage.clear();
});

/** "Chat", answered by Work · gpt-test as `turns` say, with the fault peer's tools, priced at $2.50 / $10 per million tokens. */
async function chatWith(turns: Turn[]): Promise<string> {
  await backend.addProvider("Work", { models: [{ id: "gpt-test" }], turns });
  await backend.addFaultServer();
  await backend.seed(() => ipc.setModelPrice("Work", "gpt-test", "2.50", "10", null));
  const made = await backend.seed(() => ipc.createConversation("Chat"));
  await backend.seed(() => ipc.setConversationModel(made.id, "Work", "gpt-test"));
  return made.id;
}

/** The window, with the conversation `id` opened from the list. */
const open = renderAppAt;

/** Each "Used N tools" row: what it says, whether it is expanded, and the states of the cards its turn shows. */
function toolRows() {
  return screen.queryAllByTestId("tool-round").map((row) => ({
    text: row.textContent?.replace(/\s+/g, " ").trim(),
    expanded: row.getAttribute("aria-expanded"),
    cards: within(row.closest<HTMLElement>('[data-testid="answer"]')!)
      .queryAllByTestId("tool-card")
      .map((c) => c.dataset.state),
  }));
}

const echo = (text: string): Turn => ({ tools: [{ name: "fault__echo", arguments: { text } }], usage: { input: 100, output: 10 } });

describe("a turn's model, tokens and cost", () => {
  it("are said once for the tool round and the answer after it, summed as Rust priced them, each round's a click away", async () => {
    const id = await chatWith([echo("noon"), { answer: ["It is ", "noon."], usage: { input: 130, output: 8 } }]);
    await backend.run(id, "What time is it?");
    const { user } = await open(id);

    await waitFor(() => expect(screen.getAllByTestId("answer")).toHaveLength(2));
    const [first, second] = screen.getAllByTestId("answer");
    expect(second.classList.contains("continued")).toBe(true);
    expect(screen.getAllByTestId("answer-model").map((m) => m.textContent)).toEqual(["gpt-test"]);
    const tokens = screen.getByTestId("answer-tokens");
    expect(first.contains(tokens)).toBe(true);
    // 230 tokens in at $2.50 and 18 out at $10 per million: $0.000755, what the header adds up.
    expect(tokens.textContent).toBe("230 → 18 tokens · $0.000755›");
    await waitFor(() => expect(screen.getByTestId("conversation-cost").textContent).toBe("$0.000755"));
    expect(within(tokens).getByTestId("answer-cost").textContent).toBe("$0.000755");

    await user.click(tokens);
    expect(within(screen.getByTestId("turn-rounds")).getAllByTestId("turn-round").map((r) => r.textContent)).toEqual([
      "Round 1: 100 → 10 tokens · $0.00035",
      "Round 2: 130 → 8 tokens · $0.000405",
    ]);
  }, 20_000);
});

describe("a round's tool cards under Used N tools", () => {
  it("stay open while the run asks and runs, and for the turn watched after a newer one; opened later, an older round that worked is folded", async () => {
    const id = await chatWith([echo("one"), { answer: ["Echoed one."] }, { answer: ["Just words."] }]);
    const other = await backend.seed(() => ipc.createConversation("Other"));
    const { user } = await open(id);

    await user.type(await screen.findByTestId("composer-input"), "Echo one{Enter}");
    const dialog = await screen.findByTestId("approval-dialog");
    // Waiting for approval: the card is there to see, under its row.
    await waitFor(() => expect(toolRows()).toEqual([{ text: "Used 1 tool ›", expanded: "true", cards: ["waiting"] }]));
    await user.click(within(dialog).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Echoed one."));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    expect(toolRows()).toEqual([{ text: "Used 1 tool ›", expanded: "true", cards: ["done"] }]);

    // A newer turn: the one watched stays as it was.
    await user.type(screen.getByTestId("composer-input"), "And now?{Enter}");
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Just words."));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    expect(toolRows()).toEqual([{ text: "Used 1 tool ›", expanded: "true", cards: ["done"] }]);

    // Opened later (another conversation, then back): that round is an older one that worked.
    await user.click(screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === other.id)!);
    await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Other"));
    await user.click(screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === id)!);
    await waitFor(() => expect(toolRows()).toEqual([{ text: "Used 1 tool ›", expanded: "false", cards: [] }]));
    await user.click(screen.getByTestId("tool-round"));
    expect(toolRows()).toEqual([{ text: "Used 1 tool ›", expanded: "true", cards: ["done"] }]);
  }, 30_000);

  it("opened later: the newest turn's are open, an older round that failed or was denied stays open, one that worked is folded", async () => {
    const id = await chatWith([
      echo("one"),
      { answer: ["Echoed one."] },
      { tools: [{ name: "fault__flaky", arguments: { key: "k1" } }] },
      { answer: ["It failed."] },
      echo("denied"),
      { answer: ["You said no."] },
      echo("three"),
      { answer: ["Echoed three."] },
    ]);
    await backend.run(id, "Echo one");
    await backend.run(id, "Try the flaky tool");
    await backend.run(id, "Echo, but I will say no", undefined, "deny");
    await backend.run(id, "Echo three");
    await open(id);

    await waitFor(() => expect(toolRows()).toHaveLength(4));
    expect(toolRows()).toEqual([
      { text: "Used 1 tool ›", expanded: "false", cards: [] },
      { text: "Used 1 tool · 1 failed ›", expanded: "true", cards: ["error"] },
      { text: "Used 1 tool · 1 denied ›", expanded: "true", cards: ["denied"] },
      { text: "Used 1 tool ›", expanded: "true", cards: ["done"] },
    ]);
  }, 30_000);
});
