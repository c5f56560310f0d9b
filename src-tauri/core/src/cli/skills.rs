//! `switchboard skills …` (issue 61): list the person's skills (or a conversation's), add one
//! from a folder or a `.zip`, show one in full with the conversations that used it, switch one
//! on or off (for every conversation, or one), let the model ask to run its scripts, write one
//! to a `.zip`, and remove one.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Subcommand;

use super::output::{json_out, list_out, CliError};
use crate::skills::Skill;
use crate::App;

#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// List the skills in the skills folder (with --conversation: whether that conversation
    /// may use each).
    List {
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
        /// Start the MCP servers first, to list the skills they serve too.
        #[arg(long)]
        servers: bool,
        #[arg(long)]
        json: bool,
    },
    /// Keep a skill from a folder holding a SKILL.md, or a .zip of one; it is on for every
    /// conversation.
    Add {
        #[arg(value_name = "FOLDER-OR-ZIP")]
        source: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Remove a skill (its folder in the skills folder).
    Remove { name: String },
    /// Show a skill: its description, files, the fields Switchboard ignores, its instructions,
    /// and the conversations that used it.
    Show {
        /// A skill of the skills folder, or SERVER/PATH for one a server serves (the servers
        /// are started first).
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Switch a skill on, for every conversation (or only --conversation ID).
    Enable {
        name: String,
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
    },
    /// Switch a skill off, for every conversation (or only --conversation ID).
    Disable {
        name: String,
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
    },
    /// Say whether the model may ask to run a skill's scripts; with --allow it may (each run
    /// asks you, in a sandbox with no network that writes only its own folder), with --deny
    /// no longer. Allowing holds for the scripts as they are now.
    Scripts {
        name: String,
        #[arg(long, conflicts_with = "deny")]
        allow: bool,
        #[arg(long)]
        deny: bool,
        #[arg(long)]
        json: bool,
    },
    /// Write a skill to a .zip holding its folder.
    Export {
        name: String,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
}

pub(crate) async fn run(
    app: &Arc<App>,
    command: SkillsCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    // A server's skills are known while it runs.
    let served = match &command {
        SkillsCommand::List { servers, .. } => *servers,
        SkillsCommand::Show { name, .. }
        | SkillsCommand::Enable { name, .. }
        | SkillsCommand::Disable { name, .. } => name.contains('/'),
        _ => false,
    };
    if served {
        let wait = std::time::Duration::from_secs(30);
        super::chat::start_servers(app, &crate::app::ToolSelection::All, true, wait).await?;
    }
    match command {
        SkillsCommand::List {
            conversation, json, ..
        } => match conversation {
            None => {
                let skills = app.skills().await?;
                list_out(
                    out,
                    json,
                    &skills,
                    "No skills yet: add one with `switchboard skills add FOLDER-OR-ZIP`.",
                    ["NAME", "ON", "FILES", "DESCRIPTION"],
                    |s| row(s, s.enabled),
                )?;
                if !served && !json {
                    writeln!(
                        out,
                        "(Skills that MCP servers serve are listed with --servers, which starts them.)"
                    )?;
                }
                Ok(())
            }
            Some(id) => {
                let skills = app.conversation_skills(&id).await?;
                list_out(
                    out,
                    json,
                    &skills,
                    "No skills yet.",
                    ["NAME", "ON", "FILES", "DESCRIPTION"],
                    |s| row(&s.skill, s.on),
                )
            }
        },
        SkillsCommand::Add { source, json } => {
            let skill = app.add_skill(source).await?;
            if json {
                return json_out(out, &skill);
            }
            writeln!(
                out,
                "Added the skill “{}” ({} files); it is on for every conversation.",
                skill.name,
                skill.files.len()
            )?;
            say_cautions(out, &skill)?;
            Ok(())
        }
        SkillsCommand::Remove { name } => {
            app.remove_skill(&name).await?;
            writeln!(out, "Removed the skill “{name}”.")?;
            Ok(())
        }
        SkillsCommand::Show { name, json } => {
            let detail = app.skill_detail(&name).await?;
            if json {
                return json_out(out, &detail);
            }
            let skill = &detail.skill;
            writeln!(out, "{}", skill.name)?;
            writeln!(out, "{}", skill.description)?;
            writeln!(out, "On: {}", if skill.enabled { "yes" } else { "no" })?;
            for (key, value) in &skill.fields {
                writeln!(out, "{key}: {value}")?;
            }
            say_cautions(out, skill)?;
            writeln!(out, "\nFiles:")?;
            for file in &skill.files {
                writeln!(out, "  {}  ({} bytes)", file.path, file.bytes)?;
            }
            writeln!(out, "\nUsed in:")?;
            if detail.used_in.is_empty() {
                writeln!(out, "  no conversation yet")?;
            }
            for used in &detail.used_in {
                writeln!(out, "  {}  {}", used.conversation_id, used.title)?;
            }
            if let crate::skills::SkillOrigin::Server { server, uri } = &skill.origin {
                writeln!(
                    out,
                    "\nServed by “{server}” as {uri}: its instructions as it serves them now, \
                     checked against what it listed (read again when a model loads it)."
                )?;
            }
            writeln!(out, "\nInstructions:\n{}", detail.instructions.trim_end())?;
            Ok(())
        }
        SkillsCommand::Enable { name, conversation } => {
            switch(app, &name, true, conversation.as_deref(), out).await
        }
        SkillsCommand::Disable { name, conversation } => {
            switch(app, &name, false, conversation.as_deref(), out).await
        }
        SkillsCommand::Scripts {
            name,
            allow,
            deny,
            json,
        } => {
            if allow || deny {
                app.set_skill_scripts(&name, allow, None).await?;
            }
            let skill = app.skill_detail(&name).await?.skill;
            if json {
                return json_out(
                    out,
                    &serde_json::json!({"name": skill.name, "scripts": skill.scripts}),
                );
            }
            writeln!(out, "{}", scripts_words(&skill))?;
            Ok(())
        }
        SkillsCommand::Export { name, out: file } => {
            app.export_skill(&name, file.clone()).await?;
            writeln!(out, "Wrote the skill “{name}” to {}.", file.display())?;
            Ok(())
        }
    }
}

fn row(skill: &Skill, on: bool) -> [String; 4] {
    let description = match &skill.problem {
        Some(problem) => format!("cannot be used: {problem}"),
        None => crate::text::one_line(&skill.description, 70),
    };
    [
        skill.name.clone(),
        if on { "on" } else { "off" }.to_owned(),
        skill.files.len().to_string(),
        description,
    ]
}

/// What a skill has that Switchboard never acts on, said when it is added or shown.
fn say_cautions(out: &mut impl Write, skill: &Skill) -> Result<(), CliError> {
    if !skill.ignored.is_empty() {
        writeln!(
            out,
            "Ignored (Switchboard never acts on these): {}",
            skill.ignored.join(", ")
        )?;
    }
    if skill.changed {
        writeln!(
            out,
            "Its files changed since you switched it on: it is off until you switch it on again."
        )?;
    }
    if let crate::skills::SkillOrigin::Server { server, .. } = &skill.origin {
        if !skill.enabled && !skill.changed && skill.problem.is_none() {
            writeln!(
                out,
                "Served by “{server}”: off until you switch it on (`switchboard skills enable {}`), which approves the files it has now.",
                skill.name
            )?;
        }
    }
    if skill.has_scripts {
        writeln!(out, "{}", scripts_words(skill))?;
    }
    Ok(())
}

/// Whether the model may ask to run a skill's scripts, in a sentence.
fn scripts_words(skill: &Skill) -> String {
    use crate::skills::scripts::ScriptsAllowed;
    let name = &skill.name;
    match skill.scripts {
        ScriptsAllowed::None => format!("“{name}” has no scripts that can be run."),
        ScriptsAllowed::Off => format!(
            "“{name}” has scripts: the model can read them; nothing runs them \
             (`switchboard skills scripts {name} --allow` lets it ask to run them)."
        ),
        ScriptsAllowed::On => format!(
            "The model may ask to run the scripts of “{name}”: each run asks you first, and \
             runs in a sandbox with no network that writes only its own folder."
        ),
        ScriptsAllowed::Changed => format!(
            "The scripts of “{name}” changed since you allowed them: they are not run until \
             you allow them again (`switchboard skills scripts {name} --allow`)."
        ),
    }
}

async fn switch(
    app: &App,
    name: &str,
    on: bool,
    conversation: Option<&str>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    app.set_skill_enabled(name, on, conversation, None).await?;
    let state = if on { "on" } else { "off" };
    match conversation {
        None => writeln!(out, "The skill “{name}” is {state} for every conversation.")?,
        Some(id) => writeln!(out, "The skill “{name}” is {state} in conversation {id}.")?,
    }
    Ok(())
}
