// The events of one run of the tool loop (`RunEvent` in src-tauri/core/src/events.rs, its
// TypeScript generated into bindings.ts). One `Channel` carries them, in order; the last is
// always `run_finished`.

export type { ApprovalAnswer, ApprovalItem, Decision, ProposedCall, ReviewVerdict, RunEvent, StopReason } from "./bindings";
