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
import * as ipc from "../src/lib/ipc";
import { ChatSession } from "../src/chat/session.svelte";
import { ChatSessions, DRAFT_SAVE_MS } from "../src/chat/chat-sessions.svelte";
import type { Message, ToolRun } from "../src/lib/types";

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
        conversation: { id: "c1", title: "t", created_at: 1, updated_at: 1, provider: null, model: null, auto_approve: false, system_prompt: "", profile_id: null },
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
    session.apply({ type: "tool_finished", call_id: "0", is_error: false, content: "noon", full_length: null, duration_ms: 3, can_retry: false, rich: false, artifacts: [], open_canvas: null });
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
    const conversation = { id: "c1", title: "t", created_at: 1, updated_at: 1, provider: null, model: null, auto_approve: false, system_prompt: "", profile_id: null };
    const session = new ChatSession({ conversation, messages: [], tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [] }, () => {}, (frame) => frame());
    session.apply({ type: "run_started", run_id: "r1", conversation_id: "c1" });
    session.apply({ type: "answer_started", message: { ...answer, status: "streaming", tool_calls: null } });
    for (const id of ids) {
      session.apply({ type: "tool_call_proposed", call: { call_id: id, message_id: "a1", wire_name: "time__now", server: "time", tool: "now", display_name: "time · Now", arguments: "{}", retry_of: null } });
    }
    const finished = ["c", "a", "d", "b"];
    for (const id of finished) {
      session.apply({ type: "tool_started", call_id: id });
      session.apply({ type: "tool_finished", call_id: id, is_error: id === "d", content: `result of ${id}`, full_length: null, duration_ms: 1, can_retry: false, rich: false, artifacts: [], open_canvas: null });
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
        retry_of: null, description: null, can_retry: false, rich: false,
      })),
    });
    expect(shown(reopened)).toEqual(expected);
  });
});

describe("a long conversation", () => {
  /** `turns` questions, each answered after one call whose result is `result` long. */
  function longChat(conversationId: string, turns: number, result = "ok"): void {
    const all: Message[] = [];
    const runs: ToolRun[] = [];
    const base = {
      conversation_id: conversationId, created_at: 1, tool_call_id: null, name: null, provider: null, model: null,
      input_tokens: null, output_tokens: null, reasoning: null, error: null, is_error: false, full_length: null, attachments: [],
      status: "complete" as const, finish_reason: null, tool_calls: null, cost_pico: null,
    };
    for (let t = 0; t < turns; t++) {
      all.push({ ...base, id: `u${t}`, role: "user", content: `question ${t}` });
      all.push({ ...base, id: `a${t}`, role: "assistant", content: "", tool_calls: [{ id: "c", name: "time__now", arguments: "{}" }] });
      all.push({ ...base, id: `t${t}`, role: "tool", content: result, tool_call_id: "c" });
      all.push({ ...base, id: `b${t}`, role: "assistant", content: `answer ${t}` });
      runs.push({
        id: `r${t}`, conversation_id: conversationId, message_id: `a${t}`, call_id: "c", server: "time", tool: "now",
        display_name: "time · Now", arguments: "{}", decision: "allowed", decision_scope: "once", deny_reason: null,
        started_at: 1, finished_at: 2, is_error: false, retry_of: null, description: null, can_retry: false, rich: false,
      });
    }
    backend.messages[conversationId] = all;
    backend.toolRuns[conversationId] = runs;
  }

  it("opens at its newest page and shows the older pages in order as they are asked for", async () => {
    const conversation = backend.addConversation("Long");
    longChat(conversation.id, 100);
    const detail = await ipc.getConversation(conversation.id);
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
    const conversation = backend.addConversation("Long");
    longChat(conversation.id, 200);
    const session = new ChatSession(await ipc.getConversation(conversation.id), () => {});
    // Message 42 (numbered from 1) is t10, the result of the 11th turn's call: its answer's row shows it.
    await session.loadUntil(42);
    expect(backend.callsTo("get_older_messages").map((c) => c.args)).toEqual([{ id: conversation.id, before: 741, limit: 719 }]);
    expect(session.itemShowing("t10")).toBe("a10");
    expect(session.itemShowing("u10")).toBe("u10");
    expect(session.itemShowing("nothing")).toBeNull();
    // Already shown: nothing more is read.
    await session.loadUntil(500);
    expect(backend.callsTo("get_older_messages")).toHaveLength(1);
  });

  it("a page asked for before the history was read again is not added to it", async () => {
    const conversation = backend.addConversation("Long");
    longChat(conversation.id, 30);
    const session = new ChatSession(await ipc.getConversation(conversation.id), () => {});
    const loading = session.loadOlder();
    session.load(await ipc.getConversation(conversation.id));
    await loading;
    expect(session.items.filter((i) => i.kind === "user")).toHaveLength(15);
  });

  it("a long result shows its start on its card and is read whole on demand", async () => {
    const conversation = backend.addConversation("Big");
    longChat(conversation.id, 1, "y".repeat(10_000));
    const session = new ChatSession(await ipc.getConversation(conversation.id), () => {});
    const card = () => (session.items[1].kind === "assistant" ? session.items[1].tools[0] : null);
    expect(card()?.content).toHaveLength(4_000);
    expect(card()?.full_length).toBe(10_000);
    await session.showWholeResult("a0", "c");
    expect(card()?.content).toHaveLength(10_000);
    expect(card()?.full_length).toBeNull();
  });
});

describe("a conversation read ahead of the page that shows it", () => {
  it("has its chat built as the read comes, taken once by the session that shows it", async () => {
    const conversation = backend.addConversation("Read ahead");
    backend.addMessages(conversation.id, ["first words", "an answer"]);
    const detail = await ipc.getConversation(conversation.id);
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
    const conversation = backend.addConversation("Running");
    const detail = await ipc.getConversation(conversation.id);
    const chats = new ChatSessions(() => {});
    const session = chats.open(detail);
    session.running = true;
    chats.prepare(detail);
    session.running = false;
    // Nothing was kept for it: opening builds the chat from the read as it is now.
    backend.addMessages(conversation.id, ["said since"]);
    detail.messages.push(...backend.messages[conversation.id]);
    expect(chats.open(detail).items.map((i) => i.text)).toEqual(["said since"]);
  });
});

describe("a message half written", () => {
  it("is told to Rust once typing rests, and a new window finds it in its conversation's composer", async () => {
    backend.addProviderRecord("Work");
    backend.addConversation("Chat");
    const first = await renderApp();
    await first.user.click(items()[0]);
    await first.user.type(await screen.findByTestId("composer-input"), "Half a thought");
    await waitFor(() => expect(backend.drafts[backend.conversations[0].id]?.text).toBe("Half a thought"));

    // The app closed and opened: a new window state, the same Rust.
    cleanup();
    const { user } = await renderApp();
    await user.click(items()[0]);
    const input = (await screen.findByTestId("composer-input")) as HTMLTextAreaElement;
    await waitFor(() => expect(input.value).toBe("Half a thought"));
    const saves = backend.callsTo("save_draft").length;

    // Sent: the box empties, and so does what Rust keeps.
    await user.type(input, "{Enter}");
    await waitFor(() => expect(backend.drafts[backend.conversations[0].id]).toBeUndefined());
    expect(backend.callsTo("save_draft").length).toBeGreaterThan(saves);
  });
});

describe("the window's drafts", () => {
  const kept = (text: string) => ({ text, attachments: [], comparing: true, compared: [{ provider: "Work", model: "gpt-4o" }] });

  it("wait for typing to rest before telling Rust, send at once when the window goes, and let a deleted conversation's go", async () => {
    vi.useFakeTimers();
    try {
      const a = backend.addConversation("A");
      const b = backend.addConversation("B");
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
      expect(backend.drafts[a.id]?.text).toBe("Hello there");
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
    const a = backend.addConversation("A");
    const b = backend.addConversation("B");
    backend.drafts[a.id] = kept("from last time");
    backend.drafts[b.id] = kept("from last time");
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
