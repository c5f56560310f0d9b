// A switchboard:// link only proposes a server: the window shows what it would run, and only
// the person's answer has Rust add it (then ask for approval) or Browse look it up. Against the
// real core: the link is handed to the app as the system hands it (`App::propose`), and Browse
// reads a registry of the official v0.1 API's shape served here on 127.0.0.1.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { CommandError, ShownProposal } from "../src/lib/types";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

const TIME = "io.github.modelcontextprotocol/server-time";

/** The registry's one entry, as its v0.1 API gives it. */
const ENTRY = {
  server: {
    name: TIME,
    description: "Tells the time.",
    version: "2026.1.0",
    packages: [{ registryType: "pypi", identifier: "mcp-server-time", version: "2026.1.0", transport: { type: "stdio" } }],
  },
  _meta: { "io.modelcontextprotocol.registry/official": { status: "active", isLatest: true } },
};

let registry: Server;
let address = "";

beforeAll(async () => {
  registry = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://registry");
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { "Content-Type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === "/v0.1/servers") {
      const text = (url.searchParams.get("search") ?? "").toLowerCase();
      const servers = ENTRY.server.name.toLowerCase().includes(text) ? [ENTRY] : [];
      return answer(200, { servers, metadata: { count: servers.length } });
    }
    answer(404, { title: "Not Found", status: 404, detail: "Server not found" });
  });
  await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
  address = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => registry.close(() => resolve())));

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** A link proposing the mcp.json entry `config` as the server `name`. */
function entryLink(name: string, config: Record<string, unknown>): string {
  return `switchboard://install?name=${encodeURIComponent(name)}&config=${encodeURIComponent(JSON.stringify(config))}`;
}

/** The link handed to the app; what the window is shown. */
async function follow(link: string): Promise<ShownProposal> {
  return (await backend.link(link)) as ShownProposal;
}

const servers = () => backend.seed(() => ipc.listMcpServers());

describe("a server proposed by a link", () => {
  it("shows what an entry would run as text, and adds nothing when dismissed", async () => {
    const { user } = await renderApp();
    const name = "<img src=x onerror=alert(1)>";
    const shown = await follow(entryLink(name, { command: "uvx", args: ["mcp-server-time"], env: { TZ: "Europe/Oslo" } }));
    expect(shown).toMatchObject({ kind: "entry", name });
    const dialog = await screen.findByTestId("confirm-dialog");
    expect(within(dialog).getByTestId("proposal-name").textContent).toBe(name);
    expect(dialog.querySelector("img")).toBeNull();
    const command = within(dialog).getByTestId("proposal-command").textContent;
    expect(command).toBe(shown.kind === "entry" ? shown.command_line : null);
    expect(command).toContain("TZ=Europe/Oslo");
    expect(command).toContain("uvx mcp-server-time");
    await user.click(within(dialog).getByTestId("confirm-cancel"));
    await waitFor(() => expect(screen.queryByTestId("confirm-dialog")).toBeNull());
    expect(backend.callsTo("accept_server_proposal")).toHaveLength(0);
    expect(await servers()).toEqual([]);
  });

  it("adds an entry through Rust when the person goes on, and shows it on the Servers page", async () => {
    await backend.host({ confirm: false });
    const { user } = await renderApp();
    await follow(entryLink("time", { command: "uvx", args: ["mcp-server-time"] }));
    await user.click(await screen.findByTestId("confirm-ok"));
    const [item] = await screen.findAllByTestId("server-item");
    expect(item.dataset.name).toBe("time");
    await waitFor(() => expect(within(item).getByTestId("server-state").textContent).toBe("Needs approval"));
    // Rust asked to approve it as it now is, and the person said no.
    expect((await backend.asked()).map((a) => a.dialog)).toEqual(["approve_server"]);
    expect((await servers()).map((s) => [s.name, s.approved])).toEqual([["time", false]]);
  });

  it("looks a registry server up in Browse", async () => {
    const settings = await backend.seed(() => ipc.getSettings());
    await backend.seed(() => ipc.updateSettings({ ...settings, mcp_registry: address }));
    const { user } = await renderApp();
    expect(await follow(`switchboard://install?registry=${TIME}`)).toMatchObject({ kind: "registry", name: TIME, version: null });
    const dialog = await screen.findByTestId("confirm-dialog");
    expect(within(dialog).getByTestId("proposal-name").textContent).toBe(TIME);
    await user.click(within(dialog).getByTestId("confirm-ok"));
    const items = await screen.findAllByTestId("registry-item");
    expect(items.map((i) => i.dataset.name)).toEqual([TIME]);
    expect(screen.getByTestId("add-tab-registry").getAttribute("aria-selected")).toBe("true");
    expect(screen.getByTestId("registry-browse").hidden).toBe(false);
    expect(screen.getByTestId<HTMLInputElement>("registry-query").value).toBe(TIME);
    // Looked up only: nothing is added until the person installs it from Browse.
    expect(await servers()).toEqual([]);
  });

  it("says why a link was not followed, as text, and adds nothing", async () => {
    const { user } = await renderApp();
    // A link cannot bring a secret; Rust's reason names the variable, markup and all.
    const link = entryLink("time", { command: "uvx", args: ["mcp-server-time"], env: { "<b>X</b>": "sk-proj-0123456789abcdef" } });
    const refusal = (await backend.link(link).catch((e: unknown) => e)) as CommandError;
    expect(refusal).toMatchObject({ kind: "invalid_input", field: "link" });
    expect(refusal.message).toContain("“<b>X</b>”, which looks like a secret");
    const dialog = await screen.findByTestId("confirm-dialog");
    expect(within(dialog).getByTestId("proposal-refused").textContent).toBe(refusal.message);
    expect(dialog.querySelector("b")).toBeNull();
    // It only tells: one button, which has the focus.
    expect(within(dialog).queryByTestId("confirm-cancel")).toBeNull();
    expect(document.activeElement).toBe(within(dialog).getByTestId("confirm-ok"));
    await user.click(within(dialog).getByTestId("confirm-ok"));
    await waitFor(() => expect(screen.queryByTestId("confirm-dialog")).toBeNull());
    expect(backend.callsTo("accept_server_proposal")).toHaveLength(0);
    expect(await servers()).toEqual([]);
  });
});
