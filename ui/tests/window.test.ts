// The whole window against the real core (ipc_serve: a fresh app over a temporary home per
// test, model servers scripted turn by turn, real MCP servers from tests/peers): what a person
// sees and does.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import { invoke } from "@tauri-apps/api/core";
import * as ipc from "../src/lib/ipc";
import { toIpcError } from "../src/lib/errors";
import type { RunEvent } from "../src/lib/bindings";
import type { Conversation } from "../src/lib/types";
import { httpPeer, type ModelServer, installRealBackend, peer, type RealBackend, type Turn } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

// The core answers over a socket and runs real servers: what it shows can take longer than a
// fake's next tick, never a fixed wait.
configure({ asyncUtilTimeout: 10_000 });

function items(): HTMLElement[] {
  return screen.queryAllByTestId("conversation-item");
}

/** A conversation Rust keeps, titled `title`. */
function addConversation(title: string): Promise<Conversation> {
  return backend.seed(() => ipc.createConversation(title));
}

/** The conversations as Rust lists them. */
function conversations(): Promise<Conversation[]> {
  return backend.seed(() => ipc.listConversations());
}

/** The provider "Work" at a model server as `script` says, with its one model "m"; its address. */
function addWork(script: ModelServer = {}): Promise<string> {
  return backend.addProvider("Work", { models: [{ id: "m" }], ...script });
}

/** A conversation titled `title` that talks to Work's model. */
async function chatWithWork(title: string): Promise<Conversation> {
  const conversation = await addConversation(title);
  await backend.seed(() => ipc.setConversationModel(conversation.id, "Work", "m"));
  return conversation;
}

/** Runs what `start` starts through the core to its end, every call allowed once, as setup;
 *  the run's events. */
function seedRun(start: (onEvent: (event: RunEvent) => void) => Promise<string>): Promise<RunEvent[]> {
  return backend.seed(async () => {
    const events: RunEvent[] = [];
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    await start((event) => {
      events.push(event);
      if (event.type === "approval_required") {
        void ipc.answerApproval(
          event.request_id,
          event.calls.map((c) => ({ call_id: c.call_id, decision: "allow_once" })),
        );
      }
      if (event.type === "run_finished") finish();
    });
    await finished;
    return events;
  });
}

/** Asks `text` in `conversation` through the core, to the run's end. */
function seedAsk(conversation: Conversation, text: string): Promise<RunEvent[]> {
  return seedRun((onEvent) => ipc.sendMessage(conversation.id, text, onEvent));
}

/** The messages Rust keeps for `conversation` (those shown). */
async function messagesOf(conversation: Conversation) {
  return (await backend.seed(() => ipc.getConversation(conversation.id))).messages;
}

/** A folder of its own under the system's temporary one. */
function tempFolder(): string {
  return mkdtempSync(join(tmpdir(), "switchboard-window-"));
}

/** A model that calls the fault peer's echo with `text` once, then answers `answer`. */
function echoThenAnswer(text: string, answer: string[]): ModelServer {
  return { turns: [{ tools: [{ name: "fault__echo", arguments: { text } }] }, { answer }] };
}

const NOON: Turn = { answer: ["It is **noon**", " in Paris. <script>alert(1)</script>"] };

describe("against the real core", { timeout: 30_000 }, () => {
  beforeEach(async () => {
    backend = await installRealBackend();
    sessionStorage.clear(); // no page remembered from an earlier test
  });

  describe("sidebar and conversations", () => {
    it("lists conversations newest first, highlights the open one, and keeps the full title in a tooltip", async () => {
      await addConversation("Older");
      const long = await addConversation("A very long conversation title ".repeat(5).trim());
      const { user } = await renderApp();

      expect(items().map((i) => within(i).getByTestId("conversation-title").textContent)).toEqual([long.title, "Older"]);
      expect(within(items()[0]).getByTestId("conversation-title").getAttribute("title")).toBe(long.title);
      expect(items()[0].dataset.id).toBe(long.id);

      await user.click(items()[1]);
      await waitFor(() => expect(items()[1].getAttribute("aria-current")).toBe("page"));
      expect(items()[0].getAttribute("aria-current")).toBeNull();
      await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Older"));
    });

    it("shows the welcome state when nothing is open, and an empty message list for a new conversation", async () => {
      const { user } = await renderApp();
      expect(screen.getByTestId("welcome")).toBeTruthy();

      await user.click(screen.getByTestId("new-conversation"));
      await waitFor(() => expect(items()).toHaveLength(1));
      expect(screen.queryByTestId("welcome")).toBeNull();
      expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("New conversation");
      await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("No messages yet"));
    });

    it("Ctrl+N starts a new conversation", async () => {
      await renderApp();
      await fireEvent.keyDown(window, { key: "n", ctrlKey: true });
      await waitFor(() => expect(items()).toHaveLength(1));
      expect(backend.callsTo("create_conversation")).toHaveLength(1);
      expect(await conversations()).toHaveLength(1);
    });

    it("renders model text as sanitised Markdown: raw HTML shows as text and never runs", async () => {
      await addWork({ answer: ['<img src=x onerror="alert(1)"><b>bold</b>'] });
      const conversation = await chatWithWork("Chat");
      await seedAsk(conversation, "Say something bold");
      const { user } = await renderApp();
      await user.click(items()[0]);
      const list = await screen.findByTestId("message-list");
      await waitFor(() => expect(list.textContent).toContain("<b>bold</b>"));
      expect(list.querySelector("img")).toBeNull();
      expect(list.querySelector("b")).toBeNull();
      expect(list.textContent).toContain("Assistant");
      expect(list.querySelector("script")).toBeNull();
    });

    it("shows the files attached to a message of yours by kind, name and size, names as text", async () => {
      await addWork({ answer: ["A cat and a table."] });
      const conversation = await chatWithWork("Files");
      const folder = tempFolder();
      // A real PNG (one pixel) padded to 2 KB after its end, and a small text file.
      const png = Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
        "base64",
      );
      const picture = join(folder, "cat <img src=x onerror=alert(1)>.png");
      writeFileSync(picture, Buffer.concat([png, Buffer.alloc(2048 - png.length)]));
      const scores = join(folder, "scores.csv");
      writeFileSync(scores, "name,score\nAda,92.\n");
      await backend.host({ files: [picture, scores] });
      // The person said the model takes images (else Rust sends no picture to it).
      await backend.seed(() => ipc.setModelImages("Work", "m", true));
      const attached = await backend.seed(() => ipc.chooseAttachments());
      expect(attached.refused).toEqual([]);
      const refs = attached.kept.map((a) => ({ sha256: a.sha256, name: a.name }));
      await seedRun((onEvent) => ipc.sendMessage(conversation.id, "What is in these?", onEvent, refs));
      const { user } = await renderApp();
      await user.click(items()[0]);
      const files = await screen.findByTestId("message-files");
      expect([...files.querySelectorAll("li")].map((li) => li.textContent?.replace(/\s+/g, " ").trim())).toEqual([
        "Image cat <img src=x onerror=alert(1)>.png 2.0 KB",
        "Text scores.csv 19 B",
      ]);
      expect(files.querySelector("img")).toBeNull();
      expect(screen.getByTestId("message-list").textContent).toContain("What is in these?");
    });
  });

  describe("the header's menu", () => {
    it("holds rename, export, schedule this, auto-approve and delete (delete last, in red), and works from the keyboard", async () => {
      await addConversation("Menu");
      const { user } = await renderApp();
      await user.click(items()[0]);
      const more = await screen.findByTestId("conversation-menu");
      expect(more.getAttribute("aria-label")).toBe("Conversation actions");
      more.focus();
      await user.keyboard("{ArrowDown}");
      const menu = screen.getByRole("menu", { name: "Conversation actions" });
      const entries = [...menu.querySelectorAll<HTMLElement>('[role^="menuitem"]')];
      expect(entries.map((e) => e.dataset.testid)).toEqual(["rename-conversation", "export-markdown", "export-json", "schedule-this", "auto-approve", "delete-conversation"]);
      expect(entries.at(-1)?.classList.contains("danger")).toBe(true);
      expect(document.activeElement).toBe(entries[0]);
      await user.keyboard("{End}");
      expect(document.activeElement).toBe(entries.at(-1));
      await user.keyboard("{Escape}");
      expect(screen.queryByRole("menu")).toBeNull();
      expect(document.activeElement).toBe(more);
      // Renaming from the menu gives the focus back to the menu's button (drawn again after it).
      await user.click(more);
      await user.click(screen.getByTestId("rename-conversation"));
      await user.keyboard("{Escape}");
      await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("conversation-menu")));
    });

    it("shows auto-approve only while it is on, as a warning chip that turns it off", async () => {
      const chat = await addConversation("Trusting");
      await backend.host({ confirm: true });
      const { user } = await renderApp();
      await user.click(items()[0]);
      await screen.findByTestId("conversation-header-title");
      expect(screen.queryByTestId("auto-approve-chip")).toBeNull();
      await user.click(screen.getByTestId("conversation-menu"));
      expect(screen.getByTestId("auto-approve").getAttribute("aria-checked")).toBe("false");
      await user.click(screen.getByTestId("auto-approve"));
      const chip = await screen.findByTestId("auto-approve-chip");
      expect(chip.textContent?.trim()).toBe("Auto-approve on");
      expect(backend.callsTo("set_auto_approve")[0].args).toEqual({ conversationId: chat.id, on: true });
      await user.click(chip);
      await waitFor(() => expect(screen.queryByTestId("auto-approve-chip")).toBeNull());
      expect(backend.callsTo("set_auto_approve")[1].args).toEqual({ conversationId: chat.id, on: false });
    });
  });

  describe("rename", () => {
    it("Enter saves and the header shows the title Rust returned", async () => {
      const draft = await addConversation("Draft");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("conversation-menu"));
      await user.click(screen.getByTestId("rename-conversation"));
      const input = screen.getByTestId("rename-input") as HTMLInputElement;
      expect(input.value).toBe("Draft");
      expect(document.activeElement).toBe(input);
      await user.clear(input);
      await user.type(input, "  Trip plans  {Enter}");
      await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Trip plans"));
      expect(backend.callsTo("rename_conversation")[0].args).toEqual({ id: draft.id, title: "  Trip plans  " });
      await waitFor(() => expect(within(items()[0]).getByTestId("conversation-title").textContent).toBe("Trip plans"));
      expect((await conversations())[0].title).toBe("Trip plans");
    });

    it("Esc cancels without saving", async () => {
      await addConversation("Keep me");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("conversation-menu"));
      await user.click(screen.getByTestId("rename-conversation"));
      await user.type(screen.getByTestId("rename-input"), " changed{Escape}");
      expect(screen.queryByTestId("rename-input")).toBeNull();
      expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Keep me");
      expect(backend.callsTo("rename_conversation")).toHaveLength(0);
    });

    it("shows Rust's title error beside the input", async () => {
      await addConversation("Titled");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("conversation-menu"));
      await user.click(screen.getByTestId("rename-conversation"));
      // Invisible characters only: Rust refuses a title that would leave a blank row.
      await user.clear(screen.getByTestId("rename-input"));
      await user.type(screen.getByTestId("rename-input"), "\u200b\u200b");
      await user.click(screen.getByTestId("rename-save"));
      expect((await screen.findByTestId("error-title")).textContent).toBe("A title cannot be empty.");
      expect(screen.getByTestId("rename-input")).toBeTruthy();
      expect((await conversations())[0].title).toBe("Titled");
    });
  });

  describe("system prompt", () => {
    it("a new conversation starts with Settings' default, shown and edited from its header", async () => {
      const settings = await backend.seed(() => ipc.getSettings());
      const { user } = await renderApp();
      await user.click(screen.getByTestId("new-conversation"));
      await waitFor(() => expect(items()).toHaveLength(1));
      await user.click(await screen.findByTestId("system-prompt-button"));
      const input = (await screen.findByTestId("system-prompt-input")) as HTMLTextAreaElement;
      expect(input.value).toBe(settings.default_system_prompt);
      expect(screen.getByTestId("system-prompt-save")).toHaveProperty("disabled", true);
      expect(screen.queryByTestId("system-prompt-default")).toBeNull();

      await user.clear(input);
      await user.type(input, "Answer in French.{Enter}{Enter}");
      expect(screen.getByTestId("system-prompt-count").textContent).toContain("19 / 32,000");
      await user.click(screen.getByTestId("system-prompt-save"));
      expect(await screen.findByTestId("system-prompt-saved")).toBeTruthy();
      const [{ id }] = await conversations();
      expect(backend.callsTo("set_system_prompt")[0].args).toEqual({ id, systemPrompt: "Answer in French.\n\n" });
      // The box shows what Rust kept (trailing lines trimmed); nothing left to save.
      expect(input.value).toBe("Answer in French.");
      expect(screen.getByTestId("system-prompt-save")).toHaveProperty("disabled", true);

      // Ctrl+Enter saves a cleared prompt; the header says there is none; the default comes back in one click.
      await user.clear(input);
      await user.keyboard("{Control>}{Enter}{/Control}");
      await vi.waitFor(async () => expect((await conversations())[0].system_prompt).toBe(""));
      expect(await screen.findByTestId("system-prompt-none")).toBeTruthy();
      await user.click(screen.getByTestId("system-prompt-default"));
      expect(input.value).toBe(settings.default_system_prompt);
    });

    it("one side panel at a time, Esc closes, another conversation shows its own prompt", async () => {
      const pirate = await addConversation("Pirate");
      await backend.seed(() => ipc.setSystemPrompt(pirate.id, "Talk like a pirate."));
      const plain = await addConversation("Plain");
      await backend.seed(() => ipc.setSystemPrompt(plain.id, ""));
      const { user } = await renderApp();
      await user.click(items().find((i) => i.dataset.id === pirate.id)!);
      await user.click(await screen.findByTestId("tools-button"));
      expect(await screen.findByTestId("tools-panel")).toBeTruthy();
      await user.click(screen.getByTestId("system-prompt-button"));
      expect(screen.queryByTestId("tools-panel")).toBeNull();
      const input = (await screen.findByTestId("system-prompt-input")) as HTMLTextAreaElement;
      expect(input.value).toBe("Talk like a pirate.");
      await user.type(input, " Arr.");

      // Each conversation's page is its own: another one opens with its panels closed.
      await user.click(items().find((i) => i.dataset.id === plain.id)!);
      await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Plain"));
      expect(screen.queryByTestId("system-prompt-panel")).toBeNull();
      await user.click(screen.getByTestId("system-prompt-button"));
      expect(((await screen.findByTestId("system-prompt-input")) as HTMLTextAreaElement).value).toBe("");
      await user.type(screen.getByTestId("system-prompt-input"), "{Escape}");
      expect(screen.queryByTestId("system-prompt-panel")).toBeNull();
      expect(backend.callsTo("set_system_prompt")).toHaveLength(0);
    });

    it("shows Rust's refusal beside the text and keeps the draft", async () => {
      await addConversation("Chat");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("system-prompt-button"));
      const input = (await screen.findByTestId("system-prompt-input")) as HTMLTextAreaElement;
      await user.clear(input);
      await user.click(input);
      const long = "x".repeat(32_001);
      await user.paste(long);
      await user.click(screen.getByTestId("system-prompt-save"));
      expect((await screen.findByTestId("system-prompt-error")).textContent).toBe(
        "A system prompt can be at most 32000 characters long.",
      );
      expect((screen.getByTestId("system-prompt-input") as HTMLTextAreaElement).value).toBe(long);
    });
  });

  describe("delete", () => {
    it("asks in an in-app dialog; Cancel and Esc keep the conversation", async () => {
      await addConversation("Precious");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("conversation-menu"));
      await user.click(screen.getByTestId("delete-conversation"));
      const dialog = screen.getByTestId("confirm-dialog");
      expect(dialog.getAttribute("aria-modal")).toBe("true");
      expect(document.activeElement).toBe(screen.getByTestId("confirm-cancel"));
      await user.click(screen.getByTestId("confirm-cancel"));
      expect(screen.queryByTestId("confirm-dialog")).toBeNull();

      await user.click(screen.getByTestId("conversation-menu"));
      await user.click(screen.getByTestId("delete-conversation"));
      await user.keyboard("{Escape}");
      expect(screen.queryByTestId("confirm-dialog")).toBeNull();
      expect(backend.callsTo("delete_conversation")).toHaveLength(0);
      expect(await conversations()).toHaveLength(1);
    });

    it("keeps Tab inside the dialog", async () => {
      await addConversation("Tabs");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("conversation-menu"));
      await user.click(screen.getByTestId("delete-conversation"));
      const cancel = screen.getByTestId("confirm-cancel");
      const ok = screen.getByTestId("confirm-ok");
      expect(document.activeElement).toBe(cancel);
      await user.tab();
      expect(document.activeElement).toBe(ok);
      await user.tab();
      expect(document.activeElement).toBe(cancel);
      await user.tab({ shift: true });
      expect(document.activeElement).toBe(ok);
    });

    it("deleting the open conversation returns to welcome and the list stays usable", async () => {
      await addConversation("Other");
      await addConversation("Doomed");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("conversation-menu"));
      await user.click(screen.getByTestId("delete-conversation"));
      await user.click(screen.getByTestId("confirm-ok"));
      await waitFor(() => expect(screen.getByTestId("welcome")).toBeTruthy());
      expect(items()).toHaveLength(1);
      // The list changed at once; Rust's delete lands a moment later.
      await vi.waitFor(async () => expect((await conversations()).map((c) => c.title)).toEqual(["Other"]));
      await user.click(items()[0]);
      await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe("Other"));
    });
  });

  describe("bursts", () => {
    it("rapid open, delete, confirm deletes each conversation exactly once and settles on what Rust has", async () => {
      for (let i = 0; i < 8; i++) await addConversation(`Chat ${i}`);
      const { user } = await renderApp();
      // Rust answers slowly, so every click lands while earlier calls are still in flight.
      backend.delay = (cmd) => (cmd === "list_conversations" ? 25 : 15);
      for (let i = 0; i < 5; i++) {
        const next = items()[0];
        await user.click(next);
        // A conversation opens when its messages come (the page shown stays until then).
        await waitFor(() => expect(next.getAttribute("aria-current")).toBe("page"));
        await user.click(screen.getByTestId("conversation-menu"));
        await user.click(screen.getByTestId("delete-conversation"));
        await user.click(screen.getByTestId("confirm-ok"));
      }
      const deleted = backend.callsTo("delete_conversation").map((c) => c.args?.id);
      expect(new Set(deleted).size).toBe(5);
      await vi.waitFor(async () => expect(await conversations()).toHaveLength(3));
      const rust = await conversations();
      expect(rust.some((c) => deleted.includes(c.id))).toBe(false);
      await waitFor(() => expect(items().map((i) => i.dataset.id)).toEqual(rust.map((c) => c.id)));
      expect(screen.queryByTestId("error-toast")).toBeNull();
    });

    it("many quick creates leave one new conversation, the last made, open; the others, unused, are not kept", async () => {
      const { user } = await renderApp();
      // What each create answered, in the order the window asked (Rust may finish them in another).
      const made: Promise<unknown>[] = [];
      vi.mocked(invoke).mockImplementation(((cmd: string, args?: Record<string, unknown>) => {
        const answer = backend.invoke(cmd, args);
        if (cmd === "create_conversation") made.push(answer);
        return answer;
      }) as typeof invoke);
      backend.delay = (cmd) => (cmd === "list_conversations" ? 20 : 5);
      for (let i = 0; i < 10; i++) await user.click(screen.getByTestId("new-conversation"));
      expect(made).toHaveLength(10);
      const last = (await made[9]) as Conversation;
      await waitFor(() => expect(items().map((i) => i.dataset.id)).toEqual([last.id]));
      await waitFor(async () => expect((await conversations()).map((c) => c.id)).toEqual([last.id]));
      await waitFor(() => expect(screen.getByTestId("conversation-header-title")).toBeTruthy());
      const open = items().filter((i) => i.getAttribute("aria-current") === "page");
      expect(open.map((i) => i.dataset.id)).toEqual([last.id]);
      expect(screen.queryByTestId("error-toast")).toBeNull();
    });
  });

  /** Opens the first conversation, asks `text` and allows the call the model makes. */
  async function askAndAllow(user: Awaited<ReturnType<typeof renderApp>>["user"], text = "What time is it?"): Promise<void> {
    await user.click(items()[0]);
    await user.type(await screen.findByTestId("composer-input"), `${text}{Enter}`);
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
  }

  describe("composer", () => {
    it("is disabled with a hint when there is no provider, and the hint opens Providers", async () => {
      await addConversation("Chat");
      const { user } = await renderApp();
      await user.click(items()[0]);
      const input = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
      expect(input.disabled).toBe(true);
      const hint = screen.getByTestId("composer-hint");
      expect(hint.textContent).toContain("Add a provider to start chatting");
      // Until a provider exists, adding one is the composer's main action, in Send's place.
      expect(screen.queryByTestId("composer-send")).toBeNull();
      const add = screen.getByTestId("composer-add-provider");
      expect(add.classList.contains("btn-primary")).toBe(true);
      await user.click(add);
      expect(screen.getByTestId("provider-form")).toBeTruthy();
    });

    it("asks again when a standing approval is not confirmed in Rust's dialog", async () => {
      await addWork({ turns: [{ tools: [{ name: "fault__echo", arguments: { text: "Paris" } }] }, NOON] });
      await backend.addFaultServer();
      await chatWithWork("Chat");
      await backend.host({ confirm: false });
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
      let dialog = await screen.findByTestId("approval-dialog");
      // One click decides: Deny has the focus (the safe choice), Always is inside the ▾.
      expect(document.activeElement).toBe(within(dialog).getByTestId("approval-deny-all"));
      await user.click(within(dialog).getByTestId("approval-more"));
      expect(within(dialog).getByTestId("confirm-elsewhere").textContent).toContain("separate dialog");
      await user.click(within(dialog).getByTestId("approval-allow-always"));
      expect(await screen.findByText(/did not confirm/)).toBeTruthy();
      expect((await backend.asked()).map((a) => a.dialog)).toEqual(["approve_server", "allow"]);
      // Nothing was answered: the same request is shown again, and allowing once goes through.
      dialog = await screen.findByTestId("approval-dialog");
      await user.click(within(dialog).getByTestId("approval-submit"));
      const answered = backend.callsTo("answer_approval");
      expect(answered.map((c) => (c.args?.answers as { decision: string }[])[0].decision)).toEqual(["allow_always", "allow_once"]);
      await waitFor(() => expect(screen.queryByTestId("approval-dialog")).toBeNull());
      await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
      expect(await backend.seed(() => ipc.listToolApprovals())).toEqual([]);
    });

    it("sends, asks about the tool call, streams the answer with its tool card, and shows the same after reopening", async () => {
      const work = await addWork({
        turns: [{ tools: [{ name: "fault__echo", arguments: { text: "2026-11-23T12:00:00" } }] }, NOON],
      });
      await backend.addFaultServer();
      const conversation = await chatWithWork("Chat");
      const { user } = await renderApp();
      await user.click(items()[0]);
      const input = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
      await user.type(input, "What time is it?{Enter}");
      await waitFor(() => expect(input.value).toBe(""));
      expect(backend.callsTo("send_message")[0].args).toMatchObject({ conversationId: conversation.id, text: "What time is it?" });

      // One dialog: the exact arguments, a choice per call.
      const dialog = await screen.findByTestId("approval-dialog");
      expect(within(dialog).getByTestId("approval-arguments").textContent).toContain('"text": "2026-11-23T12:00:00"');
      expect(screen.getByTestId("composer-stop")).toBeTruthy();
      await user.click(within(dialog).getByTestId("approval-submit"));
      expect(backend.callsTo("answer_approval")[0].args).toMatchObject({ answers: [{ call_id: "call_0", decision: "allow_once" }] });

      const list = screen.getByTestId("message-list");
      await waitFor(() => expect(list.querySelector("strong")?.textContent).toBe("noon"));
      expect(list.querySelector("script")).toBeNull();
      const card = within(list).getByTestId("tool-card");
      await waitFor(() => expect(card.dataset.state).toBe("done"));
      // The result is built when the card is opened, and goes when it is closed.
      expect(within(card).queryByTestId("tool-result")).toBeNull();
      await user.click(card.querySelector("summary")!);
      expect((await within(card).findByTestId("tool-result")).textContent).toContain("2026-11-23T12:00:00");
      await user.click(card.querySelector("summary")!);
      await waitFor(() => expect(within(card).queryByTestId("tool-result")).toBeNull());
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
      const live = list.innerHTML;
      // The model read the call's result before answering.
      const second = (await backend.received(work))[1] as { messages: { role: string; content: unknown }[] };
      expect(JSON.stringify(second.messages.filter((m) => m.role === "tool"))).toContain("2026-11-23T12:00:00");

      // Reopened from what was saved, it looks the same.
      await user.click(screen.getByTestId("new-conversation"));
      await waitFor(() => expect(items()).toHaveLength(2));
      await user.click(items().find((i) => i.dataset.id === conversation.id)!);
      await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
      await waitFor(() => expect(screen.getByTestId("message-list").innerHTML).toBe(live));
    });

    it("shows a running call's progress as the server reports it, and drops it once the call is done", async () => {
      // Two steps a second apart: 0 of 2, then 1 of 2 (50%) for a second before the end.
      await addWork({ turns: [{ tools: [{ name: "fault__progress", arguments: { seconds: 2, every: 1 } }] }, NOON] });
      await backend.addFaultServer();
      await chatWithWork("Chat");
      const { user } = await renderApp();
      await askAndAllow(user);
      await waitFor(() => expect(screen.getByTestId("tool-progress").textContent).toContain("50%"), { timeout: 5_000 });
      expect(screen.getByTestId("tool-card").dataset.state).toBe("running");
      await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("done"), { timeout: 5_000 });
      expect(screen.queryByTestId("tool-progress")).toBeNull();
    });

    it("a progress message from a server is text, never markup", async () => {
      // Two steps a second apart, each saying the message: 1 of 2 (50%) for a second before the end.
      const message = "Asking the clock <b>twice</b>";
      await addWork({ turns: [{ tools: [{ name: "fault__progress", arguments: { seconds: 2, every: 1, message } }] }, NOON] });
      await backend.addFaultServer();
      await chatWithWork("Chat");
      const { user } = await renderApp();
      await askAndAllow(user);
      await waitFor(() => expect(screen.getByTestId("tool-progress").textContent).toContain("50%"), { timeout: 5_000 });
      const progress = screen.getByTestId("tool-progress");
      expect(progress.textContent).toContain(message);
      expect(progress.querySelector("b")).toBeNull();
      await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("done"), { timeout: 5_000 });
    });

    it("a failed call has Retry, which runs it again in an answer of its own, and the view survives reopening", async () => {
      // The peer's flaky tool fails the first time it is called with a key, and works after.
      await addWork({
        turns: [
          { tools: [{ name: "fault__flaky", arguments: { key: "paris" } }] },
          { answer: ["I could not look it up."] },
          NOON,
        ],
      });
      await backend.addFaultServer();
      const conversation = await chatWithWork("Chat");
      const { user } = await renderApp();
      await askAndAllow(user);
      const list = screen.getByTestId("message-list");
      await waitFor(() => expect(within(list).getByTestId("tool-card").dataset.state).toBe("error"));
      // Not while the run goes on; once it ended, Retry is there.
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
      const failed = within(list).getByTestId("tool-card");
      await user.click(within(failed).getByTestId("retry-call"));
      expect(failed.querySelector("details")!.hasAttribute("open")).toBe(false);
      const [answer] = (await messagesOf(conversation)).filter((m) => m.role === "assistant");
      expect(backend.callsTo("retry_tool_call")[0].args).toMatchObject({ conversationId: conversation.id, messageId: answer.id, callId: "call_0" });

      // The retry is asked about like any call, then runs in an answer of the person's own.
      await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
      await waitFor(() => expect(within(list).getAllByTestId("tool-card")).toHaveLength(2));
      const retried = within(list).getAllByTestId("tool-card")[1];
      await waitFor(() => expect(retried.dataset.state).toBe("done"));
      expect(retried.textContent).toContain("Retry");
      expect(list.textContent).toContain("Retried by you");
      await waitFor(() => expect(list.querySelector("strong")?.textContent).toBe("noon"));
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
      // The failed card's Retry has done its job; the retry's card never had one.
      expect(within(list).queryAllByTestId("retry-call")).toHaveLength(0);
      const live = list.innerHTML;

      await user.click(screen.getByTestId("new-conversation"));
      await waitFor(() => expect(items()).toHaveLength(2));
      await user.click(items().find((i) => i.dataset.id === conversation.id)!);
      await waitFor(() => expect(screen.getByTestId("message-list").querySelectorAll("[data-testid=tool-card]")).toHaveLength(2));
      await waitFor(() => expect(screen.getByTestId("message-list").innerHTML).toBe(live));
    });

    it("a retry that fails again ends the run with the reason, and the failed call keeps its Retry", async () => {
      // The peer's crash tool kills it mid-call, every time it is called.
      await addWork({
        turns: [{ tools: [{ name: "fault__crash", arguments: {} }] }, { answer: ["I could not look it up."] }],
      });
      await backend.addFaultServer();
      await chatWithWork("Chat");
      const { user } = await renderApp();
      await askAndAllow(user);
      const list = screen.getByTestId("message-list");
      await waitFor(() => expect(within(list).getByTestId("tool-card").dataset.state).toBe("error"));
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
      // Rust starts the crashed server again after a pause; until then a Retry is refused, saying
      // the tool is not offered now.
      await backend.serverIs("fault", "running");
      await user.click(within(within(list).getByTestId("tool-card")).getByTestId("retry-call"));
      await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
      await waitFor(() => expect(screen.getByTestId("run-notice").textContent).toContain("failed again"));
      expect(screen.getByTestId("run-notice").textContent).toContain("about to crash on purpose");
      const cards = within(list).getAllByTestId("tool-card");
      expect(cards.map((c) => c.dataset.state)).toEqual(["error", "error"]);
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
      // No answer from the model after the failed retry; both failed cards can be tried again.
      expect(list.textContent?.split("I could not look it up.")).toHaveLength(2);
      expect(within(list).getAllByTestId("retry-call")).toHaveLength(2);
      await user.click(within(cards[1]).getByTestId("retry-call"));
      const retry = backend.callsTo("retry_tool_call")[1].args;
      expect(retry).toMatchObject({ callId: cards[1].dataset.callId });
    });

    it("with descriptions on, a call's card shows the model's words for it, as text, live and reopened", async () => {
      // The call takes a second, so the model's words for it (its own small request) come in time.
      await addWork({
        turns: [
          { tools: [{ name: "fault__slow", arguments: { seconds: 1 } }] },
          { answer: ["Looking up the <i>time</i> in Paris"] },
          NOON,
        ],
      });
      await backend.addFaultServer();
      const conversation = await chatWithWork("Chat");
      const settings = await backend.seed(() => ipc.getSettings());
      await backend.seed(() => ipc.updateSettings({ ...settings, describe_calls: true }));
      const { user } = await renderApp();
      await askAndAllow(user);
      const described = await screen.findByTestId("tool-description", {}, { timeout: 5_000 });
      expect(described.textContent).toBe("Looking up the <i>time</i> in Paris");
      expect(described.querySelector("i")).toBeNull();
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy(), { timeout: 5_000 });
      const live = screen.getByTestId("message-list").innerHTML;
      await user.click(screen.getByTestId("new-conversation"));
      await waitFor(() => expect(items()).toHaveLength(2));
      await user.click(items().find((i) => i.dataset.id === conversation.id)!);
      await waitFor(() => expect(screen.getByTestId("tool-description").textContent).toBe("Looking up the <i>time</i> in Paris"));
      await waitFor(() => expect(screen.getByTestId("message-list").innerHTML).toBe(live));
    });

    it("a denied call shows as denied with the reason the model was given", async () => {
      const work = await addWork(echoThenAnswer("Paris", ["I could not look it up."]));
      await backend.addFaultServer();
      await chatWithWork("Chat");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
      const dialog = await screen.findByTestId("approval-dialog");
      await user.click(within(dialog).getByText("Deny with a reason"));
      await user.type(within(dialog).getByTestId("deny-reason"), "not now");
      await user.click(within(dialog).getByTestId("approval-deny-all"));
      expect(backend.callsTo("answer_approval")[0].args).toMatchObject({ answers: [{ decision: "deny", reason: "not now" }] });
      const card = await screen.findByTestId("tool-card");
      await waitFor(() => expect(card.dataset.state).toBe("denied"));
      await user.click(card.querySelector("summary")!);
      await waitFor(() => expect(card.textContent).toContain("Their reason: not now"));
      // What the model was told is what the card says.
      await vi.waitFor(async () => expect(await backend.received(work)).toHaveLength(2));
      const told = (await backend.received(work))[1] as { messages: { role: string; content: unknown }[] };
      expect(JSON.stringify(told.messages.filter((m) => m.role === "tool"))).toContain("Their reason: not now");
    });
  });

  describe("tools panel", () => {
    it("shows a tool's hidden characters by name, and a tool its server lists twice beside the one offered", async () => {
      const folder = tempFolder();
      const payloads = join(folder, "payloads.json");
      writeFileSync(payloads, JSON.stringify({ payloads: ["Read\u202efdp.exe", "Reads.\u{e0049}\u{e0067}"] }));
      await backend.addServer("fs", peer("raw_server.py", "--describe", payloads));
      // echo, echo again (described otherwise), and a tool whose name holds a zero-width space.
      await backend.addServer("twice", peer("raw_server.py", "--odd-names"));
      const conversation = await addConversation("Chat");
      const tools = await backend.seed(() => ipc.listConversationTools(conversation.id));
      const held = tools.filter((t) => t.held_back);
      expect(held.map((t) => t.server)).toEqual(["twice", "twice"]);
      expect(held[0].held_reason).toContain("another tool by this name");
      expect(held[1].held_reason).toContain("U+200B");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("tools-button"));
      const panel = await screen.findByTestId("tools-panel");
      await waitFor(() => expect(panel.textContent).toContain("Read⟨U+202E⟩fdp.exe"));
      expect(panel.textContent).toContain("Reads.⟨U+E0049⟩⟨U+E0067⟩");
      expect(panel.textContent).not.toContain("\u202e");
      expect(within(panel).getAllByTestId("tools-held-reason").map((r) => r.textContent)).toEqual(held.map((t) => t.held_reason));
    });

    it("switches servers and tools, counts the tokens offered, and makes the set the default for new conversations", async () => {
      const folder = tempFolder();
      const payloads = join(folder, "payloads.json");
      writeFileSync(payloads, JSON.stringify({ payloads: ['<img src=x onerror="alert(1)"> now does things', "convert does things"] }));
      // "fs": echo, and two held back (echo listed again; a name with a hidden character).
      await backend.addServer("fs", peer("raw_server.py", "--odd-names"));
      // "time": t0 and t1, described with the payloads.
      await backend.addServer("time", peer("raw_server.py", "--describe", payloads));
      const conversation = await addConversation("Chat");
      const catalogue = await backend.seed(() => ipc.listConversationTools(conversation.id));
      expect(catalogue.filter((t) => !t.held_back).map((t) => `${t.server}/${t.tool}`)).toEqual(["fs/echo", "time/t0", "time/t1"]);
      expect(catalogue.filter((t) => t.held_back).map((t) => t.server)).toEqual(["fs", "fs"]);
      const tokens = (offered: (t: (typeof catalogue)[number]) => boolean) =>
        catalogue.filter((t) => !t.held_back && offered(t)).reduce((sum, t) => sum + t.estimated_tokens, 0);
      const { user } = await renderApp();
      await user.click(items()[0]);
      await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe("3/5"));
      await user.click(screen.getByTestId("tools-button"));
      const panel = await screen.findByTestId("tools-panel");
      expect(within(panel).getByTestId("tools-summary").textContent).toContain(`3 of 5 tools offered · about ${tokens(() => true)} tokens`);
      // Descriptions come from servers: text, never markup.
      expect(panel.querySelector("img")).toBeNull();
      expect(panel.textContent).toContain('<img src=x onerror="alert(1)">');
      // A held-back tool cannot be switched on here.
      const group = (server: string) => within(panel).getAllByTestId("tools-server").find((g) => g.dataset.server === server)!;
      const fsSwitches = within(group("fs")).getAllByTestId("tools-tool-switch") as HTMLInputElement[];
      expect(fsSwitches.map((s) => s.disabled).sort()).toEqual([false, true, true]);
      for (const t of catalogue.filter((t) => t.held_back)) expect(panel.textContent).toContain(t.held_reason);

      const t1 = within(group("time")).getAllByTestId("tools-tool-switch").find((s) => s.dataset.tool === "t1")!;
      await user.click(t1);
      expect(backend.callsTo("set_conversation_tool")[0].args).toEqual({ conversationId: conversation.id, server: "time", tool: "t1", enabled: false });
      await waitFor(() =>
        expect(within(panel).getByTestId("tools-summary").textContent).toContain(
          `2 of 5 tools offered · about ${tokens((t) => t.tool !== "t1")} tokens`,
        ),
      );
      const timeSwitch = within(group("time")).getByTestId("tools-server-switch") as HTMLInputElement;
      expect(timeSwitch.indeterminate).toBe(true);

      // The server's switch sets all its tools.
      await user.click(timeSwitch);
      expect(backend.callsTo("set_conversation_tool")[1].args).toMatchObject({ server: "time", tool: null, enabled: true });
      await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe("3/5"));
      await user.click(timeSwitch);
      await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe("1/5"));

      await user.click(within(panel).getByTestId("tools-make-default"));
      expect(await within(panel).findByTestId("tools-default-saved")).toBeTruthy();
      await user.click(screen.getByTestId("new-conversation"));
      await waitFor(() => expect(items()).toHaveLength(2));
      await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe("1/5"));
      const [fresh] = await conversations();
      const offered = (await backend.seed(() => ipc.listConversationTools(fresh.id))).filter((t) => t.enabled && !t.held_back);
      expect(offered.map((t) => `${t.server}/${t.tool}`)).toEqual(["fs/echo"]);
    });

    it("says when no server is running", async () => {
      await addConversation("Chat");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("tools-button"));
      expect((await screen.findByTestId("tools-empty")).textContent).toContain("No server is running");
      await user.click(screen.getByTestId("tools-close"));
      expect(screen.queryByTestId("tools-panel")).toBeNull();
    });
  });

  describe("failures", () => {
    it("shows a command error in the toast without breaking the window", async () => {
      // A full disk: no rule the window can reach produces it.
      backend.failNext("create_conversation", { kind: "database", message: "disk full", field: null });
      const { user } = await renderApp();
      await user.click(screen.getByTestId("new-conversation"));
      expect((await screen.findByTestId("error-toast")).textContent).toContain("disk full");
      expect(screen.getByTestId("welcome")).toBeTruthy();
      expect(await conversations()).toHaveLength(0);
    });

    it("shows the database error page instead of the normal UI", async () => {
      // The app opened again over a database file that is not SQLite.
      await backend.reopen({ databaseBroken: true });
      const status = await backend.seed(() => ipc.appStatus());
      await renderApp();
      const page = await screen.findByTestId("database-error");
      expect(page.textContent).toContain("Switchboard can't open its database");
      expect(status.database_error?.message).toContain("(file is not a database)");
      expect(page.querySelector(".message")?.textContent).toBe(status.database_error?.message);
      expect(page.querySelector("code")?.textContent).toBe(status.home);
      expect(page.textContent).toContain("The database file was left untouched: nothing was changed, moved or deleted.");
      expect(screen.queryByTestId("new-conversation")).toBeNull();
    });

    it("offers the damaged database's folder, a fresh start with the file kept, and Quit", async () => {
      await backend.reopen({ databaseBroken: true });
      const { user } = await renderApp();
      const page = await screen.findByTestId("database-error");
      const names = [...page.querySelectorAll("button")].map((b) => b.textContent?.trim());
      expect(names).toEqual(["Show in folder", "Start with a fresh database", "Quit"]);

      await user.click(within(page).getByRole("button", { name: "Show in folder" }));
      await waitFor(async () => expect((await backend.asked()).map((a) => a.dialog)).toContain("show_folder"));
      const shown = (await backend.asked()).find((a) => a.dialog === "show_folder")!;
      expect(shown.title.endsWith("data")).toBe(true);

      await user.click(within(page).getByTestId("database-fresh"));
      const done = await within(page).findByRole("status");
      expect(done.textContent).toMatch(/Kept the damaged file as .*switchboard\.db\.damaged-\d{8}-\d{6}/);
      await waitFor(async () => expect((await backend.asked()).map((a) => a.dialog)).toContain("restart"));

      // Started again: a fresh database, and the damaged one never set aside twice.
      await backend.reopen({});
      const status = await backend.seed(() => ipc.appStatus());
      expect(status.database_error).toBeNull();
      await backend.seed(() => ipc.createConversation("After the fresh start"));

      await user.click(within(page).getByRole("button", { name: "Quit" }));
      await waitFor(async () => expect((await backend.asked()).map((a) => a.dialog)).toContain("quit"));
    });

    it("never sets a working database aside", async () => {
      const err = await backend.seed(() => ipc.startFreshDatabase()).catch((e: unknown) => e);
      expect(toIpcError(err).kind).toBe("conflict");
      expect((await backend.asked()).map((a) => a.dialog)).not.toContain("restart");
    });
  });

  describe("search, export, import and shortcuts", () => {
    it("Ctrl+K searches every conversation, marks the match, and Enter opens its conversation", async () => {
      await addWork({ answer: ["The ferry to Hvar leaves at nine."] });
      const trip = await chatWithWork("Trip planning");
      await seedAsk(trip, "When does the ferry to Hvar leave?");
      await addConversation("Groceries");
      const { user } = await renderApp();
      await user.keyboard("{Control>}k{/Control}");
      const input = await screen.findByTestId("search-input");
      expect(document.activeElement).toBe(input);
      await user.type(input, "ferry");
      await waitFor(() => expect(screen.getAllByTestId("search-hit")).toHaveLength(2));
      const hits = screen.getAllByTestId("search-hit");
      expect(hits[0].textContent).toContain("Trip planning");
      expect(within(hits[0]).getByTestId("search-snippet").querySelector("mark")!.textContent?.toLowerCase()).toBe("ferry");
      // Down moves to the next hit; Enter opens it (the reading back to it: chat-sessions.test.ts, e2e).
      await user.keyboard("{ArrowDown}");
      expect(hits[1].getAttribute("aria-selected")).toBe("true");
      await user.keyboard("{Enter}");
      expect(screen.queryByTestId("search-dialog")).toBeNull();
      await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent).toContain("Trip planning"));
      expect(await screen.findByText("When does the ferry to Hvar leave?")).toBeTruthy();
    });

    it("finds an answer of a version not shown, says so, and opening it shows that version", async () => {
      await addWork({ turns: [{ answer: ["The slow ferry at nine."] }, { answer: ["The fast catamaran at noon."] }] });
      const trip = await chatWithWork("Trip planning");
      await seedAsk(trip, "Which ferry to Hvar?");
      // The first answer is asked for again: it is kept as the other version of the point after the question.
      const [, first] = await messagesOf(trip);
      await seedRun((onEvent) => ipc.regenerate(trip.id, first.id, onEvent));
      expect((await messagesOf(trip)).map((m) => m.content)).toEqual(["Which ferry to Hvar?", "The fast catamaran at noon."]);
      const { user } = await renderApp();
      await user.keyboard("{Control>}k{/Control}");
      await user.type(await screen.findByTestId("search-input"), "slow ferry");
      await waitFor(() => expect(screen.getAllByTestId("search-hit")).toHaveLength(1));
      const [hit] = screen.getAllByTestId("search-hit");
      expect(hit.textContent).toContain("Assistant, another version");
      await user.click(hit);
      expect(await screen.findByText("The slow ferry at nine.")).toBeTruthy();
      expect(screen.queryByText("The fast catamaran at noon.")).toBeNull();
      expect(screen.getByTestId("branch-switcher").textContent).toContain("Version 1 of 2");
      expect(backend.callsTo("reveal_message")[0].args).toEqual({ id: trip.id, messageId: first.id });
    });

    it("says when nothing matches, and Esc closes the search", async () => {
      await addConversation("Groceries");
      const { user } = await renderApp();
      await user.click(screen.getByTestId("open-search"));
      await user.type(await screen.findByTestId("search-input"), "zebra");
      expect((await screen.findByTestId("search-empty")).textContent).toContain("Nothing matches “zebra”");
      await user.keyboard("{Escape}");
      expect(screen.queryByTestId("search-dialog")).toBeNull();
    });

    it("exports as Markdown or JSON through the save dialog, and imports a file as a new, open conversation", async () => {
      await addWork({ answer: ["Go by ferry."] });
      const c = await chatWithWork("Plans");
      await seedAsk(c, "How do we get to Hvar?");
      const folder = tempFolder();
      // The save dialog picks the folder: the file takes the name Rust suggested.
      await backend.host({ file: folder });
      const { user } = await renderApp();
      await user.click(items()[0]);
      await user.click(await screen.findByTestId("conversation-menu"));
      await user.click(screen.getByTestId("export-json"));
      const saved = join(folder, "Plans.json");
      expect((await screen.findByTestId("export-saved")).textContent).toBe(`Saved to ${saved}`);
      expect(backend.callsTo("export_conversation")[0].args).toEqual({ id: c.id, format: "json" });
      expect(screen.queryByTestId("export-menu")).toBeNull();

      await backend.host({ file: saved });
      await user.click(screen.getByTestId("import-conversation"));
      await waitFor(() => expect(items()).toHaveLength(2));
      const imported = (await conversations()).find((x) => x.id !== c.id)!;
      await waitFor(() => expect(screen.getByTestId("conversation-header-title").textContent?.trim()).toBe(imported.title));
      expect(imported.title).toContain("Plans");
      await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Go by ferry."));
      expect(screen.getByTestId("message-list").textContent).toContain("How do we get to Hvar?");
    });

    it("Ctrl+/ shows the shortcuts and Esc closes them", async () => {
      const { user } = await renderApp();
      await user.keyboard("{Control>}/{/Control}");
      const sheet = await screen.findByTestId("shortcuts-sheet");
      expect(sheet.textContent).toMatch(/Search every conversation/);
      expect(sheet.textContent).toMatch(/Copy the last answer/);
      await user.keyboard("{Escape}");
      expect(screen.queryByTestId("shortcuts-sheet")).toBeNull();
    });
  });

  describe("working with messages", () => {
    it("deletes a question and its answer after asking, and keeps the rest", async () => {
      await addWork({ turns: [{ answer: ["first answer"] }, { answer: ["second answer"] }] });
      const c = await chatWithWork("Pairs");
      await seedAsk(c, "first question");
      await seedAsk(c, "second question");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await screen.findByText("second answer");
      const deletes = screen.getAllByTestId("delete-turn");
      expect(deletes).toHaveLength(2);
      await user.click(deletes[0]);
      await user.click(await screen.findByText("Cancel"));
      expect(screen.getByText("first answer")).toBeTruthy();
      await user.click(screen.getAllByTestId("delete-turn")[0]);
      await user.click(within(await screen.findByTestId("confirm-dialog")).getByText("Delete"));
      await waitFor(() => expect(screen.queryByText("first answer")).toBeNull());
      expect(screen.queryByText("first question")).toBeNull();
      expect(screen.getByText("second answer")).toBeTruthy();
      expect((await messagesOf(c)).map((m) => m.content)).toEqual(["second question", "second answer"]);
    });
  });

  describe("branches", () => {
    it("edits a sent message (Up in an empty composer), keeps the old branch, and switches with ‹ ›", async () => {
      await addWork({
        turns: [{ answer: ["It is noon in Paris."] }, { tools: [{ name: "fault__echo", arguments: { text: "now" } }] }, NOON],
      });
      await backend.addFaultServer();
      const c = await chatWithWork("Branches");
      await seedAsk(c, "What time is it in Paris?");
      const { user } = await renderApp();
      await user.click(items()[0]);
      await screen.findByText("It is noon in Paris.");
      // Up in the empty composer edits the last message of yours.
      await user.click(await screen.findByTestId("composer-input"));
      await user.keyboard("{ArrowUp}");
      const box = (await screen.findByTestId("edit-input")) as HTMLTextAreaElement;
      expect(box.value).toBe("What time is it in Paris?");
      // Esc leaves it as it was.
      await user.keyboard("{Escape}");
      expect(screen.queryByTestId("edit-input")).toBeNull();
      await user.click(screen.getByTestId("edit-message"));
      const again = (await screen.findByTestId("edit-input")) as HTMLTextAreaElement;
      await user.clear(again);
      await user.type(again, "What time is it?{Enter}");
      await waitFor(() => expect(screen.queryByText("It is noon in Paris.")).toBeNull());
      const approval = await screen.findByTestId("approval-dialog");
      await user.click(within(approval).getByTestId("approval-submit"));
      await waitFor(() => expect(screen.getByTestId("branch-position").textContent).toBe("Version 2 of 2"));
      expect(backend.callsTo("edit_message")[0].args).toMatchObject({ conversationId: c.id, text: "What time is it?" });
      expect(screen.queryByText("What time is it in Paris?")).toBeNull();
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());

      await user.click(screen.getByLabelText("Previous version"));
      expect(await screen.findByText("It is noon in Paris.")).toBeTruthy();
      expect(screen.getByTestId("branch-position").textContent).toBe("Version 1 of 2");
      expect(screen.getByLabelText("Previous version")).toHaveProperty("disabled", true);
      await user.click(screen.getByLabelText("Next version"));
      await waitFor(() => expect(screen.queryByText("It is noon in Paris.")).toBeNull());
      expect(screen.getByTestId("branch-position").textContent).toBe("Version 2 of 2");
    });
  });

  // A remote server that wants OAuth (tests/peers/raw_server.py over HTTP, `--oauth -
  // --step-up`): signed in at first without the scope its `write` needs, so a call to it is
  // refused (403, a step-up) and Rust marks it `needs_sign_in`. The scripted browser follows the
  // sign-in page back to the core, so signing in again goes through for real.
  describe("a server that wants a sign-in", () => {
    /** The server "time", signed in and running with its tools; Work's model calls its `write`. */
    async function signedInTime(): Promise<Conversation> {
      await addWork({
        turns: [{ tools: [{ name: "time__write", arguments: { text: "noon" } }] }, { answer: ["I could not write it."] }, NOON],
      });
      const url = await httpPeer("--oauth", "-", "--step-up");
      await backend.host({ browser: true });
      await backend.seed(() => ipc.addMcpServer("time", null, url));
      await backend.serverIs("time", "needs_sign_in");
      await backend.seed(() => ipc.signInMcpServer("time"));
      await backend.serverIs("time", "running");
      return chatWithWork("Chat");
    }

    /** The sign-in pages Rust had the browser open. */
    async function pagesOpened(): Promise<string[]> {
      return (await backend.asked()).filter((a) => a.dialog === "open_url").map((a) => a.title);
    }

    it("a call refused for want of a sign-in offers one in its card; signed in, the call runs again once", async () => {
      const conversation = await signedInTime();
      const { user, stores } = await renderApp();
      await askAndAllow(user);
      const list = screen.getByTestId("message-list");
      await waitFor(() => expect(within(list).getByTestId("tool-card").dataset.state).toBe("error"));
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
      const failed = within(list).getByTestId("tool-card");
      await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("needs_sign_in"));
      expect(within(failed).getByTestId("tool-card-sign-in-why").textContent).toContain("“time” needs you to sign in");
      expect(within(failed).getByTestId("retry-call")).toBeTruthy();
      expect(await pagesOpened()).toHaveLength(1);

      await user.click(within(failed).getByTestId("tool-card-sign-in"));
      // Signed in (this time for the scope `write` needs) and the server runs again: the call is
      // run again, asked about like any call.
      const dialog = await screen.findByTestId("approval-dialog");
      expect(backend.callsTo("sign_in_mcp_server")).toHaveLength(1);
      const opened = await pagesOpened();
      expect(opened).toHaveLength(2);
      expect(new URL(opened[1]).searchParams.get("scope")).toBe("files:read files:write");
      expect(stores.servers.stateOf("time")?.state).toBe("running");
      const [answer] = (await messagesOf(conversation)).filter((m) => m.role === "assistant");
      expect(backend.callsTo("retry_tool_call")).toHaveLength(1);
      expect(backend.callsTo("retry_tool_call")[0].args).toMatchObject({ conversationId: conversation.id, messageId: answer.id, callId: "call_0" });
      await user.click(within(dialog).getByTestId("approval-submit"));
      await waitFor(() => expect(within(list).getAllByTestId("tool-card")).toHaveLength(2));
      await waitFor(() => expect(within(list).getAllByTestId("tool-card")[1].dataset.state).toBe("done"));
      // The token now has the scope: the server did the write.
      await waitFor(async () =>
        expect((await messagesOf(conversation)).filter((m) => m.role === "tool").map((m) => m.content)).toContain("wrote noon"),
      );
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
      expect(within(list).queryByTestId("tool-card-sign-in")).toBeNull();
      expect(within(list).queryAllByTestId("retry-call")).toHaveLength(0);
      expect(backend.callsTo("retry_tool_call")).toHaveLength(1);
    });

    it("a refused sign-in says why in the card and runs nothing; signed in elsewhere, the offer goes and nothing runs", async () => {
      await signedInTime();
      const { user, stores } = await renderApp();
      await askAndAllow(user);
      const list = screen.getByTestId("message-list");
      await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
      const failed = within(list).getByTestId("tool-card");
      await waitFor(() => expect(within(failed).getByTestId("tool-card-sign-in")).toBeTruthy());

      // The person says no at Rust's "open your browser?" dialog.
      await backend.host({ confirm: false });
      await user.click(within(failed).getByTestId("tool-card-sign-in"));
      expect((await within(failed).findByTestId("tool-card-sign-in-error")).textContent).toBe(
        "Signing in to “time” failed: the sign-in was cancelled: its page was not opened",
      );
      expect((within(failed).getByTestId("tool-card-sign-in") as HTMLButtonElement).disabled).toBe(false);
      expect(await pagesOpened()).toHaveLength(1);

      // The Servers page's sign-in: the card's offer goes with the server's need, and its call waits for Retry.
      await backend.host({ confirm: true });
      await stores.servers.signIn("time");
      await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("running"));
      await waitFor(() => expect(within(failed).queryByTestId("tool-card-sign-in")).toBeNull());
      expect(within(failed).queryByTestId("tool-card-sign-in-error")).toBeNull();
      expect(screen.queryByTestId("approval-dialog")).toBeNull();
      expect(backend.callsTo("retry_tool_call")).toHaveLength(0);
      expect(within(failed).getByTestId("retry-call")).toBeTruthy();
      expect(await pagesOpened()).toHaveLength(2);
    });
  });
});
