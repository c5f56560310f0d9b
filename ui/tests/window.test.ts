// The whole window against an in-memory backend: what a person sees and does.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(),
  Channel: class {
    onmessage: (event: unknown) => void = () => {};
  },
}));

import { fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import type { McpServerStatus } from "../src/lib/types";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

function items(): HTMLElement[] {
  return screen.queryAllByTestId("conversation-item");
}

describe("sidebar and conversations", () => {
  it("lists conversations newest first, highlights the open one, and keeps the full title in a tooltip", async () => {
    backend.addConversation("Older");
    const long = backend.addConversation("A very long conversation title ".repeat(5).trim());
    const { user } = await renderApp();

    expect(items().map((i) => within(i).getByTestId("conversation-title").textContent)).toEqual([
      long.title,
      "Older",
    ]);
    expect(within(items()[0]).getByTestId("conversation-title").getAttribute("title")).toBe(long.title);
    expect(items()[0].dataset.id).toBe(long.id);

    await user.click(items()[1]);
    expect(items()[1].getAttribute("aria-current")).toBe("page");
    expect(items()[0].getAttribute("aria-current")).toBeNull();
    expect(await screen.findByTestId("conversation-header-title")).toHaveProperty("textContent", "Older");
  });

  it("shows the welcome state when nothing is open, and an empty message list for a new conversation", async () => {
    const { user } = await renderApp();
    expect(screen.getByTestId("welcome")).toBeTruthy();

    await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(items()).toHaveLength(1));
    expect(screen.queryByTestId("welcome")).toBeNull();
    expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("New conversation");
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("No messages yet"));
  });

  it("Ctrl+N starts a new conversation", async () => {
    await renderApp();
    await fireEvent.keyDown(window, { key: "n", ctrlKey: true });
    await waitFor(() => expect(items()).toHaveLength(1));
    expect(backend.callsTo("create_conversation")).toHaveLength(1);
  });

  it("renders model text as sanitised Markdown: raw HTML shows as text and never runs", async () => {
    const conversation = backend.addConversation("Chat");
    backend.messages[conversation.id] = [
      {
        id: "m1",
        conversation_id: conversation.id,
        role: "assistant",
        content: '<img src=x onerror="alert(1)"><b>bold</b>',
        created_at: 1,
        tool_calls: null,
        tool_call_id: null,
        name: null,
        finish_reason: "stop",
        status: "complete",
        provider: null,
        model: null,
        input_tokens: null,
        output_tokens: null,
        reasoning: null,
        error: null,
        is_error: false,
        full_length: null,
        attachments: [],
        cost_pico: null,
      },
    ];
    const { user } = await renderApp();
    await user.click(items()[0]);
    const list = await screen.findByTestId("message-list");
    await waitFor(() => expect(list.textContent).toContain("<b>bold</b>"));
    expect(list.querySelector("img")).toBeNull();
    expect(list.querySelector("b")).toBeNull();
    expect(list.textContent).toContain("Assistant");
    expect(list.querySelector("script")).toBeNull();
  });

  it("shows the files attached to a message of yours by kind, name and size, names as text", async () => {
    const conversation = backend.addConversation("Files");
    backend.addMessages(conversation.id, ["What is in these?", "A cat and a table."]);
    backend.messages[conversation.id][0].attachments = [
      { sha256: "a".repeat(64), name: "cat <img src=x onerror=alert(1)>.png", mime: "image/png", size: 2048, kind: "image" },
      { sha256: "b".repeat(64), name: "scores.csv", mime: "text/plain", size: 19, kind: "text" },
    ];
    const { user } = await renderApp();
    await user.click(items()[0]);
    const files = await screen.findByTestId("message-files");
    expect([...files.querySelectorAll("li")].map((li) => li.textContent?.replace(/\s+/g, " ").trim())).toEqual([
      "Image cat <img src=x onerror=alert(1)>.png 2.0 KB",
      "Text scores.csv 19 B",
    ]);
    expect(files.querySelector("img")).toBeNull();
    expect(screen.getByTestId("message-list").textContent).toContain("What is in these?");
  });
});

describe("rename", () => {
  it("Enter saves and the header shows the title Rust returned", async () => {
    backend.addConversation("Draft");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("rename-conversation"));
    const input = screen.getByTestId("rename-input") as HTMLInputElement;
    expect(input.value).toBe("Draft");
    expect(document.activeElement).toBe(input);
    await user.clear(input);
    await user.type(input, "  Trip plans  {Enter}");
    await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Trip plans"));
    expect(backend.callsTo("rename_conversation")[0].args).toEqual({ id: backend.conversations[0].id, title: "  Trip plans  " });
    await waitFor(() => expect(within(items()[0]).getByTestId("conversation-title").textContent).toBe("Trip plans"));
  });

  it("Esc cancels without saving", async () => {
    backend.addConversation("Keep me");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("rename-conversation"));
    await user.type(screen.getByTestId("rename-input"), " changed{Escape}");
    expect(screen.queryByTestId("rename-input")).toBeNull();
    expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Keep me");
    expect(backend.callsTo("rename_conversation")).toHaveLength(0);
  });

  it("shows Rust's title error beside the input", async () => {
    backend.addConversation("Titled");
    backend.failures.set("rename_conversation", { kind: "invalid_input", message: "Too odd.", field: "title" });
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("rename-conversation"));
    await user.type(screen.getByTestId("rename-input"), "x");
    await user.click(screen.getByTestId("rename-save"));
    expect((await screen.findByTestId("error-title")).textContent).toBe("Too odd.");
    expect(screen.getByTestId("rename-input")).toBeTruthy();
  });
});

describe("system prompt", () => {
  it("a new conversation starts with Settings' default, shown and edited from its header", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(items()).toHaveLength(1));
    await user.click(await screen.findByTestId("system-prompt-button"));
    const input = (await screen.findByTestId("system-prompt-input")) as HTMLTextAreaElement;
    expect(input.value).toBe(backend.settings.default_system_prompt);
    expect(screen.getByTestId("system-prompt-save")).toHaveProperty("disabled", true);
    expect(screen.queryByTestId("system-prompt-default")).toBeNull();

    await user.clear(input);
    await user.type(input, "Answer in French.{Enter}{Enter}");
    expect(screen.getByTestId("system-prompt-count").textContent).toContain("19 / 32,000");
    await user.click(screen.getByTestId("system-prompt-save"));
    expect(await screen.findByTestId("system-prompt-saved")).toBeTruthy();
    const id = backend.conversations[0].id;
    expect(backend.callsTo("set_system_prompt")[0].args).toEqual({ id, systemPrompt: "Answer in French.\n\n" });
    // The box shows what Rust kept (trailing lines trimmed); nothing left to save.
    expect(input.value).toBe("Answer in French.");
    expect(screen.getByTestId("system-prompt-save")).toHaveProperty("disabled", true);

    // Ctrl+Enter saves a cleared prompt; the header says there is none; the default comes back in one click.
    await user.clear(input);
    await user.keyboard("{Control>}{Enter}{/Control}");
    await waitFor(() => expect(backend.conversations[0].system_prompt).toBe(""));
    expect(await screen.findByTestId("system-prompt-none")).toBeTruthy();
    await user.click(screen.getByTestId("system-prompt-default"));
    expect(input.value).toBe(backend.settings.default_system_prompt);
  });

  it("one side panel at a time, Esc closes, another conversation shows its own prompt", async () => {
    backend.addConversation("Pirate", "Talk like a pirate.");
    backend.addConversation("Plain");
    const { user } = await renderApp();
    await user.click(items()[1]);
    await user.click(await screen.findByTestId("tools-button"));
    expect(await screen.findByTestId("tools-panel")).toBeTruthy();
    await user.click(screen.getByTestId("system-prompt-button"));
    expect(screen.queryByTestId("tools-panel")).toBeNull();
    const input = (await screen.findByTestId("system-prompt-input")) as HTMLTextAreaElement;
    expect(input.value).toBe("Talk like a pirate.");
    await user.type(input, " Arr.");

    // Each conversation's page is its own: another one opens with its panels closed.
    await user.click(items()[0]);
    await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Plain"));
    expect(screen.queryByTestId("system-prompt-panel")).toBeNull();
    await user.click(screen.getByTestId("system-prompt-button"));
    expect(((await screen.findByTestId("system-prompt-input")) as HTMLTextAreaElement).value).toBe("");
    await user.type(screen.getByTestId("system-prompt-input"), "{Escape}");
    expect(screen.queryByTestId("system-prompt-panel")).toBeNull();
    expect(backend.callsTo("set_system_prompt")).toHaveLength(0);
  });

  it("shows Rust's refusal beside the text and keeps the draft", async () => {
    backend.addConversation("Chat");
    backend.failures.set("set_system_prompt", { kind: "invalid_input", message: "Too long.", field: "system_prompt" });
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("system-prompt-button"));
    await user.type(await screen.findByTestId("system-prompt-input"), "Be brief.");
    await user.click(screen.getByTestId("system-prompt-save"));
    expect((await screen.findByTestId("system-prompt-error")).textContent).toBe("Too long.");
    expect((screen.getByTestId("system-prompt-input") as HTMLTextAreaElement).value).toBe("Be brief.");
  });
});

describe("delete", () => {
  it("asks in an in-app dialog; Cancel and Esc keep the conversation", async () => {
    backend.addConversation("Precious");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("delete-conversation"));
    const dialog = screen.getByTestId("confirm-dialog");
    expect(dialog.getAttribute("aria-modal")).toBe("true");
    expect(document.activeElement).toBe(screen.getByTestId("confirm-cancel"));
    await user.click(screen.getByTestId("confirm-cancel"));
    expect(screen.queryByTestId("confirm-dialog")).toBeNull();

    await user.click(screen.getByTestId("delete-conversation"));
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("confirm-dialog")).toBeNull();
    expect(backend.callsTo("delete_conversation")).toHaveLength(0);
  });

  it("keeps Tab inside the dialog", async () => {
    backend.addConversation("Tabs");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("delete-conversation"));
    const cancel = screen.getByTestId("confirm-cancel");
    const ok = screen.getByTestId("confirm-ok");
    expect(document.activeElement).toBe(cancel);
    await user.tab();
    expect(document.activeElement).toBe(ok);
    await user.tab();
    expect(document.activeElement).toBe(cancel);
    await user.tab({ shift: true });
    expect(document.activeElement).toBe(ok);
  });

  it("deleting the open conversation returns to welcome and the list stays usable", async () => {
    backend.addConversation("Other");
    backend.addConversation("Doomed");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("delete-conversation"));
    await user.click(screen.getByTestId("confirm-ok"));
    await waitFor(() => expect(screen.getByTestId("welcome")).toBeTruthy());
    expect(items()).toHaveLength(1);
    await user.click(items()[0]);
    await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Other"));
  });
});

describe("bursts", () => {
  it("rapid open, delete, confirm deletes each conversation exactly once and settles on what Rust has", async () => {
    for (let i = 0; i < 8; i++) backend.addConversation(`Chat ${i}`);
    const { user } = await renderApp();
    // Rust answers slowly, so every click lands while earlier calls are still in flight.
    backend.delay = (cmd) => (cmd === "list_conversations" ? 25 : 15);
    for (let i = 0; i < 5; i++) {
      const next = items()[0];
      await user.click(next);
      // A conversation opens when its messages come (the page shown stays until then).
      await waitFor(() => expect(next.getAttribute("aria-current")).toBe("page"));
      await user.click(screen.getByTestId("delete-conversation"));
      await user.click(screen.getByTestId("confirm-ok"));
    }
    const deleted = backend.callsTo("delete_conversation").map((c) => c.args?.id);
    expect(new Set(deleted).size).toBe(5);
    await waitFor(() => expect(backend.conversations).toHaveLength(3));
    await waitFor(() =>
      expect(items().map((i) => i.dataset.id)).toEqual(
        [...backend.conversations].sort((a, b) => b.updated_at - a.updated_at).map((c) => c.id),
      ),
    );
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });

  it("many quick creates all show up, and the last one is open", async () => {
    const { user } = await renderApp();
    backend.delay = (cmd) => (cmd === "list_conversations" ? 20 : 5);
    for (let i = 0; i < 10; i++) await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(items()).toHaveLength(10));
    await waitFor(() => expect(new Set(items().map((i) => i.dataset.id)).size).toBe(10));
    const newest = [...backend.conversations].sort((a, b) => b.updated_at - a.updated_at)[0];
    await waitFor(() => expect(items()[0].dataset.id).toBe(newest.id));
    await waitFor(() => expect(items()[0].getAttribute("aria-current")).toBe("page"));
  });
});

/** Opens the first conversation, asks the scripted run's question and allows its call. */
async function askTheTimeAndAllow(user: Awaited<ReturnType<typeof renderApp>>["user"]): Promise<void> {
  await user.click(items()[0]);
  await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
  await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
}

describe("composer", () => {
  it("is disabled with a hint when there is no provider, and the hint opens Providers", async () => {
    backend.addConversation("Chat");
    const { user } = await renderApp();
    await user.click(items()[0]);
    const input = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    expect(input.disabled).toBe(true);
    expect((screen.getByTestId("composer-send") as HTMLButtonElement).disabled).toBe(true);
    const hint = screen.getByTestId("composer-hint");
    expect(hint.textContent).toContain("Add a provider to start chatting");
    await user.click(within(hint).getByRole("button"));
    expect(screen.getByTestId("provider-form")).toBeTruthy();
  });

  it("asks again when a standing approval is not confirmed in Rust's dialog", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    backend.allowanceAnswer = false;
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    let dialog = await screen.findByTestId("approval-dialog");
    await user.click(within(dialog).getByTestId("choice-allow_always"));
    expect(within(dialog).getByTestId("confirm-elsewhere").textContent).toContain("separate dialog");
    await user.click(within(dialog).getByTestId("approval-submit"));
    expect(await screen.findByText(/did not confirm/)).toBeTruthy();
    // Nothing was answered: the same request is shown again, and allowing once goes through.
    dialog = await screen.findByTestId("approval-dialog");
    await user.click(within(dialog).getByTestId("choice-allow_once"));
    await user.click(within(dialog).getByTestId("approval-submit"));
    const answered = backend.callsTo("answer_approval");
    expect(answered.map((c) => (c.args?.answers as { decision: string }[])[0].decision)).toEqual(["allow_always", "allow_once"]);
    await waitFor(() => expect(screen.queryByTestId("approval-dialog")).toBeNull());
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
  });

  it("sends, asks about the tool call, streams the answer with its tool card, and shows the same after reopening", async () => {
    backend.addProviderRecord("Work");
    const conversation = backend.addConversation("Chat");
    const { user } = await renderApp();
    await user.click(items()[0]);
    const input = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    await user.type(input, "What time is it?{Enter}");
    expect(input.value).toBe("");
    expect(backend.callsTo("send_message")[0].args).toMatchObject({ conversationId: conversation.id, text: "What time is it?" });

    // One dialog: the exact arguments, a choice per call.
    const dialog = await screen.findByTestId("approval-dialog");
    expect(within(dialog).getByTestId("approval-arguments").textContent).toContain('"timezone": "Europe/Paris"');
    expect(screen.getByTestId("composer-stop")).toBeTruthy();
    await user.click(within(dialog).getByTestId("approval-submit"));
    expect(backend.callsTo("answer_approval")[0].args).toMatchObject({ answers: [{ call_id: "call_1", decision: "allow_once" }] });

    const list = screen.getByTestId("message-list");
    await waitFor(() => expect(list.querySelector("strong")?.textContent).toBe("noon"));
    expect(list.querySelector("script")).toBeNull();
    const card = within(list).getByTestId("tool-card");
    expect(card.dataset.state).toBe("done");
    // The result is built when the card is opened, and goes when it is closed.
    expect(within(card).queryByTestId("tool-result")).toBeNull();
    await user.click(card.querySelector("summary")!);
    expect((await within(card).findByTestId("tool-result")).textContent).toContain("2026-11-23T12:00:00");
    await user.click(card.querySelector("summary")!);
    await waitFor(() => expect(within(card).queryByTestId("tool-result")).toBeNull());
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    const live = list.innerHTML;

    // Reopened from what was saved, it looks the same.
    await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(items()).toHaveLength(2));
    await user.click(items().find((i) => i.dataset.id === conversation.id)!);
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
    expect(screen.getByTestId("message-list").innerHTML).toBe(live);
  });

  it("shows a running call's progress as the server reports it, and drops it once the call is done", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    let release: () => void = () => {};
    backend.toolGate = () => new Promise((resolve) => (release = resolve));
    const { user } = await renderApp();
    await askTheTimeAndAllow(user);
    const progress = await screen.findByTestId("tool-progress");
    expect(progress.textContent).toContain("50%");
    expect(progress.textContent).toContain("Asking the clock <b>twice</b>");
    expect(progress.querySelector("b")).toBeNull();
    expect(screen.getByTestId("tool-card").dataset.state).toBe("running");
    release();
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("done"));
    expect(screen.queryByTestId("tool-progress")).toBeNull();
  });

  it("a failed call has Retry, which runs it again in an answer of its own, and the view survives reopening", async () => {
    backend.addProviderRecord("Work");
    const conversation = backend.addConversation("Chat");
    backend.toolFailure = "The server crashed: fault-server: about to crash on purpose";
    const { user } = await renderApp();
    await askTheTimeAndAllow(user);
    const list = screen.getByTestId("message-list");
    await waitFor(() => expect(within(list).getByTestId("tool-card").dataset.state).toBe("error"));
    // Not while the run goes on; once it ended, Retry is there.
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    const failed = within(list).getByTestId("tool-card");
    await user.click(within(failed).getByTestId("retry-call"));
    expect(failed.querySelector("details")!.hasAttribute("open")).toBe(false);
    const [answer] = backend.messages[conversation.id].filter((m) => m.role === "assistant");
    expect(backend.callsTo("retry_tool_call")[0].args).toMatchObject({ conversationId: conversation.id, messageId: answer.id, callId: "call_1" });

    // The retry is asked about like any call, then runs in an answer of the person's own.
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
    await waitFor(() => expect(within(list).getAllByTestId("tool-card")).toHaveLength(2));
    const retried = within(list).getAllByTestId("tool-card")[1];
    await waitFor(() => expect(retried.dataset.state).toBe("done"));
    expect(retried.textContent).toContain("Retry");
    expect(list.textContent).toContain("You ran a call again");
    await waitFor(() => expect(list.querySelector("strong")?.textContent).toBe("noon"));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    // The failed card's Retry has done its job; the retry's card never had one.
    expect(within(list).queryAllByTestId("retry-call")).toHaveLength(0);
    const live = list.innerHTML;

    await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(items()).toHaveLength(2));
    await user.click(items().find((i) => i.dataset.id === conversation.id)!);
    await waitFor(() => expect(screen.getByTestId("message-list").querySelectorAll("[data-testid=tool-card]")).toHaveLength(2));
    await waitFor(() => expect(screen.getByTestId("message-list").innerHTML).toBe(live));
  });

  it("a retry that fails again ends the run with the reason, and the failed call keeps its Retry", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    backend.toolFailure = "The server crashed: first";
    const { user } = await renderApp();
    await askTheTimeAndAllow(user);
    const list = screen.getByTestId("message-list");
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    backend.toolFailure = "The server crashed: second";
    await user.click(within(within(list).getByTestId("tool-card")).getByTestId("retry-call"));
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("run-notice").textContent).toContain("failed again"));
    expect(screen.getByTestId("run-notice").textContent).toContain("The server crashed: second");
    const cards = within(list).getAllByTestId("tool-card");
    expect(cards.map((c) => c.dataset.state)).toEqual(["error", "error"]);
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    // No answer from the model after the failed retry; both failed cards can be tried again.
    expect(list.textContent?.split("I could not look it up.")).toHaveLength(2);
    expect(within(list).getAllByTestId("retry-call")).toHaveLength(2);
    await user.click(within(cards[1]).getByTestId("retry-call"));
    const retry = backend.callsTo("retry_tool_call")[1].args;
    expect(retry).toMatchObject({ callId: cards[1].dataset.callId });
  });

  it("with descriptions on, a call's card shows the model's words for it, as text, live and reopened", async () => {
    backend.addProviderRecord("Work");
    const conversation = backend.addConversation("Chat");
    backend.settings = { ...backend.settings, describe_calls: true };
    const { user } = await renderApp();
    await askTheTimeAndAllow(user);
    const described = await screen.findByTestId("tool-description");
    expect(described.textContent).toBe("Looking up the <i>time</i> in Paris");
    expect(described.querySelector("i")).toBeNull();
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    const live = screen.getByTestId("message-list").innerHTML;
    await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(items()).toHaveLength(2));
    await user.click(items().find((i) => i.dataset.id === conversation.id)!);
    await waitFor(() => expect(screen.getByTestId("tool-description").textContent).toBe("Looking up the <i>time</i> in Paris"));
    await waitFor(() => expect(screen.getByTestId("message-list").innerHTML).toBe(live));
  });

  /** The scripted call's server, remote and running until it refuses a call for want of a sign-in. */
  function timeServer(): McpServerStatus {
    return {
      name: "time", transport: "http", command_line: "streamable HTTP https://time.example.com/mcp", edit_text: "https://time.example.com/mcp",
      roots: [], disabled: false, approved: true, error: null, state: { state: "running", pid: null, tools: 1, apps: [] },
      resolved: "https://time.example.com/mcp", log_file: "/logs/mcp/time.log", held_back: [],
    };
  }

  it("a call refused for want of a sign-in offers one in its card; signed in, the call runs again once", async () => {
    backend.addProviderRecord("Work");
    const conversation = backend.addConversation("Chat");
    backend.mcpServers = [timeServer()];
    backend.toolWantsSignIn = true;
    const { user, stores } = await renderApp();
    await askTheTimeAndAllow(user);
    const list = screen.getByTestId("message-list");
    await waitFor(() => expect(within(list).getByTestId("tool-card").dataset.state).toBe("error"));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    const failed = within(list).getByTestId("tool-card");
    expect(stores.servers.stateOf("time")?.state).toBe("needs_sign_in");
    expect(within(failed).getByTestId("tool-card-sign-in-why").textContent).toContain("“time” needs you to sign in");
    expect(within(failed).getByTestId("retry-call")).toBeTruthy();

    await user.click(within(failed).getByTestId("tool-card-sign-in"));
    // Signed in and the server runs again: the call is run again, asked about like any call.
    const dialog = await screen.findByTestId("approval-dialog");
    expect(backend.signIns).toEqual(["time"]);
    expect(stores.servers.stateOf("time")?.state).toBe("running");
    const [answer] = backend.messages[conversation.id].filter((m) => m.role === "assistant");
    expect(backend.callsTo("retry_tool_call")).toHaveLength(1);
    expect(backend.callsTo("retry_tool_call")[0].args).toMatchObject({ conversationId: conversation.id, messageId: answer.id, callId: "call_1" });
    await user.click(within(dialog).getByTestId("approval-submit"));
    await waitFor(() => expect(within(list).getAllByTestId("tool-card")).toHaveLength(2));
    await waitFor(() => expect(within(list).getAllByTestId("tool-card")[1].dataset.state).toBe("done"));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    expect(within(list).queryByTestId("tool-card-sign-in")).toBeNull();
    expect(within(list).queryAllByTestId("retry-call")).toHaveLength(0);
    expect(backend.callsTo("retry_tool_call")).toHaveLength(1);
  });

  it("a refused sign-in says why in the card and runs nothing; signed in elsewhere, the offer goes and nothing runs", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    backend.mcpServers = [timeServer()];
    backend.toolWantsSignIn = true;
    const { user, stores } = await renderApp();
    await askTheTimeAndAllow(user);
    const list = screen.getByTestId("message-list");
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    const failed = within(list).getByTestId("tool-card");

    backend.signInRefusal = { kind: "mcp", message: "Signing in to “time” failed: the sign-in was not finished within 300 s", field: null };
    await user.click(within(failed).getByTestId("tool-card-sign-in"));
    expect((await within(failed).findByTestId("tool-card-sign-in-error")).textContent).toBe(
      "Signing in to “time” failed: the sign-in was not finished within 300 s",
    );
    expect((within(failed).getByTestId("tool-card-sign-in") as HTMLButtonElement).disabled).toBe(false);

    // The Servers page's sign-in: the card's offer goes with the server's need, and its call waits for Retry.
    backend.signInRefusal = null;
    await stores.servers.signIn("time");
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("running"));
    await waitFor(() => expect(within(failed).queryByTestId("tool-card-sign-in")).toBeNull());
    expect(within(failed).queryByTestId("tool-card-sign-in-error")).toBeNull();
    expect(screen.queryByTestId("approval-dialog")).toBeNull();
    expect(backend.callsTo("retry_tool_call")).toHaveLength(0);
    expect(within(failed).getByTestId("retry-call")).toBeTruthy();
  });

  it("a denied call shows as denied with the reason the model was given", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    const dialog = await screen.findByTestId("approval-dialog");
    await user.click(within(dialog).getByTestId("choice-deny"));
    await user.type(within(dialog).getByTestId("deny-reason"), "not now");
    await user.click(within(dialog).getByTestId("approval-submit"));
    expect(backend.callsTo("answer_approval")[0].args).toMatchObject({ answers: [{ decision: "deny", reason: "not now" }] });
    const card = await screen.findByTestId("tool-card");
    await waitFor(() => expect(card.dataset.state).toBe("denied"));
    await user.click(card.querySelector("summary")!);
    await waitFor(() => expect(card.textContent).toContain("Their reason: not now"));
  });
});

describe("tools panel", () => {
  function tool(server: string, name: string, tokens: number, held_back = false) {
    return {
      server,
      tool: name,
      wire_name: `${server}__${name}`,
      display_name: `${server} · ${name}`,
      description: `<img src=x onerror="alert(1)"> ${name} does things`,
      held_back,
      held_reason: held_back ? "it changed since it was first seen; review the change on the Servers page" : null,
      estimated_tokens: tokens,
    };
  }

  it("shows a tool's hidden characters by name, and a tool its server lists twice beside the one offered", async () => {
    const sneaky = { ...tool("fs", "read", 100), display_name: "fs · Read\u202efdp.exe", description: "Reads.\u{e0049}\u{e0067}" };
    const twice = { ...tool("fs", "read", 0, true), held_reason: "the server lists another tool by this name; only the first is offered to models" };
    backend.catalogue = [sneaky, twice];
    backend.addConversation("Chat");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("tools-button"));
    const panel = await screen.findByTestId("tools-panel");
    expect(panel.textContent).toContain("Read⟨U+202E⟩fdp.exe");
    expect(panel.textContent).toContain("Reads.⟨U+E0049⟩⟨U+E0067⟩");
    expect(panel.textContent).not.toContain("\u202e");
    expect(within(panel).getByTestId("tools-held-reason").textContent).toBe(twice.held_reason);
  });

  it("switches servers and tools, counts the tokens offered, and makes the set the default for new conversations", async () => {
    backend.catalogue = [tool("fs", "read", 100), tool("fs", "write", 200), tool("time", "now", 50), tool("time", "convert", 60, true)];
    const conversation = backend.addConversation("Chat");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe("3/4"));
    await user.click(screen.getByTestId("tools-button"));
    const panel = await screen.findByTestId("tools-panel");
    expect(within(panel).getByTestId("tools-summary").textContent).toContain("3 of 4 tools offered · about 350 tokens");
    // Descriptions come from servers: text, never markup.
    expect(panel.querySelector("img")).toBeNull();
    expect(panel.textContent).toContain('<img src=x onerror="alert(1)">');
    // A held-back tool cannot be switched on here.
    const held = within(panel).getAllByTestId("tools-tool-switch").find((s) => s.dataset.tool === "convert") as HTMLInputElement;
    expect(held.disabled).toBe(true);
    expect(panel.textContent).toContain("review the change on the Servers page");

    const write = within(panel).getAllByTestId("tools-tool-switch").find((s) => s.dataset.tool === "write")!;
    await user.click(write);
    expect(backend.callsTo("set_conversation_tool")[0].args).toEqual({ conversationId: conversation.id, server: "fs", tool: "write", enabled: false });
    await waitFor(() => expect(within(panel).getByTestId("tools-summary").textContent).toContain("2 of 4 tools offered · about 150 tokens"));
    const fs = within(panel).getAllByTestId("tools-server").find((g) => g.dataset.server === "fs")!;
    const fsSwitch = within(fs).getByTestId("tools-server-switch") as HTMLInputElement;
    expect(fsSwitch.indeterminate).toBe(true);

    // The server's switch sets all its tools.
    await user.click(fsSwitch);
    expect(backend.callsTo("set_conversation_tool")[1].args).toMatchObject({ server: "fs", tool: null, enabled: true });
    await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe("3/4"));
    await user.click(fsSwitch);
    await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe("1/4"));

    await user.click(within(panel).getByTestId("tools-make-default"));
    expect(await within(panel).findByTestId("tools-default-saved")).toBeTruthy();
    await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(items()).toHaveLength(2));
    await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe("1/4"));
  });

  it("says when no server is running", async () => {
    backend.addConversation("Chat");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("tools-button"));
    expect((await screen.findByTestId("tools-empty")).textContent).toContain("No server is running");
    await user.click(screen.getByTestId("tools-close"));
    expect(screen.queryByTestId("tools-panel")).toBeNull();
  });
});

describe("failures", () => {
  it("shows a command error in the toast without breaking the window", async () => {
    backend.failures.set("create_conversation", { kind: "database", message: "disk full", field: null });
    const { user } = await renderApp();
    await user.click(screen.getByTestId("new-conversation"));
    expect((await screen.findByTestId("error-toast")).textContent).toContain("disk full");
    expect(screen.getByTestId("welcome")).toBeTruthy();
  });

  it("shows the database error page instead of the normal UI", async () => {
    backend.status.database_error = { kind: "database", message: "database disk image is malformed", field: null };
    await renderApp();
    const page = screen.getByTestId("database-error");
    expect(page.textContent).toContain("Switchboard can't open its database");
    expect(page.textContent).toContain("database disk image is malformed");
    expect(page.textContent).toContain("/home/test/.switchboard");
    expect(page.textContent).toContain("left untouched");
    expect(screen.queryByTestId("new-conversation")).toBeNull();
  });
});

describe("search, export, import and shortcuts", () => {
  it("Ctrl+K searches every conversation, marks the match, and Enter opens its conversation", async () => {
    const trip = backend.addConversation("Trip planning");
    backend.addMessages(trip.id, ["When does the ferry to Hvar leave?", "The ferry to Hvar leaves at nine."]);
    backend.addConversation("Groceries");
    const { user } = await renderApp();
    await user.keyboard("{Control>}k{/Control}");
    const input = await screen.findByTestId("search-input");
    expect(document.activeElement).toBe(input);
    await user.type(input, "ferry");
    const hits = await screen.findAllByTestId("search-hit");
    expect(hits).toHaveLength(2);
    expect(hits[0].textContent).toContain("Trip planning");
    expect(within(hits[0]).getByTestId("search-snippet").querySelector("mark")!.textContent).toBe("ferry");
    // Down moves to the next hit; Enter opens it (the reading back to it: chat-sessions.test.ts, e2e).
    await user.keyboard("{ArrowDown}");
    expect(hits[1].getAttribute("aria-selected")).toBe("true");
    await user.keyboard("{Enter}");
    expect(screen.queryByTestId("search-dialog")).toBeNull();
    await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent).toContain("Trip planning"));
    expect(await screen.findByText("When does the ferry to Hvar leave?")).toBeTruthy();
  });

  it("finds an answer of a version not shown, says so, and opening it shows that version", async () => {
    const trip = backend.addConversation("Trip planning");
    backend.addMessages(trip.id, ["Which ferry to Hvar?", "The slow ferry at nine.", "The fast catamaran at noon."]);
    // The first answer was asked for again: it is kept as branch 0 of the point after the question.
    const [question, first, second] = backend.messages[trip.id];
    second.role = "assistant";
    backend.messages[trip.id] = [question, second];
    backend.branches[trip.id] = [{ at: 1, shown: 1, tails: [[first], null] }];
    const { user } = await renderApp();
    await user.keyboard("{Control>}k{/Control}");
    await user.type(await screen.findByTestId("search-input"), "slow ferry");
    const hits = await screen.findAllByTestId("search-hit");
    expect(hits).toHaveLength(1);
    expect(hits[0].textContent).toContain("Assistant, another version");
    await user.click(hits[0]);
    expect(await screen.findByText("The slow ferry at nine.")).toBeTruthy();
    expect(screen.queryByText("The fast catamaran at noon.")).toBeNull();
    expect(screen.getByTestId("branch-switcher").textContent).toContain("1/2");
    expect(backend.callsTo("reveal_message")[0].args).toEqual({ id: trip.id, messageId: first.id });
  });

  it("says when nothing matches, and Esc closes the search", async () => {
    backend.addConversation("Groceries");
    const { user } = await renderApp();
    await user.click(screen.getByTestId("open-search"));
    await user.type(await screen.findByTestId("search-input"), "zebra");
    expect((await screen.findByTestId("search-empty")).textContent).toContain("Nothing matches “zebra”");
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("search-dialog")).toBeNull();
  });

  it("exports as Markdown or JSON through the save dialog, and imports a file as a new, open conversation", async () => {
    const c = backend.addConversation("Plans");
    const { user } = await renderApp();
    await user.click(items()[0]);
    await user.click(await screen.findByTestId("export-button"));
    await user.click(screen.getByTestId("export-json"));
    expect((await screen.findByTestId("export-saved")).textContent).toBe("Saved to /home/someone/Plans.json");
    expect(backend.callsTo("export_conversation")[0].args).toEqual({ id: c.id, format: "json" });
    expect(screen.queryByTestId("export-menu")).toBeNull();

    await user.click(screen.getByTestId("import-conversation"));
    await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent).toContain("Imported conversation"));
    expect(items()).toHaveLength(2);
  });

  it("Ctrl+/ shows the shortcuts and Esc closes them", async () => {
    const { user } = await renderApp();
    await user.keyboard("{Control>}/{/Control}");
    const sheet = await screen.findByTestId("shortcuts-sheet");
    expect(sheet.textContent).toMatch(/Search every conversation/);
    expect(sheet.textContent).toMatch(/Copy the last answer/);
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("shortcuts-sheet")).toBeNull();
  });
});

describe("working with messages", () => {
  it("deletes a question and its answer after asking, and keeps the rest", async () => {
    const c = backend.addConversation("Pairs");
    backend.addMessages(c.id, ["first question", "first answer", "second question", "second answer"]);
    const { user } = await renderApp();
    await user.click(items()[0]);
    await screen.findByText("second answer");
    const deletes = screen.getAllByTestId("delete-turn");
    expect(deletes).toHaveLength(2);
    await user.click(deletes[0]);
    await user.click(await screen.findByText("Cancel"));
    expect(screen.getByText("first answer")).toBeTruthy();
    await user.click(screen.getAllByTestId("delete-turn")[0]);
    await user.click(within(await screen.findByTestId("confirm-dialog")).getByText("Delete"));
    await waitFor(() => expect(screen.queryByText("first answer")).toBeNull());
    expect(screen.queryByText("first question")).toBeNull();
    expect(screen.getByText("second answer")).toBeTruthy();
    expect(backend.messages[c.id].map((m) => m.content)).toEqual(["second question", "second answer"]);
  });
});

describe("branches", () => {
  it("edits a sent message (Up in an empty composer), keeps the old branch, and switches with ‹ ›", async () => {
    backend.addProviderRecord("Work");
    const c = backend.addConversation("Branches");
    backend.addMessages(c.id, ["What time is it in Paris?", "It is noon in Paris."]);
    const { user } = await renderApp();
    await user.click(items()[0]);
    await screen.findByText("It is noon in Paris.");
    // Up in the empty composer edits the last message of yours.
    await user.click(await screen.findByTestId("composer-input"));
    await user.keyboard("{ArrowUp}");
    const box = (await screen.findByTestId("edit-input")) as HTMLTextAreaElement;
    expect(box.value).toBe("What time is it in Paris?");
    // Esc leaves it as it was.
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("edit-input")).toBeNull();
    await user.click(screen.getByTestId("edit-message"));
    const again = (await screen.findByTestId("edit-input")) as HTMLTextAreaElement;
    await user.clear(again);
    await user.type(again, "What time is it?{Enter}");
    expect(screen.queryByText("It is noon in Paris.")).toBeNull();
    const approval = await screen.findByTestId("approval-dialog");
    await user.click(within(approval).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("branch-position").textContent).toBe("2/2"));
    expect(backend.callsTo("edit_message")[0].args).toMatchObject({ conversationId: c.id, text: "What time is it?" });
    expect(screen.queryByText("What time is it in Paris?")).toBeNull();

    await user.click(screen.getByLabelText("The branch before"));
    expect(await screen.findByText("It is noon in Paris.")).toBeTruthy();
    expect(screen.getByTestId("branch-position").textContent).toBe("1/2");
    expect(screen.getByLabelText("The branch before")).toHaveProperty("disabled", true);
    await user.click(screen.getByLabelText("The branch after"));
    await waitFor(() => expect(screen.queryByText("It is noon in Paris.")).toBeNull());
    expect(screen.getByTestId("branch-position").textContent).toBe("2/2");
  });
});
