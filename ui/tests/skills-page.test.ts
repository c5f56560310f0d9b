// The Skills page (issue 61) against the real core: a skill folder picked in Rust's dialog is
// kept and shown with what Rust noticed (scripts never run, front-matter fields ignored), a
// hostile skill's text shown as text only; switched off for every conversation and on again;
// opened to its instructions and files; removed after the page asks. And the tools panel: a
// skill switched off for one conversation only.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, peer, type RealBackend } from "./real-backend";
import { renderApp, renderAppAt } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** The folders a test made, removed after it. */
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), "skill-"));
  made.push(dir);
  return dir;
}

const HOSTILE = "<img src=x onerror=alert(1)>";

/** A skill folder (outside the app's home) whose front matter asks to run things. */
function skillFolder(name: string, description: string): string {
  const dir = join(tempFolder(), name);
  mkdirSync(join(dir, "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "SKILL.md"),
    `---\nname: ${name}\ndescription: "${description}"\nhooks:\n  on_load: touch /tmp/never\n---\n# Steps\n1. ${HOSTILE}\n`,
  );
  writeFileSync(join(dir, "scripts", "fill.sh"), "#!/bin/sh\necho never\n");
  return dir;
}

const card = (name: string) => screen.getAllByTestId("skill-item").find((c) => c.dataset.name === name)!;

describe("the Skills page", () => {
  it("adds a folder picked in Rust's dialog, switches it, shows its details as text and removes it", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-skills"));
    await screen.findByTestId("skills-empty");

    await backend.host({ folder: skillFolder("pdf-forms", `Fill PDF forms ${HOSTILE}`) });
    await user.click(screen.getByTestId("skills-add-folder"));
    await waitFor(() => expect(screen.getByTestId("skills-said").textContent).toBe("Added “pdf-forms”: it is on for every conversation."));
    const item = card("pdf-forms");
    expect(within(item).getByTestId("skill-description").textContent).toBe(`Fill PDF forms ${HOSTILE}`);
    expect(item.querySelector("img")).toBeNull();
    expect(within(item).getByTestId("skill-scripts").textContent).toContain("never run");
    expect(within(item).getByTestId("skill-ignored").textContent).toContain("Ignored: hooks");
    expect((within(item).getByTestId("skill-switch") as HTMLInputElement).checked).toBe(true);

    // Off for every conversation, then on again: Rust keeps the switch.
    await user.click(within(item).getByTestId("skill-switch"));
    await waitFor(() => expect(within(card("pdf-forms")).getByTestId("skill-off-badge")).toBeTruthy());
    expect((await backend.seed(() => ipc.listSkills()))[0].enabled).toBe(false);
    await user.click(within(card("pdf-forms")).getByTestId("skill-switch"));
    await waitFor(() => expect(within(card("pdf-forms")).queryByTestId("skill-off-badge")).toBeNull());

    await user.click(within(card("pdf-forms")).getByTestId("skill-details-toggle"));
    const details = await within(card("pdf-forms")).findByTestId("skill-details");
    expect(within(details).getByTestId("skill-instructions").textContent).toBe(`# Steps\n1. ${HOSTILE}\n`);
    expect(within(details).getByTestId("skill-files").textContent).toContain("scripts/fill.sh");
    expect(within(details).getByTestId("skill-unused")).toBeTruthy();
    expect(details.querySelector("img")).toBeNull();

    await user.click(within(card("pdf-forms")).getByTestId("skill-menu"));
    await user.click(await screen.findByTestId("skill-remove"));
    await user.click(await screen.findByRole("button", { name: "Remove" }));
    await screen.findByTestId("skills-empty");
    expect(await backend.seed(() => ipc.listSkills())).toEqual([]);
  });

  it("lets the model ask to run a skill's scripts only after showing them, and says when they changed", async () => {
    const folder = skillFolder("pdf-forms", "Fill PDF forms.");
    await backend.host({ folder });
    await backend.seed(() => ipc.addSkill(false));
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-skills"));
    await waitFor(() => expect(within(card("pdf-forms")).getByTestId("skill-scripts").dataset.state).toBe("off"));
    const toggle = () => within(card("pdf-forms")).getByTestId("skill-scripts-switch") as HTMLInputElement;
    expect(toggle().checked).toBe(false);

    // Switching it on asks first, listing the scripts; closing the question allows nothing.
    await user.click(toggle());
    const dialog = await screen.findByTestId("confirm-dialog");
    expect(within(dialog).getByTestId("skill-script-path").textContent).toBe("scripts/fill.sh");
    expect(within(dialog).getByTestId("skill-script-text").textContent).toBe("#!/bin/sh\necho never\n");
    expect(dialog.textContent).toContain("no network");
    await user.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(toggle().checked).toBe(false);
    expect((await backend.seed(() => ipc.listSkills()))[0].scripts).toBe("off");

    await user.click(toggle());
    await user.click(within(await screen.findByTestId("confirm-dialog")).getByRole("button", { name: "Allow" }));
    await waitFor(() => expect(within(card("pdf-forms")).getByTestId("skill-scripts").dataset.state).toBe("on"));
    expect(toggle().checked).toBe(true);
    expect((await backend.seed(() => ipc.listSkills()))[0].scripts).toBe("on");

    // A script changed after allowing: set aside, and said.
    const kept = (await backend.seed(() => ipc.listSkills()))[0];
    if (kept.origin.kind !== "folder") throw new Error("a folder skill");
    writeFileSync(join(kept.origin.path, "scripts", "fill.sh"), "#!/bin/sh\necho changed\n");
    await user.click(screen.getByTestId("nav-settings"));
    await user.click(screen.getByTestId("nav-skills"));
    await waitFor(() => expect(within(card("pdf-forms")).getByTestId("skill-scripts").dataset.state).toBe("changed"));
    expect(toggle().checked).toBe(true);

    // Looked at again (the new text) and allowed; then taken back.
    await user.click(within(card("pdf-forms")).getByTestId("skill-scripts-again"));
    const again = await screen.findByTestId("confirm-dialog");
    expect(within(again).getByTestId("skill-script-text").textContent).toBe("#!/bin/sh\necho changed\n");
    await user.click(within(again).getByRole("button", { name: "Allow" }));
    await waitFor(() => expect(within(card("pdf-forms")).getByTestId("skill-scripts").dataset.state).toBe("on"));
    await user.click(toggle());
    await waitFor(() => expect(within(card("pdf-forms")).getByTestId("skill-scripts").dataset.state).toBe("off"));
    await waitFor(() => expect(screen.getByTestId("skills-said").textContent).toBe("The scripts of “pdf-forms” are no longer run."));
  });

  it("says why a folder is refused, and adds nothing", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-skills"));
    await screen.findByTestId("skills-empty");
    const bad = join(tempFolder(), "bad");
    mkdirSync(bad);
    writeFileSync(join(bad, "SKILL.md"), "no front matter here");
    await backend.host({ folder: bad });
    await user.click(screen.getByTestId("skills-add-folder"));
    await waitFor(() => expect(document.body.textContent).toContain("does not begin with front matter"));
    expect(await backend.seed(() => ipc.listSkills())).toEqual([]);
  });
});

describe("a server's skills", () => {
  it("are shown with their server and their instructions, off until switched on, which approves them; they cannot be removed here", async () => {
    const served = tempFolder();
    mkdirSync(join(served, "forms"));
    writeFileSync(join(served, "forms", "SKILL.md"), "---\nname: forms\ndescription: The server's forms.\n---\nSteps.\n");
    await backend.addServer("docs", peer("skills_server.py", served));
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-skills"));
    await waitFor(() => expect(card("docs/forms")).toBeTruthy());
    const item = card("docs/forms");
    expect(within(item).getByTestId("skill-server").textContent).toBe("From the server “docs”");
    expect(within(item).getByTestId("skill-off-badge")).toBeTruthy();
    expect(within(item).queryByTestId("skill-menu")).toBeNull();
    expect(item.textContent).toContain("approves what the server lists now");
    // Its instructions are read before it is switched on, as its server serves them.
    await user.click(within(item).getByTestId("skill-details-toggle"));
    await waitFor(() => expect(within(card("docs/forms")).getByTestId("skill-instructions").textContent).toBe("Steps.\n"));
    await user.click(within(card("docs/forms")).getByTestId("skill-details-toggle"));
    await user.click(within(card("docs/forms")).getByTestId("skill-switch"));
    await waitFor(() => expect(within(card("docs/forms")).queryByTestId("skill-off-badge")).toBeNull());
    await user.click(within(card("docs/forms")).getByTestId("skill-details-toggle"));
    expect((await within(card("docs/forms")).findByTestId("skill-instructions-served")).textContent).toContain("what the server listed");
  });
});

describe("a conversation's skills", () => {
  it("switches a skill off for one conversation only", async () => {
    await backend.host({ folder: skillFolder("notes-style", "How notes are written.") });
    await backend.seed(() => ipc.addSkill(false));
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    const other = await backend.seed(() => ipc.createConversation("Other"));
    const { user } = await renderAppAt(chat.id);
    await user.click(await screen.findByTestId("tools-button"));
    const section = await screen.findByTestId("tools-skills");
    const box = within(section).getByTestId("tools-skill-switch") as HTMLInputElement;
    expect(box.checked).toBe(true);
    await user.click(box);
    await waitFor(() => expect((within(screen.getByTestId("tools-skills")).getByTestId("tools-skill-switch") as HTMLInputElement).checked).toBe(false));
    const here = await backend.seed(() => ipc.conversationSkills(chat.id));
    const there = await backend.seed(() => ipc.conversationSkills(other.id));
    expect([here[0].on, there[0].on]).toEqual([false, true]);
    expect(here[0].skill.enabled).toBe(true);
  });
});
