// The Servers page: MCP servers with what the supervisor says of each.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn() }));

import { screen, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

describe("the Servers page", () => {
  it("shows each server's state, command line and failure in plain text", async () => {
    backend.mcpServers = [
        {
          name: "everything",
          transport: "stdio",
          command_line: "npx -y @modelcontextprotocol/server-everything stdio",
          disabled: false,
          approved: true,
          error: null,
          state: { state: "running", pid: 42, tools: 13 },
          log_file: "/logs/mcp/everything.log",
        },
        {
          name: "<img src=x onerror=alert(1)>",
          transport: "stdio",
          command_line: "sh -c 'exit 1'",
          disabled: false,
          approved: true,
          error: null,
          state: { state: "failed", reason: "the server exited with code 1\nfatal: DATABASE_URL is not set\n(gave up after 5 tries)" },
          log_file: "/logs/mcp/x.log",
        },
        {
          name: "edited",
          transport: "stdio",
          command_line: "uvx mcp-server-time --extra",
          disabled: false,
          approved: false,
          error: null,
          state: null,
          log_file: "/logs/mcp/edited.log",
        },
      ];
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-servers"));
    const items = await screen.findAllByTestId("server-item");
    expect(items.map((i) => i.dataset.name)).toEqual(["everything", "<img src=x onerror=alert(1)>", "edited"]);
    expect(within(items[0]).getByTestId("server-state").textContent).toBe("Running · 13 tools");
    expect(within(items[0]).getByTestId("server-command").textContent).toContain("server-everything stdio");
    expect(within(items[1]).getByTestId("server-state").textContent).toBe("Failed");
    expect(within(items[1]).getByTestId("server-reason").textContent).toContain("DATABASE_URL is not set");
    // A hostile server name is text, not markup.
    expect(document.querySelector("img[src=x]")).toBeNull();
    expect(within(items[2]).getByTestId("server-state").textContent).toBe("Needs approval");
    expect(backend.callsTo("list_mcp_servers").length).toBeGreaterThan(0);
  });

  it("says how to add a server when there is none", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-servers"));
    expect((await screen.findByTestId("servers-empty")).textContent).toContain("switchboard mcp add");
  });
});
