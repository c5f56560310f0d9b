// The Memory page (issue 62) against the real core: every memory's facts with where each came
// from, a fact written by the person added to the memory chosen (a blank one refused beside the
// field), edited in place and deleted, and each memory switched on and off where it is listed.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

const scope = (id: string) => screen.getAllByTestId("memory-scope").find((s) => s.dataset.id === id)!;
const facts = (id: string) => within(scope(id)).queryAllByTestId("memory-fact-text").map((f) => f.textContent);

describe("the Memory page", () => {
  it("lists, adds, edits, deletes and switches memories", async () => {
    const project = await backend.seed(() => ipc.createProject({ name: "Bridge", instructions: "", profile: null, memory: false, tools: [], roots: [] }));
    await backend.seed(() => ipc.addMemory(null, "Prefers metric units."));
    await backend.seed(() => ipc.addMemory(project.id, "Rivets are steel."));
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-memory"));
    await waitFor(() => expect(facts("own")).toEqual(["Prefers metric units."]));
    expect(facts(project.id)).toEqual(["Rivets are steel."]);
    expect(within(scope("own")).getByText(/Written by you/)).toBeTruthy();

    // Added to the project's memory; a blank one is refused beside the field.
    await user.click(screen.getByTestId("memory-add-save"));
    expect((await screen.findByTestId("memory-add-error")).textContent).toBe("Write the fact to remember.");
    await user.type(screen.getByTestId("memory-add-text"), "The deck is grey.");
    await user.selectOptions(screen.getByTestId("memory-add-to"), "Bridge");
    await user.click(screen.getByTestId("memory-add-save"));
    await waitFor(() => expect(facts(project.id)).toEqual(["The deck is grey.", "Rivets are steel."]));

    // Edited in place, then deleted.
    const first = within(scope(project.id)).getAllByTestId("memory-fact")[0];
    await user.click(within(first).getByTestId("memory-fact-edit"));
    const words = within(scope(project.id)).getByTestId("memory-edit-text");
    await user.clear(words);
    await user.type(words, "The deck is white.");
    await user.click(within(scope(project.id)).getByTestId("memory-edit-save"));
    await waitFor(() => expect(facts(project.id)).toEqual(["The deck is white.", "Rivets are steel."]));
    await user.click(within(within(scope(project.id)).getAllByTestId("memory-fact")[1]).getByTestId("memory-fact-delete"));
    await waitFor(() => expect(facts(project.id)).toEqual(["The deck is white."]));

    // Switched: the person's own in Settings, the project's on the project.
    await user.click(within(scope("own")).getByTestId("memory-switch"));
    await waitFor(async () => expect((await backend.seed(() => ipc.getSettings())).memory).toBe(true));
    await user.click(within(scope(project.id)).getByTestId("memory-switch"));
    await waitFor(async () => expect((await backend.seed(() => ipc.listProjects()))[0].memory).toBe(true));
    expect((await backend.seed(() => ipc.listMemories())).map((m) => m.text).sort()).toEqual(["Prefers metric units.", "The deck is white."]);
  }, 30_000);
});
