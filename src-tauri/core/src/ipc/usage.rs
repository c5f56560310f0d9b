//! What models cost (issue 18): the price table, a person's own price for a model (typed as
//! dollars per million tokens and read in Rust, never as a float in the page), a
//! conversation's total, and the use of every model by day for the Usage page.

use super::commands;
use crate::app::UsageReport;
use crate::store::{ModelPrice, UsageTotal};

commands! {
    /// Every model with a price: the person's, or what its provider's list says.
    async fn list_prices(cx) -> Vec<ModelPrice> {
        Ok(cx.app.usage().prices().await?)
    }

    /// Sets the person's price for `model` of `provider` (dollars per million tokens, as typed:
    /// input and output together, cached input optional); all three empty forgets it. Returns
    /// the price that counts now.
    async fn set_model_price(
        cx,
        provider: String,
        model: String,
        input: Option<String>,
        output: Option<String>,
        cached: Option<String>,
    ) -> Option<ModelPrice> {
        let typed = (input.as_deref(), output.as_deref(), cached.as_deref());
        Ok(cx.app.usage().set_typed_price(&provider, &model, typed).await?)
    }

    /// A conversation's requests added up (every round, description and branch).
    async fn conversation_usage(cx, conversation_id: String) -> UsageTotal {
        Ok(cx.app.usage().of_conversation(&conversation_id).await?)
    }

    /// The use of every model since `since` (milliseconds since 1970), by day (UTC).
    async fn usage_report(cx, since: i64) -> UsageReport {
        Ok(cx.app.usage().since(since).await?)
    }
}
