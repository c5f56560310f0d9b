//! Settings › Command line: whether a terminal finds this app as `switchboard`, and putting it
//! there (after the person said yes in a native dialog) or taking it away —
//! [`switchboard_core::shell_command`]'s, run off the main thread.
//! An app started from the Dock or a launcher has not the PATH a terminal has: the login
//! shell's is asked for (once, the same the MCP servers get) and put first.

use switchboard_core::policy::confirm::Confirm;
use switchboard_core::shell_command::{
    self as sc, ShellCommandError, ShellCommandStatus, Surroundings,
};
use switchboard_core::CoreError;
use tauri::{AppHandle, State};

use super::error::CommandResult;
use crate::bridge::NativeConfirm;
use crate::state::AppState;

async fn run(
    state: State<'_, AppState>,
    act: fn(&Surroundings) -> Result<ShellCommandStatus, ShellCommandError>,
) -> CommandResult<ShellCommandStatus> {
    let path = state.app().await.server_search_path().await;
    let done = tokio::task::spawn_blocking(move || {
        let mut around = Surroundings::of_process()?;
        around.path = path;
        act(&around)
    })
    .await
    .map_err(|e| CoreError::Io {
        what: "the PATH".into(),
        detail: e.to_string(),
    })?;
    Ok(done.map_err(CoreError::from)?)
}

/// What `switchboard` runs in a terminal, and where it would be put.
#[tauri::command]
pub async fn shell_command_status(state: State<'_, AppState>) -> CommandResult<ShellCommandStatus> {
    run(state, sc::status).await
}

/// Makes `switchboard` in new terminals run this app, once the person said yes in the native
/// dialog naming the binary and where it goes; on a no, the status as it was (`changed`:
/// false).
#[tauri::command]
pub async fn install_shell_command(
    app: AppHandle,
    state: State<'_, AppState>,
) -> CommandResult<ShellCommandStatus> {
    let before = run(state.clone(), sc::status).await?;
    if let Some(asked) = sc::install_question(&before) {
        if !NativeConfirm(app).allow(&asked).await {
            return Ok(ShellCommandStatus {
                changed: Some(false),
                ..before
            });
        }
    }
    run(state, sc::install).await
}

/// Takes away what `install_shell_command` put.
#[tauri::command]
pub async fn remove_shell_command(state: State<'_, AppState>) -> CommandResult<ShellCommandStatus> {
    run(state, sc::remove).await
}
