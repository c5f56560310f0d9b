//! What a run's requests cost: each answer's tokens priced with the run's price (when the
//! model has one) and recorded once per request, answers' rounds and status-line descriptions
//! alike; and the window a provider names when it refuses a request over it, kept for the
//! model (issue 55). A record that cannot be written is logged; it never stops the run.

use super::Ctx;
use crate::store::{NewUsage, UsagePurpose};

/// A request's tokens as its provider said them (`cached_input` counted in `input`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tokens {
    pub input: Option<i64>,
    pub output: Option<i64>,
    pub cached_input: Option<i64>,
}

impl Tokens {
    /// Tokens a provider counted (unsigned) as kept (signed, saturating).
    pub fn said(input: Option<u64>, output: Option<u64>, cached_input: Option<u64>) -> Self {
        let n = |n: Option<u64>| n.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        Tokens {
            input: n(input),
            output: n(output),
            cached_input: n(cached_input),
        }
    }
}

impl Ctx<'_> {
    /// What `tokens` cost at the run's price, in pico-dollars; `None` with no price or no
    /// tokens.
    pub(super) fn cost_of(&self, tokens: Tokens) -> Option<i64> {
        if tokens.input.is_none() && tokens.output.is_none() {
            return None;
        }
        let n = |n: Option<i64>| u64::try_from(n.unwrap_or(0)).unwrap_or(0);
        self.setup.price.map(|p| {
            let cost = p.cost_with_cache(n(tokens.input), n(tokens.cached_input), n(tokens.output));
            i64::try_from(cost).unwrap_or(i64::MAX)
        })
    }

    /// Records one request the model answered with `input` and `output` tokens (nothing when
    /// the provider said neither).
    pub(super) async fn record_usage(
        &self,
        purpose: UsagePurpose,
        message_id: Option<&str>,
        tokens: Tokens,
    ) {
        if tokens.input.is_none() && tokens.output.is_none() {
            return;
        }
        let usage = NewUsage {
            conversation_id: Some(self.setup.conversation_id.clone()),
            message_id: message_id.map(str::to_owned),
            provider: self.setup.provider_name.clone(),
            model: self.setup.model.clone(),
            purpose,
            input_tokens: tokens.input.unwrap_or(0),
            output_tokens: tokens.output.unwrap_or(0),
            cached_input_tokens: tokens.cached_input.unwrap_or(0),
            cost_pico: self.cost_of(tokens),
        };
        if let Err(e) = self.services.store.record_usage(usage).await {
            tracing::warn!(error = %e, "a request's tokens and cost were not recorded");
        }
    }

    /// Keeps the window the provider named when it refused a request over it, for this model.
    pub(super) async fn learn_window(&self, tokens: u64) {
        self.learned_window
            .store(tokens, std::sync::atomic::Ordering::Relaxed);
        let learned = self
            .services
            .store
            .set_model_window(
                self.setup.provider_name.clone(),
                self.setup.model.clone(),
                crate::store::WindowSource::Learned,
                Some(tokens),
            )
            .await;
        match learned {
            Ok(()) => tracing::info!(
                provider = %self.setup.provider_name,
                model = %self.setup.model,
                tokens,
                "learned a model's window from the provider's refusal"
            ),
            Err(e) => tracing::warn!(error = %e, "a model's window was not kept"),
        }
    }
}
