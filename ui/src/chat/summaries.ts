// Summaries of earlier messages (issue 55) in the conversation view: the newest summary whose
// last message is shown stands after that message, as a folded "Earlier messages summarised"
// row with the summary readable. Folded, the messages it covers are not shown (they stay in the
// conversation: unfolding shows them); the row is then the first of the list.
import type { ChatItem } from "./items";
import type { Summary } from "../lib/types";

export interface SummaryRow {
  kind: "summary";
  id: string;
  summary: Summary;
  /** the rows of messages it covers that are loaded */
  covered: number;
  folded: boolean;
}

export type Row = ChatItem | SummaryRow;

/** Where `summary`'s last message is among `items`: its row (an answer holds its results). */
function rowOf(items: ChatItem[], summary: Summary): number {
  const id = summary.through_message_id;
  return items.findIndex((i) => i.id === id || (i.kind === "assistant" && i.tools.some((c) => c.result_id === id)));
}

/** The rows to show: `items` with the summary in force placed (and what it covers folded away unless `unfolded`). */
export function withSummary(items: ChatItem[], summaries: Summary[], unfolded: boolean): Row[] {
  for (let i = summaries.length - 1; i >= 0; i--) {
    const at = rowOf(items, summaries[i]);
    if (at < 0) continue;
    const row: SummaryRow = {
      kind: "summary",
      id: `summary:${summaries[i].id}`,
      summary: summaries[i],
      covered: at + 1,
      folded: !unfolded,
    };
    return unfolded ? [...items.slice(0, at + 1), row, ...items.slice(at + 1)] : [row, ...items.slice(at + 1)];
  }
  return items;
}
