// The conversation's keys and Copy buttons, in the whole window: Shift+Enter is a new line and
// Enter sends, Esc stops the answer under way, Ctrl/Cmd+Shift+C and each message's Copy put the
// text on the clipboard (what lands there is read back, not only the "Copied" label). Against
// the real core: a provider at a scripted model server, the fault peer's tools, and answers
// kept by real runs.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { Conversation } from "../src/lib/types";
import { installRealBackend, type ModelServer, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** A conversation titled `title` on the model "m" of a provider "Work" answering as `script` says. */
async function chatWith(title: string, script: ModelServer = { answer: ["Fine."] }): Promise<Conversation> {
  await backend.addProvider("Work", { models: [{ id: "m" }], ...script });
  const chat = await backend.seed(() => ipc.createConversation(title));
  await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
  return chat;
}

/** Renders the window with `title` open; the user-event instance owns the clipboard stub. */
async function openChat(title: string) {
  const view = await renderApp();
  await view.user.click(screen.getAllByTestId("conversation-item").find((i) => i.textContent?.includes(title))!);
  await screen.findByTestId("composer-input");
  return view;
}

describe("the composer's keys", () => {
  it("Shift+Enter starts a new line and sends nothing; Enter sends both lines as one message", async () => {
    await chatWith("Chat");
    const { user } = await openChat("Chat");
    const input = screen.getByTestId<HTMLTextAreaElement>("composer-input");

    await user.type(input, "line one{Shift>}{Enter}{/Shift}line two");
    expect(input.value).toBe("line one\nline two");
    expect(backend.callsTo("send_message")).toHaveLength(0);

    await user.type(input, "{Enter}");
    await waitFor(() => expect(backend.callsTo("send_message")).toHaveLength(1), { timeout: 5000 });
    expect(backend.callsTo("send_message")[0].args).toMatchObject({ text: "line one\nline two" });
  }, 20_000);

  it("Esc stops the answer under way, with its run id; with nothing running it stops nothing", async () => {
    // The model calls the fault peer's hang, which never answers.
    await chatWith("Chat", { models: [{ id: "m" }], turns: [{ tools: [{ name: "fault__hang", arguments: {} }] }, { answer: ["Stopped."] }] });
    await backend.addFaultServer();
    const { user } = await openChat("Chat");

    await fireEvent.keyDown(window, { key: "Escape" });
    expect(backend.callsTo("stop_run")).toHaveLength(0);

    await user.type(screen.getByTestId("composer-input"), "What time is it?{Enter}");
    await user.click(within(await screen.findByTestId("approval-dialog", {}, { timeout: 5000 })).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("running"), { timeout: 5000 });

    await fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(backend.callsTo("stop_run")).toHaveLength(1));
    const runId = backend.callsTo("stop_run")[0].args?.runId;
    expect(typeof runId).toBe("string");
    expect(runId).not.toBe("");
  }, 20_000);
});

describe("copying", () => {
  const answer = "The **capital** is `Paris`.\n\n```sh\necho hi\n```";

  it("Ctrl+Shift+C and Cmd+Shift+C copy the last answer as Markdown, not the one before", async () => {
    const chat = await chatWith("Chat", { turns: [{ answer: ["An older answer."] }, { answer: [answer] }] });
    await backend.run(chat.id, "First?");
    await backend.run(chat.id, "Capital of France?");
    const { user } = await openChat("Chat");
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("capital"), { timeout: 5000 });

    await fireEvent.keyDown(window, { key: "C", ctrlKey: true, shiftKey: true });
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(answer));

    await user.click(screen.getAllByTestId("copy-message")[0]);
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe("First?"));
    await fireEvent.keyDown(window, { key: "c", metaKey: true, shiftKey: true });
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(answer));
  }, 20_000);

  it("each message's Copy copies that message's own text", async () => {
    const chat = await chatWith("Chat", { answer: [answer] });
    await backend.run(chat.id, "Capital of France?");
    const { user } = await openChat("Chat");
    const buttons = await vi.waitFor(() => {
      const shown = screen.getAllByTestId("copy-message");
      expect(shown).toHaveLength(2);
      return shown;
    }, { timeout: 5000 });

    await user.click(buttons[0]);
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe("Capital of France?"));
    await user.click(buttons[1]);
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(answer));
  }, 20_000);
});
