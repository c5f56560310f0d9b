// The Servers page is told of every change by Rust (a crash, a restart, a new tool): it sets no
// timer and asks for nothing to see them.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(),
  Channel: class {
    onmessage: (event: unknown) => void = () => {};
  },
}));

import { screen, waitFor } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";
import type { McpServerStatus } from "../src/lib/types";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

function fault(state: McpServerStatus["state"]): McpServerStatus {
  return {
    name: "fault",
    transport: "stdio",
    command_line: "python fault_server.py",
    edit_text: "python fault_server.py",
    roots: [],
    disabled: false,
    approved: true,
    error: null,
    state,
    resolved: "/usr/bin/python",
    log_file: "/logs/mcp/fault.log", held_back: [],
  };
}

describe("the Servers page, kept current by Rust", () => {
  it("shows a crash, the restart and a new tool as they are pushed, with no timer and no fetch", async () => {
    backend.mcpServers = [fault({ state: "running", pid: 42, tools: 10, apps: [] })];
    // Timers set by the app's own code (the test library's waitFor sets its own).
    const ours: string[] = [];
    const real = window.setInterval.bind(window);
    const timers = vi.spyOn(window, "setInterval").mockImplementation(((handler: TimerHandler, ms?: number) => {
      const stack = new Error().stack ?? "";
      if (stack.split("\n").some((line) => line.includes("/ui/src/"))) ours.push(stack);
      return real(handler, ms);
    }) as typeof window.setInterval);
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-servers"));
    const state = () => screen.getByTestId("server-state").textContent ?? "";
    await waitFor(() => expect(state()).toMatch(/^Running/));
    const fetches = backend.callsTo("list_mcp_servers").length;

    backend.mcpServers = [fault({ state: "restarting", attempt: 2, in_secs: 1, reason: "the server exited with code 7" })];
    backend.pushServers();
    await waitFor(() => expect(state()).toMatch(/^Crashed · restarting/));

    backend.mcpServers = [fault({ state: "running", pid: 43, tools: 11, apps: [] })];
    backend.pushServers();
    await waitFor(() => expect(state()).toMatch(/^Running/));
    expect(screen.getByTestId("server-item").textContent).toContain("11");

    expect(backend.callsTo("list_mcp_servers").length).toBe(fetches);
    expect(ours).toEqual([]);
    timers.mockRestore();
  });
});
