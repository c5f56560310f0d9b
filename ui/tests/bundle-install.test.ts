// Installing an MCP bundle on the Servers page: Rust's dialog picks the file, the consent screen
// shows what it is as text and asks for its values, Rust installs and asks for approval; a
// bundle dropped on the window goes to the same screen from any page. Against
// the real core, with real bundles (zip files written here by the test peers' Python around a
// server that runs tests/peers/raw_server.py).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, within } from "@testing-library/svelte";
import type { BundleInstallRequest } from "../src/lib/types";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

const MANIFEST = {
  manifest_version: "0.3",
  name: "Echo Bundle",
  display_name: "<img src=x onerror=alert(1)>Echo",
  version: "1.2.0",
  description: "Says back what it is given.",
  author: { name: "Someone" },
  server: {
    type: "python",
    entry_point: "server/main.py",
    mcp_config: {
      command: "python3",
      args: ["${__dirname}/server/main.py", "${user_config.folders}"],
      env: { ECHO_KEY: "${user_config.api_key}" },
    },
  },
  tools: [{ name: "echo", description: "Says it back" }],
  user_config: {
    api_key: { type: "string", title: "API key", sensitive: true, required: true },
    folders: { type: "directory", title: "Folders", description: "Where it looks", multiple: true, default: ["/home/me/Desktop"] },
  },
};

let folder: string;

/** A bundle at `name` in the test's folder, holding `files` (name → text) as a zip. */
function bundle(name: string, files: Record<string, string>): string {
  const path = join(folder, name);
  const spec = join(folder, `${name}.json`);
  writeFileSync(spec, JSON.stringify(files));
  const zip = "import json,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1],'w')\nfor n,t in json.load(open(sys.argv[2])).items():\n  i=zipfile.ZipInfo(n);i.external_attr=0o755<<16;z.writestr(i,t)\nz.close()";
  execFileSync(inject("peers").python, ["-c", zip, path, spec]);
  return path;
}

/** The echo bundle: its manifest and a server that runs the raw test peer, 5,120 bytes in all. */
function echoBundle(): string {
  const manifest = JSON.stringify(MANIFEST);
  const peer = join(inject("peers").folder, "raw_server.py");
  let server = `import runpy\nrunpy.run_path(${JSON.stringify(peer)}, run_name="__main__")\n`;
  server += `#${"x".repeat(5120 - manifest.length - server.length - 2)}\n`;
  return bundle("echo.mcpb", { "manifest.json": manifest, "server/main.py": server });
}

async function openServers() {
  const rendered = await renderApp();
  await rendered.user.click(screen.getByTestId("nav-servers"));
  await rendered.user.click(await screen.findByTestId("add-tab-bundle"));
  await screen.findByTestId("bundle-install");
  return rendered;
}

/** Whether the Servers page shows its Bundle tab. */
const bundleTabShown = () =>
  screen.getByTestId("add-tab-bundle").getAttribute("aria-selected") === "true" &&
  !screen.getByTestId("bundle-install").closest<HTMLElement>("[role=tabpanel]")!.hidden;

describe("Install a bundle", { timeout: 20_000 }, () => {
  let backend: RealBackend;

  beforeEach(async () => {
    backend = await installRealBackend();
    folder = mkdtempSync(join(tmpdir(), "switchboard-bundle-"));
  });

  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  const installs = () => backend.callsTo("install_mcp_bundle").map((call) => (call.args as { request: BundleInstallRequest }).request);

  it("does nothing when Rust's dialog is closed", async () => {
    await backend.host({ file: null });
    const { user } = await openServers();
    await user.click(screen.getByTestId("bundle-open"));
    await vi.waitFor(() => expect(backend.callsTo("open_mcp_bundle")).toHaveLength(1));
    await vi.waitFor(async () => expect((await backend.asked()).map((a) => a.dialog)).toEqual(["choose_file"]));
    expect(screen.queryByTestId("bundle-consent")).toBeNull();
    expect(screen.queryByTestId("bundle-open-error")).toBeNull();
  });

  it("says why Rust refused the bundle it read", async () => {
    await backend.host({ file: bundle("evil.mcpb", { "manifest.json": JSON.stringify(MANIFEST), "server/main.py": "", "../evil.txt": "out" }) });
    const { user } = await openServers();
    await user.click(screen.getByTestId("bundle-open"));
    expect((await screen.findByTestId("bundle-open-error")).textContent).toContain("../evil.txt");
    expect(screen.queryByTestId("bundle-consent")).toBeNull();
  });

  it("shows what the bundle is as text, asks for its values and installs it through Rust", async () => {
    await backend.host({ file: echoBundle() });
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
    expect(installs()).toEqual([]);

    await user.type(key, "sk-typed");
    await user.type(folders, "{Enter}/srv/two");
    await user.click(within(form).getByTestId("bundle-submit"));
    expect((await within(form).findByTestId("bundle-installed")).textContent).toBe("Added “echo-bundle” · Starting…");
    expect(installs()).toEqual([
      { token: expect.any(String), name: "echo-bundle", values: { api_key: ["sk-typed"], folders: ["/home/me/Desktop", "/srv/two"] } },
    ]);
    expect(key.value).toBe("");
    const [server] = await screen.findAllByTestId("server-item");
    expect(server.dataset.name).toBe("echo-bundle");
    expect(server.textContent).not.toContain("sk-typed");
    expect((await backend.asked()).map((a) => a.dialog)).toEqual(["choose_file", "approve_server"]);
  });

  it("shows a bundle dropped on the window from any page, and says why Rust refused another", async () => {
    const echo = echoBundle();
    const evil = bundle("evil.mcpb", { "manifest.json": JSON.stringify(MANIFEST), "server/main.py": "", "../evil.txt": "out" });
    const { user } = await renderApp();
    expect(screen.queryByTestId("bundle-install")).toBeNull();
    // The window listens for drops once it has started (a drag that left changes nothing).
    await vi.waitFor(async () => expect(await backend.drop("left")).toBe(true));
    await backend.drop({ paths: [echo] });
    const consent = await screen.findByTestId("bundle-consent");
    // The Servers page opened at its Bundle tab.
    expect(bundleTabShown()).toBe(true);
    expect(within(consent).getByTestId("bundle-author").textContent).toBe("Someone");
    expect(screen.getByTestId<HTMLInputElement>("bundle-name").value).toBe("echo-bundle");
    // Dropped while another tab is shown, the bundle brings its tab forward.
    await user.click(screen.getByTestId("add-tab-manual"));
    expect(bundleTabShown()).toBe(false);

    await backend.drop({ paths: [evil] });
    expect((await screen.findByTestId("bundle-open-error")).textContent).toMatch(/^evil\.mcpb: .*“\.\.\/evil\.txt”/);
    expect(screen.queryByTestId("bundle-consent")).toBeNull();
    expect(bundleTabShown()).toBe(true);

    await backend.drop({ paths: [echo] });
    await screen.findByTestId("bundle-consent");
    expect(screen.queryByTestId("bundle-open-error")).toBeNull();
    await user.type(screen.getByTestId("bundle-form").querySelector<HTMLInputElement>('[data-option="api_key"]')!, "k");
    await user.click(screen.getByTestId("bundle-submit"));
    await screen.findByTestId("bundle-installed");
    expect(installs()).toEqual([{ token: expect.any(String), name: "echo-bundle", values: { api_key: ["k"], folders: ["/home/me/Desktop"] } }]);
    // No dialog picked the files; Rust asked only to approve the server it added.
    expect((await backend.asked()).map((a) => a.dialog)).toEqual(["approve_server"]);
    expect((await screen.findAllByTestId("server-item")).map((s) => s.dataset.name)).toEqual(["echo-bundle"]);
  });
});
