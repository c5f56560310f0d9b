// A conversation's answer outlives the page that shows it: leaving for Settings mid-run and
// coming back, a run ending while the person is elsewhere, and a reloaded window attaching to
// the run under way again. Against the real core: a provider at a scripted model server that
// calls the fault peer's echo (a real MCP server), its answer held until the test releases it.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanup, screen, waitFor, within } from "@testing-library/svelte";
import { installRealBackend, type RealBackend, type Turn } from "./real-backend";
import { renderApp } from "./render-app";
import * as ipc from "../src/lib/ipc";
import { ChatSession } from "../src/chat/session.svelte";
import { ChatSessions, DRAFT_SAVE_MS } from "../src/chat/chat-sessions.svelte";
import type { RunEvent } from "../src/lib/bindings";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
  sessionStorage.clear();
});

function items(): HTMLElement[] {
  return screen.queryAllByTestId("conversation-item");
}

/** The model's answer after the clock's call: "It is **noon**", held before its end when `hold`. */
function clockTurns(hold = false): Turn[] {
  return [{ tools: [{ name: "fault__echo", arguments: { text: "noon" } }] }, { answer: ["It is **no", "on**"], hold }];
}

/** "Chat", answered by Work's model as `turns` say, with the fault peer's tools; Work's address. */
async function chatWith(turns: Turn[], faultServer = true): Promise<{ id: string; address: string }> {
  const address = await backend.addProvider("Work", { models: [{ id: "m" }], turns });
  if (faultServer) await backend.addFaultServer();
  const c = await backend.seed(() => ipc.createConversation("Chat"));
  await backend.seed(() => ipc.setConversationModel(c.id, "Work", "m"));
  return { id: c.id, address };
}

/** The answer's text once its run ended: "It is noon". */
function answerStrong(): string | null | undefined {
  return screen.getByTestId("message-list").querySelector("strong")?.textContent;
}

/**
 * A conversation `title` imported (Rust's own import, from a file the open dialog picks) holding
 * `turns` questions, each answered after one call of time · Now whose result is `result`.
 */
async function longChat(title: string, turns: number, result = "ok"): Promise<string> {
  const messages: Record<string, unknown>[] = [];
  const tool_runs: Record<string, unknown>[] = [];
  const message = (id: string, role: string, content: string, more: Record<string, unknown> = {}) => ({
    id, role, content, created_at: 1_700_000_000_000 + messages.length, status: "complete", ...more,
  });
  for (let t = 0; t < turns; t++) {
    messages.push(message(`u${t}`, "user", `question ${t}`));
    messages.push(message(`a${t}`, "assistant", "", { tool_calls: [{ id: "c", name: "time__now", arguments: "{}" }], finish_reason: "tool_calls" }));
    messages.push(message(`t${t}`, "tool", result, { tool_call_id: "c", name: "time__now" }));
    messages.push(message(`b${t}`, "assistant", `answer ${t}`, { finish_reason: "stop" }));
    tool_runs.push({
      message_id: `a${t}`, call_id: "c", server: "time", tool: "now", display_name: "time · Now", arguments: "{}",
      decision: "allowed", decision_scope: "once", started_at: 1, finished_at: 2, is_error: false, result,
    });
  }
  return importChat(title, messages, tool_runs);
}

/** A conversation `title` imported with `messages` (and `tool_runs`) in the export's format. */
async function importChat(title: string, messages: Record<string, unknown>[], tool_runs: Record<string, unknown>[] = []): Promise<string> {
  const file = {
    format: "switchboard.conversation", version: 2, exported_at: 1_700_000_000_000,
    conversation: { title, created_at: 1_700_000_000_000, updated_at: 1_700_000_000_000, provider: null, model: null, system_prompt: "" },
    messages, tool_runs,
  };
  const path = join(mkdtempSync(join(tmpdir(), "chat-sessions-")), "chat.json");
  writeFileSync(path, JSON.stringify(file));
  await backend.host({ file: path });
  const imported = await backend.seed(() => ipc.importConversation());
  return imported!.id;
}

/** A conversation imported with `texts`, the person's and the model's in turn. */
function chatOf(title: string, texts: string[]): Promise<string> {
  return importChat(
    title,
    texts.map((text, i) => ({
      id: `m${i}`, role: i % 2 === 0 ? "user" : "assistant", content: text, created_at: 1_700_000_000_000 + i, status: "complete",
      finish_reason: i % 2 === 0 ? null : "stop",
    })),
  );
}

/** The draft Rust keeps for conversation `id`. (Read as the window reads, not through `seed`:
 *  while a seed runs nothing is recorded, and the window's own saves would go unseen.) */
async function keptDraft(id: string) {
  return (await ipc.getConversation(id)).draft;
}

describe("a running answer and the pages around it", { timeout: 30_000 }, () => {
  it("keeps its question, its Stop and its live answer while the person visits Settings, and its end does not pull the window back", async () => {
    const { address } = await chatWith(clockTurns(true));
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
    // The call done and the answer coming, its end held by the model.
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("done"));
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("It is"));
    expect(screen.getByTestId("composer-stop")).toBeTruthy();

    // Away again; the run ends while Settings is open, and Settings stays open.
    await user.click(screen.getByTestId("nav-settings"));
    const lists = backend.callsTo("list_conversations").length;
    await backend.release(address);
    await waitFor(() => expect(backend.callsTo("list_conversations").length).toBeGreaterThan(lists));
    expect(app.page.name).toBe("settings");
    expect(screen.queryByTestId("message-list")).toBeNull();

    // Back: the whole answer, as it ended, with no second fetch of the conversation after it.
    const fetches = backend.callsTo("get_conversation").length;
    await user.click(items()[0]);
    await waitFor(() => expect(answerStrong()).toBe("noon"));
    expect(screen.getByTestId("tool-card").dataset.state).toBe("done");
    expect(screen.getByTestId("composer-send")).toBeTruthy();
    expect(backend.callsTo("get_conversation").length).toBe(fetches + 1);
  });

  it("a reloaded window opens the same conversation, is given the run under way again, and sees it finish", async () => {
    await chatWith(clockTurns());
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
    await waitFor(() => expect(answerStrong()).toBe("noon"));
    expect(screen.getAllByTestId("tool-card")).toHaveLength(1);
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
  });

  it("a replayed question that was already answered is not asked again", async () => {
    const { address } = await chatWith(clockTurns(true));
    const first = await renderApp();
    await first.user.click(items()[0]);
    await first.user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await first.user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("done"));

    // Reloaded while the answer is still coming (its end held): the run is replayed from its
    // start, question and all, and the question answered before is not asked again.
    cleanup();
    await renderApp();
    await waitFor(() => expect(screen.getByTestId("composer-stop")).toBeTruthy());
    await waitFor(() => expect(screen.getByTestId("tool-card").dataset.state).toBe("done"));
    expect(screen.queryByTestId("approval-dialog")).toBeNull();
    await backend.release(address);
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    expect(answerStrong()).toBe("noon");
    expect(screen.queryByTestId("approval-dialog")).toBeNull();
  });
});

describe("the tools an answer was given, reopened", () => {
  it("are its record's when the newest answer has one, and none when a later answer was offered every tool", async () => {
    const { toolsGivenFrom } = await import("../src/chat/session.svelte");
    const message = (id: string, role: "user" | "assistant") => ({
      id, role, conversation_id: "c1", created_at: 1, content: "", tool_calls: null, tool_call_id: null, name: null, finish_reason: null,
      status: "complete" as const, provider: null, model: null, input_tokens: null, output_tokens: null, reasoning: null, error: null,
      is_error: false, full_length: null, attachments: [], cost_pico: null,
    });
    const offer = { message_id: "a1", offered: ["Switchboard · Search Tools", "many · Get Forecast"], of: 2000, why: "2000 tools are more than a request carries" };
    const messages = [message("u1", "user"), message("a1", "assistant")];
    expect(toolsGivenFrom({ messages, offers: [offer] })).toEqual({ offered: offer.offered, of: 2000, why: offer.why });
    expect(toolsGivenFrom({ messages: [...messages, message("u2", "user"), message("a2", "assistant")], offers: [offer] })).toBeNull();
    expect(toolsGivenFrom({ messages: [], offers: [] })).toBeNull();
  });
});

describe("a run replayed over what was saved", () => {
  it("puts each call's events on its own answer's card when call ids repeat across answers (Ollama, Gemini)", async () => {
    const { ChatSession } = await import("../src/chat/session.svelte");
    const base = {
      conversation_id: "c1", created_at: 1, tool_call_id: null, name: null, provider: null, model: null,
      input_tokens: null, output_tokens: null, reasoning: null, error: null, is_error: false, full_length: null, attachments: [],
      cost_pico: null,
    };
    const answer = (id: string) => ({
      ...base, id, role: "assistant" as const, content: "", status: "complete" as const, finish_reason: "tool_calls" as const,
      tool_calls: [{ id: "0", name: "time__now", arguments: "{}" }],
    });
    // Saved so far: the question, round 1's answer with its call "0", round 2's answer with its own call "0".
    const session = new ChatSession(
      {
        conversation: { id: "c1", title: "t", created_at: 1, updated_at: 1, provider: null, model: null, auto_approve: false, system_prompt: "", profile_id: null, project_id: null },
        messages: [{ ...base, id: "u1", role: "user", content: "time twice", status: "complete", finish_reason: null, tool_calls: null }, answer("a1"), answer("a2")],
        tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [],
      },
      () => {},
    );
    const call = (message_id: string) => ({
      call_id: "0", message_id, wire_name: "time__now", server: "time", tool: "now", display_name: "time · Now", arguments: "{}", retry_of: null,
    });
    // The replay from the run's start.
    session.apply({ type: "run_started", run_id: "r1", conversation_id: "c1" });
    session.apply({ type: "answer_started", message: { ...answer("a1"), status: "streaming", tool_calls: null } });
    session.apply({ type: "tool_call_proposed", call: call("a1") });
    session.apply({ type: "tool_decided", call_id: "0", decision: "allowed", scope: "once", reason: null });
    session.apply({ type: "tool_started", call_id: "0" });
    session.apply({ type: "tool_finished", call_id: "0", is_error: false, content: "noon", full_length: null, duration_ms: 3, can_retry: false, answered: false, rich: false, artifacts: [], open_canvas: null });
    session.apply({ type: "answer_started", message: { ...answer("a2"), status: "streaming", tool_calls: null } });
    session.apply({ type: "tool_call_proposed", call: call("a2") });

    const cards = session.items.flatMap((i) => (i.kind === "assistant" ? i.tools.map((c) => [i.id, c.state, c.content]) : []));
    expect(cards).toEqual([
      ["a1", "done", "noon"],
      ["a2", "proposed", null],
    ]);
  });

  it("puts each result on its own card when a round's calls finish out of their order, live and reopened", async () => {
    const { ChatSession } = await import("../src/chat/session.svelte");
    const { itemsFrom } = await import("../src/chat/items");
    const base = {
      conversation_id: "c1", created_at: 1, tool_call_id: null, name: null, provider: null, model: null,
      input_tokens: null, output_tokens: null, reasoning: null, error: null, is_error: false, full_length: null, attachments: [],
      cost_pico: null, status: "complete" as const, finish_reason: null, tool_calls: null,
    };
    const ids = ["a", "b", "c", "d"];
    const answer = {
      ...base, id: "a1", role: "assistant" as const, content: "", finish_reason: "tool_calls" as const,
      tool_calls: ids.map((id) => ({ id, name: "time__now", arguments: "{}" })),
    };
    const conversation = { id: "c1", title: "t", created_at: 1, updated_at: 1, provider: null, model: null, auto_approve: false, system_prompt: "", profile_id: null, project_id: null };
    const session = new ChatSession({ conversation, messages: [], tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [] }, () => {}, (frame) => frame());
    session.apply({ type: "run_started", run_id: "r1", conversation_id: "c1" });
    session.apply({ type: "answer_started", message: { ...answer, status: "streaming", tool_calls: null } });
    for (const id of ids) {
      session.apply({ type: "tool_call_proposed", call: { call_id: id, message_id: "a1", wire_name: "time__now", server: "time", tool: "now", display_name: "time · Now", arguments: "{}", retry_of: null } });
    }
    const finished = ["c", "a", "d", "b"];
    for (const id of finished) {
      session.apply({ type: "tool_started", call_id: id });
      session.apply({ type: "tool_finished", call_id: id, is_error: id === "d", content: `result of ${id}`, full_length: null, duration_ms: 1, can_retry: false, answered: false, rich: false, artifacts: [], open_canvas: null });
    }
    const shown = (items: typeof session.items) =>
      items.flatMap((i) => (i.kind === "assistant" ? i.tools.map((c) => [c.call_id, c.state, c.content]) : []));
    const expected = [
      ["a", "done", "result of a"],
      ["b", "done", "result of b"],
      ["c", "done", "result of c"],
      ["d", "error", "result of d"],
    ];
    expect(shown(session.items)).toEqual(expected);

    // Saved in the order they finished: reopened, each result is still on its own card.
    const reopened = itemsFrom({
      messages: [
        answer,
        ...finished.map((id) => ({ ...base, id: `t-${id}`, role: "tool" as const, content: `result of ${id}`, tool_call_id: id, is_error: id === "d" })),
      ],
      tool_runs: ids.map((id) => ({
        id: `r-${id}`, conversation_id: "c1", message_id: "a1", call_id: id, server: "time", tool: "now", display_name: "time · Now", arguments: "{}",
        decision: "allowed" as const, decision_scope: "once" as const, deny_reason: null, started_at: 1, finished_at: 2, is_error: id === "d",
        retry_of: null, description: null, can_retry: false, answered: false, rich: false,
      })),
    });
    expect(shown(reopened)).toEqual(expected);
  });
});

describe("a long conversation", () => {
  it("opens at its newest page and shows the older pages in order as they are asked for", async () => {
    const id = await longChat("Long", 100);
    const detail = await ipc.getConversation(id);
    expect(detail.messages).toHaveLength(60);
    expect(detail.older).not.toBeNull();
    const session = new ChatSession(detail, () => {});
    const shown = () => session.items.map((i) => (i.kind === "user" ? i.text : i.text || i.tools.map((c) => c.content).join()));
    expect(shown().at(-1)).toBe("answer 99");
    while (session.older !== null) await session.loadOlder();
    const expected = Array.from({ length: 100 }, (_, t) => [`question ${t}`, "ok", `answer ${t}`]).flat();
    expect(shown()).toEqual(expected);
    expect(backend.callsTo("get_older_messages").length).toBeGreaterThanOrEqual(5);
  });

  it("reads back to a search hit far up in one read as long as the way there, and finds the row that shows it", async () => {
    const id = await longChat("Long", 200);
    // Messages 41 to 44 (numbered from 1): the 11th turn's question, its call, the call's result and the answer.
    const [u10, a10, t10] = (await backend.seed(() => ipc.getOlderMessages(id, 45, 4))).messages;
    expect([u10.content, a10.tool_calls?.length, t10.role]).toEqual(["question 10", 1, "tool"]);
    const detail = await ipc.getConversation(id);
    // The newest 60 of 800 shown: the oldest of them is message 741.
    expect(detail.older).toBe(741);
    const session = new ChatSession(detail, () => {});
    await session.loadUntil(42);
    expect(backend.callsTo("get_older_messages").map((c) => c.args)).toEqual([{ id, before: 741, limit: 719 }]);
    // The result of the 11th turn's call: its answer's row shows it.
    expect(session.itemShowing(t10.id)).toBe(a10.id);
    expect(session.itemShowing(u10.id)).toBe(u10.id);
    expect(session.itemShowing("nothing")).toBeNull();
    // Already shown: nothing more is read.
    await session.loadUntil(500);
    expect(backend.callsTo("get_older_messages")).toHaveLength(1);
  });

  it("a page asked for before the history was read again is not added to it", async () => {
    const id = await longChat("Long", 30);
    const session = new ChatSession(await ipc.getConversation(id), () => {});
    const loading = session.loadOlder();
    session.load(await ipc.getConversation(id));
    await loading;
    expect(session.items.filter((i) => i.kind === "user")).toHaveLength(15);
  });

  it("a long result shows its start on its card and is read whole on demand", async () => {
    const id = await longChat("Big", 1, "y".repeat(10_000));
    const session = new ChatSession(await ipc.getConversation(id), () => {});
    const answer = session.items[1];
    const card = () => (session.items[1].kind === "assistant" ? session.items[1].tools[0] : null);
    expect(card()?.content).toHaveLength(4_000);
    expect(card()?.full_length).toBe(10_000);
    await session.showWholeResult(answer.id, "c");
    expect(card()?.content).toHaveLength(10_000);
    expect(card()?.full_length).toBeNull();
  });
});

describe("a conversation read ahead of the page that shows it", () => {
  it("has its chat built as the read comes, taken once by the session that shows it", async () => {
    const id = await chatOf("Read ahead", ["first words", "an answer"]);
    const detail = await ipc.getConversation(id);
    const chats = new ChatSessions(() => {});
    const texts = (session: ChatSession) => session.items.map((i) => i.text);
    chats.prepare(detail);
    // Built at prepare: what the read held then is what the session shows.
    const question = detail.messages.find((m) => m.role === "user")!;
    question.content = "changed after it was read";
    const session = chats.open(detail);
    expect(texts(session)[0]).toBe("first words");
    // Taken once: opened again, the chat is built from the read as it is now.
    expect(texts(chats.open(detail))[0]).toBe("changed after it was read");
  });

  it("is not built for a conversation whose answer is coming (its session keeps what it shows)", async () => {
    const { id } = await chatWith([{ answer: ["heard"] }], false);
    const detail = await ipc.getConversation(id);
    const chats = new ChatSessions(() => {});
    const session = chats.open(detail);
    session.running = true;
    chats.prepare(detail);
    session.running = false;
    // Nothing was kept for it: opening builds the chat from the read as it is now.
    await backend.seed(
      () =>
        new Promise<void>((resolve, reject) => {
          ipc.sendMessage(id, "said since", (event: RunEvent) => event.type === "run_finished" && resolve()).catch(reject);
        }),
    );
    detail.messages.push(...(await backend.seed(() => ipc.getConversation(id))).messages);
    expect(chats.open(detail).items.map((i) => i.text)).toEqual(["said since", "heard"]);
  });
});

describe("a message half written", { timeout: 30_000 }, () => {
  it("is told to Rust once typing rests, and a new window finds it in its conversation's composer", async () => {
    const { id } = await chatWith([{ answer: ["Noted."] }], false);
    const first = await renderApp();
    await first.user.click(items()[0]);
    await first.user.type(await screen.findByTestId("composer-input"), "Half a thought");
    await waitFor(async () => expect((await keptDraft(id))?.text).toBe("Half a thought"));

    // The app closed and opened: a new window state, the same Rust.
    cleanup();
    const { user } = await renderApp();
    await user.click(items()[0]);
    const input = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    await waitFor(() => expect(input.value).toBe("Half a thought"));
    const saves = backend.callsTo("save_draft").length;

    // Sent: the box empties, and so does what Rust keeps (Rust forgets a sent message's draft
    // itself; the window tells it of the emptied box too, once typing rests).
    await user.type(input, "{Enter}");
    await waitFor(async () => expect(await keptDraft(id)).toBeNull());
    await waitFor(() => expect(backend.callsTo("save_draft").length).toBeGreaterThan(saves));
    expect(backend.callsTo("save_draft").at(-1)?.args).toMatchObject({ id, draft: { text: "" } });
  });
});

describe("the window's drafts", () => {
  const kept = (text: string) => ({ text, attachments: [], comparing: true, compared: [{ provider: "Work", model: "gpt-4o" }] });

  it("wait for typing to rest before telling Rust, send at once when the window goes, and let a deleted conversation's go", async () => {
    const a = await backend.seed(() => ipc.createConversation("A"));
    const b = await backend.seed(() => ipc.createConversation("B"));
    vi.useFakeTimers();
    try {
      const chats = new ChatSessions(() => {});
      const draft = chats.draftOf(a.id);
      draft.text = "Hel";
      draft.text = "Hello";
      draft.comparing = true;
      await vi.advanceTimersByTimeAsync(DRAFT_SAVE_MS - 1);
      expect(backend.callsTo("save_draft")).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(backend.callsTo("save_draft").map((c) => c.args)).toEqual([
        { id: a.id, draft: { text: "Hello", attachments: [], comparing: true, compared: [] } },
      ]);

      // The window goes: what is waiting is sent now.
      draft.text = "Hello there";
      chats.flush();
      await vi.advanceTimersByTimeAsync(0);
      await vi.waitFor(async () => expect((await keptDraft(a.id))?.text).toBe("Hello there"));
      await vi.advanceTimersByTimeAsync(DRAFT_SAVE_MS);
      expect(backend.callsTo("save_draft")).toHaveLength(2);

      // A conversation deleted while its draft waited: nothing is sent for it.
      chats.draftOf(b.id).text = "gone";
      chats.forget(b.id);
      await vi.advanceTimersByTimeAsync(DRAFT_SAVE_MS);
      expect(backend.callsTo("save_draft")).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("restore what was kept only into a composer not written in since the window began, and restoring sends nothing", async () => {
    const a = await backend.seed(() => ipc.createConversation("A"));
    const b = await backend.seed(() => ipc.createConversation("B"));
    await backend.seed(() => ipc.saveDraft(a.id, kept("from last time")));
    await backend.seed(() => ipc.saveDraft(b.id, kept("from last time")));
    const chats = new ChatSessions(() => {});
    chats.open(await ipc.getConversation(a.id));
    const restored = chats.draftOf(a.id);
    expect(restored.text).toBe("from last time");
    expect(restored.comparing).toBe(true);
    expect(restored.compared).toEqual([{ provider: "Work", model: "gpt-4o" }]);

    // Written in before its conversation was read: what the person wrote stays.
    chats.draftOf(b.id).text = "newer";
    chats.open(await ipc.getConversation(b.id));
    expect(chats.draftOf(b.id).text).toBe("newer");
    await new Promise((resolve) => setTimeout(resolve, DRAFT_SAVE_MS + 50));
    expect(backend.callsTo("save_draft").map((c) => c.args?.id)).toEqual([b.id]);
  });
});
