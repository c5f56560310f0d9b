// The MCP servers: their list with each one's state (pushed by Rust at every change, so nothing
// polls), waiting for a server to run (after a sign-in, heard from those lists), the actions on a
// server (approve, switch on or off, sign in or out, restart, remove, add, edit, its folders, its
// sandbox, widened by what it refused), finding and installing servers from the MCP Registry or a
// bundle, their tools and the acceptance of a changed tool, a server's log, importing servers from
// another app's configuration, the forms servers ask the person to fill in (or pages to visit),
// and the standing approvals of their tools (the tools that run without asking).
//
// A list fetched while Rust pushed a newer one is dropped (the push counter). Every action reloads
// the list when it ends; failures go to the UI store's toast unless the caller shows them itself.

import * as ipc from "../lib/ipc";
import { IpcError, toIpcError } from "../lib/errors";
import type {
  ImportPreview,
  BundleInstallRequest,
  InstallRequest,
  McpForm,
  McpFormAnswer,
  McpServerState,
  McpServerStatus,
  McpServerView,
  Reach,
  NewMcpServer,
  OfferedBundle,
  RegistryPage,
  ShownProposal,
  StandingApproval,
  ServerOffers,
  ToolReview,
} from "../lib/types";
import type { BundleDrop } from "../chat/attachments.svelte";
import type { UiStore } from "../app/ui.svelte";

/** How waiting for a server to run ended (`ServersStore.untilRunning`). */
export type RunWait =
  | { ended: "running" }
  /** it stopped short of running: failed, stopped, gone from the list (state null), or asks for a sign-in again */
  | { ended: "short"; state: McpServerState | null }
  | { ended: "timed_out" }
  /** the waiter gave up (its signal aborted) */
  | { ended: "abandoned" };

export class ServersStore {
  /** MCP servers with their states; null until first loaded. */
  list = $state.raw<McpServerStatus[] | null>(null);
  /** Forms MCP servers are waiting on, oldest first; the window shows the first. */
  forms = $state.raw<McpForm[]>([]);
  /** the ids of forms Rust closed without an answer (the newest 64) */
  #closedForms = new Set<string>();

  readonly #ui: UiStore;
  /** how many server lists Rust has pushed (a fetched list older than a push is dropped) */
  #pushes = 0;
  /** told of every new list, pushed or fetched (what waits for a server to run) */
  readonly #heard = new Set<() => void>();

  constructor(ui: UiStore) {
    this.#ui = ui;
  }

  /** Opens the Servers page and loads the list afresh. */
  show(): void {
    this.#ui.go({ name: "servers" });
    void this.load();
  }

  async load(): Promise<void> {
    const pushesBefore = this.#pushes;
    try {
      const servers = await ipc.listMcpServers();
      // A list Rust pushed while this one was on its way is newer: keep that.
      if (this.#pushes === pushesBefore) this.#setList(servers);
    } catch (err) {
      this.#ui.report(err);
    }
  }

  /** Servers proposed by switchboard:// links, oldest first, until the person answers. */
  proposals = $state<ShownProposal[]>([]);
  /** An MCP bundle dropped on the window, until the consent screen takes it. */
  droppedBundle = $state<BundleDrop | null>(null);

  /** A bundle dropped on the window: the Servers page's consent screen shows it. */
  bundleDropped(bundle: BundleDrop): void {
    this.droppedBundle = bundle;
    this.show();
  }

  /** What Browse is asked to search for (a link proposed a server of the registry). */
  browseFor = $state<{ query: string } | null>(null);

  async watchProposals(): Promise<void> {
    try {
      await ipc.watchServerProposals((proposal) => {
        this.proposals = [...this.proposals, proposal];
      });
    } catch (err) {
      console.error("cannot listen for proposed servers", err);
    }
  }

  dismissProposal(token: string): void {
    this.proposals = this.proposals.filter((p) => p.token !== token);
  }

  /** A proposed entry: Rust adds it unapproved and shows its native approval dialog. */
  async acceptProposal(token: string): Promise<void> {
    this.dismissProposal(token);
    await this.#onServer(() => ipc.acceptServerProposal(token));
    this.show();
  }

  /** A proposed registry server: the Servers page's Browse searches for it. */
  findProposal(token: string, name: string): void {
    this.dismissProposal(token);
    this.browseFor = { query: name };
    this.show();
  }

  /** Rust pushes the server list at every change: the Servers page never polls. */
  async watchServers(): Promise<void> {
    try {
      await ipc.watchMcpServers((servers) => {
        this.#pushes++;
        this.#setList(servers);
      });
    } catch (err) {
      // The page still loads the list when opened and after each action.
      console.error("cannot listen for MCP server changes", err);
    }
  }

  #setList(servers: McpServerStatus[]): void {
    this.list = servers;
    for (const heard of [...this.#heard]) heard();
  }

  /** What the list says of server `name` now (null: not in it, not started, or no list yet). */
  stateOf(name: string): McpServerState | null {
    return this.list?.find((s) => s.name === name)?.state ?? null;
  }

  /**
   * Waits until the list shows server `name` running, as after a sign-in (which restarts it),
   * for `ms` at most. Ends early when the server stops short of running: it failed, it was
   * stopped or removed, or it asks for a sign-in again once it has left that state (the list at
   * the start may not show the restart yet). Only the lists Rust pushes (or an action fetches)
   * are heard: nothing polls.
   */
  untilRunning(name: string, ms: number, signal?: AbortSignal): Promise<RunWait> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve({ ended: "abandoned" });
      /** the server has been seen in a state other than `needs_sign_in` */
      let left = false;
      const end = (outcome: RunWait): void => {
        clearTimeout(timer);
        this.#heard.delete(look);
        signal?.removeEventListener("abort", abandon);
        resolve(outcome);
      };
      const abandon = (): void => end({ ended: "abandoned" });
      const look = (): void => {
        if (this.list === null) return;
        const server = this.list.find((s) => s.name === name);
        const state = server?.state ?? null;
        if (state?.state === "running") return end({ ended: "running" });
        if (state?.state === "needs_sign_in") {
          if (left) end({ ended: "short", state });
          return;
        }
        left = true;
        if (!server || state?.state === "failed" || state?.state === "stopped") end({ ended: "short", state });
      };
      const timer = setTimeout(() => end({ ended: "timed_out" }), ms);
      signal?.addEventListener("abort", abandon);
      this.#heard.add(look);
      look();
    });
  }

  async watchForms(): Promise<void> {
    try {
      await ipc.watchMcpForms(
        (form) => {
          if (this.#closedForms.has(form.id)) return;
          this.forms = [...this.forms.filter((f) => f.id !== form.id), form];
        },
        (id) => {
          // Heard apart from the forms, so a close may come before its form: kept a while.
          this.#closedForms.add(id);
          if (this.#closedForms.size > 64) this.#closedForms.delete(this.#closedForms.values().next().value!);
          this.forms = this.forms.filter((f) => f.id !== id);
        },
      );
    } catch (err) {
      // Without a listener Rust declines every form (and logs it); nothing to show here.
      console.error("cannot listen for MCP servers' forms", err);
    }
  }

  // ------------------------------------------------------------ actions on a server

  /** Runs one action on a server, reports a failure in the toast, then reloads the list. */
  async #onServer<T>(action: () => Promise<T>): Promise<T | undefined> {
    try {
      return await action();
    } catch (err) {
      this.#ui.report(err);
      return undefined;
    } finally {
      await this.load();
    }
  }

  /** Rust shows its own native dialog; resolves whether the person approved. */
  async approve(name: string): Promise<boolean> {
    return (await this.#onServer(() => ipc.approveMcpServer(name))) ?? false;
  }

  async setEnabled(name: string, enabled: boolean): Promise<void> {
    await this.#onServer(() => ipc.setMcpServerEnabled(name, enabled));
  }

  /** Rust shows its own native dialog, then the browser signs in and the server restarts. */
  async signIn(name: string): Promise<void> {
    await this.#onServer(() => ipc.signInMcpServer(name));
  }

  /**
   * The same for a caller that shows a failure itself (a tool call's card), not in the toast.
   * @throws IpcError (the person said no, or the sign-in failed)
   */
  async signInOrThrow(name: string): Promise<void> {
    try {
      await ipc.signInMcpServer(name);
    } finally {
      await this.load();
    }
  }

  async signOut(name: string): Promise<void> {
    await this.#onServer(() => ipc.signOutMcpServer(name));
  }

  /** Gives the server a folder the person picks in Rust's folder dialog. */
  async addRoot(name: string): Promise<void> {
    await this.#onServer(() => ipc.addMcpServerRoot(name));
  }

  async removeRoot(name: string, folder: string): Promise<void> {
    await this.#onServer(() => ipc.removeMcpServerRoot(name, folder));
  }

  /**
   * Turns a local server's sandbox on or off with `network`; the server as it now is (null:
   * refused, reported). Rust keeps its approval only when the change gives it no more.
   */
  /** `network` null: as it is, or for a sandbox newly on, the one Rust gives its runtime. */
  async setSandbox(name: string, enabled: boolean, network: Reach | null): Promise<McpServerView | null> {
    return (await this.#onServer(() => ipc.setMcpServerSandbox(name, enabled, network))) ?? null;
  }

  /**
   * Gives a server's sandbox a folder the person picks in Rust's folder dialog, to read or to
   * read and write; the server as it now is (null: the dialog was closed, or refused).
   */
  async addSandboxFolder(name: string, writable: boolean): Promise<McpServerView | null> {
    return (await this.#onServer(() => ipc.addMcpServerSandboxFolder(name, writable))) ?? null;
  }

  async removeSandboxFolder(name: string, folder: string): Promise<McpServerView | null> {
    return (await this.#onServer(() => ipc.removeMcpServerSandboxFolder(name, folder))) ?? null;
  }

  /**
   * Gives a running server what its sandbox refused it (`refused`, one of its `sandbox_refused`,
   * word for word): Rust's native approval dialog shows the widened sandbox first, and the server
   * restarts in it once approved. Whether the person approved (false too when it failed, reported).
   */
  async widenSandbox(name: string, refused: string): Promise<boolean> {
    return (await this.#onServer(() => ipc.widenMcpServerSandbox(name, refused))) ?? false;
  }

  async restart(name: string): Promise<void> {
    await this.#onServer(() => ipc.restartMcpServer(name));
  }

  async remove(name: string): Promise<void> {
    await this.#onServer(() => ipc.removeMcpServer(name));
  }

  /**
   * @throws IpcError (for the form: `field` is name, command_line or url)
   */
  async add(server: NewMcpServer): Promise<McpServerView> {
    try {
      return await ipc.addMcpServer(server.name, server.command_line ?? null, server.url ?? null);
    } finally {
      void this.load();
    }
  }

  /** @throws IpcError (shown by Browse) */
  async searchRegistry(query: string, cursor: string | null): Promise<RegistryPage> {
    return ipc.searchMcpRegistry(query, cursor);
  }

  /**
   * Installs a server from the registry; Rust then asks for approval in its own dialog.
   * @throws IpcError (shown by the install form)
   */
  async install(request: InstallRequest): Promise<McpServerView> {
    try {
      return await ipc.installMcpServer(request);
    } finally {
      void this.load();
    }
  }

  /** Rust's open dialog; the bundle chosen, read and checked (null: the dialog was closed). @throws IpcError */
  async openBundle(): Promise<OfferedBundle | null> {
    return ipc.openMcpBundle();
  }

  /**
   * Unpacks the offered bundle; Rust then asks for approval in its own dialog.
   * @throws IpcError (shown by the consent screen)
   */
  async installBundle(request: BundleInstallRequest): Promise<McpServerView> {
    try {
      return await ipc.installMcpBundle(request);
    } finally {
      void this.load();
    }
  }

  /**
   * Rust stops the server and asks for approval of the new command line in its own dialog.
   * @throws IpcError (for the form: `field` is command_line or url)
   */
  async edit(name: string, typed: { command_line?: string; url?: string }): Promise<McpServerView> {
    try {
      return await ipc.editMcpServer(name, typed.command_line ?? null, typed.url ?? null);
    } finally {
      void this.load();
    }
  }

  // ------------------------------------------------------------ import

  /**
   * @throws IpcError (shown by the import panel)
   */
  async previewImport(text: string | null): Promise<ImportPreview> {
    return ipc.previewMcpImport(text);
  }

  /**
   * @throws IpcError (shown by the import panel)
   */
  async importServers(text: string | null): Promise<string[]> {
    try {
      return await ipc.importMcpServers(text);
    } finally {
      void this.load();
    }
  }

  // ------------------------------------------------------------ tools and log

  /** A running server's tools; a failure is reported and reads as none. */
  /** What a running server offers beside its tools; nothing (and the error reported) if it fails. */
  async offers(name: string): Promise<ServerOffers> {
    try {
      return await ipc.listMcpOffers(name);
    } catch (err) {
      this.#ui.report(err);
      return { resources: [], templates: [], prompts: [] };
    }
  }

  async tools(name: string): Promise<ToolReview[]> {
    try {
      return await ipc.listMcpTools(name);
    } catch (err) {
      this.#ui.report(err);
      return [];
    }
  }

  /** A running server's tools, or null when they cannot be listed (not running): nothing reported. */
  async toolsIfRunning(name: string): Promise<ToolReview[] | null> {
    try {
      return await ipc.listMcpTools(name);
    } catch {
      return null;
    }
  }

  /** Rust asks in its native dialog; resolves whether the change was accepted. */
  async acceptTool(name: string, tool: string): Promise<boolean> {
    try {
      return await ipc.acceptMcpTool(name, tool);
    } catch (err) {
      this.#ui.report(err);
      return false;
    }
  }

  /** The end of a server's stderr log; a failure is reported and reads as empty. */
  async log(name: string): Promise<string> {
    try {
      return await ipc.mcpServerLog(name);
    } catch (err) {
      this.#ui.report(err);
      return "";
    }
  }

  // ------------------------------------------------------------ standing approvals

  /**
   * Every standing approval of a tool (for one conversation or for all).
   * @throws IpcError (the Settings list reports it)
   */
  standingApprovals(): Promise<StandingApproval[]> {
    return ipc.listToolApprovals();
  }

  /**
   * Lets a running server's tool run without asking in every conversation. Rust asks in its
   * native dialog first; resolves whether the person confirmed.
   * @throws IpcError (not running, no such tool, the database)
   */
  async allowAlways(server: string, tool: string): Promise<boolean> {
    try {
      await ipc.allowToolAlways(server, tool);
      return true;
    } catch (err) {
      if (err instanceof IpcError && err.kind === "not_confirmed") return false;
      throw err;
    }
  }

  /**
   * Revokes one standing approval; Rust asks again from the next call on.
   * @throws IpcError
   */
  revokeApproval(approval: StandingApproval): Promise<void> {
    return ipc.revokeToolApproval(approval.server, approval.tool, approval.conversation_id);
  }

  // ------------------------------------------------------------ forms

  /**
   * Sends the person's answer to a form; the form closes when Rust took it.
   * @throws IpcError when the values do not fit the form (it stays open)
   */
  async answerForm(id: string, answer: McpFormAnswer): Promise<void> {
    await this.#closeForm(id, () => ipc.answerMcpForm(id, answer));
  }

  /**
   * Has Rust ask in its native dialog, then open the page of a URL-mode request in the browser
   * (which answers it `accept`); the request closes when Rust did, and stays open when the
   * person said no there.
   * @throws IpcError when the page could not be opened (the request stays open)
   */
  async visitForm(id: string): Promise<void> {
    await this.#closeForm(id, () => ipc.visitMcpForm(id));
  }

  /**
   * Runs `action` on form `id`, then closes it; one Rust no longer holds closes too. An
   * action that says `false` (the person said no in Rust's native dialog) leaves it open.
   */
  async #closeForm(id: string, action: () => Promise<void | boolean>): Promise<void> {
    try {
      if ((await action()) === false) return;
    } catch (err) {
      const error = toIpcError(err);
      if (error.kind !== "not_found") throw error;
    }
    this.forms = this.forms.filter((f) => f.id !== id);
  }
}
