// The composer's model picker against the real core, each provider at a model server of its
// own: the lists as Rust sorts them, the conversation's stored choice, the Settings default,
// a list that fails, a model a list lacks typed after "Other model…", and the images switch as
// Rust's rules answer it.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { Conversation } from "../src/lib/types";
import { installRealBackend, type ModelServer, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** Opens the only conversation and returns its picker once every provider's list has settled. */
async function openPicker() {
  const view = await renderApp();
  await view.user.click(screen.getAllByTestId("conversation-item")[0]);
  const picker = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
  // (A group that shows a stored or default model shows no "Loading models…" while it loads.)
  const { providers } = view.stores;
  const settled = () => providers.list.filter((p) => (providers.modelLists[p.name]?.state ?? "loading") !== "loading");
  await waitFor(() => expect(settled()).toHaveLength(providers.list.length));
  await waitFor(() => expect(picker.textContent).not.toContain("Loading models…"));
  await waitFor(() => expect(picker.disabled).toBe(false));
  return { ...view, picker };
}

/** Each group's models (its "Other model…" left out: see "a model the provider does not list"). */
function groups(picker: HTMLSelectElement) {
  return [...picker.querySelectorAll("optgroup")].map((group) => ({
    label: group.label,
    models: [...group.querySelectorAll("option:not([data-testid='model-picker-other'])")].map((option) => option.textContent),
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

/** A provider (OpenAI's API with a key, unless `options` say) at a model server of its own as
 *  `script` says; the server's address. */
async function provider(
  name: string,
  script: ModelServer,
  { kind = "openai", default_model = null, key = "sk-test" }: { kind?: string; default_model?: string | null; key?: string | null } = {},
) {
  const base_url = await backend.modelServer(script);
  await backend.seed(() => ipc.addProvider({ name, kind, base_url, default_model, api_key: key }));
  return base_url;
}

const ids = (...names: string[]) => names.map((id) => ({ id }));

/** Cloud (OpenAI, default gpt-4o) and Local (an OpenAI-compatible server without a key), listed
 *  in that order: Rust lists providers by name. */
async function twoProviders(): Promise<void> {
  await provider("Cloud", { models: ids("o3", "gpt-4o", "gpt-4o-mini") }, { default_model: "gpt-4o" });
  await provider("Local", { models: ids("qwen3:8b", "llama3.2:3b") }, { kind: "openai_compatible", key: null });
}

async function addConversation(title: string): Promise<Conversation> {
  return backend.seed(() => ipc.createConversation(title));
}

describe("the model picker", () => {
  it("lists each provider's models under the provider's name and selects the first provider's default", async () => {
    await twoProviders();
    await addConversation("Chat");
    const { picker } = await openPicker();

    expect(groups(picker)).toEqual([
      { label: "Cloud", models: ["gpt-4o", "gpt-4o-mini", "o3"] },
      { label: "Local", models: ["llama3.2:3b", "qwen3:8b"] },
    ]);
    expect(selectedGroup(picker)).toBe("Cloud");
    expect(selectedText(picker)).toBe("gpt-4o");
    expect(picker.title).toBe("Cloud: gpt-4o");
    expect(screen.queryByTestId("model-picker-note")).toBeNull();
  });

  it("stores a change with set_conversation_model and still shows it when the conversation is opened again", async () => {
    await twoProviders();
    const chat = await addConversation("Chat");
    const { user, picker } = await openPicker();

    await user.selectOptions(picker, option(picker, "Local", "qwen3:8b"));
    await waitFor(() => expect(backend.callsTo("set_conversation_model")).toHaveLength(1));
    expect(backend.callsTo("set_conversation_model")[0].args).toEqual({ id: chat.id, provider: "Local", model: "qwen3:8b" });
    // The picker is busy until Rust answered.
    await waitFor(() => expect(picker.disabled).toBe(false));
    expect((await backend.seed(() => ipc.getConversation(chat.id))).conversation).toMatchObject({ provider: "Local", model: "qwen3:8b" });
    await waitFor(() => expect(selectedText(picker)).toBe("qwen3:8b"));

    await user.click(screen.getByTestId("nav-providers"));
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    const again = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
    await waitFor(() => expect(selectedText(again)).toBe("qwen3:8b"));
    expect(selectedGroup(again)).toBe("Local");
    // The lists were asked for once per provider in this session, not once per opening.
    expect(backend.callsTo("list_models").map((c) => c.args)).toEqual([{ name: "Cloud" }, { name: "Local" }]);
  });

  it("selects the model stored for the conversation even when its provider does not list it", async () => {
    await twoProviders();
    const chat = await addConversation("Chat");
    await backend.seed(() => ipc.setConversationModel(chat.id, "Local", "mistral-nemo:12b"));
    const { picker } = await openPicker();
    expect(selectedGroup(picker)).toBe("Local");
    expect(selectedText(picker)).toBe("mistral-nemo:12b");
    expect(groups(picker)[1].models).toEqual(["mistral-nemo:12b", "llama3.2:3b", "qwen3:8b"]);
  });

  it("selects the Settings default provider and model when the conversation has none", async () => {
    await twoProviders();
    const settings = await backend.seed(() => ipc.getSettings());
    await backend.seed(() => ipc.updateSettings({ ...settings, default_provider: "Local", default_model: "qwen3:8b" }));
    await addConversation("Chat");
    const { picker } = await openPicker();
    expect(selectedGroup(picker)).toBe("Local");
    expect(selectedText(picker)).toBe("qwen3:8b");
  });

  it("uses the first listed model of a provider that has no default", async () => {
    await provider("Local", { models: ids("qwen3:8b", "llama3.2:3b") }, { kind: "openai_compatible", key: null });
    await addConversation("Chat");
    const { picker } = await openPicker();
    expect(selectedText(picker)).toBe("llama3.2:3b");
  });

  it("still offers a provider's default model when its models cannot be listed, with a note and no toast", async () => {
    await provider("Cloud", { status: 401, message: "Incorrect API key provided" }, { default_model: "gpt-4o" });
    await provider("Local", { models: ids("qwen3:8b", "llama3.2:3b") }, { kind: "openai_compatible", key: null });
    await addConversation("Chat");
    const { picker } = await openPicker();

    expect(groups(picker)).toEqual([
      { label: "Cloud", models: ["gpt-4o"] },
      { label: "Local", models: ["llama3.2:3b", "qwen3:8b"] },
    ]);
    expect(selectedText(picker)).toBe("gpt-4o");
    const notes = screen.getAllByTestId("model-picker-note");
    expect(notes).toHaveLength(1);
    expect(notes[0].dataset.provider).toBe("Cloud");
    expect(notes[0].textContent).toContain("The provider refused the API key: Incorrect API key provided");
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });

  it("Refresh models asks again and drops the note once the provider answers", async () => {
    // Cloud's address is wrong at first (its server answers 404); then it is corrected elsewhere
    // (the command line) to a server that lists its models.
    await provider("Cloud", { status: 404, message: "no such route" }, { kind: "openai_compatible", default_model: "gpt-4o" });
    await provider("Local", { models: ids("qwen3:8b", "llama3.2:3b") }, { kind: "openai_compatible", key: null });
    await addConversation("Chat");
    const { user, picker } = await openPicker();
    expect(screen.getByTestId("model-picker-note").textContent).toContain("The provider answered HTTP 404: no such route");

    const answering = await backend.modelServer({ models: ids("o3", "gpt-4o", "gpt-4o-mini") });
    await backend.seed(() => ipc.updateProvider("Cloud", answering));
    await user.click(screen.getByTestId("model-picker-refresh"));
    await waitFor(() => expect(groups(picker)[0].models).toEqual(["gpt-4o", "gpt-4o-mini", "o3"]));
    expect(screen.queryByTestId("model-picker-note")).toBeNull();
    expect(backend.callsTo("list_models").filter((c) => c.args?.name === "Cloud")).toHaveLength(2);
  });

  it("puts the stored model back and reports the error when the change cannot be saved", async () => {
    await twoProviders();
    await addConversation("Chat");
    // A database that fails is not one ipc_serve's app has: the failure is scripted.
    backend.failNext("set_conversation_model", { kind: "database", message: "database is locked", field: null });
    const { user, picker } = await openPicker();

    await user.selectOptions(picker, option(picker, "Local", "qwen3:8b"));
    expect((await screen.findByTestId("error-toast")).textContent).toContain("database is locked");
    await waitFor(() => expect(selectedText(picker)).toBe("gpt-4o"));
    expect(selectedGroup(picker)).toBe("Cloud");
  });

  it("is not there without a provider, and the composer keeps its Add a provider hint", async () => {
    await addConversation("Chat");
    const { user } = await renderApp();
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    await screen.findByTestId("composer-input");
    expect(screen.queryByTestId("model-picker")).toBeNull();
    expect(screen.getByTestId("composer-hint").textContent).toContain("Add a provider");
    expect(backend.callsTo("list_models")).toHaveLength(0);
  });

  it("shows a long model id in full in its option", async () => {
    const long = "accounts/fireworks/models/llama-v3p1-405b-instruct-long-context-preview-2025-01-01";
    await provider("Fireworks", { models: ids(long) }, { kind: "openai_compatible" });
    await addConversation("Chat");
    const { picker } = await openPicker();
    expect(selectedText(picker)).toBe(long);
  });
});

describe("a model the provider does not list", () => {
  /** The "Other model…" option of `provider`'s group. */
  function other(picker: HTMLSelectElement, provider: string): HTMLOptionElement {
    const group = [...picker.querySelectorAll("optgroup")].find((g) => g.label === provider);
    const found = group ? within(group).getByRole("option", { name: "Other model…" }) : null;
    if (!found) throw new Error(`no Other model… for ${provider}`);
    return found as HTMLOptionElement;
  }

  it("ends each provider's group with Other model…, whose box takes a name by keyboard: Enter stores it for that provider", async () => {
    await twoProviders();
    const chat = await addConversation("Chat");
    const { user, picker } = await openPicker();
    for (const group of picker.querySelectorAll("optgroup")) {
      expect(group.lastElementChild?.textContent).toBe("Other model…");
    }

    await user.selectOptions(picker, other(picker, "Local"));
    // Nothing is picked yet: the box stands in the picker's place, focused, named for its provider.
    const box = await screen.findByRole("textbox", { name: "Model name for Local" });
    await waitFor(() => expect(document.activeElement).toBe(box));
    expect(screen.queryByTestId("model-picker")).toBeNull();
    expect(screen.getByRole("group", { name: "Model not listed by Local" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Use" })).toHaveProperty("disabled", true);
    expect(backend.callsTo("set_conversation_model")).toHaveLength(0);

    // Enter uses it (and sends no message).
    await user.keyboard(" mistral-nemo:12b {Enter}");
    await waitFor(() => expect(backend.callsTo("set_conversation_model")).toHaveLength(1));
    expect(backend.callsTo("set_conversation_model")[0].args).toEqual({ id: chat.id, provider: "Local", model: "mistral-nemo:12b" });
    expect(backend.callsTo("send_message")).toHaveLength(0);
    // Back to the list, focused, showing the name typed under its provider.
    const again = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
    await waitFor(() => expect(selectedText(again)).toBe("mistral-nemo:12b"));
    expect(selectedGroup(again)).toBe("Local");
    await waitFor(() => expect(document.activeElement).toBe(again));
    expect(screen.queryByTestId("model-picker-other-name")).toBeNull();
    expect((await backend.seed(() => ipc.getConversation(chat.id))).conversation).toMatchObject({ provider: "Local", model: "mistral-nemo:12b" });
  });

  it("is passed over by the arrow keys of a closed list (shown, nothing picked), and opened by Enter", async () => {
    await twoProviders();
    await addConversation("Chat");
    const { picker } = await openPicker();
    const before = picker.value;
    // An arrow key lands on it (a closed list's arrows each fire `change`): no box, no pick.
    fireEvent.keyDown(picker, { key: "ArrowDown" });
    picker.value = other(picker, "Local").value;
    fireEvent.change(picker);
    expect(screen.queryByTestId("model-picker-other-name")).toBeNull();
    expect(screen.getByTestId("model-picker")).toBe(picker);
    expect(backend.callsTo("set_conversation_model")).toHaveLength(0);
    // Left there: the pick is shown again.
    fireEvent.blur(picker);
    expect(picker.value).toBe(before);
    // Landed on again, Enter opens its box.
    fireEvent.keyDown(picker, { key: "ArrowDown" });
    picker.value = other(picker, "Local").value;
    fireEvent.change(picker);
    fireEvent.keyDown(picker, { key: "Enter" });
    expect(await screen.findByRole("textbox", { name: "Model name for Local" })).toBeTruthy();
    expect(backend.callsTo("set_conversation_model")).toHaveLength(0);
  });

  it("Use picks the name typed; Esc and Cancel go back to the list with nothing changed", async () => {
    await twoProviders();
    const chat = await addConversation("Chat");
    const { user, picker } = await openPicker();

    // Esc: back to the list as it was (and it is no Stop of anything).
    await user.selectOptions(picker, other(picker, "Cloud"));
    await user.type(await screen.findByRole("textbox", { name: "Model name for Cloud" }), "gpt-5");
    await user.keyboard("{Escape}");
    let list = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
    await waitFor(() => expect(document.activeElement).toBe(list));
    expect(selectedText(list)).toBe("gpt-4o");

    // Cancel, by keyboard: the same. (Use, disabled while the box is empty, is passed over.)
    await user.selectOptions(list, other(list, "Cloud"));
    await screen.findByRole("textbox", { name: "Model name for Cloud" });
    await user.tab();
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Cancel" }));
    await user.keyboard("{Enter}");
    list = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
    expect(selectedText(list)).toBe("gpt-4o");
    expect(backend.callsTo("set_conversation_model")).toHaveLength(0);

    // Use.
    await user.selectOptions(list, other(list, "Cloud"));
    await user.type(await screen.findByRole("textbox", { name: "Model name for Cloud" }), "gpt-5");
    const use = screen.getByRole("button", { name: "Use" });
    expect(use.title).toBe("Use “gpt-5” with Cloud");
    await user.click(use);
    await waitFor(() => expect(backend.callsTo("set_conversation_model")).toHaveLength(1));
    expect(backend.callsTo("set_conversation_model")[0].args).toEqual({ id: chat.id, provider: "Cloud", model: "gpt-5" });
    list = (await screen.findByTestId("model-picker")) as HTMLSelectElement;
    await waitFor(() => expect(selectedText(list)).toBe("gpt-5"));
    expect(groups(list)[0].models).toEqual(["gpt-5", "gpt-4o", "gpt-4o-mini", "o3"]);
  });

  it("keeps the name typed when it cannot be stored, and says why", async () => {
    await twoProviders();
    await addConversation("Chat");
    backend.failNext("set_conversation_model", { kind: "database", message: "database is locked", field: null });
    const { user, picker } = await openPicker();
    await user.selectOptions(picker, other(picker, "Local"));
    await user.type(await screen.findByRole("textbox", { name: "Model name for Local" }), "phi4{Enter}");
    expect((await screen.findByTestId("error-toast")).textContent).toContain("database is locked");
    const box = screen.getByRole("textbox", { name: "Model name for Local" }) as HTMLInputElement;
    await waitFor(() => expect(box.disabled).toBe(false));
    expect(box.value).toBe("phi4");
  });

  it("is offered for a provider whose models cannot be listed", async () => {
    await provider("Cloud", { status: 401, message: "Incorrect API key provided" }, { kind: "openai_compatible" });
    await addConversation("Chat");
    const { picker } = await openPicker();
    expect([...picker.querySelectorAll("option")].map((o) => o.textContent)).toEqual(["Choose a model", "No models", "Other model…"]);
  });
});

describe("the images switch beside the picker", () => {
  it("says whether the chosen model is given images, and a click gives Rust the opposite word", async () => {
    await twoProviders();
    await addConversation("Chat");
    const takes = () => backend.seed(() => ipc.modelImages("Cloud", "gpt-4o"));
    const { user } = await openPicker();
    const button = await screen.findByTestId("model-images");
    // Rust knows gpt-4o's family takes images.
    await waitFor(() => expect(button.getAttribute("aria-pressed")).toBe("true"));
    expect(button.title).toBe("This model is given images — click if it does not take them");
    expect(backend.callsTo("model_images").at(-1)?.args).toEqual({ provider: "Cloud", model: "gpt-4o" });

    await user.click(button);
    await waitFor(() => expect(button.getAttribute("aria-pressed")).toBe("false"));
    expect(button.title).toBe("This model is not given images — click if it takes them");
    expect(backend.callsTo("set_model_images").map((c) => c.args)).toEqual([{ provider: "Cloud", model: "gpt-4o", takes: false }]);
    expect(await takes()).toBe(false);

    await user.click(button);
    await waitFor(() => expect(button.getAttribute("aria-pressed")).toBe("true"));
    expect(backend.callsTo("set_model_images").map((c) => c.args?.takes)).toEqual([false, true]);
    expect(await takes()).toBe(true);
  });

  it("is read again for the model chosen next", async () => {
    await twoProviders();
    await addConversation("Chat");
    // By Rust's rules gpt-4o takes images and qwen3:8b does not.
    const { user, picker } = await openPicker();
    const button = await screen.findByTestId("model-images");
    await waitFor(() => expect(button.getAttribute("aria-pressed")).toBe("true"));

    await user.selectOptions(picker, option(picker, "Local", "qwen3:8b"));
    await waitFor(() => expect(screen.getByTestId("model-images").getAttribute("aria-pressed")).toBe("false"));
    expect(backend.callsTo("model_images").at(-1)?.args).toEqual({ provider: "Local", model: "qwen3:8b" });
    expect(backend.callsTo("set_model_images")).toHaveLength(0);
  });

  it("is not there while no model is chosen, nor when Rust cannot say (and that is no toast)", async () => {
    await provider("Empty", { models: [] }, { kind: "openai_compatible", key: null });
    await addConversation("Chat");
    const { user } = await openPicker();
    expect(screen.queryByTestId("model-images")).toBeNull();
    expect(backend.callsTo("model_images")).toHaveLength(0);

    await user.click(screen.getByTestId("nav-providers"));
    // Moved (elsewhere) to a server that lists a model; Rust's answer for it is scripted to fail,
    // as no reachable rule of the core fails it here.
    const listing = await backend.modelServer({ models: ids("gpt-4o") });
    await backend.seed(() => ipc.updateProvider("Empty", listing));
    backend.failNext("model_images", { kind: "not_found", message: "Not found: provider “Empty”", field: null });
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    await user.click(await screen.findByTestId("model-picker-refresh"));
    await waitFor(() => expect(backend.callsTo("model_images")).toHaveLength(1));
    expect(screen.queryByTestId("model-images")).toBeNull();
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });
});
