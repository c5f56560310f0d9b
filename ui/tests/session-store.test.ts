// The chat sessions live in their store, outside any component: a running answer is the same
// session after the person visits other pages (the conversation view is gone meanwhile), and a
// deleted conversation's session goes with it. Checked on the stores alone and on the
// conversation view rendered on its own with the stores in its context. In the whole window,
// each conversation keeps its own draft in the message box while another is open.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(),
  Channel: class {
    onmessage: (event: unknown) => void = () => {};
  },
}));

import { screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import ConversationView from "../src/chat/ConversationView.svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";
import { newStores, renderWithStores } from "./render-with-stores";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
  sessionStorage.clear();
});

describe("the chat sessions store", () => {
  it("keeps a running session across pages and gives the same one back when its conversation opens again", async () => {
    backend.addProviderRecord("Work");
    const chat = backend.addConversation("Chat");
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(chat.id);
    const detail = stores.conversations.detail;
    expect(detail?.conversation.id).toBe(chat.id);
    const session = stores.chats.open(detail!);
    await session.send("What time is it?");
    await vi.waitFor(() => expect(session.approval).not.toBeNull());

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
  });

  it("forgets a conversation's session when the conversation is deleted, open or not", async () => {
    const open = backend.addConversation("Open");
    const other = backend.addConversation("Other");
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
    backend.addProviderRecord("Work");
    const chat = backend.addConversation("Chat");
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(chat.id);
    const user = userEvent.setup();

    const first = renderWithStores(ConversationView, {}, stores);
    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await screen.findByTestId("approval-dialog");
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
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));

    await user.click(screen.getByTestId("delete-conversation"));
    await user.click(screen.getByTestId("confirm-ok"));
    await waitFor(() => expect(backend.callsTo("delete_conversation")).toHaveLength(1));
    expect(stores.chats.get(chat.id)).toBeUndefined();
    expect(stores.ui.page).toEqual({ name: "welcome" });
  });

  it("keeps each conversation's draft in the message box while another is open, and none of the other's panels", async () => {
    backend.addProviderRecord("Work");
    const first = backend.addConversation("First");
    const second = backend.addConversation("Second");
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
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Other words"));
    expect(box().value).toBe("");
    expect(stores.chats.draftOf(first.id).text).toBe("Half written");
    await stores.conversations.remove(first.id);
    expect(stores.chats.draftOf(first.id).text).toBe("");
  });
});
