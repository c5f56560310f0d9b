// Vitest's global setup: starts the core's test server (`ipc_serve`, an example of
// switchboard-core: the window's own commands over JSON lines on 127.0.0.1, each connection a
// fresh app) once for the run and gives its port to the tests (`inject("ipcServePort")`; null
// when the server is not built, and a test that needs it then says how to build it). Test-only.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    ipcServePort: number | null;
    /** The test peers: tests/peers, and the Python of its virtual environment. */
    peers: { folder: string; python: string };
  }
}

/** Where the server is: $SWITCHBOARD_IPC_SERVE, else the cargo target folder's example. */
function serverPath(): string | null {
  const named = process.env.SWITCHBOARD_IPC_SERVE;
  const target = process.env.CARGO_TARGET_DIR ?? join(__dirname, "../../target");
  const path = named ?? join(target, "debug/examples/ipc_serve");
  return existsSync(path) ? path : null;
}

let server: ChildProcess | null = null;

export default async function setup(project: TestProject): Promise<() => void> {
  const folder = join(__dirname, "../../tests/peers");
  project.provide("peers", { folder, python: join(folder, ".venv/bin/python") });
  const path = serverPath();
  if (path === null) {
    project.provide("ipcServePort", null);
    return () => {};
  }
  const child = spawn(path, [], { stdio: ["pipe", "pipe", "inherit"] });
  server = child;
  const port = await new Promise<number>((resolve, reject) => {
    let said = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      const found = /listening on 127\.0\.0\.1:(\d+)/.exec(said);
      if (found) resolve(Number(found[1]));
    });
    child.on("exit", (code) => reject(new Error(`ipc_serve ended (${code}) before it listened: ${said}`)));
  });
  project.provide("ipcServePort", port);
  return () => {
    // Closing its standard input ends it (and it ends by itself should this process die).
    server?.stdin?.end();
    server = null;
  };
}
