//! A history longer than the model's window, fitted (issue 55): the oldest turns that do not
//! fit are summarised by the model into one summary, kept (status "Summarising earlier
//! messages…"), which the model reads in its system prompt in their place; when summarising
//! fails they are left out instead, and the conversation says so. Never left out: the system
//! prompt, the newest question and what followed it (a call is never without its result). The
//! messages themselves stay in the database, in search and in exports.

use super::Run;
use crate::agent::fit;
use crate::agent::summary::{
    new_summary, summarise_messages, with_summary, ModelAsked, SUMMARISING,
};
use crate::events::RunEvent;
use crate::providers::{ChatMessage, ChatRequest};
use crate::store::{Message, Role, Summary, UsagePurpose};

/// The messages of `tail` (stored, oldest first) that come before its `n`-th person's message
/// (counting from 0): where the model's messages begin once the first `n` turns are gone.
fn stored_start(tail: &[Message], n: usize) -> usize {
    tail.iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .nth(n)
        .map_or(tail.len(), |(i, _)| i)
}

impl Run<'_> {
    /// `request` with its history fitted into `window`, when it is over: the oldest turns
    /// summarised (after `summary`, the one in force), or left out; and the summary made, when
    /// one was. Unchanged when it fits, or when nothing can be left out (one turn alone is
    /// over: the provider says so). `scale` is how many tokens the request's count finds for
    /// each one the four-bytes estimate finds (at least 1): the estimate measures each turn.
    pub(super) async fn fit_history(
        &self,
        request: ChatRequest,
        summary: Option<&Summary>,
        window: u64,
        scale: f64,
    ) -> (ChatRequest, Option<Summary>) {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let room = (fit::budget(window) as f64 / scale.max(1.0)) as usize;
        let fixed = fit::request_tokens(&ChatRequest {
            messages: Vec::new(),
            ..request.clone()
        });
        if fit::request_tokens(&request) <= room {
            return (request, None);
        }
        // Fitted with room to spare, so the next turns do not each summarise again.
        let target = room.saturating_sub(fixed) / 10 * fit::KEEP_TENTHS;
        let Some(keep) = fit::keep_from(&request.messages, target) else {
            return (request, None);
        };
        let Some(stored) = self.history.as_deref() else {
            return (request, None);
        };
        // The stored messages the request carries: those after the summary in force.
        let from = summary
            .and_then(|s| stored.iter().position(|m| m.id == s.through_message_id))
            .map_or(0, |at| at + 1);
        let tail = &stored[from..];
        let turns_gone = request.messages[..keep]
            .iter()
            .filter(|m| matches!(m, ChatMessage::User { .. }))
            .count();
        let gone = &tail[..stored_start(tail, turns_gone)];
        if gone.is_empty() {
            return (request, None);
        }
        let mut fitted = ChatRequest {
            messages: request.messages[keep..].to_vec(),
            ..request
        };
        let base = self.ctx.setup.system.as_deref();
        let mut made = None;
        match self.summarise(summary, gone, room).await {
            Ok(kept) => {
                fitted.system = Some(with_summary(base, &kept.text));
                let said = kept.summarised as usize;
                let message = if said >= gone.len() {
                    format!(
                        "{said} earlier messages were summarised to fit the model's window of \
                         {window} tokens; they stay in the conversation."
                    )
                } else {
                    format!(
                        "{said} earlier messages were summarised to fit the model's window of \
                         {window} tokens, and {} older ones only named as left out (too many to \
                         summarise at once); they all stay in the conversation.",
                        gone.len() - said
                    )
                };
                made = Some(kept.clone());
                self.ctx.emit(RunEvent::HistoryFitted {
                    left_out: kept.left_out,
                    summary: Some(kept),
                    message,
                });
            }
            Err(why) => {
                let left = u32::try_from(gone.len()).unwrap_or(u32::MAX);
                let note = format!("[{left} earlier messages are left out here.]");
                fitted.system = Some(match summary {
                    Some(previous) => with_summary(base, &format!("{}\n{note}", previous.text)),
                    None => with_summary(base, &note),
                });
                self.ctx.emit(RunEvent::HistoryFitted {
                    summary: None,
                    left_out: left,
                    message: format!(
                        "{left} earlier messages are left out of what the model reads, to fit \
                         its window of {window} tokens: summarising them failed ({why}). They \
                         stay in the conversation."
                    ),
                });
            }
        }
        (fitted, made)
    }

    /// Asks the model to summarise `gone` after `previous`, and keeps the summary.
    async fn summarise(
        &self,
        previous: Option<&Summary>,
        gone: &[Message],
        room: usize,
    ) -> Result<Summary, String> {
        use std::sync::atomic::Ordering;
        if self.ctx.summary_failed.load(Ordering::Relaxed) {
            return Err("it failed earlier in this run".to_owned());
        }
        let failed = |why: String| {
            self.ctx.summary_failed.store(true, Ordering::Relaxed);
            why
        };
        let setup = &self.ctx.setup;
        self.ctx.status(SUMMARISING);
        let mut usage = Vec::new();
        let summarised = summarise_messages(
            ModelAsked {
                provider: setup.provider.as_ref(),
                model: &setup.model,
                load_window: setup.load_window,
            },
            previous.map(|s| s.text.as_str()),
            gone,
            room,
            &self.ctx.cancel,
            &mut usage,
        )
        .await;
        for answer in usage {
            let tokens = super::usage::Tokens::said(
                answer.input_tokens,
                answer.output_tokens,
                answer.cached_input_tokens,
            );
            self.ctx
                .record_usage(UsagePurpose::Summary, None, tokens)
                .await;
        }
        let (text, summarised) = summarised.map_err(|e| failed(e.to_string()))?;
        let left_out = gone.len() - summarised;
        let kept = self
            .ctx
            .services
            .store
            .add_summary(new_summary(
                &self.ctx.setup.conversation_id,
                previous,
                gone,
                text,
                summarised,
                (&setup.provider_name, &setup.model),
            ))
            .await
            .map_err(|e| failed(format!("it could not be kept: {e}")))?;
        tracing::info!(
            summarised,
            left_out,
            "earlier messages summarised to fit the window"
        );
        Ok(kept)
    }
}
