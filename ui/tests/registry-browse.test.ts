// Browse on the Servers page: the MCP Registry searched, each server shown as text, installed
// through Rust (which asks for approval in its own dialog).
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

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
  it("shows what the registry says of each server as text, and links only to web addresses", async () => {
    backend.registry[1].description = "<img src=x onerror=alert(1)> GitHub";
    const { user } = await openBrowse();
    const items = await search(user, "");
    expect(items.map((i) => i.dataset.name)).toEqual([
      "io.github.modelcontextprotocol/server-time",
      "io.github.github/github-mcp-server",
    ]);
    const time = within(items[0]);
    expect(time.getByText("Time")).toBeTruthy();
    expect(time.getByText("2026.10.19")).toBeTruthy();
    expect(time.getByTestId("registry-source-line").textContent).toContain("PyPI · mcp-server-time@2026.10.19 · stdio");
    expect(time.getByTestId("registry-repository").getAttribute("href")).toBe("https://github.com/modelcontextprotocol/servers");
    const github = within(items[1]);
    expect(github.getByTestId("registry-status").textContent).toBe("deprecated");
    expect(items[1].querySelector("img")).toBeNull();
    expect(items[1].textContent).toContain("<img src=x onerror=alert(1)> GitHub");
    // A repository that is no web address is not made a link.
    expect(github.queryByTestId("registry-repository")).toBeNull();
    const lines = github.getAllByTestId("registry-source-line");
    expect(lines[1].textContent).toContain("needs Authorization (header, secret)");
  });

  it("searches by name, says when nothing matches, and pages on with More", async () => {
    backend.registryPage = 1;
    const { user } = await openBrowse();
    let items = await search(user, "io.github");
    expect(items).toHaveLength(1);
    await user.click(screen.getByTestId("registry-more"));
    await waitFor(() => expect(screen.getAllByTestId("registry-item")).toHaveLength(2));
    expect(screen.queryByTestId("registry-more")).toBeNull();
    await search(user, "time").then((found) => (items = found));
    expect(items.map((i) => i.dataset.name)).toEqual(["io.github.modelcontextprotocol/server-time"]);
    await user.clear(screen.getByTestId("registry-query"));
    await user.type(screen.getByTestId("registry-query"), "nothing-like-it");
    await user.click(screen.getByTestId("registry-search"));
    expect((await screen.findByTestId("registry-none")).textContent).toContain("nothing-like-it");
  });

  it("says why the registry gave no answer", async () => {
    backend.failures.set("search_mcp_registry", {
      kind: "registry",
      message: "The registry at http://127.0.0.1:9/ could not be reached: connection refused",
      field: null,
    });
    const { user } = await openBrowse();
    await user.click(screen.getByTestId("registry-search"));
    expect((await screen.findByTestId("registry-error")).textContent).toContain("could not be reached");
  });

  it("installs a package through Rust, which asks for approval, and the server joins the list", async () => {
    const { user } = await openBrowse();
    const [time] = await search(user, "time");
    await user.click(within(time).getByTestId("registry-install"));
    const form = within(time).getByTestId("registry-install-form");
    expect(within(form).getByTestId<HTMLInputElement>("registry-install-name").value).toBe("server-time");
    await user.click(within(form).getByTestId("registry-install-submit"));
    expect((await within(form).findByTestId("registry-installed")).textContent).toBe("Added “server-time”; it is starting.");
    expect(backend.installed).toEqual([
      { server: "io.github.modelcontextprotocol/server-time", version: "2026.10.19", source: 0, name: "server-time", values: {} },
    ]);
    const added = await screen.findAllByTestId("server-item");
    expect(added.map((s) => s.dataset.name)).toEqual(["server-time"]);
    expect(within(added[0]).getByTestId("server-command").textContent).toBe("uvx mcp-server-time==2026.10.19");
  });

  it("asks for what a source needs, a secret in a password field, and only offers sources it can install", async () => {
    backend.approvalAnswer = false;
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
    expect(backend.installed).toEqual([]);
    await user.type(token, "Bearer ghp_secret");
    await user.selectOptions(form.querySelector<HTMLSelectElement>('[data-need="X-MCP-Toolsets"]')!, "issues");
    await user.clear(within(form).getByTestId("registry-install-name"));
    await user.type(within(form).getByTestId("registry-install-name"), "github");
    await user.click(within(form).getByTestId("registry-install-submit"));
    expect((await within(form).findByTestId("registry-installed")).textContent).toBe("Added “github”; it waits for your approval.");
    expect(backend.installed[0].values).toEqual({ Authorization: ["Bearer ghp_secret"], "X-MCP-Toolsets": ["issues"] });
    expect(backend.installed[0].source).toBe(1);
    // The secret does not stay in the page once Rust has it.
    expect(token.value).toBe("");
  });

  it("shows Rust's refusal (a runtime not on the PATH) on the form", async () => {
    backend.missingRuntimes = ["pypi"];
    const { user } = await openBrowse();
    const [time] = await search(user, "time");
    await user.click(within(time).getByTestId("registry-install"));
    await user.click(within(time).getByTestId("registry-install-submit"));
    expect((await within(time).findByTestId("registry-install-error")).textContent).toContain("not on your PATH");
    expect(screen.queryAllByTestId("server-item")).toHaveLength(0);
  });
});
