//! Summaries of a conversation's earlier messages (issue 55): what the model is asked, in how
//! many requests, and how the summary is kept and read. Used by the loop when a history does
//! not fit the model's window ([`super::round`]) and by `switchboard conversations compact`.

use super::fit;
use crate::providers::ProviderError;
use crate::store::{Message, NewSummary, Summary};

/// What the status line says while the model summarises.
pub const SUMMARISING: &str = "Summarising earlier messages…";

/// The system prompt with the summary of the earlier messages after it.
pub fn with_summary(system: Option<&str>, summary: &str) -> String {
    let earlier = format!(
        "The earlier part of this conversation, summarised (its messages are not repeated \
         here):\n{summary}"
    );
    match system.map(str::trim).filter(|s| !s.is_empty()) {
        Some(system) => format!("{system}\n\n{earlier}"),
        None => earlier,
    }
}

/// The model a summary is asked of.
#[derive(Clone, Copy)]
pub struct ModelAsked<'a> {
    pub provider: &'a dyn crate::providers::Provider,
    pub model: &'a str,
    /// The window to load it with, where its provider lets a request say (Ollama's `num_ctx`).
    pub load_window: Option<u64>,
}

/// The most requests one summary takes: a history longer than that many windows has its
/// oldest messages only named as left out.
pub const MAX_SUMMARY_REQUESTS: usize = 3;

/// Summarises `gone` (stored messages, oldest first) after `previous` with `provider`'s
/// `model`, in at most [`MAX_SUMMARY_REQUESTS`] requests of `room` tokens each: the newest
/// messages that fit are chosen, then summarised oldest to newest, each request carrying the
/// summary so far. The summary and how many of `gone` it covers (the newest); each request's
/// tokens go to `usage`.
///
/// # Errors
/// The provider's error; an empty answer, or no message that fits a request, as
/// [`ProviderError::BadResponse`].
pub async fn summarise_messages(
    model: ModelAsked<'_>,
    previous: Option<&str>,
    gone: &[Message],
    room: usize,
    cancel: &tokio_util::sync::CancellationToken,
    usage: &mut Vec<crate::providers::Completion>,
) -> Result<(String, usize), ProviderError> {
    // Planned from the newest back, with room kept for the summary each request carries.
    // A summary may be as long as its request's answer may be: three tokens a word.
    let longest_summary = "x".repeat(fit::summary_words(room) * 12);
    let mut chunks = Vec::new();
    let mut end = gone.len();
    while end > 0 && chunks.len() < MAX_SUMMARY_REQUESTS {
        let (_, n) = fit::summary_request(model.model, Some(&longest_summary), &gone[..end], room);
        if n == 0 {
            break;
        }
        chunks.push(end - n..end);
        end -= n;
    }
    let mut text = previous.map(str::to_owned);
    let mut summarised = 0;
    for chunk in chunks.into_iter().rev() {
        let (mut request, n) =
            fit::summary_request(model.model, text.as_deref(), &gone[chunk], room);
        // Ollama loads the model with the window it plans for, not its small default.
        request.load_window = model.load_window;
        let answer = model.provider.complete(request, cancel.clone()).await?;
        let said = answer.text.trim().to_owned();
        usage.push(answer);
        if said.is_empty() {
            return Err(ProviderError::BadResponse(
                "the model answered with nothing".to_owned(),
            ));
        }
        text = Some(said);
        summarised += n;
    }
    match text {
        Some(text) if summarised > 0 => Ok((text, summarised)),
        _ => Err(ProviderError::BadResponse(
            "not one message fits a request to summarise it".to_owned(),
        )),
    }
}

/// The summary to keep of `gone` after `previous`: its text (with the older messages it could
/// not cover named as left out), covering through the last of `gone`.
pub fn new_summary(
    conversation_id: &str,
    previous: Option<&Summary>,
    gone: &[Message],
    text: String,
    summarised: usize,
    (provider, model): (&str, &str),
) -> NewSummary {
    let left_out = gone.len() - summarised.min(gone.len());
    let text = if left_out > 0 {
        format!(
            "[{left_out} older messages are left out here: too many to summarise at once.]\n{text}"
        )
    } else {
        text
    };
    NewSummary {
        conversation_id: conversation_id.to_owned(),
        through_message_id: gone.last().map(|m| m.id.clone()).unwrap_or_default(),
        text,
        summarised: u32::try_from(summarised).unwrap_or(u32::MAX),
        left_out: u32::try_from(left_out)
            .unwrap_or(u32::MAX)
            .saturating_add(previous.map_or(0, |p| p.left_out)),
        provider: Some(provider.to_owned()),
        model: Some(model.to_owned()),
    }
}
