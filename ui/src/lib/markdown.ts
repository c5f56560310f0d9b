// Model text as Markdown, made safe: `marked` renders it and DOMPurify removes
// everything that could run or reach out (scripts, event handlers, styles,
// forms, frames). Links open nowhere inside the app: they keep their text and
// lose their target. The CSP is the second wall, not the first. The parser and
// the sanitiser's rules live here only: answers rendered block by block
// (markdown-blocks.ts) go through the same two.

import DOMPurify from "dompurify";
import { Marked } from "marked";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The Markdown parser: GFM, raw HTML in model text shown as the text it is, never parsed. */
export const markdown = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html({ text }) {
      return escapeHtml(text);
    },
  },
});

const ALLOWED_TAGS = [
  "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
  "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
  "table", "thead", "tbody", "tr", "th", "td", "a", "span",
];

/** `html` from the parser with everything that could run or reach out removed. */
export function sanitize(html: string): string {
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ["href", "title", "align"],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  });
}

/** Safe HTML for a Markdown text. */
export function renderMarkdown(text: string): string {
  return sanitize(markdown.parse(text, { async: false }));
}
