// Words the window shows as a noun label and its value, nothing personified (DESIGN.md's
// words), against the real core: the header's prompt button for a conversation with none, a
// conversation without a title (or one of spaces only), and the Compare list's entry for a
// provider's default model when its models cannot be listed.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { invoke } from "@tauri-apps/api/core";
import { screen, waitFor } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
  sessionStorage.clear();
});

const words = (el: Element) => (el.textContent ?? "").replace(/\s+/g, " ").trim();

describe("labels", () => {
  it("the header's prompt button says Prompt: empty for a conversation without one, Prompt once it has one", async () => {
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    await backend.seed(() => ipc.setSystemPrompt(chat.id, ""));
    const { user } = await renderApp();
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    const button = await screen.findByTestId("system-prompt-button");
    expect(words(button)).toBe("Prompt: empty");
    expect(button.getAttribute("aria-label")).toBe("Prompt: empty");

    await backend.seed(() => ipc.setSystemPrompt(chat.id, "Be brief."));
    await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(screen.getAllByTestId("conversation-item")).toHaveLength(2));
    await user.click(screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === chat.id)!);
    await waitFor(() => expect(words(screen.getByTestId("system-prompt-button"))).toBe("Prompt"));
  });

  it("a conversation whose title is only spaces is Untitled in the list and in its header", async () => {
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    // Rust names every conversation (a blank title is refused); one kept from before that, or
    // written by another program, may still be blank: the window's answers say so here.
    const blank = <T,>(c: T): T => (c && typeof c === "object" && (c as { id?: unknown }).id === chat.id ? { ...c, title: "   " } : c);
    const forward = vi.mocked(invoke).getMockImplementation()!;
    vi.mocked(invoke).mockImplementation(async (cmd, args) => {
      const answer = await forward(cmd, args);
      if (cmd === "list_conversations") return (answer as unknown[]).map(blank);
      if (cmd === "get_conversation") return { ...(answer as object), conversation: blank((answer as { conversation: unknown }).conversation) };
      return answer;
    });
    const { user } = await renderApp();
    const item = (await screen.findAllByTestId("conversation-item")).find((i) => i.dataset.id === chat.id)!;
    const title = item.querySelector('[data-testid="conversation-title"]')!;
    expect(words(title)).toBe("Untitled");
    expect(title.getAttribute("title")).toBe("Untitled");
    await user.click(item);
    await waitFor(() => expect(words(screen.getByTestId("conversation-header-title"))).toBe("Untitled"));
  });

  it("Compare names a provider's default model as a noun, not as its default model", { timeout: 20_000 }, async () => {
    await backend.addProvider("Work", { models: [{ id: "gpt-a" }] });
    // Its models cannot be listed and it names no default: Compare offers its default, unnamed.
    await backend.addProvider("Down", { status: 500, message: "the list is down" });
    const chat = await backend.seed(() => ipc.createConversation("Compare"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "gpt-a"));
    const { user } = await renderApp();
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    await user.click(await screen.findByTestId("compare-toggle"));
    const down = await waitFor(() => {
      const found = screen.getAllByTestId("compare-model-option").find((o) => o.dataset.provider === "Down");
      if (!found) throw new Error("Down is not offered yet");
      return found;
    }, { timeout: 10_000 });
    expect(down.dataset.model).toBe("");
    expect(words(down)).toBe("Default model");
    expect(down.getAttribute("title")).toBe("Down · Default model");
    expect(document.body.textContent).not.toContain("its default model");
  });
});
