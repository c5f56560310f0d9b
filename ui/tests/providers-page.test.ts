// The Providers page against an in-memory backend.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn() }));

import { screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

async function openProviders() {
  const { app, user } = await renderApp();
  await user.click(screen.getByTestId("nav-providers"));
  const form = screen.getByTestId("provider-form") as HTMLFormElement;
  const field = (name: string) => form.querySelector(`[name="${name}"]`) as HTMLInputElement | HTMLSelectElement | null;
  return { app, user, form, field };
}

function providerItem(name: string): HTMLElement {
  const item = screen.getAllByTestId("provider-item").find((el) => el.dataset.name === name);
  if (!item) throw new Error(`no provider item ${name}`);
  return item;
}

describe("the add-provider form", () => {
  it("refuses an empty name with a message beside the field, and sends nothing", async () => {
    const { user } = await openProviders();
    await user.click(screen.getByTestId("provider-submit"));
    const error = screen.getByTestId("error-name");
    expect(error.textContent).toMatch(/name/i);
    expect(error.closest(".field")?.querySelector('[name="name"]')).toBeTruthy();
    expect(backend.callsTo("add_provider")).toHaveLength(0);
  });

  it("refuses a base URL that is not http(s) with a message beside the field", async () => {
    const { user, field } = await openProviders();
    await user.type(field("name")!, "Work");
    await user.type(field("base_url")!, "ftp://models.example");
    await user.click(screen.getByTestId("provider-submit"));
    expect(screen.getByTestId("error-base_url").textContent).toContain("http://");
    expect(screen.queryByTestId("error-name")).toBeNull();
    expect(backend.callsTo("add_provider")).toHaveLength(0);
  });

  it("uses the chosen kind's default base URL as the placeholder and hides the key for kinds that need none", async () => {
    const { user, field } = await openProviders();
    expect(field("kind")!.value).toBe("openai");
    expect(field("base_url")!.getAttribute("placeholder")).toBe("https://api.openai.com/v1");
    expect(field("api_key")!.getAttribute("type")).toBe("password");
    expect(field("api_key")!.getAttribute("autocomplete")).toBe("off");

    await user.selectOptions(field("kind")!, "ollama");
    expect(field("base_url")!.getAttribute("placeholder")).toBe("http://localhost:11434");
    expect(field("api_key")).toBeNull();
  });

  it("adds a provider, clears the form including the key, and lists it with its key state", async () => {
    const { user, field } = await openProviders();
    await user.type(field("name")!, "Work");
    await user.type(field("default_model")!, "gpt-4o");
    await user.type(field("api_key")!, "sk-secret");
    await user.click(screen.getByTestId("provider-submit"));

    await waitFor(() => expect(screen.getAllByTestId("provider-item")).toHaveLength(1));
    expect(backend.callsTo("add_provider")[0].args).toEqual({
      provider: { name: "Work", kind: "openai", base_url: null, default_model: "gpt-4o", api_key: "sk-secret" },
    });
    expect(field("name")!.value).toBe("");
    expect(field("default_model")!.value).toBe("");
    expect(field("api_key")!.value).toBe("");
    const item = providerItem("Work");
    expect(within(item).getByTestId("provider-key-state").textContent).toBe("Key stored in the OS keychain");
    expect(item.textContent).toContain("OpenAI");
    expect(item.textContent).toContain("https://api.openai.com/v1");
    expect(item.textContent).toContain("gpt-4o");
    expect(document.body.textContent).not.toContain("sk-secret");
  });

  it("shows a server error with a field beside that field", async () => {
    backend.addProviderRecord("Work");
    const { user, field } = await openProviders();
    await user.type(field("name")!, "Work");
    await user.click(screen.getByTestId("provider-submit"));
    expect((await screen.findByTestId("error-name")).textContent).toContain("already exists");
    expect(screen.queryByTestId("provider-form-error")).toBeNull();
  });

  it("shows a server invalid_input on base_url beside the base URL", async () => {
    backend.failures.set("add_provider", { kind: "invalid_input", message: "Unreachable host.", field: "base_url" });
    const { user, field } = await openProviders();
    await user.type(field("name")!, "Work");
    await user.click(screen.getByTestId("provider-submit"));
    expect((await screen.findByTestId("error-base_url")).textContent).toBe("Unreachable host.");
  });

  it("shows a keychain failure in the form's error line", async () => {
    backend.failures.set("add_provider", { kind: "keychain", message: "The keychain is locked." });
    const { user, field } = await openProviders();
    await user.type(field("name")!, "Work");
    await user.type(field("api_key")!, "sk");
    await user.click(screen.getByTestId("provider-submit"));
    expect((await screen.findByTestId("provider-form-error")).textContent).toBe("The keychain is locked.");
    expect(screen.queryAllByTestId("provider-item")).toHaveLength(0);
  });
});

describe("configured providers", () => {
  it("replaces a key through a password input and never shows it back", async () => {
    backend.addProviderRecord("Work", "openai", false);
    const { user } = await openProviders();
    const item = providerItem("Work");
    expect(within(item).getByTestId("provider-key-state").textContent).toBe("No key");
    await user.click(within(item).getByTestId("provider-replace-key"));
    const input = within(item).getByLabelText(/New API key/) as HTMLInputElement;
    expect(input.type).toBe("password");
    await user.type(input, "sk-new{Enter}");
    await waitFor(() =>
      expect(within(providerItem("Work")).getByTestId("provider-key-state").textContent).toBe(
        "Key stored in the OS keychain",
      ),
    );
    expect(backend.callsTo("set_provider_key")[0].args).toEqual({ name: "Work", apiKey: "sk-new" });
    expect(document.body.textContent).not.toContain("sk-new");
  });

  it("deletes a key", async () => {
    backend.addProviderRecord("Work", "openai", true);
    const { user } = await openProviders();
    await user.click(within(providerItem("Work")).getByTestId("provider-delete-key"));
    await waitFor(() =>
      expect(within(providerItem("Work")).getByTestId("provider-key-state").textContent).toBe("No key"),
    );
    expect(backend.callsTo("delete_provider_key")[0].args).toEqual({ name: "Work" });
  });

  it("removes a provider only after the confirm dialog", async () => {
    backend.addProviderRecord("Work");
    backend.addProviderRecord("Home");
    const { user } = await openProviders();
    await user.click(within(providerItem("Work")).getByTestId("provider-remove"));
    expect(screen.getByTestId("confirm-dialog").textContent).toContain("Work");
    expect(backend.callsTo("remove_provider")).toHaveLength(0);
    await user.click(screen.getByTestId("confirm-ok"));
    await waitFor(() => expect(screen.getAllByTestId("provider-item").map((i) => i.dataset.name)).toEqual(["Home"]));
    expect(backend.callsTo("remove_provider")[0].args).toEqual({ name: "Work" });
  });

  it("shows a banner when no OS keychain is reachable", async () => {
    backend.keychain = { available: false, message: "no Secret Service on the session bus." };
    await openProviders();
    const banner = screen.getByTestId("keychain-banner");
    expect(banner.textContent).toContain("No OS keychain is reachable: no Secret Service on the session bus.");
    expect(banner.textContent).toContain("Keys cannot be saved, and nothing is saved anywhere else.");
    expect(banner.textContent).not.toContain("bus..");
  });

  it("shows no banner when the keychain is there", async () => {
    await openProviders();
    expect(screen.queryByTestId("keychain-banner")).toBeNull();
  });
});
