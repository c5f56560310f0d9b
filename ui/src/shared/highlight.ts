//! Code highlighting with highlight.js (its common languages), a chunk of its own loaded the
//! first time a code block with a language is rendered, or when the window is idle after its
//! first paint (warmup.ts), whichever comes first (lazy-render.svelte.ts). Until it arrives
//! code is plain, escaped text. Its output is spans with `hljs-*` classes, sanitised like
//! everything else (markdown.ts).

import type { HLJSApi } from "highlight.js";
import { lazyRenderer } from "./lazy-render.svelte";

const highlighter = lazyRenderer<HLJSApi>("the code highlighter", () =>
  import("highlight.js/lib/common").then((module) => module.default),
);

/** Loads the highlighter once; resolves when it is ready (or could not be loaded: code stays plain). */
export const loadHighlighter = (): Promise<void> => highlighter.load();

/**
 * Makes the highlighter ready for `language` if it is here (a grammar is compiled on its first
 * use, a few ms each): the window does this while idle for the languages answers use most.
 */
export function prepareLanguage(language: string): void {
  const hljs = highlighter.peek();
  if (hljs?.getLanguage(language)) hljs.highlight("x", { language, ignoreIllegals: true });
}

/**
 * `code` as highlighted HTML when the highlighter is here and knows `language`; null otherwise
 * (the caller escapes it as plain text), asking for the highlighter the first time.
 */
export function highlightCode(code: string, language: string): string | null {
  if (language === "") return null;
  const hljs = highlighter.get();
  if (!hljs || !hljs.getLanguage(language)) return null;
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
}
