// The real core behind the window in a test: the mocked `invoke` is forwarded to the core's test
// server (`ipc_serve`, started by global-backend.ts), where each test gets a fresh app over a
// temporary home with the window's own commands, rules and errors. What stays scripted is what a
// person does at Rust's native dialogs (`host`), and a failure no reachable rule produces
// (`failNext`). Test-only code.
import { AsyncLocalStorage } from "node:async_hooks";
import { spawn, type ChildProcess } from "node:child_process";
import { connect, type Socket } from "node:net";
import { invoke } from "@tauri-apps/api/core";
import { afterEach, expect, inject, vi } from "vitest";
import * as ipc from "../src/lib/ipc";
import type { Decision, RunEvent, UpdateProgress, UpdateStatus } from "../src/lib/bindings";
import type { AttachmentRef, CommandError } from "../src/lib/types";
import { channels } from "./tauri-core-mock";
import { settleStores } from "./render-with-stores";

export interface Call {
  cmd: string;
  args: Record<string, unknown> | undefined;
}

/** What the person does at the native dialogs (yes or no, the file or folder picked), whether
 *  their browser follows a page it is asked to open (a sign-in page sends it back with a code),
 *  and what the shell's updater finds: the update address's answer, the release's download,
 *  why installing it fails. */
export interface HostScript {
  confirm?: boolean;
  file?: string | null;
  files?: string[];
  folder?: string | null;
  browser?: boolean;
  update?: UpdateStatus | null;
  download?: UpdateProgress[];
  installFails?: "bad_signature" | "nothing_checked" | { install: string } | { network: string } | null;
  /** What a new terminal has (for the `switchboard` command): this program's file, the
   *  person's home, the PATH's folders and the login shell; `~/` is the session's `home()`. */
  terminal?: { exe?: string; home?: string; path?: string[]; shell?: string | null };
}

/** A model server of the OpenAI API's shape: what its `/models` lists (entries as the API
 *  gives them: `id`, and `pricing`, `context_length`… where a test needs them), the pieces each
 *  chat completion streams, or an HTTP status every request gets instead. */
export interface ModelServer extends Turn {
  models?: Record<string, unknown>[];
  /** What each chat completion answers in order (the last one again once they run out);
   *  without, every one answers as the script itself says. */
  turns?: Turn[];
}

/** What one chat completion answers: an HTTP `status` instead (with `message`), else the pieces
 *  of `answer`, the `tools` it calls, then its end with `usage` in tokens. A turn that holds
 *  waits for `release` before its end. */
export interface Turn {
  /** Answered only to requests for this model. Once any turn names one, each model takes its
   *  own turns (those naming it or none) in order; otherwise turns go in the order asked. */
  model?: string;
  answer?: string[];
  tools?: { name: string; arguments?: Record<string, unknown> }[];
  usage?: { input: number; output: number };
  hold?: boolean;
  status?: number;
  message?: string;
}

/** A question a native dialog was asked. */
export interface Asked {
  dialog: string;
  title: string;
  message: string;
}

/** A turn of conversation `conversationId` sent with `text` (and the kept files `files`) as the
 *  window sends it, run to its end, each tool call it asks about answered `decision`; its
 *  `run_finished`. */
export function runTurn(
  conversationId: string,
  text: string,
  files?: AttachmentRef[],
  decision: Decision = "allow_once",
): Promise<RunEvent> {
  return new Promise<RunEvent>((resolve, reject) => {
    const onEvent = (event: RunEvent) => {
      if (event.type === "approval_required") {
        const answers = event.calls.map((c) => ({ call_id: c.call_id, decision }));
        ipc.answerApproval(event.request_id, answers).catch(reject);
      } else if (event.type === "run_finished") resolve(event);
    };
    ipc.sendMessage(conversationId, text, onEvent, files).catch(reject);
  });
}

/** The backend whose `seed` the current async context runs in. */
const seeding = new AsyncLocalStorage<RealBackend>();

type Waiting = { resolve: (value: unknown) => void; reject: (error: unknown) => void };

export class RealBackend {
  /** Every command the window called, in order (not what a test's `seed` sent). */
  readonly calls: Call[] = [];
  /** Milliseconds the window waits for a command's answer beyond the core's own time (the
   *  answer is worked out when the call arrives, so a slow one can be stale when it lands). */
  delay: (cmd: string) => number = () => 0;
  #socket: Socket;
  #next = 0;
  #waiting = new Map<number, Waiting>();
  #failures = new Map<string, CommandError>();
  /** The test closed it: what still waits is left unanswered, as a window that went away. */
  #closed = false;

  private constructor(socket: Socket) {
    this.#socket = socket;
    let pending = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      pending += chunk;
      let end: number;
      while ((end = pending.indexOf("\n")) >= 0) {
        this.#receive(JSON.parse(pending.slice(0, end)) as Record<string, unknown>);
        pending = pending.slice(end + 1);
      }
    });
    // A server that went away fails what waits for it, saying so, rather than leaving the test
    // to time out.
    const gone = (why: string) => {
      if (this.#closed) return;
      for (const waiting of this.#waiting.values()) waiting.reject(new Error(`ipc_serve: ${why}`));
      this.#waiting.clear();
    };
    socket.on("error", (e) => gone(e.message));
    socket.on("close", () => gone("the connection closed"));
  }

  /** A session of its own: a fresh app. */
  static async connect(): Promise<RealBackend> {
    const port = inject("ipcServePort");
    if (port === null) {
      throw new Error(
        "The UI's tests need the core's test server: cargo build -p switchboard-core --example ipc_serve " +
          "(bash scripts/bootstrap.sh test builds it), or SWITCHBOARD_IPC_SERVE=its path.",
      );
    }
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    return new RealBackend(socket);
  }

  #receive(message: Record<string, unknown>): void {
    if (typeof message.channel === "number") {
      channels.get(message.channel)?.onmessage(message.message as never);
      return;
    }
    const waiting = this.#waiting.get(message.id as number);
    if (!waiting) return;
    this.#waiting.delete(message.id as number);
    if ("err" in message) waiting.reject(message.err);
    else waiting.resolve(message.ok);
  }

  #send(request: Record<string, unknown>): Promise<unknown> {
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#socket.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  }

  /** What the mocked `invoke` does: the command, run by the core. */
  invoke = async (cmd: string, args?: Record<string, unknown>): Promise<unknown> => {
    // The test's own setup (`seed`), told apart from the window's calls made meanwhile by the
    // async context it runs in.
    if (seeding.getStore() === this) return this.#send({ cmd, args: args ?? {} });
    this.calls.push({ cmd, args });
    const wait = this.delay(cmd);
    const failure = this.#failures.get(cmd);
    this.#failures.delete(cmd);
    const answer = failure ? Promise.reject(failure) : this.#send({ cmd, args: args ?? {} });
    if (wait > 0) {
      // Settled either way before the wait, so a rejection is not left unhandled meanwhile.
      await Promise.allSettled([answer, new Promise((resolve) => setTimeout(resolve, wait))]);
    }
    return answer;
  };

  callsTo(cmd: string): Call[] {
    return this.calls.filter((call) => call.cmd === cmd);
  }

  /** Runs `work` (calls of the generated client) as the test's setup: not recorded in `calls`,
   *  never delayed nor failed. */
  async seed<T>(work: () => Promise<T>): Promise<T> {
    return seeding.run(this, work);
  }

  /** The next call of `cmd` fails with `error`, without reaching the core. */
  failNext(cmd: string, error: CommandError): void {
    this.#failures.set(cmd, error);
  }

  /** What the person does at the native dialogs from now on (the fields given). */
  async host(script: HostScript): Promise<void> {
    await this.#send({ host: script });
  }

  /** Starts a model server as `script` says; its address, for a provider's base URL. */
  async modelServer(script: ModelServer): Promise<string> {
    return (await this.#send({ provider: script })) as string;
  }

  /** A provider called `name` of the OpenAI API's kind, at a model server of its own as
   *  `script` says, with a key unless `key` is null; the server's address. */
  async addProvider(name: string, script: ModelServer = {}, key: string | null = "sk-test"): Promise<string> {
    const base_url = await this.modelServer(script);
    await this.seed(() => ipc.addProvider({ name, kind: "openai", base_url, default_model: null, api_key: key }));
    return base_url;
  }

  /** Lets one held turn of the model server at `address` end (a release sent while nothing is
   *  held is kept for the next held turn; a turn whose client went takes none). */
  async release(address: string): Promise<void> {
    await this.#send({ release: address });
  }

  /** The chat completions' request bodies the model server at `address` received, in order. */
  async received(address: string): Promise<Record<string, unknown>[]> {
    return (await this.#send({ received: address })) as Record<string, unknown>[];
  }

  /** Adds (and approves, unless the host says no) the MCP server `name` running the test peer
   *  tests/peers/fault_server.py with `flags` (see its docstring for its tools). */
  async addFaultServer(name = "fault", ...flags: string[]): Promise<void> {
    await this.addServer(name, peer("fault_server.py", ...flags));
  }

  /** Adds (and approves, unless the host says no) the MCP server `name` running `line`, and
   *  waits until it runs with its tools listed. */
  async addServer(name: string, line: string): Promise<void> {
    await this.seed(async () => {
      await ipc.addMcpServer(name, line);
      // Started in the background: ready once it runs with its tools listed.
      const deadline = Date.now() + 15_000;
      for (;;) {
        const server = (await ipc.listMcpServers()).find((s) => s.name === name);
        if (server?.state?.state === "running" && server.state.tools > 0) return;
        if (Date.now() > deadline) throw new Error(`the test peer ${name} did not start: ${JSON.stringify(server)}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    });
  }

  /** Waits (15 s at most) until Rust lists the MCP server `name` in `state` (`running`,
   *  `needs_sign_in`…), as setup. */
  async serverIs(name: string, state: string): Promise<void> {
    await this.seed(() =>
      vi.waitFor(
        async () => expect((await ipc.listMcpServers()).find((s) => s.name === name)?.state?.state).toBe(state),
        { timeout: 15_000, interval: 25 },
      ),
    );
  }

  /** A turn of conversation `conversationId` sent with `text` (and the kept files `files`), run
   *  to its end as setup ([`runTurn`], not recorded); its `run_finished`. */
  async run(conversationId: string, text: string, files?: AttachmentRef[], decision: Decision = "allow_once"): Promise<RunEvent> {
    return this.seed(() => runTurn(conversationId, text, files, decision));
  }

  /** A drag over the window as the shell tells it: over, left, or these files dropped (Rust
   *  keeps them and tells the window what it kept). Whether the window listened. */
  async drop(what: "over" | "left" | { paths: string[] }): Promise<boolean> {
    return (await this.#send({ drop: what })) as boolean;
  }

  /** The app again, as after a restart (the keys and settings kept), opened with a keychain
   *  that cannot be reached (saying `keychainUnreachable`) over the same home, or over a home of
   *  its own whose database file is not one (`databaseBroken`); it looks for model servers
   *  running on this computer at `localServers` (preset id → a `modelServer`'s address), and
   *  nowhere else; servers' programs are looked for on `searchPath` (its folders) when given. */
  async reopen(opening: {
    keychainUnreachable?: string;
    databaseBroken?: boolean;
    localServers?: Partial<Record<"ollama" | "lm_studio", string>>;
    searchPath?: string[];
  }): Promise<void> {
    await this.#send({ reopen: opening });
  }

  /** The requests the app recorded (oldest first), dated at `dates` (ms since 1970, one each)
   *  as if made then: Rust dates each request by its own clock. */
  async dateUsage(dates: number[]): Promise<void> {
    await this.#send({ dateUsage: dates });
  }

  /** The session's home: the person's, where the `switchboard` command is put (`~/` in the
   *  host's `terminal` script). */
  async home(): Promise<string> {
    return (await this.#send({ home: true })) as string;
  }

  /** A `switchboard://` link handed to the app by the system; what it proposes (as the
   *  window is shown it), or the core's refusal. */
  async link(link: string): Promise<unknown> {
    return this.#send({ link });
  }

  /** Every question the native dialogs were asked, in order. */
  async asked(): Promise<Asked[]> {
    return (await this.#send({ asked: true })) as Asked[];
  }

  close(): void {
    this.#closed = true;
    this.#socket.end();
  }
}

/** The command line of the test peer `file` in tests/peers with `flags`: a Python one (.py) run
 *  by the peers' Python, else a program of its node_modules/.bin (server-everything…). */
export function peer(file: string, ...flags: string[]): string {
  const peers = inject("peers");
  const program = file.endsWith(".py") ? `${peers.python} ${peers.folder}/${file}` : `${peers.folder}/node_modules/.bin/${file}`;
  return [program, ...flags].join(" ");
}

/** The HTTP peers started in this test, stopped after it. */
const httpPeers: ChildProcess[] = [];

/**
 * `raw_server.py --http` with `flags` (`--oauth -`, `--step-up`…), listening on a port of
 * 127.0.0.1 the system gave it; its `/mcp` address. Stopped after the test.
 */
export async function httpPeer(...flags: string[]): Promise<string> {
  const peers = inject("peers");
  const child = spawn(peers.python, [`${peers.folder}/raw_server.py`, "--http", ...flags], { stdio: ["ignore", "pipe", "pipe"] });
  httpPeers.push(child);
  return new Promise<string>((resolve, reject) => {
    let said = "";
    const hear = (chunk: Buffer) => {
      said += chunk.toString();
      const found = /LISTENING (\S+)/.exec(said);
      if (found) resolve(found[1]);
    };
    child.stdout?.on("data", hear);
    child.stderr?.on("data", hear);
    child.once("exit", (code) => reject(new Error(`raw_server.py ${flags.join(" ")} exited (${code}) before listening: ${said}`)));
  });
}

let open: RealBackend | null = null;

afterEach(() => {
  open?.close();
  open = null;
  for (const child of httpPeers.splice(0)) child.kill();
});

/** A fresh app behind the mocked `invoke` from now on (closed after the test); call it in `beforeEach`. */
export async function installRealBackend(): Promise<RealBackend> {
  settleStores();
  open?.close();
  const backend = await RealBackend.connect();
  open = backend;
  vi.mocked(invoke).mockReset();
  vi.mocked(invoke).mockImplementation(backend.invoke as typeof invoke);
  return backend;
}
