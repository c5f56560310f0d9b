//! Code highlighting, loaded only when a code block is first rendered: highlight.js (its common
//! languages) is a chunk of its own that the first paint never waits for. Until it arrives code
//! is plain, escaped text; when it does, `highlighter.generation` moves on, and every answer
//! rendered before renders once more (markdown-blocks.ts drops what it kept). Its output is
//! spans with `hljs-*` classes, sanitised like everything else (markdown.ts).

import type { HLJSApi } from "highlight.js";

/** Reactive: answers read it so that they render again once the highlighter is here. */
export const highlighter = $state({ generation: 0 });

let hljs: HLJSApi | null = null;
let loading: Promise<void> | null = null;

/** Loads the highlighter once; resolves when it is ready (or could not be loaded: code stays plain). */
export function loadHighlighter(): Promise<void> {
  loading ??= import("highlight.js/lib/common").then(
    (module) => {
      hljs = module.default;
      highlighter.generation += 1;
    },
    (err: unknown) => console.warn("the code highlighter could not be loaded; code stays plain", err),
  );
  return loading;
}

/**
 * `code` as highlighted HTML when the highlighter is here and knows `language`; null otherwise
 * (the caller escapes it as plain text), asking for the highlighter the first time.
 */
export function highlightCode(code: string, language: string): string | null {
  if (!hljs) {
    void loadHighlighter();
    return null;
  }
  if (language === "" || !hljs.getLanguage(language)) return null;
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
}
