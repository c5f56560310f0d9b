//! Settings commands over tauri-plugin-store's `settings.json`. Values are checked by the core
//! before anything is written.

use switchboard_core::settings::{Settings, SettingsError};
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

// `async` so they run on the async runtime, not the main thread (`save` writes a file).
#[tauri::command]
pub async fn get_settings(state: State<'_, AppState>) -> CommandResult<Settings> {
    Ok(Settings::from_entries(
        &state.settings.entries().into_iter().collect(),
    ))
}

#[tauri::command]
pub async fn update_settings(
    state: State<'_, AppState>,
    settings: Settings,
) -> CommandResult<Settings> {
    let settings = settings.validated().map_err(SettingsError::from)?;
    for (key, value) in settings.to_entries() {
        state.settings.set(key, value);
    }
    state
        .settings
        .save()
        .map_err(|e| SettingsError::Save(e.to_string()))?;
    tracing::info!("settings saved");
    Ok(settings)
}
