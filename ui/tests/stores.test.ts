// The window's start against the real core: the saved theme applied, a failing command shown in
// the toast while the rest loads. Nothing else loaded over a database that could not be opened
// stays on the fake backend until the ipc_serve built here can reopen a session's app over a
// broken database (`backend.reopen({ databaseBroken: true })`).
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { Stores } from "../src/app/stores";
import { ThemeController } from "../src/app/theme";
import * as ipc from "../src/lib/ipc";
import { FakeDarkQuery } from "./fake-backend";
import { installRealBackend, type RealBackend } from "./real-backend";
import { installFakeBackend } from "./render-app";

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

describe("startup over a database that could not be opened (fake backend: ipc_serve's reopen is not built yet)", () => {
  it("loads nothing else", async () => {
    const backend = installFakeBackend();
    backend.status.database_error = { kind: "database", message: "file is not a database", field: null };
    const stores = newStores();
    await stores.start();
    expect(stores.ui.databaseError?.message).toBe("file is not a database");
    expect(backend.calls.map((c) => c.cmd)).toEqual(["app_status"]);
    expect(stores.ui.ready).toBe(true);
  });
});
