//! Saving a call: its record (decision, times, whole result, description) and the tool message
//! the model reads, in one transaction, before the window is shown either.

use super::calls::Call;
use super::{Answer, CallOutcome, Ctx, Run};
use crate::events::RunEvent;
use crate::store::{Message, NewMessage, Role, ToolRun};

/// What decided `call`, as its record keeps it: and, when the person reviewed its result, what
/// they did with it.
pub(super) fn decided_by(call: &Call<'_>, done: &CallOutcome) -> Option<String> {
    match done.reviewed {
        Some(word) => Some(format!(
            "{}; its result {word} by you",
            call.by.as_deref().unwrap_or("allowed")
        )),
        None => call.by.clone(),
    }
}

impl Ctx<'_> {
    /// The record of `call` of `answer` as far as its decision goes: no times, no result. The
    /// same id whether it is written as started ([`Ctx::execute`](super::execute)) or ended.
    pub(super) fn run_record(&self, answer: &Answer, call: &Call<'_>) -> ToolRun {
        let (decision, decision_scope, deny_reason) = call.state.decision();
        let tool = call.tool.as_ref();
        ToolRun {
            id: ToolRun::id_for(&answer.message_id, &call.call.id),
            conversation_id: self.setup.conversation_id.clone(),
            message_id: answer.message_id.clone(),
            call_id: call.call.id.clone(),
            server: tool.map(|t| t.server.clone()).unwrap_or_default(),
            tool: tool.map_or_else(|| call.call.name.clone(), |t| t.tool.clone()),
            display_name: tool.map_or_else(|| call.call.name.clone(), |t| t.display_name.clone()),
            arguments: call.call.raw_arguments.clone(),
            decision,
            decision_scope,
            deny_reason,
            started_at: None,
            finished_at: None,
            is_error: false,
            result: None,
            retry_of: answer.retry_of.clone(),
            description: None,
            can_retry: false,
            answered: false,
            rich: false,
            asked_by: None,
            decided_by: call.by.clone(),
            original: None,
            task: None,
        }
    }

    /// Saves the record of a call and the tool message the model reads, then shows the message
    /// (a long result as a preview). Returns the message as saved, whole, and whether a Retry can
    /// run the call again; `None` when the database failed (the run then stops, saying why).
    pub(super) async fn record(
        &self,
        answer: &Answer,
        call: &Call<'_>,
        done: &CallOutcome,
        description: Option<String>,
    ) -> Option<(Message, bool)> {
        let run = ToolRun {
            started_at: done.started_at,
            finished_at: Some(done.finished_at),
            is_error: done.is_error,
            result: done.full.clone().or_else(|| Some(done.content.clone())),
            rich: done.rich,
            description,
            original: done.original.clone(),
            task: done.task.clone(),
            ..self.run_record(answer, call)
        }
        .with_retry_rule();
        let run = ToolRun {
            decided_by: decided_by(call, done),
            ..run
        };
        let mut message = NewMessage::text(Role::Tool, done.content.clone());
        message.tool_call_id = Some(call.call.id.clone());
        message.name = Some(call.call.name.clone());
        message.is_error = done.is_error;
        message.attachments = done.files.clone();
        let can_retry = run.can_retry;
        match self.services.store.record_tool_call(run, message).await {
            Ok(saved) => {
                self.emit(RunEvent::MessageSaved {
                    message: saved.clone().preview(),
                });
                Some((saved, can_retry))
            }
            Err(e) => {
                self.not_written(&e);
                None
            }
        }
    }
}

impl Run<'_> {
    /// [`Ctx::record`], and the run's copy of the conversation kept in step.
    pub(super) async fn record(&mut self, answer: &Answer, call: &Call<'_>, done: &CallOutcome) {
        if let Some((saved, _)) = self.ctx.record(answer, call, done, None).await {
            self.remember(&saved);
        }
    }
}
