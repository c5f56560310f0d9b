// A form an MCP server asks the person to fill in (elicitation), a page it asks them to visit
// (URL mode), and signing in to a server that asks for OAuth, on the Servers page. The forms
// come from a real MCP server (tests/peers/fault_server.py: `ask` asks where to deploy, `pay`
// asks for a visit to a payment page) called in a real run, through the real core; the sign-in
// from tests/peers/raw_server.py over HTTP with `--oauth -`.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { RunEvent } from "../src/lib/bindings";
import type { McpForm } from "../src/lib/types";
import type { Channel } from "./tauri-core-mock";
import { httpPeer, installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

/** The fault server's `pay` page. */
const PAY_URL = "https://pay.example.com/checkout?order=42";

/** A run whose model calls `tool` of the MCP server `server` (the fault peer), auto-approved,
 *  then answers "done"; what the model server received and the run's events, to read what the
 *  tool answered. */
async function callTool(tool: "ask" | "pay", server = "fault") {
  const wire = `${server.replace(/[^a-zA-Z0-9_-]/g, "_")}__${tool}`;
  const address = await backend.addProvider("Work", { models: [{ id: "m" }], turns: [{ tools: [{ name: wire, arguments: {} }] }, { answer: ["done"] }] });
  await backend.addFaultServer(server);
  const conversation = await backend.seed(() => ipc.createConversation("t"));
  await backend.seed(() => ipc.setConversationModel(conversation.id, "Work", "m"));
  await backend.seed(() => ipc.setAutoApprove(conversation.id, true));
  const events: RunEvent[] = [];
  const runId = await backend.seed(() => ipc.sendMessage(conversation.id, "go", (event) => events.push(event)));
  /** What the tool answered, once the run has sent it on to the model. */
  const toolAnswer = async (): Promise<string> => {
    await vi.waitFor(() => expect(events.some((e) => e.type === "run_finished")).toBe(true), { timeout: 10_000 });
    const second = (await backend.received(address))[1] as { messages: { role: string; content: unknown }[] };
    return JSON.stringify(second.messages.filter((m) => m.role === "tool").map((m) => m.content));
  };
  return { runId, events, toolAnswer };
}

describe("a server's form", { timeout: 30_000 }, () => {
  beforeEach(async () => {
    backend = await installRealBackend();
  });

  it("shows the server's words as text, starts from its defaults and sends what the person changed", async () => {
    const { user } = await renderApp();
    // A server's name is its own text, shown as text (a name may hold markup, not a "/").
    const hostile = "<img src=x onerror=alert(1)>";
    const { toolAnswer } = await callTool("ask", hostile);
    const dialog = await screen.findByTestId("mcp-form", {}, { timeout: 10_000 });
    expect(dialog.querySelector("img, script, b, i")).toBeNull();
    expect(within(dialog).getByText(`Input requested by “${hostile}”`)).toBeTruthy();
    expect(screen.getByTestId("mcp-form-message").textContent).toBe("Where should this deploy go?");
    expect(within(dialog).getByText("How many copies run")).toBeTruthy();
    const environment = within(dialog).getByLabelText("Environment") as HTMLSelectElement;
    expect(environment.value).toBe("staging");
    const replicas = within(dialog).getByLabelText("Replicas") as HTMLInputElement;
    expect(replicas.value).toBe("2");
    await user.selectOptions(environment, "production");
    await user.clear(replicas);
    await user.type(replicas, "3");
    await user.click(within(dialog).getByTestId("mcp-form-send"));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("answer_mcp_form").map((call) => (call.args as { answer: unknown }).answer)).toEqual([
      { action: "accept", content: { environment: "production", replicas: 3 } },
    ]);
    // What Rust passed on is what the server got.
    expect(await toolAnswer()).toContain("the person chose production with 3 replicas");
  });

  it("keeps the form open with Rust's reason when the answer does not fit, and Esc cancels it", async () => {
    const { user } = await renderApp();
    const { toolAnswer } = await callTool("ask");
    const dialog = await screen.findByTestId("mcp-form", {}, { timeout: 10_000 });
    // More than the server allows (at most 10): the page's own limits keep it from going.
    const replicas = within(dialog).getByLabelText("Replicas") as HTMLInputElement;
    await user.clear(replicas);
    await user.type(replicas, "11");
    await user.click(within(dialog).getByTestId("mcp-form-send"));
    expect(replicas.validity.rangeOverflow).toBe(true);
    expect(backend.callsTo("answer_mcp_form")).toEqual([]);
    // An answer Rust's check refuses stays on show with its reason. Every value this form's
    // fields let through fits it in Rust too, so the refusal is scripted (Rust's own words).
    await user.clear(replicas);
    await user.type(replicas, "4");
    backend.failNext("answer_mcp_form", { kind: "invalid_input", message: "“Replicas” must be at most 3", field: null });
    await user.click(within(dialog).getByTestId("mcp-form-send"));
    expect((await screen.findByTestId("mcp-form-problem")).textContent).toBe("“Replicas” must be at most 3");
    expect(screen.getByTestId("mcp-form")).toBeTruthy();
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("answer_mcp_form").map((call) => (call.args as { answer: unknown }).answer)).toEqual([
      { action: "accept", content: { environment: "staging", replicas: 4 } },
      { action: "cancel" },
    ]);
    expect(await toolAnswer()).toContain("the person answered cancel");
  });

  it("declines when the person says no", async () => {
    const { user } = await renderApp();
    const { toolAnswer } = await callTool("ask");
    await user.click(await screen.findByTestId("mcp-form-decline", {}, { timeout: 10_000 }));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("answer_mcp_form").map((call) => (call.args as { answer: unknown }).answer)).toEqual([{ action: "decline" }]);
    expect(await toolAnswer()).toContain("the person answered decline");
  });
});

describe("a server's page to visit", { timeout: 30_000 }, () => {
  beforeEach(async () => {
    backend = await installRealBackend();
  });

  it("shows the host, the whole address and the server's words as text, without fields", async () => {
    await renderApp();
    const hostile = "<img src=x onerror=alert(1)>";
    await callTool("pay", hostile);
    const dialog = await screen.findByTestId("mcp-form", {}, { timeout: 10_000 });
    expect(dialog.querySelector("img, b, a, input, select")).toBeNull();
    expect(within(dialog).getByText(`Page requested by “${hostile}”`)).toBeTruthy();
    expect(screen.getByTestId("mcp-form-message").textContent).toBe("Pay for the upgrade on the payment page");
    expect(screen.getByTestId("mcp-form-url-host").textContent).toBe("pay.example.com");
    expect(screen.getByTestId("mcp-form-url").textContent).toBe(PAY_URL);
    expect(within(dialog).getByText("Site")).toBeTruthy();
    expect(within(dialog).queryByTestId("mcp-form-field")).toBeNull();
    expect(within(dialog).queryByTestId("mcp-form-send")).toBeNull();
  });

  it("has Rust open it with the request's id only, then closes", async () => {
    const { user, stores } = await renderApp();
    const { toolAnswer } = await callTool("pay");
    const open = await screen.findByTestId("mcp-form-open", {}, { timeout: 10_000 });
    const id = stores.servers.forms[0].id;
    await user.click(open);
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("visit_mcp_form").map((call) => call.args)).toEqual([{ id }]);
    expect(backend.callsTo("answer_mcp_form")).toEqual([]);
    // Rust asked in its own dialog, then had the browser open the page it checked.
    const asked = await backend.asked();
    expect(asked.filter((a) => a.dialog === "open_url").map((a) => a.title)).toEqual([PAY_URL]);
    expect(await toolAnswer()).toContain("the person went to the payment page");
  });

  it("stays open when the person says no in Rust's dialog", async () => {
    const { user } = await renderApp();
    await callTool("pay");
    const open = await screen.findByTestId("mcp-form-open", {}, { timeout: 10_000 });
    await backend.host({ confirm: false });
    await user.click(open);
    await waitFor(() => expect(backend.callsTo("visit_mcp_form")).toHaveLength(1));
    await waitFor(() => expect((screen.getByTestId("mcp-form-open") as HTMLButtonElement).disabled).toBe(false));
    expect(screen.getByTestId("mcp-form")).toBeTruthy();
    expect((await backend.asked()).filter((a) => a.dialog === "open_url")).toEqual([]);
  });

  it("keeps the request open with Rust's reason when the browser cannot be started", async () => {
    const { user } = await renderApp();
    const { toolAnswer } = await callTool("pay");
    const open = await screen.findByTestId("mcp-form-open", {}, { timeout: 10_000 });
    // ipc_serve's host always opens a page: the browser that will not start is scripted.
    backend.failNext("visit_mcp_form", { kind: "io", message: "cannot start the browser", field: null });
    await user.click(open);
    expect((await screen.findByTestId("mcp-form-problem")).textContent).toBe("cannot start the browser");
    expect(screen.getByTestId("mcp-form-url-host")).toBeTruthy();
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("answer_mcp_form").map((call) => (call.args as { answer: unknown }).answer)).toEqual([{ action: "cancel" }]);
    expect(await toolAnswer()).toContain("the person answered cancel");
  });

  it("declines when the person says no, without opening anything", async () => {
    const { user } = await renderApp();
    const { toolAnswer } = await callTool("pay");
    await user.click(await screen.findByTestId("mcp-form-decline", {}, { timeout: 10_000 }));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("answer_mcp_form").map((call) => (call.args as { answer: unknown }).answer)).toEqual([{ action: "decline" }]);
    expect(backend.callsTo("visit_mcp_form")).toEqual([]);
    expect(await toolAnswer()).toContain("the person answered decline");
    expect((await backend.asked()).filter((a) => a.dialog === "open_url")).toEqual([]);
  });

  it("is taken down when Rust closes it without an answer (its call stopped)", async () => {
    await renderApp();
    const { runId } = await callTool("pay");
    await screen.findByTestId("mcp-form", {}, { timeout: 10_000 });
    await backend.seed(() => ipc.stopRun(runId));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("visit_mcp_form")).toEqual([]);
    expect(backend.callsTo("answer_mcp_form")).toEqual([]);
  });

  it("closes quietly when Rust no longer holds it", async () => {
    const { user, stores } = await renderApp();
    await callTool("pay");
    const open = await screen.findByTestId("mcp-form-open", {}, { timeout: 10_000 });
    // Answered elsewhere (as by another window): Rust no longer holds it, and tells this
    // window nothing, as with a close that has not reached it yet.
    const id = stores.servers.forms[0].id;
    await backend.seed(() => ipc.answerMcpForm(id, { action: "decline" }));
    await user.click(open);
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(screen.queryByTestId("mcp-form-problem")).toBeNull();
    expect(backend.callsTo("visit_mcp_form")).toHaveLength(1);
  });
});

// A remote server that asks for OAuth (tests/peers/raw_server.py over HTTP, `--oauth -`); the
// scripted browser follows its sign-in page back to the core, so the sign-in goes through.
describe("a server that asks for a sign-in", { timeout: 30_000 }, () => {
  beforeEach(async () => {
    backend = await installRealBackend();
  });

  it("says so on the Servers page and signs in from there", async () => {
    const url = await httpPeer("--oauth", "-");
    await backend.seed(() => ipc.addMcpServer("docs", null, url));
    await backend.host({ browser: true });
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-servers"));
    const item = await screen.findByTestId("server-item");
    await waitFor(() => expect(within(item).getByTestId("server-state").textContent).toBe("Needs sign-in"), { timeout: 10_000 });
    expect(within(item).getByTestId("server-reason").textContent).toBe("“docs” asks you to sign in");
    await user.click(within(item).getByTestId("server-sign-in"));
    await waitFor(
      () => {
        const running = within(screen.getByTestId("server-item"));
        expect([running.getByTestId("server-state").textContent, running.getByTestId("server-tool-count").textContent]).toEqual(["Running", "1 tool"]);
      },
      { timeout: 10_000 },
    );
    expect(backend.callsTo("sign_in_mcp_server")).toEqual([{ cmd: "sign_in_mcp_server", args: { name: "docs" } }]);
    // Rust asked first, then had the browser open the server's sign-in page.
    const asked = (await backend.asked()).filter((a) => a.dialog !== "approve_server");
    expect(asked.map((a) => a.dialog)).toEqual(["allow", "open_url"]);
    expect(asked[0].title).toBe("Sign in to “docs” at 127.0.0.1?");
    expect(new URL(asked[1].title).pathname).toBe("/authorize");
  });
});

// Two channels, heard in an order the real core cannot be made to send: a close before its
// form. The frames are delivered on the window's own channels, as Rust would send them.
describe("forms and closes heard out of order", () => {
  function page(id: string): McpForm {
    return { id, server: "billing", message: "Pay for the plan", fields: [], url: { url: PAY_URL, host: "pay.example.com" } };
  }

  it("a close heard before its form keeps it from showing", async () => {
    const backend = await installRealBackend();
    await renderApp();
    const watched = backend.callsTo("watch_mcp_forms")[0].args as { onForm: Channel<McpForm>; onClosed: Channel<string> };
    watched.onClosed.onmessage("form-3");
    watched.onForm.onmessage(page("form-3"));
    watched.onForm.onmessage({ ...page("form-4"), url: null, fields: [{ name: "note", title: "Note", description: null, required: false, default: null, type: "text", format: null, min_length: null, max_length: null }] });
    await screen.findByTestId("mcp-form");
    expect(screen.queryByTestId("mcp-form-url")).toBeNull();
  });
});
