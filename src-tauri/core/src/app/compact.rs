//! Summarising a conversation's earlier messages now, on request (`switchboard conversations
//! compact`): the chat's, as it asks the conversation's model and records what that cost.

use super::App;
use crate::error::CoreError;

impl App {
    /// Summarises a conversation's earlier messages now (`switchboard conversations compact`):
    /// every turn before the newest one that the summary in force does not cover, with the
    /// conversation's model, in requests that fit its window (32,768 tokens when it is not
    /// known). The messages stay. `None`: nothing to summarise.
    ///
    /// # Errors
    /// No such conversation; no model to ask; the provider's error; the database.
    pub async fn compact_conversation(
        &self,
        id: &str,
    ) -> Result<Option<crate::store::Summary>, CoreError> {
        let settings = &self.settings();
        let store = self.store()?;
        let conversation = store.get_conversation(id.to_owned()).await?;
        let request = super::TurnRequest {
            conversation_id: id.to_owned(),
            ..super::TurnRequest::default()
        };
        let (provider_name, model) = self.choose_model(&conversation, &request, settings).await?;
        let provider = self.providers.client(&provider_name).await?;
        let messages = store.list_messages(id.to_owned()).await?;
        let summaries = store.summaries(id.to_owned()).await?;
        let (previous, from) = match crate::store::summary_in_force(&summaries, &messages) {
            Some((summary, at)) => (Some(summary.clone()), at + 1),
            None => (None, 0),
        };
        let tail = &messages[from..];
        let newest = tail
            .iter()
            .rposition(|m| m.role == crate::store::Role::User)
            .unwrap_or(0);
        let gone = &tail[..newest];
        if gone.is_empty() {
            return Ok(None);
        }
        let known = self.providers.window(&provider_name, &model).await?;
        let window = known.as_ref().map_or(COMPACT_WINDOW, |w| w.tokens);
        let load_window = known
            .filter(|w| w.said_by != crate::store::WindowSource::Table)
            .map(|w| w.tokens);
        let mut usage = Vec::new();
        let summarised = crate::agent::summary::summarise_messages(
            crate::agent::summary::ModelAsked {
                provider: provider.as_ref(),
                model: &model,
                load_window,
            },
            previous.as_ref().map(|s| s.text.as_str()),
            gone,
            crate::agent::fit::budget(window),
            &tokio_util::sync::CancellationToken::new(),
            &mut usage,
        )
        .await;
        let price = self
            .usage
            .price(&provider_name, &model)
            .await?
            .map(|p| p.price);
        for answer in &usage {
            let n = |n: Option<u64>| n.unwrap_or(0);
            let signed = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            let (input, output, cached) = (
                n(answer.input_tokens),
                n(answer.output_tokens),
                n(answer.cached_input_tokens),
            );
            let recorded = store
                .record_usage(crate::store::NewUsage {
                    conversation_id: Some(id.to_owned()),
                    message_id: None,
                    provider: provider_name.clone(),
                    model: model.clone(),
                    purpose: crate::store::UsagePurpose::Summary,
                    input_tokens: signed(input),
                    output_tokens: signed(output),
                    cached_input_tokens: signed(cached),
                    cost_pico: price.map(|p| signed(p.cost_with_cache(input, cached, output))),
                })
                .await;
            if let Err(e) = recorded {
                tracing::warn!(error = %e, "a summary's usage was not recorded");
            }
        }
        let (text, summarised) = summarised?;
        let kept = store
            .add_summary(crate::agent::summary::new_summary(
                id,
                previous.as_ref(),
                gone,
                text,
                summarised,
                (&provider_name, &model),
            ))
            .await?;
        Ok(Some(kept))
    }
}

/// The window a summary asked for from the command line plans for when the model's is not known.
const COMPACT_WINDOW: u64 = 32_768;
