// The vertical rhythm of an answer's Markdown (issue 57): the gaps between its blocks come from
// the spacing scale, the same between any two blocks (paragraphs, lists, code, tables, quotes),
// more above a heading than under it, closer between a list's items, and none above the first
// block or below the last. The chat's own styles (MessageList.svelte, compiled as the window
// compiles them and scoped the same way) are laid on the answer as rendered; jsdom resolves the
// cascade, not the tokens, so a gap reads as the token it is.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/svelte";
import { compile } from "svelte/compiler";
import MessageList from "../src/chat/MessageList.svelte";
import type { ChatItem } from "../src/chat/items";

const SOURCE = join(__dirname, "../src/chat/MessageList.svelte");

afterEach(() => {
  cleanup();
  document.head.querySelectorAll("style[data-rhythm]").forEach((s) => s.remove());
});

const ANSWER = [
  "First paragraph.",
  "Second paragraph.",
  "## A heading",
  "Under the heading.",
  "- one\n- two\n  - nested",
  "```ts\nconst a = 1;\n```",
  "| Name | Value |\n|------|------:|\n| a    | 1     |",
  "> Quoted first.\n>\n> Quoted second.",
  "### Right after a block",
  "#### And a heading under a heading",
  "---",
  "Last paragraph.",
].join("\n\n");

/** The chat showing `text` as a finished answer, with MessageList's styles as the window has them. */
function shown(text: string, status: "complete" | "streaming" = "complete"): HTMLElement {
  const items: ChatItem[] = [
    { kind: "user", id: "q", text: "Write some Markdown.", created_at: 1, attachments: [] },
    {
      kind: "assistant", id: "a", text, reasoning: "", status, finish_reason: status === "complete" ? "stop" : null, error: null,
      model: null, input_tokens: null, output_tokens: null, cost_pico: null, tools: [],
    },
  ];
  const view = render(MessageList, { items });
  const list = view.getByTestId("message-list");
  const scope = [...list.classList].find((c) => c.startsWith("svelte-"));
  expect(scope).toBeTruthy();
  const { css } = compile(readFileSync(SOURCE, "utf8"), { filename: SOURCE, css: "external", cssHash: () => scope! });
  const style = document.createElement("style");
  style.dataset.rhythm = "";
  style.textContent = css?.code ?? "";
  document.head.append(style);
  return view.getByTestId("answer-text");
}

const top = (el: Element | null) => (el ? getComputedStyle(el).marginTop : "missing");
const bottom = (el: Element | null) => (el ? getComputedStyle(el).marginBottom : "missing");
/** No margin: set to none ("0px"), or none set ("0"). */
const NONE = expect.stringMatching(/^0(px)?$/);

describe("an answer's Markdown", () => {
  it("puts --space-3 between blocks, --space-5 above a heading and --space-2 under it, and nothing before the first or after the last", () => {
    const answer = shown(ANSWER);
    const blocks = [...answer.children];
    expect(blocks.map((b) => b.tagName.toLowerCase() + (b.className ? `.${b.className}` : ""))).toEqual([
      "p", "p", "h2", "p", "ul", "div.code-block", "table", "blockquote", "h3", "h4", "hr", "p",
    ]);
    const [first, second, h2, under, list, code, table, quote, h3, h4, rule, last] = blocks;
    expect(top(first)).toEqual(NONE);
    expect(top(second)).toBe("var(--space-3)");
    expect(top(h2)).toBe("var(--space-5)");
    expect(top(under)).toBe("var(--space-2)");
    expect(top(list)).toBe("var(--space-3)");
    expect(top(code)).toBe("var(--space-3)");
    expect(top(code.querySelector("pre"))).toEqual(NONE);
    expect(top(table)).toBe("var(--space-3)");
    expect(top(quote)).toBe("var(--space-3)");
    expect(top(h3)).toBe("var(--space-5)");
    expect(top(h4)).toBe("var(--space-2)");
    expect(top(rule)).toBe("var(--space-2)");
    expect(top(last)).toBe("var(--space-3)");
    for (const block of blocks) expect(bottom(block)).toEqual(NONE);
    // Inside a quote, the same rhythm; its first block sits at its top.
    const [q1, q2] = [...quote.children];
    expect(top(q1)).toEqual(NONE);
    expect(top(q2)).toBe("var(--space-3)");
    // A list's items are closer, a nested list too.
    const items = [...list.children];
    expect(top(items[0])).toEqual(NONE);
    expect(top(items[1])).toBe("var(--space-1)");
    expect(top(items[1].querySelector("ul"))).toBe("var(--space-1)");
  });

  it("keeps the same rhythm while the answer streams, its blocks rendered one by one", () => {
    const answer = shown(ANSWER, "streaming");
    const blocks = [...answer.children];
    expect(blocks.map((b) => b.tagName.toLowerCase())).toEqual(["p", "p", "h2", "p", "ul", "div", "table", "blockquote", "h3", "h4", "hr", "p"]);
    expect(blocks.map((b) => top(b))).toEqual([
      NONE, "var(--space-3)", "var(--space-5)", "var(--space-2)", "var(--space-3)", "var(--space-3)",
      "var(--space-3)", "var(--space-3)", "var(--space-5)", "var(--space-2)", "var(--space-2)", "var(--space-3)",
    ]);
  });

  it("takes the type scale's sizes for headings, none smaller than the text", () => {
    const answer = shown("# One\n\n## Two\n\n### Three\n\n###### Six");
    const size = (tag: string) => getComputedStyle(answer.querySelector(tag)!).fontSize;
    expect(size("h1")).toBe("var(--text-xl)");
    expect(size("h2")).toBe("var(--text-lg)");
    // The answer's own size (jsdom resolves "inherit", not the token).
    expect(size("h3")).toBe(getComputedStyle(answer).fontSize);
    expect(size("h6")).toBe(getComputedStyle(answer).fontSize);
    expect(getComputedStyle(answer).fontSize).toBe("var(--text-md)");
  });
});
