// The whole App against an in-memory backend, for the tests that drive the
// window. Each such test file keeps its own one-line
//   vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn() }));
// (Vitest hoists `vi.mock` per file); the mocked `invoke` imported here is
// that file's mock. Test-only code.

import { render, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { invoke } from "@tauri-apps/api/core";
import { expect, vi } from "vitest";
import App from "../src/app/App.svelte";
import { FakeBackend } from "./fake-backend";
import { newStores, settleStores } from "./render-with-stores";

/** A fresh `FakeBackend` that answers the mocked `invoke` from now on; call it in `beforeEach`. */
export function installFakeBackend(): FakeBackend {
  settleStores();
  const backend = new FakeBackend();
  vi.mocked(invoke).mockReset();
  vi.mocked(invoke).mockImplementation(backend.invoke as typeof invoke);
  return backend;
}

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
