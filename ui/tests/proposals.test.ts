// A switchboard:// link only proposes a server: the window shows what it would run, and only
// the person's answer has Rust add it (then ask for approval) or Browse look it up.
// On the fake backend: a link reaches the core through the shell (`App::propose`, from the OS's
// deep-link event), which ipc_serve has no request for; these move to the real core once it
// has one (and, for Browse, a registry peer to point the settings at).
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

describe("a server proposed by a link, on the fake backend (ipc_serve cannot hand the app a link)", () => {
  it("shows what an entry would run as text, and adds nothing when dismissed", async () => {
    const { user } = await renderApp();
    backend.propose({ kind: "entry", token: "p1", name: "<img src=x onerror=alert(1)>", command_line: "TZ=Europe/Oslo uvx mcp-server-time" });
    const dialog = await screen.findByTestId("confirm-dialog");
    expect(within(dialog).getByTestId("proposal-name").textContent).toBe("<img src=x onerror=alert(1)>");
    expect(dialog.querySelector("img")).toBeNull();
    expect(within(dialog).getByTestId("proposal-command").textContent).toBe("TZ=Europe/Oslo uvx mcp-server-time");
    await user.click(within(dialog).getByTestId("confirm-cancel"));
    await waitFor(() => expect(screen.queryByTestId("confirm-dialog")).toBeNull());
    expect(backend.calls.some((c) => c.cmd === "accept_server_proposal")).toBe(false);
    expect(backend.mcpServers).toEqual([]);
  });

  it("adds an entry through Rust when the person goes on, and shows it on the Servers page", async () => {
    backend.approvalAnswer = false;
    const { user } = await renderApp();
    backend.propose({ kind: "entry", token: "p2", name: "time", command_line: "uvx mcp-server-time" });
    await user.click(await screen.findByTestId("confirm-ok"));
    const [item] = await screen.findAllByTestId("server-item");
    expect(item.dataset.name).toBe("time");
    expect(within(item).getByTestId("server-state").textContent).toBe("Needs approval");
  });

  it("looks a registry server up in Browse", async () => {
    const { user } = await renderApp();
    backend.propose({ kind: "registry", token: "p3", name: "io.github.modelcontextprotocol/server-time", version: null });
    await user.click(await screen.findByTestId("confirm-ok"));
    const items = await screen.findAllByTestId("registry-item");
    expect(items.map((i) => i.dataset.name)).toEqual(["io.github.modelcontextprotocol/server-time"]);
    expect(screen.getByTestId<HTMLInputElement>("registry-query").value).toBe("io.github.modelcontextprotocol/server-time");
  });

  it("says why a link was not followed, as text, and adds nothing", async () => {
    const { user } = await renderApp();
    const reason = "This switchboard:// link proposes no server: this link sets <b>NODE_OPTIONS</b>, which changes how Node.js finds or loads code";
    backend.propose({ kind: "refused", token: "p4", reason });
    const dialog = await screen.findByTestId("confirm-dialog");
    expect(within(dialog).getByTestId("proposal-refused").textContent).toBe(reason);
    expect(dialog.querySelector("b")).toBeNull();
    // It only tells: one button, which has the focus.
    expect(within(dialog).queryByTestId("confirm-cancel")).toBeNull();
    expect(document.activeElement).toBe(within(dialog).getByTestId("confirm-ok"));
    await user.click(within(dialog).getByTestId("confirm-ok"));
    await waitFor(() => expect(screen.queryByTestId("confirm-dialog")).toBeNull());
    expect(backend.calls.some((c) => c.cmd === "accept_server_proposal")).toBe(false);
  });
});
