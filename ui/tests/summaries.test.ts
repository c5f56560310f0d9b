import { describe, expect, it } from "vitest";
import type { ChatItem } from "../src/chat/items";
import type { Summary } from "../src/lib/types";
import { withSummary } from "../src/chat/summaries";

const user = (id: string): ChatItem => ({ kind: "user", id, text: id, created_at: 0, attachments: [] });
const answer = (id: string, resultIds: string[] = []): ChatItem => ({
  kind: "assistant",
  id,
  text: id,
  reasoning: "",
  status: "complete",
  finish_reason: "stop",
  error: null,
  model: "m",
  input_tokens: null,
  output_tokens: null,
  cost_pico: null,
  tools: resultIds.map((result_id, i) => ({
    call_id: `c${i}`,
    server: "s",
    tool: "t",
    display_name: "S · T",
    arguments: "{}",
    state: "done",
    content: "ok",
    duration_ms: 1,
    reason: null,
    progress: null,
    retry_of: null,
    description: null,
    full_length: null,
    result_id,
    can_retry: false,
    answered: false,
    rich: false,
    artifacts: [],
    decided_by: null,
    task: null,
    late: null,
  })),
});
const summary = (id: string, through: string): Summary => ({
  id,
  conversation_id: "c",
  through_message_id: through,
  text: `summary ${id}`,
  summarised: 2,
  left_out: 0,
  provider: "P",
  model: "m",
  created_at: 0,
});

describe("a summary of earlier messages in the conversation", () => {
  const items = [user("u1"), answer("a1", ["t1"]), user("u2"), answer("a2"), user("u3"), answer("a3")];

  it("stands first, folded, with what it covers left out of the rows", () => {
    const rows = withSummary(items, [summary("s1", "a2")], false);
    expect(rows.map((r) => r.id)).toEqual(["summary:s1", "u3", "a3"]);
    expect(rows[0]).toMatchObject({ kind: "summary", covered: 4, folded: true });
  });

  it("unfolded, stands after its last message, every message shown", () => {
    const rows = withSummary(items, [summary("s1", "a2")], true);
    expect(rows.map((r) => r.id)).toEqual(["u1", "a1", "u2", "a2", "summary:s1", "u3", "a3"]);
  });

  it("is the newest whose last message is shown, found by a result's message too", () => {
    const rows = withSummary(items, [summary("s1", "t1"), summary("s2", "gone"), summary("s0", "a1")].slice(0, 2), false);
    expect(rows.map((r) => r.id)).toEqual(["summary:s1", "u2", "a2", "u3", "a3"]);
    expect(withSummary(items, [summary("s3", "not-loaded")], false)).toBe(items);
  });
});
