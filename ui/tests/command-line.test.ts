// Settings › Command line: says what `switchboard` runs in a terminal, puts it on the PATH or
// takes it away through Rust, leaves a package's command alone, and shows Rust's refusals and
// hints as text.
// On the real core: ipc_serve's host gives the shell-command commands a terminal of the
// session's own (this program's file, the person's home, the PATH and the login shell, all
// under the session's temporary home), so Rust's rules run on real files and links.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, within } from "@testing-library/svelte";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;
/** The session's home: `~/` of the host's terminal script. */
let home: string;

beforeEach(async () => {
  backend = await installRealBackend();
  home = await backend.home();
});

async function openSection() {
  const rendered = await renderApp();
  await rendered.user.click(screen.getByTestId("nav-settings"));
  const section = await screen.findByTestId("command-line-section");
  await within(section).findByTestId("command-line-status");
  return { ...rendered, section };
}

const text = (el: Element) => el.textContent?.replace(/\s+/g, " ").trim();

describe("Command line", () => {
  it("adds switchboard to the PATH once the person says yes, then offers to take it away again", async () => {
    const place = join(home, ".local/bin/switchboard");
    const { user, section } = await openSection();
    expect(text(within(section).getByTestId("command-line-status"))).toBe(
      `No switchboard command is on your PATH yet. Adding it puts it at ${place}.`,
    );
    expect(backend.calls.map((c) => c.cmd)).not.toContain("install_shell_command");

    await user.click(within(section).getByTestId("command-line-install"));
    expect(text(await within(section).findByTestId("command-line-done"))).toBe("Added.");
    expect(text(within(section).getByTestId("command-line-status"))).toBe(`switchboard in a terminal runs this app (${place}).`);
    expect(within(section).queryByTestId("command-line-install")).toBeNull();
    // Rust asked first, in a native dialog naming the binary and where it goes.
    const [asked] = (await backend.asked()).filter((a) => a.dialog === "allow");
    expect(asked.message).toContain(join(home, "opt/Switchboard/switchboard"));
    expect(asked.message).toContain(place);

    await user.click(within(section).getByTestId("command-line-remove"));
    expect(text(await within(section).findByTestId("command-line-done"))).toBe("Removed.");
    expect(within(section).getByTestId("command-line-install")).toBeTruthy();
    expect(backend.calls.map((c) => c.cmd).filter((c) => c.endsWith("shell_command"))).toEqual([
      "install_shell_command",
      "remove_shell_command",
    ]);
  });

  it("changes nothing when the person says no in Rust's dialog", async () => {
    await backend.host({ confirm: false });
    const { user, section } = await openSection();
    await user.click(within(section).getByTestId("command-line-install"));
    await vi.waitFor(() => expect(backend.callsTo("install_shell_command")).toHaveLength(1));
    expect(within(section).getByTestId("command-line-install")).toBeTruthy();
    expect(within(section).queryByTestId("command-line-remove")).toBeNull();
    expect(text(within(section).getByTestId("command-line-status"))).toContain("No switchboard command is on your PATH yet.");
  });

  it("offers nothing to change when a package's switchboard already runs this app", async () => {
    await backend.host({ terminal: { exe: "~/usr/bin/switchboard", path: ["~/usr/bin", "~/.local/bin"] } });
    const { section } = await openSection();
    expect(text(within(section).getByTestId("command-line-status"))).toBe(
      `switchboard in a terminal runs this app (${join(home, "usr/bin/switchboard")}).`,
    );
    expect(within(section).queryByTestId("command-line-install")).toBeNull();
    expect(within(section).queryByTestId("command-line-remove")).toBeNull();
  });

  it("shows the line that puts the folder on the PATH, as text", async () => {
    // A home whose name is markup: Rust's hint names it, and it must stay text.
    await backend.host({ terminal: { home: "~/<b>x</b>", path: [], shell: "/bin/zsh" } });
    const dir = join(home, "<b>x</b>/.local/bin");
    const { user, section } = await openSection();
    await user.click(within(section).getByTestId("command-line-install"));
    await within(section).findByTestId("command-line-done");
    expect(text(within(section).getByTestId("command-line-status"))).toBe(
      `${dir}/switchboard runs this app, but a terminal does not look there yet.`,
    );
    const hint = within(section).getByTestId("command-line-hint");
    expect(hint.textContent).toBe(`${dir} is not on your PATH; add this line to ~/.zprofile and open a new terminal: export PATH="$HOME/.local/bin:$PATH"`);
    expect(hint.querySelector("b")).toBeNull();
  });

  it("says why Rust refused (someone else's file at the place), and changes nothing", async () => {
    mkdirSync(join(home, ".local/bin"), { recursive: true });
    writeFileSync(join(home, ".local/bin/switchboard"), "#!/bin/sh\necho theirs\n");
    const { user, section } = await openSection();
    await user.click(within(section).getByTestId("command-line-install"));
    expect((await within(section).findByTestId("command-line-error")).textContent).toContain(
      `${join(home, ".local/bin/switchboard")} is someone else's (a file, or a link to another program); it was left alone.`,
    );
    expect(within(section).queryByTestId("command-line-done")).toBeNull();
    expect(within(section).getByTestId("command-line-install")).toBeTruthy();
  });
});
