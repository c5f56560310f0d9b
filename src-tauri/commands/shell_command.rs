//! Settings › Command line: whether a terminal finds this app as `switchboard`, and putting it
//! there or taking it away — [`switchboard_core::shell_command`]'s, run off the main thread.
//! An app started from the Dock or a launcher has not the PATH a terminal has: the login
//! shell's is asked for (once, the same the MCP servers get) and put first.

use switchboard_core::shell_command::{
    self as sc, ShellCommandError, ShellCommandStatus, Surroundings,
};
use switchboard_core::CoreError;
use tauri::State;

use super::error::CommandResult;
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

/// Makes `switchboard` in new terminals run this app.
#[tauri::command]
pub async fn install_shell_command(
    state: State<'_, AppState>,
) -> CommandResult<ShellCommandStatus> {
    run(state, sc::install).await
}

/// Takes away what `install_shell_command` put.
#[tauri::command]
pub async fn remove_shell_command(state: State<'_, AppState>) -> CommandResult<ShellCommandStatus> {
    run(state, sc::remove).await
}
