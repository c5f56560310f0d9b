// Text with its hidden characters made visible (or escaped), for the approval dialog, the result
// review, the Servers page and the tools panel: what runs (or what the model reads) is exactly
// what the person read, so nothing may hide in it. The rule is the core's (`text::is_hidden`,
// which native dialogs and the command line use).

const NAMES: Record<string, string> = {
  "\t": "⇥\t",
  "\r": "␍",
  "\u00a0": "⍽",
};

/** Unicode's own properties, as the core's `text::is_hidden` reads them (there from the regex
 * crate's tables, here from the JavaScript engine's): every default-ignorable code point
 * (zero-width characters, variation selectors, Hangul fillers, tag characters, …), every
 * format character (bidi marks, embeddings, overrides and isolates, the soft hyphen, …), every
 * control but newline and tab, and the line and paragraph separators. */
const HIDDEN =
  /(?![\n\t])[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/gu;

/** `c` as it is shown in place of a hidden character: ⟨U+202E⟩. */
const named = (c: string): string => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`;

/** `text` with only its hidden characters shown (⟨U+202E⟩), its whitespace left as it is: text
 *  a person edits, whose every character they can see. */
export function showHidden(text: string): string {
  return text.replace(HIDDEN, named);
}

/** `text` as [`showHidden`] wrote it, each ⟨U+…⟩ the character again: what a person kept of a
 *  result goes back in the form the result had (the core checks that every line of it is
 *  the result's own). */
export function restoreHidden(text: string): string {
  return text.replace(/⟨U\+([0-9A-F]{4,6})⟩/g, (_, hex: string) => {
    const code = parseInt(hex, 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : "";
  });
}

/** Tabs, carriage returns, no-break spaces, trailing spaces and hidden characters, shown. */
export function visibleWhitespace(text: string): string {
  return text
    .split("\n")
    .map((line) => {
      const shown = line.replace(/[\t\r\u00a0]/g, (c) => NAMES[c]).replace(HIDDEN, named);
      const trailing = /( +)$/.exec(shown);
      return trailing ? shown.slice(0, trailing.index) + "·".repeat(trailing[1].length) : shown;
    })
    .join("\n");
}

/** `text` with each hidden character written as a JSON escape (`\u202e`; a pair of them beyond
 *  U+FFFF), as the core's `text::escape_hidden` writes it in the words it makes (a rule's). */
export function escapeHidden(text: string): string {
  return text.replace(HIDDEN, (c) =>
    Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
  );
}
