import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { Stores } from "../src/app/stores";
import { ThemeController } from "../src/app/theme";
import { FakeDarkQuery, models, type FakeBackend } from "./fake-backend";
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

describe("model lists", () => {
  it("asks each provider for its models once per session", async () => {
    backend.addProviderRecord("Work");
    backend.modelLists.Work = models("gpt-4o");
    const stores = newStores();
    await stores.start();
    stores.providers.ensureModels(["Work"]);
    stores.providers.ensureModels(["Work"]);
    await vi.waitFor(() => expect(stores.providers.modelLists.Work?.state).toBe("ready"));
    stores.providers.ensureModels(["Work"]);
    expect(backend.callsTo("list_models")).toHaveLength(1);
    expect(stores.providers.modelLists.Work?.models).toEqual(models("gpt-4o"));
  });

  it("drops a list that arrives after its provider was removed", async () => {
    backend.addProviderRecord("Work");
    backend.modelLists.Work = models("gpt-4o");
    const stores = newStores();
    await stores.start();
    backend.delay = (cmd) => (cmd === "list_models" ? 20 : 0);
    const loading = stores.providers.loadModels("Work");
    await stores.providers.remove("Work");
    await loading;
    expect(stores.providers.modelLists.Work).toBeUndefined();
  });

  it("asks again after the provider's key changed", async () => {
    backend.addProviderRecord("Work", "openai", false);
    const stores = newStores();
    await stores.start();
    await stores.providers.loadModels("Work");
    expect(stores.providers.modelLists.Work?.state).toBe("failed");
    await stores.providers.setKey("Work", "sk-new");
    backend.modelLists.Work = models("o3");
    stores.providers.ensureModels(["Work"]);
    await vi.waitFor(() => expect(stores.providers.modelLists.Work).toEqual({ state: "ready", models: models("o3") }));
  });

  it("takes the models a successful connection test found", async () => {
    backend.addProviderRecord("Work");
    backend.modelLists.Work = models("gpt-4o", "o3");
    const stores = newStores();
    await stores.start();
    const report = await stores.providers.test("Work");
    expect(report.ok).toBe(true);
    expect(stores.providers.modelLists.Work).toEqual({ state: "ready", models: models("gpt-4o", "o3") });
    expect(backend.callsTo("list_models")).toHaveLength(0);
  });
});
