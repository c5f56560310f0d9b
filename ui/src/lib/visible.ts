// Text with its hidden characters made visible, for the approval dialog: what
// runs is exactly what the person read, so nothing may hide in it.

const NAMES: Record<string, string> = {
  "\t": "⇥\t",
  "\r": "␍",
  "\u00a0": "⍽",
};

/** Tabs, carriage returns, no-break spaces, trailing spaces and invisible format characters, shown. */
export function visibleWhitespace(text: string): string {
  return text
    .split("\n")
    .map((line) => {
      const shown = line.replace(/[\t\r\u00a0]/g, (c) => NAMES[c]).replace(
        /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g,
        (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`,
      );
      const trailing = /( +)$/.exec(shown);
      return trailing ? shown.slice(0, trailing.index) + "·".repeat(trailing[1].length) : shown;
    })
    .join("\n");
}
