// An answer streams into the chat once a frame: deltas wait for the next frame and show
// together, and any other event of the run shows the waiting text first, so nothing comes out
// of order. (A .svelte.test.ts file: it watches the session with an $effect.)
import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn() }));

import { flushSync } from "svelte";
import type { AssistantItem } from "../src/chat/items";
import type { FrameScheduler } from "../src/chat/run-feed.svelte";
import { ChatSession } from "../src/chat/session.svelte";
import type { Message } from "../src/lib/types";

const base = {
  conversation_id: "c1", created_at: 1, tool_call_id: null, name: null, provider: null, model: null, tool_calls: null,
  input_tokens: null, output_tokens: null, reasoning: null, error: null, is_error: false, full_length: null, attachments: [], finish_reason: null,
  cost_pico: null,
};

function answer(fields: Partial<Message> = {}): Message {
  return { ...base, id: "a1", role: "assistant", content: "", status: "streaming", ...fields };
}

/** A session whose frames come when the test calls `frame()`. */
function session() {
  const frames: (() => void)[] = [];
  const schedule: FrameScheduler = (callback) => frames.push(callback);
  const chat = new ChatSession(
    {
      conversation: { id: "c1", title: "t", created_at: 1, updated_at: 1, provider: null, model: null, auto_approve: false, system_prompt: "", profile_id: null, project_id: null },
      messages: [], tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [],
    },
    () => {},
    schedule,
  );
  chat.apply({ type: "run_started", run_id: "r1", conversation_id: "c1" });
  chat.apply({ type: "answer_started", message: answer() });
  const item = () => chat.items.find((i): i is AssistantItem => i.kind === "assistant" && i.id === "a1")!;
  const frame = () => {
    const due = frames.splice(0);
    for (const callback of due) callback();
  };
  return { chat, item, frame, frames };
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe("deltas of a streaming answer", () => {
  it("many deltas in one frame make one update", () => {
    const { chat, item, frame, frames } = session();
    const seen: string[] = [];
    const stop = $effect.root(() => {
      $effect(() => {
        seen.push(item().text);
      });
    });
    flushSync();
    for (let i = 0; i < 50; i++) chat.apply({ type: "text_delta", message_id: "a1", text: `${i} ` });
    flushSync();
    expect(item().text).toBe("");
    expect(frames).toHaveLength(1);

    frame();
    flushSync();
    const all = Array.from({ length: 50 }, (_, i) => `${i} `).join("");
    expect(item().text).toBe(all);
    expect(seen).toEqual(["", all]);
    stop();
  });

  it("reasoning deltas wait for the same frame as text deltas", () => {
    const { chat, item, frame, frames } = session();
    chat.apply({ type: "reasoning_delta", message_id: "a1", text: "Think" });
    chat.apply({ type: "text_delta", message_id: "a1", text: "Say" });
    chat.apply({ type: "reasoning_delta", message_id: "a1", text: "ing" });
    expect(frames).toHaveLength(1);
    expect(item().reasoning).toBe("");
    frame();
    expect(item().reasoning).toBe("Thinking");
    expect(item().text).toBe("Say");
  });

  it("a saved message after pending deltas shows the saved text", () => {
    const { chat, item, frame } = session();
    chat.apply({ type: "text_delta", message_id: "a1", text: "It is " });
    chat.apply({ type: "text_delta", message_id: "a1", text: "noon" });
    chat.apply({ type: "message_saved", message: answer({ content: "It is noon.", status: "complete" }) });
    expect(item().text).toBe("It is noon.");
    frame();
    expect(item().text).toBe("It is noon.");
  });

  it("any other event shows the waiting text first, in order", () => {
    const { chat, item, frame } = session();
    chat.apply({ type: "text_delta", message_id: "a1", text: "Let me check." });
    chat.apply({
      type: "tool_call_proposed",
      call: { call_id: "0", message_id: "a1", wire_name: "time__now", server: "time", tool: "now", display_name: "time · Now", arguments: "{}", retry_of: null },
    });
    expect(item().text).toBe("Let me check.");
    expect(item().tools).toHaveLength(1);
    // A new answer replaces the old one's text: the old deltas are not added to it afterwards.
    chat.apply({ type: "text_delta", message_id: "a1", text: " stale" });
    chat.apply({ type: "answer_started", message: answer() });
    frame();
    expect(item().text).toBe("");
  });

  it("without animation frames, deltas show 16 ms later", () => {
    vi.stubGlobal("requestAnimationFrame", undefined);
    vi.useFakeTimers();
    const chat = new ChatSession(
      {
        conversation: { id: "c1", title: "t", created_at: 1, updated_at: 1, provider: null, model: null, auto_approve: false, system_prompt: "", profile_id: null, project_id: null },
        messages: [answer()], tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [],
      },
      () => {},
    );
    chat.apply({ type: "text_delta", message_id: "a1", text: "Hi" });
    const item = chat.items[0] as AssistantItem;
    vi.advanceTimersByTime(15);
    expect(item.text).toBe("");
    vi.advanceTimersByTime(1);
    expect(item.text).toBe("Hi");
  });
});

describe("tools a run leaves out", () => {
  it("each is said, not only the last", () => {
    const { chat } = session();
    chat.apply({ type: "tool_warning", tool: "files · read", message: "its name holds U+200B" });
    chat.apply({ type: "tool_warning", tool: "notes · search", message: "the server lists it twice" });
    chat.apply({ type: "tool_warning", tool: "12 more tools", message: "held back as well; the Servers page says why" });
    expect(chat.notice?.kind).toBe("info");
    expect(chat.notice?.message.split("\n")).toEqual([
      "files · read was left out: its name holds U+200B",
      "notes · search was left out: the server lists it twice",
      "12 more tools was left out: held back as well; the Servers page says why",
    ]);
  });

  it("a line said again (each request repeats them) is said once, and stays under a later error", () => {
    const { chat } = session();
    const warn = () => chat.apply({ type: "tool_warning", tool: "files · read", message: "its name holds U+200B" });
    warn();
    warn();
    expect(chat.notice?.message).toBe("files · read was left out: its name holds U+200B");
    chat.apply({ type: "error", message: "The provider refused the request.", retryable: false });
    expect(chat.notice).toMatchObject({
      kind: "error",
      message: "The provider refused the request.\nfiles · read was left out: its name holds U+200B",
    });
  });

  it("a choice of many tools is said, and each search's finds under it", () => {
    const { chat } = session();
    chat.apply({
      type: "tools_offered",
      offered: ["Many · Get Forecast", "Switchboard · Search Tools"],
      of: 2000,
      found: [],
      why: "2000 tools are more than a request carries (at most 128)",
    });
    chat.apply({
      type: "tools_offered",
      offered: ["Many · Get Forecast", "Switchboard · Search Tools", "Many · Create Invoice 0"],
      of: 2000,
      found: ["Many · Create Invoice 0"],
      why: "2000 tools are more than a request carries (at most 128)",
    });
    expect(chat.notice?.kind).toBe("info");
    expect(chat.notice?.message.split("\n")).toEqual([
      "The model is offered 1 of 2000 tools and a search for the rest: 2000 tools are more than a request carries (at most 128).",
      "The model's search found Many · Create Invoice 0.",
    ]);
  });

  it("an error shown stays, with what was left out under it", () => {
    const { chat } = session();
    chat.apply({ type: "error", message: "The provider refused the request.", retryable: true });
    chat.apply({ type: "tool_warning", tool: "notes · search", message: "the server lists it twice" });
    expect(chat.notice).toMatchObject({
      kind: "error",
      retryable: true,
      message: "The provider refused the request.\nnotes · search was left out: the server lists it twice",
    });
  });
});
