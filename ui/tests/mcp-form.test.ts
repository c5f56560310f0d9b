// A form an MCP server asks the person to fill in (elicitation), a page it asks them to visit
// (URL mode), and signing in to a server that asks for OAuth, on the Servers page.
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
import type { McpForm } from "../src/lib/types";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

function form(): McpForm {
  return {
    id: "form-1",
    server: "<b>deploy</b>",
    message: "Which environment?\n<script>alert(1)</script>",
    fields: [
      { name: "env", title: "Environment", description: "<i>where</i> it goes", required: true, default: "staging", type: "choice", options: [{ value: "staging", label: "Staging" }, { value: "prod", label: "Production" }] },
      { name: "replicas", title: "Replicas", description: null, required: false, default: 2, type: "number", integer: true, minimum: 1, maximum: 10 },
      { name: "notify", title: "Tell the team", description: null, required: false, default: true, type: "boolean" },
      { name: "email", title: "Email", description: null, required: false, default: null, type: "text", format: "email", min_length: null, max_length: null },
    ],
    url: null,
  };
}

/** A URL-mode request: a page to visit, no fields. */
function page(): McpForm {
  return {
    id: "form-2",
    server: "<b>billing</b>",
    message: "Pay for the plan <img src=x onerror=alert(1)>",
    fields: [],
    url: { url: "https://xn--pypal-4ve.com/checkout?session=abc&next=%2Fdone", host: "xn--pypal-4ve.com" },
  };
}

describe("a server's form", () => {
  it("shows the server's words as text, starts from its defaults and sends what the person changed", async () => {
    const { user } = await renderApp();
    backend.askForm(form());
    const dialog = await screen.findByTestId("mcp-form");
    expect(dialog.querySelector("script, b, i")).toBeNull();
    expect(within(dialog).getByText("“<b>deploy</b>” asks for your input")).toBeTruthy();
    expect(screen.getByTestId("mcp-form-message").textContent).toContain("<script>alert(1)</script>");
    const replicas = within(dialog).getByLabelText("Replicas") as HTMLInputElement;
    expect(replicas.value).toBe("2");
    await user.selectOptions(within(dialog).getByLabelText("Environment *"), "prod");
    await user.clear(replicas);
    await user.type(replicas, "3");
    await user.type(within(dialog).getByLabelText("Email"), "ops@example.com");
    await user.click(within(dialog).getByTestId("mcp-form-send"));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.formAnswers).toEqual([
      { id: "form-1", answer: { action: "accept", content: { env: "prod", replicas: 3, notify: true, email: "ops@example.com" } } },
    ]);
  });

  it("keeps the form open with Rust's reason when the answer does not fit, and Esc cancels it", async () => {
    backend.formRefusal = (content) => (content.replicas === 2 ? "“Replicas” must be at most 1" : null);
    const { user } = await renderApp();
    backend.askForm(form());
    await user.click(await screen.findByTestId("mcp-form-send"));
    expect((await screen.findByTestId("mcp-form-problem")).textContent).toBe("“Replicas” must be at most 1");
    expect(screen.getByTestId("mcp-form")).toBeTruthy();
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.formAnswers).toEqual([{ id: "form-1", answer: { action: "cancel" } }]);
  });

  it("declines when the person says no", async () => {
    const { user } = await renderApp();
    backend.askForm(form());
    await user.click(await screen.findByTestId("mcp-form-decline"));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.formAnswers).toEqual([{ id: "form-1", answer: { action: "decline" } }]);
  });
});

describe("a server's page to visit", () => {
  it("shows the host, the whole address and the server's words as text, without fields", async () => {
    await renderApp();
    backend.askForm(page());
    const dialog = await screen.findByTestId("mcp-form");
    expect(dialog.querySelector("img, b, a, input, select")).toBeNull();
    expect(within(dialog).getByText("“<b>billing</b>” asks you to visit a page")).toBeTruthy();
    expect(screen.getByTestId("mcp-form-message").textContent).toBe("Pay for the plan <img src=x onerror=alert(1)>");
    expect(screen.getByTestId("mcp-form-url-host").textContent).toBe("xn--pypal-4ve.com");
    expect(screen.getByTestId("mcp-form-url").textContent).toBe("https://xn--pypal-4ve.com/checkout?session=abc&next=%2Fdone");
    expect(within(dialog).getByText("Opens a page on")).toBeTruthy();
    expect(within(dialog).queryByTestId("mcp-form-field")).toBeNull();
    expect(within(dialog).queryByTestId("mcp-form-send")).toBeNull();
  });

  it("has Rust open it with the request's id only, then closes", async () => {
    const { user } = await renderApp();
    backend.askForm(page());
    await user.click(await screen.findByTestId("mcp-form-open"));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("visit_mcp_form").map((call) => call.args)).toEqual([{ id: "form-2" }]);
    expect(backend.callsTo("answer_mcp_form")).toEqual([]);
    expect(backend.formVisits).toEqual([{ id: "form-2", url: "https://xn--pypal-4ve.com/checkout?session=abc&next=%2Fdone" }]);
  });

  it("stays open when the person says no in Rust's dialog", async () => {
    backend.approvalAnswer = false;
    const { user } = await renderApp();
    backend.askForm(page());
    await user.click(await screen.findByTestId("mcp-form-open"));
    await waitFor(() => expect(backend.callsTo("visit_mcp_form")).toHaveLength(1));
    expect(screen.getByTestId("mcp-form")).toBeTruthy();
    expect(backend.formVisits).toEqual([]);
  });

  it("keeps the request open with Rust's reason when the browser cannot be started", async () => {
    backend.failures.set("visit_mcp_form", { kind: "io", message: "cannot start the browser", field: null });
    const { user } = await renderApp();
    backend.askForm(page());
    await user.click(await screen.findByTestId("mcp-form-open"));
    expect((await screen.findByTestId("mcp-form-problem")).textContent).toBe("cannot start the browser");
    expect(screen.getByTestId("mcp-form-url-host")).toBeTruthy();
    backend.failures.delete("visit_mcp_form");
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.formAnswers).toEqual([{ id: "form-2", answer: { action: "cancel" } }]);
  });

  it("declines when the person says no, without opening anything", async () => {
    const { user } = await renderApp();
    backend.askForm(page());
    await user.click(await screen.findByTestId("mcp-form-decline"));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.formAnswers).toEqual([{ id: "form-2", answer: { action: "decline" } }]);
    expect(backend.callsTo("visit_mcp_form")).toEqual([]);
  });

  it("is taken down when Rust closes it without an answer (its server said the visit is done), and a close heard first keeps it from showing", async () => {
    await renderApp();
    backend.askForm(page());
    await screen.findByTestId("mcp-form");
    backend.closeForm("form-2");
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(backend.callsTo("visit_mcp_form")).toEqual([]);
    expect(backend.callsTo("answer_mcp_form")).toEqual([]);
    // The two are heard apart: a close that came before its form keeps it away.
    backend.closeForm("form-3");
    backend.askForm({ ...page(), id: "form-3" });
    backend.askForm(form());
    await screen.findByTestId("mcp-form");
    expect(screen.queryByTestId("mcp-form-url")).toBeNull();
  });

  it("closes quietly when the server already called the visit done", async () => {
    const { user } = await renderApp();
    backend.askForm(page());
    // Rust answered it when the server said it was done: the fake no longer holds it.
    backend.failures.set("visit_mcp_form", { kind: "not_found", message: "Not found: that request: it is no longer open (its server stopped asking)", field: null });
    await user.click(await screen.findByTestId("mcp-form-open"));
    await waitFor(() => expect(screen.queryByTestId("mcp-form")).toBeNull());
    expect(screen.queryByTestId("mcp-form-problem")).toBeNull();
  });
});

describe("a server that asks for a sign-in", () => {
  it("says so on the Servers page and signs in from there", async () => {
    backend.mcpServers = [
      {
        name: "docs",
        transport: "http",
        command_line: "https://docs.example.com/mcp",
        edit_text: null,
        roots: [],
        disabled: false,
        approved: true,
        error: null,
        state: { state: "needs_sign_in", reason: "“docs” asks you to sign in" },
        resolved: "https://docs.example.com/mcp",
        log_file: "/logs/mcp/docs.log", held_back: [],
      },
    ];
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-servers"));
    const item = await screen.findByTestId("server-item");
    expect(within(item).getByTestId("server-state").textContent).toBe("Needs sign-in");
    expect(within(item).getByTestId("server-reason").textContent).toBe("“docs” asks you to sign in");
    await user.click(within(item).getByTestId("server-sign-in"));
    await waitFor(() => expect(backend.signIns).toEqual(["docs"]));
    await waitFor(() => expect(within(screen.getByTestId("server-item")).getByTestId("server-state").textContent).toBe("Running · 1 tool"));
  });
});
