// The composer's model picker against an in-memory backend.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor } from "@testing-library/svelte";
import { models, type FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

/** Opens the only conversation and returns its picker once every provider's list has settled. */
async function openPicker() {
  const view = await renderApp();
  await view.user.click(screen.getAllByTestId("conversation-item")[0]);
  const picker = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
  await waitFor(() => expect(picker.textContent).not.toContain("Loading models…"));
  await waitFor(() => expect(picker.disabled).toBe(false));
  return { ...view, picker };
}

function groups(picker: HTMLSelectElement) {
  return [...picker.querySelectorAll("optgroup")].map((group) => ({
    label: group.label,
    models: [...group.querySelectorAll("option")].map((option) => option.textContent),
  }));
}

function selectedText(picker: HTMLSelectElement): string | null {
  return picker.selectedOptions[0]?.textContent ?? null;
}

function selectedGroup(picker: HTMLSelectElement): string | null {
  return (picker.selectedOptions[0]?.parentElement as HTMLOptGroupElement | null)?.label ?? null;
}

function option(picker: HTMLSelectElement, provider: string, model: string): HTMLOptionElement {
  const group = [...picker.querySelectorAll("optgroup")].find((g) => g.label === provider);
  const found = [...(group?.querySelectorAll("option") ?? [])].find((o) => o.textContent === model);
  if (!found) throw new Error(`no option ${provider} / ${model}`);
  return found;
}

function twoProviders(): void {
  backend.addProviderRecord("Work", "openai", true, { default_model: "gpt-4o" });
  backend.addProviderRecord("Local", "ollama", false);
  backend.modelLists.Work = models("o3", "gpt-4o", "gpt-4o-mini");
  backend.modelLists.Local = models("qwen3:8b", "llama3.2:3b");
}

describe("the model picker", () => {
  it("lists each provider's models under the provider's name and selects the first provider's default", async () => {
    twoProviders();
    backend.addConversation("Chat");
    const { picker } = await openPicker();

    expect(groups(picker)).toEqual([
      { label: "Work", models: ["gpt-4o", "gpt-4o-mini", "o3"] },
      { label: "Local", models: ["llama3.2:3b", "qwen3:8b"] },
    ]);
    expect(selectedGroup(picker)).toBe("Work");
    expect(selectedText(picker)).toBe("gpt-4o");
    expect(picker.title).toBe("Work: gpt-4o");
    expect(screen.queryByTestId("model-picker-note")).toBeNull();
  });

  it("stores a change with set_conversation_model and still shows it when the conversation is opened again", async () => {
    twoProviders();
    const chat = backend.addConversation("Chat");
    const { user, picker } = await openPicker();

    await user.selectOptions(picker, option(picker, "Local", "qwen3:8b"));
    await waitFor(() => expect(backend.callsTo("set_conversation_model")).toHaveLength(1));
    expect(backend.callsTo("set_conversation_model")[0].args).toEqual({ id: chat.id, provider: "Local", model: "qwen3:8b" });
    expect(backend.conversations[0]).toMatchObject({ provider: "Local", model: "qwen3:8b" });
    await waitFor(() => expect(selectedText(picker)).toBe("qwen3:8b"));

    await user.click(screen.getByTestId("nav-providers"));
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    const again = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
    await waitFor(() => expect(selectedText(again)).toBe("qwen3:8b"));
    expect(selectedGroup(again)).toBe("Local");
    // The lists were asked for once per provider in this session, not once per opening.
    expect(backend.callsTo("list_models").map((c) => c.args)).toEqual([{ name: "Work" }, { name: "Local" }]);
  });

  it("selects the model stored for the conversation even when its provider does not list it", async () => {
    twoProviders();
    const chat = backend.addConversation("Chat");
    Object.assign(chat, { provider: "Local", model: "mistral-nemo:12b" });
    const { picker } = await openPicker();
    expect(selectedGroup(picker)).toBe("Local");
    expect(selectedText(picker)).toBe("mistral-nemo:12b");
    expect(groups(picker)[1].models).toEqual(["mistral-nemo:12b", "llama3.2:3b", "qwen3:8b"]);
  });

  it("selects the Settings default provider and model when the conversation has none", async () => {
    twoProviders();
    backend.settings = { ...backend.settings, default_provider: "Local", default_model: "qwen3:8b" };
    backend.addConversation("Chat");
    const { picker } = await openPicker();
    expect(selectedGroup(picker)).toBe("Local");
    expect(selectedText(picker)).toBe("qwen3:8b");
  });

  it("uses the first listed model of a provider that has no default", async () => {
    backend.addProviderRecord("Local", "ollama", false);
    backend.modelLists.Local = models("qwen3:8b", "llama3.2:3b");
    backend.addConversation("Chat");
    const { picker } = await openPicker();
    expect(selectedText(picker)).toBe("llama3.2:3b");
  });

  it("still offers a provider's default model when its models cannot be listed, with a note and no toast", async () => {
    twoProviders();
    backend.providerFailures.set("Work", {
      error_kind: "unauthorized",
      message: "The provider refused the API key: Incorrect API key provided",
    });
    backend.addConversation("Chat");
    const { picker } = await openPicker();

    expect(groups(picker)).toEqual([
      { label: "Work", models: ["gpt-4o"] },
      { label: "Local", models: ["llama3.2:3b", "qwen3:8b"] },
    ]);
    expect(selectedText(picker)).toBe("gpt-4o");
    const notes = screen.getAllByTestId("model-picker-note");
    expect(notes).toHaveLength(1);
    expect(notes[0].dataset.provider).toBe("Work");
    expect(notes[0].textContent).toContain("The provider refused the API key: Incorrect API key provided");
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });

  it("Refresh models asks again and drops the note once the provider answers", async () => {
    twoProviders();
    backend.providerFailures.set("Work", { error_kind: "network", message: "Could not connect to api.openai.com." });
    backend.addConversation("Chat");
    const { user, picker } = await openPicker();
    expect(screen.getByTestId("model-picker-note").textContent).toContain("Could not connect");

    backend.providerFailures.clear();
    await user.click(screen.getByTestId("model-picker-refresh"));
    await waitFor(() => expect(screen.queryByTestId("model-picker-note")).toBeNull());
    expect(groups(picker)[0].models).toEqual(["gpt-4o", "gpt-4o-mini", "o3"]);
    expect(backend.callsTo("list_models").filter((c) => c.args?.name === "Work")).toHaveLength(2);
  });

  it("puts the stored model back and reports the error when the change cannot be saved", async () => {
    twoProviders();
    backend.addConversation("Chat");
    backend.failures.set("set_conversation_model", { kind: "database", message: "database is locked", field: null });
    const { user, picker } = await openPicker();

    await user.selectOptions(picker, option(picker, "Local", "qwen3:8b"));
    expect((await screen.findByTestId("error-toast")).textContent).toContain("database is locked");
    await waitFor(() => expect(selectedText(picker)).toBe("gpt-4o"));
    expect(selectedGroup(picker)).toBe("Work");
  });

  it("is not there without a provider, and the composer keeps its Add a provider hint", async () => {
    backend.addConversation("Chat");
    const { user } = await renderApp();
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    await screen.findByTestId("composer-input");
    expect(screen.queryByTestId("model-picker")).toBeNull();
    expect(screen.getByTestId("composer-hint").textContent).toContain("Add a provider");
    expect(backend.callsTo("list_models")).toHaveLength(0);
  });

  it("shows a long model id in full in its option", async () => {
    const long = "accounts/fireworks/models/llama-v3p1-405b-instruct-long-context-preview-2025-01-01";
    backend.addProviderRecord("Fireworks", "openai_compatible", true, { base_url: "https://api.fireworks.ai/inference/v1" });
    backend.modelLists.Fireworks = models(long);
    backend.addConversation("Chat");
    const { picker } = await openPicker();
    expect(selectedText(picker)).toBe(long);
  });
});

describe("the images switch beside the picker", () => {
  it("says whether the chosen model is given images, and a click gives Rust the opposite word", async () => {
    twoProviders();
    backend.addConversation("Chat");
    backend.modelTakesImages = false;
    const { user } = await openPicker();
    const button = await screen.findByTestId("model-images");
    await waitFor(() => expect(button.getAttribute("aria-pressed")).toBe("false"));
    expect(button.title).toBe("This model is not given images — click if it takes them");
    expect(backend.callsTo("model_images").at(-1)?.args).toEqual({ provider: "Work", model: "gpt-4o" });

    await user.click(button);
    await waitFor(() => expect(button.getAttribute("aria-pressed")).toBe("true"));
    expect(button.title).toBe("This model is given images — click if it does not take them");
    expect(backend.callsTo("set_model_images").map((c) => c.args)).toEqual([{ provider: "Work", model: "gpt-4o", takes: true }]);

    await user.click(button);
    await waitFor(() => expect(button.getAttribute("aria-pressed")).toBe("false"));
    expect(backend.callsTo("set_model_images").map((c) => c.args?.takes)).toEqual([true, false]);
    expect(backend.imageWords.get("Work/gpt-4o")).toBe(false);
  });

  it("is read again for the model chosen next", async () => {
    twoProviders();
    backend.addConversation("Chat");
    backend.modelTakesImages = false;
    backend.imageWords.set("Local/qwen3:8b", true);
    const { user, picker } = await openPicker();
    const button = await screen.findByTestId("model-images");
    await waitFor(() => expect(button.getAttribute("aria-pressed")).toBe("false"));

    await user.selectOptions(picker, option(picker, "Local", "qwen3:8b"));
    await waitFor(() => expect(screen.getByTestId("model-images").getAttribute("aria-pressed")).toBe("true"));
    expect(backend.callsTo("model_images").at(-1)?.args).toEqual({ provider: "Local", model: "qwen3:8b" });
    expect(backend.callsTo("set_model_images")).toHaveLength(0);
  });

  it("is not there while no model is chosen, nor when Rust cannot say (and that is no toast)", async () => {
    backend.addProviderRecord("Empty", "openai", true);
    backend.addConversation("Chat");
    const { user } = await openPicker();
    expect(screen.queryByTestId("model-images")).toBeNull();
    expect(backend.callsTo("model_images")).toHaveLength(0);

    await user.click(screen.getByTestId("nav-providers"));
    backend.modelLists.Empty = models("gpt-4o");
    backend.failures.set("model_images", { kind: "not_found", message: "No provider named Empty.", field: null });
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    await user.click(await screen.findByTestId("model-picker-refresh"));
    await waitFor(() => expect(backend.callsTo("model_images")).toHaveLength(1));
    expect(screen.queryByTestId("model-images")).toBeNull();
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });
});
