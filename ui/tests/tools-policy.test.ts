// The tools panel's rules: each tool shows the policy's rule that decides all its calls (a badge,
// the rule in words as its tooltip) and sets one in policy.json (allowing only once Rust's own
// dialog confirms it); an organisation's rule cannot be changed there. Against the real core:
// the fault peer's tools, and a managed policy file in the session's home.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderAppAt } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** The window with a conversation open and its tools panel showing the fault peer's tools. */
async function openPanel() {
  await backend.addFaultServer();
  const chat = await backend.seed(() => ipc.createConversation("Chat"));
  const view = await renderAppAt(chat.id);
  await view.user.click(await screen.findByTestId("tools-button"));
  const panel = await screen.findByTestId("tools-panel");
  await waitFor(() => expect(within(panel).getAllByTestId("tools-rule-select").length).toBeGreaterThan(1));
  return { ...view, panel };
}

/** The row of the fault peer's tool `tool` in the panel. */
function row(panel: HTMLElement, tool: string): HTMLElement {
  const select = within(panel)
    .getAllByTestId("tools-rule-select")
    .find((s) => s.dataset.tool === tool);
  expect(select).toBeTruthy();
  return select!.closest("li")!;
}

const select = (panel: HTMLElement, tool: string) => within(row(panel, tool)).getByTestId("tools-rule-select") as HTMLSelectElement;
const badge = (panel: HTMLElement, tool: string) => within(row(panel, tool)).queryByTestId("tools-rule-badge");

describe("the tools panel's rules", () => {
  it("sets a tool's rule, shows it with its words, and allows only once Rust's dialog confirms it", async () => {
    const { user, panel } = await openPanel();
    expect(select(panel, "echo").value).toBe("default");
    expect(badge(panel, "echo")).toBeNull();

    await user.selectOptions(select(panel, "echo"), "block");
    await waitFor(() => expect(badge(panel, "echo")?.textContent).toBe("Blocked"));
    expect(backend.callsTo("set_tool_policy").map((c) => c.args)).toEqual([{ server: "fault", tool: "echo", outcome: "block" }]);
    expect(badge(panel, "echo")?.getAttribute("title")).toBe("rule 1 of your policy.json: block fault · echo");
    expect(select(panel, "echo").value).toBe("block");

    // No in Rust's dialog: the rule stays what it was, and nothing alarming is said.
    await backend.host({ confirm: false });
    await user.selectOptions(select(panel, "echo"), "allow");
    await waitFor(() => expect(backend.callsTo("set_tool_policy")).toHaveLength(2));
    await waitFor(() => expect(select(panel, "echo").disabled).toBe(false));
    expect(select(panel, "echo").value).toBe("block");
    expect(badge(panel, "echo")?.textContent).toBe("Blocked");
    expect(screen.queryByTestId("error-toast")).toBeNull();

    await backend.host({ confirm: true });
    await user.selectOptions(select(panel, "echo"), "allow");
    await waitFor(() => expect(badge(panel, "echo")?.textContent).toBe("Allowed by rule"));
    expect((await backend.asked()).filter((q) => q.dialog === "allow")).toHaveLength(2);

    await user.selectOptions(select(panel, "echo"), "ask");
    await waitFor(() => expect(badge(panel, "echo")?.textContent).toBe("Asks (rule)"));

    await user.selectOptions(select(panel, "echo"), "default");
    await waitFor(() => expect(badge(panel, "echo")).toBeNull());
    expect(backend.callsTo("set_tool_policy").at(-1)?.args).toEqual({ server: "fault", tool: "echo", outcome: null });
    expect((await backend.seed(() => ipc.getPolicy())).said).toEqual([]);
  });

  it("shows an organisation's rule and lets no one change it here", async () => {
    const managed = join(await backend.home(), "managed");
    mkdirSync(managed, { recursive: true });
    writeFileSync(join(managed, "policy.json"), JSON.stringify({ rules: [{ server: "fault", tool: "crash", outcome: "ask" }] }));
    const { panel } = await openPanel();

    expect(badge(panel, "crash")?.textContent).toBe("Asks (rule)");
    expect(badge(panel, "crash")?.getAttribute("title")).toBe("rule 1 of your organisation's policy: ask before fault · crash");
    expect(select(panel, "crash").disabled).toBe(true);
    expect(select(panel, "crash").title).toBe("Set by your organisation");
    expect(within(row(panel, "crash")).getByTestId("tools-rule-managed").textContent).toBe("Set by your organisation");
    expect(select(panel, "echo").disabled).toBe(false);
  });
});
