// The MCP App bridge's libraries (Zod under them) must not build code from strings: the window's
// CSP has no 'unsafe-eval', and even a probe that is caught is reported as a violation. Loads the
// bridge (in a file of its own, so nothing loaded Zod before) with `Function` watched, and runs a
// handshake through its schemas.
import { expect, it, vi } from "vitest";

it("loads and answers an app without ever calling Function", async () => {
  const real = globalThis.Function;
  const built: unknown[][] = [];
  // jsdom's own selector engine (nwsapi) compiles its selectors: the window's engine does not.
  const note = (args: unknown[]) => {
    if (!new Error().stack?.includes("nwsapi")) built.push(args);
  };
  globalThis.Function = new Proxy(real, {
    construct(target, args, newTarget) {
      note(args);
      return Reflect.construct(target, args, newTarget) as object;
    },
    apply(target, self, args) {
      note(args);
      return Reflect.apply(target, self, args) as unknown;
    },
  });
  for (const level of ["debug", "warn", "error"] as const) vi.spyOn(console, level).mockImplementation(() => {});
  try {
    const { connectMcpApp } = await import("../src/chat/mcpAppBridge");
    const frame = document.createElement("iframe");
    document.body.append(frame);
    const app = frame.contentWindow!;
    const posted: Record<string, unknown>[] = [];
    vi.spyOn(app, "postMessage").mockImplementation(((m: unknown) => void posted.push(m as Record<string, unknown>)) as Window["postMessage"]);
    const connection = connectMcpApp(frame, {
      view: { src: "mcp-app://localhost/x", server: "s", tool: "t", resource_uri: "ui://s/t", arguments: {}, result: { content: [] }, prefers_border: false },
      calls: { callTool: async () => ({ content: [] }), openLink: async () => true },
      hostVersion: "1",
      theme: "light",
      onHeight: () => {},
    });
    const send = (data: unknown) => window.dispatchEvent(new MessageEvent("message", { data, source: app }));
    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: { name: "a", version: "1" }, appCapabilities: {} } });
    send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "t", arguments: { a: 1 } } });
    await vi.waitFor(() => expect(posted.filter((m) => m.id === 2 || m.method === "ui/notifications/tool-result")).toHaveLength(2));
    void connection.close();
    frame.remove();
  } finally {
    globalThis.Function = real;
  }
  expect(built).toEqual([]);
});
