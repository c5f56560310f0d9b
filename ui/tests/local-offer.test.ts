// At a first start: the offer to use a model server found running on this computer. When the
// window looks is checked against the real core; what it offers once a server is found stays
// on the fake, as the core probes only the servers' fixed ports (127.0.0.1:11434, :1234), where
// no test may put a server.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import { runningLmStudio, runningOllama, type FakeBackend } from "./fake-backend";
import { installRealBackend, type RealBackend } from "./real-backend";
import { installFakeBackend, renderApp } from "./render-app";

function offers(): HTMLElement[] {
  return screen.queryAllByTestId("local-offer");
}

function offer(presetId: string): HTMLElement {
  const found = offers().find((el) => el.dataset.preset === presetId);
  if (!found) throw new Error(`no offer for ${presetId}`);
  return found;
}

// The probe finds only what answers on the servers' fixed ports, so what is offered is scripted:
// ipc_serve would need its app to probe addresses a test gives (an Ollama-shaped model server
// among them) to run these on the core.
describe("the offer of a local model server (on the fake: the servers found are scripted)", () => {
  let backend: FakeBackend;

  beforeEach(() => {
    backend = installFakeBackend();
  });

  it("starts the new provider on a chat model, not on an embedding model listed first", async () => {
    backend.localServers = [runningOllama("all-minilm:latest", "bge-m3:567m", "qwen3:8b")];
    const { user } = await renderApp();
    const banner = await within(screen.getByTestId("welcome")).findByTestId("local-offer");
    await user.click(within(banner).getByTestId("local-offer-use"));
    await waitFor(() => expect(offers()).toHaveLength(0));
    expect(backend.callsTo("add_provider")[0]?.args).toMatchObject({ provider: { default_model: "qwen3:8b" } });
  });

  it("says Ollama is running, and Use Ollama adds it as a provider and the offer goes away", async () => {
    backend.localServers = [runningOllama("llama3.2:3b", "phi4:14b", "qwen3:8b")];
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
          base_url: "http://127.0.0.1:11434",
          default_model: "llama3.2:3b",
          api_key: null,
        },
      },
    ]);
    expect(backend.providers.map((p) => p.name)).toEqual(["Ollama"]);
    // The welcome screen no longer asks for a provider, and a chat can pick the new one's models.
    expect(within(welcome).queryByText("Add a provider")).toBeNull();
    await user.click(screen.getByTestId("new-conversation"));
    const picker = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).disabled).toBe(false);
    expect(picker.selectedOptions[0]?.textContent).toBe("llama3.2:3b");
    expect([...picker.querySelectorAll("option")].map((o) => o.textContent)).toEqual([
      "llama3.2:3b",
      "phi4:14b",
      "qwen3:8b",
    ]);
  });

  it("is offered on the Providers page too, one banner per server found", async () => {
    backend.localServers = [runningOllama("llama3.2:3b"), runningLmStudio()];
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
        base_url: "http://127.0.0.1:1234/v1",
        default_model: null,
        api_key: null,
      },
    });
    expect(offers()).toHaveLength(0);
  });

  it("Not now hides the offer for the rest of the session", async () => {
    backend.localServers = [runningOllama("llama3.2:3b")];
    const { user } = await renderApp();
    await user.click(within(await screen.findByTestId("local-offer")).getByTestId("local-offer-dismiss"));
    expect(offers()).toHaveLength(0);
    await user.click(screen.getByTestId("nav-providers"));
    expect(offers()).toHaveLength(0);
    expect(backend.callsTo("add_provider")).toHaveLength(0);
    expect(backend.callsTo("detect_local_providers")).toHaveLength(1);
  });



  it("reports a failed add in the error toast and keeps the offer", async () => {
    backend.localServers = [runningOllama("llama3.2:3b")];
    backend.failures.set("add_provider", { kind: "conflict", message: "A provider named “Ollama” already exists.", field: "name" });
    const { user } = await renderApp();
    await user.click(within(await screen.findByTestId("local-offer")).getByTestId("local-offer-use"));
    expect((await screen.findByTestId("error-toast")).textContent).toContain("A provider named “Ollama” already exists.");
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
