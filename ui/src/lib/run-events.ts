// The events of one run of the tool loop, mirroring `RunEvent` in
// src-tauri/core/src/events.rs (its JSON shape is pinned by tests there). One
// `Channel` carries them, in order; the last is always `run_finished`.

import type { CallRef, Message } from "./types";

export type StopReason = "completed" | "max_rounds" | "too_many_failures" | "time_limit" | "cancelled" | "error" | "retry_failed";

export interface ProposedCall {
  call_id: string;
  message_id: string;
  wire_name: string;
  server: string | null;
  tool: string | null;
  display_name: string;
  /** the argument text exactly as the model sent it */
  arguments: string;
  /** the failed call this one runs again (the first of a chain of retries), from a Retry */
  retry_of: CallRef | null;
}

export interface ApprovalItem {
  call_id: string;
  server: string;
  tool: string;
  display_name: string;
  /** hostile text from the server: render as plain text */
  description: string;
  /** pretty-printed; what runs is exactly this */
  arguments: string;
  destructive: boolean;
}

export type RunEvent =
  | { type: "run_started"; run_id: string; conversation_id: string }
  | { type: "status"; text: string }
  | { type: "answer_started"; message: Message }
  | { type: "text_delta"; message_id: string; text: string }
  | { type: "reasoning_delta"; message_id: string; text: string }
  | { type: "tool_warning"; tool: string; message: string }
  | { type: "tool_call_proposed"; call: ProposedCall }
  | { type: "approval_required"; request_id: string; calls: ApprovalItem[] }
  | { type: "tool_decided"; call_id: string; allowed: boolean; scope: string | null; reason: string | null }
  | { type: "tool_started"; call_id: string }
  | { type: "tool_described"; call_id: string; description: string }
  | { type: "tool_progress"; call_id: string; progress: number; total: number | null; message: string | null }
  | { type: "tool_finished"; call_id: string; is_error: boolean; content: string; duration_ms: number }
  | { type: "message_saved"; message: Message }
  | { type: "run_finished"; reason: StopReason; message: string | null }
  | { type: "error"; message: string; retryable: boolean };

export type Decision = "allow_once" | "allow_conversation" | "allow_always" | "deny";

export interface ApprovalAnswer {
  call_id: string;
  decision: Decision;
  reason?: string | null;
}
