import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn() }));

import { invoke } from "@tauri-apps/api/core";
import { AppState } from "../src/lib/app-state.svelte";
import { ThemeController } from "../src/lib/theme";
import { FakeDarkQuery, models, type FakeBackend } from "./fake-backend";
import { installFakeBackend } from "./render-app";

let backend: FakeBackend;
let query: FakeDarkQuery;

function newApp(): AppState {
  return new AppState(new ThemeController(document.documentElement, query.matchMedia));
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

beforeEach(() => {
  backend = installFakeBackend();
  query = new FakeDarkQuery(false);
});

describe("the conversation list", () => {
  it("applies the latest response and ignores a stale one", async () => {
    const app = newApp();
    const slow = deferred<unknown>();
    const fast = deferred<unknown>();
    vi.mocked(invoke).mockImplementationOnce(() => slow.promise as never);
    vi.mocked(invoke).mockImplementationOnce(() => fast.promise as never);

    const first = app.refreshConversations();
    const second = app.refreshConversations();
    const fresh = [{ id: "new", title: "Fresh", created_at: 2, updated_at: 2 }];
    const stale = [{ id: "old", title: "Stale", created_at: 1, updated_at: 1 }];
    fast.resolve(fresh);
    await second;
    slow.resolve(stale);
    await first;

    expect(app.conversations).toEqual(fresh);
  });

  it("settles on exactly what Rust has after many quick creates and deletes", async () => {
    const app = newApp();
    await app.start();
    // Each list request answers faster than the one before, so older (stale) lists land last.
    const listDelays = [60, 50, 40, 30, 20, 10, 0];
    backend.delay = (cmd) => (cmd === "list_conversations" ? (listDelays.shift() ?? 0) : 1);
    const pause = () => new Promise((resolve) => setTimeout(resolve, 4));

    const actions: Promise<void>[] = [];
    for (let i = 0; i < 3; i++) {
      actions.push(app.newConversation());
      await pause();
    }
    for (const { id } of backend.conversations.slice(0, 2)) {
      actions.push(app.deleteConversation(id));
      await pause();
    }
    actions.push(app.newConversation());
    await Promise.all(actions);

    const rust = [...backend.conversations].sort((a, b) => b.updated_at - a.updated_at);
    expect(rust).toHaveLength(2);
    expect(app.conversations.map((c) => c.id)).toEqual(rust.map((c) => c.id));
  });

  it("opens a new conversation at once, named by Rust", async () => {
    const app = newApp();
    await app.start();
    await app.newConversation();
    expect(backend.callsTo("create_conversation")[0].args).toEqual({ title: null });
    expect(app.page).toEqual({ name: "conversation", id: app.conversations[0].id });
    expect(app.current?.title).toBe("New conversation");
  });

  it("does not pull the person back when a slow create finishes after they went elsewhere", async () => {
    const app = newApp();
    await app.start();
    backend.delay = (cmd) => (cmd === "create_conversation" ? 20 : 0);
    const creating = app.newConversation();
    app.showSettings();
    await creating;
    expect(app.page).toEqual({ name: "settings" });
    expect(app.conversations).toHaveLength(1);
  });

  it("deleting the open conversation returns to the welcome state", async () => {
    const keep = backend.addConversation("Keep");
    const gone = backend.addConversation("Gone");
    const app = newApp();
    await app.start();
    await app.openConversation(gone.id);
    await app.deleteConversation(gone.id);
    expect(app.page).toEqual({ name: "welcome" });
    expect(app.detail).toBeNull();
    expect(app.conversations.map((c) => c.id)).toEqual([keep.id]);
  });

  it("takes a deleted conversation out of the list at once, and a stale list cannot bring it back", async () => {
    const keep = backend.addConversation("Keep");
    const gone = backend.addConversation("Gone");
    const app = newApp();
    await app.start();
    await app.openConversation(gone.id);
    // A list read before the delete answers after it.
    backend.delay = (cmd) => (cmd === "list_conversations" ? 30 : cmd === "delete_conversation" ? 10 : 0);
    const staleRefresh = app.refreshConversations();
    const deleting = app.deleteConversation(gone.id);
    expect(app.page).toEqual({ name: "welcome" });
    expect(app.conversations.map((c) => c.id)).toEqual([keep.id]);
    await Promise.all([staleRefresh, deleting]);
    expect(app.conversations.map((c) => c.id)).toEqual([keep.id]);
    expect(app.toast).toBeNull();
  });

  it("puts a conversation back when Rust refuses to delete it", async () => {
    const kept = backend.addConversation("Stubborn");
    backend.failures.set("delete_conversation", { kind: "database", message: "database is locked", field: null });
    const app = newApp();
    await app.start();
    await app.deleteConversation(kept.id);
    expect(app.conversations.map((c) => c.id)).toEqual([kept.id]);
    expect(app.toast?.message).toBe("database is locked");
  });

  it("shows the title Rust returned after a rename", async () => {
    const conversation = backend.addConversation("Old");
    const app = newApp();
    await app.start();
    await app.openConversation(conversation.id);
    await app.renameConversation(conversation.id, "   Trimmed title   ");
    expect(app.current?.title).toBe("Trimmed title");
    expect(app.conversations[0].title).toBe("Trimmed title");
  });

  it("shows a slow conversation only if it is still the one asked for", async () => {
    const a = backend.addConversation("A");
    const b = backend.addConversation("B");
    const app = newApp();
    await app.start();
    backend.delay = (cmd) => (cmd === "get_conversation" ? 15 : 0);
    const openingA = app.openConversation(a.id);
    backend.delay = () => 0;
    await app.openConversation(b.id);
    await openingA;
    expect(app.detail?.conversation.id).toBe(b.id);
  });
});

describe("startup", () => {
  it("applies the saved theme", async () => {
    backend.settings.theme = "dark";
    const app = newApp();
    await app.start();
    expect(document.documentElement.dataset.theme).toBe("dark");
  });

  it("loads nothing else when the database could not be opened", async () => {
    backend.status.database_error = { kind: "database", message: "file is not a database", field: null };
    const app = newApp();
    await app.start();
    expect(app.databaseError?.message).toBe("file is not a database");
    expect(backend.calls.map((c) => c.cmd)).toEqual(["app_status"]);
    expect(app.ready).toBe(true);
  });

  it("reports a failing command in the toast and keeps going", async () => {
    backend.failures.set("list_providers", "boom");
    backend.addConversation("Still here");
    const app = newApp();
    await app.start();
    expect(app.toast?.message).toBe("boom");
    expect(app.conversations).toHaveLength(1);
  });
});

describe("model lists", () => {
  it("asks each provider for its models once per session", async () => {
    backend.addProviderRecord("Work");
    backend.modelLists.Work = models("gpt-4o");
    const app = newApp();
    await app.start();
    app.ensureModels(["Work"]);
    app.ensureModels(["Work"]);
    await vi.waitFor(() => expect(app.modelLists.Work?.state).toBe("ready"));
    app.ensureModels(["Work"]);
    expect(backend.callsTo("list_models")).toHaveLength(1);
    expect(app.modelLists.Work?.models).toEqual(models("gpt-4o"));
  });

  it("drops a list that arrives after its provider was removed", async () => {
    backend.addProviderRecord("Work");
    backend.modelLists.Work = models("gpt-4o");
    const app = newApp();
    await app.start();
    backend.delay = (cmd) => (cmd === "list_models" ? 20 : 0);
    const loading = app.loadModels("Work");
    await app.removeProvider("Work");
    await loading;
    expect(app.modelLists.Work).toBeUndefined();
  });

  it("asks again after the provider's key changed", async () => {
    backend.addProviderRecord("Work", "openai", false);
    const app = newApp();
    await app.start();
    await app.loadModels("Work");
    expect(app.modelLists.Work?.state).toBe("failed");
    await app.setProviderKey("Work", "sk-new");
    backend.modelLists.Work = models("o3");
    app.ensureModels(["Work"]);
    await vi.waitFor(() => expect(app.modelLists.Work).toEqual({ state: "ready", models: models("o3") }));
  });

  it("takes the models a successful connection test found", async () => {
    backend.addProviderRecord("Work");
    backend.modelLists.Work = models("gpt-4o", "o3");
    const app = newApp();
    await app.start();
    const report = await app.testProvider("Work");
    expect(report.ok).toBe(true);
    expect(app.modelLists.Work).toEqual({ state: "ready", models: models("gpt-4o", "o3") });
    expect(backend.callsTo("list_models")).toHaveLength(0);
  });
});
