//! Settings commands: read them, and save them after the core checks every value. Where they
//! live (tauri-plugin-store's `settings.json`) is the bridge's business.

use switchboard_core::settings::Settings;
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

// `async` so they run on the async runtime, not the main thread (saving writes a file).
#[tauri::command]
pub async fn get_settings(state: State<'_, AppState>) -> CommandResult<Settings> {
    Ok(state.app().await.settings())
}

#[tauri::command]
pub async fn update_settings(
    state: State<'_, AppState>,
    settings: Settings,
) -> CommandResult<Settings> {
    Ok(state.app().await.update_settings(settings).await?)
}
