//! Running the allowed calls of a round: at most `max_parallel` at once, each one's outcome
//! coming back to the round as it finishes, which records it and then shows it; the model's
//! few words on each running call (when Settings ask for them) come back the same way.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;

use super::calls::{Call, CallState};
use super::{remember, Answer, CallOutcome, Ctx, Effect, Run};
use crate::agent::controls::CallControl;
use crate::agent::{builtin, status};
use crate::events::RunEvent;
use crate::mcp::catalogue::CatalogueTool;
use crate::mcp::server::{CallLimits, McpError};
use crate::mcp::{artifacts, results};
use crate::providers::ToolCall;
use crate::store::{now_ms, CallTask, Message, TaskState, ToolRun};

/// Whether every line of `cut` is a piece of a line of `whole`: text the person cut down, not
/// text written in (which would reach the model as the tool's).
fn drawn_from(cut: &str, whole: &str) -> bool {
    cut.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .all(|line| whole.contains(line))
}

/// What the model reads of a call the person cancelled from its card.
const CANCELLED_BY_PERSON: &str =
    "The person cancelled this call before it finished; it may have done part of its work.";

/// What the model reads of a call whose task goes on without it.
fn went_on_words(tool: &str, task: &str, closing: bool) -> String {
    // The server's id for it, as a name: one short line.
    let task = crate::text::one_line(task, 80);
    let why = if closing {
        "Switchboard was closing while it ran: the task goes on, and is followed again when \
         Switchboard starts"
    } else {
        "The person chose to go on without waiting for it"
    };
    format!(
        "“{tool}” runs as a task on its server (task {task}). {why}: its result will be added to \
         the conversation when the task ends. Do not start the same work again; go on with what \
         does not need its result."
    )
}

/// How often the window hears a running call's progress, at most.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// A call running: its place in the round and its outcome.
type Job<'a> = Pin<Box<dyn Future<Output = (usize, CallOutcome)> + Send + 'a>>;
/// The model describing a call: its place in the round and the words, if they came in time.
type Describing<'a> = Pin<Box<dyn Future<Output = Option<(usize, String)>> + Send + 'a>>;

impl Run<'_> {
    /// Runs the allowed calls and puts each one's outcome in `outcomes` at its place.
    pub(super) async fn execute_allowed(
        &mut self,
        answer: &Answer,
        calls: &[Call<'_>],
        outcomes: &mut [Option<CallOutcome>],
    ) {
        let runnable: Vec<(usize, &Call<'_>, &CatalogueTool)> = calls
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match (&c.state, &c.tool) {
                (CallState::Allowed(_), Some(tool)) => Some((i, c, tool)),
                _ => None,
            })
            .collect();
        if runnable.is_empty() {
            return;
        }
        // The jobs read the run's context while the round records through the conversation.
        let Run { ctx, history, .. } = self;
        let ctx: &Ctx<'_> = ctx;
        let names: Vec<&str> = runnable
            .iter()
            .map(|(_, _, t)| t.display_name.as_str())
            .collect();
        ctx.status(&status::using(&names));
        // Boxed one by one (not mapped by a closure), so the run's future stays `Send` for a
        // caller that spawns it: a closure over borrowed calls defeats the compiler's proof.
        let mut jobs: Vec<Job<'_>> = Vec::with_capacity(runnable.len());
        let mut describing: FuturesUnordered<Describing<'_>> = FuturesUnordered::new();
        let alone = runnable.len() == 1;
        for (i, call, tool) in runnable {
            jobs.push(Box::pin(async move {
                let done = ctx.execute(answer, call, tool).await;
                (i, ctx.reviewed(call, tool, done).await)
            }));
            if let Some(within) = ctx.setup.limits.describe_within {
                describing.push(Box::pin(async move {
                    ctx.describe(call.call, tool, within)
                        .await
                        .map(|words| (i, words))
                }));
            }
        }
        let mut running =
            futures_util::stream::iter(jobs).buffer_unordered(ctx.setup.limits.max_parallel.max(1));
        // Words on a call that is not recorded yet; words that come later are not shown (they
        // would not be saved), and once every call is done they are not waited for.
        let mut words: HashMap<usize, String> = HashMap::new();
        loop {
            tokio::select! {
                next = running.next() => {
                    let Some((i, done)) = next else { break };
                    let call = &calls[i];
                    let mut can_retry = false;
                    let saved = ctx.record(answer, call, &done, words.remove(&i)).await;
                    let shown = match &saved {
                        Some((saved, retry)) => {
                            remember(history, saved);
                            can_retry = *retry;
                            done.content.as_str()
                        }
                        // What could not be saved is not shown: the card says why instead.
                        None => ctx.unwritten().unwrap_or_default(),
                    };
                    let (content, full_length) = Message::preview_of(shown);
                    ctx.emit(RunEvent::ToolFinished {
                        call_id: call.call.id.clone(),
                        is_error: done.is_error || saved.is_none(),
                        content,
                        full_length,
                        duration_ms: done.duration_ms,
                        can_retry,
                        answered: done.full.is_some() && saved.is_some(),
                        rich: done.rich && saved.is_some(),
                        artifacts: if saved.is_some() { done.files.clone() } else { Vec::new() },
                        open_canvas: done.open_canvas.clone().filter(|_| saved.is_some()),
                        decided_by: super::record::decided_by(call, &done),
                        task: done.task.clone().filter(|_| saved.is_some()),
                    });
                    outcomes[i] = Some(done);
                }
                Some(described) = describing.next(), if !describing.is_empty() => {
                    let Some((i, description)) = described else { continue };
                    if outcomes[i].is_some() {
                        continue;
                    }
                    if alone {
                        ctx.status(&format!("{description}…"));
                    }
                    ctx.emit(RunEvent::ToolDescribed {
                        call_id: calls[i].call.id.clone(),
                        description: description.clone(),
                    });
                    words.insert(i, description);
                }
            }
        }
    }
}

impl Ctx<'_> {
    /// A result the policy has the person review, put to them before the model reads it: passed
    /// as it is, cut (the model reads what is left and that parts were cut), or withheld (the
    /// model reads that it was; so does a run stopped while asking, or no one to ask). Whatever
    /// the model does not read is not kept for it either: not in the record a later
    /// `read_result` reads, not its files, not its rich view. An error result is not asked
    /// about: it says what went wrong, not what a server found.
    async fn reviewed(
        &self,
        call: &Call<'_>,
        tool: &CatalogueTool,
        mut done: CallOutcome,
    ) -> CallOutcome {
        use crate::agent::approval::{ReviewRequest, ReviewVerdict};
        // Only what the server answered (an error it reported included) is put to the person;
        // Switchboard's own words about a call (a timeout, a crash) are not the server's.
        if done.full.is_none() || !self.is_reviewed(call.call, tool) {
            return done;
        }
        let request = ReviewRequest {
            request_id: crate::store::new_id(),
            conversation_id: self.setup.conversation_id.clone(),
            call_id: call.call.id.clone(),
            display_name: tool.display_name.clone(),
            content: done.content.clone(),
        };
        self.emit(RunEvent::ResultReviewRequired {
            request_id: request.request_id.clone(),
            call_id: request.call_id.clone(),
            display_name: request.display_name.clone(),
            content: request.content.clone(),
        });
        self.status(status::REVIEWING);
        let verdict = tokio::select! {
            verdict = self.services.approver.review(request) => verdict,
            () = self.cancel.cancelled() => None,
        };
        let original = done.full.clone().unwrap_or_else(|| done.content.clone());
        match verdict {
            // What the person passed is what they saw: a result cut to the model's share is
            // not kept whole for `read_result` to read the part they did not see.
            Some(ReviewVerdict::Pass) => done.reviewed = Some("passed"),
            Some(ReviewVerdict::Cut { text }) if !drawn_from(&text, &done.content) => {
                tracing::warn!(call = %call.call.id, "a cut result had words of its own; withheld");
                done.content = "The user withheld this tool's result: the tool ran, and you are not shown what it returned.".to_owned();
                done.reviewed = Some("withheld");
                done.effect = Effect::Neutral;
            }
            Some(ReviewVerdict::Cut { text }) => {
                done.content = format!(
                    "{}\n\n[The user cut parts of this result out before you read it.]",
                    text.trim_end()
                );
                done.reviewed = Some("cut");
            }
            Some(ReviewVerdict::Withhold) | None => {
                done.content = "The user withheld this tool's result: the tool ran, and you are not shown what it returned.".to_owned();
                done.reviewed = Some("withheld");
                done.effect = Effect::Neutral;
            }
        }
        // The files a passed result carries are kept now; a cut or withheld one's never are.
        if done.reviewed == Some("passed") {
            if let Ok(value) = serde_json::from_str::<Value>(&original) {
                (done.files, done.open_canvas) = self.keep_artifacts(&call.call.id, &value).await;
            }
        }
        done.original = Some(original);
        done.full = None;
        done.rich = false;
        done
    }

    /// Whether the person sees what `call` returns before the model does.
    fn is_reviewed(&self, call: &ToolCall, tool: &CatalogueTool) -> bool {
        let (server, reviewed_tool) = super::calls::policy_target(call, tool);
        self.setup.policy.is_reviewed(server, reviewed_tool)
    }

    /// Asks the model for a few words on what `call` does, waiting at most `within`. Late,
    /// failed or empty: `None`, and the status line keeps the tool's name.
    async fn describe(
        &self,
        call: &ToolCall,
        tool: &CatalogueTool,
        within: std::time::Duration,
    ) -> Option<String> {
        let request = status::describe_request(&self.setup.model, tool, call);
        let asked = self
            .setup
            .provider
            .complete(request, self.cancel.child_token());
        let asked_at = tokio::time::Instant::now();
        // `timeout` hands back an answer that was ready when it was next polled even if that
        // was after the deadline (a busy machine polls late): a late answer is late all the same.
        let answer = match tokio::time::timeout(within, asked).await {
            Ok(Ok(answer)) => {
                // Late or not, the model answered: what it cost counts.
                let tokens = super::usage::Tokens::said(
                    answer.input_tokens,
                    answer.output_tokens,
                    answer.cached_input_tokens,
                );
                self.record_usage(crate::store::UsagePurpose::Description, None, tokens)
                    .await;
                if asked_at.elapsed() > within {
                    tracing::debug!(?within, "the description of a call came too late");
                    return None;
                }
                answer.text
            }
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "no description of a call");
                return None;
            }
            Err(_) => {
                tracing::debug!(?within, "the description of a call came too late");
                return None;
            }
        };
        status::tidy_description(&answer)
    }

    /// Runs one call on its server, passing its progress on to the window. It is recorded as
    /// started first; a call that cannot be recorded does not run, and neither does any call
    /// after a record failed.
    async fn execute(&self, answer: &Answer, call: &Call<'_>, tool: &CatalogueTool) -> CallOutcome {
        if self.unwritten().is_some() {
            return CallOutcome::error(
                "The call was not run: Switchboard cannot write to its database.".to_owned(),
                Effect::Neutral,
            );
        }
        let started_at = now_ms();
        let started = ToolRun {
            started_at: Some(started_at),
            ..self.run_record(answer, call)
        };
        if let Err(e) = self.services.store.record_tool_started(started).await {
            self.not_written(&e);
            let mut outcome = CallOutcome::error(
                format!("The call was not run: Switchboard could not record it first ({e})."),
                Effect::Failed,
            );
            outcome.finished_at = now_ms();
            return outcome;
        }
        let call = call.call;
        self.emit(RunEvent::ToolStarted {
            call_id: call.id.clone(),
        });
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
        // The card's Cancel and Go on reach the call here.
        let run_id = ToolRun::id_for(&answer.message_id, &call.id);
        let mut controls = self.services.controls.register(&run_id);
        // The server's task, once it answers the call with one; whether the person cancelled
        // the call, or went on without its task.
        let mut task: Option<String> = None;
        let mut cancelled = false;
        let mut went_on = false;
        let mut closing = false;
        let (progress, mut reports) = tokio::sync::mpsc::unbounded_channel();
        let running: crate::agent::tools::CallFuture<'_> = if tool.server == builtin::SERVER {
            match tool.tool.as_str() {
                builtin::SEARCH_TOOLS => {
                    Box::pin(std::future::ready(self.search_tools(&arguments)))
                }
                builtin::READ_RESULT => Box::pin(async move { self.read_result(&arguments).await }),
                builtin::LOAD_SKILL => Box::pin(async move { self.load_skill(&arguments).await }),
                builtin::SEARCH_FILES => {
                    Box::pin(async move { self.search_project_files(&arguments).await })
                }
                builtin::REMEMBER => Box::pin(async move { self.remember(&arguments).await }),
                builtin::RUN_SCRIPT => {
                    let cancel = cancel.clone();
                    Box::pin(async move { self.run_skill_script(&arguments, &cancel, idle).await })
                }
                _ => builtin::call(self.services.tools, &tool.tool, &arguments, limits),
            }
        } else {
            self.services.tools.call(
                &tool.server,
                &tool.tool,
                arguments,
                limits,
                &cancel,
                Some(&progress),
            )
        };
        tokio::pin!(running);
        // A server may send progress as fast as it likes; the window gets the newest at most
        // every PROGRESS_EVERY, so a flood of notifications cannot flood it.
        let mut newest = None;
        let mut every = tokio::time::interval(PROGRESS_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let result = loop {
            tokio::select! {
                // A result that came is taken before a Go on asked at the same moment.
                biased;
                result = &mut running => break result,
                Some(mut report) = reports.recv() => {
                    if let (None, Some(id)) = (&task, report.task.take()) {
                        self.services.controls.waits_for_task(&run_id);
                        self.task_started(&run_id, &call.id, &id).await;
                        task = Some(id);
                    }
                    newest = Some(report);
                }
                Some(control) = controls.requests.recv() => match control {
                    CallControl::Cancel => {
                        cancelled = true;
                        cancel.cancel();
                    }
                    // Only a task goes on without its call: anything else is not followed
                    // outside the run.
                    CallControl::GoOn | CallControl::Closing => {
                        if let Some(id) = &task {
                            if self.services.store.send_task_to_background(run_id.clone()).await.unwrap_or(false) {
                                went_on = true;
                                closing = control == CallControl::Closing;
                                break Ok(Value::String(id.clone()));
                            }
                        }
                    }
                },
                _ = every.tick(), if newest.is_some() => {
                    if let Some(report) = newest.take() {
                        self.emit(RunEvent::ToolProgress {
                            call_id: call.id.clone(),
                            progress: report.progress,
                            total: report.total,
                            message: report.message,
                        });
                    }
                }
            }
        };
        let mut outcome = match result {
            Ok(Value::String(id)) if went_on => {
                // Its task goes on outside the run; the follower of tasks takes it up (once its
                // call is recorded: see `Store::end_background_task`), or the next start does.
                if !closing {
                    self.services.controls.hand_over();
                }
                let mut outcome = CallOutcome::error(
                    went_on_words(&tool.display_name, &id, closing),
                    Effect::Neutral,
                );
                outcome.is_error = false;
                outcome.task = Some(CallTask {
                    id,
                    state: TaskState::Background,
                });
                outcome
            }
            Ok(value) => {
                let mut text = results::for_model(&value, self.result_cap());
                text.text = results::naming_call(text.text, &call.id);
                // A reviewed result's files are kept only once the person passes it.
                let (files, open_canvas) = if self.is_reviewed(call, tool) {
                    (Vec::new(), None)
                } else {
                    self.keep_artifacts(&call.id, &value).await
                };
                CallOutcome {
                    content: text.text,
                    is_error: text.is_error,
                    effect: if text.is_error {
                        Effect::Failed
                    } else {
                        Effect::Succeeded
                    },
                    full: Some(value.to_string()),
                    rich: results::is_rich(&value),
                    files,
                    open_canvas,
                    started_at: None,
                    finished_at: 0,
                    duration_ms: 0,
                    original: None,
                    reviewed: None,
                    task: None,
                }
            }
            Err(McpError::Cancelled { .. }) if cancelled && !self.cancel.is_cancelled() => {
                CallOutcome::error(CANCELLED_BY_PERSON.to_owned(), Effect::Neutral)
            }
            Err(McpError::Cancelled { .. }) => CallOutcome::error(
                "The call was stopped before it finished; it may have done part of its work."
                    .to_owned(),
                Effect::Neutral,
            ),
            Err(e) => CallOutcome::error(e.to_string(), Effect::Failed),
        };
        if outcome.task.is_none() {
            outcome.task = task.map(|id| CallTask {
                id,
                state: if !outcome.is_error {
                    TaskState::Completed
                } else if matches!(outcome.effect, Effect::Neutral) {
                    TaskState::Cancelled
                } else {
                    TaskState::Failed
                },
            });
        }
        outcome.started_at = Some(started_at);
        outcome.finished_at = now_ms();
        // The card shows what is saved: the two recorded times, not a clock of its own (a
        // window that shows the saved conversation must show the same duration).
        outcome.duration_ms = u64::try_from(outcome.finished_at - started_at).unwrap_or(0);
        outcome
    }

    /// Records that the call runs as the server's task `task` and tells the window, whose card
    /// then offers to go on without it. A record that fails only costs the task its restart.
    async fn task_started(&self, run_id: &str, call_id: &str, task: &str) {
        if let Err(e) = self
            .services
            .store
            .record_call_task(run_id.to_owned(), task.to_owned())
            .await
        {
            tracing::warn!(error = %e, "a call's task was not recorded: it cannot outlive this run");
        }
        self.emit(RunEvent::ToolTask {
            call_id: call_id.to_owned(),
            task_id: task.to_owned(),
        });
    }

    /// Keeps the files a result carries ([`artifacts::from_result`]) in the attachments folder;
    /// returns their records and the one the canvas is to open at. A file that cannot be kept
    /// is left out (logged): the result itself is kept whole either way.
    async fn keep_artifacts(
        &self,
        call_id: &str,
        result: &Value,
    ) -> (Vec<crate::attachments::Attachment>, Option<String>) {
        let found = artifacts::from_result(result);
        for problem in &found.problems {
            tracing::warn!(call = %call_id, %problem, "a file of a tool's result was left out");
        }
        if found.files.is_empty() {
            return (Vec::new(), None);
        }
        let files = self.setup.files.clone();
        let kept = tokio::task::spawn_blocking(move || {
            let mut kept = Vec::new();
            let mut primary = None;
            for file in &found.files {
                match files.keep_produced(&file.name, file.mime.as_deref(), &file.bytes) {
                    Ok(record) => {
                        if found.primary.as_ref() == Some(&file.name) {
                            primary = Some(record.sha256.clone());
                        }
                        kept.push(record);
                    }
                    Err(e) => tracing::warn!(file = %file.name, error = %e, "a file of a tool's result was not kept"),
                }
            }
            // The canvas opens at the primary file, else at the first one kept.
            let open_at = found
                .open_canvas
                .then(|| primary.or_else(|| kept.first().map(|f| f.sha256.clone())))
                .flatten();
            (kept, open_at)
        })
        .await;
        kept.unwrap_or_default()
    }
}
