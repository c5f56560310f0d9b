//! `app_status`: what the window needs to know before anything else — the version, the home
//! in use, whether the database opened. `keychain_status` is asked separately: it may need a
//! D-Bus round trip (or a keyring daemon's start), which must not hold up the window.
//! `open_link`: the window's one way out, to the person's browser after a native dialog.

use switchboard_core::mcp::oauth::open_in_browser;
use switchboard_core::{links, AppStatus, KeychainStatus};
use tauri::{AppHandle, State};

use super::error::CommandResult;
use crate::bridge::NativeConfirm;
use crate::state::AppState;

#[tauri::command]
pub async fn app_status(state: State<'_, AppState>) -> CommandResult<AppStatus> {
    Ok(state.app().await.status(env!("CARGO_PKG_VERSION")))
}

#[tauri::command]
pub async fn keychain_status(state: State<'_, AppState>) -> CommandResult<KeychainStatus> {
    Ok(state.app().await.keychain_status().await)
}

/// Opens a link from the conversation in the person's browser (or mail program): `https:`,
/// `http:` or `mailto:` only, after a native dialog shows the whole address. Resolves with
/// whether it was opened (`false`: the person said no).
#[tauri::command]
pub async fn open_link(app: AppHandle, url: String) -> CommandResult<bool> {
    Ok(links::open(&url, &NativeConfirm(app), &open_in_browser).await?)
}
