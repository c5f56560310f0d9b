// Model text as Markdown, made safe: `marked` renders it and DOMPurify removes
// everything that could run or reach out (scripts, event handlers, styles,
// forms, frames). Links open nowhere inside the app: they keep their text and
// lose their target. The CSP is the second wall, not the first. The parser and
// the sanitiser's rules live here only: answers rendered block by block
// (markdown-blocks.ts) go through the same two.
//
// Beyond marked's defaults: a code block is a box with its language, a Copy button and the
// code highlighted (highlight.ts, once it has loaded); an image is never fetched (a
// fetched image can carry data out in its address): it is a link that shows where it points;
// a task list item shows a ticked or empty box, not a form control; math between dollars
// (or \( \) and \[ \]) is typeset as MathML (math.ts, once KaTeX has loaded).

import DOMPurify from "dompurify";
import { Marked } from "marked";
import { escapeHtml } from "./format";
import { highlightCode } from "./highlight";
import { MATH_ATTRS, MATH_TAGS, mathExtension } from "./math";

/** The longest image address shown whole; a longer one is shown cut (the link keeps it whole). */
const SHOWN_ADDRESS = 120;

/** The Markdown parser: GFM, raw HTML in model text shown as the text it is, never parsed. */
export const markdown = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html({ text }) {
      return escapeHtml(text);
    },
    code({ text, lang }) {
      const language = (lang ?? "").match(/^\S*/)?.[0] ?? "";
      const code = text.replace(/\n$/, "");
      const body = highlightCode(code, language.toLowerCase()) ?? escapeHtml(code);
      const label = language === "" ? "" : `<span class="code-lang">${escapeHtml(language)}</span>`;
      return (
        `<div class="code-block"><div class="code-head">${label}` +
        `<button type="button" class="code-copy" title="Copy this code">Copy</button></div>` +
        `<pre><code class="hljs">${body}\n</code></pre></div>\n`
      );
    },
    image({ href, text }) {
      const shown = href.length > SHOWN_ADDRESS ? `${href.slice(0, SHOWN_ADDRESS - 1)}…` : href;
      const alt = text.trim() === "" ? "" : ` “${escapeHtml(text)}”`;
      return (
        `<a href="${escapeHtml(href)}" class="image-link" title="An image this answer points to. It was not loaded: ` +
        `loading it would tell its server you read this.">Image${alt}: ${escapeHtml(shown)}</a>`
      );
    },
    checkbox({ checked }) {
      return checked
        ? `<span class="task-box task-done" title="Done">☑</span> `
        : `<span class="task-box" title="Not done">☐</span> `;
    },
  },
}).use(mathExtension);

const ALLOWED_TAGS = [
  "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
  "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
  "table", "thead", "tbody", "tr", "th", "td", "a", "span", "div", "button",
  ...MATH_TAGS,
];
/** Attributes that are never an address: DOMPurify would otherwise hold their values to ALLOWED_URI_REGEXP. */
const NOT_ADDRESSES = ["align", "type", ...MATH_ATTRS];
const ALLOWED_ATTR = ["href", "title", "class", ...NOT_ADDRESSES];

/** `html` from the parser with everything that could run or reach out removed. */
export function sanitize(html: string): string {
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ADD_URI_SAFE_ATTR: NOT_ADDRESSES,
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  });
}

/** Safe HTML for a Markdown text. */
export function renderMarkdown(text: string): string {
  return sanitize(markdown.parse(text, { async: false }));
}
