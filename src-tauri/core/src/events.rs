//! [`RunEvent`]: the one typed stream a run of the tool loop emits, in order, to whoever
//! watches it (the window over a `tauri::ipc::Channel`, the command line as JSON lines, tests
//! as a list). Its JSON shape is pinned by tests and mirrored in `ui/src/lib/run-events.ts`.
//!
//! Owns the shapes only; the loop in [`crate::agent`] decides when each is sent.

use serde::Serialize;

pub use crate::store::CallRef;
use crate::store::Message;

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without asking for a tool.
    Completed,
    /// The round cap was reached; the model was asked once more, without tools, to answer.
    MaxRounds,
    /// Too many tool calls failed in a row.
    TooManyFailures,
    /// The run took longer than the run time limit.
    TimeLimit,
    /// The person pressed Stop.
    Cancelled,
    /// The provider failed (the error is in the conversation, ready to retry).
    Error,
    /// A failed call the person ran again failed again (or was not allowed); the model was
    /// not asked to go on.
    RetryFailed,
}

/// A tool call as the model proposed it, before any decision.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ProposedCall {
    pub call_id: String,
    /// The assistant message that asked for it.
    pub message_id: String,
    /// The name the model used.
    pub wire_name: String,
    /// The server and tool it maps to; `None` for a name that was never offered.
    pub server: Option<String>,
    pub tool: Option<String>,
    /// "Server · Tool Name", or the wire name of an unknown tool.
    pub display_name: String,
    /// The argument text exactly as the model sent it.
    pub arguments: String,
    /// The failed call this one runs again (the first of a chain of retries), when the person
    /// pressed a Retry.
    pub retry_of: Option<CallRef>,
}

/// One call in an approval dialog: everything the person needs to decide, and exactly what
/// will run if they allow it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ApprovalItem {
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub display_name: String,
    /// The tool's description, as its server gave it (hostile text: shown as plain text).
    pub description: String,
    /// The arguments, pretty-printed: what runs is exactly this.
    pub arguments: String,
    /// The server marked the tool `destructiveHint`.
    pub destructive: bool,
    /// Why the person is asked: the rule that says ask, what the turn has read, a path outside
    /// the server's roots, or that nothing lets the call run.
    pub asked_because: String,
    /// The rule the dialog offers to make from this call (allow this tool, with these
    /// arguments' folders or hosts); made only after the native confirmation.
    pub suggested_rule: Option<crate::policy::rules::Rule>,
    /// It is asked about every time (a skill's script): the dialog offers Allow once and
    /// Deny only, and Rust takes any wider answer as once.
    pub once_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    RunStarted {
        run_id: String,
        conversation_id: String,
    },
    /// A call's result waits for the person's word before the model reads it (the policy
    /// reviews that tool's results): pass it, cut parts out, or withhold it
    /// (`answer_result_review`). Hostile text: shown as text.
    ResultReviewRequired {
        request_id: String,
        call_id: String,
        display_name: String,
        /// What the model would read.
        content: String,
    },
    /// A line saying what is happening now ("Thinking…", "Using Time · Get Current Time…").
    Status {
        text: String,
    },
    /// An assistant answer began; deltas for `message.id` follow.
    AnswerStarted {
        message: Message,
    },
    TextDelta {
        message_id: String,
        text: String,
    },
    ReasoningDelta {
        message_id: String,
        text: String,
    },
    /// A tool left out of the request: the provider would refuse its name or schema, or (at
    /// the run's start) it is held back (changed since pinned, or left out of its server's
    /// list).
    ToolWarning {
        tool: String,
        message: String,
    },
    /// The model is offered a choice of the conversation's tools, not all of them, and a search
    /// for the rest (issue 55): said when the choice is made, and whenever the model's search
    /// adds to it. `offered` are the tools given, in order (display names); `found` the ones
    /// just added by a search.
    ToolsOffered {
        offered: Vec<String>,
        of: u32,
        found: Vec<String>,
        why: String,
    },
    /// What the next request to the model holds, in tokens, and of how much (issue 55): said
    /// before each request is sent, once it is fitted to the window.
    ContextUsed {
        used: crate::store::ContextUse,
    },
    /// The conversation's history did not fit the model's window (issue 55): its oldest turns
    /// were summarised (`summary`, kept), or left out of what the model reads when summarising
    /// failed. The messages stay in the conversation either way; `message` says what happened.
    HistoryFitted {
        summary: Option<crate::store::Summary>,
        left_out: u32,
        message: String,
    },
    ToolCallProposed {
        call: ProposedCall,
    },
    /// The run waits until the person answers `request_id` for each call.
    ApprovalRequired {
        request_id: String,
        calls: Vec<ApprovalItem>,
    },
    /// A call was allowed (and how) or denied (and why).
    ToolDecided {
        call_id: String,
        decision: crate::store::ToolDecision,
        /// Who or what decided; `None` for a call denied before anyone was asked.
        scope: Option<crate::store::ApprovalScope>,
        reason: Option<String>,
        /// What decided, in the person's words ([`crate::store::ToolRun::decided_by`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        decided_by: Option<String>,
    },
    ToolStarted {
        call_id: String,
    },
    /// The model's few words on what a running call does (Settings › Describe each call):
    /// model text, shown as plain text.
    ToolDescribed {
        call_id: String,
        description: String,
    },
    /// The server answered a running call with a task (the Tasks extension): the call follows
    /// it, and its card can go on without it.
    ToolTask {
        call_id: String,
        task_id: String,
    },
    /// The server reported progress on a running call (its message is server text).
    ToolProgress {
        call_id: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    ToolFinished {
        call_id: String,
        is_error: bool,
        /// What the model gets (capped, with a visible marker when cut), or its first
        /// [`crate::store::TOOL_PREVIEW_CHARS`] characters when longer.
        content: String,
        /// How many characters the whole has when `content` is only its start (the tool
        /// message, saved next, has it whole).
        full_length: Option<i64>,
        duration_ms: u64,
        /// Whether its Retry can run it again (it failed; see [`crate::store::ToolRun::retry_refusal`]).
        can_retry: bool,
        /// Whether `content` is the server's answer, not Switchboard's words about the call
        /// ([`crate::store::ToolRun::answered`]).
        answered: bool,
        /// Whether the result has more than text to show ([`crate::store::ToolRun::rich`]).
        rich: bool,
        /// The files the result carried, kept (the tool message carries them too): the canvas
        /// lists them.
        artifacts: Vec<crate::attachments::Attachment>,
        /// The SHA-256 of the file the result asked the canvas to open at (seed 002's
        /// `display.open_canvas` and `primary_file`).
        open_canvas: Option<String>,
        /// What decided it ran, and what the person did with its result when they reviewed it
        /// ([`crate::store::ToolRun::decided_by`], as saved).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        decided_by: Option<String>,
        /// The server's task the call ran as, and where it stands: `background` when the
        /// person went on without it (its result comes later in the conversation).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        task: Option<crate::store::CallTask>,
    },
    /// A message is complete and saved (user, assistant or tool), in full.
    MessageSaved {
        message: Message,
    },
    RunFinished {
        reason: StopReason,
        /// What a person should know about why it ended, when it is not the usual.
        message: Option<String>,
    },
    /// Something failed; `retryable` when sending again may work (a 429, a dropped stream).
    Error {
        message: String,
        retryable: bool,
    },
    /// An event of one model's run in a comparison: `lane` is the model's place (from 0) in
    /// the order the models were asked for.
    Lane {
        lane: u32,
        provider: String,
        model: String,
        event: Box<RunEvent>,
    },
    /// A comparison ended: its answers are branches of the conversation after the question,
    /// the one shown starting at `message_id` (none: no model answered).
    ComparisonFolded {
        message_id: Option<String>,
    },
}

/// Where a run sends its events. Sending never fails the run: a window that went away just
/// stops listening.
pub trait EventSink: Send + Sync {
    fn send(&self, event: RunEvent);

    /// Who listens through this sink, when one listener can come back with a new sink (a
    /// window that reloads): a run keeps one sink per listener, the newest, so the sinks of a
    /// page that is gone are dropped instead of being sent every event. `None` (the command
    /// line, tests) is never replaced.
    fn listener(&self) -> Option<&str> {
        None
    }
}

impl<F: Fn(RunEvent) + Send + Sync> EventSink for F {
    fn send(&self, event: RunEvent) {
        self(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_json_shape_of_events_is_pinned() {
        let cases = [
            (
                RunEvent::Status {
                    text: "Thinking…".into(),
                },
                json!({"type": "status", "text": "Thinking…"}),
            ),
            (
                RunEvent::TextDelta {
                    message_id: "m1".into(),
                    text: "Hi".into(),
                },
                json!({"type": "text_delta", "message_id": "m1", "text": "Hi"}),
            ),
            (
                RunEvent::ToolDecided {
                    call_id: "c1".into(),
                    decision: crate::store::ToolDecision::Denied,
                    scope: Some(crate::store::ApprovalScope::Once),
                    reason: Some("not now".into()),
                    decided_by: None,
                },
                json!({"type": "tool_decided", "call_id": "c1", "decision": "denied", "scope": "once", "reason": "not now"}),
            ),
            (
                RunEvent::ToolProgress {
                    call_id: "c1".into(),
                    progress: 3.0,
                    total: Some(8.0),
                    message: None,
                },
                json!({"type": "tool_progress", "call_id": "c1", "progress": 3.0, "total": 8.0, "message": null}),
            ),
            (
                RunEvent::ToolFinished {
                    call_id: "c1".into(),
                    is_error: true,
                    content: "boom".into(),
                    full_length: None,
                    duration_ms: 12,
                    can_retry: true,
                    answered: false,
                    rich: false,
                    artifacts: Vec::new(),
                    open_canvas: None,
                    decided_by: None,
                    task: None,
                },
                json!({"type": "tool_finished", "call_id": "c1", "is_error": true, "content": "boom", "full_length": null, "duration_ms": 12, "can_retry": true, "answered": false, "rich": false, "artifacts": [], "open_canvas": null}),
            ),
            (
                RunEvent::ToolCallProposed {
                    call: ProposedCall {
                        call_id: "retry-1".into(),
                        message_id: "m2".into(),
                        wire_name: "time__get_current_time".into(),
                        server: Some("time".into()),
                        tool: Some("get_current_time".into()),
                        display_name: "time · Get Current Time".into(),
                        arguments: "{}".into(),
                        retry_of: Some(CallRef {
                            message_id: "m1".into(),
                            call_id: "c1".into(),
                        }),
                    },
                },
                json!({"type": "tool_call_proposed", "call": {
                    "call_id": "retry-1", "message_id": "m2", "wire_name": "time__get_current_time",
                    "server": "time", "tool": "get_current_time",
                    "display_name": "time · Get Current Time", "arguments": "{}",
                    "retry_of": {"message_id": "m1", "call_id": "c1"}}}),
            ),
            (
                RunEvent::ToolDescribed {
                    call_id: "c1".into(),
                    description: "Reading the project README".into(),
                },
                json!({"type": "tool_described", "call_id": "c1", "description": "Reading the project README"}),
            ),
            (
                RunEvent::RunFinished {
                    reason: StopReason::RetryFailed,
                    message: None,
                },
                json!({"type": "run_finished", "reason": "retry_failed", "message": null}),
            ),
            (
                RunEvent::RunFinished {
                    reason: StopReason::MaxRounds,
                    message: None,
                },
                json!({"type": "run_finished", "reason": "max_rounds", "message": null}),
            ),
            (
                RunEvent::Error {
                    message: "429".into(),
                    retryable: true,
                },
                json!({"type": "error", "message": "429", "retryable": true}),
            ),
            (
                RunEvent::ApprovalRequired {
                    request_id: "r1".into(),
                    calls: vec![ApprovalItem {
                        call_id: "c1".into(),
                        server: "time".into(),
                        tool: "get_current_time".into(),
                        display_name: "time · Get Current Time".into(),
                        description: "d".into(),
                        arguments: "{}".into(),
                        destructive: false,
                        asked_because: "no rule or standing approval lets it run".into(),
                        suggested_rule: None,
                        once_only: false,
                    }],
                },
                json!({"type": "approval_required", "request_id": "r1", "calls": [{
                    "call_id": "c1", "server": "time", "tool": "get_current_time",
                    "display_name": "time · Get Current Time", "description": "d",
                    "arguments": "{}", "destructive": false,
                    "asked_because": "no rule or standing approval lets it run",
                    "suggested_rule": null, "once_only": false}]}),
            ),
        ];
        for (event, expected) in cases {
            assert_eq!(serde_json::to_value(&event).unwrap(), expected);
        }
    }
}
