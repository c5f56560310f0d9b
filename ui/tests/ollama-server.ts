// A scripted Ollama server for the window's tests: the part of Ollama's API that lists, fetches
// and deletes models (`GET /api/tags`, `POST /api/show` with `capabilities`, `POST /api/pull`
// streamed as lines of JSON, `DELETE /api/delete`, `GET /api/ps`), on a port of 127.0.0.1 the
// system gives it. A pull sends its script's lines one after another, a short gap between them;
// one that holds waits at a line of its own until the test releases it (or its client goes away,
// as when Rust cancels it). Its listing can be made to fail for a number of requests. What it
// was asked is kept for the test to read. Stopped after the test.
// Test-only code.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

/** An installed model as `/api/tags` and `/api/show` tell it. */
export interface OllamaModel {
  name: string;
  /** bytes on disk */
  size?: number;
  family?: string;
  /** "3.2B" */
  parameters?: string;
  /** "Q4_K_M" */
  quantisation?: string;
  /** what `/api/show` says it can do ("completion", "tools", "vision"); absent: it says nothing */
  capabilities?: string[];
  /** the `num_ctx` its Modelfile sets (its window) */
  numCtx?: number;
}

/** What `/api/pull` answers. */
export interface PullScript {
  /** its lines, in order; a model named in the request is what a successful pull installs */
  lines: Record<string, unknown>[];
  /** milliseconds between lines */
  gap?: number;
  /** before sending the line at this index (the length: after them all) it waits for
   *  `release()`, or for its client to go */
  holdBefore?: number;
  /** installed once it ends with a `success` line; by default, the model asked for */
  installs?: OllamaModel;
}

/** One request the server received. */
export interface Received {
  method: string;
  path: string;
  body: unknown;
}

/** The lines of a pull of one 523 MB file, ending in success. */
export function pullLines(total = 523_000_000): Record<string, unknown>[] {
  const digest = "sha256:8934d96d3f08";
  return [
    { status: "pulling manifest" },
    { status: "pulling 8934d96d3f08", digest, total, completed: 0 },
    { status: "pulling 8934d96d3f08", digest, total, completed: 100_000_000 },
    { status: "pulling 8934d96d3f08", digest, total, completed: 250_000_000 },
    { status: "pulling 8934d96d3f08", digest, total, completed: 412_000_000 },
    { status: "pulling 8934d96d3f08", digest, total, completed: total },
    { status: "verifying sha256 digest" },
    { status: "writing manifest" },
    { status: "success" },
  ];
}

/** The lines of a pull of a model in two files (400 MB of weights, then 123 MB), ending in
 *  success; the sixth line (index 5) says 412 MB of the 523 MB are down. */
export function pullLayers(): Record<string, unknown>[] {
  const weights = { digest: "sha256:8934d96d3f08", total: 400_000_000 };
  const projector = { digest: "sha256:9f4e1c2a7b30", total: 123_000_000 };
  return [
    { status: "pulling manifest" },
    { status: "pulling 8934d96d3f08", ...weights, completed: 0 },
    { status: "pulling 8934d96d3f08", ...weights, completed: 200_000_000 },
    { status: "pulling 8934d96d3f08", ...weights, completed: 400_000_000 },
    { status: "pulling 9f4e1c2a7b30", ...projector, completed: 0 },
    { status: "pulling 9f4e1c2a7b30", ...projector, completed: 12_000_000 },
    { status: "pulling 9f4e1c2a7b30", ...projector, completed: 123_000_000 },
    { status: "verifying sha256 digest" },
    { status: "writing manifest" },
    { status: "success" },
  ];
}

export class OllamaServer {
  /** What `/api/tags` lists now (a pull adds, a delete removes). */
  models: OllamaModel[];
  /** What the next `/api/pull` answers. */
  pull: PullScript = { lines: pullLines(), gap: 20 };
  /** Every request, in order. */
  readonly received: Received[] = [];
  /** Whether a held pull's client went away before it was released (Rust cancelled it). */
  pullAbandoned = false;
  /** Whether a held pull is waiting now (its lines all sent). */
  pullHolding = false;
  /** How many of the next `/api/tags` requests fail (404: a failure not tried again). */
  failTags = 0;
  readonly #server: Server;
  #release: (() => void) | null = null;
  #released = false;

  private constructor(server: Server, models: OllamaModel[]) {
    this.#server = server;
    this.models = models;
  }

  /** A server listing `models`, listening on a port the system gave it. */
  static async start(models: OllamaModel[] = []): Promise<OllamaServer> {
    let self: OllamaServer | null = null;
    const server = createServer((req, res) => void self?.answer(req, res));
    self = new OllamaServer(server, models);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    running.push(self);
    return self;
  }

  /** Its address, as a provider's base URL. */
  get address(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** The requests to `path` (with `method`, if given). */
  asked(path: string, method?: string): Received[] {
    return this.received.filter((r) => r.path === path && (method === undefined || r.method === method));
  }

  /** Lets a held pull end (at once if it is already waiting, else when it comes to wait). */
  release(): void {
    this.#released = true;
    this.#release?.();
  }

  close(): void {
    this.#release?.();
    this.#server.closeAllConnections();
    this.#server.close();
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    const path = (req.url ?? "/").split("?")[0];
    const method = req.method ?? "GET";
    this.received.push({ method, path, body });
    const named = (body as { model?: string; name?: string } | null)?.model ?? (body as { name?: string } | null)?.name ?? "";
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };

    if (method === "GET" && path === "/api/tags" && this.failTags > 0) {
      this.failTags--;
      json(404, { error: "the list is not to be had just now" });
    } else if (method === "GET" && path === "/api/tags") {
      json(200, {
        models: this.models.map((m) => ({
          name: m.name,
          model: m.name,
          size: m.size,
          details: { family: m.family, parameter_size: m.parameters, quantization_level: m.quantisation, format: "gguf" },
        })),
      });
    } else if (method === "POST" && path === "/api/show") {
      const model = this.models.find((m) => m.name === named);
      if (!model) return json(404, { error: `model '${named}' not found` });
      json(200, {
        ...(model.capabilities ? { capabilities: model.capabilities } : {}),
        ...(model.numCtx ? { parameters: `num_ctx ${model.numCtx}` } : {}),
        model_info: { "general.architecture": model.family ?? "llama" },
      });
    } else if (method === "GET" && path === "/api/ps") {
      json(200, { models: [] });
    } else if (method === "DELETE" && path === "/api/delete") {
      const before = this.models.length;
      this.models = this.models.filter((m) => m.name !== named);
      if (this.models.length === before) return json(404, { error: `model '${named}' not found` });
      res.writeHead(200).end();
    } else if (method === "POST" && path === "/api/pull") {
      await this.streamPull(named, res);
    } else {
      json(404, { error: "not found" });
    }
  }

  private async streamPull(model: string, res: ServerResponse): Promise<void> {
    const script = this.pull;
    let gone = false;
    res.on("close", () => {
      if (!res.writableFinished) gone = true;
    });
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (const [index, line] of script.lines.entries()) {
      if (index === script.holdBefore) await this.held(res);
      if (gone) break;
      if (line.status === "success") {
        // Installed before it says so: Rust lists the models as soon as the pull ends.
        const installed = script.installs ?? {
          name: model,
          size: 523_000_000,
          family: "qwen3",
          parameters: "751.63M",
          quantisation: "Q4_K_M",
          capabilities: ["completion", "tools"],
        };
        this.models = [...this.models.filter((m) => m.name !== installed.name), installed];
      }
      res.write(`${JSON.stringify(line)}\n`);
      await pause(script.gap ?? 20);
      if (gone) break;
    }
    if (script.holdBefore !== undefined && script.holdBefore >= script.lines.length && !gone) await this.held(res);
    if (gone) {
      this.pullAbandoned = true;
      return;
    }
    res.end();
  }

  /** Waits until released or the client goes. */
  private async held(res: ServerResponse): Promise<void> {
    if (this.#released) return;
    this.pullHolding = true;
    await new Promise<void>((resolve) => {
      this.#release = resolve;
      res.on("close", () => resolve());
    });
    this.pullHolding = false;
    this.#release = null;
  }
}

const running: OllamaServer[] = [];

afterEach(() => {
  for (const server of running.splice(0)) server.close();
});
