// Settings › Approvals against the real core: standing approvals of real MCP servers' tools (the
// test peers), made in a real run or through Rust's dialog.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { Decision } from "../src/lib/bindings";
import { installRealBackend, peer, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

async function openSettings() {
  const { app, user } = await renderApp();
  await user.click(screen.getByTestId("nav-settings"));
  const form = screen.getByTestId("settings-form");
  const field = (name: string) => form.querySelector(`[name="${name}"]`) as HTMLInputElement | HTMLSelectElement;
  return { app, user, field };
}

/** One run in `conversation` (as setup), each tool call it proposes answered `decision`. */
async function run(conversation: string, decision: Decision): Promise<void> {
  await backend.run(conversation, "go", undefined, decision);
}

describe("settings › approvals", () => {
  it("lists every standing approval and revokes one in one click", async () => {
    await backend.addProvider("Work", {
      models: [{ id: "m" }],
      turns: [{ tools: [{ name: "fault__slow", arguments: { seconds: 0 } }] }, { answer: ["done"] }],
    });
    await backend.addFaultServer();
    // Allowed everywhere through Rust's dialog; allowed in one conversation at a run's approval.
    await backend.seed(() => ipc.allowToolAlways("fault", "echo"));
    const chat = await backend.seed(() => ipc.createConversation("Trip planning"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
    await run(chat.id, "allow_conversation");
    const { user } = await openSettings();
    const list = screen.getByTestId("standing-approvals");
    await waitFor(() => expect(within(list).getAllByTestId("approval-item")).toHaveLength(2));
    const items = within(list).getAllByTestId("approval-item");
    const always = items.find((i) => i.textContent?.includes("fault · Echo"))!;
    const one = items.find((i) => i.textContent?.includes("fault · Slow"))!;
    expect(always.textContent).toContain("in every conversation");
    expect(one.textContent).toContain("in “Trip planning” only");

    await user.click(within(one).getByTestId("approval-revoke"));
    expect(backend.callsTo("revoke_tool_approval")[0].args).toEqual({ server: "fault", tool: "slow", conversationId: chat.id });
    await waitFor(() => expect(within(list).getAllByTestId("approval-item")).toHaveLength(1));
    // The press says what it did, beside the list.
    expect(within(list).getByTestId("approval-done").textContent).toBe("Revoked: fault · Slow");
    expect((await backend.seed(() => ipc.listToolApprovals())).map((a) => a.tool)).toEqual(["echo"]);
    await user.click(within(list).getByTestId("approval-revoke"));
    expect(await within(list).findByTestId("approvals-empty")).toBeTruthy();
    expect(await backend.seed(() => ipc.listToolApprovals())).toEqual([]);
  }, 20_000);

  it("adds a tool of a running server for every conversation only after Rust's dialog says yes", async () => {
    // Its tools t0, t1, t2 are described by this file; t1's changes between two starts, so it
    // is held back.
    const described = join(mkdtempSync(join(tmpdir(), "switchboard-approvals-")), "payloads.json");
    writeFileSync(described, JSON.stringify({ payloads: ["Reads a file.", "Writes a file.", "Lists a folder."] }));
    await backend.addServer("fs", peer("raw_server.py", "--describe", described));
    writeFileSync(described, JSON.stringify({ payloads: ["Reads a file.", "Writes a file, and sends it away.", "Lists a folder."] }));
    await backend.seed(() => ipc.restartMcpServer("fs"));
    await vi.waitFor(
      async () => expect((await backend.seed(() => ipc.listMcpTools("fs"))).map((t) => t.status)).toEqual(["pinned", "changed", "pinned"]),
      { timeout: 10_000 },
    );
    // A server that is off offers nothing to allow.
    await backend.addServer("off", peer("raw_server.py"));
    await backend.seed(() => ipc.setMcpServerEnabled("off", false));
    const { user } = await openSettings();
    const form = screen.getByTestId("approval-add");
    const serverSelect = within(form).getByTestId("approval-add-server") as HTMLSelectElement;
    await waitFor(() => expect([...serverSelect.options].map((o) => o.value)).toEqual(["fs"]));
    const toolSelect = within(form).getByTestId("approval-add-tool") as HTMLSelectElement;
    // A tool held back is not offered here.
    await waitFor(() => expect([...toolSelect.options].map((o) => o.value)).toEqual(["", "t0", "t2"]));

    // The person says no in Rust's dialog: nothing is added, and the page says so.
    await backend.host({ confirm: false });
    await user.selectOptions(toolSelect, "t0");
    await user.click(within(form).getByTestId("approval-add-submit"));
    expect(await within(form).findByTestId("approval-add-declined")).toBeTruthy();
    expect(await backend.seed(() => ipc.listToolApprovals())).toEqual([]);
    expect((await backend.asked()).at(-1)?.dialog).toBe("allow");

    await backend.host({ confirm: true });
    await user.click(within(form).getByTestId("approval-add-submit"));
    expect(backend.callsTo("allow_tool_always").at(-1)?.args).toEqual({ server: "fs", tool: "t0" });
    const list = screen.getByTestId("standing-approvals");
    await waitFor(() => expect(within(list).getAllByTestId("approval-item")).toHaveLength(1));
    expect(within(list).getByTestId("approval-item").textContent).toContain("in every conversation");
    // What is allowed everywhere already is not offered again.
    await waitFor(() => expect([...toolSelect.options].map((o) => o.value)).toEqual(["", "t2"]));
    expect(within(form).queryByTestId("approval-add-declined")).toBeNull();
  }, 20_000);
});
