//! A changed tool's unified diff (Rust's `pins::diff`) as lines marked by kind, for the
//! Servers page to show added lines in green and removed ones in red, as the native dialog
//! does (`gtk_dialog.rs`). Pure; the text stays text.

export type DiffLineKind = "added" | "removed" | "hunk" | "plain";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

/** `diff`'s lines, each marked: the `---`/`+++` header (and anything else before the first
 *  `@@`) is plain; inside a hunk a line starting `+` is added and `-` removed, even one whose
 *  own text starts `++` or `--`. A final newline ends the last line, not one more. */
export function diffLines(diff: string): DiffLine[] {
  const lines = diff.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  let inHunk = false;
  return lines.map((text) => {
    if (text.startsWith("@@")) {
      inHunk = true;
      return { kind: "hunk", text };
    }
    const kind: DiffLineKind = inHunk && text.startsWith("+") ? "added" : inHunk && text.startsWith("-") ? "removed" : "plain";
    return { kind, text };
  });
}
