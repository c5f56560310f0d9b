// The conversation list's store against the real core: what Rust keeps and names, with the
// window's answers made slow or stale on purpose (the forwarder's delay) to show the store
// settles on what Rust has.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { invoke } from "@tauri-apps/api/core";
import { Stores } from "../src/app/stores";
import { ThemeController } from "../src/app/theme";
import * as ipc from "../src/lib/ipc";
import { FakeDarkQuery } from "./test-helpers";
import { installRealBackend, type RealBackend } from "./real-backend";

let backend: RealBackend;
let query: FakeDarkQuery;

function newStores(): Stores {
  return new Stores(new ThemeController(document.documentElement, query.matchMedia));
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A conversation Rust keeps, titled `title`. */
function addConversation(title: string) {
  return backend.seed(() => ipc.createConversation(title));
}

/** Stores started on one conversation, A, not yet open, whose messages take `readMs` to read. */
async function withOneConversation(readMs: number) {
  const a = await addConversation("A");
  sessionStorage.clear(); // no page remembered from an earlier test
  const stores = newStores();
  await stores.start();
  backend.delay = (cmd) => (cmd === "get_conversation" ? readMs : 0);
  return { a, stores };
}

beforeEach(async () => {
  backend = await installRealBackend();
  query = new FakeDarkQuery(false);
});

describe("the conversation list", () => {
  it("applies the latest response and ignores a stale one", async () => {
    const stores = newStores();
    const slow = deferred<unknown>();
    const fast = deferred<unknown>();
    vi.mocked(invoke).mockImplementationOnce(() => slow.promise as never);
    vi.mocked(invoke).mockImplementationOnce(() => fast.promise as never);

    const first = stores.conversations.refresh();
    const second = stores.conversations.refresh();
    const fresh = [{ id: "new", title: "Fresh", created_at: 2, updated_at: 2 }];
    const stale = [{ id: "old", title: "Stale", created_at: 1, updated_at: 1 }];
    fast.resolve(fresh);
    await second;
    slow.resolve(stale);
    await first;

    expect(stores.conversations.list).toEqual(fresh);
  });

  it("settles on exactly what Rust has after many quick creates and deletes", async () => {
    // Three conversations of the person's (named: kept even with nothing in them).
    const kept = [await addConversation("One"), await addConversation("Two"), await addConversation("Three")];
    const stores = newStores();
    await stores.start();
    // Each list request answers faster than the one before, so older (stale) lists land last.
    const listDelays = [60, 50, 40, 30, 20, 10, 0];
    backend.delay = (cmd) => (cmd === "list_conversations" ? (listDelays.shift() ?? 0) : 1);
    const pause = () => new Promise((resolve) => setTimeout(resolve, 4));

    // Creates and deletes interleaved: three new ones, the first two kept ones deleted, one more.
    const actions: Promise<void>[] = [];
    for (let i = 0; i < 3; i++) {
      actions.push(stores.conversations.create());
      await pause();
    }
    for (const { id } of kept.slice(0, 2)) {
      actions.push(stores.conversations.remove(id));
      await pause();
    }
    actions.push(stores.conversations.create());
    await Promise.all(actions);

    const rust = await backend.seed(() => ipc.listConversations());
    // The new ones had nothing written in them: each went when the next was made (or before it
    // was shown), so the last, open, is the only one kept, beside the third of the person's.
    expect(rust).toHaveLength(2);
    expect(rust.map((c) => c.id)).toContain(kept[2].id);
    const open = rust.find((c) => c.id !== kept[2].id)!;
    expect(stores.ui.page).toEqual({ name: "conversation", id: open.id });
    expect(stores.conversations.list.map((c) => c.id)).toEqual(rust.map((c) => c.id));
  });

  it("opens a new conversation at once, named by Rust", async () => {
    const stores = newStores();
    await stores.start();
    await stores.conversations.create();
    expect(backend.callsTo("create_conversation")[0].args).toEqual({ title: null, profile: null });
    expect(stores.ui.page).toEqual({ name: "conversation", id: stores.conversations.list[0].id });
    expect(stores.conversations.current?.title).toBe("New conversation");
  });

  it("does not keep a new conversation left with nothing in it, and keeps one with a draft, a name or a system prompt", async () => {
    const stores = newStores();
    await stores.start();
    const ids = () => stores.conversations.list.map((c) => c.id);
    const rust = async () => (await backend.seed(() => ipc.listConversations())).map((c) => c.id);

    await stores.conversations.create();
    const empty = stores.ui.openId!;
    await stores.conversations.create();
    const drafted = stores.ui.openId!;
    expect(await rust()).toEqual([drafted]);
    expect(ids()).toEqual([drafted]);

    // Something half written is kept, whether or not its save has landed yet.
    stores.chats.draftOf(drafted).text = "half a que";
    await stores.conversations.create();
    const named = stores.ui.openId!;
    await stores.conversations.rename(named, "Mine");
    await stores.conversations.create();
    const prompted = stores.ui.openId!;
    await stores.conversations.setSystemPrompt(prompted, "Answer in French.");
    stores.conversations.showWelcome();
    await vi.waitFor(async () => expect(await rust()).toHaveLength(3));
    expect(new Set(await rust())).toEqual(new Set([drafted, named, prompted]));
    expect(await rust()).not.toContain(empty);
    expect(new Set(ids())).toEqual(new Set([drafted, named, prompted]));
    // The draft is saved, before the next test's core.
    stores.chats.flush();
    await vi.waitFor(async () => expect((await backend.seed(() => ipc.getConversation(drafted))).draft).not.toBeNull());
  });

  it("does not pull the person back when a slow create finishes after they went elsewhere", async () => {
    const stores = newStores();
    await stores.start();
    backend.delay = (cmd) => (cmd === "create_conversation" ? 20 : 0);
    const creating = stores.conversations.create();
    stores.ui.showSettings();
    await creating;
    expect(stores.ui.page).toEqual({ name: "settings" });
    // Never shown, nothing in it: not kept.
    expect(stores.conversations.list).toHaveLength(0);
    expect(await backend.seed(() => ipc.listConversations())).toHaveLength(0);
  });

  it("deleting the open conversation returns to the welcome state", async () => {
    const keep = await addConversation("Keep");
    const gone = await addConversation("Gone");
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(gone.id);
    await stores.conversations.remove(gone.id);
    expect(stores.ui.page).toEqual({ name: "welcome" });
    expect(stores.conversations.detail).toBeNull();
    expect(stores.conversations.list.map((c) => c.id)).toEqual([keep.id]);
  });

  it("takes a deleted conversation out of the list at once, and a stale list cannot bring it back", async () => {
    const keep = await addConversation("Keep");
    const gone = await addConversation("Gone");
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(gone.id);
    // A list read before the delete answers after it.
    backend.delay = (cmd) => (cmd === "list_conversations" ? 30 : cmd === "delete_conversation" ? 10 : 0);
    const staleRefresh = stores.conversations.refresh();
    const deleting = stores.conversations.remove(gone.id);
    expect(stores.ui.page).toEqual({ name: "welcome" });
    expect(stores.conversations.list.map((c) => c.id)).toEqual([keep.id]);
    await Promise.all([staleRefresh, deleting]);
    expect(stores.conversations.list.map((c) => c.id)).toEqual([keep.id]);
    expect(stores.ui.toast).toBeNull();
  });

  it("puts a conversation back when Rust refuses to delete it", async () => {
    const kept = await addConversation("Stubborn");
    backend.failNext("delete_conversation", { kind: "database", message: "database is locked", field: null });
    const stores = newStores();
    await stores.start();
    await stores.conversations.remove(kept.id);
    expect(stores.conversations.list.map((c) => c.id)).toEqual([kept.id]);
    expect(stores.ui.toast?.message).toBe("database is locked");
  });

  it("shows the title Rust returned after a rename", async () => {
    const conversation = await addConversation("Old");
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(conversation.id);
    await stores.conversations.rename(conversation.id, "   Trimmed title   ");
    expect(stores.conversations.current?.title).toBe("Trimmed title");
    expect(stores.conversations.list[0].title).toBe("Trimmed title");
  });

  it("shows a slow conversation only if it is still the one asked for", async () => {
    const a = await addConversation("A");
    const b = await addConversation("B");
    const stores = newStores();
    await stores.start();
    backend.delay = (cmd) => (cmd === "get_conversation" ? 15 : 0);
    const openingA = stores.conversations.open(a.id);
    backend.delay = () => 0;
    await stores.conversations.open(b.id);
    await openingA;
    expect(stores.conversations.detail?.conversation.id).toBe(b.id);
  });

  it("keeps the page shown while a conversation's messages are read, then shows them at once", async () => {
    const { a, stores } = await withOneConversation(30);
    const pages: unknown[] = [];
    const opening = stores.conversations.open(a.id);
    const watch = setInterval(() => pages.push({ page: stores.ui.page, loaded: stores.conversations.detail !== null }), 2);
    await opening;
    clearInterval(watch);
    expect(pages).toContainEqual({ page: { name: "welcome" }, loaded: false });
    expect(pages).not.toContainEqual({ page: { name: "conversation", id: a.id }, loaded: false });
    expect(stores.ui.page).toEqual({ name: "conversation", id: a.id });
    expect(stores.conversations.detail?.conversation.id).toBe(a.id);
  });

  it("shows a conversation whose messages are slow to come as loading, then with them", async () => {
    const { a, stores } = await withOneConversation(400);
    const opening = stores.conversations.open(a.id);
    await vi.waitFor(() => expect(stores.ui.page).toEqual({ name: "conversation", id: a.id }), { timeout: 300 });
    expect(stores.conversations.detail).toBeNull();
    await opening;
    expect(stores.conversations.detail?.conversation.id).toBe(a.id);
  });

  it("does not open a conversation the person left for Settings while it was read", async () => {
    const { a, stores } = await withOneConversation(30);
    const opening = stores.conversations.open(a.id);
    stores.ui.showSettings();
    await opening;
    expect(stores.ui.page).toEqual({ name: "settings" });
  });
});
