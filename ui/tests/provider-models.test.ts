// A provider's Models section on the Providers page against the real core (issue 58): what the
// listing says of each model, how each is given tools (read and written through Rust), a long
// list shown a slice at a time, and for an Ollama provider getting a model (progress, done,
// cancelled, failed) and removing one, at a scripted Ollama server (ollama-server.ts).
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";
import { OllamaServer, pullLayers, pullLines, type OllamaModel } from "./ollama-server";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

const LLAMA: OllamaModel = {
  name: "llama3.2:3b",
  size: 2_019_393_189,
  family: "llama",
  parameters: "3.2B",
  quantisation: "Q4_K_M",
  capabilities: ["completion", "tools"],
  numCtx: 16_384,
};

const LLAVA: OllamaModel = {
  name: "llava:7b",
  size: 4_733_363_377,
  family: "llama",
  parameters: "7B",
  quantisation: "Q4_0",
  capabilities: ["completion", "vision"],
};

/** An Ollama provider called `name` at a scripted server listing `models`; the server. */
async function ollamaProvider(name: string, models: OllamaModel[]): Promise<OllamaServer> {
  const server = await OllamaServer.start(models);
  await backend.seed(() => ipc.addProvider({ name, kind: "ollama", base_url: server.address, default_model: null, api_key: null }));
  return server;
}

function providerItem(name: string): HTMLElement {
  const item = screen.getAllByTestId("provider-item").find((el) => el.dataset.name === name);
  if (!item) throw new Error(`no provider item ${name}`);
  return item;
}

/** The Providers page, with the Models section of provider `name` opened and its list shown. */
async function openModels(name: string) {
  const view = await renderApp();
  await view.user.click(screen.getByTestId("nav-providers"));
  const item = await waitFor(() => providerItem(name));
  const toggle = within(item).getByTestId("provider-models-toggle");
  expect(toggle.getAttribute("aria-expanded")).toBe("false");
  expect(within(item).queryByTestId("provider-models")).toBeNull();
  await view.user.click(toggle);
  expect(toggle.getAttribute("aria-expanded")).toBe("true");
  await waitFor(() => expect(within(item).getAllByTestId("model-row").length).toBeGreaterThan(0));
  return { ...view, item };
}

function row(item: HTMLElement, model: string): HTMLElement {
  const found = within(item)
    .queryAllByTestId("model-row")
    .find((el) => el.dataset.model === model);
  if (!found) throw new Error(`no row for ${model}`);
  return found;
}

function badges(el: HTMLElement): string[] {
  return within(el)
    .queryAllByTestId("model-badge")
    .map((b) => b.textContent?.trim() ?? "");
}

function toolSelect(el: HTMLElement): HTMLSelectElement {
  return within(el).getByTestId("model-tool-mode") as HTMLSelectElement;
}

describe("a provider's models", () => {
  it("are behind a closed disclosure, and opened show a local model's size, family, parameters, quantisation, window and badges", async () => {
    const hostile = "<img src=x onerror=alert(1)>:latest";
    await ollamaProvider("Local", [LLAMA, LLAVA, { name: hostile, family: "<b>x</b>" }]);
    const { item } = await openModels("Local");

    const llama = row(item, "llama3.2:3b");
    expect(within(llama).getByTestId("model-facts").textContent).toBe("2.0 GB · llama · 3.2B · Q4_K_M · 16,384 tokens");
    expect(badges(llama)).toEqual(["Tools"]);
    const llava = row(item, "llava:7b");
    expect(within(llava).getByTestId("model-facts").textContent).toBe("4.7 GB · llama · 7B · Q4_0");
    expect(badges(llava)).toEqual(["Images", "No tool calling"]);

    // A server's names are text, never markup.
    const odd = row(item, hostile);
    expect(odd.querySelector("img, b")).toBeNull();
    expect(odd.textContent).toContain(hostile);
    expect(within(odd).getByTestId("model-facts").textContent).toBe("<b>x</b>");
    expect(within(item).getByTestId("provider-models-count").textContent).toContain("3");
  });

  it("say how each is given tools, read from Rust, and the person's choice is written through Rust", async () => {
    await ollamaProvider("Local", [LLAMA, LLAVA]);
    const { user, item } = await openModels("Local");

    // What the listing taught Rust: a model with tools natively, one without by prompt.
    const llama = row(item, "llama3.2:3b");
    const llava = row(item, "llava:7b");
    await waitFor(() => expect(within(llava).getByTestId("model-tool-mode-source").textContent).toBe("Learned from the server"));
    expect(toolSelect(llava).value).toBe("auto");
    expect(toolSelect(llava).selectedOptions[0].textContent).toBe("Automatic (by prompt)");
    await waitFor(() => expect(toolSelect(llama).selectedOptions[0].textContent).toBe("Automatic (native)"));
    expect([...toolSelect(llama).options].map((o) => o.textContent)).toEqual(["Automatic (native)", "Native", "By prompt", "Off"]);
    expect(toolSelect(llama).getAttribute("aria-label")).toBe("Tool calling for llama3.2:3b");

    await user.selectOptions(toolSelect(llama), "off");
    await waitFor(() => expect(within(llama).getByTestId("model-tool-mode-source").textContent).toBe("Your choice"));
    expect(toolSelect(llama).value).toBe("off");
    expect(await backend.seed(() => ipc.modelToolMode("Local", "llama3.2:3b"))).toEqual({ mode: "off", source: "person", automatic: "native" });
    // What applies without the person's word is still named.
    expect(toolSelect(llama).options[0].textContent).toBe("Automatic (native)");

    await user.selectOptions(toolSelect(llama), "auto");
    await waitFor(() => expect(within(llama).getByTestId("model-tool-mode-source").textContent).toBe("Learned from the server"));
    expect(backend.callsTo("set_model_tool_mode").map((c) => c.args)).toEqual([
      { provider: "Local", model: "llama3.2:3b", mode: "off" },
      { provider: "Local", model: "llama3.2:3b", mode: null },
    ]);
    expect(await backend.seed(() => ipc.modelToolMode("Local", "llama3.2:3b"))).toEqual({ mode: "native", source: "learned", automatic: "native" });
  });

  it("name what Automatic comes to as Rust says it, even for a model the person chose for before this session", async () => {
    await ollamaProvider("Local", [LLAMA, LLAVA, { name: "plain:1b" }]);
    // Learned by listing, then chosen by the person: Rust alone knows what Automatic would be.
    await backend.seed(() => ipc.listModels("Local"));
    await backend.seed(() => ipc.setModelToolMode("Local", "llava:7b", "native"));
    await backend.seed(() => ipc.setModelToolMode("Local", "plain:1b", "off"));
    const { item } = await openModels("Local");

    const llava = row(item, "llava:7b");
    await waitFor(() => expect(within(llava).getByTestId("model-tool-mode-source").textContent).toBe("Your choice"));
    expect(toolSelect(llava).value).toBe("native");
    expect(toolSelect(llava).options[0].textContent).toBe("Automatic (by prompt)");
    // Nothing learned of it: Automatic is native.
    const plain = row(item, "plain:1b");
    await waitFor(() => expect(within(plain).getByTestId("model-tool-mode-source").textContent).toBe("Your choice"));
    expect(toolSelect(plain).value).toBe("off");
    expect(toolSelect(plain).options[0].textContent).toBe("Automatic (native)");
  });

  it("of a long list show a first slice with a filter and Show more, and only the rows shown read their tool calling", async () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `vendor/model-${String(i).padStart(4, "0")}`);
    const base_url = await backend.modelServer({ models: ids.map((id) => ({ id, context_length: 32_768 })) });
    await backend.seed(() => ipc.addProvider({ name: "Router", kind: "openai_compatible", base_url, default_model: null, api_key: null }));
    const { user, item } = await openModels("Router");

    const shownIds = () => within(item).getAllByTestId("model-row").map((r) => r.dataset.model);
    expect(shownIds()).toEqual(ids.slice(0, 50));
    expect(within(item).getByTestId("provider-models-shown").textContent).toBe("Showing 50 of 2,000");
    // Only a local server fetches or deletes models.
    expect(within(item).queryByTestId("provider-get-model")).toBeNull();
    expect(within(item).queryByTestId("model-remove")).toBeNull();
    const asked = () => new Set(backend.callsTo("model_tool_mode").map((c) => (c.args as { model: string }).model));
    await waitFor(() => expect(asked().size).toBe(50));
    expect([...asked()].sort()).toEqual(ids.slice(0, 50));

    await user.click(within(item).getByTestId("provider-models-more"));
    expect(shownIds()).toHaveLength(100);
    await waitFor(() => expect(asked().size).toBe(100));

    const filter = within(item).getByTestId("provider-models-filter");
    expect(filter.getAttribute("aria-label")).toBe("Filter the models of Router");
    await user.type(filter, "model-19");
    expect(shownIds()).toEqual(ids.filter((id) => id.includes("model-19")).slice(0, 50));
    expect(within(item).getByTestId("provider-models-more").textContent?.trim()).toBe("Show 50 more");
    await user.clear(filter);
    await user.type(filter, "model-1999");
    expect(shownIds()).toEqual(["vendor/model-1999"]);
    expect(within(item).queryByTestId("provider-models-more")).toBeNull();
    await user.clear(filter);
    await user.type(filter, "nothing like it");
    expect(within(item).getByTestId("provider-models-none").textContent).toBe("No model matches “nothing like it”.");
  });
});

describe("getting a model", () => {
  /** The dialog of provider `name`, opened from its Models section. */
  async function openDialog(name: string) {
    const view = await openModels(name);
    await view.user.click(within(view.item).getByTestId("provider-get-model"));
    const dialog = screen.getByTestId("pull-dialog");
    const input = within(dialog).getByTestId("pull-name") as HTMLInputElement;
    expect(document.activeElement).toBe(input);
    return { ...view, dialog, input };
  }

  it("shows the download's bytes across its files, the file's speed and time left, the server's words, then says it is done and lists the model", async () => {
    const server = await ollamaProvider("Local", [LLAMA]);
    // In two files; slow enough for a speed to be told, held before the second file's last bytes.
    server.pull = { lines: pullLayers(), gap: 600, holdBefore: 6 };
    const { user, item, dialog, input } = await openDialog("Local");
    expect(dialog.getAttribute("role")).toBe("dialog");
    expect(dialog.getAttribute("aria-modal")).toBe("true");

    await user.type(input, "qwen3:0.6b");
    await user.click(within(dialog).getByTestId("pull-get"));

    await waitFor(() => expect(within(dialog).getByTestId("pull-progress-line").textContent).toContain("412 MB of 523 MB"));
    await waitFor(() => expect(within(dialog).getByTestId("pull-progress-line").textContent).toMatch(/412 MB of 523 MB · [\d.]+ [KMG]B\/s · \d+ s left/));
    expect(within(dialog).getByTestId("pull-status").textContent).toBe("Server: pulling 9f4e1c2a7b30");
    // The bar is of both files (the second's own bytes are 12 MB of 123 MB): it did not start again.
    const bar = within(dialog).getByTestId("pull-progress") as HTMLProgressElement;
    expect(bar.getAttribute("aria-label")).toBe("Download of qwen3:0.6b");
    expect(bar.max).toBe(523_000_000);
    expect(bar.value).toBe(412_000_000);
    expect(input.disabled).toBe(true);
    expect(document.activeElement).toBe(within(dialog).getByTestId("pull-hide"));

    server.release();
    await waitFor(() => expect(within(dialog).getByTestId("pull-done").textContent).toBe("“qwen3:0.6b” is ready: it is in the list of models."));
    expect(document.activeElement).toBe(within(dialog).getByTestId("pull-close"));
    expect(server.asked("/api/pull", "POST").map((r) => r.body)).toEqual([{ model: "qwen3:0.6b", stream: true }]);
    await waitFor(() => expect(row(item, "qwen3:0.6b")).toBeTruthy());
    expect(within(row(item, "qwen3:0.6b")).getByTestId("model-facts").textContent).toBe("523 MB · qwen3 · 751.63M · Q4_K_M");
    // The list came back with the pull: the window did not ask for it again.
    expect(backend.callsTo("list_models")).toHaveLength(1);
    expect(server.asked("/api/tags", "GET")).toHaveLength(2);

    await user.click(within(dialog).getByTestId("pull-close"));
    expect(screen.queryByTestId("pull-dialog")).toBeNull();
    expect(document.activeElement).toBe(within(item).getByTestId("provider-get-model"));
  });

  it("Cancel download stops a slow download in Rust, and the dialog says it was cancelled", async () => {
    const server = await ollamaProvider("Local", [LLAMA]);
    server.pull = { lines: pullLines().slice(0, 3), holdBefore: 3 };
    const { user, dialog, input } = await openDialog("Local");
    await user.type(input, "qwen3:0.6b{Enter}");
    await waitFor(() => expect(within(dialog).getByTestId("pull-progress-line").textContent).toContain("100 MB of 523 MB"));
    await waitFor(() => expect(server.pullHolding).toBe(true));

    await user.click(within(dialog).getByTestId("pull-cancel"));
    const said = await within(dialog).findByTestId("pull-cancelled");
    expect(said.textContent).toContain("Download of “qwen3:0.6b” cancelled.");
    expect(within(dialog).queryByTestId("pull-error")).toBeNull();
    expect(within(dialog).queryByTestId("pull-running")).toBeNull();
    expect(within(dialog).getByTestId("pull-get").textContent?.trim()).toBe("Try again");
    expect(backend.callsTo("cancel_model_pull").map((c) => c.args)).toEqual([{ provider: "Local", model: "qwen3:0.6b" }]);
    // Rust stopped it: the server saw its client go, and nothing runs any more.
    await waitFor(() => expect(server.pullAbandoned).toBe(true));
    expect(await backend.seed(() => ipc.cancelModelPull("Local", "qwen3:0.6b"))).toBe(false);
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });

  it("a download Rust stops as cancelled is told as cancelled, whoever asked", async () => {
    const server = await ollamaProvider("Local", [LLAMA]);
    server.pull = { lines: pullLines().slice(0, 3), holdBefore: 3 };
    const { user, dialog, input } = await openDialog("Local");
    await user.type(input, "qwen3:0.6b{Enter}");
    await waitFor(() => expect(server.pullHolding).toBe(true));

    // Stopped from elsewhere (not this dialog's button): Rust's word that it was cancelled counts.
    expect(await backend.seed(() => ipc.cancelModelPull("Local", "qwen3:0.6b"))).toBe(true);
    expect((await within(dialog).findByTestId("pull-cancelled")).textContent).toContain("Download of “qwen3:0.6b” cancelled.");
    expect(within(dialog).queryByTestId("pull-error")).toBeNull();
    expect(backend.callsTo("cancel_model_pull")).toHaveLength(0);

    // What the window was told: a rejection of kind cancelled.
    await waitFor(() => expect(server.pullAbandoned).toBe(true));
    server.pull = { lines: pullLines().slice(0, 3), holdBefore: 3 };
    const pulled = backend.seed(() => ipc.pullModel("Local", "qwen3:0.6b", () => {}));
    await waitFor(() => expect(server.asked("/api/pull", "POST")).toHaveLength(2));
    await waitFor(() => expect(server.pullHolding).toBe(true));
    expect(await backend.seed(() => ipc.cancelModelPull("Local", "qwen3:0.6b"))).toBe(true);
    await expect(pulled).rejects.toMatchObject({ kind: "cancelled" });
  });

  it("a finished download whose models Rust could not list again has them listed by the window", async () => {
    const server = await ollamaProvider("Local", [LLAMA]);
    server.pull = { lines: pullLines(), gap: 5 };
    const { user, item, dialog, input } = await openDialog("Local");
    expect(backend.callsTo("list_models")).toHaveLength(1);
    server.failTags = 1;
    await user.type(input, "qwen3:0.6b{Enter}");
    await within(dialog).findByTestId("pull-done");
    await waitFor(() => expect(row(item, "qwen3:0.6b")).toBeTruthy());
    expect(backend.callsTo("list_models")).toHaveLength(2);
    expect(within(item).queryByTestId("provider-models-error")).toBeNull();
  });

  it("Escape asks before cancelling a download (Keep downloading has the focus); Hide lets it go on, shown in the section", async () => {
    const server = await ollamaProvider("Local", [LLAMA]);
    server.pull = { lines: pullLines().slice(0, 3), holdBefore: 3 };
    const { user, item, dialog, input } = await openDialog("Local");
    await user.type(input, "qwen3:0.6b{Enter}");
    await waitFor(() => expect(within(dialog).getByTestId("pull-progress-line").textContent).toContain("100 MB of 523 MB"));

    await user.keyboard("{Escape}");
    const ask = await screen.findByTestId("confirm-dialog");
    expect(ask.textContent).toContain("Cancel the download?");
    expect(document.activeElement).toBe(within(ask).getByTestId("confirm-cancel"));
    expect(within(ask).getByTestId("confirm-cancel").textContent?.trim()).toBe("Keep downloading");
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("confirm-dialog")).toBeNull());
    expect(screen.getByTestId("pull-dialog")).toBe(dialog);
    expect(within(dialog).getByTestId("pull-running")).toBeTruthy();
    expect(backend.callsTo("cancel_model_pull")).toHaveLength(0);

    // Hidden, it goes on; the section's head says how far, and the dialog shows it again.
    await user.click(within(dialog).getByTestId("pull-hide"));
    expect(screen.queryByTestId("pull-dialog")).toBeNull();
    expect(within(item).getByTestId("provider-pull-note").textContent).toBe("Getting “qwen3:0.6b”: 19%");
    await user.click(within(item).getByTestId("provider-get-model"));
    const again = screen.getByTestId("pull-dialog");
    expect(within(again).getByTestId("pull-progress-line").textContent).toContain("100 MB of 523 MB");
    expect(document.activeElement).toBe(within(again).getByTestId("pull-hide"));

    await user.keyboard("{Escape}");
    await user.click(within(await screen.findByTestId("confirm-dialog")).getByTestId("confirm-ok"));
    await within(again).findByTestId("pull-cancelled");
    expect(backend.callsTo("cancel_model_pull")).toHaveLength(1);
    await waitFor(() => expect(server.pullAbandoned).toBe(true));

    // Over, Escape closes the dialog.
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("pull-dialog")).toBeNull();
  });

  it("a download that fails is told in the dialog with the server's words, not in a toast; an empty name is refused beside the field", async () => {
    const server = await ollamaProvider("Local", [LLAMA]);
    server.pull = { lines: [{ status: "pulling manifest" }, { error: "pull model manifest: file does not exist <b>!</b>" }] };
    const { user, dialog, input } = await openDialog("Local");

    await user.click(within(dialog).getByTestId("pull-get"));
    expect(within(dialog).getByTestId("pull-name-error").textContent).toBe("Enter the model's name, such as qwen3:0.6b.");
    expect(input.getAttribute("aria-invalid")).toBe("true");
    expect(backend.callsTo("pull_model")).toHaveLength(0);

    await user.type(input, "nope:1b");
    expect(within(dialog).queryByTestId("pull-name-error")).toBeNull();
    await user.click(within(dialog).getByTestId("pull-get"));
    const failure = await within(dialog).findByTestId("pull-error");
    expect(failure.getAttribute("role")).toBe("alert");
    expect(failure.textContent).toContain("Could not get “nope:1b”");
    expect(within(failure).getByTestId("pull-error-details").textContent).toContain("pull model manifest: file does not exist <b>!</b>");
    expect(failure.querySelector("b")).toBeNull();
    expect(screen.queryByTestId("error-toast")).toBeNull();
    expect(within(dialog).getByTestId("pull-get").textContent?.trim()).toBe("Try again");
  });
});

describe("removing a model", () => {
  it("asks first, naming the model and its size, then Rust deletes it from the server and the list is read again", async () => {
    const server = await ollamaProvider("Local", [LLAMA, LLAVA]);
    const { user, item } = await openModels("Local");
    const remove = within(row(item, "llama3.2:3b")).getByTestId("model-remove");
    expect(remove.getAttribute("aria-label")).toBe("Remove llama3.2:3b…");

    await user.click(remove);
    let ask = screen.getByTestId("confirm-dialog");
    expect(ask.textContent).toContain("“llama3.2:3b” (2.0 GB) will be deleted");
    expect(document.activeElement).toBe(within(ask).getByTestId("confirm-cancel"));
    await user.click(within(ask).getByTestId("confirm-cancel"));
    expect(backend.callsTo("remove_model")).toHaveLength(0);

    await user.click(within(row(item, "llama3.2:3b")).getByTestId("model-remove"));
    ask = screen.getByTestId("confirm-dialog");
    await user.click(within(ask).getByTestId("confirm-ok"));
    await waitFor(() => expect(within(item).getAllByTestId("model-row").map((r) => r.dataset.model)).toEqual(["llava:7b"]));
    expect(server.asked("/api/delete", "DELETE").map((r) => r.body)).toEqual([{ model: "llama3.2:3b" }]);
    expect(backend.callsTo("remove_model").map((c) => c.args)).toEqual([{ provider: "Local", model: "llama3.2:3b" }]);
    // Its row went with the focus: the focus is back on the section's head.
    await waitFor(() => expect(document.activeElement).toBe(within(item).getByTestId("provider-models-toggle")));
  });

  it("that the server refuses is told under its row, and the model stays listed", async () => {
    const server = await ollamaProvider("Local", [LLAMA]);
    const { user, item } = await openModels("Local");
    // Gone from the server meanwhile (another program removed it): its delete finds nothing.
    server.models = [];
    await user.click(within(row(item, "llama3.2:3b")).getByTestId("model-remove"));
    await user.click(within(screen.getByTestId("confirm-dialog")).getByTestId("confirm-ok"));
    const error = await within(row(item, "llama3.2:3b")).findByTestId("model-error");
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toContain("404");
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });
});
