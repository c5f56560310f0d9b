// The Activity page's record (issue 59): every tool call Rust kept in its audit record (from the
// model, a Retry, an MCP App or the command line), newest first, as the page's filters choose
// them (a server, a decision, a day on), read a page at a time ("Load older" reads the page
// before the oldest shown). Rust keeps and filters the record; only the latest-issued read is
// applied, so a slow answer for a filter the person already changed is dropped.

import * as ipc from "../lib/ipc";
import { LatestOnly } from "../shared/latest";
import type { AuditDecision, AuditEntry, AuditFilter } from "../lib/types";
import type { UiStore } from "../app/ui.svelte";

/** What the page filters the record by. */
export interface ActivityFilter {
  /** a server's name as in mcp.json; "" for every server */
  server: string;
  /** "" for every decision */
  decision: AuditDecision | "";
  /** from this time on (ms since 1970); null for the whole record */
  since: number | null;
}

export class ActivityStore {
  /** the entries read for the current filter, newest first; null until first read */
  entries = $state.raw<AuditEntry[] | null>(null);
  /** the last page read was full, so older entries may remain */
  more = $state(false);
  /** a read is under way */
  loading = $state(false);
  /** the last read failed (the page offers to try again) */
  loadFailed = $state(false);
  /** the most entries one read brings */
  pageSize = 100;

  readonly #ui: UiStore;
  readonly #guard = new LatestOnly();
  /** the filter the entries shown were read with */
  #filter: AuditFilter = {};

  constructor(ui: UiStore) {
    this.#ui = ui;
  }

  /** Reads the newest entries that `filter` lets through (what was shown goes). */
  async load(filter: ActivityFilter): Promise<void> {
    const server = filter.server.trim();
    this.#filter = {
      ...(server !== "" ? { server } : {}),
      ...(filter.decision !== "" ? { decision: filter.decision } : {}),
      ...(filter.since !== null ? { since: filter.since } : {}),
    };
    await this.#read(null);
  }

  /** Reads the page of entries before the oldest shown, for the same filter. */
  async loadOlder(): Promise<void> {
    const oldest = this.entries?.at(-1);
    if (!oldest) return;
    await this.#read(oldest.seq);
  }

  /** The last read again (after it failed). */
  async retry(): Promise<void> {
    await this.#read(null);
  }

  async #read(before: number | null): Promise<void> {
    const isLatest = this.#guard.begin();
    const filter: AuditFilter = { ...this.#filter, limit: this.pageSize, ...(before !== null ? { before } : {}) };
    this.loading = true;
    this.loadFailed = false;
    try {
      const page = await ipc.listAudit(filter);
      if (!isLatest()) return;
      this.entries = before === null ? page : [...(this.entries ?? []), ...page];
      this.more = page.length === this.pageSize;
    } catch (err) {
      if (!isLatest()) return;
      this.loadFailed = true;
      this.#ui.report(err);
    } finally {
      if (isLatest()) this.loading = false;
    }
  }
}
