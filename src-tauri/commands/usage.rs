//! What models cost (issue 18): the price table, a person's own price for a model (typed as
//! dollars per million tokens and read in Rust, never as a float in the page), a
//! conversation's total, and the use of every model by day for the Usage page.

use switchboard_core::engine::UsageReport;
use switchboard_core::price::{from_usd_per_million, Price};
use switchboard_core::store::{ModelPrice, UsageTotal};
use switchboard_core::InvalidInput;
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

/// Every model with a price: the person's, or what its provider's list says.
#[tauri::command]
pub async fn list_prices(state: State<'_, AppState>) -> CommandResult<Vec<ModelPrice>> {
    Ok(state.core().await.prices().await?)
}

/// Sets the person's price for `model` of `provider` (dollars per million tokens, as typed:
/// input and output together, cached input optional); all three empty forgets it. Returns the
/// price that counts now.
#[tauri::command]
pub async fn set_model_price(
    state: State<'_, AppState>,
    provider: String,
    model: String,
    input: Option<String>,
    output: Option<String>,
    cached: Option<String>,
) -> CommandResult<Option<ModelPrice>> {
    let typed = |text: Option<String>| text.filter(|t| !t.trim().is_empty());
    let (input, output, cached) = (typed(input), typed(output), typed(cached));
    let read = |field: &'static str, text: &str| {
        from_usd_per_million(text).ok_or_else(|| {
            switchboard_core::CoreError::from(InvalidInput::new(
                field,
                "Write dollars per million tokens, such as 2.50.",
            ))
        })
    };
    let price = match (input, output, cached) {
        (None, None, None) => None,
        (Some(input), Some(output), cached) => Some(Price {
            input: read("input", &input)?,
            output: read("output", &output)?,
            cached_input: cached.map(|c| read("cached", &c)).transpose()?,
        }),
        (None, ..) => {
            return Err(switchboard_core::CoreError::from(InvalidInput::new(
                "input",
                "Give the input price too.",
            ))
            .into())
        }
        (_, None, _) => {
            return Err(switchboard_core::CoreError::from(InvalidInput::new(
                "output",
                "Give the output price too.",
            ))
            .into())
        }
    };
    Ok(state
        .core()
        .await
        .set_model_price(&provider, &model, price)
        .await?)
}

/// A conversation's requests added up (every round, description and branch).
#[tauri::command]
pub async fn conversation_usage(
    state: State<'_, AppState>,
    conversation_id: String,
) -> CommandResult<UsageTotal> {
    Ok(state
        .core()
        .await
        .conversation_usage(&conversation_id)
        .await?)
}

/// The use of every model since `since` (milliseconds since 1970), by day (UTC).
#[tauri::command]
pub async fn usage_report(state: State<'_, AppState>, since: i64) -> CommandResult<UsageReport> {
    Ok(state.core().await.usage(since).await?)
}
