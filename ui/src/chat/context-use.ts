// How full the model's window is (issue 55), as the conversation's header says it: "18.2k of
// 128k", with what fills it (the system prompt, the tools' definitions, the history, the
// attached files; of the tools, the list of skills) and how it was counted on hover. When the conversation needed more than the
// window and the request was fitted to it (older messages summarised or left out), the label
// says what it needs ("15.8k of 16.4k · needs 31k"), marked as full, and the hover says why. Beside it, what of its
// project's files and its memory the model was given ("4 passages · 2 facts").
import type { ContextUse, KnowledgeUse } from "../lib/types";
import { count } from "../shared/money";

/** `n` tokens in a few characters: 950, 18.2k, 128k, 1.05M. */
export function shortTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) {
    const k = n / 1000;
    return `${k < 100 ? Number(k.toFixed(1)) : Math.round(k)}k`;
  }
  return `${Number((n / 1_000_000).toFixed(2))}M`;
}

/**
 * The header's label and its hover text; `full`: the request takes most of the window, or the
 * conversation needed more than it.
 */
export function contextLabel(used: ContextUse): { label: string; title: string; full: boolean } {
  const share = used.window ? used.tokens / used.window : null;
  const needed = used.needed !== undefined && used.needed > used.tokens ? used.needed : null;
  const given = givenLabel(used);
  const how = used.counted_by.startsWith("estimate")
    ? `Estimated at four bytes a token${used.counted_by.endsWith("calibrated") ? ", scaled to what the provider counted" : ""}.`
    : `Counted with ${used.counted_by.replace(", calibrated", "")}${used.counted_by.endsWith("calibrated") ? ", scaled to what the provider counted" : ""}.`;
  const lines = [
    ...(needed === null
      ? []
      : [
          `The conversation needs about ${count(needed)} tokens; this model runs with ${used.window ? `a window of ${count(used.window)}` : "a smaller window"}: older messages were summarised or left out. A model with a larger window (or a larger window for this one, on Providers) keeps them all.`,
        ]),
    used.window
      ? `The model was last given about ${count(used.tokens)} tokens of its window of ${count(used.window)} (${Math.round((share ?? 0) * 100)} %).`
      : `The model was last given about ${count(used.tokens)} tokens; its window is not known (Providers, or switchboard provider window).`,
    `System prompt: ${count(used.system)}${given ? ` (with ${given.label.replaceAll(" · ", ", ")})` : ""}`,
    `Tools' definitions: ${count(used.tools)}${used.skills > 0 ? ` (of which the list of skills: ${count(used.skills)})` : ""}`,
    `Messages: ${count(used.history)}`,
    `Attached files and images: ${count(used.attachments)}`,
    how,
  ];
  const label = used.window ? `${shortTokens(used.tokens)} of ${shortTokens(used.window)}` : `${shortTokens(used.tokens)} tokens`;
  return {
    label: needed === null ? label : `${label} · needs ${shortTokens(needed)}`,
    title: lines.join("\n"),
    full: needed !== null || (share !== null && share >= 0.8),
  };
}

/** `n` of a thing, singular or plural: "1 fact", "3 facts". */
function some(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * What of its project's files and its memory the model was last given (issue 62), as the header's
 * button says it ("4 passages · 2 facts") and the lists its panel shows; `null` when nothing.
 */
export function givenLabel(used: ContextUse): { label: string; title: string; lists: { heading: string; items: string[] }[] } | null {
  return givenOf(used.given ?? null);
}

/** [`givenLabel`] for what one request was given (an answer keeps its own). */
export function givenOf(given: KnowledgeUse | null): { label: string; title: string; lists: { heading: string; items: string[] }[] } | null {
  if (!given) return null;
  const lists = [
    { heading: "The project's files, given whole", items: given.whole },
    { heading: "Passages of the project's files", items: given.passages },
    { heading: "Remembered facts", items: given.facts },
  ].filter((list) => list.items.length > 0);
  if (lists.length === 0) return null;
  const parts = [
    given.whole.length > 0 ? some(given.whole.length, "file", "files") : null,
    given.passages.length > 0 ? some(given.passages.length, "passage", "passages") : null,
    given.facts.length > 0 ? some(given.facts.length, "fact", "facts") : null,
  ].filter((p): p is string => p !== null);
  const label = parts.join(" · ");
  return { label, title: `The model was last given ${label.replaceAll(" · ", ", ")} with the system prompt. Click to see which.`, lists };
}

/** What an answer's request was given, as the lines its tokens add on hover; none when nothing. */
export function givenLines(given: KnowledgeUse | null): string[] {
  const said = givenOf(given);
  if (!said) return [];
  return [`Given with the system prompt: ${said.label.replaceAll(" · ", ", ")}`, ...said.lists.flatMap((list) => list.items.map((item) => `· ${item}`))];
}
