//! What models cost (issue 18): the price table, a person's own price for a model (typed as
//! dollars per million tokens and read in Rust, never as a float in the page), a
//! conversation's total, and the use of every model by day for the Usage page.

use switchboard_core::app::UsageReport;
use switchboard_core::store::{ModelPrice, UsageTotal};
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

/// Every model with a price: the person's, or what its provider's list says.
#[tauri::command]
pub async fn list_prices(state: State<'_, AppState>) -> CommandResult<Vec<ModelPrice>> {
    Ok(state.app().await.prices().await?)
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
    Ok(state
        .app()
        .await
        .set_typed_model_price(
            &provider,
            &model,
            (input.as_deref(), output.as_deref(), cached.as_deref()),
        )
        .await?)
}

/// A conversation's requests added up (every round, description and branch).
#[tauri::command]
pub async fn conversation_usage(
    state: State<'_, AppState>,
    conversation_id: String,
) -> CommandResult<UsageTotal> {
    Ok(state
        .app()
        .await
        .conversation_usage(&conversation_id)
        .await?)
}

/// The use of every model since `since` (milliseconds since 1970), by day (UTC).
#[tauri::command]
pub async fn usage_report(state: State<'_, AppState>, since: i64) -> CommandResult<UsageReport> {
    Ok(state.app().await.usage(since).await?)
}
