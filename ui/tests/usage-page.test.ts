// The Usage page against an in-memory backend: the period asked for, the total, the chart of
// each day's cost by model, the table per provider and model, and the empty and tokens-only cases.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

const DAY = 86_400_000;
const NOW = Date.parse("2026-03-15T12:00:00Z");

let backend: FakeBackend;

beforeEach(() => {
  // Only the clock is fixed: timers run as usual, so the page and user-event are not held up.
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(NOW);
  backend = installFakeBackend();
});

afterEach(() => {
  vi.useRealTimers();
});

/** A month of use: two days of Work's models (one priced cheaply), a local model without a price, and one older request. */
function seedUsage(): void {
  backend.addUsage({ at: Date.parse("2026-03-14T10:00:00Z"), provider: "Work", model: "gpt-4o", input_tokens: 1200, output_tokens: 300, cost_pico: 6_000_000_000 });
  backend.addUsage({ at: Date.parse("2026-03-14T11:00:00Z"), provider: "Work", model: "gpt-4o", input_tokens: 800, output_tokens: 100, cost_pico: 3_000_000_000 });
  backend.addUsage({ at: Date.parse("2026-03-14T12:00:00Z"), provider: "Local", model: "llama3", input_tokens: 500, output_tokens: 50, cost_pico: null });
  backend.addUsage({ at: Date.parse("2026-03-10T09:00:00Z"), provider: "Work", model: "gpt-4o-mini", input_tokens: 100, output_tokens: 10, cost_pico: 12_345_678 });
  backend.addUsage({ at: Date.parse("2026-01-20T09:00:00Z"), provider: "Work", model: "gpt-4o", input_tokens: 10, output_tokens: 10, cost_pico: 10_000_000_000 });
}

async function openUsage() {
  const view = await renderApp();
  await view.user.click(screen.getByTestId("nav-usage"));
  expect(screen.getByTestId("nav-usage").getAttribute("aria-current")).toBe("page");
  // The page is a chunk of its own, loaded the first time it opens.
  await screen.findByTestId("usage-period", undefined, { timeout: 10000 });
  return view;
}

function sinces(): number[] {
  return backend.callsTo("usage_report").map((c) => c.args?.since as number);
}

function segmentTitles(): string[] {
  return [...screen.getByTestId("usage-chart").querySelectorAll('[data-testid="usage-segment"] title')].map((t) => t.textContent ?? "");
}

describe("the Usage page", () => {
  it("asks for the last 30 days first, then for the period chosen", async () => {
    seedUsage();
    const { user, app } = await openUsage();
    expect(app.page.name).toBe("usage");
    const period = screen.getByTestId("usage-period") as HTMLSelectElement;
    expect(period.value).toBe("30");
    await waitFor(() => expect(sinces()).toEqual([NOW - 30 * DAY]));

    await user.selectOptions(period, "7");
    await waitFor(() => expect(sinces().at(-1)).toBe(NOW - 7 * DAY));
    await waitFor(() => expect(screen.getAllByTestId("usage-bar")).toHaveLength(2));

    // The request of 20 January is within 90 days, not 30.
    await user.selectOptions(period, "90");
    await waitFor(() => expect(sinces().at(-1)).toBe(NOW - 90 * DAY));
    await waitFor(() => expect(screen.getAllByTestId("usage-bar").map((b) => b.dataset.day)).toEqual(["2026-01-20", "2026-03-10", "2026-03-14"]));

    // Since a date: from the start of that (UTC) day.
    await user.selectOptions(period, "since");
    const since = screen.getByTestId("usage-since") as HTMLInputElement;
    expect(since.value).toBe("2026-02-13");
    await waitFor(() => expect(sinces().at(-1)).toBe(Date.UTC(2026, 1, 13)));
    await fireEvent.input(since, { target: { value: "2026-03-12" } });
    await waitFor(() => expect(sinces().at(-1)).toBe(Date.UTC(2026, 2, 12)));
    await waitFor(() => expect(screen.getAllByTestId("usage-bar").map((b) => b.dataset.day)).toEqual(["2026-03-14"]));
    expect(screen.getByTestId("usage-total").textContent).toContain("since 2026-03-12");
  });

  it("shows the total with the requests that had no price said plainly", async () => {
    seedUsage();
    await openUsage();
    const total = await screen.findByTestId("usage-total");
    expect(within(total).getByTestId("usage-total-cost").textContent).toBe("$0.009012");
    expect(total.textContent).toContain("in the last 30 days");
    expect(total.textContent).toContain("4 requests · 2,600 tokens in · 460");
    expect(within(total).getByTestId("usage-unpriced").textContent).toContain("1 request had no price");
  });

  it("draws a bar per day with use, a segment per model of that day with its day, model and amount, and a legend", async () => {
    seedUsage();
    await openUsage();
    const chart = await screen.findByTestId("usage-chart");
    expect(chart.getAttribute("role")).toBe("img");
    expect(chart.dataset.metric).toBe("cost");
    const label = chart.getAttribute("aria-label") ?? "";
    expect(label).toContain("Cost per day, 2 days with use");
    expect(label).toContain("$0.009012 in all");
    expect(label).toContain("the most $0.009 on");

    const bars = within(chart).getAllByTestId("usage-bar");
    expect(bars.map((b) => b.dataset.day)).toEqual(["2026-03-10", "2026-03-14"]);
    expect(within(bars[0]).getAllByTestId("usage-segment")).toHaveLength(1);
    expect(within(bars[1]).getAllByTestId("usage-segment")).toHaveLength(2);
    expect(segmentTitles()).toEqual([
      "2026-03-10 · Work · gpt-4o-mini: $0.00001235, 1 request",
      "2026-03-14 · Work · gpt-4o: $0.009, 2 requests",
      "2026-03-14 · Local · llama3: no price (550 tokens), 1 request",
    ]);
    // Heights in proportion to cost: the day that cost most is the tallest.
    const height = (bar: HTMLElement) => Number(within(bar).getAllByTestId("usage-segment")[0].getAttribute("height"));
    expect(height(bars[1])).toBeGreaterThan(height(bars[0]));
    expect(height(bars[1]) / height(bars[0])).toBeCloseTo(9_000_000_000 / 12_345_678, 0);
    // Axes: dollar amounts up the side, dates along the bottom.
    const axis = [...chart.querySelectorAll("text")].map((t) => t.textContent);
    expect(axis).toContain("$0");
    expect(axis).toContain("$0.01");
    expect(axis.some((t) => t?.includes("14"))).toBe(true);

    const legend = screen.getByTestId("usage-legend");
    expect(within(legend).getAllByRole("listitem").map((li) => li.textContent?.trim())).toEqual([
      "Work · gpt-4o",
      "Work · gpt-4o-mini",
      "Local · llama3",
    ]);
  });

  it("adds each provider's model up in a table, with no price where it had none", async () => {
    seedUsage();
    await openUsage();
    await screen.findByTestId("usage-chart");
    const rows = screen.getAllByTestId("usage-row").map((row) => [...row.querySelectorAll("td")].map((td) => td.textContent?.replace(/\s+/g, " ").trim()));
    expect(rows).toEqual([
      ["Work", "gpt-4o", "2", "2,000", "400", "$0.009"],
      ["Work", "gpt-4o-mini", "1", "100", "10", "$0.00001235"],
      ["Local", "llama3", "1", "500", "50", "no price"],
    ]);
  });

  it("says so when nothing was asked in the period", async () => {
    backend.addUsage({ at: NOW - 40 * DAY, provider: "Work", model: "gpt-4o", cost_pico: 1 });
    await openUsage();
    expect((await screen.findByTestId("usage-empty")).textContent).toContain("Nothing was asked of a model in the last 30 days");
    expect(screen.queryByTestId("usage-chart")).toBeNull();
    expect(screen.queryByTestId("usage-row")).toBeNull();
  });

  it("charts tokens, and says so, when nothing had a price; names stay text", async () => {
    const hostile = '<img src=x onerror="alert(1)">';
    backend.addUsage({ at: NOW - DAY, provider: "Local", model: hostile, input_tokens: 900, output_tokens: 100 });
    backend.addUsage({ at: NOW - 2 * DAY, provider: "Local", model: "llama3", input_tokens: 400, output_tokens: 100 });
    await openUsage();
    const chart = await screen.findByTestId("usage-chart");
    expect(chart.dataset.metric).toBe("tokens");
    expect(screen.getByTestId("usage-tokens-only").textContent).toContain("shows each day's tokens");
    expect(chart.getAttribute("aria-label")).toContain("Tokens per day");
    expect(segmentTitles()).toEqual(["2026-03-13 · Local · llama3: 500 tokens, 1 request", `2026-03-14 · Local · ${hostile}: 1,000 tokens, 1 request`]);
    const axis = [...chart.querySelectorAll("text")].map((t) => t.textContent);
    expect(axis).toContain("1,000");
    expect(screen.getByTestId("usage-total-cost").textContent).toBe("No cost known");
    expect(screen.getByTestId("usage-unpriced").textContent).toContain("None of these requests' models had a price");
    expect(screen.getAllByTestId("usage-row").map((r) => within(r).getByTestId("usage-row-cost").textContent?.trim())).toEqual(["no price", "no price"]);
    expect(document.querySelector("main img")).toBeNull();
    expect(screen.getByTestId("usage-legend").textContent).toContain(hostile);
  });
});
