// What answers cost, in the open conversation: each answer's cost beside its tokens (or why
// there is none), and the conversation's total in its header, read again as answers are saved
// and runs end.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";
import { newStores } from "./render-with-stores";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

async function openFirst() {
  const view = await renderApp();
  await view.user.click(screen.getAllByTestId("conversation-item")[0]);
  return view;
}

function tool(name: string, tokens: number) {
  return { server: "fs", tool: name, wire_name: `fs__${name}`, display_name: `fs · ${name}`, description: name, held_back: false, held_reason: null, estimated_tokens: tokens };
}

describe("each answer's cost", () => {
  it("shows beside the tokens what an answer cost, and says why an answer without a price shows only tokens", async () => {
    backend.addProviderRecord("Work");
    const chat = backend.addConversation("Chat");
    backend.addMessages(chat.id, ["Hi", "Hello", "Again", "Hello again"]);
    const [, priced, , unpriced] = backend.messages[chat.id];
    Object.assign(priced, { model: "gpt-4o", input_tokens: 134, output_tokens: 11, cost_pico: 600_000_000 });
    Object.assign(unpriced, { model: "llama3", input_tokens: 150, output_tokens: 9, cost_pico: null });
    await openFirst();

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
  });
});

describe("the conversation's total", () => {
  it("shows in the header what the conversation has cost, with its requests, tokens, unpriced requests and tools in the title", async () => {
    backend.catalogue = [tool("read", 300), tool("write", 50)];
    const chat = backend.addConversation("Chat");
    backend.addUsage({ conversation_id: chat.id, provider: "Work", model: "gpt-4o", input_tokens: 1200, output_tokens: 300, cost_pico: 6_000_000_000 });
    backend.addUsage({ conversation_id: chat.id, provider: "Work", model: "mystery", input_tokens: 100, output_tokens: 20, cost_pico: null });
    backend.addUsage({ conversation_id: "elsewhere", provider: "Work", model: "gpt-4o", input_tokens: 5, output_tokens: 5, cost_pico: 99 });
    await openFirst();

    const cost = await screen.findByTestId("conversation-cost");
    expect(cost.textContent).toBe("$0.006");
    expect(backend.callsTo("conversation_usage")[0].args).toEqual({ conversationId: chat.id });
    await waitFor(() => expect(cost.title).toContain("about 350 tokens to every request"));
    expect(cost.title).toContain("This conversation has cost $0.006 so far.");
    expect(cost.title).toContain("2 requests · 1,300 tokens in · 320 tokens out");
    expect(cost.title).toContain("1 request had no price");
  });

  it("counts tokens when no request had a price, and shows nothing before the first request", async () => {
    const quiet = backend.addConversation("Quiet");
    const chat = backend.addConversation("Chat");
    backend.addUsage({ conversation_id: chat.id, provider: "Local", model: "llama3", input_tokens: 1000, output_tokens: 234, cost_pico: null });
    const { user } = await openFirst();
    const cost = await screen.findByTestId("conversation-cost");
    expect(cost.textContent).toBe("1,234 tokens");
    expect(cost.title).toContain("No request in this conversation had a price");

    await user.click(screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === quiet.id)!);
    await waitFor(() => expect(backend.callsTo("conversation_usage").some((c) => c.args?.conversationId === quiet.id)).toBe(true));
    await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Quiet"));
    expect(screen.queryByTestId("conversation-cost")).toBeNull();
  });

  it("is read again when a run ends: the new answer's cost joins it", async () => {
    backend.addProviderRecord("Work");
    backend.setPrice("Work", "gpt-test", { input: 2_500_000, output: 10_000_000, cached_input: null });
    const chat = backend.addConversation("Chat");
    backend.addUsage({ conversation_id: chat.id, provider: "Work", model: "gpt-test", input_tokens: 1200, output_tokens: 300, cost_pico: 6_000_000_000 });
    const { user } = await openFirst();
    expect((await screen.findByTestId("conversation-cost")).textContent).toBe("$0.006");
    const readsBefore = backend.callsTo("conversation_usage").length;

    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());

    // 30 tokens in at $2.50 and 8 out at $10 per million: $0.000155 more.
    await waitFor(() => expect(screen.getByTestId("conversation-cost").textContent).toBe("$0.006155"));
    expect(backend.callsTo("conversation_usage").length).toBeGreaterThan(readsBefore);
    expect(screen.getByTestId("answer-cost").textContent).toBe("$0.000155");
  });

  it("is read again when a run of the conversation ends, whether it is shown or not", async () => {
    const stores = newStores();
    const chat = backend.addConversation("Chat");
    const session = stores.chats.open({ conversation: chat, messages: [], tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [] });
    backend.addUsage({ conversation_id: chat.id, provider: "Work", model: "gpt-4o", input_tokens: 10, output_tokens: 2, cost_pico: 12_345_678 });
    expect(backend.callsTo("conversation_usage")).toHaveLength(0);

    session.apply({ type: "run_finished", reason: "completed", message: null });
    await waitFor(() => expect(stores.usage.totalOf(chat.id)?.cost_pico).toBe(12_345_678));
    expect(backend.callsTo("conversation_usage").map((c) => c.args)).toEqual([{ conversationId: chat.id }]);
  });
});
