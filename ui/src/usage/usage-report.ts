//! The Usage page's chart and table, worked out from Rust's report (issue 18). The chart: one
//! bar per day that had use, stacked by provider and model, its height in proportion to the
//! day's cost (or, when nothing in the period cost anything, to its tokens), with the axes'
//! labels and the words a screen reader is given. The table: each provider's model, its days
//! added up. Amounts stay Rust's integers (sums of integers, exact); only the drawing is in
//! fractions. Pure: no DOM, no IPC. Provider and model names are the servers' text, returned as
//! text.

import { count, usd } from "../shared/money";
import type { UsageDay, UsageReport } from "../lib/types";

/** What the bars measure: what the days cost, or (nothing had a cost) their tokens. */
export type ChartMetric = "cost" | "tokens";

/** One provider's model, with its colour (an index into the page's palette). */
export interface ChartSeries {
  key: string;
  provider: string;
  model: string;
  color: number;
}

export interface ChartSegment {
  series: ChartSeries;
  /** pico-dollars or tokens */
  value: number;
  y: number;
  height: number;
  /** "2026-03-03 · Work · gpt-4o: $0.012, 3 requests" */
  title: string;
}

export interface ChartBar {
  /** `YYYY-MM-DD` (UTC) */
  day: string;
  x: number;
  width: number;
  total: number;
  /** the date under the bar; "" where labelling every bar would crowd the axis */
  label: string;
  segments: ChartSegment[];
}

export interface ChartTick {
  y: number;
  label: string;
}

export interface UsageChart {
  metric: ChartMetric;
  bars: ChartBar[];
  /** biggest first: the legend's order, and each bar's from the bottom */
  series: ChartSeries[];
  ticks: ChartTick[];
  /** what a screen reader is told the chart shows */
  summary: string;
}

/** The drawing's size in SVG units, and where its plot is inside it. */
export const CHART = { width: 640, height: 240, left: 76, right: 8, top: 10, bottom: 28 } as const;

/** Colours the page has for series; more series than this reuse them. */
export const PALETTE_SIZE = 8;

/** At most this many dates under the bars. */
const MAX_LABELS = 8;

/** The key of a provider's model (names may hold any character but NUL). */
function keyOf(day: Pick<UsageDay, "provider" | "model">): string {
  return `${day.provider}\u0000${day.model}`;
}

/** The smallest 1, 2 or 5 × 10ⁿ at least `top`: the axis's top. */
function niceTop(top: number): number {
  const magnitude = 10 ** (String(Math.max(1, Math.ceil(top))).length - 1);
  return [1, 2, 5, 10].map((m) => m * magnitude).find((m) => m >= top) ?? 10 * magnitude;
}

/** "3 Mar": a day of the report (UTC) as a short date. */
export function shortDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return day;
  return date.toLocaleDateString(undefined, { day: "numeric", month: "short", timeZone: "UTC" });
}

function plural(n: number, one: string, many: string): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** The chart of `report`, or null when it has no day with use. */
export function chartOf(report: UsageReport): UsageChart | null {
  if (report.days.length === 0) return null;
  const metric: ChartMetric = report.total.cost_pico > 0 ? "cost" : "tokens";
  const valueOf = (d: UsageDay) => (metric === "cost" ? d.cost_pico : d.input_tokens + d.output_tokens);
  const amount = (n: number) => (metric === "cost" ? usd(n) : `${count(n)} tokens`);
  /** One day's use of one model in words: its cost (or why none), or its tokens. */
  const said = (d: UsageDay) => {
    const tokens = `${count(d.input_tokens + d.output_tokens)} tokens`;
    if (metric === "tokens") return tokens;
    if (d.unpriced === d.requests) return `no price (${tokens})`;
    return d.unpriced > 0 ? `${usd(d.cost_pico)} (${plural(d.unpriced, "request", "requests")} with no price)` : usd(d.cost_pico);
  };

  // Series, biggest first (then by name).
  const sums = new Map<string, { provider: string; model: string; value: number }>();
  for (const d of report.days) {
    const found = sums.get(keyOf(d)) ?? { provider: d.provider, model: d.model, value: 0 };
    found.value += valueOf(d);
    sums.set(keyOf(d), found);
  }
  const series: ChartSeries[] = [...sums.entries()]
    .sort(([a, x], [b, y]) => y.value - x.value || (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, s], i) => ({ key, provider: s.provider, model: s.model, color: i % PALETTE_SIZE }));
  const order = new Map(series.map((s, i) => [s.key, i]));

  // Days, oldest first (Rust sends them so; sorted again all the same).
  const byDay = new Map<string, UsageDay[]>();
  for (const d of report.days) byDay.set(d.day, [...(byDay.get(d.day) ?? []), d]);
  const days = [...byDay.keys()].sort();
  const totals = days.map((day) => byDay.get(day)!.reduce((sum, d) => sum + valueOf(d), 0));
  const top = niceTop(Math.max(1, ...totals));

  const plotWidth = CHART.width - CHART.left - CHART.right;
  const plotHeight = CHART.height - CHART.top - CHART.bottom;
  const base = CHART.top + plotHeight;
  const slot = plotWidth / days.length;
  const width = Math.min(48, slot * 0.7);
  const every = Math.ceil(days.length / MAX_LABELS);

  const bars: ChartBar[] = days.map((day, i) => {
    const rows = [...byDay.get(day)!].sort((a, b) => order.get(keyOf(a))! - order.get(keyOf(b))!);
    let y = base;
    const segments = rows.map((d) => {
      const s = series[order.get(keyOf(d))!];
      const value = valueOf(d);
      const height = (value / top) * plotHeight;
      y -= height;
      return {
        series: s,
        value,
        y,
        height,
        title: `${day} · ${d.provider} · ${d.model}: ${said(d)}, ${plural(d.requests, "request", "requests")}`,
      };
    });
    return {
      day,
      x: CHART.left + i * slot + (slot - width) / 2,
      width,
      total: totals[i],
      label: i % every === 0 ? shortDay(day) : "",
      segments,
    };
  });

  const ticks = [0, top / 2, top]
    .filter((v) => Number.isInteger(v))
    .map((v) => ({ y: base - (v / top) * plotHeight, label: metric === "cost" ? usd(v) : count(v) }));

  const most = totals.indexOf(Math.max(...totals));
  const first = days[0];
  const last = days[days.length - 1];
  const span = days.length === 1 ? `on ${shortDay(first)}` : `from ${shortDay(first)} to ${shortDay(last)}`;
  const what = metric === "cost" ? "Cost per day" : "Tokens per day (nothing had a cost)";
  const all = totals.reduce((sum, v) => sum + v, 0);
  const summary =
    `${what}, ${plural(days.length, "day", "days")} with use ${span}: ${amount(all)} in all` +
    (days.length > 1 ? `, the most ${amount(totals[most])} on ${shortDay(days[most])}.` : ".");

  return { metric, bars, series, ticks, summary };
}

/** One provider's model over the whole period. */
export interface UsageRow {
  provider: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_pico: number;
  /** requests whose model had no price */
  unpriced: number;
}

/** Each provider's model, its days added up: the most costly first, then the most tokens, then by name. */
export function rowsOf(report: UsageReport): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const d of report.days) {
    const row = rows.get(keyOf(d)) ?? { provider: d.provider, model: d.model, requests: 0, input_tokens: 0, output_tokens: 0, cost_pico: 0, unpriced: 0 };
    row.requests += d.requests;
    row.input_tokens += d.input_tokens;
    row.output_tokens += d.output_tokens;
    row.cost_pico += d.cost_pico;
    row.unpriced += d.unpriced;
    rows.set(keyOf(d), row);
  }
  const tokens = (r: UsageRow) => r.input_tokens + r.output_tokens;
  return [...rows.values()].sort(
    (a, b) =>
      b.cost_pico - a.cost_pico ||
      tokens(b) - tokens(a) ||
      (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0),
  );
}
