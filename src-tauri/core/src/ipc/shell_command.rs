//! Settings › Command line: whether a terminal finds this app as `switchboard`, and putting it
//! there (after the person said yes in a native dialog) or taking it away —
//! [`crate::shell_command`]'s, run off the async threads in the surroundings the host gives
//! (the process's own for the desktop shell). An app started from the Dock or a launcher has not
//! the PATH a terminal has: the login shell's is asked for (once, the same the MCP servers get).

use std::sync::Arc;

use super::{commands, Cx};
use crate::shell_command::{self as sc, ShellCommandError, ShellCommandStatus, Surroundings};
use crate::{CoreError, IpcError};

async fn run(
    cx: &Cx,
    act: fn(&Surroundings) -> Result<ShellCommandStatus, ShellCommandError>,
) -> Result<ShellCommandStatus, IpcError> {
    let path = cx.app.server_search_path().await;
    let host = Arc::clone(&cx.host);
    let done = tokio::task::spawn_blocking(move || act(&host.surroundings(path)?))
        .await
        .map_err(|e| CoreError::Io {
            what: "the PATH".into(),
            detail: e.to_string(),
        })?;
    Ok(done.map_err(CoreError::from)?)
}

commands! {
    /// What `switchboard` runs in a terminal, and where it would be put.
    async fn shell_command_status(cx) -> ShellCommandStatus {
        run(cx, sc::status).await
    }

    /// Makes `switchboard` in new terminals run this app, once the person said yes in the
    /// native dialog naming the binary and where it goes; on a no, the status as it was
    /// (`changed`: false).
    async fn install_shell_command(cx) -> ShellCommandStatus {
        let before = run(cx, sc::status).await?;
        if let Some(asked) = sc::install_question(&before) {
            if !cx.host.confirm().allow(&asked).await {
                return Ok(ShellCommandStatus { changed: Some(false), ..before });
            }
        }
        run(cx, sc::install).await
    }

    /// Takes away what `install_shell_command` put.
    async fn remove_shell_command(cx) -> ShellCommandStatus {
        run(cx, sc::remove).await
    }
}
