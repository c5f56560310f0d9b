// One primary action per view (DESIGN.md's buttons), against the real core: the welcome screen's
// (start a conversation once a provider exists; before, use the local model server offered, else
// add a provider), the Providers page's (its add form; the offer's Use when one is shown) and
// its prices' Save, which is not the page's primary.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
  sessionStorage.clear();
});

/** The labels of the primary buttons inside `root`. */
function primaries(root: HTMLElement): string[] {
  return [...root.querySelectorAll(".btn-primary")].map((b) => b.textContent?.trim() ?? "");
}

/** An Ollama-shaped model server found running as the app opens. */
async function ollamaRunning(): Promise<void> {
  const ollama = await backend.modelServer({ models: [{ id: "llama3.2:3b" }] });
  await backend.reopen({ localServers: { ollama } });
}

describe("one primary action", () => {
  it("on the welcome screen: Start a conversation once a provider exists", async () => {
    await backend.addProvider("Work");
    await renderApp();
    const welcome = screen.getByTestId("welcome");
    await waitFor(() => expect(within(welcome).queryByTestId("welcome-add-provider")).toBeNull());
    expect(primaries(welcome)).toEqual(["Start a conversation"]);
  });

  it("on the welcome screen without a provider: Add a provider", async () => {
    await renderApp();
    const welcome = screen.getByTestId("welcome");
    await waitFor(() => expect(within(welcome).getByTestId("welcome-add-provider")).toBeTruthy());
    expect(primaries(welcome)).toEqual(["Add a provider"]);
  });

  it("on the welcome screen and the Providers page with a local server offered: Use Ollama", async () => {
    await ollamaRunning();
    const { user } = await renderApp();
    const welcome = screen.getByTestId("welcome");
    await within(welcome).findByTestId("local-offer");
    expect(primaries(welcome)).toEqual(["Use Ollama"]);

    await user.click(screen.getByTestId("nav-providers"));
    const page = screen.getByTestId("provider-form").closest<HTMLElement>(".page")!;
    await within(page).findByTestId("local-offer");
    expect(primaries(page)).toEqual(["Use Ollama"]);
  });

  it("on the Providers page: Add provider, not the prices' Save price", async () => {
    await backend.addProvider("Work");
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-providers"));
    await screen.findAllByTestId("provider-item");
    expect(screen.getByTestId("provider-submit").classList.contains("btn-primary")).toBe(true);
    expect(screen.getByTestId("price-save").classList.contains("btn-primary")).toBe(false);
    expect(primaries(screen.getByTestId("prices"))).toEqual([]);
  });
});
