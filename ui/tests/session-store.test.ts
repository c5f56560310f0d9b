// The chat sessions live in their store, outside any component: a running answer is the same
// session after the person visits other pages (the conversation view is gone meanwhile), and a
// deleted conversation's session goes with it. Checked on the stores alone and on the
// conversation view rendered on its own with the stores in its context. In the whole window,
// each conversation keeps its own draft in the message box while another is open. Against the
// real core: a provider at a scripted model server that calls the fault peer's echo, then answers.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import ConversationView from "../src/chat/ConversationView.svelte";
import * as ipc from "../src/lib/ipc";
import type { Conversation } from "../src/lib/types";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";
import { newStores, renderWithStores } from "./render-with-stores";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
  sessionStorage.clear();
});

/** A provider "Work" whose model "m" calls the fault peer's echo (asking first), then answers
 *  "It is **noon**."; with the fault peer running. */
async function withToolCall(): Promise<void> {
  await backend.addProvider("Work", {
    models: [{ id: "m" }],
    turns: [{ tools: [{ name: "fault__echo", arguments: { text: "noon" } }] }, { answer: ["It is **noon**."] }],
  });
  await backend.addFaultServer();
}

/** A conversation titled `title` on Work's model "m". */
async function conversation(title: string): Promise<Conversation> {
  const chat = await backend.seed(() => ipc.createConversation(title));
  await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
  return chat;
}

describe("the chat sessions store", () => {
  it("keeps a running session across pages and gives the same one back when its conversation opens again", async () => {
    await withToolCall();
    const chat = await conversation("Chat");
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(chat.id);
    const detail = stores.conversations.detail;
    expect(detail?.conversation.id).toBe(chat.id);
    const session = stores.chats.open(detail!);
    await session.send("What time is it?");
    await vi.waitFor(() => expect(session.approval).not.toBeNull(), { timeout: 5000 });

    // Elsewhere, through every kind of page: the session stays, still running, still asking.
    stores.ui.showSettings();
    stores.servers.show();
    stores.ui.showProviders();
    await stores.conversations.create();
    expect(stores.ui.openId).not.toBe(chat.id);
    expect(stores.chats.get(chat.id)).toBe(session);
    expect(session.running).toBe(true);
    expect(session.approval).not.toBeNull();

    // Back: the same session, not rebuilt from what was saved.
    await stores.conversations.open(chat.id);
    expect(stores.chats.open(stores.conversations.detail!)).toBe(session);
    expect(session.running).toBe(true);
    expect(session.approval).not.toBeNull();
  }, 20_000);

  it("forgets a conversation's session when the conversation is deleted, open or not", async () => {
    const open = await backend.seed(() => ipc.createConversation("Open"));
    const other = await backend.seed(() => ipc.createConversation("Other"));
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(other.id);
    const otherSession = stores.chats.open(stores.conversations.detail!);
    await stores.conversations.open(open.id);
    const openSession = stores.chats.open(stores.conversations.detail!);
    expect(stores.chats.get(open.id)).toBe(openSession);
    expect(otherSession).not.toBe(openSession);

    await stores.conversations.remove(open.id);
    expect(stores.chats.get(open.id)).toBeUndefined();
    expect(stores.ui.page).toEqual({ name: "welcome" });
    expect(stores.conversations.list.map((c) => c.id)).toEqual([other.id]);
  });
});

describe("the conversation view with the stores in its context", () => {
  it("shows the run still under way after it was taken down and put back (a navigation), and its delete forgets the session", async () => {
    await withToolCall();
    const chat = await conversation("Chat");
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(chat.id);
    const user = userEvent.setup();

    const first = renderWithStores(ConversationView, {}, stores);
    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await screen.findByTestId("approval-dialog", {}, { timeout: 5000 });
    const session = stores.chats.get(chat.id);
    expect(session?.running).toBe(true);

    // The page goes (App shows another) and comes back: a new view, the same session.
    first.unmount();
    stores.ui.showSettings();
    expect(screen.queryByTestId("approval-dialog")).toBeNull();
    await stores.conversations.open(chat.id);
    renderWithStores(ConversationView, {}, stores);
    const dialog = await screen.findByTestId("approval-dialog");
    expect(screen.getByTestId("composer-stop")).toBeTruthy();
    expect(stores.chats.get(chat.id)).toBe(session);
    expect(screen.getByTestId("message-list").textContent?.match(/What time is it\?/g)).toHaveLength(1);

    await user.click(within(dialog).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"), { timeout: 5000 });

    await user.click(screen.getByTestId("conversation-menu"));
    await user.click(screen.getByTestId("delete-conversation"));
    await user.click(screen.getByTestId("confirm-ok"));
    await waitFor(() => expect(backend.callsTo("delete_conversation")).toHaveLength(1));
    expect(stores.chats.get(chat.id)).toBeUndefined();
    expect(stores.ui.page).toEqual({ name: "welcome" });
  }, 20_000);

  it("keeps each conversation's draft in the message box while another is open, and none of the other's panels", async () => {
    await backend.addProvider("Work", { models: [{ id: "m" }], answer: ["Read."] });
    const first = await conversation("First");
    const second = await conversation("Second");
    const { stores, user } = await renderApp();
    const title = () => screen.getByTestId("conversation-header-title").textContent?.trim();
    const box = () => screen.getByTestId("composer-input") as HTMLTextAreaElement;
    const openConversation = async (id: string, name: string) => {
      await stores.conversations.open(id);
      await waitFor(() => expect(title()).toBe(name));
    };

    // Half a message and the prompt panel open, in the first.
    await openConversation(first.id, "First");
    await user.type(box(), "Half written");
    await user.click(screen.getByTestId("system-prompt-button"));
    await screen.findByTestId("system-prompt-panel");

    // The second: an empty box, and not the first's panel.
    await openConversation(second.id, "Second");
    expect(box().value).toBe("");
    expect(screen.queryByTestId("system-prompt-panel")).toBeNull();

    // Each draft comes back to its own conversation, through another page too.
    await user.type(box(), "Other words");
    await openConversation(first.id, "First");
    expect(box().value).toBe("Half written");
    stores.ui.showSettings();
    await openConversation(second.id, "Second");
    expect(box().value).toBe("Other words");

    // Sent, the second's draft empties; the first's stays. A deleted conversation's draft goes.
    await user.type(box(), "{Enter}");
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Other words"), { timeout: 5000 });
    // The box empties once Rust has taken the message (the message shows as it is sent).
    await waitFor(() => expect(box().value).toBe(""), { timeout: 5000 });
    expect(stores.chats.draftOf(first.id).text).toBe("Half written");
    await stores.conversations.remove(first.id);
    expect(stores.chats.draftOf(first.id).text).toBe("");
  }, 20_000);
});
