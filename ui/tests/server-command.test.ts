// A local server's command line shown as chips on the Servers page: read back from the lines
// Rust gives (the shown command line, quoted as Rust quotes it, and the line an edit starts from).
import { describe, expect, it } from "vitest";
import { commandParts, shellQuote, shellWords } from "../src/servers/command";

describe("a server's command line as its parts", () => {
  it("splits words as a POSIX shell does", () => {
    expect(shellWords(`npx -y '@scope/pkg' "a \\"b\\"" c\\ d '' x'y'z`)).toEqual(["npx", "-y", "@scope/pkg", 'a "b"', "c d", "", "xyz"]);
    expect(shellWords(`sh -c 'it'\\''s'`)).toEqual(["sh", "-c", "it's"]);
    expect(shellWords("npx 'unclosed")).toBeNull();
  });

  it("quotes as Rust does", () => {
    expect(shellQuote("@scope/pkg@1.2.3")).toBe("@scope/pkg@1.2.3");
    expect(shellQuote("a b")).toBe("'a b'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote("")).toBe("''");
  });

  it("gives the program, its arguments, the variables put first and the folder", () => {
    expect(commandParts("npx -y @modelcontextprotocol/server-everything@2026.8.31", "npx -y @modelcontextprotocol/server-everything@2026.8.31")).toEqual({
      env: [],
      folder: null,
      program: "npx",
      args: ["-y", "@modelcontextprotocol/server-everything@2026.8.31"],
    });
    expect(
      commandParts(
        "(in /home/me/My bundles) DEBUG=1 TOKEN='<keychain:switchboard/x>' EMPTY='' python3 'a file.py' --name 'it'\\''s'",
        "python3 'a file.py' --name 'it'\\''s'",
      ),
    ).toEqual({
      env: ["DEBUG=1", "TOKEN=<keychain:switchboard/x>", "EMPTY="],
      folder: "/home/me/My bundles",
      program: "python3",
      args: ["a file.py", "--name", "it's"],
    });
    const script = "sleep 1000 & echo $! >> '/tmp/marks'; exec /bin/e stdio";
    expect(commandParts(`sh -c ${shellQuote(script)}`, `sh -c ${shellQuote(script)}`)?.args).toEqual(["-c", script]);
  });

  it("leaves out what does not read back, and gives nothing without a program", () => {
    // The shown line does not end with the program's words: the variables are not guessed.
    expect(commandParts("X=1 other line", "uvx mcp-server-time")).toEqual({ env: [], folder: null, program: "uvx", args: ["mcp-server-time"] });
    expect(commandParts("what is this uvx mcp-server-time", "uvx mcp-server-time")?.env).toEqual([]);
    expect(commandParts("streamable HTTP https://example.com/mcp", null)).toBeNull();
    expect(commandParts(null, "")).toBeNull();
  });
});
