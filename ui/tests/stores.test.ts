import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { Stores } from "../src/app/stores";
import { ThemeController } from "../src/app/theme";
import { FakeDarkQuery, type FakeBackend } from "./fake-backend";
import { installFakeBackend } from "./render-app";

let backend: FakeBackend;
let query: FakeDarkQuery;

function newStores(): Stores {
  return new Stores(new ThemeController(document.documentElement, query.matchMedia));
}

beforeEach(() => {
  backend = installFakeBackend();
  query = new FakeDarkQuery(false);
});

describe("startup", () => {
  it("applies the saved theme", async () => {
    backend.settings.theme = "dark";
    const stores = newStores();
    await stores.start();
    expect(document.documentElement.dataset.theme).toBe("dark");
  });

  it("loads nothing else when the database could not be opened", async () => {
    backend.status.database_error = { kind: "database", message: "file is not a database", field: null };
    const stores = newStores();
    await stores.start();
    expect(stores.ui.databaseError?.message).toBe("file is not a database");
    expect(backend.calls.map((c) => c.cmd)).toEqual(["app_status"]);
    expect(stores.ui.ready).toBe(true);
  });

  it("reports a failing command in the toast and keeps going", async () => {
    backend.failures.set("list_providers", "boom");
    backend.addConversation("Still here");
    const stores = newStores();
    await stores.start();
    expect(stores.ui.toast?.message).toBe("boom");
    expect(stores.conversations.list).toHaveLength(1);
  });
});
