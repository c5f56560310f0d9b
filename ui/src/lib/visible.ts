// Text with its hidden characters made visible, for the approval dialog: what
// runs is exactly what the person read, so nothing may hide in it. The list is
// the core's (`text::is_hidden`, which the command line uses).

const NAMES: Record<string, string> = {
  "\t": "⇥\t",
  "\r": "␍",
  "\u00a0": "⍽",
};

/** Controls (C0 but newline and tab, DEL, C1), the soft hyphen, bidi marks,
 * embeddings, overrides and isolates, zero-width and invisible operators, line
 * and paragraph separators, the byte-order mark, variation selectors and tag
 * characters. */
const HIDDEN =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufe00-\ufe0f\ufeff\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu;

/** Tabs, carriage returns, no-break spaces, trailing spaces and hidden characters, shown. */
export function visibleWhitespace(text: string): string {
  return text
    .split("\n")
    .map((line) => {
      const shown = line
        .replace(/[\t\r\u00a0]/g, (c) => NAMES[c])
        .replace(HIDDEN, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`);
      const trailing = /( +)$/.exec(shown);
      return trailing ? shown.slice(0, trailing.index) + "·".repeat(trailing[1].length) : shown;
    })
    .join("\n");
}
