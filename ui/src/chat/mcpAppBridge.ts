// The host side of an MCP App (SEP-1865) in a tool card: the JSON-RPC bridge between the app's
// sandboxed frame and Switchboard, over postMessage. Built on the extension's own AppBridge and
// PostMessageTransport (@modelcontextprotocol/ext-apps), given no MCP client: every request the
// app may make is answered here, and only these —
//   ui/initialize        Switchboard's name and version, what it offers (links, the server's
//                        tools), the theme, inline display only; the app's protocol version when
//                        the library knows it, else 2026-01-26
//   tools/call           a tool of the app's own server, only its name and arguments passed on
//                        (Rust checks the server and applies the conversation's approvals)
//   ui/open-link         after Rust's native confirm; one at a time, so an app cannot stack
//                        dialogs; `isError` when the person said no or it failed
//   ping                 {}
//   anything else        -32601 "not supported by Switchboard" (ui/message, resources/read,
//                        ui/request-display-mode…)
// Once the app says it is initialized it gets the call's arguments, then its result. Its
// size-changed heights are clamped before the card follows them. Messages from any other window
// than the frame are not read (the transport compares `event.source`; the frame's origin is
// opaque, "null"); malformed ones are dropped. Everything the app sends is hostile: it reaches
// Rust only as a tool name and an arguments object, and the person only through Rust's dialogs.
// This module and its libraries (with Zod, told first not to generate code: zod-jitless.ts) load
// with McpAppFrame.svelte, a chunk of its own of about 61 KB gzipped.

import "./zod-jitless";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import type { McpUiHostContext } from "@modelcontextprotocol/ext-apps/app-bridge";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { toIpcError } from "../lib/errors";
import type { McpAppView } from "../lib/types";

export type AppTheme = "light" | "dark";

/** The frame's height before the app says what it needs, and the bounds of what it may ask. */
export const START_HEIGHT = 200;
export const MIN_HEIGHT = 40;
export const MAX_HEIGHT = 1200;

/** How long closing waits for the app to answer ui/resource-teardown. */
export const TEARDOWN_MS = 300;

/** JSON-RPC's "method not found". */
export const NOT_SUPPORTED = -32601;

/** What the app may have Switchboard do, for its own call (ChatSession.appHost builds it). */
export interface McpAppCalls {
  /** Calls `tool` of the app's server with `args`: the raw CallToolResult; rejects with Rust's words. */
  callTool(tool: string, args: Record<string, unknown>): Promise<unknown>;
  /** Opens `url` after Rust's native confirm: whether it was opened. */
  openLink(url: string): Promise<boolean>;
}

export interface McpAppOptions {
  view: McpAppView;
  calls: McpAppCalls;
  /** Switchboard's version, for the app's hostInfo */
  hostVersion: string;
  theme: AppTheme;
  /** the height (px, clamped) the app asked for */
  onHeight: (height: number) => void;
}

export interface McpAppConnection {
  /** Tells the app the window's theme changed. */
  setTheme(theme: AppTheme): void;
  /** Asks the app to tear down (waiting TEARDOWN_MS at most), then stops listening. */
  close(): Promise<void>;
}

/** A height the card can take: `height` rounded into MIN_HEIGHT..MAX_HEIGHT; null when it is no number. */
export function clampHeight(height: unknown): number | null {
  if (typeof height !== "number" || !Number.isFinite(height)) return null;
  return Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.round(height)));
}

/** An error the library answers with as a JSON-RPC error of this code and message. */
class RpcError extends Error {
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

function notSupported(): never {
  throw new RpcError(NOT_SUPPORTED, "not supported by Switchboard");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Starts the bridge with the app in `frame` (already in the page, its `src` the view's). Listens
 * at once, so the app's first message is heard; throws when the frame has no window.
 */
export function connectMcpApp(frame: HTMLIFrameElement, options: McpAppOptions): McpAppConnection {
  const target = frame.contentWindow;
  if (!target) throw new Error("The app's frame is not in the page.");
  const { view, calls } = options;

  const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  let context: McpUiHostContext = { theme: options.theme, displayMode: "inline", availableDisplayModes: ["inline"] };
  const bridge = new AppBridge(
    null,
    { name: "Switchboard", version: options.hostVersion },
    { openLinks: {}, serverTools: {} },
    { hostContext: context },
  );

  bridge.oncalltool = async (params) => {
    const args = params.arguments ?? {};
    try {
      // Rust's answer is the server's CallToolResult, passed back as it came.
      return (await calls.callTool(params.name, { ...args })) as CallToolResult;
    } catch (err) {
      throw new Error(toIpcError(err).message);
    }
  };

  let linkOpen = false;
  bridge.onopenlink = async ({ url }) => {
    if (linkOpen) return { isError: true };
    linkOpen = true;
    try {
      return (await calls.openLink(url)) ? {} : { isError: true };
    } catch {
      return { isError: true };
    } finally {
      linkOpen = false;
    }
  };

  bridge.onrequestdisplaymode = async () => notSupported();
  bridge.fallbackRequestHandler = async () => notSupported();

  bridge.addEventListener("sizechange", ({ height }) => {
    const clamped = clampHeight(height);
    if (clamped !== null) options.onHeight(clamped);
  });

  let told = false;
  bridge.addEventListener("initialized", () => {
    if (told) return;
    told = true;
    // Plain copies: the view may come wrapped in the page's reactive proxies, which the
    // structured clone of postMessage cannot carry (DataCloneError).
    const args = isObject(view.arguments) ? plain(view.arguments) : {};
    const result = (isObject(view.result) ? plain(view.result) : { content: [] }) as CallToolResult;
    void (async () => {
      await bridge.sendToolInput({ arguments: args });
      await bridge.sendToolResult(result);
    })().catch(() => {});
  });

  // What goes wrong on the wire (a malformed message, a send to a frame that is gone) is dropped.
  bridge.onerror = () => {};
  const connected = bridge.connect(new PostMessageTransport(target, target)).catch(() => {});

  let closed = false;
  return {
    setTheme(theme) {
      if (closed || theme === context.theme) return;
      context = { ...context, theme };
      bridge.setHostContext(context);
    },
    async close() {
      if (closed) return;
      closed = true;
      await connected;
      try {
        await bridge.teardownResource({}, { timeout: TEARDOWN_MS });
      } catch {
        // no answer in time, or the frame is gone: close anyway
      }
      await bridge.close().catch(() => {});
    },
  };
}
