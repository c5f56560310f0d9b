// A local server's command line as the Servers page shows it: the program and each argument on
// its own (chips), with the variables put before them and the folder it runs in, read back from
// the two lines Rust gives (`McpServerStatus.command_line` and `edit_text`). Anything that does
// not read back exactly is left out here: the raw line is always one click away.

/** The parts of a local server's command line. */
export type CommandParts = {
  /** `KEY=value` words put first (a secret one as a keychain reference) */
  env: string[];
  /** the folder it runs in, when it has one of its own */
  folder: string | null;
  program: string;
  args: string[];
};

/** The words of a POSIX shell line (quotes and backslashes as a shell reads them); null when a quote is not closed. */
export function shellWords(line: string): string[] | null {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return null;
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && j + 1 < line.length && '"\\$`'.includes(line[j + 1])) j++;
        word += line[j];
      }
      if (j >= line.length) return null;
      inWord = true;
      i = j;
    } else if (c === "\\") {
      if (i + 1 < line.length) word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** A word quoted as Rust quotes it in a command line it shows (only when it needs it). */
export function shellQuote(word: string): string {
  return word !== "" && /^[A-Za-z0-9\-_./:=@%+,]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** One `KEY=value` word (its value quoted as Rust quotes it) at the end of a line. */
const LAST_VARIABLE = /(?:^|\s)([A-Za-z_][A-Za-z0-9_]*=(?:'(?:[^']|'\\'')*'|[A-Za-z0-9\-_./:=@%+,]*))$/;

/**
 * The program and its arguments (from `editText`, the line an edit starts from), with the
 * variables and the folder `commandLine` shows before them; null when `editText` holds no
 * program. Variables and folder are left out when `commandLine` does not read back exactly.
 */
export function commandParts(commandLine: string | null, editText: string | null): CommandParts | null {
  const words = editText === null ? null : shellWords(editText);
  if (!words || words.length === 0) return null;
  const [program, ...args] = words;
  const parts: CommandParts = { env: [], folder: null, program, args };
  const tail = words.map(shellQuote).join(" ");
  if (commandLine === null || !commandLine.endsWith(tail)) return parts;
  let before = commandLine.slice(0, commandLine.length - tail.length);
  if (before !== "" && !before.endsWith(" ")) return parts;
  before = before.trimEnd();
  const env: string[] = [];
  for (let found = LAST_VARIABLE.exec(before); found; found = LAST_VARIABLE.exec(before)) {
    const variable = shellWords(found[1]);
    if (!variable || variable.length !== 1) return parts;
    env.unshift(variable[0]);
    before = before.slice(0, found.index).trimEnd();
  }
  const folder = /^\(in (.+)\)$/s.exec(before);
  if (before !== "" && !folder) return parts;
  return { ...parts, env, folder: folder ? folder[1] : null };
}
