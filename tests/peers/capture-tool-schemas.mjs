// Records the tool lists (names, descriptions, input schemas) that real MCP servers written by
// others publish, into tests/fixtures/mcp/tool-schemas.json. The provider tests check that
// every one of those schemas survives each API's rules (Gemini's above all).
//
// Run from the repository root after `npm install` in tests/peers (and, for the Python
// servers, `python3 -m venv tests/peers/.venv && tests/peers/.venv/bin/pip install
// mcp-server-time mcp-server-git`):  node tests/peers/capture-tool-schemas.mjs
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const peers = path.resolve("tests/peers");
const bin = (name) => path.join(peers, "node_modules/.bin", name);
const venv = (name) => path.join(peers, ".venv/bin", name);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-capture-"));
spawnSync("git", ["init", "-q", scratch]);

const servers = {
  everything: { command: bin("mcp-server-everything"), args: ["stdio"] },
  filesystem: { command: bin("mcp-server-filesystem"), args: [scratch] },
  memory: { command: bin("mcp-server-memory"), args: [], env: { MEMORY_FILE_PATH: path.join(scratch, "memory.jsonl") } },
  time: { command: venv("mcp-server-time"), args: ["--local-timezone", "UTC"] },
  git: { command: venv("mcp-server-git"), args: ["--repository", scratch] },
};

const out = {};
for (const [name, spec] of Object.entries(servers)) {
  if (!fs.existsSync(spec.command)) {
    console.error(`skipped ${name}: ${spec.command} is not installed`);
    continue;
  }
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...(spec.env ?? {}) },
    stderr: "ignore",
  });
  // Declaring these makes "everything" publish all of its tools.
  const client = new Client(
    { name: "switchboard-capture", version: "1" },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: false } } },
  );
  client.setRequestHandler((await import("@modelcontextprotocol/sdk/types.js")).ListRootsRequestSchema, async () => ({
    roots: [{ uri: `file://${scratch}`, name: "scratch" }],
  }));
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools.map((t) => ({ name: t.name, description: t.description ?? "", inputSchema: t.inputSchema })));
    cursor = page.nextCursor;
  } while (cursor);
  const version = client.getServerVersion();
  out[name] = { server: `${version?.name ?? name} ${version?.version ?? ""}`.trim(), tools };
  console.error(`${name}: ${tools.length} tools`);
  await client.close();
}
fs.rmSync(scratch, { recursive: true, force: true });
fs.writeFileSync(path.resolve("tests/fixtures/mcp/tool-schemas.json"), JSON.stringify(out, null, 2) + "\n");
