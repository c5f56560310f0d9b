// Installing an MCP bundle on the Servers page: Rust's dialog picks the file, the consent screen
// shows what it is as text and asks for its values, Rust installs and asks for approval.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";
import type { OfferedBundle } from "../src/lib/types";

let backend: FakeBackend;

const BUNDLE: OfferedBundle = {
  token: "t-1",
  file_name: "echo.mcpb",
  suggested_name: "echo-bundle",
  info: {
    name: "Echo Bundle",
    display_name: "<img src=x onerror=alert(1)>Echo",
    version: "1.2.0",
    description: "Says back what it is given.",
    author: "Someone",
    author_url: null,
    repository: null,
    homepage: null,
    server_type: "python",
    command_line: "ECHO_KEY=${user_config.api_key} python3 <bundle>/server/main.py ${user_config.folders}",
    tools: [{ name: "echo", description: "Says it back" }],
    tools_generated: false,
    prompts: [],
    user_config: [
      { key: "api_key", title: "API key", description: null, kind: "string", required: true, sensitive: true, multiple: false, default: [], min: null, max: null },
      { key: "folders", title: "Folders", description: "Where it looks", kind: "directory", required: false, sensitive: false, multiple: true, default: ["/home/me/Desktop"], min: null, max: null },
    ],
    files: 2,
    unpacked_bytes: 5120,
  },
};

beforeEach(() => {
  backend = installFakeBackend();
});

async function openServers() {
  const rendered = await renderApp();
  await rendered.user.click(screen.getByTestId("nav-servers"));
  await screen.findByTestId("bundle-install");
  return rendered;
}

describe("Install a bundle", () => {
  it("does nothing when Rust's dialog is closed", async () => {
    const { user } = await openServers();
    await user.click(screen.getByTestId("bundle-open"));
    expect(screen.queryByTestId("bundle-consent")).toBeNull();
  });

  it("says why Rust refused the bundle it read", async () => {
    backend.failures.set("open_mcp_bundle", {
      kind: "install",
      message: "The bundle holds “../evil.txt”, a path that leads outside the bundle or is a link; it is refused",
      field: null,
    });
    const { user } = await openServers();
    await user.click(screen.getByTestId("bundle-open"));
    expect((await screen.findByTestId("bundle-open-error")).textContent).toContain("../evil.txt");
    expect(screen.queryByTestId("bundle-consent")).toBeNull();
  });

  it("shows what the bundle is as text, asks for its values and installs it through Rust", async () => {
    backend.pickedBundle = BUNDLE;
    const { user } = await openServers();
    await user.click(screen.getByTestId("bundle-open"));
    const consent = await screen.findByTestId("bundle-consent");
    expect(within(consent).getByTestId("bundle-title").textContent).toBe("<img src=x onerror=alert(1)>Echo");
    expect(consent.querySelector("img")).toBeNull();
    expect(within(consent).getByTestId("bundle-author").textContent).toBe("Someone");
    expect(within(consent).getByTestId("bundle-command").textContent).toContain("python3 <bundle>/server/main.py");
    expect(within(consent).getByTestId("bundle-tools").textContent).toContain("echo — Says it back");
    expect(consent.textContent?.replace(/\s+/g, " ")).toContain("2 files, 5.0 KB unpacked");

    const form = screen.getByTestId("bundle-form");
    expect(within(form).getByTestId<HTMLInputElement>("bundle-name").value).toBe("echo-bundle");
    const key = form.querySelector<HTMLInputElement>('[data-option="api_key"]')!;
    expect(key.type).toBe("password");
    const folders = form.querySelector<HTMLTextAreaElement>('[data-option="folders"]')!;
    expect(folders.value).toBe("/home/me/Desktop");

    await user.click(within(form).getByTestId("bundle-submit"));
    expect(within(form).getByTestId("error-option-api_key").textContent).toBe("Required.");
    expect(backend.bundleInstalls).toEqual([]);

    await user.type(key, "sk-typed");
    await user.type(folders, "{Enter}/srv/two");
    await user.click(within(form).getByTestId("bundle-submit"));
    expect((await within(form).findByTestId("bundle-installed")).textContent).toBe("Added “echo-bundle”; it is starting.");
    expect(backend.bundleInstalls).toEqual([
      { token: "t-1", name: "echo-bundle", values: { api_key: ["sk-typed"], folders: ["/home/me/Desktop", "/srv/two"] } },
    ]);
    expect(key.value).toBe("");
    const [server] = await screen.findAllByTestId("server-item");
    expect(server.dataset.name).toBe("echo-bundle");
  });

  it("shows a bundle dropped on the window from any page, and says why Rust refused another", async () => {
    const { user } = await renderApp();
    expect(screen.queryByTestId("bundle-install")).toBeNull();
    backend.drop({ type: "bundle", offered: BUNDLE });
    const consent = await screen.findByTestId("bundle-consent");
    expect(within(consent).getByTestId("bundle-author").textContent).toBe("Someone");
    expect(screen.getByTestId<HTMLInputElement>("bundle-name").value).toBe("echo-bundle");

    backend.drop({ type: "bundle_refused", file_name: "evil.mcpb", reason: "The bundle holds “../evil.txt”, a path that leads outside the bundle" });
    expect((await screen.findByTestId("bundle-open-error")).textContent).toBe(
      "evil.mcpb: The bundle holds “../evil.txt”, a path that leads outside the bundle",
    );
    expect(screen.queryByTestId("bundle-consent")).toBeNull();

    backend.drop({ type: "bundle", offered: BUNDLE });
    await screen.findByTestId("bundle-consent");
    expect(screen.queryByTestId("bundle-open-error")).toBeNull();
    await user.type(screen.getByTestId("bundle-form").querySelector<HTMLInputElement>('[data-option="api_key"]')!, "k");
    await user.click(screen.getByTestId("bundle-submit"));
    await screen.findByTestId("bundle-installed");
    expect(backend.bundleInstalls.map((r) => r.token)).toEqual(["t-1"]);
  });
});
