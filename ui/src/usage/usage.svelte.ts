// What models cost and what they were asked (issue 18): the price table (the person's prices
// and what providers' lists say), each conversation's total as last read (the header's chip),
// and the report of a period the Usage page shows. Prices go to Rust as the person typed them
// (dollars per million tokens) and Rust reads them: nothing here parses or multiplies a price.
// Only the latest-issued read of the table, of the report and of each conversation's total
// is applied. A failure to read the table or the report goes to the UI store's toast; a
// conversation's total is only a chip, so a failure to read it leaves what was known.

import * as ipc from "../lib/ipc";
import { LatestOnly } from "../shared/latest";
import type { ModelPrice, TypedPrice, UsageReport, UsageTotal } from "../lib/types";
import type { UiStore } from "../app/ui.svelte";

export class UsageStore {
  /** every model with a price, by provider and model; null until first read */
  prices = $state.raw<ModelPrice[] | null>(null);
  /** the Usage page's report, as last read (its `since` says of which period); null until then */
  report = $state.raw<UsageReport | null>(null);
  /** the last read of the report failed (the page offers to try again) */
  reportFailed = $state(false);
  /** conversation id → its requests added up, as last read */
  totals = $state.raw<Readonly<Record<string, UsageTotal>>>({});

  readonly #ui: UiStore;
  readonly #pricesGuard = new LatestOnly();
  readonly #reportGuard = new LatestOnly();
  /** conversation id → the ticket of its latest read; an older answer is dropped */
  readonly #totalTickets = new Map<string, number>();

  constructor(ui: UiStore) {
    this.#ui = ui;
  }

  // ------------------------------------------------------------ prices

  async loadPrices(): Promise<void> {
    const isLatest = this.#pricesGuard.begin();
    try {
      const prices = await ipc.listPrices();
      if (isLatest()) this.prices = prices;
    } catch (err) {
      if (!isLatest()) return;
      this.prices ??= [];
      this.#ui.report(err);
    }
  }

  /**
   * Sets the person's price for `model` of `provider` (all three null: forgets it), then reads
   * the table again. Resolves the price that counts now.
   * @throws IpcError, whose `field` names the price (or the model) at fault
   */
  async setPrice(provider: string, model: string, price: TypedPrice): Promise<ModelPrice | null> {
    try {
      return await ipc.setModelPrice(provider, model, price.input, price.output, price.cached);
    } finally {
      void this.loadPrices();
    }
  }

  /**
   * Forgets the person's price for `model` of `provider`: the provider list's, if any, counts again.
   * @throws IpcError
   */
  forgetPrice(provider: string, model: string): Promise<ModelPrice | null> {
    return this.setPrice(provider, model, { input: null, output: null, cached: null });
  }

  // ------------------------------------------------------------ the Usage page

  /** Reads every model's use since `since` (milliseconds since 1970). */
  async loadReport(since: number): Promise<void> {
    const isLatest = this.#reportGuard.begin();
    this.reportFailed = false;
    try {
      const report = await ipc.usageReport(since);
      if (isLatest()) this.report = report;
    } catch (err) {
      if (!isLatest()) return;
      this.reportFailed = true;
      this.#ui.report(err);
    }
  }

  // ------------------------------------------------------------ conversations

  /** A conversation's total as last read; null while it was never read. */
  totalOf(conversationId: string): UsageTotal | null {
    return this.totals[conversationId] ?? null;
  }

  /** Reads a conversation's total again (it opened, an answer was saved, a run ended). */
  async readTotal(conversationId: string): Promise<void> {
    const ticket = (this.#totalTickets.get(conversationId) ?? 0) + 1;
    this.#totalTickets.set(conversationId, ticket);
    try {
      const total = await ipc.conversationUsage(conversationId);
      if (this.#totalTickets.get(conversationId) === ticket) this.totals = { ...this.totals, [conversationId]: total };
    } catch {
      // Only a chip: a total that cannot be read shows as last read (or not at all), and no toast each answer.
    }
  }
}
