// The conversation's keys and Copy buttons, in the whole window: Shift+Enter is a new line and
// Enter sends, Esc stops the answer under way, Ctrl/Cmd+Shift+C and each message's Copy put the
// text on the clipboard (what lands there is read back, not only the "Copied" label).
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(),
  Channel: class {
    onmessage: (event: unknown) => void = () => {};
  },
}));

import { fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

/** Renders the window with `title` open; the user-event instance owns the clipboard stub. */
async function openChat(title: string) {
  const view = await renderApp();
  await view.user.click(screen.getAllByTestId("conversation-item").find((i) => i.textContent?.includes(title))!);
  await screen.findByTestId("composer-input");
  return view;
}

describe("the composer's keys", () => {
  it("Shift+Enter starts a new line and sends nothing; Enter sends both lines as one message", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    const { user } = await openChat("Chat");
    const input = screen.getByTestId<HTMLTextAreaElement>("composer-input");

    await user.type(input, "line one{Shift>}{Enter}{/Shift}line two");
    expect(input.value).toBe("line one\nline two");
    expect(backend.callsTo("send_message")).toHaveLength(0);

    await user.type(input, "{Enter}");
    await waitFor(() => expect(backend.callsTo("send_message")).toHaveLength(1));
    expect(backend.callsTo("send_message")[0].args).toMatchObject({ text: "line one\nline two" });
  });

  it("Esc stops the answer under way, with its run id; with nothing running it stops nothing", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    backend.toolGate = () => new Promise(() => {});
    const { user } = await openChat("Chat");

    await fireEvent.keyDown(window, { key: "Escape" });
    expect(backend.callsTo("stop_run")).toHaveLength(0);

    await user.type(screen.getByTestId("composer-input"), "What time is it?{Enter}");
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("running"));

    await fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(backend.callsTo("stop_run")).toHaveLength(1));
    const runId = backend.callsTo("stop_run")[0].args?.runId;
    expect(typeof runId).toBe("string");
    expect(runId).not.toBe("");
  });
});

describe("copying", () => {
  const answer = "The **capital** is `Paris`.\n\n```sh\necho hi\n```";

  it("Ctrl+Shift+C and Cmd+Shift+C copy the last answer as Markdown, not the one before", async () => {
    backend.addConversation("Chat");
    const id = backend.conversations[0].id;
    backend.addMessages(id, ["First?", "An older answer.", "Capital of France?", answer]);
    const { user } = await openChat("Chat");
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("capital"));

    await fireEvent.keyDown(window, { key: "C", ctrlKey: true, shiftKey: true });
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(answer));

    await user.click(screen.getAllByTestId("copy-message")[0]);
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe("First?"));
    await fireEvent.keyDown(window, { key: "c", metaKey: true, shiftKey: true });
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(answer));
  });

  it("each message's Copy copies that message's own text", async () => {
    backend.addConversation("Chat");
    const id = backend.conversations[0].id;
    backend.addMessages(id, ["Capital of France?", answer]);
    const { user } = await openChat("Chat");
    const buttons = await screen.findAllByTestId("copy-message");
    expect(buttons).toHaveLength(2);

    await user.click(buttons[0]);
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe("Capital of France?"));
    await user.click(buttons[1]);
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(answer));
  });
});
