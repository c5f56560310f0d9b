// Each command is declared once, in Rust (switchboard-core's `ipc`): its `bindings` test writes
// the window's client (`ui/src/lib/commands.ts`) and the names build.rs grants
// (`src-tauri/core/commands.txt`). Checked here: the client the window imports has exactly the
// commands build.rs grants.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as commands from "../src/lib/commands";

const root = join(__dirname, "../..");

/** The names Rust declares, as build.rs reads them. */
function declared(): string[] {
  return readFileSync(join(root, "src-tauri/core/commands.txt"), "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

describe("command names", () => {
  it("the client has one function per command Rust declares", () => {
    const names = declared();
    expect(names.length).toBeGreaterThan(100);
    const camel = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
    expect(Object.keys(commands).sort()).toEqual(names.map(camel).sort());
  });
});
