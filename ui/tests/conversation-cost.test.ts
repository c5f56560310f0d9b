// What answers cost, in the open conversation, against the real core: each answer's cost beside
// its tokens (or why there is none), and the conversation's total in its header, read again as
// answers are saved and runs end. What was spent comes from real runs: a model server whose
// turns say their tokens, priced by Rust at the person's price.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderAppAt } from "./render-app";
import { newStores } from "./render-with-stores";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** A conversation titled `title` that asks `model` of `provider`. */
async function conversation(title: string, provider: string, model: string) {
  const made = await backend.seed(() => ipc.createConversation(title));
  return backend.seed(() => ipc.setConversationModel(made.id, provider, model));
}

/** The person's price for `model` of `provider`, in dollars per million tokens. */
async function setPrice(provider: string, model: string, input: string, output: string) {
  await backend.seed(() => ipc.setModelPrice(provider, model, input, output, null));
}

/** The window, with the conversation `id` opened from the list. */
const open = renderAppAt;

describe("each answer's cost", () => {
  it("shows beside the tokens what an answer cost, and says why an answer without a price shows only tokens", async () => {
    await backend.addProvider("Work", {
      turns: [
        { answer: ["Hello"], usage: { input: 134, output: 11 } },
        { answer: ["Hello again"], usage: { input: 150, output: 9 } },
      ],
    });
    // 134 tokens in at $3 and 11 out at $18 per million: $0.0006.
    await setPrice("Work", "gpt-4o", "3", "18");
    const chat = await conversation("Chat", "Work", "gpt-4o");
    await backend.run(chat.id, "Hi");
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "llama3"));
    await backend.run(chat.id, "Again");
    await open(chat.id);

    await waitFor(() => expect(screen.getAllByTestId("answer")).toHaveLength(2));
    const [first, second] = screen.getAllByTestId("answer");
    expect(within(first).getByTestId("answer-tokens").textContent?.replace(/\s+/g, " ").trim()).toBe("134 → 11 tokens · $0.0006");
    expect(within(first).getByTestId("answer-cost").textContent).toBe("$0.0006");
    expect(within(first).getByTestId("answer-tokens").title).not.toContain("no price");

    expect(within(second).queryByTestId("answer-cost")).toBeNull();
    const tokens = within(second).getByTestId("answer-tokens");
    expect(tokens.textContent?.trim()).toBe("150 → 9 tokens");
    expect(tokens.title).toContain("This model has no price, so only its tokens are shown");
    expect(tokens.title).toContain("Providers › Prices");
  }, 20_000);
});

describe("the conversation's total", () => {
  it("shows in the header what the conversation has cost, with its requests, tokens, unpriced requests and tools in the title", async () => {
    await backend.addProvider("Work", {
      turns: [
        { answer: ["One"], usage: { input: 1200, output: 300 } },
        { answer: ["Two"], usage: { input: 100, output: 20 } },
        { answer: ["Three"], usage: { input: 5, output: 5 } },
      ],
    });
    await setPrice("Work", "gpt-4o", "2.50", "10");
    await backend.addFaultServer();
    const chat = await conversation("Chat", "Work", "gpt-4o");
    await backend.run(chat.id, "One?");
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "mystery"));
    await backend.run(chat.id, "Two?");
    // Another conversation's request is not this one's.
    const elsewhere = await conversation("Elsewhere", "Work", "gpt-4o");
    await backend.run(elsewhere.id, "Three?");
    // Two of the peer's tools offered here, the others switched off.
    const kept = ["echo", "slow"];
    for (const tool of await backend.seed(() => ipc.listConversationTools(chat.id))) {
      if (!kept.includes(tool.tool)) await backend.seed(() => ipc.setConversationTool(chat.id, tool.server, tool.tool, false));
    }
    const offered = (await backend.seed(() => ipc.listConversationTools(chat.id))).filter((t) => t.enabled && !t.held_back);
    expect(offered.map((t) => t.tool).sort()).toEqual(kept);
    const toolTokens = offered.reduce((sum, t) => sum + t.estimated_tokens, 0);
    expect(toolTokens).toBeGreaterThan(0);
    await open(chat.id);

    const cost = await screen.findByTestId("conversation-cost");
    await waitFor(() => expect(cost.textContent).toBe("$0.006"));
    expect(backend.callsTo("conversation_usage")[0].args).toEqual({ conversationId: chat.id });
    await waitFor(() => expect(cost.title).toContain(`about ${toolTokens.toLocaleString("en-US")} tokens to every request`));
    expect(cost.title).toContain("This conversation has cost $0.006 so far.");
    expect(cost.title).toContain("2 requests · 1,300 tokens in · 320 tokens out");
    expect(cost.title).toContain("1 request had no price");
  }, 20_000);

  it("counts tokens when no request had a price, and shows nothing before the first request", async () => {
    await backend.addProvider("Local", { answer: ["Hi"], usage: { input: 1000, output: 234 } });
    const quiet = await conversation("Quiet", "Local", "llama3");
    const chat = await conversation("Chat", "Local", "llama3");
    await backend.run(chat.id, "Hello?");
    const { user } = await open(chat.id);
    const cost = await screen.findByTestId("conversation-cost");
    await waitFor(() => expect(cost.textContent).toBe("1,234 tokens"));
    expect(cost.title).toContain("No request in this conversation had a price");

    await user.click(screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === quiet.id)!);
    await waitFor(() => expect(backend.callsTo("conversation_usage").some((c) => c.args?.conversationId === quiet.id)).toBe(true));
    await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Quiet"));
    expect(screen.queryByTestId("conversation-cost")).toBeNull();
  });

  it("is read again when a run ends: the new answer's cost joins it", async () => {
    await backend.addProvider("Work", {
      turns: [
        { answer: ["Earlier"], usage: { input: 1200, output: 300 } },
        { tools: [{ name: "fault__echo", arguments: { text: "noon" } }] },
        { answer: ["It is ", "noon."], usage: { input: 30, output: 8 } },
      ],
    });
    await setPrice("Work", "gpt-test", "2.50", "10");
    await backend.addFaultServer();
    const chat = await conversation("Chat", "Work", "gpt-test");
    await backend.run(chat.id, "Earlier?");
    const { user } = await open(chat.id);
    await waitFor(() => expect(screen.getByTestId("conversation-cost").textContent).toBe("$0.006"));
    const readsBefore = backend.callsTo("conversation_usage").length;

    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());

    // 30 tokens in at $2.50 and 8 out at $10 per million: $0.000155 more.
    await waitFor(() => expect(screen.getByTestId("conversation-cost").textContent).toBe("$0.006155"));
    expect(backend.callsTo("conversation_usage").length).toBeGreaterThan(readsBefore);
    expect(screen.getAllByTestId("answer-cost").map((c) => c.textContent)).toEqual(["$0.006", "$0.000155"]);
  }, 20_000);

  it("is read again when a run of the conversation ends, whether it is shown or not", async () => {
    await backend.addProvider("Work", { answer: ["Hi"], usage: { input: 10, output: 2 } });
    // 10 tokens in at $1 and 2 out at $1.172839 per million: 12,345,678 pico-dollars.
    await setPrice("Work", "gpt-4o", "1", "1.172839");
    const chat = await conversation("Chat", "Work", "gpt-4o");
    await backend.run(chat.id, "Hello?");
    const stores = newStores();
    const session = stores.chats.open({ conversation: chat, messages: [], tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [] });
    expect(backend.callsTo("conversation_usage")).toHaveLength(0);

    session.apply({ type: "run_finished", reason: "completed", message: null });
    await waitFor(() => expect(stores.usage.totalOf(chat.id)?.cost_pico).toBe(12_345_678));
    // Read for this conversation. (The run just ended can still be attaching as the view
    // opens, and its last events read the total again: more than one read is not wrong.)
    const reads = backend.callsTo("conversation_usage").map((c) => c.args);
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(new Set(reads.map((r) => JSON.stringify(r)))).toEqual(new Set([JSON.stringify({ conversationId: chat.id })]));
  });
});
