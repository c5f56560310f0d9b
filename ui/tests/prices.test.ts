// Providers › Prices against the real core: every priced model listed (the person's, and those
// a provider's list gives), a price added, edited and forgotten as typed, and Rust's refusals
// shown beside the field they name.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
  await backend.addProvider("Work");
});

/** Router, whose model list prices acme/seer-1 (dollars per token, as OpenRouter writes them). */
async function addRouter(prompt: string, completion: string) {
  await backend.addProvider("Router", { models: [{ id: "acme/seer-1", pricing: { prompt, completion } }] });
}

/** The provider's list read, as the window reads it: what it prices is kept. */
async function listed(provider: string) {
  await backend.seed(() => ipc.listModels(provider));
}

/** The person's own price, typed as dollars per million tokens. */
async function setPrice(provider: string, model: string, input: string, output: string, cached: string | null = null) {
  await backend.seed(() => ipc.setModelPrice(provider, model, input, output, cached));
}

async function openPrices() {
  const view = await renderApp();
  await view.user.click(screen.getByTestId("nav-providers"));
  const prices = screen.getByTestId("prices");
  return { ...view, prices };
}

function rows(): HTMLElement[] {
  return within(screen.getByTestId("prices")).queryAllByTestId("price-row");
}

function row(model: string): HTMLElement {
  const found = rows().find((r) => r.dataset.model === model);
  if (!found) throw new Error(`no price row for ${model}`);
  return found;
}

/** What a row says: model, provider, input / output / cached, whose word. */
function said(r: HTMLElement) {
  const text = (id: string) => within(r).getByTestId(id).textContent?.trim();
  return {
    provider: r.dataset.provider,
    input: text("price-row-input"),
    output: text("price-row-output"),
    cached: text("price-row-cached"),
    source: text("price-source"),
  };
}

describe("prices", () => {
  it("lists every priced model by provider, in dollars per million tokens, with whose word it is", async () => {
    await setPrice("Work", "gpt-4o", "2.50", "10", "1.25");
    await addRouter("0.000000075", "0.000015");
    await listed("Router");
    await openPrices();
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(rows().map((r) => r.dataset.model)).toEqual(["acme/seer-1", "gpt-4o"]);
    expect(said(row("acme/seer-1"))).toEqual({ provider: "Router", input: "$0.075", output: "$15", cached: "—", source: "From the provider's list" });
    expect(said(row("gpt-4o"))).toEqual({ provider: "Work", input: "$2.5", output: "$10", cached: "$1.25", source: "Custom price" });
    // Only the person's own price can be forgotten.
    expect(within(row("acme/seer-1")).queryByTestId("price-forget")).toBeNull();
    expect(within(row("gpt-4o")).getByTestId("price-forget")).toBeTruthy();
  });

  it("says when no model has a price, and lists what a provider's model list says once it is listed", async () => {
    await addRouter("0.000000075", "0.0000003");
    const { user } = await openPrices();
    expect((await screen.findByTestId("prices-empty")).textContent).toContain("No prices yet");
    const router = screen.getAllByTestId("provider-item").find((el) => el.dataset.name === "Router")!;
    await user.click(within(router).getByTestId("provider-test"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(said(row("acme/seer-1"))).toMatchObject({ input: "$0.075", output: "$0.3", source: "From the provider's list" });
  });

  it("adds a price for a model of a configured provider, as typed, and reads the list again", async () => {
    await backend.addProvider("Router");
    const { user, prices } = await openPrices();
    await screen.findByTestId("prices-empty");
    const provider = within(prices).getByTestId("price-provider") as HTMLSelectElement;
    expect([...provider.options].map((o) => o.value)).toEqual(["Router", "Work"]);
    await user.selectOptions(provider, "Router");
    await user.type(within(prices).getByTestId("price-model"), "acme/seer-1");
    await user.type(within(prices).getByTestId("price-input"), "0.15");
    await user.type(within(prices).getByTestId("price-output"), "0.60");
    const listed = backend.callsTo("list_prices").length;
    await user.click(within(prices).getByTestId("price-save"));

    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(backend.callsTo("set_model_price")[0].args).toEqual({ provider: "Router", model: "acme/seer-1", input: "0.15", output: "0.60", cached: null });
    expect(backend.callsTo("list_prices").length).toBeGreaterThan(listed);
    expect(said(row("acme/seer-1"))).toEqual({ provider: "Router", input: "$0.15", output: "$0.6", cached: "—", source: "Custom price" });
    expect(within(prices).getByRole("status").textContent).toContain("Saved the price of “acme/seer-1”");
    expect((within(prices).getByTestId("price-model") as HTMLInputElement).value).toBe("");
  });

  it("shows Rust's refusal beside the field it names, and saves nothing", async () => {
    const { user, prices } = await openPrices();
    const form = within(prices).getByTestId("price-form");
    await user.type(within(form).getByTestId("price-model"), "gpt-4o");
    await user.type(within(form).getByTestId("price-input"), "2.50");
    await user.type(within(form).getByTestId("price-output"), "ten");
    await user.click(within(form).getByTestId("price-save"));

    const error = await within(form).findByTestId("error-output");
    expect(error.textContent).toBe("Write dollars per million tokens, such as 2.50.");
    const output = within(form).getByTestId("price-output");
    expect(error.closest(".field")?.contains(output)).toBe(true);
    expect(output.getAttribute("aria-invalid")).toBe("true");
    expect(document.activeElement).toBe(output);
    expect(within(form).queryByTestId("error-input")).toBeNull();
    expect(rows()).toHaveLength(0);

    // Input without output: Rust says which one is missing.
    await user.clear(output);
    await user.click(within(form).getByTestId("price-save"));
    expect((await within(form).findByTestId("error-output")).textContent).toBe("Give the output price too.");
    // Editing the field clears its message.
    await user.type(output, "1");
    expect(within(form).queryByTestId("error-output")).toBeNull();
  });

  it("edits a price in place, Rust's refusal beside the field, then the edited price", async () => {
    await addRouter("0.000000075", "0.000015");
    await listed("Router");
    const { user } = await openPrices();
    await waitFor(() => expect(rows()).toHaveLength(1));
    await user.click(within(row("acme/seer-1")).getByTestId("price-edit"));
    const field = (name: string) => within(row("acme/seer-1")).getByTestId(`price-edit-${name}`) as HTMLInputElement;
    expect([field("input").value, field("output").value, field("cached").value]).toEqual(["0.075", "15", ""]);

    await user.clear(field("input"));
    await user.click(within(row("acme/seer-1")).getByTestId("price-edit-save"));
    expect((await within(row("acme/seer-1")).findByTestId("error-input")).textContent).toBe("Give the input price too.");

    await user.type(field("input"), "0.1");
    await user.type(field("cached"), "0.025");
    await user.click(within(row("acme/seer-1")).getByTestId("price-edit-save"));
    await waitFor(() => expect(said(row("acme/seer-1")).source).toBe("Custom price"));
    expect(backend.callsTo("set_model_price").at(-1)?.args).toEqual({ provider: "Router", model: "acme/seer-1", input: "0.1", output: "15", cached: "0.025" });
    expect(said(row("acme/seer-1"))).toMatchObject({ input: "$0.1", output: "$15", cached: "$0.025" });
    expect(within(row("acme/seer-1")).queryByTestId("price-edit-input")).toBeNull();
  });

  it("forgets the person's price: the provider list's counts again, and a price only the person gave goes", async () => {
    await addRouter("0.000000075", "0.0000003");
    await listed("Router");
    await setPrice("Router", "acme/seer-1", "0.1", "0.4");
    await setPrice("Work", "gpt-4o", "2.50", "10");
    const { user } = await openPrices();
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(said(row("acme/seer-1"))).toMatchObject({ input: "$0.1", source: "Custom price" });

    await user.click(within(row("acme/seer-1")).getByTestId("price-forget"));
    await waitFor(() => expect(said(row("acme/seer-1")).source).toBe("From the provider's list"));
    expect(backend.callsTo("set_model_price")[0].args).toEqual({ provider: "Router", model: "acme/seer-1", input: null, output: null, cached: null });
    expect(said(row("acme/seer-1"))).toMatchObject({ input: "$0.075", output: "$0.3" });

    await user.click(within(row("gpt-4o")).getByTestId("price-forget"));
    await waitFor(() => expect(rows().map((r) => r.dataset.model)).toEqual(["acme/seer-1"]));
  });

  it("shows provider and model names as text", async () => {
    await setPrice("Work", '<img src=x onerror="alert(1)">', "1", "2");
    await openPrices();
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(rows()[0].querySelector("img")).toBeNull();
    expect(rows()[0].textContent).toContain('<img src=x onerror="alert(1)">');
  });
});
