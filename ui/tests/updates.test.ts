// Settings › Updates: checked only when asked, installed only when asked again (Rust checks the
// signature and says when it does not match), then a restart offered; notes shown as text.
// All on the real core; what the shell's updater finds is ipc_serve's host's script.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, within } from "@testing-library/svelte";
import type { UpdateStatus } from "../src/lib/bindings";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

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
    expect(within(section).getByTestId("update-check").textContent?.trim()).toBe("Check for updates");
    await user.click(within(section).getByTestId("update-check"));
    const status = await within(section).findByTestId("update-status");
    expect(status.textContent?.replace(/\s+/g, " ")).toContain("Installed version: 0.1.0");
    expect(status.textContent).toContain("has no update address");
    expect(within(section).queryByTestId("update-install")).toBeNull();
    expect(within(section).getByTestId("update-check").textContent?.trim()).toBe("Check again");
    expect(backend.callsTo("check_for_update")).toHaveLength(1);
  });
});

// What the update address answers (up to date, a release, its download and signature check) is
// the shell's updater's: ipc_serve's host stands in for it, and the core's rules (install only
// the release the last check found, never by a copy that cannot be updated in place) are Rust's.
describe("Updates from an update server", () => {
  let backend: RealBackend;

  beforeEach(async () => {
    backend = await installRealBackend();
  });

  const release: UpdateStatus = { state: "available", current: "0.1.0", version: "0.2.0", date: null, notes: null, installable: true };

  it("says the newest release is running", async () => {
    await backend.host({ update: { state: "up_to_date", current: "0.1.0" } });
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    expect((await within(section).findByTestId("update-status")).textContent).toBe("Switchboard 0.1.0 is the newest release.");
  });

  it("installs a release when asked, shows its progress and notes as text, then offers the restart", async () => {
    await backend.host({
      update: { ...release, date: "2026-11-20", notes: "<img src=x onerror=alert(1)> Faster\nSafer" },
      download: [{ received: 50, total: 100 }, { received: 100, total: 100 }],
    });
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    const status = await within(section).findByTestId("update-status");
    expect(status.textContent?.replace(/\s+/g, " ")).toContain("Switchboard 0.2.0 is available (you have 0.1.0), published 2026-11-20.");
    expect(within(section).getByTestId("update-notes").textContent).toBe("<img src=x onerror=alert(1)> Faster\nSafer");
    expect(section.querySelector("img")).toBeNull();

    await user.click(within(section).getByTestId("update-install"));
    expect((await within(section).findByTestId("update-installed")).textContent).toContain("Switchboard 0.2.0 is installed");
    expect(within(section).queryByTestId("update-check")).toBeNull();
    expect(await restarts(backend)).toBe(0);
    await user.click(within(section).getByTestId("update-restart"));
    await vi.waitFor(async () => expect(await restarts(backend)).toBe(1));
  });

  it("says why Rust refused the release and offers Check again, not another install or a restart", async () => {
    await backend.host({ update: release, download: [{ received: 10, total: null }], installFails: "bad_signature" });
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    await user.click(await within(section).findByTestId("update-install"));
    const error = await within(section).findByTestId("update-error");
    expect(error.textContent).toContain("Update not installed");
    expect(error.textContent).toContain("The update's signature does not match this app's update key, so nothing was installed.");
    expect(within(section).queryByTestId("update-install")).toBeNull();
    expect(within(section).queryByTestId("update-restart")).toBeNull();
    expect(within(section).queryByTestId("update-progress")).toBeNull();
    expect(await restarts(backend)).toBe(0);

    // Check again asks the update address afresh; what it finds is offered again.
    const again = within(section).getByTestId("update-check");
    expect(again.textContent?.trim()).toBe("Check again");
    await user.click(again);
    expect(await within(section).findByTestId("update-install")).toBeTruthy();
    expect(within(section).queryByTestId("update-error")).toBeNull();
    expect(backend.callsTo("check_for_update")).toHaveLength(2);
  });

  it("a new check takes back what the last one found until it answers", async () => {
    await backend.host({ update: release });
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    await within(section).findByTestId("update-install");
    backend.delay = (cmd) => (cmd === "check_for_update" ? 400 : 0);
    await backend.host({ update: { state: "up_to_date", current: "0.1.0" } });
    await user.click(within(section).getByTestId("update-check"));
    expect(within(section).getByTestId("update-check").textContent?.trim()).toBe("Checking…");
    expect(within(section).queryByTestId("update-install")).toBeNull();
    expect(within(section).queryByTestId("update-status")).toBeNull();
    expect((await within(section).findByTestId("update-status")).textContent).toBe("Switchboard 0.1.0 is the newest release.");
    expect(within(section).queryByTestId("update-install")).toBeNull();
  });

  it("offers no install to a copy that cannot be updated in place", async () => {
    await backend.host({ update: { ...release, installable: false } });
    const { user, section } = await openUpdates();
    await user.click(within(section).getByTestId("update-check"));
    expect((await within(section).findByTestId("update-status")).textContent).toContain("cannot be updated in place");
    expect(within(section).queryByTestId("update-install")).toBeNull();
  });
});

/** How many times the window asked the shell to restart. */
async function restarts(backend: RealBackend): Promise<number> {
  return (await backend.asked()).filter((a) => a.dialog === "restart").length;
}
