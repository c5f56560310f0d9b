//! `app_status`: what the window needs to know before anything else — the version, the home
//! in use, whether the database opened. `keychain_status` is asked separately: it may need a
//! D-Bus round trip (or a keyring daemon's start), which must not hold up the window.

use serde::Serialize;
use switchboard_core::{CoreError, KeychainStatus};
use tauri::State;

use super::error::CommandError;
use crate::state::AppState;

#[derive(Serialize)]
pub struct AppStatus {
    version: &'static str,
    home: String,
    database_error: Option<CommandError>,
}

#[tauri::command]
pub async fn app_status(state: State<'_, AppState>) -> Result<AppStatus, CommandError> {
    let core = state.core().await;
    Ok(AppStatus {
        version: env!("CARGO_PKG_VERSION"),
        home: core.paths().display_home(),
        database_error: core
            .database_error()
            .map(|e| CoreError::from(e.clone()).into()),
    })
}

#[tauri::command]
pub async fn keychain_status(state: State<'_, AppState>) -> Result<KeychainStatus, CommandError> {
    Ok(state.core().await.keychain_status().await)
}
