// Settings › Policies against the real core: the person's rules in Rust's words (each removable),
// the organisation's read only with its file, the untrusted and reviewed marks added and taken
// off, policy.json edited whole (refused with where and why beside the editor), and how long the
// activity record keeps each call, with the other settings.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { Settings } from "../src/lib/types";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

async function openPolicies() {
  const view = await renderApp();
  await view.user.click(screen.getByTestId("nav-settings"));
  const section = await screen.findByTestId("policies-section");
  return { ...view, section };
}

const texts = (elements: HTMLElement[]) => elements.map((e) => e.textContent?.replace(/\s+/g, " ").trim());

describe("Settings › Policies", () => {
  it("lists the person's rules and the organisation's, and removes one of the person's", async () => {
    const home = await backend.home();
    mkdirSync(join(home, "managed"), { recursive: true });
    const managedFile = join(home, "managed", "policy.json");
    writeFileSync(managedFile, JSON.stringify({ rules: [{ server: "shell", outcome: "block" }] }));
    await backend.seed(() =>
      ipc.replacePolicy(
        JSON.stringify({
          rules: [
            { server: "fs", tool: "read_file", when: { path: { inside: ["/tmp"] } }, outcome: "allow" },
            { server: "fetch", outcome: "ask", note: "<b>the web</b>" },
          ],
        }),
      ),
    );
    const { user, section } = await openPolicies();

    await waitFor(() => expect(within(section).getAllByTestId("policies-rule")).toHaveLength(2));
    expect(within(section).getAllByTestId("policies-rule").map((r) => r.querySelector(".said")?.textContent)).toEqual([
      "allow fs · read_file when path is inside /tmp",
      "ask before every tool of fetch (“<b>the web</b>”)",
    ]);
    // A note is the person's words, shown as text.
    expect(section.querySelector("b")).toBeNull();
    expect(texts(within(section).getAllByTestId("policies-managed-rule"))).toEqual(["block every tool of shell"]);
    expect(section.textContent).toContain(managedFile);

    await user.click(within(section).getAllByTestId("policies-rule-remove")[0]);
    await waitFor(() => expect(within(section).getAllByTestId("policies-rule")).toHaveLength(1));
    expect(backend.callsTo("remove_policy_rule").map((c) => c.args)).toEqual([{ index: 0 }]);
    expect(within(section).getByTestId("policies-done").textContent).toBe("Removed: allow fs · read_file when path is inside /tmp");
    expect((await backend.seed(() => ipc.getPolicy())).said).toEqual(["ask before every tool of fetch (“<b>the web</b>”)"]);
  });

  it("keeps a rule that blocks when the person says no to taking it away in Rust's dialog", async () => {
    await backend.seed(() => ipc.replacePolicy(JSON.stringify({ rules: [{ server: "shell", outcome: "block" }] })));
    await backend.host({ confirm: false });
    const { user, section } = await openPolicies();
    await within(section).findByTestId("policies-rule");

    await user.click(within(section).getByTestId("policies-rule-remove"));
    expect((await within(section).findByTestId("policies-done")).textContent).toBe("Not removed: not confirmed in the dialog.");
    expect(within(section).queryByTestId("policies-problem")).toBeNull();
    expect(texts(within(section).getAllByTestId("policies-rule").map((r) => r.querySelector(".said") as HTMLElement))).toEqual([
      "block every tool of shell",
    ]);
    expect((await backend.seed(() => ipc.getPolicy())).said).toEqual(["block every tool of shell"]);
    const question = (await backend.asked()).filter((q) => q.dialog === "allow");
    expect(question).toHaveLength(1);
    expect(question[0].message).toContain("take away: block every tool of shell");
  });

  it("adds a server to the untrusted and the reviewed lists, and takes one off", async () => {
    const { user, section } = await openPolicies();
    await within(section).findByTestId("policies-untrusted-empty");

    await user.type(within(section).getByTestId("policies-mark-server"), "fetch");
    await user.click(within(section).getByTestId("policies-mark-submit"));
    await waitFor(() => expect(texts(within(within(section).getByTestId("policies-untrusted")).getAllByTestId("policies-mark"))).toEqual(["fetch Remove"]));

    await user.selectOptions(within(section).getByTestId("policies-mark-kind"), "review");
    await user.type(within(section).getByTestId("policies-mark-server"), "mail");
    await user.type(within(section).getByTestId("policies-mark-tool"), "read");
    await user.click(within(section).getByTestId("policies-mark-submit"));
    await waitFor(() => expect(within(section).queryByTestId("policies-review")).toBeTruthy());
    expect(within(section).getByTestId("policies-review").textContent).toContain("mail · read");
    expect(backend.callsTo("set_policy_mark").map((c) => c.args)).toEqual([
      { mark: "untrusted", target: { server: "fetch" }, on: true },
      { mark: "review", target: { server: "mail", tool: "read" }, on: true },
    ]);

    await user.click(within(within(section).getByTestId("policies-untrusted")).getByTestId("policies-mark-remove"));
    await within(section).findByTestId("policies-untrusted-empty");
    expect(backend.callsTo("set_policy_mark").at(-1)?.args).toEqual({ mark: "untrusted", target: { server: "fetch" }, on: false });
    const file = (await backend.seed(() => ipc.getPolicy())).file;
    expect(file.untrusted ?? []).toEqual([]);
    expect(file.review).toEqual([{ server: "mail", tool: "read" }]);
  });

  it("edits policy.json whole: refused with where and why beside the editor, saved once it is right", async () => {
    await backend.seed(() => ipc.replacePolicy(JSON.stringify({ rules: [{ server: "fs", outcome: "ask" }] })));
    const { user, section } = await openPolicies();
    await within(section).findAllByTestId("policies-rule");
    await user.click(within(section).getByTestId("policies-editor-open"));
    const editor = within(section).getByTestId("policies-editor") as HTMLTextAreaElement;
    expect(JSON.parse(editor.value)).toEqual({ rules: [{ server: "fs", outcome: "ask" }] });

    await user.clear(editor);
    await user.click(editor);
    await user.paste('{"rules": [{"server": "fs", "outcome": "maybe"}]}');
    await user.click(within(section).getByTestId("policies-editor-save"));
    const error = await within(section).findByTestId("policies-editor-error");
    expect(error.textContent).toContain("policy.json");
    expect(editor.getAttribute("aria-invalid")).toBe("true");
    expect(editor.value).toContain("maybe");
    expect((await backend.seed(() => ipc.getPolicy())).said).toEqual(["ask before every tool of fs"]);

    await user.clear(editor);
    await user.paste('{"rules": [{"server": "fs", "tool": "read_file", "outcome": "allow"}], "untrusted": [{"server": "fetch"}]}');
    await user.click(within(section).getByTestId("policies-editor-save"));
    expect((await within(section).findByTestId("policies-editor-done")).textContent).toBe("Saved");
    expect(within(section).queryByTestId("policies-editor-error")).toBeNull();
    expect(texts(within(section).getAllByTestId("policies-rule").map((r) => r.querySelector(".said") as HTMLElement))).toEqual([
      "allow fs · read_file",
    ]);
    expect(within(section).getByTestId("policies-untrusted").textContent).toContain("fetch");
    // The new rule that allows was put to the person in Rust's dialog.
    expect((await backend.asked()).filter((q) => q.dialog === "allow")).toHaveLength(1);
    expect(JSON.parse(editor.value)).toEqual({ rules: [{ server: "fs", tool: "read_file", outcome: "allow" }], untrusted: [{ server: "fetch" }] });
  });

  it("keeps the activity record as many days as typed, and refuses a number out of range beside its field", async () => {
    const { user } = await openPolicies();
    const field = screen.getByTestId("settings-audit-retention") as HTMLInputElement;
    expect(field.value).toBe("365");
    await user.clear(field);
    await user.type(field, "0");
    await user.click(screen.getByTestId("settings-save"));
    expect(screen.getByTestId("error-audit_retention_days").textContent).toBe("Enter a number from 1 to 36500.");
    expect(backend.callsTo("update_settings")).toHaveLength(0);

    await user.clear(field);
    await user.type(field, "30");
    await user.click(screen.getByTestId("settings-save"));
    await screen.findByTestId("settings-saved");
    expect((backend.callsTo("update_settings")[0].args as { settings: Settings }).settings.audit_retention_days).toBe(30);
    expect((await backend.seed(() => ipc.getSettings())).audit_retention_days).toBe(30);
  });
});
