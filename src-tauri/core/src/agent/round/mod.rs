//! One run's rounds, a step to a file: [`answer`] asks the model (streaming, checkpointed),
//! [`calls`] proposes and decides the calls it made (asking the person where the pipeline
//! says so), [`execute`] runs the allowed ones concurrently and [`record`] saves each call
//! before it is shown. The run owns its state (`&mut self`): the conversation as the model
//! reads it and the standing approvals. What never changes during a run — its setup, the
//! services, the stop token — is [`Ctx`], which the concurrent tool jobs borrow.

mod answer;
mod calls;
mod compact;
mod execute;
mod knowledge;
mod own;
mod record;
mod skills;
mod usage;

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;

use super::{history, RunServices, RunSetup};
use crate::events::{CallRef, RunEvent, StopReason};
use crate::policy::Standing;
use crate::providers::{ChatMessage, ToolCall, ToolSpec};
use crate::store::{now_ms, Message, NewMessage, StoreError};

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
    /// What the conversation says when a call's record could not be written: the run stops.
    pub unwritten: Option<String>,
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
    /// Whether it has more than text for a person to see.
    rich: bool,
    /// The files it carried, kept in the attachments folder: the tool message carries them.
    files: Vec<crate::attachments::Attachment>,
    /// The file the result asked the canvas to open at (seed 002's `display`), its SHA-256.
    open_canvas: Option<String>,
    started_at: Option<i64>,
    finished_at: i64,
    /// How long it ran, as the card shows it.
    duration_ms: u64,
    /// The whole result as the server sent it, when the person reviewed it and the model read
    /// less ([`Ctx::reviewed`](execute)): never kept, only hashed into the audit record.
    original: Option<String>,
    /// The person's word on the result, when they reviewed it ("passed", "cut", "withheld").
    reviewed: Option<&'static str>,
    /// The server's task the call ran as, and how it stands as the call is answered.
    task: Option<crate::store::CallTask>,
}

impl CallOutcome {
    fn error(content: String, effect: Effect) -> Self {
        CallOutcome {
            full: None,
            rich: false,
            files: Vec::new(),
            open_canvas: None,
            content,
            is_error: true,
            effect,
            started_at: None,
            finished_at: now_ms(),
            duration_ms: 0,
            original: None,
            reviewed: None,
            task: None,
        }
    }
}

/// What a run reads and never changes: shared by the calls running at once.
pub(super) struct Ctx<'a> {
    pub setup: RunSetup,
    services: RunServices<'a>,
    cancel: CancellationToken,
    /// The offered tools by the name the model calls them.
    by_wire: HashMap<String, usize>,
    /// What the conversation says once a call's record could not be written: the first such
    /// failure. No call starts after it, and the run stops at the end of the round.
    unwritten: std::sync::OnceLock<String>,
    /// A tool result's share of the window the provider named when it refused a request over
    /// it during this run (0: none): later results are cut to it, and later requests fitted to
    /// it before they are sent, instead of each being refused first.
    learned_share: std::sync::atomic::AtomicUsize,
    /// Switchboard's own search and reader among the run's tools.
    own: super::offer::Own,
    /// Which tools each request offers; the model's searches add to it.
    offer: std::sync::Mutex<super::offer::Offer>,
    /// The window a provider named when it refused a request during this run (0: none).
    learned_window: std::sync::atomic::AtomicU64,
    /// Set once summarising earlier messages failed in this run: later requests leave them
    /// out without asking again.
    summary_failed: std::sync::atomic::AtomicBool,
    /// The model given tools by prompt, once its server refused them in its API during this
    /// run ([`Ctx::provider`]).
    prompted: std::sync::OnceLock<std::sync::Arc<dyn crate::providers::Provider>>,
}

impl Ctx<'_> {
    pub fn emit(&self, event: RunEvent) {
        self.services.sink.send(event);
    }

    /// The most characters of a tool result the model gets in this run: the run's limit, or
    /// the share of a window learned during it when that is less.
    fn result_cap(&self) -> usize {
        match self
            .learned_share
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            0 => self.setup.limits.max_model_chars,
            share => share.min(self.setup.limits.max_model_chars),
        }
    }

    /// The client answers are asked of: the run's, or after its server refused tools in its
    /// API, the same wrapped to give them by prompt.
    fn provider(&self) -> &std::sync::Arc<dyn crate::providers::Provider> {
        self.prompted.get().unwrap_or(&self.setup.provider)
    }

    fn status(&self, text: &str) {
        self.emit(RunEvent::Status {
            text: text.to_owned(),
        });
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Notes that a call's record could not be written: nothing more runs, and the round ends
    /// the run with this said.
    fn not_written(&self, e: &StoreError) {
        let said = format!(
            "Switchboard cannot write to its database: {}. The run stops here: no call starts \
             after this one, and a result that could not be saved is not shown.",
            e.why_not_written()
        );
        tracing::warn!(error = %e, "a call's record could not be written");
        let _ = self.unwritten.set(said);
    }

    /// What the conversation says when a call's record could not be written, if one could not.
    pub fn unwritten(&self) -> Option<&str> {
        self.unwritten.get().map(String::as_str)
    }

    /// Ends the run on an error that is not the provider's (the database).
    pub fn failed(&self, message: &str) -> End {
        self.emit(RunEvent::Error {
            message: message.to_owned(),
            retryable: false,
        });
        (StopReason::Error, Some(message.to_owned()))
    }

    /// The model's window: the one a refusal named during this run, else the one known.
    fn window(&self) -> Option<u64> {
        match self
            .learned_window
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            0 => self.setup.window,
            learned => Some(learned),
        }
    }

    fn offer(&self) -> std::sync::MutexGuard<'_, super::offer::Offer> {
        self.offer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The tools the next request offers; the reader of kept results too when `cut` (a result
    /// it carries was cut).
    fn specs(&self, cut: bool) -> Vec<ToolSpec> {
        self.offer().specs(&self.setup.tools, self.own, cut)
    }

    /// The tools the next request gives the provider to find with its own search.
    fn deferred_specs(&self) -> Vec<ToolSpec> {
        self.offer().deferred_specs(&self.setup.tools, self.own)
    }

    /// Says which tools the model is offered, when it is offered a choice; `found` were just
    /// added by its search.
    pub fn say_offered(&self, found: &[usize]) {
        let Some((offered, of, why)) = self.offered() else {
            return;
        };
        self.emit(RunEvent::ToolsOffered {
            offered,
            of,
            found: found.iter().map(|i| self.tool_name(*i)).collect(),
            why,
        });
    }

    /// Keeps the record of the tools answer `message_id`'s request offered, when the model is
    /// offered a choice of them (the database's record of each round).
    pub async fn record_offered(&self, message_id: &str) {
        let Some((offered, of, why)) = self.offered() else {
            return;
        };
        let offer = crate::store::ToolOffer {
            message_id: message_id.to_owned(),
            offered,
            of,
            why,
        };
        let kept = self
            .services
            .store
            .record_offer(self.setup.conversation_id.clone(), offer)
            .await;
        if let Err(e) = kept {
            tracing::warn!(error = %e, "the record of the tools offered could not be kept");
        }
    }

    /// The tools the next request offers (display names, the reader of kept results left out),
    /// of how many the conversation has, and why; `None` when every tool is offered.
    fn offered(&self) -> Option<(Vec<String>, u32, String)> {
        let (offered, why, provider_searches) = {
            let offer = self.offer();
            if !offer.is_chosen() {
                return None;
            }
            (
                offer.offered(&self.setup.tools, self.own, false),
                offer.why().to_owned(),
                offer.provider_searches(),
            )
        };
        let of = self.setup.tools.len()
            - usize::from(self.own.search.is_some())
            - usize::from(self.own.read_result.is_some())
            - usize::from(self.own.skill.is_some());
        let mut names: Vec<String> = offered.iter().map(|i| self.tool_name(*i)).collect();
        // The provider's own search stands where Switchboard's would.
        if provider_searches {
            names.push(super::offer::PROVIDER_SEARCH.to_owned());
        }
        Some((names, u32::try_from(of).unwrap_or(u32::MAX), why))
    }

    fn tool_name(&self, i: usize) -> String {
        self.setup.tools[i].display_name.clone()
    }
}

/// Keeps a copy of the conversation (once read) in step with a message just saved.
fn remember(history: &mut Option<Vec<Message>>, saved: &Message) {
    if let Some(messages) = history.as_mut() {
        match messages.iter_mut().rev().find(|m| m.id == saved.id) {
            Some(old) => old.clone_from(saved),
            None => messages.push(saved.clone()),
        }
    }
}

pub(super) struct Run<'a> {
    pub ctx: Ctx<'a>,
    /// The standing approvals, with those the person gives during this run.
    standing: Standing,
    /// The conversation as saved, read once when the first round asks the model and kept up
    /// to date with every message the run saves, so a round does not read it all again.
    history: Option<Vec<Message>>,
    /// The conversation's attached files, made ready for the model once.
    files: history::GivenFiles,
    /// Counts each request's tokens before it is sent, calibrated by what the provider says.
    counter: super::tokens::Counter,
    /// The sources of untrusted content this run has read from (servers' names), in the
    /// order read: from then on another server's tools that are not read-only ask.
    tainted_by: Vec<String>,
}

impl<'a> Run<'a> {
    pub fn new(mut setup: RunSetup, services: RunServices<'a>, cancel: CancellationToken) -> Self {
        use super::builtin;
        let skill = setup
            .tools
            .iter()
            .position(|t| t.server == builtin::SERVER && t.tool == builtin::LOAD_SKILL);
        let own = super::offer::Own {
            search: Some(builtin::add(&mut setup.tools, builtin::search_tools_tool())),
            read_result: Some(builtin::add(&mut setup.tools, builtin::read_result_tool())),
            skill,
        };
        let offer = super::offer::Offer::new(&setup.tools, own, setup.window, &setup.favoured)
            .with_provider_search(own, setup.provider_searches_tools);
        let by_wire = setup
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.wire_name.clone(), i))
            .collect();
        let standing = setup.standing.clone();
        let counter = super::tokens::Counter::for_model(&setup.model)
            .with_skills_tool(skill.map(|i| setup.tools[i].wire_name.clone()));
        counter.warm_up();
        Run {
            ctx: Ctx {
                setup,
                services,
                cancel,
                by_wire,
                unwritten: std::sync::OnceLock::new(),
                learned_share: std::sync::atomic::AtomicUsize::new(0),
                own,
                offer: std::sync::Mutex::new(offer),
                learned_window: std::sync::atomic::AtomicU64::new(0),
                summary_failed: std::sync::atomic::AtomicBool::new(false),
                prompted: std::sync::OnceLock::new(),
            },
            standing,
            tainted_by: Vec::new(),
            history: None,
            files: history::GivenFiles::new(),
            counter,
        }
    }

    pub async fn save(&mut self, message: NewMessage) -> Result<Message, StoreError> {
        let saved = self
            .ctx
            .services
            .store
            .append_message(self.ctx.setup.conversation_id.clone(), message)
            .await?;
        self.remember(&saved);
        Ok(saved)
    }

    /// Keeps the run's copy of the conversation in step with a message just saved (new, or a
    /// newer state of one it has).
    fn remember(&mut self, saved: &Message) {
        remember(&mut self.history, saved);
    }

    /// The conversation as the model reads it: from the run's copy, read from the database
    /// the first time; from after the summary in force when there is one (with the summary).
    async fn history_for_model(
        &mut self,
    ) -> Result<(Vec<ChatMessage>, Option<crate::store::Summary>), StoreError> {
        let store = self.ctx.services.store;
        let messages = match self.history.take() {
            Some(messages) => messages,
            None => {
                let mut messages = match &self.ctx.setup.history_from {
                    Some(earlier) => store.list_messages(earlier.clone()).await?,
                    None => Vec::new(),
                };
                messages.extend(
                    store
                        .list_messages(self.ctx.setup.conversation_id.clone())
                        .await?,
                );
                messages
            }
        };
        let summaries = store
            .summaries(self.ctx.setup.conversation_id.clone())
            .await?;
        let (summary, from) = match crate::store::summary_in_force(&summaries, &messages) {
            Some((summary, at)) => (Some(summary.clone()), at + 1),
            None => (None, 0),
        };
        super::files::prepare(
            &messages[from..],
            &self.ctx.setup.files,
            self.ctx.setup.media,
            &mut self.files,
        )
        .await;
        let mut out = history::for_model(&messages[from..], &self.files);
        if let Some(search) = self.ctx.own.search {
            let search = self.ctx.setup.tools[search].wire_name.clone();
            history::without_earlier_calls_of(&mut out, &search);
        }
        self.history = Some(messages);
        Ok((out, summary))
    }
}
