// The window's commands are named in four places that must agree: the calls in ipc.ts, the
// shell's one `generate_handler!` list (src-tauri/lib.rs), the permission set build.rs makes
// for them, and the capability that grants them to the window. A command in one and not the
// others is "not found" or "not allowed" only at run time, in the one window that calls it;
// this finds it in the test command. The fake backend answers only commands Rust has.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FakeBackend } from "./fake-backend";

const root = join(__dirname, "../..");
const read = (path: string): string => readFileSync(join(root, path), "utf8");
const sorted = (names: Iterable<string>): string[] => [...new Set(names)].sort();
const all = (text: string, pattern: RegExp): string[] => [...text.matchAll(pattern)].map((m) => m[1]);

/** The names ipc.ts invokes: each `call("name", …)`. */
function called(): string[] {
  return sorted(all(read("ui/src/lib/ipc.ts"), /\bcall(?:<[^(]*>)?\(\s*"([a-z_]+)"/g));
}

/** The commands the shell registers: the paths in `generate_handler![…]`, by their last part. */
function registered(): string[] {
  const lib = read("src-tauri/lib.rs");
  const list = /generate_handler!\[([^\]]*)\]/.exec(lib);
  expect(list, "src-tauri/lib.rs has a generate_handler! list").not.toBeNull();
  return sorted(all(list![1], /commands::\w+::(\w+)/g));
}

/** The commands build.rs makes permissions for. */
function permitted(): string[] {
  const list = /const COMMANDS: &\[&str\] = &\[([^\]]*)\]/.exec(read("build.rs"));
  expect(list, "build.rs has a COMMANDS list").not.toBeNull();
  return sorted(all(list![1], /"([a-z_]+)"/g));
}

/** The commands the main window's capability grants (`allow-name-with-dashes`). */
function granted(): string[] {
  const capability = JSON.parse(read("src-tauri/capabilities/main.json")) as { permissions: unknown[] };
  return sorted(
    capability.permissions
      .filter((p): p is string => typeof p === "string" && p.startsWith("allow-"))
      .map((p) => p.slice("allow-".length).replaceAll("-", "_")),
  );
}

describe("command names", () => {
  it("are the same in ipc.ts, the shell's handler list, build.rs and the window's capability", () => {
    const names = called();
    expect(names.length).toBeGreaterThan(100);
    expect(registered()).toEqual(names);
    expect(permitted()).toEqual(names);
    expect(granted()).toEqual(names);
  });

  it("the fake backend answers none that Rust lacks", () => {
    const known = new Set(called());
    expect(new FakeBackend().commands().filter((name) => !known.has(name))).toEqual([]);
  });
});
