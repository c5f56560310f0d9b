// The providers' model lists in the window's store against the real core, each provider at a
// model server of its own: asked once a session, dropped when its provider goes, asked again
// after a new key, taken from a connection test.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { Stores } from "../src/app/stores";
import { ThemeController } from "../src/app/theme";
import type { ModelList } from "../src/chat/model-choice";
import { FakeDarkQuery } from "./test-helpers";
import { installRealBackend, type RealBackend } from "./real-backend";

let backend: RealBackend;

function newStores(): Stores {
  return new Stores(new ThemeController(document.documentElement, new FakeDarkQuery(false).matchMedia));
}

/** The ids of a list that is ready. */
function ids(list: ModelList | undefined): string[] {
  return list?.state === "ready" ? list.models.map((m) => m.id) : [];
}

beforeEach(async () => {
  backend = await installRealBackend();
});

describe("model lists", () => {
  it("asks each provider for its models once per session", async () => {
    await backend.addProvider("Work", { models: [{ id: "gpt-4o" }] });
    const stores = newStores();
    await stores.start();
    stores.providers.ensureModels(["Work"]);
    stores.providers.ensureModels(["Work"]);
    await vi.waitFor(() => expect(stores.providers.modelLists.Work?.state).toBe("ready"));
    stores.providers.ensureModels(["Work"]);
    expect(backend.callsTo("list_models")).toHaveLength(1);
    expect(ids(stores.providers.modelLists.Work)).toEqual(["gpt-4o"]);
  });

  it("drops a list that arrives after its provider was removed", async () => {
    await backend.addProvider("Work", { models: [{ id: "gpt-4o" }] });
    const stores = newStores();
    await stores.start();
    backend.delay = (cmd) => (cmd === "list_models" ? 20 : 0);
    const loading = stores.providers.loadModels("Work");
    await stores.providers.remove("Work");
    await loading;
    expect(stores.providers.modelLists.Work).toBeUndefined();
  });

  it("asks again after the provider's key changed", async () => {
    await backend.addProvider("Work", { models: [{ id: "o3" }] }, null);
    const stores = newStores();
    await stores.start();
    await stores.providers.loadModels("Work");
    expect(stores.providers.modelLists.Work?.state).toBe("failed");
    await stores.providers.setKey("Work", "sk-new");
    stores.providers.ensureModels(["Work"]);
    await vi.waitFor(() => expect(stores.providers.modelLists.Work?.state).toBe("ready"));
    expect(ids(stores.providers.modelLists.Work)).toEqual(["o3"]);
  });

  it("takes the models a successful connection test found", async () => {
    await backend.addProvider("Work", { models: [{ id: "o3" }, { id: "gpt-4o" }] });
    const stores = newStores();
    await stores.start();
    const report = await stores.providers.test("Work");
    expect(report.ok).toBe(true);
    expect(stores.providers.modelLists.Work?.state).toBe("ready");
    expect(ids(stores.providers.modelLists.Work)).toEqual(["gpt-4o", "o3"]);
    expect(backend.callsTo("list_models")).toHaveLength(0);
  });
});
