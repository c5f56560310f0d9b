//! Chat commands: send a message (or retry it, or run one failed call again) and stream the
//! run's events over the window's channel, attach to a run under way, stop a run, answer an
//! approval, and the per-conversation tool switches and standing approvals. Runs are `App`'s:
//! it starts them on their own tasks, keeps their tokens and awaits them at quit.

use std::sync::Arc;

use super::{commands, Cx, Sink};
use crate::agent::approval::ReviewVerdict;
use crate::agent::controls::CallControl;
use crate::agent::ApprovalAnswer;
use crate::app::{CallRef, CompareRequest, ComparedModel, ConversationTool, TurnRequest};
use crate::attachments::AttachmentRef;
use crate::events::{EventSink, RunEvent};
use crate::store::{StandingApproval, ToolToggle};
use crate::IpcError;

/// A run's events onto a window's channel. A window that went away just stops listening; one
/// that reloads attaches again with a new channel, which replaces this one (same window label).
struct WindowSink {
    channel: Sink<RunEvent>,
    window: String,
}

impl EventSink for WindowSink {
    fn send(&self, event: RunEvent) {
        if !self.channel.send(&event) {
            tracing::debug!("the window stopped listening to a run");
        }
    }

    fn listener(&self) -> Option<&str> {
        Some(&self.window)
    }
}

/// The run's events go to `channel` of the calling window.
fn to_window(cx: &Cx, channel: Sink<RunEvent>) -> Arc<dyn EventSink> {
    Arc::new(WindowSink {
        channel,
        window: cx.window.clone(),
    })
}

/// Starts a turn with its events going to the window's channel; its run id.
async fn start(
    cx: &Cx,
    request: TurnRequest,
    on_event: Sink<RunEvent>,
) -> Result<String, IpcError> {
    Ok(cx
        .app
        .start_turn(request, to_window(cx, on_event))
        .await?
        .run_id)
}

commands! {
    /// Starts a turn (`text` `null` retries from the conversation as it is), carrying the kept
    /// files `attachments` names, and returns its run id; every event of the run arrives on
    /// `on_event`, the last being `run_finished`.
    async fn send_message(
        cx,
        conversation_id: String,
        text: Option<String>,
        on_event: Sink<RunEvent>,
        attachments: Option<Vec<AttachmentRef>>,
    ) -> String {
        let request = TurnRequest {
            conversation_id,
            text,
            attachments: attachments.unwrap_or_default(),
            ..TurnRequest::default()
        };
        // A new message is what the composer held; a retry is not.
        if request.text.is_some() {
            Ok(cx.app.send_composed(request, to_window(cx, on_event)).await?.run_id)
        } else {
            start(cx, request, on_event).await
        }
    }

    /// Runs a failed call again (its card's Retry), through the same approvals, and lets the
    /// model go on when it works; returns the run id like `send_message`.
    async fn retry_tool_call(
        cx,
        conversation_id: String,
        message_id: String,
        call_id: String,
        on_event: Sink<RunEvent>,
    ) -> String {
        let request = TurnRequest {
            conversation_id,
            retry_call: Some(CallRef { message_id, call_id }),
            ..TurnRequest::default()
        };
        start(cx, request, on_event).await
    }

    /// Asks two to four models the same question at once (each its own tool loop and
    /// approvals); returns the comparison's run id. Every event arrives on `on_event`, those of
    /// each model's run wrapped in `lane` with its model; `comparison_folded` says where the
    /// answers are kept, and `run_finished` ends it. Stop with `stop_run`: the comparison's id
    /// stops all, a lane's one.
    async fn compare_models(
        cx,
        conversation_id: String,
        text: String,
        attachments: Option<Vec<AttachmentRef>>,
        models: Vec<ComparedModel>,
        on_event: Sink<RunEvent>,
    ) -> String {
        let request = CompareRequest {
            conversation_id,
            text,
            attachments: attachments.unwrap_or_default(),
            models: models.into_iter().map(|m| (m.provider, m.model)).collect(),
            ..CompareRequest::default()
        };
        Ok(cx.app.compare_composed(request, to_window(cx, on_event)).await?.run_id)
    }

    /// A window that shows a conversation (again: after a reload, or coming back to it) is
    /// given the run under way there, if any: everything it sent so far, then its live events
    /// on `on_event`. Returns the run id, or `null` when nothing runs there.
    async fn attach_run(cx, conversation_id: String, on_event: Sink<RunEvent>) -> Option<String> {
        Ok(cx.app.attach(&conversation_id, to_window(cx, on_event)))
    }

    /// Stops a run: its model stream and every running tool call. Stopping a run that already
    /// ended does nothing.
    async fn stop_run(cx, run_id: String) -> () {
        cx.app.stop_run(&run_id);
        Ok(())
    }

    /// A running call's card: Cancel (the run goes on, and the model is told) or Go on (a call
    /// its server runs as a task is answered now, and the task is followed outside the run;
    /// its result comes later in the conversation). Returns whether the call was running.
    async fn control_call(cx, message_id: String, call_id: String, control: CallControl) -> bool {
        Ok(cx.app.control_call(&message_id, &call_id, control).await?)
    }

    /// Sends the conversation a task's late result landed in, each time one does (followed
    /// outside its run), until the window goes: the window reloads it if it shows it.
    async fn watch_tasks(cx, on_change: Sink<String>) -> () {
        cx.app.watch_tasks(move |conversation| on_change.send(&conversation));
        Ok(())
    }

    /// Answers an approval request. Only the calls it asked about can be answered; the loop
    /// checks. "For this conversation" and "always" are confirmed in a native dialog first.
    async fn answer_approval(cx, request_id: String, answers: Vec<ApprovalAnswer>) -> () {
        let confirm = cx.host.confirm();
        Ok(cx.app.answer_approval(&request_id, answers, &*confirm).await?)
    }

    /// The person's word on a result the policy put to them before the model reads it: pass
    /// it, cut parts out (the text the model reads), or withhold it.
    async fn answer_result_review(cx, request_id: String, verdict: ReviewVerdict) -> () {
        Ok(cx.app.answer_result_review(&request_id, verdict)?)
    }

    async fn list_conversation_tools(cx, conversation_id: String) -> Vec<ConversationTool> {
        Ok(cx.app.conversation_catalogue(&conversation_id).await?.1)
    }

    /// Switches a server (`tool` `null`) or one tool on or off for a conversation.
    async fn set_conversation_tool(
        cx,
        conversation_id: String,
        server: String,
        tool: Option<String>,
        enabled: bool,
    ) -> () {
        let toggle = ToolToggle { server, tool, enabled };
        Ok(cx.app.set_conversation_tool(&conversation_id, toggle).await?)
    }

    /// Makes this conversation's tool switches the ones new conversations start with.
    async fn set_default_tools(cx, conversation_id: String) -> () {
        Ok(cx.app.set_default_tools_from(&conversation_id).await?)
    }

    /// Turning auto-approve on is confirmed in a native dialog first; off is not.
    async fn set_auto_approve(cx, conversation_id: String, on: bool) -> () {
        let confirm = cx.host.confirm();
        Ok(cx.app.set_auto_approve(&conversation_id, on, &*confirm).await?)
    }

    async fn list_tool_approvals(cx) -> Vec<StandingApproval> {
        Ok(cx.app.tool_approvals().await?)
    }

    /// Adding a standing approval from Settings is confirmed in a native dialog first.
    async fn allow_tool_always(cx, server: String, tool: String) -> () {
        let confirm = cx.host.confirm();
        Ok(cx.app.allow_running_tool_always(&server, &tool, &*confirm).await?)
    }

    async fn revoke_tool_approval(cx, server: String, tool: String, conversation_id: Option<String>) -> () {
        Ok(cx
            .app
            .revoke_tool_approval(&server, &tool, conversation_id.as_deref())
            .await?)
    }

    /// Sends `text` with `attachments` (the files the message had that the person kept, and any
    /// added) in place of the message of yours `message_id` and goes on from there; what
    /// followed it is kept as another branch. Returns the run id like `send_message`.
    async fn edit_message(
        cx,
        conversation_id: String,
        message_id: String,
        text: String,
        attachments: Vec<AttachmentRef>,
        on_event: Sink<RunEvent>,
    ) -> String {
        let request = TurnRequest {
            conversation_id,
            text: Some(text),
            attachments,
            branch_from: Some(message_id),
            ..TurnRequest::default()
        };
        start(cx, request, on_event).await
    }

    /// Asks again for the answer that starts at `message_id` (the first message after a message
    /// of yours); the old answer is kept as another branch. Returns the run id like
    /// `send_message`.
    async fn regenerate(cx, conversation_id: String, message_id: String, on_event: Sink<RunEvent>) -> String {
        let request = TurnRequest {
            conversation_id,
            branch_from: Some(message_id),
            ..TurnRequest::default()
        };
        start(cx, request, on_event).await
    }
}
