// Settings › Command line: says what `switchboard` runs in a terminal, puts it on the PATH or
// takes it away through Rust, leaves a package's command alone, and shows Rust's refusals and
// hints as text.
// All on the fake backend: Rust's shell-command commands act on the process's own surroundings
// (its binary, $HOME, the login shell's PATH), not on the session's home, so on ipc_serve they
// would read and change the ~/.local/bin of whoever runs the tests, and no test could set the
// package's command, the PATH hint or someone else's file there.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
});

async function openSection() {
  const rendered = await renderApp();
  await rendered.user.click(screen.getByTestId("nav-settings"));
  const section = await screen.findByTestId("command-line-section");
  await within(section).findByTestId("command-line-status");
  return { ...rendered, section };
}

const text = (el: Element) => el.textContent?.replace(/\s+/g, " ").trim();

describe("Command line (fake backend: the shell command acts on the real $HOME)", () => {
  it("adds switchboard to the PATH when asked, then offers to take it away again", async () => {
    const { user, section } = await openSection();
    expect(text(within(section).getByTestId("command-line-status"))).toBe(
      "No switchboard command is on your PATH yet. Adding it puts it at /home/ann/.local/bin/switchboard.",
    );
    expect(backend.calls.map((c) => c.cmd)).not.toContain("install_shell_command");

    await user.click(within(section).getByTestId("command-line-install"));
    expect(text(await within(section).findByTestId("command-line-done"))).toBe("Added.");
    expect(text(within(section).getByTestId("command-line-status"))).toBe(
      "switchboard in a terminal runs this app (/home/ann/.local/bin/switchboard).",
    );
    expect(within(section).queryByTestId("command-line-install")).toBeNull();

    await user.click(within(section).getByTestId("command-line-remove"));
    expect(text(await within(section).findByTestId("command-line-done"))).toBe("Removed.");
    expect(within(section).getByTestId("command-line-install")).toBeTruthy();
    expect(backend.calls.map((c) => c.cmd).filter((c) => c.endsWith("shell_command"))).toEqual([
      "install_shell_command",
      "remove_shell_command",
    ]);
  });

  it("offers nothing to change when a package's switchboard already runs this app", async () => {
    backend.shellCommand = {
      ...backend.shellCommand,
      binary: "/usr/bin/switchboard",
      found: "/usr/bin/switchboard",
      current: true,
    };
    const { section } = await openSection();
    expect(text(within(section).getByTestId("command-line-status"))).toBe(
      "switchboard in a terminal runs this app (/usr/bin/switchboard).",
    );
    expect(within(section).queryByTestId("command-line-install")).toBeNull();
    expect(within(section).queryByTestId("command-line-remove")).toBeNull();
  });

  it("shows the line that puts the folder on the PATH, as text", async () => {
    backend.shellCommand = {
      ...backend.shellCommand,
      on_path: false,
      hint: '/home/ann/.local/bin is not on your PATH; add this line to ~/.zprofile and open a new terminal: export PATH="$HOME/.local/bin:$PATH" <b>x</b>',
    };
    const { user, section } = await openSection();
    await user.click(within(section).getByTestId("command-line-install"));
    await within(section).findByTestId("command-line-done");
    expect(text(within(section).getByTestId("command-line-status"))).toBe(
      "/home/ann/.local/bin/switchboard runs this app, but a terminal does not look there yet.",
    );
    const hint = within(section).getByTestId("command-line-hint");
    expect(hint.textContent).toContain('export PATH="$HOME/.local/bin:$PATH" <b>x</b>');
    expect(hint.querySelector("b")).toBeNull();
  });

  it("says why Rust refused, and changes nothing", async () => {
    backend.shellCommandFails = {
      kind: "install",
      message: "/home/ann/.local/bin/switchboard is someone else's file, not a link to Switchboard; it was left alone.",
      field: null,
    };
    const { user, section } = await openSection();
    await user.click(within(section).getByTestId("command-line-install"));
    expect((await within(section).findByTestId("command-line-error")).textContent).toContain("someone else's file");
    expect(within(section).queryByTestId("command-line-done")).toBeNull();
    expect(within(section).getByTestId("command-line-install")).toBeTruthy();
  });
});
