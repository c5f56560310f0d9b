// The Settings page against an in-memory backend.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

async function openSettings() {
  const { app, user } = await renderApp();
  await user.click(screen.getByTestId("nav-settings"));
  const form = screen.getByTestId("settings-form");
  const field = (name: string) => form.querySelector(`[name="${name}"]`) as HTMLInputElement | HTMLSelectElement;
  return { app, user, field };
}

describe("settings", () => {
  it("refuses a default system prompt over 32,000 characters beside its box", async () => {
    const { user } = await openSettings();
    const prompt = screen.getByTestId("settings-system-prompt") as HTMLTextAreaElement;
    await user.clear(prompt);
    await user.click(prompt);
    await user.paste("x".repeat(32_001));
    await user.click(screen.getByTestId("settings-save"));
    expect((await screen.findByTestId("error-default_system_prompt")).textContent).toContain("at most 32000");
    expect(backend.callsTo("update_settings")).toHaveLength(0);
  });

  it("takes an organisation's own MCP Registry address and refuses one that is not http(s) beside its box", async () => {
    const { user, field } = await openSettings();
    const registry = screen.getByTestId("settings-mcp-registry") as HTMLInputElement;
    expect(registry.value).toBe("https://registry.modelcontextprotocol.io");
    await user.clear(registry);
    await user.type(registry, "registry.example.com");
    await user.click(screen.getByTestId("settings-save"));
    expect((await screen.findByTestId("error-mcp_registry")).textContent).toContain("http:// or https://");
    expect(backend.callsTo("update_settings")).toHaveLength(0);
    await user.clear(field("mcp_registry"));
    await user.type(field("mcp_registry"), " https://mcp.example.com/registry ");
    await user.click(screen.getByTestId("settings-save"));
    await screen.findByTestId("settings-saved");
    expect((backend.callsTo("update_settings")[0].args as { settings: { mcp_registry: string } }).settings.mcp_registry).toBe(
      "https://mcp.example.com/registry",
    );
  });

  it("shows the run time limit in minutes and the saved values", async () => {
    backend.addProviderRecord("Work");
    backend.settings = { ...backend.settings, default_provider: "Work", run_time_limit_secs: 1800, max_rounds: 7 };
    const { field } = await openSettings();
    expect(field("theme").value).toBe("system");
    expect([...(field("theme") as HTMLSelectElement).options].map((o) => o.value)).toEqual(["light", "dark", "system"]);
    expect(field("default_provider").value).toBe("Work");
    expect(field("max_rounds").value).toBe("7");
    expect(field("tool_timeout_secs").value).toBe("60");
    expect(field("run_time_limit_minutes").value).toBe("30");
  });

  it("saves minutes as seconds, applies the theme and says Saved", async () => {
    backend.addProviderRecord("Work");
    const { user, field } = await openSettings();
    await user.selectOptions(field("theme"), "dark");
    await user.selectOptions(field("default_provider"), "Work");
    await user.type(field("default_model"), "gpt-4o");
    await user.clear(field("run_time_limit_minutes"));
    await user.type(field("run_time_limit_minutes"), "45");
    expect((field("describe_calls") as HTMLInputElement).checked).toBe(false);
    await user.click(field("describe_calls"));
    const prompt = screen.getByTestId("settings-system-prompt") as HTMLTextAreaElement;
    expect(prompt.value).toBe("You can use tools when they help with the task.");
    await user.type(prompt, " Answer briefly.");
    await user.click(screen.getByTestId("settings-save"));

    await screen.findByTestId("settings-saved");
    expect(backend.callsTo("update_settings")[0].args).toEqual({
      settings: {
        theme: "dark",
        default_provider: "Work",
        default_model: "gpt-4o",
        max_rounds: 10,
        tool_timeout_secs: 60,
        run_time_limit_secs: 2700,
        describe_calls: true,
        default_system_prompt: "You can use tools when they help with the task. Answer briefly.",
        mcp_registry: "https://registry.modelcontextprotocol.io",
      },
    });
    expect(document.documentElement.dataset.theme).toBe("dark");

    await user.type(field("max_rounds"), "1");
    expect(screen.queryByTestId("settings-saved")).toBeNull();
  });

  it("refuses out-of-range limits beside their fields without saving", async () => {
    const { user, field } = await openSettings();
    await user.clear(field("max_rounds"));
    await user.type(field("max_rounds"), "101");
    await user.clear(field("tool_timeout_secs"));
    await user.clear(field("run_time_limit_minutes"));
    await user.type(field("run_time_limit_minutes"), "1441");
    await user.click(screen.getByTestId("settings-save"));
    expect(screen.getByTestId("error-max_rounds").textContent).toContain("1 to 100");
    expect(screen.getByTestId("error-tool_timeout_secs")).toBeTruthy();
    expect(screen.getByTestId("error-run_time_limit_minutes").textContent).toContain("1 to 1440");
    expect(backend.callsTo("update_settings")).toHaveLength(0);
    expect(screen.queryByTestId("settings-saved")).toBeNull();
  });

  it("shows a server error on run_time_limit_secs beside the minutes field", async () => {
    backend.failures.set("update_settings", {
      kind: "invalid_input",
      message: "The run time limit is out of range.",
      field: "run_time_limit_secs",
    });
    const { user } = await openSettings();
    await user.click(screen.getByTestId("settings-save"));
    expect((await screen.findByTestId("error-run_time_limit_minutes")).textContent).toBe(
      "The run time limit is out of range.",
    );
    expect(screen.queryByTestId("settings-saved")).toBeNull();
  });

  it("lists every standing approval and revokes one in one click", async () => {
    const chat = backend.addConversation("Trip planning");
    backend.standingApprovals = [
      { server: "fs", tool: "read_file", display_name: "fs · Read File", conversation_id: null, conversation_title: null, created_at: 1_700_000_000_000 },
      { server: "time", tool: "get_current_time", display_name: "time · Get Current Time", conversation_id: chat.id, conversation_title: "Trip planning", created_at: 1_700_000_000_001 },
    ];
    const { user } = await openSettings();
    const list = screen.getByTestId("standing-approvals");
    await waitFor(() => expect(within(list).getAllByTestId("approval-item")).toHaveLength(2));
    const [always, one] = within(list).getAllByTestId("approval-item");
    expect(always.textContent).toContain("fs · Read File");
    expect(always.textContent).toContain("in every conversation");
    expect(one.textContent).toContain("time · Get Current Time");
    expect(one.textContent).toContain("in “Trip planning” only");

    await user.click(within(one).getByTestId("approval-revoke"));
    expect(backend.callsTo("revoke_tool_approval")[0].args).toEqual({ server: "time", tool: "get_current_time", conversationId: chat.id });
    await waitFor(() => expect(within(list).getAllByTestId("approval-item")).toHaveLength(1));
    await user.click(within(list).getByTestId("approval-revoke"));
    expect(await within(list).findByTestId("approvals-empty")).toBeTruthy();
  });

  it("adds a tool of a running server for every conversation only after Rust's dialog says yes", async () => {
    backend.mcpServers = [
      { name: "fs", transport: "stdio", command_line: "uvx fs", edit_text: "uvx fs", roots: [], disabled: false, approved: true, error: null, state: { state: "running", pid: 7, tools: 3, apps: [] }, resolved: "/usr/bin/fs", log_file: "/logs/fs.log", held_back: [] },
      { name: "off", transport: "stdio", command_line: "uvx off", edit_text: "uvx off", roots: [], disabled: true, approved: true, error: null, state: { state: "stopped" }, resolved: "/usr/bin/off", log_file: "/logs/off.log", held_back: [] },
    ];
    backend.mcpTools = {
      fs: [
        { tool: "read_file", wire_name: "fs__read_file", display_name: "Fs · Read File", offered: true, status: "pinned" },
        { tool: "write_file", wire_name: "fs__write_file", display_name: "Fs · Write File", offered: false, status: "changed", diff: "-a\n+b" },
        { tool: "list_dir", wire_name: "fs__list_dir", display_name: "Fs · List Dir", offered: true, status: "pinned" },
      ],
    };
    const { user } = await openSettings();
    const form = screen.getByTestId("approval-add");
    const serverSelect = within(form).getByTestId("approval-add-server") as HTMLSelectElement;
    expect([...serverSelect.options].map((o) => o.value)).toEqual(["fs"]);
    const toolSelect = within(form).getByTestId("approval-add-tool") as HTMLSelectElement;
    // A tool held back is not offered here.
    await waitFor(() => expect([...toolSelect.options].map((o) => o.value)).toEqual(["", "read_file", "list_dir"]));

    // The person says no in Rust's dialog: nothing is added, and the page says so.
    backend.allowanceAnswer = false;
    await user.selectOptions(toolSelect, "read_file");
    await user.click(within(form).getByTestId("approval-add-submit"));
    expect(await within(form).findByTestId("approval-add-declined")).toBeTruthy();
    expect(backend.standingApprovals).toEqual([]);

    backend.allowanceAnswer = true;
    await user.click(within(form).getByTestId("approval-add-submit"));
    expect(backend.callsTo("allow_tool_always").at(-1)?.args).toEqual({ server: "fs", tool: "read_file" });
    const list = screen.getByTestId("standing-approvals");
    await waitFor(() => expect(within(list).getAllByTestId("approval-item")).toHaveLength(1));
    expect(within(list).getByTestId("approval-item").textContent).toContain("in every conversation");
    // What is allowed everywhere already is not offered again.
    await waitFor(() => expect([...toolSelect.options].map((o) => o.value)).toEqual(["", "list_dir"]));
    expect(within(form).queryByTestId("approval-add-declined")).toBeNull();
  });
});
