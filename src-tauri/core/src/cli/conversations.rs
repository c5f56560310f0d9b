//! `switchboard conversations …`: list, read, search, export and import conversations from the
//! terminal, with `--json` for scripts. Reads and writes the same database as the window.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Subcommand;

use super::output::{json_out, list_out, CliError};
use crate::store::{export_text, to_markdown, ExportFormat, Role, SnippetPart};
use crate::App;

#[derive(Debug, Subcommand)]
pub(crate) enum ConversationsCommand {
    /// Every conversation, most recently active first.
    List {
        #[arg(long)]
        json: bool,
    },
    /// One conversation, whole: as Markdown, or with `--json` in the export format.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// What the model was last given: how full its window was, of what, and which of the
    /// project's files (whole or by passage) and remembered facts.
    Context {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Conversations whose title or messages hold every word of QUERY (newest first).
    Search {
        query: String,
        /// At most this many hits (1–200).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only in the conversations of this project.
        #[arg(long, value_name = "NAME")]
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Writes one conversation to a file (or to standard output).
    Export {
        id: String,
        #[arg(long, value_enum, default_value = "markdown")]
        format: ExportFormat,
        /// The file to write; standard output when not given.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Reads a JSON export back as a new conversation.
    Import {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Shows branch N (from 1) where MESSAGE (the first message of the branch shown there: an
    /// edited message of yours, or an answer asked for again) is.
    Branch {
        id: String,
        message: String,
        #[arg(value_parser = clap::value_parser!(i64).range(1..))]
        n: i64,
        #[arg(long)]
        json: bool,
    },
    /// Shows MESSAGE (a search hit, `other_version` or not): the branch that holds it is
    /// switched to, with each branch it is nested in.
    Reveal {
        id: String,
        message: String,
        #[arg(long)]
        json: bool,
    },
    /// The files tools produced in a conversation (its canvas), oldest first.
    Artifacts {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Writes one file a tool produced (FILE: its name, or its SHA-256 or the first 8 or more
    /// characters of it) to OUTPUT, whole.
    SaveArtifact {
        id: String,
        file: String,
        #[arg(short, long, value_name = "OUTPUT")]
        output: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// The resource links tools returned in a conversation (read one with read-link).
    Links {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Starts the server that returned the link URI (the newest such link), reads it, keeps
    /// what it reads among the conversation's files (the canvas), stops the server.
    ReadLink {
        id: String,
        uri: String,
        #[arg(long)]
        json: bool,
        /// Seconds to wait for the answer (else as `mcp call`).
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// What the window's composer holds for the conversation and has not sent: its text, the
    /// files attached and the models a comparison would ask (nothing when empty).
    Draft {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Summarises the conversation's earlier messages now, as a long conversation does when it
    /// no longer fits the model's window: every turn before the newest one. The messages stay
    /// (in the conversation, in search, in exports); the model reads the summary in their place.
    Compact {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Deletes one question (MESSAGE, a user message's id) and everything that answered it.
    DeleteTurn {
        id: String,
        message: String,
        #[arg(long)]
        json: bool,
    },
}

/// A snippet for a terminal: matched words in `[` `]`.
fn snippet_text(parts: &[SnippetPart]) -> String {
    let text: String = parts
        .iter()
        .map(|p| {
            if p.hit {
                format!("[{}]", p.text)
            } else {
                p.text.clone()
            }
        })
        .collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) async fn run(
    app: &Arc<App>,
    command: ConversationsCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        ConversationsCommand::List { json } => list(app, json, out).await,
        ConversationsCommand::Artifacts { id, json } => artifacts(app, id, json, out).await,
        ConversationsCommand::SaveArtifact {
            id,
            file,
            output,
            json,
        } => save_artifact(app, id, file, output, json, out).await,
        ConversationsCommand::Links { id, json } => links(app, id, json, out).await,
        ConversationsCommand::ReadLink {
            id,
            uri,
            json,
            timeout,
        } => read_link(app, id, uri, json, timeout, out).await,
        ConversationsCommand::Show { id, json } => show(app, id, json, out).await,
        ConversationsCommand::Context { id, json } => context(app, id, json, out).await,
        ConversationsCommand::Search {
            query,
            limit,
            project,
            json,
        } => search(app, query, limit, project, json, out).await,
        ConversationsCommand::Compact { id, json } => compact(app, id, json, out).await,
        ConversationsCommand::Export { id, format, output } => {
            export(app, id, format, output, out).await
        }
        ConversationsCommand::Branch {
            id,
            message,
            n,
            json,
        } => branch(app, id, message, n, json, out).await,
        ConversationsCommand::Reveal { id, message, json } => {
            reveal(app, id, message, json, out).await
        }
        ConversationsCommand::Draft { id, json } => draft(app, id, json, out).await,
        ConversationsCommand::DeleteTurn { id, message, json } => {
            delete_turn(app, id, message, json, out).await
        }
        ConversationsCommand::Import { file, json } => import(app, file, json, out).await,
    }
}

async fn list(app: &Arc<App>, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let list = app.conversations().list().await?;
    list_out(
        out,
        json,
        &list,
        "No conversations yet.",
        ["ID", "MODEL", "TITLE"],
        |c| {
            [
                c.id.clone(),
                c.model.clone().unwrap_or_else(|| "-".into()),
                crate::text::one_line(&c.title, 80),
            ]
        },
    )?;
    Ok(())
}

async fn context(
    app: &Arc<App>,
    id: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let used = app.conversations().context(&id).await?;
    if json {
        return json_out(out, &used);
    }
    let Some(used) = used else {
        writeln!(
            out,
            "The model has not been given anything since this was kept."
        )?;
        return Ok(());
    };
    let n = crate::price::grouped;
    match used.window {
        Some(window) => writeln!(
            out,
            "{} of {} tokens in the window ({} %), counted by {}.",
            n(used.tokens),
            n(window),
            used.tokens * 100 / window.max(1),
            used.counted_by
        )?,
        None => writeln!(
            out,
            "{} tokens; the model's window is not known. Counted by {}.",
            n(used.tokens),
            used.counted_by
        )?,
    }
    if let Some(needed) = used.needed {
        writeln!(
            out,
            "The conversation needs {}: older messages were summarised or left out.",
            n(needed)
        )?;
    }
    writeln!(
        out,
        "System prompt {} · tools {} · messages {} · files {}",
        n(used.system),
        n(used.tools),
        n(used.history),
        n(used.attachments)
    )?;
    let given = used.given.unwrap_or_default();
    let lists = [
        ("The project's files given whole", &given.whole),
        ("Passages of the project's files given", &given.passages),
        ("Remembered facts given", &given.facts),
    ];
    for (what, items) in lists {
        if !items.is_empty() {
            writeln!(out, "{what} ({}):", items.len())?;
            for item in items {
                writeln!(out, "  {}", crate::text::one_line(item, 200))?;
            }
        }
    }
    Ok(())
}

async fn artifacts(
    app: &Arc<App>,
    id: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let list = app.artifacts(&id).await?;
    list_out(
        out,
        json,
        &list,
        "No tool has produced a file in this conversation.",
        ["FILE", "NAME", "TYPE", "SIZE", "TOOL"],
        |a| {
            [
                a.file.sha256[..12].to_owned(),
                a.file.name.clone(),
                a.file.mime.clone(),
                crate::text::byte_size(a.file.size),
                crate::text::one_line(&a.tool, 40),
            ]
        },
    )?;
    Ok(())
}

async fn save_artifact(
    app: &Arc<App>,
    id: String,
    file: String,
    output: PathBuf,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let list = app.artifacts(&id).await?;
    let chosen = list
            .iter()
            .rev()
            .find(|a| a.file.sha256 == file || a.file.name == file)
            .or_else(|| {
                let prefix = file.to_ascii_lowercase();
                let mut by_prefix = list
                    .iter()
                    .filter(|a| prefix.len() >= 8 && a.file.sha256.starts_with(&prefix));
                let first = by_prefix.next()?;
                by_prefix
                    .all(|a| a.file.sha256 == first.file.sha256)
                    .then_some(first)
            })
            .ok_or_else(|| {
                crate::error::CoreError::NotFound {
                    what: format!("a file “{file}” among this conversation's tool results (see: switchboard conversations artifacts {id})"),
                }
            })?;
    let saved = app.save_artifact(&id, &chosen.file.sha256, &output).await?;
    if json {
        json_out(out, &serde_json::json!({"file": saved, "path": output}))?;
    } else {
        writeln!(
            out,
            "Saved “{}” ({}) to {}",
            saved.name,
            crate::text::byte_size(saved.size),
            output.display()
        )?;
    }
    Ok(())
}

async fn links(
    app: &Arc<App>,
    id: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let links = app.tool_links(&id).await?;
    list_out(
        out,
        json,
        &links,
        "No tool has returned a link in this conversation.",
        ["URI", "NAME", "SERVER", "TOOL"],
        |l| {
            [
                crate::text::one_line(&l.uri, 80),
                crate::text::one_line(&l.name, 40),
                crate::text::one_line(&l.server, 30),
                crate::text::one_line(&l.tool, 30),
            ]
        },
    )?;
    Ok(())
}

async fn read_link(
    app: &Arc<App>,
    id: String,
    uri: String,
    json: bool,
    timeout: Option<u64>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let link = app
            .tool_links(&id)
            .await?
            .into_iter()
            .rev()
            .find(|l| l.uri == uri)
            .ok_or_else(|| crate::error::CoreError::NotFound {
                what: format!("a link “{uri}” among this conversation's tool results (see: switchboard conversations links {id})"),
            })?;
    let timeout = super::mcp_features::timeout_for(app, &link.server, timeout)?;
    let server = app.mcp_start(&link.server).await?;
    let read = app.read_link_through(&id, &link, &server, timeout).await;
    server.stop().await;
    let kept = read?;
    if json {
        json_out(out, &kept)?;
    } else {
        for a in &kept {
            writeln!(
                out,
                "Kept “{}” ({}, {}) as {}",
                a.file.name,
                a.file.mime,
                crate::text::byte_size(a.file.size),
                &a.file.sha256[..12]
            )?;
        }
    }
    Ok(())
}

async fn show(
    app: &Arc<App>,
    id: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let file = app.conversations().export(&id).await?;
    if json {
        json_out(out, &file)?;
    } else {
        write!(out, "{}", to_markdown(&file))?;
    }
    Ok(())
}

async fn search(
    app: &Arc<App>,
    query: String,
    limit: u32,
    project: Option<String>,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let hits = match project {
        Some(name) => {
            let project = app.projects().get(&name).await?;
            app.conversations()
                .search_in(&query, Some(limit), &project.id)
                .await?
        }
        None => app.conversations().search(&query, Some(limit)).await?,
    };
    if json {
        json_out(out, &hits)?;
    } else if hits.is_empty() {
        writeln!(out, "Nothing found for “{query}”.")?;
    } else {
        for hit in &hits {
            let what = match hit.role {
                None => "title",
                Some(Role::User) => "you",
                Some(Role::Assistant) => "answer",
                Some(Role::Tool) => "tool result",
                Some(Role::System) => "system",
            };
            let version = if hit.other_version {
                format!(
                    ", another version: conversations reveal {} {}",
                    hit.conversation_id,
                    hit.message_id.as_deref().unwrap_or_default()
                )
            } else {
                String::new()
            };
            writeln!(
                out,
                "{}  {}  ({what}{version})\n    {}",
                hit.conversation_id,
                crate::text::one_line(&hit.conversation_title, 60),
                snippet_text(&hit.snippet)
            )?;
        }
    }
    Ok(())
}

async fn compact(
    app: &Arc<App>,
    id: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let summary = app.compact_conversation(&id).await?;
    if json {
        json_out(out, &serde_json::json!({ "summary": summary }))?;
    } else {
        match summary {
                Some(s) => {
                    let left = match s.left_out {
                        0 => String::new(),
                        n => format!(" ({n} older ones named as left out)"),
                    };
                    writeln!(
                        out,
                        "Summarised {} earlier messages{left}; they stay in the conversation.\n\n{}",
                        s.summarised, s.text
                    )?;
                }
                None => writeln!(out, "Nothing to summarise: the conversation has one turn, or every earlier one is summarised already.")?,
            }
    }
    Ok(())
}

async fn export(
    app: &Arc<App>,
    id: String,
    format: ExportFormat,
    output: Option<PathBuf>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let file = app.conversations().export(&id).await?;
    match output {
        Some(path) => {
            app.conversations()
                .write_export(&file, format, path.clone())
                .await?;
            writeln!(
                out,
                "Wrote “{}” ({} messages) to {}.",
                file.conversation.title,
                file.messages.len(),
                path.display()
            )?;
        }
        // Printed as everything is: hidden characters as escapes (in JSON the same text
        // once parsed); `-o FILE` writes them as they are.
        None => out.write_all(export_text(&file, format).as_bytes())?,
    }
    Ok(())
}

async fn branch(
    app: &Arc<App>,
    id: String,
    message: String,
    n: i64,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let switched = app.switch_branch(&id, &message, n - 1).await?;
    if json {
        json_out(out, &switched)?;
    } else {
        writeln!(
            out,
            "Showing branch {} of {} (it starts at message {}).",
            switched.point.position + 1,
            switched.point.count,
            switched.point.message_id
        )?;
    }
    Ok(())
}

async fn reveal(
    app: &Arc<App>,
    id: String,
    message: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let seq = app.reveal_message(&id, &message).await?;
    if json {
        json_out(
            out,
            &serde_json::json!({ "message_id": message, "seq": seq }),
        )?;
    } else {
        writeln!(out, "Message {message} is shown (number {seq}).")?;
    }
    Ok(())
}

async fn draft(
    app: &Arc<App>,
    id: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let draft = app.draft(&id).await?;
    if json {
        json_out(out, &draft)?;
    } else if let Some(draft) = draft {
        if !draft.text.is_empty() {
            writeln!(out, "{}", draft.text)?;
        }
        for file in &draft.attachments {
            writeln!(
                out,
                "Attached: {} ({}, {})",
                file.name,
                file.mime,
                crate::text::byte_size(file.size)
            )?;
        }
        if draft.comparing {
            let models: Vec<String> = draft
                .compared
                .iter()
                .map(|m| match &m.model {
                    Some(model) => format!("{} · {model}", m.provider),
                    None => m.provider.clone(),
                })
                .collect();
            writeln!(out, "Compare: {}", models.join(", "))?;
        }
    }
    Ok(())
}

async fn delete_turn(
    app: &Arc<App>,
    id: String,
    message: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let deleted = app.delete_turn(&id, &message).await?;
    if json {
        json_out(out, &serde_json::json!({ "deleted": deleted }))?;
    } else {
        writeln!(out, "Deleted {} messages.", deleted.len())?;
    }
    Ok(())
}

async fn import(
    app: &Arc<App>,
    file: PathBuf,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let conversation = app.conversations().import_file(file).await?;
    if json {
        json_out(out, &conversation)?;
    } else {
        writeln!(
            out,
            "Imported “{}” as conversation {}.",
            conversation.title, conversation.id
        )?;
    }
    Ok(())
}
