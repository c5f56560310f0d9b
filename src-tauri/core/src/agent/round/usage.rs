//! What a run's requests cost: each answer's tokens priced with the run's price (when the
//! model has one) and recorded once per request, answers' rounds and status-line descriptions
//! alike. A record that cannot be written is logged; it never stops the run.

use super::Ctx;
use crate::store::{NewUsage, UsagePurpose};

impl Ctx<'_> {
    /// What `input` and `output` tokens cost at the run's price, in pico-dollars; `None` with
    /// no price or no tokens.
    pub(super) fn cost_of(&self, input: Option<i64>, output: Option<i64>) -> Option<i64> {
        if input.is_none() && output.is_none() {
            return None;
        }
        let tokens = |n: Option<i64>| u64::try_from(n.unwrap_or(0)).unwrap_or(0);
        self.setup
            .price
            .map(|p| i64::try_from(p.cost(tokens(input), tokens(output))).unwrap_or(i64::MAX))
    }

    /// Records one request the model answered with `input` and `output` tokens (nothing when
    /// the provider said neither).
    pub(super) async fn record_usage(
        &self,
        purpose: UsagePurpose,
        message_id: Option<&str>,
        input: Option<i64>,
        output: Option<i64>,
    ) {
        if input.is_none() && output.is_none() {
            return;
        }
        let usage = NewUsage {
            conversation_id: Some(self.setup.conversation_id.clone()),
            message_id: message_id.map(str::to_owned),
            provider: self.setup.provider_name.clone(),
            model: self.setup.model.clone(),
            purpose,
            input_tokens: input.unwrap_or(0),
            output_tokens: output.unwrap_or(0),
            cost_pico: self.cost_of(input, output),
        };
        if let Err(e) = self.services.store.record_usage(usage).await {
            tracing::warn!(error = %e, "a request's tokens and cost were not recorded");
        }
    }
}
