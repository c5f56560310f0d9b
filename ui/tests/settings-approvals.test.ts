// Settings › Approvals against the in-memory fake (the standing approvals need a running
// server's tools; they move to the real core with the MCP peers).
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

describe("settings › approvals", () => {
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
