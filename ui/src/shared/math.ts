//! Math in answers: TeX between `$…$` or `\(…\)` (inline) and `$$…$$` or `\[…\]` (display),
//! typeset by KaTeX, a chunk of its own loaded the first time an answer holds math
//! (lazy-render.svelte.ts); until it arrives the TeX shows as it was written. KaTeX writes
//! MathML only, which the webview lays out itself: no style attributes (the CSP allows none),
//! no KaTeX fonts or style sheet. Commands that could link or load (`\href`, `\url`,
//! `\includegraphics`, `\html…`) are refused (`trust: false`), macro expansion is bounded,
//! and its output is sanitised with everything else (markdown.ts).
//!
//! A `$` is math only when it opens right before a non-space and closes right after one, not
//! before a digit, and holds no backtick: "costs $5 and $10" stays text, and so does a `$`
//! in a code span after it.

import type { KatexOptions } from "katex";
import type { MarkedExtension, TokenizerAndRendererExtension } from "marked";
import { escapeHtml } from "./format";
import { lazyRenderer } from "./lazy-render.svelte";

type Katex = { renderToString(tex: string, options: KatexOptions): string };

const katex = lazyRenderer<Katex>("the math typesetter", () => import("katex").then((module) => module.default));

/** Loads KaTeX once; resolves when it is ready (or could not be loaded: math stays as TeX). */
export const loadMath = (): Promise<void> => katex.load();

const OPTIONS: KatexOptions = {
  output: "mathml",
  throwOnError: false,
  strict: "ignore",
  trust: false,
  maxExpand: 500,
  maxSize: 20,
};

/** `tex` typeset as MathML when KaTeX is here; else the TeX as written, asking for KaTeX. */
export function renderMath(tex: string, display: boolean): string {
  const typesetter = katex.get();
  if (typesetter) {
    try {
      return typesetter.renderToString(tex, { ...OPTIONS, displayMode: display });
    } catch {
      // throwOnError is off; anything else thrown leaves the TeX as written
    }
  }
  const delimiter = display ? "$$" : "$";
  return `<code class="math-source">${escapeHtml(`${delimiter}${tex}${delimiter}`)}</code>`;
}

interface MathToken {
  type: "math" | "mathBlock";
  raw: string;
  text: string;
  display: boolean;
}

const INLINE: Array<[RegExp, boolean]> = [
  [/^\$\$(?!\$)((?:\\[\s\S]|[^\\$])+?)\$\$/, true],
  [/^\$(?![\s$])((?:\\[\s\S]|[^\\$\n`])*?[^\s\\`])\$(?!\d)/, false],
  [/^\\\(([\s\S]+?)\\\)/, false],
  [/^\\\[([\s\S]+?)\\\]/, true],
];

const inlineMath: TokenizerAndRendererExtension = {
  name: "math",
  level: "inline",
  start(src) {
    const at = src.search(/\$|\\[([]/);
    return at < 0 ? undefined : at;
  },
  tokenizer(src): MathToken | undefined {
    for (const [pattern, display] of INLINE) {
      const found = pattern.exec(src);
      if (found) return { type: "math", raw: found[0], text: found[1].trim(), display };
    }
    return undefined;
  },
  renderer(token) {
    return renderMath(token.text as string, token.display as boolean);
  },
};

const BLOCK = /^ {0,3}(?:\$\$((?:\\[\s\S]|[^\\$])+?)\$\$|\\\[([\s\S]+?)\\\])[ \t]*(?:\n|$)/;

const blockMath: TokenizerAndRendererExtension = {
  name: "mathBlock",
  level: "block",
  start(src) {
    const at = src.search(/^ {0,3}(?:\$\$|\\\[)/m);
    return at < 0 ? undefined : at;
  },
  tokenizer(src): MathToken | undefined {
    const found = BLOCK.exec(src);
    if (!found) return undefined;
    return { type: "mathBlock", raw: found[0], text: (found[1] ?? found[2]).trim(), display: true };
  },
  renderer(token) {
    return `<div class="math-block">${renderMath(token.text as string, true)}</div>\n`;
  },
};

/** The marked extension: both kinds of math, typeset by `renderMath`. */
export const mathExtension: MarkedExtension = { extensions: [blockMath, inlineMath] };

/** The MathML elements KaTeX writes (never `annotation-xml`, which can carry HTML). */
export const MATH_TAGS = [
  "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace",
  "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mover", "munder", "munderover",
  "mtable", "mtr", "mtd", "mpadded", "mphantom", "mstyle", "menclose", "merror",
];

/** Their attributes: layout only, none takes an address. */
export const MATH_ATTRS = [
  "display", "displaystyle", "scriptlevel", "mathvariant", "encoding", "stretchy", "fence",
  "separator", "lspace", "rspace", "accent", "accentunder", "movablelimits", "symmetric",
  "minsize", "maxsize", "linethickness", "columnalign", "columnspacing", "rowspacing",
  "rowalign", "rowlines", "columnlines", "frame", "notation", "width", "height", "depth", "voffset",
];
