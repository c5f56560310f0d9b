//! `app_status`: what the window needs to know before anything else — the version, the home
//! in use, whether the database opened. `keychain_status` is asked separately: it may need a
//! D-Bus round trip (or a keyring daemon's start), which must not hold up the window.

use switchboard_core::{AppStatus, KeychainStatus};
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

#[tauri::command]
pub async fn app_status(state: State<'_, AppState>) -> CommandResult<AppStatus> {
    Ok(state.core().await.status(env!("CARGO_PKG_VERSION")))
}

#[tauri::command]
pub async fn keychain_status(state: State<'_, AppState>) -> CommandResult<KeychainStatus> {
    Ok(state.core().await.keychain_status().await)
}
