// The window's start against the real core: the saved theme applied, a failing command shown in
// the toast while the rest loads; over a database that could not be opened (the app opened
// again over a database file that is not SQLite), nothing else loaded.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { Stores } from "../src/app/stores";
import { ThemeController } from "../src/app/theme";
import * as ipc from "../src/lib/ipc";
import { FakeDarkQuery } from "./test-helpers";
import { installRealBackend, type RealBackend } from "./real-backend";

let query: FakeDarkQuery;

function newStores(): Stores {
  return new Stores(new ThemeController(document.documentElement, query.matchMedia));
}

beforeEach(() => {
  query = new FakeDarkQuery(false);
});

describe("startup", () => {
  let backend: RealBackend;

  beforeEach(async () => {
    backend = await installRealBackend();
  });

  it("applies the saved theme", async () => {
    const settings = await backend.seed(() => ipc.getSettings());
    await backend.seed(() => ipc.updateSettings({ ...settings, theme: "dark" }));
    const stores = newStores();
    await stores.start();
    expect(document.documentElement.dataset.theme).toBe("dark");
  });

  it("reports a failing command in the toast and keeps going", async () => {
    // No rule of Rust's fails listing the providers: the failure is scripted.
    backend.failNext("list_providers", { kind: "keychain", message: "boom", field: null });
    const chat = await backend.seed(() => ipc.createConversation("Still here"));
    const stores = newStores();
    await stores.start();
    expect(stores.ui.toast?.message).toBe("boom");
    expect(stores.conversations.list.map((c) => c.id)).toEqual([chat.id]);
  });
});

describe("startup over a database that could not be opened", () => {
  it("loads nothing else", async () => {
    const backend = await installRealBackend();
    await backend.reopen({ databaseBroken: true });
    const stores = newStores();
    await stores.start();
    // Rust's words for a file that is not SQLite.
    expect(stores.ui.databaseError?.kind).toBe("database");
    expect(stores.ui.databaseError?.message).toMatch(/not a database/);
    expect(backend.calls.map((c) => c.cmd)).toEqual(["app_status"]);
    expect(stores.ui.ready).toBe(true);
  });
});
