// The projects (issue 62): each a name, instructions added to the system prompt of each of its
// conversations, and the profile a conversation made in it starts from, kept by Rust. Lists them
// (by name), creates, edits and deletes one, moves a conversation into one or out of any, and
// starts a conversation in one. The sidebar groups the conversation list by them
// (`groupByProject`), each group folded or not as the person left it.
//
// After every change the list (its counts) and the conversations (their project) are read again.
// Failures of the list's own actions go to the UI store's toast; the form's save rejects, for the
// form to show Rust's refusal beside the field it names.

import * as ipc from "../lib/ipc";
import { LatestOnly } from "../shared/latest";
import type { Conversation, FilesProgress, Project, ProjectFile, ProjectInput } from "../lib/types";
import type { ConversationsStore } from "../chat/conversations.svelte";
import type { UiStore } from "../app/ui.svelte";

/** One group of the sidebar's list: a project's conversations, or those in none (`project` null). */
export interface ProjectGroup {
  project: Project | null;
  conversations: Conversation[];
}

/**
 * The conversations grouped by project: each project (by name, empty ones too) with its
 * conversations in the list's order, then those in no project. A conversation whose project is
 * not known (read before the projects were) goes with those in none.
 */
export function groupByProject(conversations: Conversation[], projects: Project[]): ProjectGroup[] {
  const groups = new Map<string, ProjectGroup>(projects.map((p) => [p.id, { project: p, conversations: [] }]));
  const none: ProjectGroup = { project: null, conversations: [] };
  for (const c of conversations) (groups.get(c.project_id ?? "") ?? none).conversations.push(c);
  return [...groups.values(), none];
}

/** Files being added to a project: how far it has come, and the files refused so far. */
export interface FilesAdding {
  projectId: string;
  progress: FilesProgress | null;
}

/** What the project dialog shows: a new project, or one being edited. */
export type ProjectEditing = { kind: "new" } | { kind: "edit"; project: Project };

export class ProjectsStore {
  /** every project, by name; null until first read */
  list = $state.raw<Project[] | null>(null);
  /** the projects whose group the person folded in the sidebar, by id */
  folded = $state<Record<string, boolean>>({});
  /** the project dialog, when open */
  editing = $state<ProjectEditing | null>(null);
  /** each project's files as last read, by project id */
  files = $state.raw<Record<string, ProjectFile[]>>({});
  /** files being added (one project at a time) */
  adding = $state<FilesAdding | null>(null);
  /** what the last adding of files refused, a sentence each, by project id */
  refused = $state.raw<Record<string, string[]>>({});
  /** what the last export or import came to, for the sidebar to say */
  note = $state<string | null>(null);

  readonly #ui: UiStore;
  readonly #conversations: ConversationsStore;
  readonly #guard = new LatestOnly();
  /** one read of the files at a time per project: an older read never lands after a newer */
  readonly #filesGuards: Record<string, LatestOnly> = {};

  constructor(ui: UiStore, conversations: ConversationsStore) {
    this.#ui = ui;
    this.#conversations = conversations;
  }

  /** The projects as last read (none while not read yet). */
  get all(): Project[] {
    return this.list ?? [];
  }

  byId(id: string | null | undefined): Project | undefined {
    return id ? this.all.find((p) => p.id === id) : undefined;
  }

  async load(): Promise<void> {
    const isLatest = this.#guard.begin();
    try {
      const list = await ipc.listProjects();
      if (isLatest()) this.list = list;
    } catch (err) {
      if (!isLatest()) return;
      this.list ??= [];
      this.#ui.report(err);
    }
  }

  /**
   * @throws IpcError, whose `field` names the field at fault (a taken name: kind "conflict" on "name")
   */
  async create(input: ProjectInput): Promise<Project> {
    try {
      return await ipc.createProject(input);
    } finally {
      await this.load();
    }
  }

  /**
   * @throws IpcError, as `create`
   */
  async update(id: string, input: ProjectInput): Promise<Project> {
    try {
      return await ipc.updateProject(id, input);
    } finally {
      await this.load();
    }
  }

  /** Deletes a project; its conversations stay, in no project. */
  async remove(id: string): Promise<void> {
    try {
      await ipc.deleteProject(id);
      const { [id]: _files, ...files } = this.files;
      const { [id]: _refused, ...refused } = this.refused;
      this.files = files;
      this.refused = refused;
      delete this.folded[id];
    } catch (err) {
      this.#ui.report(err);
    }
    await Promise.all([this.load(), this.#conversations.refresh()]);
  }

  /** Moves a conversation into project `projectId`, or out of any (null); whether it moved. */
  async move(conversationId: string, projectId: string | null): Promise<boolean> {
    let moved = false;
    try {
      await ipc.moveConversation(conversationId, projectId);
      // A folded project shows the conversation moved into it.
      if (projectId !== null) this.folded[projectId] = false;
      moved = true;
    } catch (err) {
      this.#ui.report(err);
    }
    await Promise.all([this.load(), this.#conversations.refresh()]);
    return moved;
  }

  /** Starts a conversation in a project and opens it. */
  async newConversationIn(projectId: string): Promise<void> {
    this.folded[projectId] = false;
    await this.#conversations.create(undefined, projectId);
    await this.load();
  }

  async loadFiles(projectId: string): Promise<void> {
    const guard = (this.#filesGuards[projectId] ??= new LatestOnly());
    const isLatest = guard.begin();
    try {
      const files = await ipc.listProjectFiles(projectId);
      if (isLatest()) this.files = { ...this.files, [projectId]: files };
    } catch (err) {
      if (isLatest()) this.#ui.report(err);
    }
  }

  /** Asks for files at the native picker and adds them, saying how far it has come. */
  async addFiles(projectId: string): Promise<void> {
    if (this.adding) return;
    this.adding = { projectId, progress: null };
    try {
      const added = await ipc.addProjectFiles(projectId, (progress) => {
        if (this.adding?.projectId === projectId) this.adding = { projectId, progress };
      });
      if (added) this.refused = { ...this.refused, [projectId]: added.refused };
    } catch (err) {
      this.#ui.report(err);
    } finally {
      this.adding = null;
    }
    await this.loadFiles(projectId);
  }

  /** files being removed, by project id and name */
  removing = $state<Record<string, boolean>>({});

  async removeFile(projectId: string, name: string): Promise<void> {
    const key = `${projectId}/${name}`;
    if (this.removing[key]) return;
    this.removing[key] = true;
    try {
      await ipc.removeProjectFile(projectId, name);
    } catch (err) {
      this.#ui.report(err);
    } finally {
      delete this.removing[key];
    }
    await this.loadFiles(projectId);
  }

  /** Asks where to save a project's export (settings, files, conversations) and writes it. */
  async exportProject(projectId: string): Promise<void> {
    this.note = null;
    try {
      const path = await ipc.exportProject(projectId);
      if (path !== null) this.note = `Saved to ${path}`;
    } catch (err) {
      this.#ui.report(err);
    }
  }

  /** Asks for a project's export and keeps it as a new project, shown unfolded. */
  async importProject(): Promise<void> {
    this.note = null;
    try {
      const imported = await ipc.importProject();
      if (imported === null) return;
      this.folded[imported.project.id] = false;
      this.note = [`Imported the project “${imported.project.name}”.`, ...imported.notes].join(" ");
    } catch (err) {
      this.#ui.report(err);
    }
    await Promise.all([this.load(), this.#conversations.refresh()]);
  }

  /** Switches a project's memory on or off.
   * @throws IpcError, for the caller to show (and to put its switch back) */
  async setMemory(projectId: string, on: boolean): Promise<void> {
    try {
      await ipc.setProjectMemory(projectId, on);
    } finally {
      await this.load();
    }
  }

  toggle(projectId: string): void {
    this.folded[projectId] = !this.folded[projectId];
  }
}
