// Providers › Prices against an in-memory backend: every priced model listed, a price added,
// edited and forgotten, and Rust's refusals shown beside the field they name.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import { costOf, labelOf, typedPrice, type FakeBackend } from "./fake-backend";
import labels from "./golden/branch-labels.json";
import golden from "./golden/typed-prices.json";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
  backend.addProviderRecord("Work");
  backend.addProviderRecord("Router", "openrouter");
});

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
    backend.setPrice("Work", "gpt-4o", { input: 2_500_000, output: 10_000_000, cached_input: 1_250_000 });
    backend.setPrice("Router", "acme/seer-1", { input: 75_000, output: 15_000_000, cached_input: null }, "provider");
    await openPrices();
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(rows().map((r) => r.dataset.model)).toEqual(["acme/seer-1", "gpt-4o"]);
    expect(said(row("acme/seer-1"))).toEqual({ provider: "Router", input: "$0.075", output: "$15", cached: "—", source: "from the provider's list" });
    expect(said(row("gpt-4o"))).toEqual({ provider: "Work", input: "$2.5", output: "$10", cached: "$1.25", source: "yours" });
    // Only the person's own price can be forgotten.
    expect(within(row("acme/seer-1")).queryByTestId("price-forget")).toBeNull();
    expect(within(row("gpt-4o")).getByTestId("price-forget")).toBeTruthy();
  });

  it("says when no model has a price, and lists what a provider's model list says once it is listed", async () => {
    backend.modelLists.Router = [{ id: "acme/seer-1", name: null, price: { input: 75_000, output: 300_000, cached_input: null } }];
    const { user } = await openPrices();
    expect((await screen.findByTestId("prices-empty")).textContent).toContain("No model has a price yet");
    const router = screen.getAllByTestId("provider-item").find((el) => el.dataset.name === "Router")!;
    await user.click(within(router).getByTestId("provider-test"));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(said(row("acme/seer-1"))).toMatchObject({ input: "$0.075", output: "$0.3", source: "from the provider's list" });
  });

  it("adds a price for a model of a configured provider, as typed, and reads the list again", async () => {
    const { user, prices } = await openPrices();
    await screen.findByTestId("prices-empty");
    const provider = within(prices).getByTestId("price-provider") as HTMLSelectElement;
    expect([...provider.options].map((o) => o.value)).toEqual(["Work", "Router"]);
    await user.selectOptions(provider, "Router");
    await user.type(within(prices).getByTestId("price-model"), "acme/seer-1");
    await user.type(within(prices).getByTestId("price-input"), "0.15");
    await user.type(within(prices).getByTestId("price-output"), "0.60");
    const listed = backend.callsTo("list_prices").length;
    await user.click(within(prices).getByTestId("price-save"));

    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(backend.callsTo("set_model_price")[0].args).toEqual({ provider: "Router", model: "acme/seer-1", input: "0.15", output: "0.60", cached: null });
    expect(backend.callsTo("list_prices").length).toBeGreaterThan(listed);
    expect(said(row("acme/seer-1"))).toEqual({ provider: "Router", input: "$0.15", output: "$0.6", cached: "—", source: "yours" });
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
    backend.setPrice("Router", "acme/seer-1", { input: 75_000, output: 15_000_000, cached_input: null }, "provider");
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
    await waitFor(() => expect(said(row("acme/seer-1")).source).toBe("yours"));
    expect(backend.callsTo("set_model_price").at(-1)?.args).toEqual({ provider: "Router", model: "acme/seer-1", input: "0.1", output: "15", cached: "0.025" });
    expect(said(row("acme/seer-1"))).toMatchObject({ input: "$0.1", output: "$15", cached: "$0.025" });
    expect(within(row("acme/seer-1")).queryByTestId("price-edit-input")).toBeNull();
  });

  it("forgets the person's price: the provider list's counts again, and a price only the person gave goes", async () => {
    backend.setPrice("Router", "acme/seer-1", { input: 75_000, output: 300_000, cached_input: null }, "provider");
    backend.setPrice("Router", "acme/seer-1", { input: 100_000, output: 400_000, cached_input: null });
    backend.setPrice("Work", "gpt-4o", { input: 2_500_000, output: 10_000_000, cached_input: null });
    const { user } = await openPrices();
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(said(row("acme/seer-1"))).toMatchObject({ input: "$0.1", source: "yours" });

    await user.click(within(row("acme/seer-1")).getByTestId("price-forget"));
    await waitFor(() => expect(said(row("acme/seer-1")).source).toBe("from the provider's list"));
    expect(backend.callsTo("set_model_price")[0].args).toEqual({ provider: "Router", model: "acme/seer-1", input: null, output: null, cached: null });
    expect(said(row("acme/seer-1"))).toMatchObject({ input: "$0.075", output: "$0.3" });

    await user.click(within(row("gpt-4o")).getByTestId("price-forget"));
    await waitFor(() => expect(rows().map((r) => r.dataset.model)).toEqual(["acme/seer-1"]));
  });

  it("shows provider and model names as text", async () => {
    backend.setPrice("Work", '<img src=x onerror="alert(1)">', { input: 1_000_000, output: 2_000_000, cached_input: null });
    await openPrices();
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(rows()[0].querySelector("img")).toBeNull();
    expect(rows()[0].textContent).toContain('<img src=x onerror="alert(1)">');
  });
});

describe("the fake backend reads a typed price as Rust does", () => {
  // golden/typed-prices.json is written by Rust (price.rs:
  // the_typed_prices_the_fake_backend_reads_match_rust) from its own `price::typed`.
  it("has Rust's cases to check, refusals and prices both", () => {
    expect(golden.cases.filter((c) => c.error !== null).length).toBeGreaterThan(5);
    expect(golden.cases.filter((c) => c.price !== null).length).toBeGreaterThan(3);
  });

  for (const c of golden.cases) {
    it(`reads ${JSON.stringify([c.input, c.output, c.cached])} as Rust does`, () => {
      let got: unknown;
      try {
        got = { price: typedPrice(c.input, c.output, c.cached), error: null };
      } catch (refusal) {
        const { field, message } = refusal as { field: string; message: string };
        got = { price: null, error: { field, message } };
      }
      expect(got).toEqual({ price: c.price, error: c.error });
    });
  }
});

describe("the fake backend adds up a cost and labels a compared answer as Rust does", () => {
  // golden/typed-prices.json's costs are Rust's Price::cost; golden/branch-labels.json is
  // written by store/lanes.rs (the_branch_labels_the_fake_backend_makes_match_rust).
  it("costs what Rust's price costs", () => {
    expect(golden.costs.length).toBeGreaterThan(3);
    for (const c of golden.costs) {
      expect(costOf(c.price, c.input_tokens, c.output_tokens)).toBe(c.cost);
    }
  });

  it("labels a branch of a comparison as Rust does", () => {
    expect(labels.cases.length).toBeGreaterThan(3);
    for (const c of labels.cases) {
      expect(labelOf({ provider: c.provider, model: c.model })).toBe(c.label);
    }
  });
});
