//! Settings › Command line: whether a terminal finds this app as `switchboard`, and putting it
//! there or taking it away — [`switchboard_core::shell_command`]'s, run off the main thread.

use switchboard_core::shell_command::{
    self as sc, ShellCommandError, ShellCommandStatus, Surroundings,
};
use switchboard_core::CoreError;

use super::error::CommandResult;

async fn run(
    act: fn(&Surroundings) -> Result<ShellCommandStatus, ShellCommandError>,
) -> CommandResult<ShellCommandStatus> {
    let done = tokio::task::spawn_blocking(move || act(&Surroundings::of_process()?))
        .await
        .map_err(|e| CoreError::Io {
            what: "the PATH".into(),
            detail: e.to_string(),
        })?;
    Ok(done.map_err(CoreError::from)?)
}

/// What `switchboard` runs in a terminal, and where it would be put.
#[tauri::command]
pub async fn shell_command_status() -> CommandResult<ShellCommandStatus> {
    run(sc::status).await
}

/// Makes `switchboard` in new terminals run this app.
#[tauri::command]
pub async fn install_shell_command() -> CommandResult<ShellCommandStatus> {
    run(sc::install).await
}

/// Takes away what `install_shell_command` put.
#[tauri::command]
pub async fn remove_shell_command() -> CommandResult<ShellCommandStatus> {
    run(sc::remove).await
}
