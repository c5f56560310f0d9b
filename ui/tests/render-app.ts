// The whole App against an in-memory backend, for the tests that drive the
// window. Each such test file keeps its own one-line
//   vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn() }));
// (Vitest hoists `vi.mock` per file); the mocked `invoke` imported here is
// that file's mock. Test-only code.

import { render, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { invoke } from "@tauri-apps/api/core";
import { expect, vi } from "vitest";
import App from "../src/App.svelte";
import { AppState } from "../src/lib/app-state.svelte";
import { ThemeController } from "../src/lib/theme";
import { FakeBackend, FakeDarkQuery } from "./fake-backend";

/** A fresh `FakeBackend` that answers the mocked `invoke` from now on; call it in `beforeEach`. */
export function installFakeBackend(): FakeBackend {
  const backend = new FakeBackend();
  vi.mocked(invoke).mockReset();
  vi.mocked(invoke).mockImplementation(backend.invoke as typeof invoke);
  return backend;
}

/** Renders the App (light OS theme) and waits until it has loaded. */
export async function renderApp() {
  const app = new AppState(new ThemeController(document.documentElement, new FakeDarkQuery(false).matchMedia));
  const user = userEvent.setup();
  const view = render(App, { props: { app } });
  await waitFor(() => expect(app.ready).toBe(true));
  return { app, user, ...view };
}
