// The whole App, for the tests that drive the window (the mocked `invoke` behind it answered by
// the real core: installRealBackend in real-backend.ts). Each such test file keeps its own
// one-line `vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"))` (Vitest hoists
// `vi.mock` per file). Test-only code.

import { render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { expect } from "vitest";
import App from "../src/app/App.svelte";
import { newStores } from "./render-with-stores";

/**
 * Renders the App (light OS theme) with fresh stores and waits until it has loaded. `app` is
 * the UI store (page, toast), the window state the tests that drive the window read.
 */
export async function renderApp() {
  const stores = newStores();
  const user = userEvent.setup();
  const view = render(App, { props: { stores } });
  await waitFor(() => expect(stores.ui.ready).toBe(true));
  return { stores, app: stores.ui, user, ...view };
}

/** [`renderApp`], with the conversation `id` opened from the list. */
export async function renderAppAt(id: string) {
  const view = await renderApp();
  const item = await waitFor(() => {
    const found = screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === id);
    expect(found).toBeTruthy();
    return found!;
  });
  await view.user.click(item);
  return view;
}
