// At a first start: the offer to use a model server found running on this computer, on the
// real core (the servers it finds are the test's own model servers).
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

function offers(): HTMLElement[] {
  return screen.queryAllByTestId("local-offer");
}

function offer(presetId: string): HTMLElement {
  const found = offers().find((el) => el.dataset.preset === presetId);
  if (!found) throw new Error(`no offer for ${presetId}`);
  return found;
}

// The app looks for local model servers where ipc_serve tells it: the test's own model servers
// (an Ollama-shaped one answers `/api/tags`), never the machine's 127.0.0.1:11434.
describe("the offer of a local model server", () => {
  let backend: RealBackend;

  beforeEach(async () => {
    backend = await installRealBackend();
  });

  /** Model servers answering as Ollama (and LM Studio) would, with these models, found as the app opens. */
  async function running(servers: { ollama?: string[]; lmStudio?: string[] }): Promise<{ ollama?: string; lmStudio?: string }> {
    const found: { ollama?: string; lmStudio?: string } = {};
    const at: Partial<Record<"ollama" | "lm_studio", string>> = {};
    if (servers.ollama) at.ollama = found.ollama = await backend.modelServer({ models: servers.ollama.map((id) => ({ id })) });
    if (servers.lmStudio) at.lm_studio = found.lmStudio = `${await backend.modelServer({ models: servers.lmStudio.map((id) => ({ id })) })}/v1`;
    await backend.reopen({ localServers: at });
    return found;
  }

  it("starts the new provider on a chat model, not on an embedding model listed first", async () => {
    await running({ ollama: ["all-minilm:latest", "bge-m3:567m", "qwen3:8b"] });
    const { user } = await renderApp();
    const banner = await within(screen.getByTestId("welcome")).findByTestId("local-offer");
    await user.click(within(banner).getByTestId("local-offer-use"));
    await waitFor(() => expect(offers()).toHaveLength(0));
    expect(backend.callsTo("add_provider")[0]?.args).toMatchObject({ provider: { default_model: "qwen3:8b" } });
  });

  it("says Ollama is running, and Use Ollama adds it as a provider and the offer goes away", async () => {
    const { ollama } = await running({ ollama: ["llama3.2:3b", "phi4:14b", "qwen3:8b"] });
    const { user } = await renderApp();
    const welcome = screen.getByTestId("welcome");
    const banner = await within(welcome).findByTestId("local-offer");
    expect(banner.dataset.preset).toBe("ollama");
    expect(banner.textContent).toContain("Ollama is running on this computer (3 models).");
    const use = within(banner).getByTestId("local-offer-use");
    expect(use.textContent?.trim()).toBe("Use Ollama");
    expect(within(welcome).queryByText("Add a provider")).not.toBeNull();

    await user.click(use);
    await waitFor(() => expect(offers()).toHaveLength(0));
    expect(backend.callsTo("add_provider").map((c) => c.args)).toEqual([
      {
        provider: {
          name: "Ollama",
          kind: "ollama",
          base_url: ollama,
          default_model: "llama3.2:3b",
          api_key: null,
        },
      },
    ]);
    expect((await backend.seed(() => ipc.listProviders())).map((p) => p.name)).toEqual(["Ollama"]);
    // The welcome screen no longer asks for a provider, and a chat can pick the new one's models.
    expect(within(welcome).queryByText("Add a provider")).toBeNull();
    await user.click(screen.getByTestId("new-conversation"));
    const picker = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).disabled).toBe(false);
    await waitFor(() => expect(picker.selectedOptions[0]?.textContent).toBe("llama3.2:3b"));
    expect([...picker.querySelectorAll("option")].map((o) => o.textContent)).toEqual([
      "llama3.2:3b",
      "phi4:14b",
      "qwen3:8b",
      "Other model…",
    ]);
  });

  it("is offered on the Providers page too, one banner per server found", async () => {
    const { lmStudio } = await running({ ollama: ["llama3.2:3b"], lmStudio: [] });
    const { user } = await renderApp();
    await waitFor(() => expect(offers()).toHaveLength(2));
    await user.click(screen.getByTestId("nav-providers"));
    expect(offer("ollama").textContent).toContain("Ollama is running on this computer (1 model).");
    expect(offer("lm_studio").textContent).toContain("LM Studio is running on this computer (no models downloaded yet).");
    expect(within(offer("lm_studio")).getByTestId("local-offer-use").textContent?.trim()).toBe("Use LM Studio");

    await user.click(within(offer("lm_studio")).getByTestId("local-offer-use"));
    await waitFor(() => expect(screen.getAllByTestId("provider-item").map((i) => i.dataset.name)).toEqual(["LM Studio"]));
    expect(backend.callsTo("add_provider")[0].args).toEqual({
      provider: {
        name: "LM Studio",
        kind: "openai_compatible",
        base_url: lmStudio,
        default_model: null,
        api_key: null,
      },
    });
    expect(offers()).toHaveLength(0);
  });

  it("Not now hides the offer for the rest of the session", async () => {
    await running({ ollama: ["llama3.2:3b"] });
    const { user } = await renderApp();
    await user.click(within(await screen.findByTestId("local-offer")).getByTestId("local-offer-dismiss"));
    expect(offers()).toHaveLength(0);
    await user.click(screen.getByTestId("nav-providers"));
    expect(offers()).toHaveLength(0);
    expect(backend.callsTo("add_provider")).toHaveLength(0);
    expect(backend.callsTo("detect_local_providers")).toHaveLength(1);
  });

  it("reports a failed add in the error toast and keeps the offer", async () => {
    await running({ ollama: ["llama3.2:3b"] });
    const { user } = await renderApp();
    const banner = await screen.findByTestId("local-offer");
    // Meanwhile a provider of that name was added elsewhere (the command line, say): Rust refuses the second.
    await backend.seed(() => ipc.addProvider({ name: "Ollama", kind: "openai", base_url: "http://127.0.0.1:9/v1", default_model: null, api_key: null }));
    await user.click(within(banner).getByTestId("local-offer-use"));
    expect((await screen.findByTestId("error-toast")).textContent).toContain("A provider named “Ollama” already exists.");
    expect(backend.callsTo("add_provider")).toHaveLength(1);
    expect(offers()).toHaveLength(1);
    expect((within(offers()[0]).getByTestId("local-offer-use") as HTMLButtonElement).disabled).toBe(false);
  });
});

describe("when the window looks for a local model server", () => {
  let backend: RealBackend;

  beforeEach(async () => {
    backend = await installRealBackend();
  });

  it("is not looked for when a provider is already configured", async () => {
    await backend.addProvider("Work");
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-providers"));
    expect(backend.callsTo("detect_local_providers")).toHaveLength(0);
    expect(offers()).toHaveLength(0);
  });

  it("is not looked for when the provider list could not be read", async () => {
    // A database that fails is not one ipc_serve's app has: the failure is scripted.
    backend.failNext("list_providers", { kind: "database", message: "database is locked", field: null });
    await renderApp();
    expect(backend.callsTo("detect_local_providers")).toHaveLength(0);
  });

  it("shows nothing when no local server answers, and a failed probe raises no error", async () => {
    // Rust's probe itself never fails (what does not answer is left out): a failure of the
    // command is scripted.
    backend.failNext("detect_local_providers", { kind: "io", message: "probe failed", field: null });
    await renderApp();
    await waitFor(() => expect(backend.callsTo("detect_local_providers")).toHaveLength(1));
    expect(offers()).toHaveLength(0);
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });
});
