//! `switchboard shell-command status|install|remove`: whether a terminal finds this app as
//! `switchboard`, and putting it there or taking it away (see [`crate::shell_command`]). Needs
//! no database: it runs before the app is opened, so an installer's hook can call it.

use std::io::Write;

use clap::Subcommand;

use super::output::{json_out, CliError};
use crate::shell_command::{self as sc, ShellCommandStatus, Surroundings};

#[derive(Debug, Subcommand)]
pub(crate) enum ShellCommandCommand {
    /// What `switchboard` runs in a terminal now, and where `install` would put it.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Make `switchboard` in new terminals run this app (a link in ~/.local/bin or another
    /// folder of yours on the PATH; on Windows, this app's folder added to your PATH).
    Install {
        #[arg(long)]
        json: bool,
    },
    /// Take away what `install` put (a `switchboard` a package installed is left alone).
    Remove {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy)]
enum Verb {
    Status,
    Install,
    Remove,
}

pub(crate) fn run(command: ShellCommandCommand, out: &mut impl Write) -> Result<(), CliError> {
    let around = Surroundings::of_process()?;
    let (verb, json) = match command {
        ShellCommandCommand::Status { json } => (Verb::Status, json),
        ShellCommandCommand::Install { json } => (Verb::Install, json),
        ShellCommandCommand::Remove { json } => (Verb::Remove, json),
    };
    let status = match verb {
        Verb::Status => sc::status(&around)?,
        Verb::Install => sc::install(&around)?,
        Verb::Remove => sc::remove(&around)?,
    };
    if json {
        return json_out(out, &status);
    }
    for line in said(verb, &status) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// What a person is told after `verb`, a line each.
fn said(verb: Verb, status: &ShellCommandStatus) -> Vec<String> {
    let ShellCommandStatus {
        binary,
        found,
        current,
        place,
        installed,
        on_path,
        hint,
        changed,
    } = status;
    let changed = changed.unwrap_or(false);
    let put = if cfg!(windows) {
        format!("adds {place} to your PATH")
    } else {
        format!("links it at {place}")
    };
    let first = match (verb, found) {
        (Verb::Install, _) if changed && cfg!(windows) => {
            format!("Added {place} to your PATH: new terminals run {binary} as switchboard.")
        }
        (Verb::Install, Some(found)) if changed && *on_path && !current => {
            format!("Linked {place} to {binary}, but {found} comes first on your PATH.")
        }
        (Verb::Install, _) if changed => format!("Linked {place} to {binary}."),
        (Verb::Install, Some(found)) if *current => {
            format!("switchboard already runs this app ({found}); nothing changed.")
        }
        (Verb::Install, _) => format!("{place} is there already; nothing changed."),
        (Verb::Remove, _) if changed => format!("Removed {place}."),
        (Verb::Remove, _) => {
            "Nothing to remove: this app put no switchboard on the PATH.".to_owned()
        }
        (Verb::Status, Some(found)) if *current => format!("switchboard runs this app ({found})."),
        (Verb::Status, Some(found)) if *installed => {
            format!("{place} runs this app, but {found} comes first on your PATH.")
        }
        (Verb::Status, _) if *installed => format!("{place} runs this app ({binary})."),
        (Verb::Status, Some(found)) => format!(
            "switchboard runs {found}, not this app ({binary}); `switchboard shell-command install` {put}."
        ),
        (Verb::Status, None) => format!(
            "No switchboard is on your PATH; `switchboard shell-command install` {put}."
        ),
    };
    let mut lines = vec![first];
    if let (Some(hint), false) = (hint, matches!(verb, Verb::Remove)) {
        lines.push(hint.clone());
    }
    lines
}
