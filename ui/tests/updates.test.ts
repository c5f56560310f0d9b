// Settings › Updates: checked only when asked, installed only when asked again (Rust checks the
// signature and says when it does not match), then a restart offered; notes shown as text.
// A build with no update address runs on the real core; what an update server answers
// (up to date, a release, its download and signature check) stays on the fake backend, as
// ipc_serve's host has no update to offer (its check always says "not configured").
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installRealBackend } from "./real-backend";
import { installFakeBackend, renderApp } from "./render-app";

async function openUpdates() {
  const rendered = await renderApp();
  await rendered.user.click(screen.getByTestId("nav-settings"));
  const section = await screen.findByTestId("updates-section");
  return { ...rendered, section };
}

describe("Updates, on the real core", () => {
  it("asks nothing until the person checks, and says who updates a build with no update address", async () => {
    const backend = await installRealBackend();
    const { user, section } = await openUpdates();
    expect(backend.calls.map((c) => c.cmd)).toContain("get_settings");
    expect(backend.calls.map((c) => c.cmd)).not.toContain("check_for_update");
    expect(within(section).queryByTestId("update-status")).toBeNull();
    await user.click(within(section).getByTestId("update-check"));
    expect((await within(section).findByTestId("update-status")).textContent).toContain("names no update address");
    expect(within(section).queryByTestId("update-install")).toBeNull();
    expect(backend.callsTo("check_for_update")).toHaveLength(1);
  });
});

// ipc_serve's host answers every check "not configured" and every install "nothing checked".
describe("Updates from an update server (fake backend)", () => {
  let backend: FakeBackend;

  beforeEach(() => {
    backend = installFakeBackend();
  });

  it("says the newest release is running", async () => {
    backend.update = { state: "up_to_date", current: "0.1.0" };
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    expect((await within(section).findByTestId("update-status")).textContent).toBe("Switchboard 0.1.0 is the newest release.");
  });

  it("installs a release when asked, shows its progress and notes as text, then offers the restart", async () => {
    backend.update = {
      state: "available",
      current: "0.1.0",
      version: "0.2.0",
      date: "2026-11-20",
      notes: "<img src=x onerror=alert(1)> Faster\nSafer",
      installable: true,
    };
    backend.updateInstall = { chunks: [{ received: 50, total: 100 }, { received: 100, total: 100 }] };
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    const status = await within(section).findByTestId("update-status");
    expect(status.textContent?.replace(/\s+/g, " ")).toContain("Switchboard 0.2.0 is available (you have 0.1.0), published 2026-11-20.");
    expect(within(section).getByTestId("update-notes").textContent).toBe("<img src=x onerror=alert(1)> Faster\nSafer");
    expect(section.querySelector("img")).toBeNull();

    await user.click(within(section).getByTestId("update-install"));
    expect((await within(section).findByTestId("update-installed")).textContent).toContain("Switchboard 0.2.0 is installed");
    expect(within(section).queryByTestId("update-check")).toBeNull();
    await user.click(within(section).getByTestId("update-restart"));
    expect(backend.restarts).toBe(1);
  });

  it("says why Rust refused the release and offers no restart", async () => {
    backend.update = { state: "available", current: "0.1.0", version: "0.2.0", date: null, notes: null, installable: true };
    backend.updateInstall = {
      chunks: [{ received: 10, total: null }],
      fails: { kind: "update", message: "The update's signature does not match this app's update key, so nothing was installed.", field: null },
    };
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    await user.click(await within(section).findByTestId("update-install"));
    expect((await within(section).findByTestId("update-error")).textContent).toContain("signature does not match");
    expect(within(section).queryByTestId("update-restart")).toBeNull();
    expect(within(section).queryByTestId("update-progress")).toBeNull();
    expect(backend.restarts).toBe(0);
  });

  it("a new check takes back what the last one found until it answers", async () => {
    backend.update = { state: "available", current: "0.1.0", version: "0.2.0", date: null, notes: null, installable: true };
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    await within(section).findByTestId("update-install");
    backend.delay = (cmd) => (cmd === "check_for_update" ? 400 : 0);
    backend.update = { state: "up_to_date", current: "0.1.0" };
    await user.click(within(section).getByTestId("update-check"));
    expect(within(section).getByTestId("update-check").textContent?.trim()).toBe("Checking…");
    expect(within(section).queryByTestId("update-install")).toBeNull();
    expect(within(section).queryByTestId("update-status")).toBeNull();
    expect((await within(section).findByTestId("update-status")).textContent).toBe("Switchboard 0.1.0 is the newest release.");
    expect(within(section).queryByTestId("update-install")).toBeNull();
  });

  it("offers no install to a copy that cannot replace itself", async () => {
    backend.update = { state: "available", current: "0.1.0", version: "0.2.0", date: null, notes: null, installable: false };
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    expect((await within(section).findByTestId("update-status")).textContent).toContain("cannot replace itself");
    expect(within(section).queryByTestId("update-install")).toBeNull();
  });
});
