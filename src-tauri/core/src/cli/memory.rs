//! `switchboard memory …`: the facts kept across conversations (issue 62) — listed, added,
//! edited and removed, in a project's memory (`--project`) or the person's own — and each
//! memory switched on or off. Off (as it starts), nothing is remembered and nothing is told.

use std::io::Write;
use std::sync::Arc;

use clap::Subcommand;

use super::output::{json_out, list_out, CliError};
use crate::App;

#[derive(Debug, Subcommand)]
pub(crate) enum MemoryCommand {
    /// List the facts of one memory (the person's own, or --project's), newest first.
    List {
        #[arg(long, value_name = "NAME", conflicts_with = "all")]
        project: Option<String>,
        /// Every memory's facts.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Keep a fact (at most 500 characters).
    Add {
        text: String,
        #[arg(long, value_name = "NAME")]
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Change a fact's words.
    Edit {
        id: String,
        text: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a fact.
    Remove { id: String },
    /// Switch a memory on: the model may keep facts in it and is told those relevant.
    On {
        #[arg(long, value_name = "NAME")]
        project: Option<String>,
    },
    /// Switch a memory off: nothing is kept in it, and nothing of it is told.
    Off {
        #[arg(long, value_name = "NAME")]
        project: Option<String>,
    },
}

pub(crate) async fn run(
    app: &Arc<App>,
    command: MemoryCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        MemoryCommand::List { project, all, json } => {
            let facts = app.memory().list(project.as_deref(), all).await?;
            list_out(
                out,
                json,
                &facts,
                "Nothing remembered yet.",
                ["ID", "FACT", "FROM"],
                |m| {
                    [
                        m.id.clone(),
                        crate::text::one_line(&m.text, 80),
                        match (&m.conversation_title, m.from_conversation) {
                            (Some(t), _) => crate::text::one_line(t, 40),
                            (None, true) => "(a conversation since deleted)".to_owned(),
                            (None, false) => "(written by you)".to_owned(),
                        },
                    ]
                },
            )
        }
        MemoryCommand::Add {
            text,
            project,
            json,
        } => {
            let kept = app.memory().add(project.as_deref(), &text).await?;
            if json {
                return json_out(out, &kept);
            }
            writeln!(out, "Remembered: {}", kept.text)?;
            Ok(())
        }
        MemoryCommand::Edit { id, text, json } => {
            let kept = app.memory().edit(&id, &text).await?;
            if json {
                return json_out(out, &kept);
            }
            writeln!(out, "Changed: {}", kept.text)?;
            Ok(())
        }
        MemoryCommand::Remove { id } => {
            app.memory().delete(&id).await?;
            writeln!(out, "Forgotten.")?;
            Ok(())
        }
        MemoryCommand::On { project } => switch(app, project, true, out).await,
        MemoryCommand::Off { project } => switch(app, project, false, out).await,
    }
}

async fn switch(
    app: &Arc<App>,
    project: Option<String>,
    on: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let word = if on { "on" } else { "off" };
    match project {
        Some(key) => {
            let project = app.set_project_memory(&key, on).await?;
            writeln!(out, "The memory of “{}” is {word}.", project.name)?;
        }
        None => {
            app.set_own_memory(on).await?;
            writeln!(out, "Your memory (outside projects) is {word}.")?;
        }
    }
    Ok(())
}
