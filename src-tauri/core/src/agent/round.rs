//! The steps of one round, each its own function: ask the model (streaming, checkpointed),
//! then decide, ask about, run and record the tool calls it made.

use std::collections::HashMap;
use std::time::Instant;

use futures_util::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approval::{ApprovalRequest, Decision};
use super::{history, status, RetryCall, RunServices, RunSetup};
use crate::events::{ApprovalItem, CallRef, ProposedCall, RunEvent, StopReason};
use crate::mcp::catalogue::CatalogueTool;
use crate::mcp::results;
use crate::mcp::server::{CallLimits, McpError};
use crate::policy::{self, CallFacts, Standing, Verdict};
use crate::providers::{
    ChatMessage, ChatRequest, FinishReason, ProviderError, ProviderEvent, ToolCall, ToolChoice,
    ToolSpec,
};
use crate::store::{
    new_id, now_ms, ApprovalScope, Message, MessageStatus, MessageUpdate, NewMessage, Role,
    StoreError, ToolRun,
};

/// How a run ended early: the reason and what the person should read.
pub(super) type End = (StopReason, Option<String>);

/// A model's answer that asked for tools (or the answer of its own a retried call gets).
pub(super) struct Answer {
    pub message_id: String,
    pub calls: Vec<ToolCall>,
    /// The call these calls run again, when the person pressed a failed call's Retry.
    pub retry_of: Option<CallRef>,
}

/// What one call did to the count of failures in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Failed,
    Succeeded,
    /// Denied or stopped: neither a failure nor a success.
    Neutral,
}

/// The calls of one round, done.
pub(super) struct ToolsOutcome {
    effects: Vec<Effect>,
    pub last_error: Option<String>,
}

impl ToolsOutcome {
    /// The count of failed calls in a row after this round, given the count before it.
    pub fn failures_in_a_row(&self, mut count: u32) -> u32 {
        for effect in &self.effects {
            match effect {
                Effect::Failed => count += 1,
                Effect::Succeeded => count = 0,
                Effect::Neutral => {}
            }
        }
        count
    }
}

/// One finished call, as recorded and as the model reads it.
struct CallOutcome {
    content: String,
    is_error: bool,
    effect: Effect,
    /// The whole result as the server sent it.
    full: Option<String>,
    started_at: Option<i64>,
    finished_at: i64,
    /// How long it ran, as the card shows it.
    duration_ms: u64,
}

impl CallOutcome {
    fn error(content: String, effect: Effect) -> Self {
        CallOutcome {
            full: None,
            content,
            is_error: true,
            effect,
            started_at: None,
            finished_at: now_ms(),
            duration_ms: 0,
        }
    }
}

/// A call's description as the round knows it.
enum Described {
    Words(String),
    /// The call is recorded: words that come now are too late to be saved.
    Recorded,
}

/// One call of the round on its way through the pipeline.
struct Slot<'t> {
    call: &'t ToolCall,
    tool: Option<&'t CatalogueTool>,
    allowed: Option<ApprovalScope>,
    denied: Option<(Option<ApprovalScope>, String)>,
    outcome: Option<CallOutcome>,
}

pub(super) struct Run<'a> {
    pub setup: RunSetup,
    services: RunServices<'a>,
    cancel: CancellationToken,
    by_wire: HashMap<String, usize>,
    /// The standing approvals, with those the person gives during this run.
    standing: std::sync::Mutex<Standing>,
    /// The conversation as saved, read once when the first round asks the model and kept up
    /// to date with every message the run saves, so a round does not read it all again.
    history: std::sync::Mutex<Option<Vec<Message>>>,
    /// The model's words on the calls of the round under way (by call id), when Settings ask
    /// for them.
    descriptions: std::sync::Mutex<HashMap<String, Described>>,
}

impl<'a> Run<'a> {
    pub fn new(setup: RunSetup, services: RunServices<'a>, cancel: CancellationToken) -> Self {
        let by_wire = setup
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.wire_name.clone(), i))
            .collect();
        let standing = std::sync::Mutex::new(setup.standing.clone());
        Run {
            setup,
            services,
            cancel,
            by_wire,
            standing,
            history: std::sync::Mutex::new(None),
            descriptions: std::sync::Mutex::default(),
        }
    }

    pub fn emit(&self, event: RunEvent) {
        self.services.sink.send(event);
    }

    fn status(&self, text: &str) {
        self.emit(RunEvent::Status {
            text: text.to_owned(),
        });
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    pub async fn save(&self, message: NewMessage) -> Result<Message, StoreError> {
        let saved = self
            .services
            .store
            .append_message(self.setup.conversation_id.clone(), message)
            .await?;
        self.remember(&saved);
        Ok(saved)
    }

    fn history(&self) -> std::sync::MutexGuard<'_, Option<Vec<Message>>> {
        self.history
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps the run's copy of the conversation in step with a message just saved (new, or a
    /// newer state of one it has).
    fn remember(&self, saved: &Message) {
        if let Some(messages) = self.history().as_mut() {
            match messages.iter_mut().rev().find(|m| m.id == saved.id) {
                Some(old) => old.clone_from(saved),
                None => messages.push(saved.clone()),
            }
        }
    }

    /// The conversation as the model reads it: from the run's copy, read from the database
    /// the first time.
    async fn history_for_model(&self) -> Result<Vec<ChatMessage>, StoreError> {
        if let Some(messages) = self.history().as_ref() {
            return Ok(history::for_model(messages));
        }
        let messages = self
            .services
            .store
            .list_messages(self.setup.conversation_id.clone())
            .await?;
        let out = history::for_model(&messages);
        *self.history() = Some(messages);
        Ok(out)
    }

    /// Ends the run on an error that is not the provider's (the database).
    pub fn failed(&self, message: &str) -> End {
        self.emit(RunEvent::Error {
            message: message.to_owned(),
            retryable: false,
        });
        (StopReason::Error, Some(message.to_owned()))
    }

    fn specs(&self) -> Vec<ToolSpec> {
        self.setup.tools.iter().map(super::tools::spec).collect()
    }

    /// Streams one answer into a new assistant message, written to the database at least every
    /// `checkpoint_every` while it grows, and in full at the end. `ToolChoice::None` is the
    /// last answer at the round cap: tools stay listed (Anthropic refuses a history with tool
    /// blocks when `tools` is absent) but are forbidden, and a call made anyway is dropped.
    ///
    /// # Errors
    /// How the run ends when the answer did not complete: stopped, or the provider failed (the
    /// partial answer stays saved, marked).
    pub async fn ask_model(&self, choice: ToolChoice, status_text: &str) -> Result<Answer, End> {
        let store = self.services.store;
        let messages = self
            .history_for_model()
            .await
            .map_err(|e| self.failed(&e.to_string()))?;
        self.status(status_text);
        let mut start = NewMessage::text(Role::Assistant, "");
        start.status = MessageStatus::Streaming;
        start.provider = Some(self.setup.provider_name.clone());
        start.model = Some(self.setup.model.clone());
        let request = ChatRequest {
            model: self.setup.model.clone(),
            messages,
            tools: self.specs(),
            tool_choice: choice,
            ..ChatRequest::default()
        };
        let mut stream = self.setup.provider.stream(request, self.cancel.clone());
        // The request goes out while the answer's row is written; an event that comes before
        // the row is there waits for it.
        let mut early = None;
        let saving = self.save(start);
        tokio::pin!(saving);
        let started = loop {
            tokio::select! {
                saved = &mut saving => break saved,
                next = stream.next(), if early.is_none() => early = Some(next),
            }
        }
        .map_err(|e| self.failed(&e.to_string()))?;
        let id = started.id.clone();
        self.emit(RunEvent::AnswerStarted { message: started });
        let mut got = Streamed::default();
        // Text is shown only once it is written: deltas wait in `got.unshown` until the next
        // checkpoint (the first one at once, then at most every `checkpoint_every`), so an app
        // killed mid-answer loses nothing the person saw.
        let every = self.setup.limits.checkpoint_every;
        let mut written_at: Option<Instant> = None;
        let ended = loop {
            let next = match (early.take(), written_at) {
                (Some(next), _) => next,
                (None, Some(at)) if got.has_unshown() => tokio::select! {
                    biased;
                    next = stream.next() => next,
                    () = tokio::time::sleep_until((at + every).into()) => {
                        self.checkpoint(&id, &mut got).await;
                        written_at = Some(Instant::now());
                        continue;
                    }
                },
                _ => stream.next().await,
            };
            match next {
                None => break Ok(()),
                Some(Err(e)) => break Err(e),
                Some(Ok(event)) => self.take(event, &mut got),
            }
            if got.has_unshown() && written_at.is_none_or(|at| at.elapsed() >= every) {
                self.checkpoint(&id, &mut got).await;
                written_at = Some(Instant::now());
            }
        };
        if choice == ToolChoice::None && !got.calls.is_empty() {
            tracing::warn!(
                n = got.calls.len(),
                "the model asked for tools after they were forbidden; dropped"
            );
            got.calls.clear();
        }
        let mut update = MessageUpdate {
            content: Some(got.text.clone()),
            reasoning: got.reasoning(),
            input_tokens: got.input_tokens,
            output_tokens: got.output_tokens,
            ..MessageUpdate::default()
        };
        let end = match ended {
            Ok(()) => {
                update.status = Some(MessageStatus::Complete);
                update.finish_reason = got.finish.map(finish_text);
                if !got.calls.is_empty() {
                    update.tool_calls = Some(history::calls_to_json(&got.calls));
                }
                None
            }
            Err(ProviderError::Cancelled) => {
                update.status = Some(MessageStatus::Interrupted);
                update.finish_reason = Some("stopped".to_owned());
                Some((StopReason::Cancelled, None))
            }
            Err(e) => {
                let retryable =
                    e.is_retryable() || matches!(e, ProviderError::StreamInterrupted { .. });
                update.status = Some(MessageStatus::Error);
                update.error = Some(e.to_string());
                self.emit(RunEvent::Error {
                    message: e.to_string(),
                    retryable,
                });
                Some((StopReason::Error, Some(e.to_string())))
            }
        };
        let saved = store.update_message(id.clone(), update).await;
        self.show(&id, &mut got);
        match saved {
            Ok(saved) => {
                self.remember(&saved);
                self.emit(RunEvent::MessageSaved { message: saved });
            }
            Err(e) => return Err(self.failed(&e.to_string())),
        }
        match end {
            Some(end) => Err(end),
            None => Ok(Answer {
                message_id: id,
                calls: got.calls,
                retry_of: None,
            }),
        }
    }

    /// Writes the answer so far, then shows what the person has not seen of it yet.
    async fn checkpoint(&self, id: &str, got: &mut Streamed) {
        let checkpoint = MessageUpdate {
            content: Some(got.text.clone()),
            reasoning: got.reasoning(),
            ..MessageUpdate::default()
        };
        if let Err(e) = self
            .services
            .store
            .update_message(id.to_owned(), checkpoint)
            .await
        {
            tracing::warn!(error = %e, "cannot checkpoint the streaming answer");
        }
        self.show(id, got);
    }

    /// Sends the deltas not shown yet, reasoning first.
    fn show(&self, id: &str, got: &mut Streamed) {
        let reasoning = std::mem::take(&mut got.unshown_reasoning);
        if !reasoning.is_empty() {
            self.emit(RunEvent::ReasoningDelta {
                message_id: id.to_owned(),
                text: reasoning,
            });
        }
        let text = std::mem::take(&mut got.unshown_text);
        if !text.is_empty() {
            self.emit(RunEvent::TextDelta {
                message_id: id.to_owned(),
                text,
            });
        }
    }

    /// Takes one provider event into `got` (text waits there to be written, then shown).
    fn take(&self, event: ProviderEvent, got: &mut Streamed) {
        match event {
            ProviderEvent::TextDelta(text) => {
                if got.text.is_empty() {
                    self.status(status::WRITING);
                }
                got.text.push_str(&text);
                got.unshown_text.push_str(&text);
            }
            ProviderEvent::ReasoningDelta(text) => {
                got.reasoning.push_str(&text);
                got.unshown_reasoning.push_str(&text);
            }
            ProviderEvent::ToolCall(call) => got.calls.push(call),
            ProviderEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                got.input_tokens = input_tokens.map(saturating_i64).or(got.input_tokens);
                got.output_tokens = output_tokens.map(saturating_i64).or(got.output_tokens);
            }
            ProviderEvent::Finish(reason) => got.finish = Some(reason),
            ProviderEvent::ToolWarning(w) => self.emit(RunEvent::ToolWarning {
                tool: w.tool,
                message: w.message,
            }),
        }
    }

    /// The calls of one answer: proposed, decided (asking the person where the pipeline says
    /// so), the allowed ones run concurrently, and every result saved before it is shown.
    pub async fn use_tools(&self, answer: &Answer) -> ToolsOutcome {
        let mut slots: Vec<Slot<'_>> = answer
            .calls
            .iter()
            .map(|call| self.propose(answer, call))
            .collect();
        self.ask_person(&mut slots).await;
        // What is shown is written first: a call that will not run is recorded, then shown
        // as decided; a call that runs is recorded as it finishes, then shown finished.
        for slot in &mut slots {
            if slot.allowed.is_none() {
                let done = slot.outcome.take().unwrap_or_else(|| {
                    let (_, reason) = slot.denied.clone().unwrap_or_default();
                    CallOutcome::error(reason, Effect::Neutral)
                });
                self.record(
                    answer,
                    slot.call,
                    slot.tool,
                    None,
                    slot.denied.as_ref(),
                    &done,
                )
                .await;
                slot.outcome = Some(done);
            }
            self.announce_decision(slot);
        }
        self.execute_allowed(answer, &mut slots).await;
        let mut outcome = ToolsOutcome {
            effects: Vec::new(),
            last_error: None,
        };
        for slot in slots {
            let Some(done) = slot.outcome else { continue };
            if done.effect == Effect::Failed {
                outcome.last_error = Some(done.content.clone());
            }
            outcome.effects.push(done.effect);
        }
        if !self.cancelled() {
            self.status(status::READING);
        }
        outcome
    }

    /// Runs a failed call again, as the person asked from its card, in an answer of its own:
    /// through the same pipeline as the model's calls (so the person may be asked again).
    /// The model goes on only when the call succeeded.
    ///
    /// # Errors
    /// How the run ends instead: stopped, the call failed again or did not run, the database.
    pub async fn retry_call(&self, retry: &RetryCall) -> Result<(), End> {
        let mut start = NewMessage::text(Role::Assistant, "");
        start.tool_calls = Some(history::calls_to_json(std::slice::from_ref(&retry.call)));
        start.finish_reason = Some(finish_text(FinishReason::ToolCalls));
        let saved = self
            .save(start)
            .await
            .map_err(|e| self.failed(&e.to_string()))?;
        self.emit(RunEvent::AnswerStarted {
            message: saved.clone(),
        });
        let answer = Answer {
            message_id: saved.id.clone(),
            calls: vec![retry.call.clone()],
            retry_of: Some(retry.of.clone()),
        };
        self.emit(RunEvent::MessageSaved { message: saved });
        let outcome = self.use_tools(&answer).await;
        if self.cancelled() {
            return Err((StopReason::Cancelled, None));
        }
        if outcome.effects.first() == Some(&Effect::Succeeded) {
            return Ok(());
        }
        let message = match outcome.last_error {
            Some(error) => {
                format!("The call failed again, so the model was not asked to go on: {error}")
            }
            None => "The call did not run, so the model was not asked to go on.".to_owned(),
        };
        Err((StopReason::RetryFailed, Some(message)))
    }

    /// Announces a call and checks what can be checked without asking anyone.
    fn propose<'t>(&'t self, answer: &Answer, call: &'t ToolCall) -> Slot<'t> {
        let tool = self.by_wire.get(&call.name).map(|&i| &self.setup.tools[i]);
        self.emit(RunEvent::ToolCallProposed {
            call: ProposedCall {
                call_id: call.id.clone(),
                message_id: answer.message_id.clone(),
                wire_name: call.name.clone(),
                server: tool.map(|t| t.server.clone()),
                tool: tool.map(|t| t.tool.clone()),
                display_name: tool.map_or_else(|| call.name.clone(), |t| t.display_name.clone()),
                arguments: call.raw_arguments.clone(),
                retry_of: answer.retry_of.clone(),
            },
        });
        let mut slot = Slot {
            call,
            tool,
            allowed: None,
            denied: None,
            outcome: None,
        };
        let Some(t) = tool else {
            slot.outcome = Some(CallOutcome::error(
                self.unknown_tool(&call.name),
                Effect::Failed,
            ));
            return slot;
        };
        if let Err(why) = &call.arguments {
            slot.outcome = Some(CallOutcome::error(
                format!(
                    "The call to `{}` was not run: {why}. Send the arguments again as one JSON object that matches the tool's input schema.",
                    call.name
                ),
                Effect::Failed,
            ));
            return slot;
        }
        let standing = self.standing();
        let facts = CallFacts {
            tool: t,
            trust: self
                .setup
                .rules
                .get(&t.server)
                .map(|r| r.trust)
                .unwrap_or_default(),
            auto_approve: self.setup.auto_approve,
            standing: &standing,
        };
        let verdict = policy::decide(&facts);
        drop(standing);
        match verdict {
            Verdict::Allow(scope) => slot.allowed = Some(scope),
            Verdict::Ask => {}
            Verdict::Deny(why) => slot.denied = Some((Some(ApprovalScope::Policy), why)),
        }
        slot
    }

    fn descriptions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Described>> {
        self.descriptions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn standing(&self) -> std::sync::MutexGuard<'_, Standing> {
        self.standing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn unknown_tool(&self, name: &str) -> String {
        let names: Vec<&str> = self
            .setup
            .tools
            .iter()
            .take(50)
            .map(|t| t.wire_name.as_str())
            .collect();
        if names.is_empty() {
            format!("There is no tool named `{name}`: no tools are available in this conversation.")
        } else {
            format!(
                "There is no tool named `{name}`. The tools you can use are: {}.",
                names.join(", ")
            )
        }
    }

    /// Asks the person about every call the pipeline could not decide, in one request, and
    /// applies the answers. An answer for a call not asked about is ignored; a call without an
    /// answer (or a run stopped while waiting) is denied.
    async fn ask_person(&self, slots: &mut [Slot<'_>]) {
        let asked: Vec<usize> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.outcome.is_none() && s.allowed.is_none() && s.denied.is_none())
            .map(|(i, _)| i)
            .collect();
        if asked.is_empty() {
            return;
        }
        let calls: Vec<ApprovalItem> = asked
            .iter()
            .filter_map(|&i| {
                let (call, tool) = (slots[i].call, slots[i].tool?);
                Some(ApprovalItem {
                    call_id: call.id.clone(),
                    server: tool.server.clone(),
                    tool: tool.tool.clone(),
                    display_name: tool.display_name.clone(),
                    description: tool.description.clone(),
                    arguments: pretty(call.arguments.as_ref().ok()),
                    destructive: policy::is_destructive(tool),
                })
            })
            .collect();
        let request = ApprovalRequest {
            request_id: new_id(),
            conversation_id: self.setup.conversation_id.clone(),
            calls: calls.clone(),
        };
        self.emit(RunEvent::ApprovalRequired {
            request_id: request.request_id.clone(),
            calls,
        });
        self.status(status::WAITING_FOR_YOU);
        let answers = tokio::select! {
            answers = self.services.approver.ask(request) => answers,
            () = self.cancel.cancelled() => Vec::new(),
        };
        let by_call: HashMap<&str, _> = answers.iter().map(|a| (a.call_id.as_str(), a)).collect();
        for i in asked {
            let slot = &mut slots[i];
            let Some(tool) = slot.tool else { continue };
            let Some(answer) = by_call.get(slot.call.id.as_str()) else {
                let why = if self.cancelled() {
                    "The run was stopped before the user answered; the call did not run."
                } else {
                    "The user gave no answer; the call did not run."
                };
                slot.denied = Some((None, why.to_owned()));
                continue;
            };
            let standing = match answer.decision {
                Decision::AllowOnce => Some((ApprovalScope::Once, None)),
                Decision::AllowConversation => Some((
                    ApprovalScope::Conversation,
                    Some(Some(self.setup.conversation_id.clone())),
                )),
                Decision::AllowAlways => Some((ApprovalScope::Always, Some(None))),
                Decision::Deny => None,
            };
            match standing {
                Some((scope, remember)) => {
                    if let Some(conversation) = remember {
                        let key = (tool.server.clone(), tool.tool.clone());
                        match &conversation {
                            Some(_) => self.standing().conversation.insert(key),
                            None => self.standing().always.insert(key),
                        };
                        let saved = self
                            .services
                            .store
                            .add_tool_approval(tool.server.clone(), tool.tool.clone(), conversation)
                            .await;
                        if let Err(e) = saved {
                            tracing::warn!(error = %e, "cannot save a standing tool approval");
                        }
                    }
                    slot.allowed = Some(scope);
                }
                None => {
                    let reason = answer
                        .reason
                        .as_deref()
                        .map(str::trim)
                        .filter(|r| !r.is_empty());
                    let text = match reason {
                        Some(r) => format!("The user denied this call. Their reason: {r}"),
                        None => "The user denied this call.".to_owned(),
                    };
                    slot.denied = Some((Some(ApprovalScope::Once), text));
                }
            }
        }
    }

    /// Shows a call as allowed or denied (an unknown tool or bad arguments were never up for a
    /// decision).
    fn announce_decision(&self, slot: &Slot<'_>) {
        let (allowed, scope, reason) = match (&slot.allowed, &slot.denied) {
            (Some(scope), _) => (true, Some(scope.as_str().to_owned()), None),
            (None, Some((scope, why))) => (
                false,
                scope.map(|s| s.as_str().to_owned()),
                Some(why.clone()),
            ),
            (None, None) => return,
        };
        self.emit(RunEvent::ToolDecided {
            call_id: slot.call.id.clone(),
            allowed,
            scope,
            reason,
        });
    }

    /// Runs the allowed calls, at most `max_parallel` at once, each recorded as it finishes.
    async fn execute_allowed(&self, answer: &Answer, slots: &mut [Slot<'_>]) {
        // Descriptions are the round's: nothing of an earlier round (whose call ids may come
        // again) nor of this round's calls that do not run.
        self.descriptions().clear();
        let runnable: Vec<(usize, &ToolCall, &CatalogueTool, ApprovalScope)> = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.outcome.is_none())
            .filter_map(|(i, s)| Some((i, s.call, s.tool?, s.allowed?)))
            .collect();
        if runnable.is_empty() {
            return;
        }
        let names: Vec<&str> = runnable
            .iter()
            .map(|(_, _, t, _)| t.display_name.as_str())
            .collect();
        self.status(&status::using(&names));
        // Boxed one by one (not mapped by a closure), so the run's future stays `Send` for a
        // caller that spawns it: a closure over borrowed calls defeats the compiler's proof.
        let mut jobs: Vec<Job<'_>> = Vec::with_capacity(runnable.len());
        let mut descriptions: Vec<Describing<'_>> = Vec::new();
        let alone = runnable.len() == 1;
        for (i, call, tool, scope) in runnable {
            jobs.push(Box::pin(async move {
                let done = self.execute(call, tool).await;
                self.record(answer, call, Some(tool), Some(scope), None, &done)
                    .await;
                self.emit(RunEvent::ToolFinished {
                    call_id: call.id.clone(),
                    is_error: done.is_error,
                    content: done.content.clone(),
                    duration_ms: done.duration_ms,
                });
                (i, done)
            }));
            if let Some(within) = self.setup.limits.describe_within {
                descriptions.push(Box::pin(self.describe(call, tool, within, alone)));
            }
        }
        let running = futures_util::stream::iter(jobs)
            .buffer_unordered(self.setup.limits.max_parallel.max(1))
            .collect::<Vec<(usize, CallOutcome)>>();
        // The descriptions come while the calls run, and are not waited for once they are done.
        let describing = futures_util::future::join_all(descriptions);
        tokio::pin!(running, describing);
        let mut described = false;
        let done = loop {
            tokio::select! {
                done = &mut running => break done,
                _ = &mut describing, if !described => described = true,
            }
        };
        for (i, outcome) in done {
            slots[i].outcome = Some(outcome);
        }
    }

    /// Asks the model for a few words on what `call` does, waiting at most `within`; shows
    /// them on the call's card, and in the status line when the call runs `alone`. Late,
    /// failed or empty: nothing changes, and the status line keeps the tool's name.
    async fn describe(
        &self,
        call: &ToolCall,
        tool: &CatalogueTool,
        within: std::time::Duration,
        alone: bool,
    ) {
        let request = status::describe_request(&self.setup.model, tool, call);
        let asked = self
            .setup
            .provider
            .complete(request, self.cancel.child_token());
        let answer = match tokio::time::timeout(within, asked).await {
            Ok(Ok(answer)) => answer.text,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "no description of a call");
                return;
            }
            Err(_) => {
                tracing::debug!(?within, "the description of a call came too late");
                return;
            }
        };
        let Some(description) = status::tidy_description(&answer) else {
            return;
        };
        // Words that come after the call was recorded are not shown: they would not be saved.
        match self.descriptions().entry(call.id.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => return,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(Described::Words(description.clone()));
            }
        }
        if alone {
            self.status(&format!("{description}…"));
        }
        self.emit(RunEvent::ToolDescribed {
            call_id: call.id.clone(),
            description,
        });
    }

    async fn execute(&self, call: &ToolCall, tool: &CatalogueTool) -> CallOutcome {
        self.emit(RunEvent::ToolStarted {
            call_id: call.id.clone(),
        });
        let started_at = now_ms();
        let idle = self
            .setup
            .rules
            .get(&tool.server)
            .and_then(|r| r.timeout)
            .unwrap_or(self.setup.limits.tool_timeout);
        let limits = CallLimits {
            idle,
            hard_max: (idle * 10).min(self.setup.limits.run_time_limit),
        };
        let arguments = match &call.arguments {
            Ok(Value::Object(map)) => map.clone(),
            _ => serde_json::Map::new(),
        };
        let cancel = self.cancel.child_token();
        let (progress, mut reports) = tokio::sync::mpsc::unbounded_channel();
        let running = self.services.tools.call(
            &tool.server,
            &tool.tool,
            arguments,
            limits,
            &cancel,
            Some(&progress),
        );
        tokio::pin!(running);
        let result = loop {
            tokio::select! {
                result = &mut running => break result,
                Some(report) = reports.recv() => self.emit(RunEvent::ToolProgress {
                    call_id: call.id.clone(),
                    progress: report.progress,
                    total: report.total,
                    message: report.message,
                }),
            }
        };
        let mut outcome = match result {
            Ok(value) => {
                let text = results::for_model(&value, self.setup.limits.max_model_chars);
                CallOutcome {
                    content: text.text,
                    is_error: text.is_error,
                    effect: if text.is_error {
                        Effect::Failed
                    } else {
                        Effect::Succeeded
                    },
                    full: Some(value.to_string()),
                    started_at: None,
                    finished_at: 0,
                    duration_ms: 0,
                }
            }
            Err(McpError::Cancelled { .. }) => CallOutcome::error(
                "The call was stopped before it finished; it may have done part of its work."
                    .to_owned(),
                Effect::Neutral,
            ),
            Err(e) => CallOutcome::error(e.to_string(), Effect::Failed),
        };
        outcome.started_at = Some(started_at);
        outcome.finished_at = now_ms();
        // The card shows what is saved: the two recorded times, not a clock of its own (a
        // window that shows the saved conversation must show the same duration).
        outcome.duration_ms = u64::try_from(outcome.finished_at - started_at).unwrap_or(0);
        outcome
    }

    /// Saves the record of a call and the tool message the model reads.
    async fn record(
        &self,
        answer: &Answer,
        call: &ToolCall,
        tool: Option<&CatalogueTool>,
        allowed: Option<ApprovalScope>,
        denied: Option<&(Option<ApprovalScope>, String)>,
        done: &CallOutcome,
    ) {
        let store = self.services.store;
        let (decision, scope, deny_reason) = match (allowed, denied) {
            (Some(scope), _) => (Some("allowed"), Some(scope), None),
            (None, Some((scope, why))) => (Some("denied"), *scope, Some(why.clone())),
            (None, None) => (None, None, None),
        };
        let run = ToolRun {
            id: new_id(),
            conversation_id: self.setup.conversation_id.clone(),
            message_id: answer.message_id.clone(),
            call_id: call.id.clone(),
            server: tool.map(|t| t.server.clone()).unwrap_or_default(),
            tool: tool.map_or_else(|| call.name.clone(), |t| t.tool.clone()),
            display_name: tool.map(|t| t.display_name.clone()),
            arguments: call.raw_arguments.clone(),
            decision: decision.map(str::to_owned),
            decision_scope: scope.map(|s| s.as_str().to_owned()),
            deny_reason,
            started_at: done.started_at,
            finished_at: Some(done.finished_at),
            is_error: done.is_error,
            result: done.full.clone().or_else(|| Some(done.content.clone())),
            retry_of: answer.retry_of.clone(),
            description: match self
                .descriptions()
                .insert(call.id.clone(), Described::Recorded)
            {
                Some(Described::Words(words)) => Some(words),
                _ => None,
            },
        };
        let mut message = NewMessage::text(Role::Tool, done.content.clone());
        message.tool_call_id = Some(call.id.clone());
        message.name = Some(call.name.clone());
        message.is_error = done.is_error;
        match store.record_tool_call(run, message).await {
            Ok(saved) => {
                self.remember(&saved);
                self.emit(RunEvent::MessageSaved { message: saved });
            }
            Err(e) => {
                self.failed(&e.to_string());
            }
        }
    }
}

type Job<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = (usize, CallOutcome)> + Send + 'a>>;
type Describing<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>;

/// What a stream has produced so far.
#[derive(Default)]
struct Streamed {
    text: String,
    reasoning: String,
    /// Received but not written and shown yet.
    unshown_text: String,
    unshown_reasoning: String,
    calls: Vec<ToolCall>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    finish: Option<FinishReason>,
}

impl Streamed {
    fn has_unshown(&self) -> bool {
        !self.unshown_text.is_empty() || !self.unshown_reasoning.is_empty()
    }

    fn reasoning(&self) -> Option<String> {
        Some(self.reasoning.clone()).filter(|r| !r.is_empty())
    }
}

fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn finish_text(reason: FinishReason) -> String {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other => "other",
    }
    .to_owned()
}

/// Arguments as the person reads them in the dialog: pretty-printed JSON.
fn pretty(arguments: Option<&Value>) -> String {
    arguments
        .and_then(|a| serde_json::to_string_pretty(a).ok())
        .unwrap_or_else(|| "{}".to_owned())
}
