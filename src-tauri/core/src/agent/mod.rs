//! The tool loop: one user turn, as many rounds as the model needs. Each round offers the
//! conversation's tools, streams the answer to the sink as it comes, passes each call through
//! the permission pipeline, asks the person about the rest in one dialog, runs the allowed
//! calls concurrently, saves one tool message per call (as each finishes; the model reads them
//! in its order), and goes round again — until the model answers without tools, or a
//! stopping rule ends the run: the round cap (then one last call that forbids tools, so the
//! model answers with what it has), too many failed calls in a row, the run time limit, or
//! the person pressing Stop. Every end is a [`StopReason`] in a `RunFinished` event. Nothing
//! is shown before it is written: text, a call's decision and its result reach the sink only
//! once the database has them.
//!
//! Owns the order of things and the rules; storage, providers and MCP are the layers it calls.

pub mod approval;
pub mod builtin;
pub mod controls;
mod files;
pub mod fit;
pub mod history;
pub mod offer;
#[cfg(test)]
mod paused_clock;
mod round;
pub mod status;
pub mod summary;
pub mod tokens;
pub mod tools;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use approval::{
    ApprovalAnswer, ApprovalRequest, Approver, Decision, FixedApprover, PendingApprovals,
};
pub use tools::ToolSource;

use crate::events::{EventSink, RunEvent, StopReason};
use crate::mcp::catalogue::CatalogueTool;
use crate::mcp::config::Trust;
use crate::policy::Standing;
use crate::providers::{Provider, ToolChoice};
use crate::store::{NewMessage, Role, Store};

/// The limits of one run (from Settings, or the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// Rounds of tool use before the model must answer without tools (1–100).
    pub max_rounds: u32,
    pub run_time_limit: Duration,
    /// How long a tool call may go without an answer or progress, unless its server says.
    pub tool_timeout: Duration,
    /// Calls of one round run at once at most.
    pub max_parallel: usize,
    /// Characters of a tool result the model gets at most.
    pub max_model_chars: usize,
    /// Failed calls in a row that end the run.
    pub max_consecutive_failures: u32,
    /// How often a streaming answer is written to the database, and then shown: the window
    /// never shows text that is not written yet.
    pub checkpoint_every: Duration,
    /// When set, the model is asked for a few words on what each call does while it runs,
    /// waited for this long at most; else the status line names the tool.
    pub describe_within: Option<Duration>,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_rounds: 10,
            run_time_limit: Duration::from_secs(600),
            tool_timeout: Duration::from_secs(60),
            max_parallel: 8,
            max_model_chars: crate::mcp::results::DEFAULT_MODEL_CHARS,
            max_consecutive_failures: 3,
            // Smooth enough to read as a stream; ~20 small writes a second while one streams.
            checkpoint_every: Duration::from_millis(50),
            describe_within: None,
        }
    }
}

/// What the person decided about a server in `mcp.json` that bears on its calls.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerRules {
    pub trust: Trust,
    pub timeout: Option<Duration>,
    /// The folders it was given as roots: a path argument outside them asks.
    pub roots: Vec<std::path::PathBuf>,
}

/// How a turn begins.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnStart {
    /// A new message from the person, with the files attached to it (kept already, judged
    /// again from their bytes).
    Message {
        text: String,
        attachments: Vec<crate::attachments::Attachment>,
    },
    /// The model again, from the conversation as it is (Retry after a provider error).
    Again,
    /// A failed call again, from its card's Retry; when it succeeds the model goes on with its
    /// result.
    RetryCall(RetryCall),
}

/// A failed call to run again, as the person sees it in a new answer of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryCall {
    /// The call that failed (the first of the chain, when it was a retry itself).
    pub of: crate::events::CallRef,
    /// The call to make: a new id, the tool's name as offered now, the same arguments.
    pub call: crate::providers::ToolCall,
}

/// Everything one run needs, gathered by the app ([`crate::app`]).
pub struct RunSetup {
    pub run_id: String,
    pub conversation_id: String,
    /// How the turn begins.
    pub start: TurnStart,
    pub provider: Arc<dyn Provider>,
    pub provider_name: String,
    pub model: String,
    /// What the model is told first: the conversation's system prompt and the instructions of
    /// the servers whose tools are offered ([`crate::app::system_prompt`]).
    pub system: Option<String>,
    /// What the model can be given besides text (images, PDFs).
    pub media: crate::providers::media::Media,
    /// Where the files attached to the conversation's messages are kept.
    pub files: crate::attachments::AttachmentFiles,
    /// The tools offered to the model this run (already filtered by the conversation's
    /// switches and held-back pins).
    pub tools: Vec<CatalogueTool>,
    pub rules: HashMap<String, ServerRules>,
    /// The rules of the person's and the organisation's policy files.
    pub policy: std::sync::Arc<crate::policy::Policy>,
    /// The tools a rule blocks outright, by the name the model would call them, and the rule:
    /// never offered, and a call that names one anyway is refused saying so.
    pub blocked: HashMap<String, String>,
    /// The standing approvals that hold, and where one given during the run is kept.
    pub standing: Standing,
    /// A comparison's lane: the conversation whose messages come before the lane's own in
    /// what the model reads.
    pub history_from: Option<String>,
    pub auto_approve: bool,
    pub limits: RunLimits,
    /// What the model costs, when a price is known: each answer's cost is kept with it.
    pub price: Option<crate::price::Price>,
    /// The tools of the running servers that are not offered, and why (display name, reason):
    /// said at the run's start, each as a [`RunEvent::ToolWarning`].
    pub held_back: Vec<(String, String)>,
    /// The window to load the model with, where its provider lets a request say
    /// ([`crate::providers::ChatRequest::load_window`]).
    pub load_window: Option<u64>,
    /// How long a local server keeps the model loaded after each answer (Settings'
    /// `keep_alive`); the server's default when `None`.
    pub keep_alive: Option<String>,
    /// How the model is given tools ([`RunSetup::provider`] is already wrapped for it); a
    /// native model whose server refuses tools in its API is given them by prompt for the
    /// rest of the run.
    pub tool_mode: crate::providers::ToolMode,
    /// The first answer must call a tool ([`crate::app::TurnRequest::require_tool`]).
    pub require_tool: bool,
    /// How the provider's server can hold a model given tools by prompt to the call format.
    pub constraint: crate::providers::prompted::Constraint,
    /// The model's window in tokens, when known from any source.
    pub window: Option<u64>,
    /// The tools the person uses most, most used first, as (server, tool): the ones offered
    /// beside the search when there are too many to offer all ([`offer::Offer`]).
    pub favoured: Vec<(String, String)>,
    /// The provider searches deferred tools itself (Anthropic's tool search, for the models
    /// that take it): used in place of Switchboard's search when not every tool is offered.
    pub provider_searches_tools: bool,
    /// The skills the model may load with `load_skill` (offered in [`RunSetup::tools`] when
    /// there are any).
    pub skills: crate::skills::RunSkills,
    /// The project whose files `search_project_files` reads (offered in [`RunSetup::tools`]
    /// when it has any).
    pub project_id: Option<String>,
    /// The memory `remember` keeps facts in, while it is on (offered in [`RunSetup::tools`]
    /// then).
    pub memory: Option<crate::store::MemoryScope>,
    /// Where the person's own memory switch is read, again when `remember` runs: switched off
    /// while a call waited for approval, nothing is kept.
    pub settings: Option<std::sync::Arc<dyn crate::settings::SettingsSource>>,
    /// The project's folders: the servers the run uses are given them as their roots while it
    /// lasts (and [`RunSetup::rules`] judge path arguments by them).
    pub project_roots: Vec<std::path::PathBuf>,
    /// What of the project's files and the memory [`RunSetup::system`] holds, said with what
    /// the model was given.
    pub given: crate::knowledge::KnowledgeUse,
}

/// The most held-back tools named one by one at a run's start; the rest are counted.
pub const HELD_BACK_SAID: usize = 10;

/// The services a run talks to.
#[derive(Clone, Copy)]
pub struct RunServices<'a> {
    pub store: &'a Store,
    pub tools: &'a dyn ToolSource,
    pub approver: &'a dyn Approver,
    pub sink: &'a dyn EventSink,
    /// The person's requests for one running call (Cancel, Go on) reach it here.
    pub controls: &'a controls::CallControls,
}

/// Runs one turn to its end and says why it ended. Cancelling `cancel` stops the model stream
/// and every running call; what was shown stays saved.
pub async fn run(
    setup: RunSetup,
    services: RunServices<'_>,
    cancel: CancellationToken,
) -> StopReason {
    let stop = RunStop::watch(&cancel, setup.limits.run_time_limit);
    let mut run = round::Run::new(setup, services, stop.token.clone());
    let (reason, message) = turn(&mut run).await;
    let reason = match reason {
        StopReason::Cancelled if stop.timed_out() => StopReason::TimeLimit,
        other => other,
    };
    let message = match reason {
        StopReason::TimeLimit => Some(format!(
            "Stopped: the run took longer than its limit of {} (Settings › Run time limit).",
            status::duration_words(run.ctx.setup.limits.run_time_limit)
        )),
        _ => message,
    };
    stop.token.cancel();
    run.ctx.emit(RunEvent::RunFinished { reason, message });
    reason
}

/// The rounds of one turn, top to bottom.
async fn turn(run: &mut round::Run<'_>) -> (StopReason, Option<String>) {
    run.ctx.emit(RunEvent::RunStarted {
        run_id: run.ctx.setup.run_id.clone(),
        conversation_id: run.ctx.setup.conversation_id.clone(),
    });
    let held = &run.ctx.setup.held_back;
    for (tool, reason) in held.iter().take(HELD_BACK_SAID) {
        run.ctx.emit(RunEvent::ToolWarning {
            tool: tool.clone(),
            message: reason.clone(),
        });
    }
    if held.len() > HELD_BACK_SAID {
        run.ctx.emit(RunEvent::ToolWarning {
            tool: format!("{} more tools", held.len() - HELD_BACK_SAID),
            message: "held back as well; the Servers page says why".to_owned(),
        });
    }
    run.ctx.say_offered(&[]);
    match run.ctx.setup.start.clone() {
        TurnStart::Message { text, attachments } => match run
            .save(NewMessage {
                attachments,
                ..NewMessage::text(Role::User, text)
            })
            .await
        {
            Ok(saved) => run.ctx.emit(RunEvent::MessageSaved { message: saved }),
            Err(e) => return run.ctx.failed(&e.to_string()),
        },
        TurnStart::Again => {}
        TurnStart::RetryCall(retry) => {
            if let Err(end) = run.retry_call(&retry).await {
                return end;
            }
        }
    }
    let max_rounds = run.ctx.setup.limits.max_rounds.max(1);
    let mut failures_in_a_row = 0u32;
    for round in 1..=max_rounds {
        let choice = if round == 1 && run.ctx.setup.require_tool && !run.ctx.setup.tools.is_empty()
        {
            ToolChoice::Required
        } else {
            ToolChoice::Auto
        };
        let answer = match run.ask_model(choice, "Thinking…").await {
            Ok(answer) => answer,
            Err(end) => return end,
        };
        if answer.calls.is_empty() {
            return (StopReason::Completed, None);
        }
        let outcome = run.use_tools(&answer).await;
        if let Some(said) = &outcome.unwritten {
            return run.ctx.failed(said);
        }
        if run.ctx.cancelled() {
            return (StopReason::Cancelled, None);
        }
        failures_in_a_row = outcome.failures_in_a_row(failures_in_a_row);
        if failures_in_a_row >= run.ctx.setup.limits.max_consecutive_failures {
            return (
                StopReason::TooManyFailures,
                Some(format!(
                    "Stopped: {failures_in_a_row} tool calls in a row failed. The last error: {}",
                    outcome.last_error.unwrap_or_default()
                )),
            );
        }
        tracing::debug!(round, calls = answer.calls.len(), "round done");
    }
    // The cap: one last answer with tools forbidden, so the model says what it has.
    match run
        .ask_model(ToolChoice::None, "Writing the answer with what it has…")
        .await
    {
        Ok(_) => (
            StopReason::MaxRounds,
            Some(format!(
                "The model used tools for {max_rounds} rounds, the limit (Settings › Max rounds, or the conversation's profile), and was asked to answer with what it had."
            )),
        ),
        Err(end) => end,
    }
}

/// The run's own token: cancelled by the caller's token or by the time limit, remembering which.
struct RunStop {
    token: CancellationToken,
    timed_out: Arc<AtomicBool>,
}

impl RunStop {
    fn watch(outer: &CancellationToken, limit: Duration) -> RunStop {
        let token = outer.child_token();
        let timed_out = Arc::new(AtomicBool::new(false));
        let (t, flag) = (token.clone(), Arc::clone(&timed_out));
        tokio::spawn(async move {
            tokio::select! {
                () = t.cancelled() => {}
                () = tokio::time::sleep(limit) => {
                    flag.store(true, Ordering::SeqCst);
                    t.cancel();
                }
            }
        });
        RunStop { token, timed_out }
    }

    fn timed_out(&self) -> bool {
        self.timed_out.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    /// The window spawns runs on its runtime, which needs their future to be `Send`.
    #[allow(dead_code, clippy::needless_pass_by_value)]
    fn a_run_can_be_spawned(setup: super::RunSetup, services: super::RunServices<'static>) {
        fn spawnable<T: Send + 'static>(_: T) {}
        spawnable(super::run(
            setup,
            services,
            tokio_util::sync::CancellationToken::new(),
        ));
    }
}
