// An answer's Markdown as safe HTML, block by block, so that an answer growing while it streams
// costs what changed, not the whole text again: the text is cut into marked's top-level blocks;
// blocks that later text can no longer change are rendered once and kept, with the offset where
// they end, and each update lexes and renders only the text after that offset. Also the cache of
// finished answers' HTML, so that an answer mounted again is not parsed again. Parser and
// sanitiser are markdown.ts's: a text's blocks, joined, are the HTML renderMarkdown gives for it
// (while it streams, link references across blocks excepted: see AnswerBlocks).

import type { Token } from "marked";
import { lazyRenderers, missCount } from "../shared/lazy-render.svelte";
import { markdown, renderMarkdown, sanitize } from "../shared/markdown";

/** marked's own line-end normalisation, done first so that offsets count in the text it lexes. */
function lineEnds(text: string): string {
  return text.includes("\r") ? text.replace(/\r\n|\r/g, "\n") : text;
}

function blockHtml(token: Token): string {
  return sanitize(markdown.parser([token]));
}

/**
 * Whether the line that ends just before `at` (the start of a block) is blank. A blank line ends
 * every block that can reach past it: a paragraph, a table, a list or quote followed by a line
 * that does not belong to it; and no setext heading ("text" then "---") reaches across one.
 */
function blankLineBefore(text: string, at: number): boolean {
  let i = at - 1;
  if (text[i] !== "\n") return false;
  i -= 1;
  while (text[i] === " " || text[i] === "\t") i -= 1;
  return text[i] === "\n";
}

/**
 * The blocks of one answer as it grows, as safe HTML, one string a block.
 *
 * A block is kept (never lexed again) once a blank line separates it from the next block and
 * that block's first line is complete. A following block alone is not enough: more text can
 * still join the two (a heading "#" under a paragraph becomes "#x", a line of the paragraph; a
 * table's "|-" becomes "|-x", a line of the paragraph above; a "---" turns the lines above it,
 * up to the last blank line, into a heading); and after a blank line, a line read in part can
 * still turn out to belong to the block above ("2" is a paragraph, "2. b" a list's next item).
 * Only the blocks after the kept ones are lexed and rendered again.
 *
 * Link reference definitions ("[1]: https://…") resolve only within one lex: while the answer
 * streams, a reference in a kept block to a definition after it (or the reverse) shows as
 * text. `finish` renders an answer with definitions once more, whole, so the finished answer
 * has them all.
 */
export class AnswerBlocks {
  /** The start of the text that the kept blocks cover, all of it. */
  #kept = "";
  #keptHtml: string[] = [];
  /** Whether a lex of this text met a link reference definition. */
  #definitions = false;
  /**
   * Whether a block rendered since the last start over asked for a renderer that was not here
   * yet (code highlighting, math), and the renderers' generation then: such an answer starts
   * over once one arrives; any other keeps what it rendered.
   */
  #stale = false;
  #generation = 0;

  /** Whether the HTML last given was rendered without a renderer it asked for. */
  get stale(): boolean {
    return this.#stale;
  }

  /**
   * Safe HTML of each block of `text`. Text that does not start with the text before starts
   * over, and so does an answer rendered without a renderer once one has arrived.
   */
  render(text: string): string[] {
    const source = lineEnds(text);
    if (!source.startsWith(this.#kept) || (this.#stale && this.#generation !== lazyRenderers.generation)) {
      this.#reset();
    }
    const misses = missCount();
    const rest = source.slice(this.#kept.length);
    const tokens = markdown.lexer(rest);

    const html: string[] = [];
    // Where the next token starts in `rest`, while every token so far was found where it should
    // be (a repeated definition is dropped by the lexer, its text in no token).
    let at: number | null = 0;
    let keptEnd = 0;
    let keptBlocks = 0;
    let seenBlock = false;
    for (const token of tokens) {
      if (token.type === "def") this.#definitions = true;
      if (at !== null && !rest.startsWith(token.raw, at)) at = null;
      if (token.type !== "space") {
        if (at !== null && seenBlock && blankLineBefore(rest, at) && rest.includes("\n", at)) {
          keptEnd = at;
          keptBlocks = html.length;
        }
        seenBlock = true;
      }
      const block = blockHtml(token);
      if (block !== "") html.push(block);
      if (at !== null) at += token.raw.length;
    }

    this.#noteMisses(misses);
    this.#kept += rest.slice(0, keptEnd);
    this.#keptHtml.push(...html.slice(0, keptBlocks));
    return [...this.#keptHtml, ...html.slice(keptBlocks)];
  }

  /**
   * Safe HTML of `text`, which is complete: the blocks kept while it streamed and the rest, or
   * where nothing of it was kept (or references may cross blocks), the whole text as one block,
   * which is cheaper than cutting it up.
   */
  finish(text: string): string[] {
    if (this.#kept === "" || !lineEnds(text).startsWith(this.#kept)) return this.#whole(text);
    const blocks = this.render(text);
    return this.#definitions ? this.#whole(text) : blocks;
  }

  #whole(text: string): string[] {
    this.#reset();
    const misses = missCount();
    const html = renderMarkdown(text);
    this.#noteMisses(misses);
    return [html];
  }

  /** Notes whether a renderer was missed since the count was `before`, and in which generation. */
  #noteMisses(before: number): void {
    if (missCount() === before) return;
    this.#stale = true;
    this.#generation = lazyRenderers.generation;
  }

  #reset(): void {
    this.#stale = false;
    this.#kept = "";
    this.#keptHtml = [];
    this.#definitions = false;
  }
}

/** How many finished answers keep their blocks (the least recently shown go first). */
const FINISHED_KEPT = 200;
const finished = new Map<string, { text: string; generation: number; stale: boolean; blocks: string[] }>();

/** Lets go of the kept blocks of the finished answer `id` (one that will not be shown again). */
export function forgetFinished(id: string): void {
  finished.delete(id);
}

/**
 * The HTML of the finished answer `id` with the text `text`: as rendered before, else finished
 * by `blocks` (which carries on from what it rendered while the answer streamed, if it did).
 */
export function finishedAnswer(id: string, text: string, blocks: AnswerBlocks): string[] {
  const known = finished.get(id);
  finished.delete(id);
  // Reading the generation makes the caller render again when a renderer arrives; what was
  // rendered with every renderer it asked for is kept as it is then.
  const generation = lazyRenderers.generation;
  let entry = known;
  if (entry?.text !== text || (entry.stale && entry.generation !== generation)) {
    const html = blocks.finish(text);
    entry = { text, generation, stale: blocks.stale, blocks: html };
  }
  finished.set(id, entry);
  if (finished.size > FINISHED_KEPT) finished.delete(finished.keys().next().value as string);
  return entry.blocks;
}
