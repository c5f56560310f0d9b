// The window itself: Rust's status (version, data folder, a database that cannot be used),
// whether the first round of loading is done, which page is open (kept for a reload of the
// window), the error toast, and the theme put on the page. Owns the navigation ticket: every
// navigation begins a new one, so an action that navigates when it ends (a slow create) can
// tell whether the person went elsewhere meanwhile. Knows nothing of the DOM except through the
// injected `ThemeController`; no other store is needed here, the others report through this one.

import * as ipc from "../lib/ipc";
import { toIpcError } from "../lib/errors";
import { LatestOnly } from "../shared/latest";
import type { ThemeController } from "./theme";
import type { AppStatus, Theme } from "../lib/types";

export type Page =
  | { name: "welcome" }
  | { name: "conversation"; id: string }
  | { name: "providers" }
  | { name: "settings" }
  | { name: "servers" }
  | { name: "usage" }
  | { name: "activity" }
  | { name: "skills" }
  | { name: "schedules" }
  | { name: "memory" };

export interface Toast {
  id: number;
  message: string;
}

export class UiStore {
  status = $state.raw<AppStatus | null>(null);
  /** true once the first round of loading has finished (successfully or not) */
  ready = $state(false);
  page = $state.raw<Page>({ name: "welcome" });
  toast = $state.raw<Toast | null>(null);
  /** the window-wide overlays: search (Ctrl/Cmd+K) and the shortcuts sheet (Ctrl/Cmd+/) */
  overlay = $state<"search" | "shortcuts" | null>(null);

  readonly #theme: ThemeController;
  /** any navigation begins a new ticket, so a slow create does not pull the person away */
  readonly #navigation = new LatestOnly();
  #toastCount = 0;

  constructor(theme: ThemeController) {
    this.#theme = theme;
  }

  get databaseError() {
    return this.status?.database_error ?? null;
  }

  /** The conversation the open page shows, if it shows one. */
  get openId(): string | null {
    return this.page.name === "conversation" ? this.page.id : null;
  }

  async loadStatus(): Promise<void> {
    try {
      this.status = await ipc.appStatus();
    } catch (err) {
      this.report(err);
    }
  }

  // ------------------------------------------------------------ a database that cannot be opened
  // (each throws an `IpcError`: the damaged-database page, which shows no toast, says it)

  /** Opens the database's folder in the file manager. */
  showDatabaseFolder(): Promise<void> {
    return ipc.showDatabaseFolder();
  }

  /** Sets the damaged file aside (kept beside it) and starts again with a fresh database;
   *  the kept file's path. */
  startFreshDatabase(): Promise<string> {
    return ipc.startFreshDatabase();
  }

  quit(): Promise<void> {
    return ipc.quitApp();
  }

  // ------------------------------------------------------------ errors

  /** Shows an error in the toast; never throws. */
  report(err: unknown): void {
    const error = toIpcError(err);
    this.toast = { id: ++this.#toastCount, message: error.message };
  }

  dismissToast(id: number): void {
    if (this.toast?.id === id) this.toast = null;
  }

  // ------------------------------------------------------------ theme

  applyTheme(theme: Theme): void {
    this.#theme.set(theme);
  }

  // ------------------------------------------------------------ navigation

  /** Opens `page` (a navigation: any earlier ticket stops holding) and remembers it for a reload. */
  go(page: Page): void {
    this.#navigation.begin();
    this.page = page;
    rememberPage(page);
  }

  /**
   * Begins a navigation ticket without moving: the check returned stays true until the person
   * (or anything else) navigates, so an action can navigate when it ends only if still wanted.
   */
  beginNavigation(): () => boolean {
    return this.#navigation.begin();
  }

  showProviders(): void {
    this.go({ name: "providers" });
  }

  showSettings(): void {
    this.go({ name: "settings" });
  }

  showUsage(): void {
    this.go({ name: "usage" });
  }

  showActivity(): void {
    this.go({ name: "activity" });
  }

  showSkills(): void {
    this.go({ name: "skills" });
  }

  showSchedules(): void {
    this.go({ name: "schedules" });
  }

  showMemory(): void {
    this.go({ name: "memory" });
  }

  /** The page this window showed before a reload, if it was a conversation. */
  rememberedPage(): Page | null {
    return rememberedPage();
  }
}

const PAGE_KEY = "switchboard.page";

/** The page shown, kept for this window's life only (a reload, not a relaunch). */
function rememberPage(page: Page): void {
  try {
    sessionStorage.setItem(PAGE_KEY, JSON.stringify(page));
  } catch {
    // No storage (a test's DOM, a locked-down webview): a reload just starts at the welcome page.
  }
}

function rememberedPage(): Page | null {
  try {
    const page: unknown = JSON.parse(sessionStorage.getItem(PAGE_KEY) ?? "null");
    if (typeof page === "object" && page !== null && (page as Page).name === "conversation") {
      const id = (page as { id?: unknown }).id;
      return typeof id === "string" ? { name: "conversation", id } : null;
    }
  } catch {
    // As above.
  }
  return null;
}
