//! `app_status`: what the window needs to know before anything else — the version, the home
//! in use, whether the database opened, whether a keychain is reachable.

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
    keychain: KeychainStatus,
}

#[tauri::command]
pub async fn app_status(state: State<'_, AppState>) -> Result<AppStatus, CommandError> {
    let core = &state.core;
    Ok(AppStatus {
        version: env!("CARGO_PKG_VERSION"),
        home: core.paths().display_home(),
        database_error: core
            .database_error()
            .map(|e| CoreError::from(e.clone()).into()),
        keychain: core.keychain_status().await,
    })
}
