//! Settings commands over tauri-plugin-store's `settings.json`. Values are checked by the core
//! before anything is written.

use switchboard_core::settings::{Settings, SettingsError};
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

#[tauri::command]
pub fn get_settings(state: State<'_, AppState>) -> Settings {
    Settings::from_entries(&state.settings.entries().into_iter().collect())
}

#[tauri::command]
pub fn update_settings(state: State<'_, AppState>, settings: Settings) -> CommandResult<Settings> {
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
