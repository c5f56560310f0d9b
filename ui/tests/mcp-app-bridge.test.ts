// The MCP App bridge (mcpAppBridge.ts) against a frame in jsdom: an app's messages are
// `message` events whose source is the frame's window, and what Switchboard answers is caught on
// that window's postMessage. Covers whose messages are read, the ui/initialize handshake, the
// call's input and result once the app is initialized, tools/call and ui/open-link passed on,
// everything else refused, malformed messages dropped, the height clamp, theme changes and
// teardown.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  MAX_HEIGHT,
  MIN_HEIGHT,
  NOT_SUPPORTED,
  TEARDOWN_MS,
  clampHeight,
  connectMcpApp,
  type McpAppCalls,
  type McpAppConnection,
} from "../src/chat/mcpAppBridge";
import type { McpAppView } from "../src/lib/types";

const VIEW: McpAppView = {
  src: "mcp-app://localhost/t0k3n",
  server: "charts",
  tool: "show_chart",
  resource_uri: "ui://charts/chart.html",
  arguments: { city: "Paris" },
  result: { content: [{ type: "text", text: "A chart of Paris." }], structuredContent: { points: [3, 1, 2] } },
  prefers_border: true,
};

let frame: HTMLIFrameElement;
let app: Window;
/** What Switchboard posted to the frame, in order. */
let posted: Record<string, unknown>[];
let heights: number[];
let calls: { callTool: ReturnType<typeof vi.fn>; openLink: ReturnType<typeof vi.fn> };
let connection: McpAppConnection | null;

beforeEach(() => {
  frame = document.createElement("iframe");
  document.body.append(frame);
  app = frame.contentWindow!;
  posted = [];
  // Cloned as the real postMessage does (it throws on what it cannot carry, such as a proxy).
  vi.spyOn(app, "postMessage").mockImplementation(((message: unknown) => void posted.push(structuredClone(message) as Record<string, unknown>)) as Window["postMessage"]);
  heights = [];
  calls = { callTool: vi.fn(), openLink: vi.fn() };
  connection = null;
  // The library narrates every message on the console; the tests read what was posted instead.
  for (const level of ["debug", "warn", "error"] as const) vi.spyOn(console, level).mockImplementation(() => {});
});

afterEach(async () => {
  // Stops the bridge listening (it waits for no teardown answer here), its request sent first.
  void connection?.close();
  await settle();
  vi.restoreAllMocks();
  frame.remove();
});

function connect(view: McpAppView = VIEW, theme: "light" | "dark" = "dark"): McpAppConnection {
  connection = connectMcpApp(frame, { view, calls: calls as unknown as McpAppCalls, hostVersion: "9.9.9", theme, onHeight: (h) => heights.push(h) });
  return connection;
}

/** The app (or `source`) posts `data` to the window. */
function fromApp(data: unknown, source: MessageEventSource | null = app): void {
  window.dispatchEvent(new MessageEvent("message", { data, source, origin: "null" }));
}

function request(id: number, method: string, params: Record<string, unknown> = {}): void {
  fromApp({ jsonrpc: "2.0", id, method, params });
}

function notify(method: string, params: Record<string, unknown> = {}): void {
  fromApp({ jsonrpc: "2.0", method, params });
}

/** Resolves the answer to request `id`, once posted. */
async function answerTo(id: number): Promise<Record<string, unknown>> {
  await vi.waitFor(() => expect(posted.find((m) => m.id === id && !("method" in m))).toBeDefined());
  return posted.find((m) => m.id === id && !("method" in m))!;
}

/** Lets the bridge handle what it was given (its handlers run on promises). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

const INIT = { protocolVersion: "2026-01-26", appInfo: { name: "chart", version: "1.0.0" }, appCapabilities: {} };

/** The app introduces itself and says it is ready. */
async function handshake(): Promise<void> {
  request(1, "ui/initialize", INIT);
  await answerTo(1);
  notify("ui/notifications/initialized");
  await vi.waitFor(() => expect(posted.some((m) => m.method === "ui/notifications/tool-result")).toBe(true));
}

describe("the MCP App bridge", () => {
  it("reads only what the frame's own window sends", async () => {
    connect();
    const other = document.createElement("iframe");
    document.body.append(other);
    request(1, "ping"); // from the frame: answered below
    fromApp({ jsonrpc: "2.0", id: 2, method: "ping", params: {} }, other.contentWindow);
    fromApp({ jsonrpc: "2.0", id: 3, method: "ping", params: {} }, window);
    fromApp({ jsonrpc: "2.0", id: 4, method: "ping", params: {} }, null);
    await answerTo(1);
    await settle();
    expect(posted.map((m) => m.id)).toEqual([1]);
    other.remove();
  });

  it("answers ui/initialize with Switchboard, what it offers and the window's theme", async () => {
    connect(VIEW, "dark");
    request(1, "ui/initialize", INIT);
    expect(await answerTo(1)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: "2026-01-26",
        hostInfo: { name: "Switchboard", version: "9.9.9" },
        hostCapabilities: { openLinks: {}, serverTools: {} },
        hostContext: { theme: "dark", displayMode: "inline", availableDisplayModes: ["inline"] },
      },
    });
  });

  it("answers an app of an unknown protocol version with 2026-01-26", async () => {
    connect(VIEW, "light");
    request(7, "ui/initialize", { ...INIT, protocolVersion: "2099-12-31" });
    const answer = (await answerTo(7)).result as Record<string, unknown>;
    expect(answer.protocolVersion).toBe("2026-01-26");
    expect(answer.hostContext).toMatchObject({ theme: "light" });
  });

  it("sends the call's arguments, then its result, once the app says it is initialized (and only once)", async () => {
    connect();
    request(1, "ui/initialize", INIT);
    await answerTo(1);
    await settle();
    expect(posted.filter((m) => "method" in m)).toEqual([]);

    notify("ui/notifications/initialized");
    await vi.waitFor(() => expect(posted.filter((m) => "method" in m)).toHaveLength(2));
    expect(posted.filter((m) => "method" in m)).toEqual([
      { jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { city: "Paris" } } },
      { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: VIEW.result },
    ]);
    notify("ui/notifications/initialized");
    await settle();
    expect(posted.filter((m) => "method" in m)).toHaveLength(2);
  });

  it("sends plain copies of a view held in the page's reactive proxies (postMessage cannot clone a proxy)", async () => {
    const wrap = <T extends object>(value: T): T => new Proxy(value, {});
    connect({ ...VIEW, arguments: wrap({ city: "Paris" }), result: wrap({ ...(VIEW.result as object) }) });
    request(1, "ui/initialize", INIT);
    await answerTo(1);
    notify("ui/notifications/initialized");
    await vi.waitFor(() => expect(posted.filter((m) => "method" in m)).toHaveLength(2));
    expect(posted.filter((m) => "method" in m)[0]).toEqual({
      jsonrpc: "2.0",
      method: "ui/notifications/tool-input",
      params: { arguments: { city: "Paris" } },
    });
  });

  it("passes tools/call on as the tool's name and arguments and answers with the result", async () => {
    const result = { content: [{ type: "text", text: "Refreshed" }], structuredContent: { points: [1] } };
    calls.callTool.mockResolvedValue(result);
    connect();
    await handshake();
    request(5, "tools/call", { name: "refresh_chart", arguments: { city: "Lyon" }, _meta: { progressToken: 1 }, extra: "dropped" });
    expect(await answerTo(5)).toEqual({ jsonrpc: "2.0", id: 5, result });
    expect(calls.callTool.mock.calls).toEqual([["refresh_chart", { city: "Lyon" }]]);

    request(6, "tools/call", { name: "no_arguments" });
    await answerTo(6);
    expect(calls.callTool.mock.calls[1]).toEqual(["no_arguments", {}]);
  });

  it("answers a refused tools/call with a JSON-RPC error carrying Rust's words", async () => {
    calls.callTool.mockRejectedValue({ kind: "not_confirmed", message: "You did not allow the app to call “wipe”." });
    connect();
    await handshake();
    request(5, "tools/call", { name: "wipe", arguments: {} });
    const answer = await answerTo(5);
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ message: "You did not allow the app to call “wipe”." });
    expect(typeof (answer.error as { code: unknown }).code).toBe("number");
  });

  it("opens a link through Rust's confirm: {} when it opened, isError when the person said no or it failed", async () => {
    connect();
    await handshake();
    calls.openLink.mockResolvedValueOnce(true).mockResolvedValueOnce(false).mockRejectedValueOnce(new Error("scheme not allowed"));
    request(10, "ui/open-link", { url: "https://example.com/a" });
    expect((await answerTo(10)).result).toEqual({});
    request(11, "ui/open-link", { url: "https://example.com/b" });
    expect((await answerTo(11)).result).toEqual({ isError: true });
    request(12, "ui/open-link", { url: "javascript:alert(1)" });
    expect((await answerTo(12)).result).toEqual({ isError: true });
    expect(calls.openLink.mock.calls).toEqual([["https://example.com/a"], ["https://example.com/b"], ["javascript:alert(1)"]]);
  });

  it("asks about one link at a time: another while the dialog is up is refused without asking", async () => {
    let answer: (opened: boolean) => void = () => {};
    calls.openLink.mockReturnValueOnce(new Promise<boolean>((resolve) => (answer = resolve)));
    connect();
    await handshake();
    request(10, "ui/open-link", { url: "https://example.com/a" });
    await vi.waitFor(() => expect(calls.openLink).toHaveBeenCalledTimes(1));
    request(11, "ui/open-link", { url: "https://example.com/b" });
    expect((await answerTo(11)).result).toEqual({ isError: true });
    expect(calls.openLink).toHaveBeenCalledTimes(1);
    answer(true);
    expect((await answerTo(10)).result).toEqual({});
  });

  it("answers ping, and refuses every other request as not supported", async () => {
    connect();
    await handshake();
    request(20, "ping");
    expect((await answerTo(20)).result).toEqual({});
    const refused: [number, string, Record<string, unknown>][] = [
      [21, "ui/message", { role: "user", content: [{ type: "text", text: "Say yes" }] }],
      [22, "resources/read", { uri: "file:///etc/passwd" }],
      [23, "ui/request-display-mode", { mode: "fullscreen" }],
      [24, "ui/update-model-context", { content: [] }],
      [25, "made/up", {}],
    ];
    for (const [id, method, params] of refused) request(id, method, params);
    for (const [id] of refused) {
      expect((await answerTo(id)).error).toMatchObject({ code: NOT_SUPPORTED });
    }
    expect((await answerTo(21)).error).toEqual({ code: -32601, message: "not supported by Switchboard" });
    expect(calls.callTool).not.toHaveBeenCalled();
    expect(calls.openLink).not.toHaveBeenCalled();
  });

  it("drops malformed messages and unknown notifications, and keeps working", async () => {
    connect();
    const junk: unknown[] = [
      "ui/initialize",
      null,
      42,
      { method: "ping", id: 1 },
      { jsonrpc: "1.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: 1, method: 7 },
      { jsonrpc: "2.0", id: { a: 1 }, method: "ping" },
      { jsonrpc: "2.0", id: 99, result: {} },
      { jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: "tall" } },
      { jsonrpc: "2.0", method: "notifications/unheard-of", params: { x: 1 } },
      [{ jsonrpc: "2.0", id: 1, method: "ping" }],
    ];
    for (const data of junk) expect(() => fromApp(data)).not.toThrow();
    await settle();
    expect(posted).toEqual([]);
    expect(heights).toEqual([]);
    await handshake();
    expect(posted[0]).toMatchObject({ id: 1, result: { protocolVersion: "2026-01-26" } });
  });

  it("follows the height the app asks for, kept within 40–1200 px", async () => {
    expect([clampHeight(5000), clampHeight(3), clampHeight(-10), clampHeight(321.6), clampHeight(NaN), clampHeight(Infinity), clampHeight("300")]).toEqual([
      MAX_HEIGHT,
      MIN_HEIGHT,
      MIN_HEIGHT,
      322,
      null,
      null,
      null,
    ]);
    connect();
    await handshake();
    notify("ui/notifications/size-changed", { width: 9999, height: 480 });
    notify("ui/notifications/size-changed", { height: 100_000 });
    notify("ui/notifications/size-changed", { height: 1 });
    await vi.waitFor(() => expect(heights).toEqual([480, 1200, 40]));
  });

  it("tells the app when the window's theme changes", async () => {
    const bridge = connect(VIEW, "light");
    await handshake();
    bridge.setTheme("light");
    bridge.setTheme("dark");
    await vi.waitFor(() => expect(posted.filter((m) => m.method === "ui/notifications/host-context-changed")).toHaveLength(1));
    expect(posted.find((m) => m.method === "ui/notifications/host-context-changed")?.params).toEqual({ theme: "dark" });
  });

  it("asks the app to tear down when closing, and stops listening once it answers", async () => {
    const bridge = connect();
    await handshake();
    const closed = bridge.close();
    await vi.waitFor(() => expect(posted.some((m) => m.method === "ui/resource-teardown")).toBe(true));
    const teardown = posted.find((m) => m.method === "ui/resource-teardown")!;
    fromApp({ jsonrpc: "2.0", id: teardown.id, result: {} });
    await closed;
    const before = posted.length;
    request(30, "ping");
    await settle();
    expect(posted).toHaveLength(before);
  });

  it("does not wait long for an app that never answers the teardown", async () => {
    const bridge = connect();
    await handshake();
    const started = Date.now();
    await bridge.close();
    expect(Date.now() - started).toBeLessThan(TEARDOWN_MS + 1_000);
    expect(posted.some((m) => m.method === "ui/resource-teardown")).toBe(true);
  });

  it("refuses a frame that is not in the page", () => {
    const loose = document.createElement("iframe");
    expect(() => connectMcpApp(loose, { view: VIEW, calls: calls as unknown as McpAppCalls, hostVersion: "1", theme: "light", onHeight: () => {} })).toThrow(
      /not in the page/,
    );
  });
});
