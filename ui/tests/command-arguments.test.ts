// Every call in ipc.ts must name the arguments its Rust command takes, the way Tauri reads them:
// a `snake_case` parameter is the key `camelCase`, `State`, `AppHandle` and `Window` are filled
// in by Tauri, and an `Option` may be left out. A key Rust does not take is dropped without a
// word and a required key left out fails only at run time ("missing required key"), in the one
// window that calls it; this finds both in the test command. command-names.test.ts checks that
// the names themselves agree.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "../..");
const read = (path: string): string => readFileSync(join(root, path), "utf8");

/** What Tauri fills in itself: never a key the window sends. */
const INJECTED = /^(?:tauri::)?(?:State|AppHandle|Window)\b/;

interface Parameter {
  key: string;
  optional: boolean;
}

/**
 * Splits `text` at the commas that are not inside brackets or a string: the parameters of a Rust
 * signature, the properties of a TypeScript object literal.
 */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if ("([{<".includes(c)) depth++;
    else if (")]}>".includes(c) && !(c === ">" && text[i - 1] === "=")) depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

/** The text between the bracket at `open` and the one that closes it. */
function inside(text: string, open: number): string {
  const pairs: Record<string, string> = { "(": ")", "{": "}", "[": "]" };
  const stack: string[] = [];
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c in pairs) stack.push(pairs[c]);
    else if (c === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return text.slice(open + 1, i);
    }
  }
  throw new Error(`unclosed bracket at ${open}`);
}

const camel = (snake: string): string => snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Each `#[tauri::command]` in src-tauri/commands: its name and the keys it reads. */
function commands(): Map<string, Parameter[]> {
  const found = new Map<string, Parameter[]>();
  const dir = join(root, "src-tauri/commands");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".rs"))) {
    // Lifetimes (`State<'_, …>`) out first: their quote would read as a string's.
    const text = readFileSync(join(dir, file), "utf8").replace(/'(?:_|[a-z]\w*)\b(?!')/g, "");
    for (const m of text.matchAll(/#\[tauri::command[^\]]*\]\s*pub\s+(?:async\s+)?fn\s+(\w+)(?:<[^(]*>)?\(/g)) {
      const attribute = m[0];
      expect(attribute, `${m[1]}: a rename_all changes the keys this test expects`).not.toContain("rename_all");
      const parameters = splitTopLevel(inside(text, m.index + m[0].length - 1))
        .map((p) => /^(?:mut\s+)?(\w+)\s*:\s*([\s\S]+)$/.exec(p))
        .map((p, i) => {
          expect(p, `${m[1]}: parameter ${i + 1} reads as name: type`).not.toBeNull();
          return p!;
        })
        .filter(([, , type]) => !INJECTED.test(type))
        .map(([, name, type]) => ({ key: camel(name.replace(/^_+/, "")), optional: /^Option\s*</.test(type) }));
      found.set(m[1], parameters);
    }
  }
  return found;
}

/** Each `call("name", args)` in ipc.ts: the name and every key set its arguments can have. */
function calls(): { name: string; keySets: string[][] }[] {
  const text = read("ui/src/lib/ipc.ts");
  const found: { name: string; keySets: string[][] }[] = [];
  for (const m of text.matchAll(/\bcall(?:<[^(]*>)?\(\s*"([a-z_]+)"/g)) {
    const open = m.index + m[0].indexOf("(");
    const rest = splitTopLevel(inside(text, open)).slice(1);
    expect(rest.length, `${m[1]}: call() takes a name and at most one object`).toBeLessThanOrEqual(1);
    if (rest.length === 0) {
      found.push({ name: m[1], keySets: [[]] });
      continue;
    }
    // The arguments are one object literal, or an expression choosing among literals.
    const literals: string[] = [];
    for (let i = 0; i < rest[0].length; i++) {
      if (rest[0][i] !== "{") continue;
      const body = inside(rest[0], i);
      literals.push(body);
      i += body.length + 1;
    }
    expect(literals.length, `${m[1]}: its arguments are written as object literals`).toBeGreaterThan(0);
    const keySets = literals.map((body) =>
      splitTopLevel(body).map((property) => {
        expect(property.startsWith("..."), `${m[1]}: a spread hides which keys are sent`).toBe(false);
        const key = /^(\w+)\s*(?::|$)/.exec(property);
        expect(key, `${m[1]}: property "${property}" reads as key or key: value`).not.toBeNull();
        return key![1];
      }),
    );
    found.push({ name: m[1], keySets });
  }
  return found;
}

describe("command arguments", () => {
  it("every call in ipc.ts sends the keys its Rust command reads, and only those", () => {
    const rust = commands();
    const sent = calls();
    expect(sent.length).toBeGreaterThan(100);
    const problems: string[] = [];
    for (const { name, keySets } of sent) {
      const parameters = rust.get(name);
      if (!parameters) {
        problems.push(`${name}: no #[tauri::command] of that name in src-tauri/commands`);
        continue;
      }
      const known = new Set(parameters.map((p) => p.key));
      for (const keys of keySets) {
        for (const key of keys) if (!known.has(key)) problems.push(`${name}: sends "${key}", which Rust does not read`);
        for (const p of parameters) {
          if (!p.optional && !keys.includes(p.key)) problems.push(`${name}: leaves out "${p.key}", which Rust requires`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("reads the shapes it checks: a literal, an expression choosing literals, none", () => {
    const byName = new Map(calls().map((c) => [c.name, c.keySets]));
    expect(byName.get("app_status")).toEqual([[]]);
    expect(byName.get("rename_conversation")).toEqual([["id", "title"]]);
    expect(byName.get("create_conversation")).toEqual([["title"], ["title", "profile"]]);
    const rust = commands();
    expect(rust.get("send_message")).toEqual([
      { key: "conversationId", optional: false },
      { key: "text", optional: true },
      { key: "attachments", optional: true },
      { key: "onEvent", optional: false },
    ]);
  });
});
