// The Servers page is told of every change by Rust (a crash, a restart, a new tool): it sets no
// timer and asks for nothing to see them. Against the real core, with the fault peer crashing
// and growing a tool in real runs.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { McpServerStatus } from "../src/lib/types";
import { installRealBackend, runTurn, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** One run in `conversation`, sent as the window would (recorded as its calls, not hidden by a
 *  seed, so the window's own calls meanwhile are all counted). */
async function run(conversation: string): Promise<void> {
  await runTurn(conversation, "go");
}

const tools = (state: McpServerStatus["state"]) => (state?.state === "running" ? state.tools : -1);

describe("the Servers page, kept current by Rust", () => {
  it("shows a crash, the restart and a new tool as they are pushed, with no timer and no fetch", async () => {
    // The model has the fault peer crash, then (in the next run) grow a tool.
    await backend.addProvider("Work", {
      models: [{ id: "m" }],
      turns: [
        { tools: [{ name: "fault__crash", arguments: {} }] },
        { answer: ["it crashed"] },
        { tools: [{ name: "fault__grow", arguments: { name: "extra" } }] },
        { answer: ["it grew"] },
      ],
    });
    await backend.addFaultServer();
    const before = tools((await backend.seed(() => ipc.listMcpServers()))[0].state);
    const conversation = await backend.seed(() => ipc.createConversation("t"));
    await backend.seed(() => ipc.setConversationModel(conversation.id, "Work", "m"));
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
    const toolCount = () => screen.queryByTestId("server-tool-count")?.textContent ?? null;
    await waitFor(() => expect([state(), toolCount()]).toEqual(["Running", `${before} tools`]));
    const fetches = backend.callsTo("list_mcp_servers").length;

    const crashed = run(conversation.id);
    // Restarted after a second.
    await waitFor(
      () => {
        expect([state(), toolCount()]).toEqual(["Crashed", null]);
        expect(screen.getByTestId("server-restarting").textContent?.trim()).toMatch(/^Restarting in \d+ s \(attempt \d+ of 5\)$/);
      },
      { timeout: 10_000 },
    );
    await waitFor(() => expect([state(), toolCount()]).toEqual(["Running", `${before} tools`]), { timeout: 10_000 });
    await crashed;

    await run(conversation.id);
    await waitFor(() => expect([state(), toolCount()]).toEqual(["Running", `${before + 1} tools`]), { timeout: 10_000 });
    expect(screen.getByTestId("server-item").textContent).toContain(String(before + 1));

    expect(backend.callsTo("list_mcp_servers").length).toBe(fetches);
    expect(ours).toEqual([]);
    timers.mockRestore();
  }, 30_000);
});
