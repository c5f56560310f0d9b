// The error toast (an error with no place of its own) against the real core: where it is put
// (first in the main pane, in its flow, so it covers nothing on any page, the sidebar folded or
// not), how a long word in it is shortened, and how it goes away.
import { describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import { installRealBackend } from "./real-backend";
import { renderApp } from "./render-app";
import { renderWithStores } from "./render-with-stores";
import ErrorToast from "../src/app/ErrorToast.svelte";

describe("the error toast", () => {
  it("is the first thing in the main pane on every page, before the page itself, never over it", async () => {
    await installRealBackend();
    const { app, user, container } = await renderApp();
    const main = container.querySelector("main.main") as HTMLElement;
    for (const nav of ["nav-settings", "nav-servers", "nav-providers"]) {
      await user.click(screen.getByTestId(nav));
      app.report(new Error(`Saving failed on ${nav}`));
      const toast = await screen.findByTestId("error-toast");
      const region = screen.getByTestId("error-toast-region");
      expect(region.contains(toast)).toBe(true);
      // In the main pane (not the window's, not the sidebar's), first in it: the page comes after.
      expect(region.parentElement).toBe(main);
      expect(main.firstElementChild).toBe(region);
      expect(region.nextElementSibling?.classList.contains("page")).toBe(true);
      expect(toast.textContent).toContain(`Saving failed on ${nav}`);
    }
    // The sidebar is beside the pane, not under the toast.
    expect(within(screen.getByTestId("error-toast-region")).queryByTestId("nav-settings")).toBeNull();
  });

  it("shows a long address by its start and end, the whole message on hover, and Dismiss closes it", async () => {
    await installRealBackend();
    const { app, user } = await renderApp();
    const address = `https://example.com/${"a".repeat(80)}/the-end.json`;
    app.report(new Error(`Could not read ${address} now`));
    const toast = await screen.findByTestId("error-toast");
    const text = toast.querySelector("p") as HTMLElement;
    expect(text.textContent).toBe(`Could not read ${address.slice(0, 36)}…${address.slice(-20)} now`);
    expect(text.textContent).not.toContain(address);
    expect(text.title).toBe(`Could not read ${address} now`);
    await user.click(within(toast).getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByTestId("error-toast")).toBeNull();
    // The region stays (a live region must be there before what it announces), empty.
    expect(screen.getByTestId("error-toast-region").children).toHaveLength(0);
  });

  it("closes by itself after a while", async () => {
    const { stores } = renderWithStores(ErrorToast, { timeoutMs: 50 });
    stores.ui.report(new Error("A background save failed"));
    expect((await screen.findByTestId("error-toast")).textContent).toContain("A background save failed");
    await waitFor(() => expect(screen.queryByTestId("error-toast")).toBeNull());
  });
});
