// The Usage page against the real core: the period asked for, the total, the chart of each
// day's cost by model, the table per provider and model, and the empty and tokens-only cases.
// What was asked comes from real runs (a model server whose turns say their tokens, priced by
// Rust), so Rust dates every request now: the page's clock is set 20 days later, and the
// periods, Rust's filter of them and the day it dated the requests are what the page shows.
// A chart of several days has its requests dated after they were made (ipc_serve's dateUsage).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

const DAY = 86_400_000;

/** The page's clock: 20 days after the requests were made. */
let NOW: number;

afterEach(() => {
  vi.useRealTimers();
});

/** A day written `YYYY-MM-DD`, `days` after `day`. */
function dayAfter(day: string, days: number): string {
  return new Date(Date.parse(day) + days * DAY).toISOString().slice(0, 10);
}

async function openUsage() {
  const view = await renderApp();
  await view.user.click(screen.getByTestId("nav-usage"));
  expect(screen.getByTestId("nav-usage").getAttribute("aria-current")).toBe("page");
  // The page is a chunk of its own, loaded the first time it opens.
  await screen.findByTestId("usage-period", undefined, { timeout: 10000 });
  return view;
}

function segmentTitles(): string[] {
  return [...screen.getByTestId("usage-chart").querySelectorAll('[data-testid="usage-segment"] title')].map((t) => t.textContent ?? "");
}

describe("the Usage page", () => {
  let backend: RealBackend;

  beforeEach(async () => {
    backend = await installRealBackend();
    // Only the page's clock is set: timers run as usual, so the page and user-event are not held
    // up; Rust dates the requests by its own clock.
    const now = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    NOW = now + 20 * DAY;
    vi.setSystemTime(NOW);
  });

  function sinces(): number[] {
    return backend.callsTo("usage_report").map((c) => c.args?.since as number);
  }

  /** A model server for `provider` whose answers say these tokens (in, out), one by one. */
  async function provider(name: string, ...tokens: [number, number][]) {
    await backend.addProvider(name, { turns: tokens.map(([input, output]) => ({ answer: ["Done."], usage: { input, output } })) });
  }

  /** A conversation that asks `model` of `provider` `times` questions, each run to its end. */
  async function ask(provider: string, model: string, times = 1) {
    const made = await backend.seed(() => ipc.createConversation(`${provider} ${model}`));
    await backend.seed(() => ipc.setConversationModel(made.id, provider, model));
    for (let i = 0; i < times; i++) await backend.run(made.id, `Question ${i + 1}`);
  }

  /** The day (UTC) Rust dated every request on: there is one. */
  async function requestDay(): Promise<string> {
    const report = await backend.seed(() => ipc.usageReport(0));
    const days = [...new Set(report.days.map((d) => d.day))];
    expect(days).toHaveLength(1);
    return days[0];
  }

  /** Use of one day: two requests of Work's gpt-4o ($0.009), one of gpt-4o-mini (priced
   *  cheaply: 12,345,670 pico-dollars), and one of a local model without a price, then `more`
   *  requests of gpt-4o with these tokens (in, out); their day. */
  async function seedUsage(...more: [number, number][]): Promise<string> {
    await provider("Work", [1200, 300], [800, 100], [100, 10], ...more);
    await provider("Local", [500, 50]);
    await backend.seed(() => ipc.setModelPrice("Work", "gpt-4o", "2.50", "10", null));
    await backend.seed(() => ipc.setModelPrice("Work", "gpt-4o-mini", "0.123456", "0.000007", null));
    await ask("Work", "gpt-4o", 2);
    await ask("Work", "gpt-4o-mini");
    await ask("Local", "llama3");
    if (more.length > 0) await ask("Work", "gpt-4o", more.length);
    return requestDay();
  }

  it("asks for the last 30 days first, then for the period chosen, and shows what Rust found in it", async () => {
    const day = await seedUsage();
    const { user, app } = await openUsage();
    expect(app.page.name).toBe("usage");
    const period = screen.getByTestId("usage-period") as HTMLSelectElement;
    expect(period.value).toBe("30");
    await waitFor(() => expect(sinces()).toEqual([NOW - 30 * DAY]));
    await waitFor(() => expect(screen.getAllByTestId("usage-bar").map((b) => b.dataset.day)).toEqual([day]));

    // The requests of 20 days ago are not within the last 7 days.
    await user.selectOptions(period, "7");
    await waitFor(() => expect(sinces().at(-1)).toBe(NOW - 7 * DAY));
    expect((await screen.findByTestId("usage-empty")).textContent).toContain("in the last 7 days");
    expect(screen.queryByTestId("usage-chart")).toBeNull();

    await user.selectOptions(period, "90");
    await waitFor(() => expect(sinces().at(-1)).toBe(NOW - 90 * DAY));
    await waitFor(() => expect(screen.getAllByTestId("usage-bar").map((b) => b.dataset.day)).toEqual([day]));

    // Since a date: from the start of that (UTC) day.
    await user.selectOptions(period, "since");
    const since = screen.getByTestId("usage-since") as HTMLInputElement;
    const monthAgo = new Date(NOW - 30 * DAY).toISOString().slice(0, 10);
    expect(since.value).toBe(monthAgo);
    await waitFor(() => expect(sinces().at(-1)).toBe(Date.parse(monthAgo)));
    // The day after the requests' day: none.
    await fireEvent.input(since, { target: { value: dayAfter(day, 1) } });
    await waitFor(() => expect(sinces().at(-1)).toBe(Date.parse(dayAfter(day, 1))));
    expect((await screen.findByTestId("usage-empty")).textContent).toContain(`since ${dayAfter(day, 1)}`);
    // Their day itself: from its start, so all of them.
    await fireEvent.input(since, { target: { value: day } });
    await waitFor(() => expect(sinces().at(-1)).toBe(Date.parse(day)));
    await waitFor(() => expect(screen.getAllByTestId("usage-bar").map((b) => b.dataset.day)).toEqual([day]));
    expect(screen.getByTestId("usage-total").textContent).toContain(`since ${day}`);
    // The first test loads the page's chunk; the runs before it take their time too.
  }, 20_000);

  it("shows the total with the requests that had no price said plainly", async () => {
    await seedUsage();
    await openUsage();
    const total = await screen.findByTestId("usage-total");
    expect(within(total).getByTestId("usage-total-cost").textContent).toBe("$0.009012");
    expect(total.textContent).toContain("in the last 30 days");
    expect(total.textContent).toContain("4 requests · 2,600 tokens in · 460");
    expect(within(total).getByTestId("usage-unpriced").textContent).toContain("1 request had no price");
  }, 20_000);

  it("draws the day's bar with a segment per model, with its day, model and amount, and a legend", async () => {
    const day = await seedUsage();
    await openUsage();
    const chart = await screen.findByTestId("usage-chart");
    expect(chart.getAttribute("role")).toBe("img");
    expect(chart.dataset.metric).toBe("cost");
    const label = chart.getAttribute("aria-label") ?? "";
    expect(label).toContain("Cost per day, 1 day with use");
    expect(label).toContain("$0.009012 in all");

    const bars = within(chart).getAllByTestId("usage-bar");
    expect(bars.map((b) => b.dataset.day)).toEqual([day]);
    const segments = within(bars[0]).getAllByTestId("usage-segment");
    expect(segments).toHaveLength(3);
    // The most costly first.
    expect(segmentTitles()).toEqual([
      `${day} · Work · gpt-4o: $0.009, 2 requests`,
      `${day} · Work · gpt-4o-mini: $0.00001235, 1 request`,
      `${day} · Local · llama3: no price (550 tokens), 1 request`,
    ]);
    // Heights in proportion to cost: the model that cost most is the tallest; no price, no height.
    const [big, small, unpriced] = segments.map((s) => Number(s.getAttribute("height")));
    expect(big).toBeGreaterThan(small);
    expect(big / small).toBeCloseTo(9_000_000_000 / 12_345_670, 0);
    expect(unpriced).toBe(0);
    // Axes: dollar amounts up the side, the day along the bottom.
    const axis = [...chart.querySelectorAll("text")].map((t) => t.textContent);
    expect(axis).toContain("$0");
    expect(axis).toContain("$0.01");
    expect(axis.some((t) => t?.includes(String(Number(day.slice(8)))))).toBe(true);

    const legend = screen.getByTestId("usage-legend");
    expect(within(legend).getAllByRole("listitem").map((li) => li.textContent?.trim())).toEqual([
      "Work · gpt-4o",
      "Work · gpt-4o-mini",
      "Local · llama3",
    ]);
  }, 20_000);

  it("adds each provider's model up in a table, with no price where it had none", async () => {
    await seedUsage();
    await openUsage();
    await screen.findByTestId("usage-chart");
    const rows = screen.getAllByTestId("usage-row").map((row) => [...row.querySelectorAll("td")].map((td) => td.textContent?.replace(/\s+/g, " ").trim()));
    expect(rows).toEqual([
      ["Work", "gpt-4o", "2", "2,000", "400", "$0.009"],
      ["Work", "gpt-4o-mini", "1", "100", "10", "$0.00001235"],
      ["Local", "llama3", "1", "500", "50", "No price"],
    ]);
  }, 20_000);

  it("says so when nothing was asked in the period", async () => {
    await provider("Work", [10, 10]);
    await backend.seed(() => ipc.setModelPrice("Work", "gpt-4o", "1", "1", null));
    await ask("Work", "gpt-4o");
    // The request was 40 days ago by the page's clock.
    vi.setSystemTime(NOW + 20 * DAY);
    await openUsage();
    expect((await screen.findByTestId("usage-empty")).textContent).toContain("No requests in the last 30 days");
    expect(screen.queryByTestId("usage-chart")).toBeNull();
    expect(screen.queryByTestId("usage-row")).toBeNull();
  });

  it("charts tokens, and says so, when nothing had a price; names stay text", async () => {
    const hostile = '<img src=x onerror="alert(1)">';
    await provider("Local", [900, 100], [400, 100]);
    await ask("Local", hostile);
    await ask("Local", "llama3");
    const day = await requestDay();
    await openUsage();
    const chart = await screen.findByTestId("usage-chart");
    expect(chart.dataset.metric).toBe("tokens");
    expect(screen.getByTestId("usage-tokens-only").textContent).toContain("shows each day's tokens");
    expect(chart.getAttribute("aria-label")).toContain("Tokens per day");
    expect(segmentTitles()).toEqual([`${day} · Local · ${hostile}: 1,000 tokens, 1 request`, `${day} · Local · llama3: 500 tokens, 1 request`]);
    const axis = [...chart.querySelectorAll("text")].map((t) => t.textContent);
    expect(axis).toContain("1,000");
    expect(screen.getByTestId("usage-total-cost").textContent).toBe("No cost known");
    expect(screen.getByTestId("usage-unpriced").textContent).toContain("None of these requests' models had a price");
    expect(screen.getAllByTestId("usage-row").map((r) => within(r).getByTestId("usage-row-cost").textContent?.trim())).toEqual(["No price", "No price"]);
    expect(document.querySelector("main img")).toBeNull();
    expect(screen.getByTestId("usage-legend").textContent).toContain(hostile);
  });

  it("draws a bar per day with use, oldest first, each as tall as its day cost; an older day joins a longer period", async () => {
    vi.setSystemTime(Date.parse("2026-03-15T12:00:00Z"));
    // The day's use, and one more request of gpt-4o (10 tokens each way), all dated as if made
    // on other days.
    await seedUsage([10, 10]);
    await backend.dateUsage(
      ["2026-03-14T10:00:00Z", "2026-03-14T11:00:00Z", "2026-03-10T09:00:00Z", "2026-03-14T12:00:00Z", "2026-01-20T09:00:00Z"].map((at) => Date.parse(at)),
    );
    const { user } = await openUsage();
    const chart = await screen.findByTestId("usage-chart");
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
    expect(height(bars[1]) / height(bars[0])).toBeCloseTo(9_000_000_000 / 12_345_670, 0);

    // The request of 20 January is within 90 days, not 30 (nor 7).
    const period = screen.getByTestId("usage-period") as HTMLSelectElement;
    await user.selectOptions(period, "7");
    await waitFor(() => expect(screen.getAllByTestId("usage-bar").map((b) => b.dataset.day)).toEqual(["2026-03-10", "2026-03-14"]));
    await user.selectOptions(period, "90");
    await waitFor(() => expect(screen.getAllByTestId("usage-bar").map((b) => b.dataset.day)).toEqual(["2026-01-20", "2026-03-10", "2026-03-14"]));
  }, 20_000);
});
