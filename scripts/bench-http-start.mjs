// Times the start of a streamable-HTTP MCP server on the real App (BENCHMARKS.md, session 40):
// ipc_serve, raw_server.py --http (no session id), add by URL, until it runs; five starts, in ms.
// node scripts/bench-http-start.mjs IPC_SERVE PYTHON tests/peers/raw_server.py
import { spawn } from "node:child_process";
import { connect } from "node:net";
import readline from "node:readline";
const serve = spawn(process.argv[2], [], { stdio: ["pipe", "pipe", "inherit"] });
const port = await new Promise((r) => readline.createInterface({ input: serve.stdout }).on("line", (l) => { const m = /127\.0\.0\.1:(\d+)/.exec(l); if (m) r(Number(m[1])); }));
const peer = spawn(process.argv[3], [process.argv[4], "--http", ...process.argv.slice(5)], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((r) => readline.createInterface({ input: peer.stdout }).on("line", (l) => { const m = /LISTENING (\S+)/.exec(l); if (m) r(m[1]); }));
const socket = connect(port, "127.0.0.1");
let id = 0; const waiting = new Map();
readline.createInterface({ input: socket }).on("line", (l) => { const m = JSON.parse(l); if (m.id && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); } });
const call = (cmd, args) => new Promise((r) => { const n = ++id; waiting.set(n, r); socket.write(JSON.stringify({ id: n, cmd, args }) + "\n"); });
const times = [];
for (let i = 0; i < 5; i++) {
  const name = `h${i}`;
  const t0 = performance.now();
  await call("add_mcp_server", { name, commandLine: null, url });
  for (;;) { const s = (await call("list_mcp_servers", {})).ok.find((x) => x.name === name); if (s?.state?.state === "running") break; await new Promise((r) => setTimeout(r, 10)); }
  times.push(Math.round(performance.now() - t0));
}
console.log(JSON.stringify(times));
socket.end(); peer.kill(); serve.stdin.end(); serve.kill();
process.exit(0);
