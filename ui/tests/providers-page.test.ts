// The Providers page against the real core: the form's own checks, Rust's refusals beside the
// field they name, keys, windows and connection tests, each provider at a model server of its
// own where one is talked to; the app opened again with a keychain that cannot be reached.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { RunEvent } from "../src/lib/bindings";
import { installRealBackend, type ModelServer, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

async function openProviders() {
  const { app, user } = await renderApp();
  await user.click(screen.getByTestId("nav-providers"));
  const form = screen.getByTestId("provider-form") as HTMLFormElement;
  const field = (name: string) => form.querySelector(`[name="${name}"]`) as HTMLInputElement | HTMLSelectElement | null;
  /** Replaces what an input holds (the name and base URL start filled in from the preset). */
  const retype = async (name: string, text: string) => {
    await user.clear(field(name)!);
    if (text !== "") await user.type(field(name)!, text);
  };
  return { app, user, form, field, retype };
}

function labelOf(input: Element): string {
  return input.closest(".field")?.querySelector("label")?.textContent?.replace(/\s+/g, " ").trim() ?? "";
}

function providerItem(name: string): HTMLElement {
  const item = screen.getAllByTestId("provider-item").find((el) => el.dataset.name === name);
  if (!item) throw new Error(`no provider item ${name}`);
  return item;
}

/** A provider added as the test's setup: `kind` (OpenAI's API by default) at `base_url` (the
 *  kind's usual address by default), with a key unless `key` is null. */
async function seedProvider(
  name: string,
  { kind = "openai", base_url = null, default_model = null, key = "sk-test" }: {
    kind?: string;
    base_url?: string | null;
    default_model?: string | null;
    key?: string | null;
  } = {},
) {
  await backend.seed(() => ipc.addProvider({ name, kind, base_url, default_model, api_key: key }));
}

/** A provider (of the OpenAI-compatible kind, no key, unless `options` say) at a model server of
 *  its own as `script` says; the server's address. */
async function servedProvider(
  name: string,
  script: ModelServer,
  options: { kind?: string; default_model?: string | null; key?: string | null } = {},
) {
  const base_url = await backend.modelServer(script);
  await seedProvider(name, { kind: "openai_compatible", key: null, ...options, base_url });
  return base_url;
}

/** Runs one turn of a new conversation with `model` of `provider` to its end. */
async function runTurn(provider: string, model: string) {
  const chat = await backend.seed(() => ipc.createConversation("t"));
  await backend.seed(() => ipc.setConversationModel(chat.id, provider, model));
  await new Promise<void>((resolve) => {
    const onEvent = (event: RunEvent) => {
      if (event.type === "run_finished") resolve();
    };
    void backend.seed(() => ipc.sendMessage(chat.id, "go", onEvent));
  });
}

async function useRealBackend() {
  backend = await installRealBackend();
}

describe("the add-provider form", () => {
  beforeEach(useRealBackend);

  it("refuses an empty name with a message beside the field, and sends nothing", async () => {
    const { user, retype } = await openProviders();
    await retype("name", "");
    await user.click(screen.getByTestId("provider-submit"));
    const error = screen.getByTestId("error-name");
    expect(error.textContent).toMatch(/name/i);
    expect(error.closest(".field")?.querySelector('[name="name"]')).toBeTruthy();
    expect(backend.callsTo("add_provider")).toHaveLength(0);
  });

  it("refuses a base URL that is not http(s) with a message beside the field", async () => {
    const { user, retype } = await openProviders();
    await retype("name", "Work");
    await retype("base_url", "ftp://models.example");
    await user.click(screen.getByTestId("provider-submit"));
    expect(screen.getByTestId("error-base_url").textContent).toContain("http://");
    expect(screen.queryByTestId("error-name")).toBeNull();
    expect(backend.callsTo("add_provider")).toHaveLength(0);
  });

  it("lists the presets hosted first, then those on this computer, then custom last", async () => {
    await openProviders();
    const select = screen.getByTestId("provider-preset") as HTMLSelectElement;
    const groups = [...select.querySelectorAll("optgroup")].map((g) => ({
      label: g.label,
      options: [...g.querySelectorAll("option")].map((o) => o.textContent),
    }));
    expect(groups).toEqual([
      {
        label: "Hosted",
        options: ["OpenAI", "Anthropic", "Google Gemini", "OpenRouter", "Groq", "DeepSeek", "Mistral"],
      },
      {
        label: "On this computer",
        options: ["Ollama", "Ollama (OpenAI API)", "LM Studio", "llama.cpp server", "vLLM"],
      },
    ]);
    const last = select.options[select.options.length - 1];
    expect(last.textContent).toBe("Custom (OpenAI-compatible)");
    expect(last.parentElement).toBe(select);
  });

  it("starts on OpenAI with its address filled in and its key not marked optional", async () => {
    const { field } = await openProviders();
    expect(field("preset")!.value).toBe("openai");
    expect(field("base_url")!.value).toBe("https://api.openai.com/v1");
    expect(field("name")!.value).toBe("OpenAI");
    expect(field("api_key")!.getAttribute("type")).toBe("password");
    expect(field("api_key")!.getAttribute("autocomplete")).toBe("off");
    expect(labelOf(field("api_key")!)).toBe("API key");
  });

  it("choosing a preset fills its kind and base URL and names the provider, and the add sends them", async () => {
    const { user, field } = await openProviders();
    await user.selectOptions(field("preset")!, "lm_studio");
    expect(field("base_url")!.value).toBe("http://127.0.0.1:1234/v1");
    expect(field("name")!.value).toBe("LM Studio");
    expect(labelOf(field("api_key")!)).toBe("API key (optional)");
    await user.click(screen.getByTestId("provider-submit"));

    await waitFor(() => expect(screen.getAllByTestId("provider-item")).toHaveLength(1));
    expect(backend.callsTo("add_provider")[0].args).toEqual({
      provider: {
        name: "LM Studio",
        kind: "openai_compatible",
        base_url: "http://127.0.0.1:1234/v1",
        default_model: null,
        api_key: null,
      },
    });
    expect(providerItem("LM Studio").textContent).toContain("http://127.0.0.1:1234/v1");
  });

  it("sends an edited base URL as typed", async () => {
    const { user, field, retype } = await openProviders();
    await user.selectOptions(field("preset")!, "ollama");
    await retype("base_url", "http://192.168.1.20:11434");
    await user.click(screen.getByTestId("provider-submit"));
    await waitFor(() => expect(backend.callsTo("add_provider")).toHaveLength(1));
    expect(backend.callsTo("add_provider")[0].args).toMatchObject({
      provider: { name: "Ollama", kind: "ollama", base_url: "http://192.168.1.20:11434" },
    });
  });

  it("says under a plain http:// address that a key travels unencrypted, and marks the listed provider", async () => {
    const { user, field, retype } = await openProviders();
    const hint = () => document.getElementById(field("base_url")!.getAttribute("aria-describedby")!)?.textContent ?? "";
    expect(hint()).not.toContain("unencrypted");
    await user.selectOptions(field("preset")!, "ollama");
    expect(hint()).toContain("travels unencrypted");
    await retype("base_url", "http://192.168.1.20:11434");
    await user.click(screen.getByTestId("provider-submit"));
    await waitFor(() => expect(screen.getAllByTestId("provider-item")).toHaveLength(1));
    expect(within(providerItem("Ollama")).getByTestId("plain-http").textContent).toContain("Unencrypted");
  });

  it("does not mark a provider reached over https", async () => {
    const { user, retype } = await openProviders();
    await retype("name", "Work");
    await user.click(screen.getByTestId("provider-submit"));
    await waitFor(() => expect(screen.getAllByTestId("provider-item")).toHaveLength(1));
    expect(within(providerItem("Work")).queryByTestId("plain-http")).toBeNull();
  });

  it("needs an address for a custom server, and says so beside the base URL", async () => {
    const { user, field, retype } = await openProviders();
    await user.selectOptions(field("preset")!, "custom");
    expect(field("base_url")!.value).toBe("");
    expect(labelOf(field("api_key")!)).toBe("API key (optional)");
    await retype("name", "Box");
    await user.click(screen.getByTestId("provider-submit"));
    expect(screen.getByTestId("error-base_url").textContent).toMatch(/address/);
    expect(document.activeElement).toBe(field("base_url"));
    expect(backend.callsTo("add_provider")).toHaveLength(0);

    await user.type(field("base_url")!, "http://10.0.0.5:5000/v1");
    await user.click(screen.getByTestId("provider-submit"));
    await waitFor(() => expect(backend.callsTo("add_provider")).toHaveLength(1));
    expect(backend.callsTo("add_provider")[0].args).toMatchObject({
      provider: { name: "Box", kind: "openai_compatible", base_url: "http://10.0.0.5:5000/v1" },
    });
  });

  it("keeps a name the person typed when another preset is chosen, and numbers a taken preset name", async () => {
    await seedProvider("Groq", { kind: "openai_compatible", base_url: "https://api.groq.com/openai/v1" });
    const { user, field, retype } = await openProviders();
    await user.selectOptions(field("preset")!, "groq");
    expect(field("name")!.value).toBe("Groq 2");
    await retype("name", "Fast");
    await user.selectOptions(field("preset")!, "mistral");
    expect(field("name")!.value).toBe("Fast");
    expect(field("base_url")!.value).toBe("https://api.mistral.ai/v1");
  });

  it("forgets a key typed for one service when another is chosen", async () => {
    const { user, field } = await openProviders();
    await user.type(field("api_key")!, "sk-openai");
    await user.selectOptions(field("preset")!, "ollama");
    expect(field("api_key")!.value).toBe("");
    await user.click(screen.getByTestId("provider-submit"));
    await waitFor(() => expect(backend.callsTo("add_provider")).toHaveLength(1));
    expect(backend.callsTo("add_provider")[0].args).toMatchObject({ provider: { kind: "ollama", api_key: null } });
  });

  it("shows a kind error Rust reports beside the provider select", async () => {
    // The form only sends the kinds Rust listed, so Rust's refusal of a kind cannot be reached
    // through it: the error is scripted, in Rust's words.
    backend.failNext("add_provider", { kind: "invalid_input", message: "Unknown provider kind “x”.", field: "kind" });
    const { user } = await openProviders();
    await user.click(screen.getByTestId("provider-submit"));
    const error = await screen.findByTestId("error-kind");
    expect(error.textContent).toBe("Unknown provider kind “x”.");
    expect(error.closest(".field")?.querySelector('[data-testid="provider-preset"]')).toBeTruthy();
  });

  it("adds a provider, clears the form including the key, and lists it with its key state", async () => {
    const { user, field, retype } = await openProviders();
    await retype("name", "Work");
    await user.type(field("default_model")!, "gpt-4o");
    await user.type(field("api_key")!, "sk-secret");
    await user.click(screen.getByTestId("provider-submit"));

    await waitFor(() => expect(screen.getAllByTestId("provider-item")).toHaveLength(1));
    expect(backend.callsTo("add_provider")[0].args).toEqual({
      provider: {
        name: "Work",
        kind: "openai",
        base_url: "https://api.openai.com/v1",
        default_model: "gpt-4o",
        api_key: "sk-secret",
      },
    });
    // Back to the preset's own values: its name, its address, nothing else.
    expect(field("preset")!.value).toBe("openai");
    expect(field("name")!.value).toBe("OpenAI");
    expect(field("base_url")!.value).toBe("https://api.openai.com/v1");
    expect(field("default_model")!.value).toBe("");
    expect(field("api_key")!.value).toBe("");
    const item = providerItem("Work");
    expect(within(item).getByTestId("provider-key-state").textContent).toBe("API key: stored in the OS keychain");
    expect(item.textContent).toContain("OpenAI");
    expect(item.textContent).toContain("https://api.openai.com/v1");
    expect(item.textContent).toContain("gpt-4o");
    expect(document.body.textContent).not.toContain("sk-secret");
  });

  it("shows a server error with a field beside that field", async () => {
    await seedProvider("Work");
    const { user, retype } = await openProviders();
    await retype("name", "Work");
    await user.click(screen.getByTestId("provider-submit"));
    expect((await screen.findByTestId("error-name")).textContent).toBe("A provider named “Work” already exists.");
    expect(screen.queryByTestId("provider-form-error")).toBeNull();
  });

  it("shows a server invalid_input on base_url beside the base URL", async () => {
    // The form takes any http(s) address; Rust refuses plain http:// beyond this computer and
    // private networks.
    const { user, retype } = await openProviders();
    await retype("name", "Work");
    await retype("base_url", "http://models.example.com/v1");
    await user.click(screen.getByTestId("provider-submit"));
    expect((await screen.findByTestId("error-base_url")).textContent).toMatch(
      /^Plain http:\/\/ is allowed only for this computer or a private network address .* Use https:\/\/\.$/,
    );
    expect(backend.callsTo("add_provider")).toHaveLength(1);
    expect(screen.queryAllByTestId("provider-item")).toHaveLength(0);
  });

  it("says beside the key that no keychain took it, the keychain's own words once (in the banner), and adds nothing", async () => {
    await backend.reopen({ keychainUnreachable: "no Secret Service on the session bus" });
    const { user, field, retype } = await openProviders();
    await retype("name", "Work");
    await user.type(field("api_key")!, "sk");
    await user.click(screen.getByTestId("provider-submit"));
    expect((await screen.findByTestId("error-api_key")).textContent).toBe(
      "The key was not saved: no OS keychain is reachable. Nothing was saved anywhere else.",
    );
    expect(screen.queryByTestId("provider-form-error")).toBeNull();
    expect(document.body.textContent!.split("no Secret Service on the session bus")).toHaveLength(2);
    expect(screen.getByTestId("keychain-details").textContent).toBe("no Secret Service on the session bus");
    expect(screen.queryAllByTestId("provider-item")).toHaveLength(0);
    // Nothing half-saved: Rust took the provider away again with its key.
    expect(await backend.seed(() => ipc.listProviders())).toEqual([]);
  });
});

describe("configured providers", () => {
  beforeEach(useRealBackend);

  it("replaces a key through a password input and never shows it back", async () => {
    await seedProvider("Work", { key: null });
    const { user } = await openProviders();
    const item = providerItem("Work");
    expect(within(item).getByTestId("provider-key-state").textContent).toBe("API key: none");
    await user.click(within(item).getByTestId("provider-replace-key"));
    const input = within(item).getByLabelText(/New API key/) as HTMLInputElement;
    expect(input.type).toBe("password");
    await user.type(input, "sk-new{Enter}");
    await waitFor(() =>
      expect(within(providerItem("Work")).getByTestId("provider-key-state").textContent).toBe(
        "API key: stored in the OS keychain",
      ),
    );
    expect(backend.callsTo("set_provider_key")[0].args).toEqual({ name: "Work", apiKey: "sk-new" });
    expect(document.body.textContent).not.toContain("sk-new");
    expect((await backend.seed(() => ipc.listProviders()))[0]).toMatchObject({ name: "Work", has_key: true });
  });

  it("shows the default model's window and whose word it is, sets the person's own, refuses a bad one beside the field, and forgets it", async () => {
    await servedProvider("Local", { models: [{ id: "qwen3:8b", context_length: 16384 }] }, { default_model: "qwen3:8b" });
    // The list read, as the picker reads it: what it says of the window is kept.
    await backend.seed(() => ipc.listModels("Local"));
    const { user } = await openProviders();
    const shown = () => within(providerItem("Local")).getByTestId("provider-window").textContent?.replace(/\s+/g, " ").trim();
    await waitFor(() => expect(shown()).toMatch(/^16,384 tokens From the provider's model list Set$/));

    await user.click(within(providerItem("Local")).getByTestId("provider-window-edit"));
    const input = within(providerItem("Local")).getByLabelText("Context window of qwen3:8b (tokens)") as HTMLInputElement;
    expect(input.value).toBe("16384");
    await user.clear(input);
    await user.type(input, "100{Enter}");
    await waitFor(() => expect(within(providerItem("Local")).getByText(/A window of 100 tokens is not one a model has/)).toBeTruthy());
    expect(input.getAttribute("aria-invalid")).toBe("true");

    await user.clear(input);
    await user.type(input, "32,768{Enter}");
    await waitFor(() => expect(shown()).toMatch(/^32,768 tokens Custom Change$/));
    expect(backend.callsTo("set_model_window").at(-1)?.args).toEqual({ provider: "Local", model: "qwen3:8b", tokens: 32768 });

    await user.click(within(providerItem("Local")).getByTestId("provider-window-edit"));
    await user.click(within(providerItem("Local")).getByTestId("provider-window-forget"));
    // The person's word taken back, the provider's list's counts again.
    await waitFor(() => expect(shown()).toMatch(/^16,384 tokens From the provider's model list Set$/));
    expect(backend.callsTo("set_model_window").at(-1)?.args).toEqual({ provider: "Local", model: "qwen3:8b", tokens: null });
  });

  it("says Not known for a default model nothing knows the window of", async () => {
    await seedProvider("Local", { kind: "openai_compatible", base_url: "http://127.0.0.1:5000/v1", default_model: "house-model", key: null });
    await openProviders();
    const shown = () => within(providerItem("Local")).getByTestId("provider-window").textContent?.replace(/\s+/g, " ").trim();
    await waitFor(() => expect(backend.callsTo("get_model_window")).toHaveLength(1));
    // Neither a list, a refusal nor Rust's table of well-known models knows it.
    expect(await backend.seed(() => ipc.getModelWindow("Local", "house-model"))).toBeNull();
    await waitFor(() => expect(shown()).toMatch(/^Not known Set$/));
  });

  it("offers to forget a window learned from a refusal, and keeps an open editor when a key change refreshes the list", async () => {
    // Learned as Rust learns one: the provider refuses a request over the window and names it.
    const refusal = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.";
    await servedProvider("Local", { turns: [{ status: 400, message: refusal }, { answer: ["ok"] }] }, { default_model: "qwen3:8b" });
    await runTurn("Local", "qwen3:8b");
    const { user } = await openProviders();
    const item = () => providerItem("Local");
    await waitFor(() => expect(within(item()).getByTestId("provider-window").textContent).toMatch(/4,096 tokens\s*Learned from a provider error/));
    await user.click(within(item()).getByTestId("provider-window-edit"));
    expect(within(item()).getByTestId("provider-window-forget").textContent).toMatch(/Reset/);
    await user.type(within(item()).getByLabelText("Context window of qwen3:8b (tokens)"), "0");
    // Saving a key refreshes the list with new objects of the same values.
    await user.click(within(item()).getByTestId("provider-replace-key"));
    await user.type(within(item()).getByLabelText(/New API key/), "sk-x{Enter}");
    await waitFor(() => expect(within(item()).getByTestId("provider-key-state").textContent).toBe("API key: stored in the OS keychain"));
    expect((within(item()).getByLabelText("Context window of qwen3:8b (tokens)") as HTMLInputElement).value).toBe("40960");
  });

  it("deletes a key", async () => {
    await seedProvider("Work");
    const { user } = await openProviders();
    await user.click(within(providerItem("Work")).getByTestId("provider-delete-key"));
    await waitFor(() =>
      expect(within(providerItem("Work")).getByTestId("provider-key-state").textContent).toBe("API key: none"),
    );
    expect(backend.callsTo("delete_provider_key")[0].args).toEqual({ name: "Work" });
    expect((await backend.seed(() => ipc.listProviders()))[0]).toMatchObject({ name: "Work", has_key: false });
  });

  it("removes a provider only after the confirm dialog", async () => {
    await seedProvider("Work");
    await seedProvider("Home");
    const { user } = await openProviders();
    await user.click(within(providerItem("Work")).getByTestId("provider-remove"));
    expect(screen.getByTestId("confirm-dialog").textContent).toContain("Work");
    expect(backend.callsTo("remove_provider")).toHaveLength(0);
    await user.click(screen.getByTestId("confirm-ok"));
    await waitFor(() => expect(screen.getAllByTestId("provider-item").map((i) => i.dataset.name)).toEqual(["Home"]));
    expect(backend.callsTo("remove_provider")[0].args).toEqual({ name: "Work" });
    expect((await backend.seed(() => ipc.listProviders())).map((p) => p.name)).toEqual(["Home"]);
  });

  it("shows no banner when the keychain is there", async () => {
    await openProviders();
    expect(screen.queryByTestId("keychain-banner")).toBeNull();
  });

  it("shows a banner when no OS keychain is reachable: a headline, the cause, Check again, the keychain's words behind Details", async () => {
    await backend.reopen({ keychainUnreachable: "no Secret Service on the session bus." });
    const { user } = await openProviders();
    const banner = await screen.findByTestId("keychain-banner");
    expect(within(banner).getByText("No OS keychain is reachable")).toBeTruthy();
    expect(banner.textContent).toContain("keys cannot be saved, and nothing is saved anywhere else.");
    const details = within(banner).getByTestId("keychain-details");
    expect(details.textContent).toBe("no Secret Service on the session bus.");
    expect(details.closest("details")?.open).toBe(false);
    expect(details.closest("details")?.querySelector("summary")?.textContent).toBe("Details");
    const asked = backend.callsTo("keychain_status").length;
    await user.click(within(banner).getByTestId("keychain-check"));
    await waitFor(() => expect(backend.callsTo("keychain_status")).toHaveLength(asked + 1));
    expect(screen.getByTestId("keychain-banner")).toBeTruthy();
  });
});

describe("testing a provider's connection", () => {
  beforeEach(useRealBackend);

  it("says how long it took and how many models it found, with the first few ids", async () => {
    const ids = ["o3", "gpt-4o-mini", "gpt-4o", "gpt-4.1", "dall-e-3", "babbage-002", "tts-1", "whisper-1"];
    await servedProvider("Work", { models: ids.map((id) => ({ id })) }, { key: "sk-test" });
    backend.delay = (cmd) => (cmd === "test_provider" ? 30 : 0);
    const { user } = await openProviders();
    const item = providerItem("Work");
    const button = within(item).getByTestId("provider-test") as HTMLButtonElement;
    expect(button.textContent?.trim()).toBe("Test connection");

    await user.click(button);
    expect(button.textContent?.trim()).toBe("Testing…");
    expect(button.disabled).toBe(true);

    const result = await within(item).findByTestId("provider-test-result");
    expect(result.dataset.ok).toBe("true");
    expect(result.closest('[role="status"]')?.getAttribute("aria-live")).toBe("polite");
    // The time is the core's own measure.
    expect(result.querySelector("p")?.textContent).toMatch(/^Connected in \d+ ms: 8 models\.$/);
    expect([...result.querySelectorAll("li")].map((li) => li.textContent)).toEqual([
      "babbage-002",
      "dall-e-3",
      "gpt-4.1",
      "gpt-4o",
      "gpt-4o-mini",
      "+3 more",
    ]);
    expect(button.textContent?.trim()).toBe("Test connection");
    expect(button.disabled).toBe(false);
    expect(backend.callsTo("test_provider")[0].args).toEqual({ name: "Work" });
  });

  it("says 1 model, not 1 models", async () => {
    await servedProvider("Local", { models: [{ id: "llama3.2:3b" }] });
    const { user } = await openProviders();
    await user.click(within(providerItem("Local")).getByTestId("provider-test"));
    const result = await within(providerItem("Local")).findByTestId("provider-test-result");
    expect(result.querySelector("p")?.textContent).toMatch(/^Connected in \d+ ms: 1 model\.$/);
    expect(result.textContent).not.toContain("more");
  });

  it("shows exactly what failed, as plain text", async () => {
    await servedProvider("Work", { status: 401, message: "Incorrect API key <b>sk-…</b> provided" }, { key: "sk-test" });
    const { user } = await openProviders();
    await user.click(within(providerItem("Work")).getByTestId("provider-test"));
    const result = await within(providerItem("Work")).findByTestId("provider-test-result");
    expect(result.dataset.ok).toBe("false");
    expect(result.classList.contains("ok")).toBe(false);
    expect(result.textContent?.trim()).toBe("The provider refused the API key: Incorrect API key <b>sk-…</b> provided");
    expect(result.querySelector("b")).toBeNull();
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });

  it("reports a missing key for a service that needs one", async () => {
    await seedProvider("Work", { kind: "anthropic", key: null });
    const { user } = await openProviders();
    await user.click(within(providerItem("Work")).getByTestId("provider-test"));
    const result = await within(providerItem("Work")).findByTestId("provider-test-result");
    expect(result.dataset.ok).toBe("false");
    expect(result.textContent?.trim()).toBe("No API key is stored for this provider; add one on the Providers page");
  });

  it("shows a command that could not run at all in the same place", async () => {
    await seedProvider("Work");
    const { user } = await openProviders();
    // Removed elsewhere (the command line, another window) since the page listed it: there is
    // nothing to test.
    await backend.seed(() => ipc.removeProvider("Work"));
    await user.click(within(providerItem("Work")).getByTestId("provider-test"));
    const result = await within(providerItem("Work")).findByTestId("provider-test-result");
    expect(result.dataset.ok).toBe("false");
    expect(result.textContent?.trim()).toBe("Not found: provider “Work”");
  });

  it("clears an old result once a new key is saved", async () => {
    await servedProvider("Work", { models: [{ id: "o3" }] }, { kind: "openai", key: null });
    const { user } = await openProviders();
    await user.click(within(providerItem("Work")).getByTestId("provider-test"));
    expect((await within(providerItem("Work")).findByTestId("provider-test-result")).dataset.ok).toBe("false");
    await user.click(within(providerItem("Work")).getByTestId("provider-replace-key"));
    await user.type(within(providerItem("Work")).getByTestId("provider-key-input"), "sk-new{Enter}");
    await waitFor(() => expect(within(providerItem("Work")).queryByTestId("provider-test-result")).toBeNull());
  });
});
