// Projects (issue 62) against the real core: the grouping of the sidebar's list, the store (its
// refusals on the field they name), and the window as a person uses it — a project made in its
// dialog, a conversation started in it and listed under it, its group folded, the conversation
// moved out from its header and back, the project edited and deleted with its conversations kept.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import { IpcError } from "../src/lib/errors";
import * as ipc from "../src/lib/ipc";
import type { Conversation, Project } from "../src/lib/types";
import { groupByProject } from "../src/projects/projects.svelte";
import { emptyProfileFields } from "./test-helpers";
import { installRealBackend, peer, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";
import { newStores } from "./render-with-stores";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

const conversationsNow = () => backend.seed(() => ipc.listConversations());

function group(name: string): HTMLElement {
  const found = screen
    .queryAllByTestId("project-group")
    .find((el) => within(el).getByTestId("project-name-label").textContent === name);
  if (!found) throw new Error(`no project group named ${name}`);
  return found;
}

const titlesIn = (el: HTMLElement) => within(el).queryAllByTestId("conversation-title").map((t) => t.textContent);

describe("grouping the conversation list by project", () => {
  const project = (id: string, name: string): Project => ({
    id,
    name,
    instructions: "",
    profile_id: null,
    memory: false,
    tools: [],
    roots: [],
    created_at: 0,
    updated_at: 0,
    conversations: 0,
  });
  const conversation = (id: string, projectId: string | null): Conversation => ({
    id,
    title: id,
    created_at: 0,
    updated_at: 0,
    provider: null,
    model: null,
    auto_approve: false,
    system_prompt: "",
    profile_id: null,
    project_id: projectId,
  });

  it("puts each project first (empty ones too), in the list's order, then those in none or in one not known", () => {
    const groups = groupByProject(
      [conversation("c1", "b"), conversation("c2", null), conversation("c3", "a"), conversation("c4", "b"), conversation("c5", "gone")],
      [project("a", "Alpha"), project("b", "Bridge"), project("e", "Empty")],
    );
    expect(groups.map((g) => [g.project?.name ?? null, g.conversations.map((c) => c.id)])).toEqual([
      ["Alpha", ["c3"]],
      ["Bridge", ["c1", "c4"]],
      ["Empty", []],
      [null, ["c2", "c5"]],
    ]);
  });
});

describe("the projects store", () => {
  it("creates, refuses a taken name on the name field, edits, and deletes keeping the conversations", async () => {
    const coding = await backend.seed(() => ipc.createProfile("Coding", emptyProfileFields()));
    const { projects, conversations } = newStores();
    await projects.load();
    expect(projects.all).toEqual([]);

    const bridge = await projects.create({ name: " Bridge ", instructions: "Steel.", profile: coding.id, memory: false, tools: [], roots: [] });
    expect(bridge).toMatchObject({ name: "Bridge", instructions: "Steel.", profile_id: coding.id, conversations: 0 });
    expect(projects.all.map((p) => p.name)).toEqual(["Bridge"]);
    const refused = await projects.create({ name: "BRIDGE", instructions: "", profile: null, memory: false, tools: [], roots: [] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(IpcError);
    expect(refused).toMatchObject({ kind: "conflict", field: "name" });
    const blank = await projects.create({ name: " ", instructions: "", profile: null, memory: false, tools: [], roots: [] }).catch((e: unknown) => e);
    expect(blank).toMatchObject({ field: "name" });

    await projects.newConversationIn(bridge.id);
    await waitFor(() => expect(projects.all[0].conversations).toBe(1));
    const made = (await conversationsNow())[0];
    expect(made).toMatchObject({ project_id: bridge.id, profile_id: coding.id });
    expect(conversations.list[0].project_id).toBe(bridge.id);

    const edited = await projects.update(bridge.id, { name: "Bridge works", instructions: "Rivets.", profile: null, memory: true, tools: [], roots: [] });
    expect(edited).toMatchObject({ name: "Bridge works", instructions: "Rivets.", profile_id: null, memory: true, tools: [], roots: [] });

    await projects.remove(bridge.id);
    expect(projects.all).toEqual([]);
    expect((await conversationsNow()).map((c) => [c.id, c.project_id])).toEqual([[made.id, null]]);
  });
});

describe("projects in the window", () => {
  it("makes one in its dialog, starts a conversation in it, folds it, moves a conversation out and back, edits and deletes it", async () => {
    const loose = await backend.seed(() => ipc.createConversation("Groceries"));
    await backend.seed(() => ipc.createProfile("Terse", { ...emptyProfileFields(), system_prompt: "Be terse." }));
    const { user } = await renderApp();

    // No project yet: the list is "Conversations", with a button to make one.
    expect(screen.queryAllByTestId("project-group")).toHaveLength(0);
    expect(screen.queryByTestId("no-project-label")).toBeNull();
    await user.click(screen.getByTestId("new-project"));
    const dialog = await screen.findByTestId("project-dialog");
    expect(document.activeElement).toBe(within(dialog).getByTestId("project-name"));

    // A blank name is refused before Rust is asked; then made.
    await user.click(within(dialog).getByTestId("project-save"));
    expect(await within(dialog).findByText("Name the project.")).toBeTruthy();
    expect(backend.callsTo("create_project")).toHaveLength(0);
    await user.type(within(dialog).getByTestId("project-name"), "Bridge");
    await user.type(within(dialog).getByTestId("project-instructions"), "Steel, not wood.");
    const profiles = within(dialog).getByTestId("project-profile") as HTMLSelectElement;
    await user.selectOptions(profiles, "Terse");
    await user.click(within(dialog).getByTestId("project-save"));
    await waitFor(() => expect(screen.queryByTestId("project-dialog")).toBeNull());
    const [made] = await backend.seed(() => ipc.listProjects());
    expect(made).toMatchObject({ name: "Bridge", instructions: "Steel, not wood." });
    expect(made.profile_id).not.toBeNull();

    // Its group is empty; the conversation in none is under "Conversations".
    expect(within(group("Bridge")).getByText("No conversations yet.")).toBeTruthy();
    expect(screen.getByTestId("no-project-label").textContent).toBe("Conversations");
    expect(titlesIn(screen.getByTestId("no-project-list"))).toEqual(["Groceries"]);

    // New conversation here: made in it, from its profile, listed under it and opened.
    await user.click(within(group("Bridge")).getByTestId("project-menu"));
    await user.click(screen.getByTestId("project-new-conversation"));
    await waitFor(() => expect(backend.callsTo("create_conversation_in")).toHaveLength(1));
    await waitFor(() => expect(within(group("Bridge")).queryAllByTestId("conversation-item")).toHaveLength(1));
    const inIt = (await conversationsNow()).find((c) => c.id !== loose.id)!;
    expect(inIt).toMatchObject({ project_id: made.id, profile_id: made.profile_id });
    const header = await screen.findByTestId("conversation-project");
    expect(within(header).getByTestId("conversation-project-name").textContent).toBe("Bridge");

    // Folded: its conversations are hidden, and shown again.
    const toggle = within(group("Bridge")).getByTestId("project-toggle");
    await user.click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(within(group("Bridge")).queryAllByTestId("conversation-item")).toHaveLength(0);
    await user.click(toggle);
    expect(within(group("Bridge")).queryAllByTestId("conversation-item")).toHaveLength(1);

    // Groceries opened (the new conversation, left unused, is not kept), moved into the project
    // from its header, then out again.
    await user.click(screen.getAllByTestId("conversation-item").find((el) => el.dataset.id === loose.id)!);
    await waitFor(() => expect(within(group("Bridge")).queryAllByTestId("conversation-item")).toHaveLength(0));
    await waitFor(() => expect(within(screen.getByTestId("conversation-project")).getByTestId("conversation-project-name").textContent).toBe("No project"));
    await user.click(screen.getByTestId("conversation-project"));
    await user.click(screen.getAllByTestId("conversation-project-option").find((o) => o.dataset.id === made.id)!);
    await waitFor(() => expect(titlesIn(group("Bridge"))).toContain("Groceries"));
    expect(backend.callsTo("move_conversation")[0].args).toEqual({ conversationId: loose.id, projectId: made.id });
    expect(screen.queryByTestId("no-project-list")).toBeNull();
    await waitFor(() => expect(within(group("Bridge")).getByTestId("project-count").textContent).toBe("1"));
    await user.click(screen.getByTestId("conversation-project"));
    await user.click(screen.getAllByTestId("conversation-project-option").find((o) => o.dataset.kind === "none")!);
    await waitFor(() => expect(titlesIn(screen.getByTestId("no-project-list"))).toEqual(["Groceries"]));

    // Edited from the group's menu: the dialog holds what it has; renamed.
    await user.click(within(group("Bridge")).getByTestId("project-menu"));
    await user.click(screen.getByTestId("project-edit"));
    const editing = await screen.findByTestId("project-dialog");
    expect((within(editing).getByTestId("project-instructions") as HTMLTextAreaElement).value).toBe("Steel, not wood.");
    const name = within(editing).getByTestId("project-name") as HTMLInputElement;
    await user.clear(name);
    await user.type(name, "Bridge works");
    await user.click(within(editing).getByTestId("project-save"));
    await waitFor(() => expect(group("Bridge works")).toBeTruthy());

    // Deleted (asked first): its conversation stays, in none.
    await user.click(within(group("Bridge works")).getByTestId("project-menu"));
    await user.click(screen.getByTestId("project-edit"));
    await user.click(within(await screen.findByTestId("project-dialog")).getByTestId("project-delete"));
    const confirm = await screen.findByTestId("confirm-dialog");
    expect(confirm.textContent).toContain("It has no conversations.");
    await user.click(within(confirm).getByTestId("confirm-ok"));
    await waitFor(() => expect(screen.queryAllByTestId("project-group")).toHaveLength(0));
    expect(screen.getAllByTestId("conversation-item").map((el) => el.dataset.id)).toEqual([loose.id]);
    expect((await conversationsNow()).every((c) => c.project_id === null)).toBe(true);
  }, 30_000);
});

describe("a project's tool switches in its dialog", () => {
  it("keeps only what the person switched, shows it folded open when there are some, and forgets one switched back", async () => {
    await backend.seed(async () => {
      await ipc.addMcpServer("time", peer("fault_server.py"));
      await ipc.setMcpServerEnabled("time", false);
    });
    const { user } = await renderApp();
    await user.click(screen.getByTestId("new-project"));
    const dialog = await screen.findByTestId("project-dialog");
    await user.type(within(dialog).getByTestId("project-name"), "Bridge");
    const tools = within(dialog).getByTestId("project-tools") as HTMLDetailsElement;
    expect(tools.open).toBe(false);
    await user.click(tools.querySelector("summary")!);
    const time = await within(dialog).findByTestId("project-server-switch");
    expect((time as HTMLInputElement).checked).toBe(true);
    expect(time.dataset.server).toBe("time");
    await user.click(time);
    expect(tools.querySelector("summary")!.textContent).toBe("Tools · 1 switch");
    await user.click(within(dialog).getByTestId("project-save"));
    await waitFor(() => expect(screen.queryByTestId("project-dialog")).toBeNull());
    const [made] = await backend.seed(() => ipc.listProjects());
    // Only the switch made: a server left on follows the profile.
    expect(made.tools).toEqual([{ server: "time", tool: null, enabled: false }]);

    await user.click(within(group("Bridge")).getByTestId("project-menu"));
    await user.click(screen.getByTestId("project-edit"));
    const editing = await screen.findByTestId("project-dialog");
    expect((within(editing).getByTestId("project-tools") as HTMLDetailsElement).open).toBe(true);
    const again = within(editing).getByTestId("project-server-switch") as HTMLInputElement;
    expect(again.checked).toBe(false);
    await user.click(again);
    // The last switch gone, the switches stay shown where the person is.
    expect((within(editing).getByTestId("project-tools") as HTMLDetailsElement).open).toBe(true);
    expect(within(editing).getByTestId("project-server-switch")).toBeTruthy();
    await user.click(within(editing).getByTestId("project-save"));
    await waitFor(() => expect(screen.queryByTestId("project-dialog")).toBeNull());
    expect((await backend.seed(() => ipc.listProjects()))[0].tools).toEqual([]);
  }, 30_000);
});

describe("a project's folders in its dialog", () => {
  it("keeps one a line, and says beside the field when Rust refuses one", async () => {
    const folder = mkdtempSync(join(tmpdir(), "switchboard-root-"));
    const { user } = await renderApp();
    await user.click(screen.getByTestId("new-project"));
    const dialog = await screen.findByTestId("project-dialog");
    await user.type(within(dialog).getByTestId("project-name"), "Bridge");
    const roots = within(dialog).getByTestId("project-roots");
    await user.type(roots, "/no/such/folder");
    await user.click(within(dialog).getByTestId("project-save"));
    expect((await within(dialog).findByTestId("error-roots")).textContent).toBe("“/no/such/folder” is not a folder.");
    expect(roots.getAttribute("aria-invalid")).toBe("true");
    await user.clear(roots);
    await user.type(roots, `  ${folder}  {Enter}{Enter}`);
    await user.click(within(dialog).getByTestId("project-save"));
    await waitFor(() => expect(screen.queryByTestId("project-dialog")).toBeNull());
    expect((await backend.seed(() => ipc.listProjects()))[0].roots).toEqual([folder]);
  }, 30_000);
});

describe("a project's files in its dialog", () => {
  it("adds the files picked, with progress, says which were refused and why, and removes one", async () => {
    const project = await backend.seed(() => ipc.createProject({ name: "Bridge", instructions: "", profile: null, memory: false, tools: [], roots: [] }));
    const folder = mkdtempSync(join(tmpdir(), "switchboard-project-files-"));
    const notes = join(folder, "notes.md");
    writeFileSync(notes, "The bridge opens at dawn.\n");
    const manual = join(folder, "manual.txt");
    writeFileSync(manual, "Rivets are checked each spring. ".repeat(200));
    const photo = join(folder, "photo.png");
    writeFileSync(photo, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]));
    await backend.host({ files: [notes, manual, photo] });
    const { user, stores } = await renderApp();

    stores.projects.editing = { kind: "edit", project };
    const dialog = await screen.findByTestId("project-dialog");
    const files = within(dialog).getByTestId("project-files");
    await within(files).findByTestId("project-files-empty");
    const seen: number[] = [];
    const unwatch = $effect.root(() => {
      $effect(() => {
        const p = stores.projects.adding?.progress;
        if (p) seen.push(p.done);
      });
    });
    await user.click(within(files).getByTestId("project-add-files"));
    await waitFor(() => expect(within(files).queryAllByTestId("project-file")).toHaveLength(2));
    unwatch();
    expect(within(files).queryAllByTestId("project-file").map((f) => f.dataset.name)).toEqual(["manual.txt", "notes.md"]);
    expect(within(files).getAllByTestId("project-file")[0].textContent).toMatch(/passages/);
    expect(within(files).getByTestId("project-files-refused").textContent).toContain("“photo.png” is an image");
    expect(seen.length).toBeGreaterThan(0);
    expect(screen.queryByTestId("project-files-progress")).toBeNull();

    await user.click(within(within(files).getAllByTestId("project-file")[1]).getByTestId("project-file-remove"));
    await waitFor(() => expect(within(files).queryAllByTestId("project-file").map((f) => f.dataset.name)).toEqual(["manual.txt"]));
    expect((await backend.seed(() => ipc.listProjectFiles(project.id))).map((f) => f.name)).toEqual(["manual.txt"]);
  }, 30_000);
});

describe("exporting and importing a project from the sidebar", () => {
  it("saves one where the person picks and keeps it again as a new project, saying so", async () => {
    const project = await backend.seed(() => ipc.createProject({ name: "Bridge", instructions: "Steel.", profile: null, memory: false, tools: [], roots: [] }));
    const chat = await backend.seed(() => ipc.createConversation("Loads"));
    await backend.seed(() => ipc.moveConversation(chat.id, project.id));
    const file = join(mkdtempSync(join(tmpdir(), "switchboard-project-export-")), "bridge.json");
    await backend.host({ file });
    const { user } = await renderApp();

    await user.click(within(group("Bridge")).getByTestId("project-menu"));
    await user.click(screen.getByTestId("project-export"));
    await waitFor(() => expect(screen.getByTestId("project-note").textContent).toContain(`Saved to ${file}`));
    const written = JSON.parse(readFileSync(file, "utf8"));
    expect(written).toMatchObject({ format: "switchboard.project", name: "Bridge", instructions: "Steel." });
    expect(written.conversations).toHaveLength(1);

    await user.click(screen.getByTestId("import-project"));
    // Its conversation stands apart from the original in the list.
    await waitFor(() => expect(titlesIn(group("Bridge (2)"))).toEqual(["Loads (imported)"]));
    expect(screen.getByTestId("project-note").textContent).toContain("Imported the project “Bridge (2)”.");
    expect(screen.getByTestId("project-note").textContent).toContain("A project named “Bridge” exists already");
  }, 30_000);
});

describe("search in a project", () => {
  it("finds only the project's conversations once the dialog is told which", async () => {
    const project = await backend.seed(() => ipc.createProject({ name: "Bridge", instructions: "", profile: null, memory: false, tools: [], roots: [] }));
    const inside = await backend.seed(() => ipc.createConversation("Rivet torque"));
    await backend.seed(() => ipc.moveConversation(inside.id, project.id));
    await backend.seed(() => ipc.createConversation("Rivet prices"));
    const { user } = await renderApp();
    await user.click(screen.getByTestId("open-search"));
    const dialog = await screen.findByTestId("search-dialog");
    await user.type(within(dialog).getByTestId("search-input"), "rivet");
    await waitFor(() => expect(within(dialog).getAllByTestId("search-hit")).toHaveLength(2));
    await user.selectOptions(within(dialog).getByTestId("search-scope"), "Bridge");
    await waitFor(() => expect(within(dialog).getAllByTestId("search-hit").map((h) => h.textContent)).toEqual([expect.stringContaining("Rivet torque")]));
    expect(backend.callsTo("search_conversations").at(-1)?.args).toMatchObject({ text: "rivet", projectId: project.id });
    // Tab goes round the dialog's controls and stays inside it.
    const input = within(dialog).getByTestId("search-input");
    const scope = within(dialog).getByTestId("search-scope");
    input.focus();
    await user.tab();
    expect(document.activeElement).toBe(scope);
    for (let i = 0; i < 6; i++) {
      await user.tab();
      expect(dialog.contains(document.activeElement)).toBe(true);
    }
    await user.tab({ shift: true });
    expect(dialog.contains(document.activeElement)).toBe(true);
    // From nowhere (a click on plain text leaves the focus on the page's body): into it.
    (document.activeElement as HTMLElement).blur();
    expect(document.activeElement).toBe(document.body);
    await user.tab();
    expect(dialog.contains(document.activeElement)).toBe(true);
  }, 30_000);
});
