// A call a server runs as a task (MCP Tasks, issue 61): its card offers Go on and Cancel while
// it runs, says its task goes on in the background once the person went on without it, and
// shows its late result (hostile server text, as text) when the task ends; a conversation read
// again after a late result landed rebuilds the same card from what was saved.
import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { cleanup } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import ToolCardView from "../src/chat/ToolCardView.svelte";
import { LATE_RESULT, itemsFrom, reduceItems, type AssistantItem, type ToolCard } from "../src/chat/items";
import type { CallControl, Message, ToolRun } from "../src/lib/types";
import { renderWithStores } from "./render-with-stores";

const card: ToolCard = {
  call_id: "call_1", server: "tasks", tool: "slow", display_name: "tasks · Slow", arguments: '{"topic":"tides"}',
  state: "running", content: null, duration_ms: null, reason: null, progress: null, retry_of: null, description: null,
  full_length: null, result_id: null, can_retry: false, answered: false, rich: false, artifacts: [], decided_by: null,
  task: { id: "task-1", state: "running" }, late: null,
};

function message(over: Partial<Message>): Message {
  return {
    id: "m", conversation_id: "c", role: "user", content: null, created_at: 0, tool_calls: null, tool_call_id: null, name: null,
    finish_reason: null, status: "complete", provider: null, model: null, input_tokens: null, output_tokens: null, reasoning: null,
    error: null, is_error: false, attachments: [], full_length: null, ...over,
  } as Message;
}

afterEach(() => cleanup());

describe("a task's card", () => {
  it("offers Go on and Cancel while its task runs, and says what came of a request for a call that ended", async () => {
    const user = userEvent.setup();
    const asked: CallControl[] = [];
    let running = true;
    const view = renderWithStores(ToolCardView, {
      card,
      onControl: async (control: CallControl) => {
        asked.push(control);
        return running;
      },
    });
    expect(view.getByTestId("tool-task").textContent).toMatch(/Runs as a task on “tasks”/);
    await user.click(view.getByTestId("tool-go-on"));
    expect(asked).toEqual(["go_on"]);
    running = false;
    await user.click(view.getByTestId("tool-cancel"));
    expect(asked).toEqual(["go_on", "cancel"]);
    expect((await view.findByTestId("tool-control-said")).textContent).toMatch(/^It is not running now/);
  });

  it("a call without a task offers Cancel only; a finished one offers nothing", () => {
    const view = renderWithStores(ToolCardView, { card: { ...card, task: null }, onControl: async () => true });
    expect(view.queryByTestId("tool-go-on")).toBeNull();
    expect(view.getByTestId("tool-cancel")).toBeTruthy();
    cleanup();
    const done = renderWithStores(ToolCardView, { card: { ...card, state: "done", task: { id: "task-1", state: "completed" } }, onControl: async () => true });
    expect(done.queryByTestId("tool-task")).toBeNull();
  });

  it("in the background it can still be cancelled; its late result shows as text", () => {
    const view = renderWithStores(ToolCardView, {
      card: { ...card, state: "done", content: "went on", task: { id: "task-1", state: "background" } },
      onControl: async () => true,
    });
    expect(view.getByTestId("tool-task").textContent).toMatch(/goes on on the server/);
    expect(view.getByTestId("tool-state").textContent).toBe("In the background");
    expect(view.queryByTestId("tool-go-on")).toBeNull();
    expect(view.getByTestId("tool-cancel")).toBeTruthy();
    cleanup();
    const hostile = '<img src=x onerror="window.pwned=1">report on tides';
    const ended = renderWithStores(ToolCardView, {
      card: { ...card, state: "done", content: "went on", task: { id: "task-1", state: "completed" }, late: { content: hostile, is_error: false } },
    });
    expect(ended.getByTestId("tool-state").textContent).toBe("Done later");
    const late = ended.getByTestId("tool-late-result");
    expect(late.textContent).toContain("Its result, which came later");
    expect(late.textContent).toContain(hostile);
    expect(late.querySelector("img")).toBeNull();
  });

  it("the conversation read again builds the card with its task and its late result; live events build the same", () => {
    const answer = message({ id: "a1", role: "assistant", content: "", tool_calls: [{ id: "call_1", name: "tasks__slow", arguments: "{}" }] });
    const run = {
      id: "r1", conversation_id: "c", message_id: "a1", call_id: "call_1", server: "tasks", tool: "slow", display_name: "tasks · Slow",
      arguments: "{}", decision: "allowed", decision_scope: "once", deny_reason: null, started_at: 1, finished_at: 5, is_error: false,
      retry_of: null, description: null, can_retry: false, answered: false, rich: false, task: { id: "task-1", state: "completed" },
    } as ToolRun;
    const saved = [
      message({ id: "u1", content: "Task: slow report" }),
      answer,
      message({ id: "t1", role: "tool", content: "went on", tool_call_id: "call_1" }),
      message({ id: "a2", role: "assistant", content: "Going on." }),
      // A later answer calls call_1 too (Ollama's ids restart in each answer): the late result is
      // the first answer's call's.
      message({ id: "a3", role: "assistant", content: "", tool_calls: [{ id: "call_1", name: "tasks__other", arguments: "{}" }] }),
      message({ id: "t3", role: "tool", content: "other", tool_call_id: "call_1" }),
      message({ id: "l1", role: "system", name: LATE_RESULT, content: "slow report on tides", tool_call_id: "a1:call_1" }),
    ];
    const items = itemsFrom({ messages: saved, tool_runs: [run] });
    const built = (items.find((i) => i.kind === "assistant" && i.id === "a1") as AssistantItem).tools[0];
    expect(built.task).toEqual({ id: "task-1", state: "completed" });
    expect(built.late).toEqual({ content: "slow report on tides", is_error: false });
    const other = (items.find((i) => i.kind === "assistant" && i.id === "a3") as AssistantItem).tools[0];
    expect(other.late).toBeNull();
    expect(items.filter((i) => i.kind === "assistant")).toHaveLength(3);

    // Live: the task is announced, then the call is answered with its task in the background.
    const live = itemsFrom({ messages: saved.slice(0, 2), tool_runs: [{ ...run, started_at: null, finished_at: null, decision: null, task: undefined }] });
    const cursor = { answerId: "a1" };
    const liveCard = () => (live.find((i) => i.kind === "assistant" && i.id === "a1") as AssistantItem).tools[0];
    reduceItems(live, cursor, { type: "tool_started", call_id: "call_1" });
    reduceItems(live, cursor, { type: "tool_task", call_id: "call_1", task_id: "task-1" });
    expect(liveCard().task).toEqual({ id: "task-1", state: "running" });
    reduceItems(live, cursor, {
      type: "tool_finished", call_id: "call_1", is_error: false, content: "went on", full_length: null, duration_ms: 4, can_retry: false,
      answered: false, rich: false, artifacts: [], open_canvas: null, task: { id: "task-1", state: "background" },
    });
    expect(liveCard().task).toEqual({ id: "task-1", state: "background" });
    expect(liveCard().state).toBe("done");
  });
});
