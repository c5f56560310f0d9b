// Renders one component on its own with the window's stores in its context, as App.svelte
// provides them, for tests of a component outside the whole window. The stores are fresh (not
// started) unless a test passes its own. Test-only code.

import { render } from "@testing-library/svelte";
import type { Component, MountOptions } from "svelte";
import { storesContext } from "../src/app/context";
import { Stores } from "../src/app/stores";
import { ThemeController } from "../src/app/theme";
import { FakeDarkQuery } from "./test-helpers";

/** The stores made since the last `settleStores`. */
const made: Stores[] = [];

/** Stores for a window with a light OS theme, nothing loaded yet. */
export function newStores(): Stores {
  const stores = new Stores(new ThemeController(document.documentElement, new FakeDarkQuery(false).matchMedia));
  made.push(stores);
  return stores;
}

/**
 * Sends what the composers of the stores made so far still wait to save, now, to the backend
 * answering now, and forgets those stores: a test's drafts never land in the next test's
 * backend (whose conversations have the same ids).
 */
export function settleStores(): void {
  for (const stores of made.splice(0)) stores.chats.flush();
}

/** Renders `component` with `props`, its context holding `stores`. */
export function renderWithStores<P extends Record<string, unknown>>(component: Component<P>, props: P, stores: Stores = newStores()) {
  // (MountOptions makes `props` optional or not by the props' type, which a generic cannot tell.)
  const options = { props, context: storesContext(stores) } as Partial<MountOptions<P>>;
  const view = render(component, options);
  return { stores, ...view };
}
