// Browse on the Servers page: the MCP Registry searched, each server shown as text, installed
// through Rust (which asks for approval in its own dialog). Against the real core, which reads
// a registry of the official v0.1 API's shape served here on 127.0.0.1 (its entries as this
// file writes them, hostile ones included).
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { InstallRequest } from "../src/lib/types";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

const official = (status: string) => ({ "io.modelcontextprotocol.registry/official": { status, isLatest: true } });

/** The registry's entries, as its v0.1 API gives them. */
const ENTRIES = [
  {
    server: {
      name: "io.github.modelcontextprotocol/server-everything",
      title: "Everything",
      description: "Exercises every feature of MCP.",
      version: "2026.8.31",
      repository: { url: "https://github.com/modelcontextprotocol/servers", source: "github" },
      packages: [{ registryType: "npm", identifier: "@modelcontextprotocol/server-everything", version: "2026.8.31", transport: { type: "stdio" } }],
    },
    _meta: official("active"),
  },
  {
    server: {
      name: "io.github.github/github-mcp-server",
      description: "<img src=x onerror=alert(1)> GitHub",
      version: "1.10.1",
      repository: { url: "javascript:alert(1)", source: "github" },
      packages: [{ registryType: "nuget", identifier: "GitHub.Mcp", version: "1.10.1", transport: { type: "stdio" } }],
      remotes: [
        {
          type: "streamable-http",
          url: "https://api.githubcopilot.com/mcp/",
          headers: [
            { name: "Authorization", description: "A GitHub token, as Bearer TOKEN", isRequired: true, isSecret: true },
            { name: "X-MCP-Toolsets", description: "Which toolsets", choices: ["repos", "issues"] },
          ],
        },
      ],
    },
    _meta: official("deprecated"),
  },
  {
    server: {
      name: "com.example.tools/both-ways",
      title: "Both Ways Ünïcode MCP",
      description: "Runs here or remotely.",
      version: "0.3.0",
      packages: [
        {
          registryType: "pypi",
          identifier: "both-ways",
          version: "0.3.0",
          transport: { type: "stdio" },
          environmentVariables: [{ name: "BOTH_TOKEN", description: "A token", isRequired: true, isSecret: true }],
        },
      ],
      remotes: [{ type: "streamable-http", url: "https://both.example.com/mcp" }],
    },
    _meta: official("active"),
  },
];

/** Entries a test adds after those above (reset before each test). */
let added: (typeof ENTRIES)[number][] = [];

/** One server of the registry at `version`, run from npm. */
function twiceAt(version: string): (typeof ENTRIES)[number] {
  return {
    server: {
      name: "io.github.octo/twice",
      title: "Twice",
      description: "Listed at two versions.",
      version,
      repository: { url: "https://github.com/octo/twice", source: "github" },
      packages: [{ registryType: "npm", identifier: "@octo/twice", version, transport: { type: "stdio" } }],
    },
    _meta: official("active"),
  };
}

/** A 1×1 PNG, the icon the registry serves at /icons/… */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

/** A server of the registry named `name` whose icon is at `src`. */
function withIcon(name: string, src: string): (typeof ENTRIES)[number] {
  return {
    server: {
      name: `io.github.octo/${name}`,
      title: name,
      description: "Has an icon.",
      version: "1.0.0",
      repository: { url: "https://github.com/octo/icons", source: "github" },
      packages: [{ registryType: "npm", identifier: `@octo/${name}`, version: "1.0.0", transport: { type: "stdio" } }],
      icons: [{ src, mimeType: "image/png", sizes: ["64x64"] }],
    },
    _meta: official("active"),
  } as unknown as (typeof ENTRIES)[number];
}

/** How many servers a page of the registry holds, and whether it fails every request. */
let pageSize = 30;
let broken = false;
let registry: Server;
let address = "";

beforeAll(async () => {
  registry = createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { "Content-Type": "application/json" });
      response.end(JSON.stringify(body));
    };
    const url = new URL(request.url ?? "/", "http://registry");
    if (broken) return answer(500, { title: "Internal Server Error", status: 500, detail: "the database is down" });
    if (url.pathname.startsWith("/icons/")) {
      response.writeHead(200, { "Content-Type": url.pathname.endsWith(".png") ? "image/png" : "text/html" });
      return response.end(url.pathname.endsWith(".png") ? PNG : "<script>alert(1)</script>");
    }
    if (url.pathname === "/v0.1/servers") {
      const text = (url.searchParams.get("search") ?? "").toLowerCase();
      const found = [...ENTRIES, ...added].filter((e) => e.server.name.toLowerCase().includes(text));
      const start = Number(url.searchParams.get("cursor") ?? "0");
      const page = found.slice(start, start + pageSize);
      const metadata: Record<string, unknown> = { count: page.length };
      if (start + pageSize < found.length) metadata.nextCursor = String(start + pageSize);
      return answer(200, { servers: page, metadata });
    }
    const one = /^\/v0\.1\/servers\/(.+)\/versions\/([^/]+)$/.exec(url.pathname);
    const entry = one && [...ENTRIES, ...added].find((e) => e.server.name === decodeURIComponent(one[1]) && ["latest", e.server.version].includes(decodeURIComponent(one[2])));
    if (entry) return answer(200, entry);
    answer(404, { title: "Not Found", status: 404, detail: "Server not found" });
  });
  await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
  address = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => registry.close(() => resolve())));

async function openBrowse() {
  const rendered = await renderApp();
  await rendered.user.click(screen.getByTestId("nav-servers"));
  await screen.findByTestId("registry-browse");
  return rendered;
}

async function search(user: Awaited<ReturnType<typeof renderApp>>["user"], text: string): Promise<HTMLElement[]> {
  const box = screen.getByTestId("registry-query");
  await user.clear(box);
  if (text) await user.type(box, text);
  await user.click(screen.getByTestId("registry-search"));
  return screen.findAllByTestId("registry-item");
}

describe("Browse the MCP Registry", () => {
  let backend: RealBackend;

  beforeEach(async () => {
    pageSize = 30;
    broken = false;
    added = [];
    backend = await installRealBackend();
    const settings = await backend.seed(() => ipc.getSettings());
    await backend.seed(() => ipc.updateSettings({ ...settings, mcp_registry: address }));
  });

  const installs = () => backend.callsTo("install_mcp_server").map((call) => (call.args as { request: InstallRequest }).request);

  it("shows what the registry says of each server as text, and links only to web addresses", async () => {
    const { user } = await openBrowse();
    const items = await search(user, "");
    expect(items.map((i) => i.dataset.name)).toEqual([
      "io.github.modelcontextprotocol/server-everything",
      "io.github.github/github-mcp-server",
      "com.example.tools/both-ways",
    ]);
    const everything = within(items[0]);
    expect(everything.getByText("Everything")).toBeTruthy();
    expect(everything.getByText("2026.8.31")).toBeTruthy();
    expect(everything.getByTestId("registry-source-line").textContent).toContain("npm · @modelcontextprotocol/server-everything@2026.8.31 · stdio");
    expect(everything.getByTestId("registry-repository").getAttribute("href")).toBe("https://github.com/modelcontextprotocol/servers");
    const github = within(items[1]);
    expect(github.getByTestId("registry-status").textContent).toBe("deprecated");
    expect(items[1].querySelector("img")).toBeNull();
    expect(items[1].textContent).toContain("<img src=x onerror=alert(1)> GitHub");
    // A repository that is no web address is not made a link.
    expect(github.queryByTestId("registry-repository")).toBeNull();
    const lines = github.getAllByTestId("registry-source-line");
    expect(lines[1].textContent).toContain("Needs: Authorization (header, secret)");
  });

  it("shows each result as a card: a letter avatar, publisher and namespace, version, how it runs and whether it needs a secret", async () => {
    const { user } = await openBrowse();
    const [everything, github, both] = await search(user, "");
    // No image where the registry names no icon: a letter.
    for (const card of [everything, github, both]) expect(card.querySelector("img")).toBeNull();
    expect(within(everything).getByTestId("registry-avatar").textContent).toBe("E");
    expect(within(github).getByTestId("registry-avatar").textContent).toBe("G");
    expect(within(everything).getByTestId("registry-publisher").textContent?.replace(/\s+/g, " ").trim()).toBe(
      "Publisher: modelcontextprotocol (GitHub) Namespace: io.github.modelcontextprotocol",
    );
    expect(within(both).getByTestId("registry-publisher").textContent?.replace(/\s+/g, " ").trim()).toBe(
      "Publisher: tools.example.com Namespace: com.example.tools",
    );
    // A server without a title goes by the last part of its registry name.
    expect(within(github).getByRole("heading", { level: 3 }).textContent).toBe("github-mcp-server");
    expect(within(both).getByText("0.3.0")).toBeTruthy();
    const chips = (card: HTMLElement) => within(card).getAllByTestId("registry-chip").map((c) => c.textContent);
    expect(chips(everything)).toEqual(["stdio", "npm"]);
    expect(chips(github)).toEqual(["stdio", "NuGet", "Remote HTTP"]);
    expect(chips(both)).toEqual(["stdio", "PyPI", "Remote HTTP"]);
    expect(within(everything).queryByTestId("registry-secret")).toBeNull();
    expect(within(github).getByTestId("registry-secret").textContent).toBe("Needs a secret");
    expect(within(github).getByTestId("registry-secret").getAttribute("title")).toBe("Asks for Authorization (header)");
    // One way to install, or the choice of local or remote where it offers both.
    expect(within(github).getByTestId("registry-install").textContent?.trim()).toBe("Install…");
    expect(within(both).queryByTestId("registry-install")).toBeNull();
    expect(within(both).getByTestId("registry-install-local").textContent?.trim()).toBe("Install as local…");
    expect(within(both).getByTestId("registry-install-remote").textContent?.trim()).toBe("Use remote…");
  });

  it("shows a server's icon as the data: URL Rust fetched, and a letter where the icon may not be had", async () => {
    added = [
      withIcon("served", `${address}/icons/served.png`),
      withIcon("elsewhere", "http://198.51.100.7/icon.png"),
      withIcon("page", `${address}/icons/page.html`),
      withIcon("inline", `data:image/png;base64,${PNG.toString("base64")}`),
      withIcon("script", "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="),
    ];
    const { user } = await openBrowse();
    const cards = await search(user, "octo");
    const card = (name: string) => cards.find((c) => c.dataset.name === `io.github.octo/${name}`)!;
    for (const name of ["served", "inline"]) {
      const icon = within(card(name)).getByTestId("registry-icon") as HTMLImageElement;
      expect(icon.getAttribute("src")).toBe(`data:image/png;base64,${PNG.toString("base64")}`);
      expect(icon.getAttribute("alt")).toBe("");
    }
    // Not https nor the registry's own origin, not an image, or not an image's data: a letter.
    for (const name of ["elsewhere", "page", "script"]) {
      expect(card(name).querySelector("img")).toBeNull();
      expect(within(card(name)).getByTestId("registry-avatar").textContent).toBe(name[0].toUpperCase());
    }
  });

  it("installs as local or uses the remote address, as the person chose, named from its title", async () => {
    await backend.host({ confirm: false });
    const { user } = await openBrowse();
    const [both] = await search(user, "both");
    await user.click(within(both).getByTestId("registry-install-local"));
    let form = within(both).getByTestId("registry-install-form");
    // Only its package is offered, with the secret it needs.
    expect(within(form).queryAllByTestId("registry-source")).toEqual([]);
    expect(form.querySelector<HTMLInputElement>('[data-need="BOTH_TOKEN"]')?.type).toBe("password");
    expect(within(form).getByTestId<HTMLInputElement>("registry-install-name").value).toBe("both-ways-unicode-mcp");
    await user.click(within(both).getByTestId("registry-install-remote"));
    form = within(both).getByTestId("registry-install-form");
    expect(form.querySelector('[data-need="BOTH_TOKEN"]')).toBeNull();
    expect(within(both).getByTestId("registry-install-remote").getAttribute("aria-expanded")).toBe("true");
    expect(within(both).getByTestId("registry-install-local").getAttribute("aria-expanded")).toBe("false");
    await user.click(within(form).getByTestId("registry-install-submit"));
    expect((await within(form).findByTestId("registry-installed")).textContent).toBe("Added “both-ways-unicode-mcp” · Needs approval");
    expect(installs()).toEqual([
      { server: "com.example.tools/both-ways", version: "0.3.0", source: 1, name: "both-ways-unicode-mcp", values: {} },
    ]);
    const [added] = await screen.findAllByTestId("server-item");
    expect(added.dataset.name).toBe("both-ways-unicode-mcp");
    expect(within(added).getByTestId("server-open").textContent).toContain("HTTP");
  });

  it("opens the install form of one version of a server, not of every version listed", async () => {
    added = [twiceAt("1.0.0"), twiceAt("2.0.0")];
    await backend.host({ confirm: false });
    const { user } = await openBrowse();
    const [first, second] = await search(user, "twice");
    expect([first, second].map((i) => [i.dataset.name, i.dataset.version])).toEqual([
      ["io.github.octo/twice", "1.0.0"],
      ["io.github.octo/twice", "2.0.0"],
    ]);
    await user.click(within(second).getByTestId("registry-install"));
    expect(screen.getAllByTestId("registry-install-form")).toHaveLength(1);
    expect(within(second).getByTestId("registry-install-form")).toBeTruthy();
    expect(within(first).queryByTestId("registry-install-form")).toBeNull();
    expect(within(first).getByTestId("registry-install").getAttribute("aria-expanded")).toBe("false");
    expect(within(second).getByTestId("registry-install").getAttribute("aria-expanded")).toBe("true");

    // The other version's Install moves the one form there.
    await user.click(within(first).getByTestId("registry-install"));
    expect(screen.getAllByTestId("registry-install-form")).toHaveLength(1);
    expect(within(second).queryByTestId("registry-install-form")).toBeNull();
    await user.click(within(first).getByTestId("registry-install-submit"));
    await within(first).findByTestId("registry-installed");
    expect(installs()).toEqual([{ server: "io.github.octo/twice", version: "1.0.0", source: 0, name: "twice", values: {} }]);
  });

  it("searches by name, says when nothing matches, and pages on with More", async () => {
    pageSize = 1;
    const { user } = await openBrowse();
    const items = await search(user, "io.github");
    expect(items).toHaveLength(1);
    await user.click(screen.getByTestId("registry-more"));
    await waitFor(() => expect(screen.getAllByTestId("registry-item")).toHaveLength(2));
    expect(screen.queryByTestId("registry-more")).toBeNull();
    await search(user, "everything");
    // The earlier results stay on show until Rust's answer replaces them.
    await waitFor(() =>
      expect(screen.getAllByTestId("registry-item").map((i) => i.dataset.name)).toEqual(["io.github.modelcontextprotocol/server-everything"]),
    );
    await user.clear(screen.getByTestId("registry-query"));
    await user.type(screen.getByTestId("registry-query"), "nothing-like-it");
    await user.click(screen.getByTestId("registry-search"));
    expect((await screen.findByTestId("registry-none")).textContent).toContain("nothing-like-it");
  });

  it("says why the registry gave no answer", async () => {
    broken = true;
    const { user } = await openBrowse();
    await user.click(screen.getByTestId("registry-search"));
    const error = (await screen.findByTestId("registry-error")).textContent;
    expect(error).toContain(address);
    expect(error).toContain("the database is down");
  });

  it("installs a package through Rust, which asks for approval, and the server joins the list", async () => {
    // Said no to, so nothing is fetched and run.
    await backend.host({ confirm: false });
    const { user } = await openBrowse();
    const [everything] = await search(user, "everything");
    await user.click(within(everything).getByTestId("registry-install"));
    const form = within(everything).getByTestId("registry-install-form");
    // Named from its title by default.
    expect(within(form).getByTestId<HTMLInputElement>("registry-install-name").value).toBe("everything");
    await user.click(within(form).getByTestId("registry-install-submit"));
    expect((await within(form).findByTestId("registry-installed")).textContent).toBe("Added “everything” · Needs approval");
    expect(installs()).toEqual([
      { server: "io.github.modelcontextprotocol/server-everything", version: "2026.8.31", source: 0, name: "everything", values: {} },
    ]);
    expect((await backend.asked()).map((a) => a.dialog)).toEqual(["approve_server"]);
    const added = await screen.findAllByTestId("server-item");
    expect(added.map((s) => s.dataset.name)).toEqual(["everything"]);
    await user.click(within(added[0]).getByTestId("server-open"));
    expect(within(added[0]).getByTestId("server-command").textContent).toBe("npx -y @modelcontextprotocol/server-everything@2026.8.31");
  });

  it("asks for what a source needs, a secret in a password field, and only offers sources it can install", async () => {
    await backend.host({ confirm: false });
    const { user } = await openBrowse();
    const [, github] = await search(user, "github");
    await user.click(within(github).getByTestId("registry-install"));
    const form = within(github).getByTestId("registry-install-form");
    const sources = within(form).getAllByTestId<HTMLInputElement>("registry-source");
    expect(sources.map((s) => s.disabled)).toEqual([true, false]);
    expect(sources[1].checked).toBe(true);
    const token = form.querySelector<HTMLInputElement>('[data-need="Authorization"]')!;
    expect(token.type).toBe("password");
    // A required value left empty is said beside its field; nothing is sent.
    await user.click(within(form).getByTestId("registry-install-submit"));
    expect(within(form).getByTestId("error-need-Authorization").textContent).toBe("Required.");
    expect(installs()).toEqual([]);
    await user.type(token, "Bearer ghp_secret");
    await user.selectOptions(form.querySelector<HTMLSelectElement>('[data-need="X-MCP-Toolsets"]')!, "issues");
    await user.clear(within(form).getByTestId("registry-install-name"));
    await user.type(within(form).getByTestId("registry-install-name"), "github");
    await user.click(within(form).getByTestId("registry-install-submit"));
    expect((await within(form).findByTestId("registry-installed")).textContent).toBe("Added “github” · Needs approval");
    expect(installs()[0].values).toEqual({ Authorization: ["Bearer ghp_secret"], "X-MCP-Toolsets": ["issues"] });
    expect(installs()[0].source).toBe(1);
    // The secret does not stay in the page once Rust has it, nor in what Rust shows of it.
    expect(token.value).toBe("");
    const [added] = await screen.findAllByTestId("server-item");
    expect(added.dataset.name).toBe("github");
    expect(added.textContent).not.toContain("ghp_secret");
  });
});

// A runtime not on the PATH servers start with: the app reopened with a PATH that has no npx.
describe("Browse the MCP Registry: a runtime that is missing", () => {
  it("shows Rust's refusal (a runtime not on the PATH) on the form", async () => {
    pageSize = 30;
    broken = false;
    const backend = await installRealBackend();
    await backend.reopen({ searchPath: [mkdtempSync(join(tmpdir(), "empty-path-"))] });
    const settings = await backend.seed(() => ipc.getSettings());
    await backend.seed(() => ipc.updateSettings({ ...settings, mcp_registry: address }));
    const { user } = await openBrowse();
    const [everything] = await search(user, "everything");
    await user.click(within(everything).getByTestId("registry-install"));
    await user.click(within(everything).getByTestId("registry-install-submit"));
    expect((await within(everything).findByTestId("registry-install-error")).textContent).toContain("npx");
    expect(within(everything).getByTestId("registry-install-error").textContent).toContain("not on your PATH");
    expect(screen.queryAllByTestId("server-item")).toHaveLength(0);
    expect(await backend.seed(() => ipc.listMcpServers())).toEqual([]);
  });
});
