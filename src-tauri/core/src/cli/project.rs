//! `switchboard project …`: add, list, show, edit and remove projects, their knowledge files,
//! export and import them whole, and move a conversation into one or out of any. A project is a name, instructions added to the system prompt of each
//! of its conversations, and the profile a conversation made in it starts from; `chat --project
//! NAME` starts a conversation in one.

use std::io::Write;
use std::sync::Arc;

use clap::{Args, Subcommand};
use serde::Serialize;

use super::output::{json_out, list_out, write_table, CliError};
use crate::app::ProjectInput;
use crate::store::{Conversation, Project};
use crate::App;

#[derive(Debug, Subcommand)]
pub(crate) enum ProjectCommand {
    /// Make a project.
    Add {
        name: String,
        #[command(flatten)]
        fields: FieldArgs,
        #[arg(long)]
        json: bool,
    },
    /// List projects, with how many conversations each has.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show a project: its instructions, profile and conversations.
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Change a project: only what is given changes.
    Edit {
        name: String,
        /// A new name.
        #[arg(long, value_name = "NAME")]
        rename: Option<String>,
        #[command(flatten)]
        fields: FieldArgs,
        #[arg(long)]
        json: bool,
    },
    /// Delete a project; its conversations stay, in no project.
    Remove { name: String },
    /// List a project's knowledge files; add files to it (text or PDF; one of the same name is
    /// replaced) or remove them by name.
    Files {
        name: String,
        /// Files to add (repeat, or give several).
        #[arg(long, value_name = "FILE", num_args = 1..)]
        add: Vec<std::path::PathBuf>,
        /// A file to remove, by its name in the project (repeat for several).
        #[arg(long, value_name = "NAME")]
        remove: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Write a project — its settings, files and conversations — as one JSON file (to stdout,
    /// or to --out FILE).
    Export {
        name: String,
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// Keep the project a JSON export holds (a taken name gets " (2)").
    Import {
        file: std::path::PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Move a conversation into a project, or out of any (`--none`).
    Move {
        /// The conversation's id.
        conversation: String,
        #[arg(required_unless_present = "none")]
        project: Option<String>,
        #[arg(long, conflicts_with = "project")]
        none: bool,
        #[arg(long)]
        json: bool,
    },
}

/// What a project holds, as options; each one left out stays as it is (`add`: none).
#[derive(Debug, Args)]
pub(crate) struct FieldArgs {
    /// Instructions added to the system prompt of each of its conversations ("" for none).
    #[arg(long, value_name = "TEXT", conflicts_with = "instructions_file")]
    instructions: Option<String>,
    /// The instructions, read from a file.
    #[arg(long, value_name = "FILE")]
    instructions_file: Option<std::path::PathBuf>,
    /// The profile its new conversations start from ("" for the default profile).
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// Its memory: the model may save facts to it and is told those relevant (`on`), or not.
    #[arg(long, value_name = "on|off", value_parser = on_off)]
    memory: Option<bool>,
    /// A tool switch of the project's, put over its profile's on each conversation that starts
    /// in it or moves into it: `SERVER=on`, `SERVER:TOOL=off`. Repeat for several; a later one
    /// for the same server or tool wins.
    #[arg(long = "switch", value_name = "SERVER[:TOOL]=on|off", value_parser = super::profile::switch)]
    switches: Vec<crate::store::ToolToggle>,
    /// Forget the project's tool switches (before any --switch).
    #[arg(long)]
    no_switches: bool,
    /// A folder of the project's (repeat for several): while a turn in it runs, the servers it
    /// uses are given its folders as their roots, and a path argument outside them asks.
    #[arg(long = "root", value_name = "FOLDER")]
    roots: Vec<String>,
    /// Forget the project's folders (before any --root).
    #[arg(long)]
    no_roots: bool,
}

fn on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        other => Err(format!("“{other}” is neither on nor off")),
    }
}

impl FieldArgs {
    /// `input` with what the options say.
    fn apply(self, mut input: ProjectInput) -> Result<ProjectInput, CliError> {
        if self.no_switches {
            input.tools.clear();
        }
        input.tools.extend(self.switches);
        if self.no_roots {
            input.roots.clear();
        }
        input.roots.extend(self.roots);
        if let Some(text) = self.instructions {
            input.instructions = text;
        }
        if let Some(path) = self.instructions_file {
            input.instructions = std::fs::read_to_string(&path)
                .map_err(|e| CliError::Usage(format!("Cannot read {}: {e}", path.display())))?;
        }
        if let Some(profile) = self.profile {
            input.profile = Some(profile).filter(|p| !p.trim().is_empty());
        }
        if let Some(on) = self.memory {
            input.memory = on;
        }
        Ok(input)
    }
}

/// A project and its conversations, as `show --json` prints them.
#[derive(Serialize)]
struct Shown<'a> {
    #[serde(flatten)]
    project: &'a Project,
    profile: Option<String>,
    conversation_list: Vec<&'a Conversation>,
}

pub(crate) async fn run(
    app: &Arc<App>,
    command: ProjectCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        ProjectCommand::Add { name, fields, json } => {
            let input = fields.apply(ProjectInput {
                name,
                ..ProjectInput::default()
            })?;
            let made = app.projects().create(&input).await?;
            said(out, json, &made, "Made the project")
        }
        ProjectCommand::List { json } => list(app, json, out).await,
        ProjectCommand::Show { name, json } => show(app, &name, json, out).await,
        ProjectCommand::Edit {
            name,
            rename,
            fields,
            json,
        } => {
            let project = app.projects().get(&name).await?;
            let input = fields.apply(ProjectInput {
                name: rename.unwrap_or_else(|| project.name.clone()),
                instructions: project.fields.instructions.clone(),
                profile: project.fields.profile_id.clone(),
                memory: project.fields.memory,
                tools: project.fields.tools.clone(),
                roots: project.fields.roots.clone(),
            })?;
            let changed = app.projects().update(&project.id, &input).await?;
            said(out, json, &changed, "Changed the project")
        }
        ProjectCommand::Remove { name } => {
            let project = app.projects().get(&name).await?;
            let had = app.projects().delete(&project.id).await?;
            let kept = match had {
                0 => String::new(),
                1 => " Its conversation is kept, in no project.".to_owned(),
                n => format!(" Its {n} conversations are kept, in no project."),
            };
            writeln!(out, "Deleted the project “{}”.{kept}", project.name)?;
            Ok(())
        }
        ProjectCommand::Files {
            name,
            add,
            remove,
            json,
        } => files(app, &name, add, remove, json, out).await,
        ProjectCommand::Export { name, out: file } => {
            match file {
                Some(path) => {
                    app.write_project(&name, path.clone()).await?;
                    writeln!(out, "Wrote {}.", path.display())?;
                }
                None => json_out(out, &app.export_project(&name).await?)?,
            }
            Ok(())
        }
        ProjectCommand::Import { file, json } => {
            let imported = app.import_project_file(file).await?;
            for note in &imported.notes {
                super::terminal::say!("{note}");
            }
            if json {
                return json_out(out, &imported);
            }
            writeln!(
                out,
                "Imported the project “{}” with {} conversation{}.",
                imported.project.name,
                imported.project.conversations,
                if imported.project.conversations == 1 {
                    ""
                } else {
                    "s"
                }
            )?;
            Ok(())
        }
        ProjectCommand::Move {
            conversation,
            project,
            none,
            json,
        } => {
            let key = if none { None } else { project.as_deref() };
            let moved = app.projects().move_conversation(&conversation, key).await?;
            if json {
                return json_out(out, &moved);
            }
            match key {
                Some(_) => {
                    let name = app
                        .projects()
                        .of_conversation(&moved.id)
                        .await?
                        .map(|p| p.name)
                        .unwrap_or_default();
                    writeln!(out, "Moved “{}” into “{name}”.", moved.title)?;
                }
                None => writeln!(out, "Moved “{}” out of its project.", moved.title)?,
            }
            Ok(())
        }
    }
}

fn said(out: &mut impl Write, json: bool, project: &Project, what: &str) -> Result<(), CliError> {
    if json {
        return json_out(out, project);
    }
    writeln!(out, "{what} “{}”.", project.name)?;
    Ok(())
}

async fn list(app: &Arc<App>, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let projects = app.projects().list().await?;
    let profiles = app.profiles().list().await?;
    list_out(
        out,
        json,
        &projects,
        "No projects yet. Make one with: switchboard project add NAME --instructions TEXT",
        ["NAME", "CONVERSATIONS", "PROFILE", "INSTRUCTIONS"],
        |p| {
            [
                p.name.clone(),
                p.conversations.to_string(),
                profile_name(&profiles, p),
                crate::text::one_line(p.fields.instructions.lines().next().unwrap_or_default(), 50),
            ]
        },
    )
}

fn profile_name(profiles: &[crate::store::Profile], project: &Project) -> String {
    project
        .fields
        .profile_id
        .as_ref()
        .and_then(|id| profiles.iter().find(|p| &p.id == id))
        .map_or_else(|| "(default)".to_owned(), |p| p.name.clone())
}

async fn show(
    app: &Arc<App>,
    name: &str,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let project = app.projects().get(name).await?;
    let profiles = app.profiles().list().await?;
    let conversations = app.conversations().list().await?;
    let mine: Vec<&Conversation> = conversations
        .iter()
        .filter(|c| c.project_id.as_deref() == Some(project.id.as_str()))
        .collect();
    if json {
        return json_out(
            out,
            &Shown {
                project: &project,
                profile: project
                    .fields
                    .profile_id
                    .as_ref()
                    .and_then(|id| profiles.iter().find(|p| &p.id == id))
                    .map(|p| p.name.clone()),
                conversation_list: mine,
            },
        );
    }
    writeln!(out, "{}", project.name)?;
    writeln!(out, "Profile: {}", profile_name(&profiles, &project))?;
    if project.fields.instructions.is_empty() {
        writeln!(out, "Instructions: none")?;
    } else {
        writeln!(out, "Instructions:")?;
        for line in project.fields.instructions.lines() {
            writeln!(out, "  {}", crate::text::one_line(line, usize::MAX))?;
        }
    }
    if !project.fields.roots.is_empty() {
        let roots: Vec<String> = project
            .fields
            .roots
            .iter()
            .map(|r| crate::text::one_line(r, 200))
            .collect();
        writeln!(out, "Folders: {}", roots.join(", "))?;
    }
    if !project.fields.tools.is_empty() {
        writeln!(
            out,
            "Tool switches: {}",
            super::profile::switches_text(&project.fields.tools)
        )?;
    }
    if mine.is_empty() {
        writeln!(
            out,
            "No conversations yet: switchboard chat --project “{}” TEXT",
            project.name
        )?;
        return Ok(());
    }
    writeln!(out)?;
    let rows: Vec<[String; 2]> = mine
        .iter()
        .map(|c| [c.id.clone(), crate::text::one_line(&c.title, 60)])
        .collect();
    write_table(out, ["ID", "TITLE"], &rows)?;
    Ok(())
}

/// What `project files --json` prints: the files now, and what adding them came to.
#[derive(Serialize)]
struct FilesShown {
    files: Vec<crate::store::ProjectFile>,
    added: Vec<String>,
    refused: Vec<String>,
    removed: Vec<String>,
}

async fn files(
    app: &Arc<App>,
    name: &str,
    add: Vec<std::path::PathBuf>,
    remove: Vec<String>,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let project = app.projects().get(name).await?;
    for file in &remove {
        app.projects().remove_file(&project.id, file).await?;
    }
    let quiet = json;
    let added = if add.is_empty() {
        crate::app::AddedFiles::default()
    } else {
        app.projects()
            .add_files(&project.id, add, &move |p: crate::app::FilesProgress| {
                if !quiet && p.done < p.total {
                    super::terminal::say!("Adding {} of {}: {}", p.done + 1, p.total, p.file);
                }
            })
            .await?
    };
    for why in &added.refused {
        super::terminal::say!("Not added: {why}");
    }
    let files = app.projects().files(&project.id).await?;
    if json {
        json_out(
            out,
            &FilesShown {
                added: added.added.iter().map(|f| f.name.clone()).collect(),
                refused: added.refused.clone(),
                removed: remove,
                files,
            },
        )?;
    } else if files.is_empty() {
        writeln!(
            out,
            "“{}” has no files. Add some with: switchboard project files “{}” --add FILE",
            project.name, project.name
        )?;
    } else {
        let rows: Vec<[String; 4]> = files
            .iter()
            .map(|f| {
                [
                    crate::text::one_line(&f.name, 60),
                    crate::text::byte_size(f.size),
                    f.passages.to_string(),
                    f.mime.clone(),
                ]
            })
            .collect();
        write_table(out, ["NAME", "SIZE", "PASSAGES", "TYPE"], &rows)?;
    }
    if added.refused.is_empty() {
        Ok(())
    } else {
        Err(CliError::Failed)
    }
}
