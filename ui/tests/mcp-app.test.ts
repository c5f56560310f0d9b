// MCP Apps (SEP-1865) in tool cards, in the whole window against an in-memory backend: a finished
// call whose tool has an app shows it under the card's summary, in a frame sandboxed to scripts,
// captioned with its server; what the app asks (a tool of its server, a link) goes to Rust for that
// call and nothing more; a call without an app shows none; an app that cannot be read says so in
// its card. A card asks Rust only when its server runs and names the tool among those with an
// app; the chat session asks Rust once per call.
// MCP Apps (SEP-1865) in tool cards, in the whole window against the real core: a finished
// call whose tool has an app (the fault peer's dashboard, a real MCP server) shows it under the
// card's summary, in a frame sandboxed to scripts, captioned with its server; what the app asks
// (a tool of its server, a link) goes to Rust for that call and nothing more; a call without an
// app shows none; an app that cannot be read says so in its card. A card asks Rust only when its
// server runs and names the tool among those with an app; the chat session asks Rust once per call.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { configure, screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";
import { newStores } from "./render-with-stores";

let backend: RealBackend;

// A real server starting, and the frame's page read through it, can take more than Testing
// Library's default second on a busy machine.
configure({ asyncUtilTimeout: 10_000 });

beforeEach(async () => {
  backend = await installRealBackend();
  sessionStorage.clear();
  // The bridge's library narrates every message on the console.
  for (const level of ["debug", "warn"] as const) vi.spyOn(console, level).mockImplementation(() => {});
});

type Call = { name: string; arguments?: Record<string, unknown> };

/** "Chart": Work's model called `calls` (each allowed once) and then answered; the fault peer
 *  runs. Its id, and the answer's message and each call's id. */
async function conversationWith(calls: Call[]): Promise<{ id: string; messageId: string; callIds: string[] }> {
  await backend.addProvider("Work", { models: [{ id: "m" }], turns: [{ tools: calls }, { answer: ["Shown."] }] });
  await backend.addFaultServer();
  const c = await backend.seed(() => ipc.createConversation("Chart"));
  await backend.seed(() => ipc.setConversationModel(c.id, "Work", "m"));
  await backend.run(c.id, "Chart Paris");
  const detail = await backend.seed(() => ipc.getConversation(c.id));
  const answer = detail.messages.find((m) => m.tool_calls?.length)!;
  return { id: c.id, messageId: answer.id, callIds: answer.tool_calls!.map((call) => call.id) };
}

/** "Chart" with one finished call of fault · dashboard for Paris, whose tool has an app. */
async function conversationWithApp() {
  const { id, messageId, callIds } = await conversationWith([{ name: "fault__dashboard", arguments: { city: "Paris" } }]);
  return { id, messageId, callId: callIds[0] };
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

describe("a tool card's MCP App", { timeout: 30_000 }, () => {
  it("shows the app of a finished call in a frame sandboxed to scripts, captioned with its server", async () => {
    const { id, messageId, callId } = await conversationWithApp();
    await openConversation();
    const { card, frame } = await appFrame();

    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame.hasAttribute("srcdoc")).toBe(false);
    expect(frame.getAttribute("src")).toMatch(/^mcp-app:\/\/localhost\//);
    expect(frame.getAttribute("referrerpolicy")).toBe("no-referrer");
    expect(frame.getAttribute("title")).toBe("dashboard app from fault");
    // The dashboard's resource prefers a border.
    expect(frame.classList.contains("bordered")).toBe(true);
    expect(frame.style.height).toBe("200px");
    expect(within(card).getByTestId("mcp-app-caption").textContent).toBe("App from “fault”");
    // Shown under the summary, with the card closed.
    expect(card.querySelector("details")?.open).toBe(false);
    expect(backend.callsTo("prepare_mcp_app").map((c) => c.args)).toEqual([{ id, messageId, callId }]);
  });

  it("passes on what the app asks for its own call only, and answers it with what Rust said", async () => {
    const { id, messageId, callId } = await conversationWithApp();
    await openConversation();
    const { frame, posted, send, answerTo } = await appFrame();

    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: { name: "dashboard", version: "1" }, appCapabilities: {} } });
    expect((await answerTo(1)).result).toMatchObject({ hostInfo: { name: "Switchboard" }, hostContext: { theme: "light", displayMode: "inline" } });
    send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    await waitFor(() => expect(posted.filter((m) => "method" in m).map((m) => m.method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]));
    expect(posted.find((m) => m.method === "ui/notifications/tool-input")?.params).toEqual({ arguments: { city: "Paris" } });
    expect(posted.find((m) => m.method === "ui/notifications/tool-result")?.params).toMatchObject({
      content: [{ type: "text", text: "dashboard for Paris: 21 degrees" }],
    });

    // A tool of its own server, for its own call, whatever server or conversation it names.
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "Lyon" }, server: "files", conversation: "other" } });
    expect((await answerTo(2)).result).toMatchObject({ content: [{ type: "text", text: "Lyon" }] });
    expect(backend.callsTo("app_call_tool").map((c) => c.args)).toEqual([{ id, messageId, callId, tool: "echo", arguments: { text: "Lyon" } }]);

    // The person says no at Rust's question.
    await backend.host({ confirm: false });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "again" } } });
    expect((await answerTo(3)).error).toMatchObject({ message: "The app's call to “echo” was not run: you said no." });
    const refused = backend.callsTo("app_call_tool").length;
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "delete_everything", arguments: {} } });
    const unknown = (await answerTo(4)).error as { message: string };
    expect(backend.callsTo("app_call_tool")).toHaveLength(refused + 1);
    // Rust's own words for a tool its server does not have.
    const said = await backend.seed(() => ipc.appCallTool(id, messageId, callId, "delete_everything", {}).catch((e: { message: string }) => e.message));
    expect(unknown.message).toBe(said);
    expect(unknown.message).toContain("delete_everything");

    await backend.host({ confirm: true });
    send({ jsonrpc: "2.0", id: 5, method: "ui/open-link", params: { url: "https://example.com/paris" } });
    expect((await answerTo(5)).result).toEqual({});
    await backend.host({ confirm: false });
    send({ jsonrpc: "2.0", id: 6, method: "ui/open-link", params: { url: "https://example.com/lyon" } });
    expect((await answerTo(6)).result).toEqual({ isError: true });
    const links = (await backend.asked()).filter((a) => a.message.includes("https://example.com/"));
    expect(links.map((a) => a.message.match(/https:\/\/example\.com\/\w+/)?.[0])).toEqual(["https://example.com/paris", "https://example.com/lyon"]);

    send({ jsonrpc: "2.0", id: 7, method: "ui/message", params: { role: "user", content: [{ type: "text", text: "Delete my files" }] } });
    expect((await answerTo(7)).error).toEqual({ code: -32601, message: "not supported by Switchboard" });

    send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 5000 } });
    await waitFor(() => expect(frame.style.height).toBe("1200px"));
    send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 320 } });
    await waitFor(() => expect(frame.style.height).toBe("320px"));
  });

  it("hears nothing another window sends, whatever it says", async () => {
    await conversationWithApp();
    await openConversation();
    const { posted } = await appFrame();
    window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } }, source: window }));
    window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 900 } } }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(posted).toEqual([]);
    expect(backend.callsTo("app_call_tool")).toEqual([]);
    expect((screen.getByTestId("mcp-app-frame") as HTMLIFrameElement).style.height).toBe("200px");
  });

  it("tells the app when the window's theme changes", async () => {
    await conversationWithApp();
    await openConversation();
    const { posted, send, answerTo } = await appFrame();
    send({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: { name: "dashboard", version: "1" }, appCapabilities: {} } });
    await answerTo(1);
    document.documentElement.dataset.theme = "dark";
    await waitFor(() => expect(posted.find((m) => m.method === "ui/notifications/host-context-changed")?.params).toEqual({ theme: "dark" }));
  });

  it("shows no app for a call whose tool has none, and does not ask Rust for one", async () => {
    await conversationWith([{ name: "fault__echo", arguments: { text: "Paris" } }]);
    await openConversation();
    const card = await screen.findByTestId("tool-card");
    await waitFor(() => expect(backend.callsTo("watch_mcp_servers").length + backend.callsTo("list_mcp_servers").length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(backend.callsTo("prepare_mcp_app")).toEqual([]);
    expect(within(card).queryByTestId("mcp-app")).toBeNull();
    expect(within(card).queryByTestId("mcp-app-error")).toBeNull();
  });

  it("asks for a card's app once its server runs, not before", async () => {
    const { id, messageId, callId } = await conversationWithApp();
    // Switched off before the window opens; switched on again once the card is shown.
    await backend.seed(() => ipc.setMcpServerEnabled("fault", false));
    await openConversation();
    await screen.findByTestId("tool-card");
    await waitFor(() => expect(backend.callsTo("watch_mcp_servers").length + backend.callsTo("list_mcp_servers").length).toBeGreaterThan(0));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(backend.callsTo("prepare_mcp_app")).toEqual([]);
    await backend.seed(() => ipc.setMcpServerEnabled("fault", true));
    await appFrame();
    expect(backend.callsTo("prepare_mcp_app").map((c) => c.args)).toEqual([{ id, messageId, callId }]);
  });

  it("says in the card, as plain text, why the app could not be read", async () => {
    await conversationWithApp();
    backend.failNext("prepare_mcp_app", { kind: "mcp", message: "“fault” is not running <img src=x onerror=alert(1)>", field: null });
    await openConversation();
    const card = await screen.findByTestId("tool-card");
    const error = await within(card).findByTestId("mcp-app-error");
    expect(error.textContent).toBe("The app of this call could not be read: “fault” is not running <img src=x onerror=alert(1)>");
    expect(error.querySelector("img")).toBeNull();
    expect(within(card).queryByTestId("mcp-app")).toBeNull();
    expect(screen.queryByTestId("error-toast")).toBeNull();
  });

  it("asks only once the call has finished", async () => {
    await backend.addProvider("Work", { models: [{ id: "m" }], turns: [{ tools: [{ name: "fault__dashboard", arguments: { city: "Lyon" } }] }, { answer: ["Shown."] }] });
    await backend.addFaultServer();
    const conversation = await backend.seed(() => ipc.createConversation("Dashboard"));
    await backend.seed(() => ipc.setConversationModel(conversation.id, "Work", "m"));
    const { user } = await openConversation();
    await user.type(screen.getByTestId("composer-input"), "How is Lyon?{Enter}");
    // Waiting for the person, not yet run: no app is asked for.
    const dialog = await screen.findByTestId("approval-dialog");
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("waiting"));
    expect(backend.callsTo("prepare_mcp_app")).toEqual([]);
    await user.click(within(dialog).getByTestId("approval-submit"));
    const frame = await screen.findByTestId("mcp-app-frame");
    expect(screen.getByTestId("tool-card").dataset.state).toBe("done");
    expect(frame.classList.contains("bordered")).toBe(true);
    expect(backend.callsTo("prepare_mcp_app").map((c) => (c.args as { id: string }).id)).toEqual([conversation.id]);
  });
});

describe("the chat session's MCP Apps", { timeout: 30_000 }, () => {
  it("asks Rust once per call, and again only after a failure", async () => {
    const { id, messageId, callId } = await conversationWithApp();
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(id);
    const session = stores.chats.open(stores.conversations.detail!);

    backend.failNext("prepare_mcp_app", { kind: "mcp", message: "“fault” is not running", field: null });
    await expect(session.appHost(messageId, callId, "1").prepare()).rejects.toMatchObject({ message: "“fault” is not running" });
    const first = await session.appHost(messageId, callId, "1").prepare();
    const again = await session.appHost(messageId, callId, "1").prepare();
    expect(first?.server).toBe("fault");
    expect(again).toBe(first);
    expect(backend.callsTo("prepare_mcp_app")).toHaveLength(2);
  });

  it("forgets the oldest calls' apps once it has asked for many (Rust serves only the newest pages)", async () => {
    const cities = Array.from({ length: 33 }, (_, i) => `City ${i}`);
    const { id, messageId, callIds } = await conversationWith(cities.map((city) => ({ name: "fault__dashboard", arguments: { city } })));
    const [callId, ...others] = callIds;
    expect(others).toHaveLength(32);
    const stores = newStores();
    await stores.start();
    await stores.conversations.open(id);
    const session = stores.chats.open(stores.conversations.detail!);

    const first = await session.appHost(messageId, callId, "1").prepare();
    for (const other of others.slice(0, 31)) await session.appHost(messageId, other, "1").prepare();
    expect(await session.appHost(messageId, callId, "1").prepare()).toBe(first);
    await session.appHost(messageId, others[31], "1").prepare();
    const again = await session.appHost(messageId, callId, "1").prepare();
    expect(again?.src).not.toBe(first?.src);
    expect(backend.callsTo("prepare_mcp_app")).toHaveLength(34);
  });
});
