// A conversation's answer outlives the page that shows it: leaving for Settings mid-run and
// coming back, a run ending while the person is elsewhere, and a reloaded window attaching to
// the run under way again.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(),
  Channel: class {
    onmessage: (event: unknown) => void = () => {};
  },
}));

import { cleanup, screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
  sessionStorage.clear();
});

function items(): HTMLElement[] {
  return screen.queryAllByTestId("conversation-item");
}

describe("a running answer and the pages around it", () => {
  it("keeps its question, its Stop and its live answer while the person visits Settings, and its end does not pull the window back", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    let release: () => void = () => {};
    backend.toolGate = () => new Promise((resolve) => (release = resolve));
    const { user, app } = await renderApp();
    await user.click(items()[0]);
    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await screen.findByTestId("approval-dialog");

    // Away and back while the run waits for the person: the question is still there.
    await user.click(screen.getByTestId("nav-settings"));
    expect(screen.queryByTestId("approval-dialog")).toBeNull();
    await user.click(items()[0]);
    const dialog = await screen.findByTestId("approval-dialog");
    expect(screen.getByTestId("composer-stop")).toBeTruthy();
    await user.click(within(dialog).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("running"));

    // Away again; the run ends while Settings is open, and Settings stays open.
    await user.click(screen.getByTestId("nav-settings"));
    release();
    await waitFor(() => expect(backend.callsTo("list_conversations").length).toBeGreaterThan(1));
    expect(app.page.name).toBe("settings");
    expect(screen.queryByTestId("message-list")).toBeNull();

    // Back: the whole answer, as it ended, with no second fetch of the conversation after it.
    const fetches = backend.callsTo("get_conversation").length;
    await user.click(items()[0]);
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
    expect(screen.getByTestId("tool-card").dataset.state).toBe("done");
    expect(screen.getByTestId("composer-send")).toBeTruthy();
    expect(backend.callsTo("get_conversation").length).toBe(fetches + 1);
  });

  it("a reloaded window opens the same conversation, is given the run under way again, and sees it finish", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    const first = await renderApp();
    await first.user.click(items()[0]);
    await first.user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await screen.findByTestId("approval-dialog");

    // The page reloads: a new window state, the same backend with its run still waiting.
    cleanup();
    const { user } = await renderApp();
    const dialog = await screen.findByTestId("approval-dialog");
    expect(backend.callsTo("attach_run").length).toBeGreaterThan(0);
    expect(screen.getByTestId("composer-stop")).toBeTruthy();
    // The question shown once, though it was saved before the reload and replayed after.
    expect(screen.getByTestId("message-list").textContent?.match(/What time is it\?/g)).toHaveLength(1);
    await user.click(within(dialog).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
    expect(screen.getAllByTestId("tool-card")).toHaveLength(1);
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
  });

  it("a replayed question that was already answered is not asked again", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    let release: () => void = () => {};
    backend.toolGate = () => new Promise((resolve) => (release = resolve));
    const first = await renderApp();
    await first.user.click(items()[0]);
    await first.user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await first.user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("running"));

    cleanup();
    await renderApp();
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("running"));
    expect(screen.queryByTestId("approval-dialog")).toBeNull();
    release();
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
  });
});
