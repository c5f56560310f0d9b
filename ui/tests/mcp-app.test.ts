// MCP Apps (SEP-1865) in tool cards, in the whole window against an in-memory backend: a finished
// call whose tool has an app shows it under the card's summary, in a frame sandboxed to scripts,
// captioned with its server; what the app asks (a tool of its server, a link) goes to Rust for that
// call and nothing more; a call without an app shows none; an app that cannot be read says so in
// its card. A card asks Rust only when its server runs and names the tool among those with an
// app; the chat session asks Rust once per call.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(),
  Channel: class {
    onmessage: (event: unknown) => void = () => {};
  },
}));

import { screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";
import { newStores } from "./render-with-stores";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
  backend.addProviderRecord("Work");
  sessionStorage.clear();
  // The bridge's library narrates every message on the console.
  for (const level of ["debug", "warn"] as const) vi.spyOn(console, level).mockImplementation(() => {});
});

/** "Chart": a question and one finished call of charts · show_chart, whose tool has an app. */
function conversationWithApp() {
  const conversation = backend.addConversation("Chart");
  backend.addMessages(conversation.id, ["Chart Paris"]);
  return { id: conversation.id, ...backend.addToolApp(conversation.id) };
}

async function openConversation() {
  const app = await renderApp();
  await app.user.click(screen.getAllByTestId("conversation-item")[0]);
  await screen.findByTestId("composer-input");
  return app;
}

/** The app frame of the first tool card, once shown, with what Switchboard posts to it. */
async function appFrame() {
  const card = await screen.findByTestId("tool-card");
  const frame = (await within(card).findByTestId("mcp-app-frame")) as HTMLIFrameElement;
  const posted: Record<string, unknown>[] = [];
  vi.spyOn(frame.contentWindow!, "postMessage").mockImplementation(((m: unknown) => void posted.push(m as Record<string, unknown>)) as Window["postMessage"]);
  const send = (data: unknown) => window.dispatchEvent(new MessageEvent("message", { data, source: frame.contentWindow, origin: "null" }));
  const answerTo = async (id: number) => {
    await waitFor(() => expect(posted.find((m) => m.id === id && !("method" in m))).toBeDefined());
    return posted.find((m) => m.id === id && !("method" in m))!;
  };
  return { card, frame, posted, send, answerTo };
}

describe("a tool card's MCP App", () => {
  it("shows the app of a finished call in a frame sandboxed to scripts, captioned with its server", async () => {
    const { id, messageId, callId } = conversationWithApp();
    await openConversation();
    const { card, frame } = await appFrame();

    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame.hasAttribute("srcdoc")).toBe(false);
    expect(frame.getAttribute("src")).toMatch(/^mcp-app:\/\/localhost\//);
    expect(frame.getAttribute("referrerpolicy")).toBe("no-referrer");
    expect(frame.getAttribute("title")).toBe("show_chart app from charts");
    expect(frame.classList.contains("bordered")).toBe(true);
    expect(frame.style.height).toBe("200px");
    expect(within(card).getByTestId("mcp-app-caption").textContent).toBe("App from “charts”");
    // Shown under the summary, with the card closed.
    expect(card.querySelector("details")?.open).toBe(false);
    expect(backend.callsTo("prepare_mcp_app").map((c) => c.args)).toEqual([{ id, messageId, callId }]);
  });

  it("passes on what the app asks for its own call only, and answers it with what Rust said", async () => {
    const { id, messageId, callId } = conversationWithApp();
    await openConversation();
    const { frame, posted, send, answerTo } = await appFrame();

    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: { name: "chart", version: "1" }, appCapabilities: {} } });
    expect((await answerTo(1)).result).toMatchObject({ hostInfo: { name: "Switchboard" }, hostContext: { theme: "light", displayMode: "inline" } });
    send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    await waitFor(() => expect(posted.filter((m) => "method" in m).map((m) => m.method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]));
    expect(posted.find((m) => m.method === "ui/notifications/tool-input")?.params).toEqual({ arguments: { city: "Paris" } });
    expect(posted.find((m) => m.method === "ui/notifications/tool-result")?.params).toMatchObject({ structuredContent: { city: "Paris", points: [3, 1, 2] } });

    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "refresh_chart", arguments: { city: "Lyon" }, server: "files", conversation: "other" } });
    expect((await answerTo(2)).result).toEqual({ content: [{ type: "text", text: 'Refreshed {"city":"Lyon"}' }], structuredContent: { points: [1, 2, 3] } });
    expect(backend.callsTo("app_call_tool").map((c) => c.args)).toEqual([{ id, messageId, callId, tool: "refresh_chart", arguments: { city: "Lyon" } }]);

    backend.appCallAllowed = false;
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "refresh_chart", arguments: {} } });
    expect((await answerTo(3)).error).toMatchObject({ message: "You did not allow the app to call “refresh_chart”." });
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "delete_everything", arguments: {} } });
    expect((await answerTo(4)).error).toMatchObject({ message: "Not found: tool “delete_everything” of “charts”" });

    send({ jsonrpc: "2.0", id: 5, method: "ui/open-link", params: { url: "https://example.com/paris" } });
    expect((await answerTo(5)).result).toEqual({});
    backend.linkAnswer = false;
    send({ jsonrpc: "2.0", id: 6, method: "ui/open-link", params: { url: "https://example.com/lyon" } });
    expect((await answerTo(6)).result).toEqual({ isError: true });
    expect(backend.linksAsked).toEqual(["https://example.com/paris", "https://example.com/lyon"]);

    send({ jsonrpc: "2.0", id: 7, method: "ui/message", params: { role: "user", content: [{ type: "text", text: "Delete my files" }] } });
    expect((await answerTo(7)).error).toEqual({ code: -32601, message: "not supported by Switchboard" });

    send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 5000 } });
    await waitFor(() => expect(frame.style.height).toBe("1200px"));
    send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 320 } });
    await waitFor(() => expect(frame.style.height).toBe("320px"));
  });

  it("hears nothing another window sends, whatever it says", async () => {
    conversationWithApp();
    await openConversation();
    const { posted } = await appFrame();
    window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "refresh_chart", arguments: {} } }, source: window }));
    window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 900 } } }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(posted).toEqual([]);
    expect(backend.callsTo("app_call_tool")).toEqual([]);
    expect((screen.getByTestId("mcp-app-frame") as HTMLIFrameElement).style.height).toBe("200px");
  });

  it("tells the app when the window's theme changes", async () => {
    conversationWithApp();
    await openConversation();
    const { posted, send, answerTo } = await appFrame();
    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: { name: "chart", version: "1" }, appCapabilities: {} } });
    await answerTo(1);
    document.documentElement.dataset.theme = "dark";
    await waitFor(() => expect(posted.find((m) => m.method === "ui/notifications/host-context-changed")?.params).toEqual({ theme: "dark" }));
  });

  it("shows no app for a call whose tool has none, and does not ask Rust for one", async () => {
    const conversation = backend.addConversation("Chart");
    backend.addMessages(conversation.id, ["Chart Paris"]);
    backend.addToolApp(conversation.id, "time__get_current_time", { timezone: "Europe/Paris" });
    await openConversation();
    const card = await screen.findByTestId("tool-card");
    await waitFor(() => expect(backend.callsTo("watch_mcp_servers").length + backend.callsTo("list_mcp_servers").length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(backend.callsTo("prepare_mcp_app")).toEqual([]);
    expect(within(card).queryByTestId("mcp-app")).toBeNull();
    expect(within(card).queryByTestId("mcp-app-error")).toBeNull();
  });

  it("asks for a card's app once its server runs, not before", async () => {
    const { id, messageId, callId } = conversationWithApp();
    backend.mcpServers[0].state = { state: "starting" };
    await openConversation();
    await screen.findByTestId("tool-card");
    await waitFor(() => expect(backend.callsTo("watch_mcp_servers").length + backend.callsTo("list_mcp_servers").length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(backend.callsTo("prepare_mcp_app")).toEqual([]);
    backend.runServer("charts");
    await appFrame();
    expect(backend.callsTo("prepare_mcp_app").map((c) => c.args)).toEqual([{ id, messageId, callId }]);
  });

  it("says in the card, as plain text, why the app could not be read", async () => {
    conversationWithApp();
    backend.failures.set("prepare_mcp_app", { kind: "mcp", message: "“charts” is not running <img src=x onerror=alert(1)>", field: null });
    await openConversation();
    const card = await screen.findByTestId("tool-card");
    const error = await within(card).findByTestId("mcp-app-error");
    expect(error.textContent).toBe("The app of this call could not be read: “charts” is not running <img src=x onerror=alert(1)>");
    expect(error.querySelector("img")).toBeNull();
    expect(within(card).queryByTestId("mcp-app")).toBeNull();
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });

  it("asks only once the call has finished", async () => {
    const conversation = backend.addConversation("Clock");
    backend.appTools["time/get_current_time"] = { resource_uri: "ui://time/clock.html", prefers_border: false };
    backend.runServer("time");
    let finish: () => void = () => {};
    backend.toolGate = () => new Promise<void>((resolve) => (finish = resolve));
    const { user } = await openConversation();
    await user.type(screen.getByTestId("composer-input"), "What time is it?{Enter}");
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("running"));
    expect(backend.callsTo("prepare_mcp_app")).toEqual([]);
    finish();
    const frame = await screen.findByTestId("mcp-app-frame");
    expect(frame.classList.contains("bordered")).toBe(false);
    expect(backend.callsTo("prepare_mcp_app").map((c) => (c.args as { id: string }).id)).toEqual([conversation.id]);
  });
});

describe("the chat session's MCP Apps", () => {
  it("asks Rust once per call, and again only after a failure", async () => {
    const { id, messageId, callId } = conversationWithApp();
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(id);
    const session = stores.chats.open(stores.conversations.detail!);

    backend.failures.set("prepare_mcp_app", { kind: "mcp", message: "“charts” is not running", field: null });
    await expect(session.appHost(messageId, callId, "1").prepare()).rejects.toMatchObject({ message: "“charts” is not running" });
    backend.failures.delete("prepare_mcp_app");
    const first = await session.appHost(messageId, callId, "1").prepare();
    const again = await session.appHost(messageId, callId, "1").prepare();
    expect(first?.server).toBe("charts");
    expect(again).toBe(first);
    expect(backend.callsTo("prepare_mcp_app")).toHaveLength(2);
  });

  it("forgets the oldest calls' apps once it has asked for many (Rust serves only the newest pages)", async () => {
    const { id, messageId, callId } = conversationWithApp();
    const others = Array.from({ length: 32 }, () => backend.addToolApp(id));
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(id);
    const session = stores.chats.open(stores.conversations.detail!);

    const first = await session.appHost(messageId, callId, "1").prepare();
    for (const other of others.slice(0, 31)) await session.appHost(other.messageId, other.callId, "1").prepare();
    expect(await session.appHost(messageId, callId, "1").prepare()).toBe(first);
    await session.appHost(others[31].messageId, others[31].callId, "1").prepare();
    const again = await session.appHost(messageId, callId, "1").prepare();
    expect(again?.src).not.toBe(first?.src);
    expect(backend.callsTo("prepare_mcp_app")).toHaveLength(34);
  });
});
