//! Puts the chosen theme on <html data-theme="light|dark">. "system" follows
//! `prefers-color-scheme` live. Owns only that attribute and its listener.

import type { Theme } from "../lib/types";

export type AppliedTheme = "light" | "dark";

const DARK_QUERY = "(prefers-color-scheme: dark)";

type MatchMedia = (query: string) => MediaQueryList;

export class ThemeController {
  #root: HTMLElement;
  #matchMedia: MatchMedia | null;
  #query: MediaQueryList | null = null;
  #theme: Theme = "system";
  #onChange = (): void => this.#apply();

  constructor(
    root: HTMLElement = document.documentElement,
    matchMedia: MatchMedia | null = typeof window !== "undefined" && typeof window.matchMedia === "function"
      ? window.matchMedia.bind(window)
      : null,
  ) {
    this.#root = root;
    this.#matchMedia = matchMedia;
  }

  get theme(): Theme {
    return this.#theme;
  }

  /** Applies `theme` now; with "system", keeps following the OS until set again. */
  set(theme: Theme): void {
    this.#theme = theme;
    this.#stopFollowing();
    if (theme === "system" && this.#matchMedia) {
      this.#query = this.#matchMedia(DARK_QUERY);
      this.#query.addEventListener("change", this.#onChange);
    }
    this.#apply();
  }

  dispose(): void {
    this.#stopFollowing();
  }

  #stopFollowing(): void {
    this.#query?.removeEventListener("change", this.#onChange);
    this.#query = null;
  }

  #apply(): void {
    let applied: AppliedTheme;
    if (this.#theme === "system") {
      applied = this.#query?.matches ? "dark" : "light";
    } else {
      applied = this.#theme;
    }
    this.#root.dataset.theme = applied;
  }
}
