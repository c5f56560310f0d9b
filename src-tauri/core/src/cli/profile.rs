//! `switchboard profile …`: list, show, create, edit, duplicate, delete profiles, choose the
//! default, export and import them as JSON, and put one on a conversation. A profile is a
//! name, a system prompt, a model, a tool set and the loop's limits; `chat --profile NAME`
//! starts a conversation from one.

use std::io::Write;
use std::sync::Arc;

use clap::{Args, Subcommand};

use super::output::{json_out, list_out, CliError};
use crate::store::{Profile, ProfileFields, ToolToggle};
use crate::App;

#[derive(Debug, Subcommand)]
pub(crate) enum ProfileCommand {
    /// List profiles (the default is marked).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show one profile in full.
    Show {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Make a profile.
    Create {
        name: String,
        #[command(flatten)]
        fields: FieldArgs,
        /// New conversations start from it.
        #[arg(long)]
        default: bool,
        #[arg(long)]
        json: bool,
    },
    /// Change a profile: only what is given changes.
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
    /// Copy a profile as "NAME (copy)".
    Duplicate {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete a profile (conversations that followed it keep what it gave them).
    Delete { name: String },
    /// Make NAME the profile new conversations start from; `--none` for none; with neither,
    /// say which it is.
    Default {
        #[arg(conflicts_with = "none")]
        name: Option<String>,
        #[arg(long)]
        none: bool,
    },
    /// Write a profile as JSON (to stdout, or to --out FILE).
    Export {
        name: String,
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// Keep the profile a JSON file holds (a taken name gets " (2)").
    Import {
        file: std::path::PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Put a profile on a conversation: its prompt, model and tool switches replace the
    /// conversation's from the next message (`--none`: follow no profile, keep what it has).
    Apply {
        /// The conversation's id.
        conversation: String,
        #[arg(required_unless_present = "none")]
        name: Option<String>,
        #[arg(long, conflicts_with = "name")]
        none: bool,
    },
}

/// What a profile holds, as options; each one left out stays as it is (`create`: empty or
/// Settings').
#[derive(Debug, Args)]
pub(crate) struct FieldArgs {
    /// The system prompt ("" for none).
    #[arg(long, value_name = "TEXT", conflicts_with = "system_file")]
    system: Option<String>,
    /// The system prompt, read from a file.
    #[arg(long, value_name = "FILE")]
    system_file: Option<std::path::PathBuf>,
    /// The provider (by name) to ask; "" for Settings' default model.
    #[arg(long)]
    provider: Option<String>,
    /// The model of that provider ("" for the provider's default model).
    #[arg(long)]
    model: Option<String>,
    /// Rounds of tool use before the model must answer (1–100), or `default` for Settings'.
    #[arg(long, value_name = "N|default", value_parser = limit)]
    max_rounds: Option<Limit>,
    /// Seconds a tool call may take, or `default`.
    #[arg(long, value_name = "SECONDS|default", value_parser = limit)]
    tool_timeout: Option<Limit>,
    /// Seconds a whole answer may take, or `default`.
    #[arg(long, value_name = "SECONDS|default", value_parser = limit)]
    time_limit: Option<Limit>,
    /// Only these servers' tools (comma-separated; `none` for no tools): every server in
    /// mcp.json not named is switched off; `all` switches every server on.
    #[arg(long, value_name = "SERVERS")]
    servers: Option<String>,
    /// A switch for one server or tool: `SERVER=on`, `SERVER:TOOL=off`. Repeat for several;
    /// applied after --servers.
    #[arg(long = "switch", value_name = "SERVER[:TOOL]=on|off", value_parser = switch)]
    switches: Vec<ToolToggle>,
}

/// A limit as given: a number, or `default` (none: Settings' value).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limit(Option<u32>);

fn limit(text: &str) -> Result<Limit, String> {
    match text.trim() {
        "default" => Ok(Limit(None)),
        n => n
            .parse()
            .map(|n| Limit(Some(n)))
            .map_err(|_| format!("“{text}” is not a whole number or `default`")),
    }
}

pub(crate) fn switch(text: &str) -> Result<ToolToggle, String> {
    let (target, state) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("“{text}” is not SERVER[:TOOL]=on|off"))?;
    let enabled = match state.trim() {
        "on" => true,
        "off" => false,
        other => return Err(format!("“{other}” is neither on nor off")),
    };
    let (server, tool) = match target.split_once(':') {
        Some((server, tool)) => (server, Some(tool.trim().to_owned())),
        None => (target, None),
    };
    Ok(ToolToggle {
        server: server.trim().to_owned(),
        tool,
        enabled,
    })
}

impl FieldArgs {
    /// `fields` with what the options say.
    async fn apply(self, app: &App, mut fields: ProfileFields) -> Result<ProfileFields, CliError> {
        if let Some(text) = self.system {
            fields.system_prompt = text;
        }
        if let Some(path) = self.system_file {
            fields.system_prompt = std::fs::read_to_string(&path)
                .map_err(|e| CliError::Usage(format!("Cannot read {}: {e}", path.display())))?;
        }
        if let Some(provider) = self.provider {
            fields.provider = Some(provider).filter(|p| !p.trim().is_empty());
            if fields.provider.is_none() {
                fields.model = None;
            }
        }
        if let Some(model) = self.model {
            fields.model = Some(model).filter(|m| !m.trim().is_empty());
        }
        if let Some(Limit(n)) = self.max_rounds {
            fields.max_rounds = n;
        }
        if let Some(Limit(n)) = self.tool_timeout {
            fields.tool_timeout_secs = n;
        }
        if let Some(Limit(n)) = self.time_limit {
            fields.run_time_limit_secs = n;
        }
        if let Some(list) = self.servers {
            fields.tools = server_switches(app, &list).await?;
        }
        fields.tools.extend(self.switches);
        Ok(fields)
    }
}

/// The switches `--servers all|none|A,B` makes: one per server mcp.json has, on when named (or
/// all); a server named that mcp.json does not have yet is on when it comes.
async fn server_switches(app: &App, list: &str) -> Result<Vec<ToolToggle>, CliError> {
    let named: Vec<String> = match list.trim() {
        "all" | "none" | "" => Vec::new(),
        list => list.split(',').map(|s| s.trim().to_owned()).collect(),
    };
    let every = list.trim() == "all";
    let mut switches: Vec<ToolToggle> = app
        .mcp_servers()
        .await?
        .into_iter()
        .map(|s| ToolToggle {
            enabled: every || named.iter().any(|n| n.eq_ignore_ascii_case(&s.name)),
            server: s.name,
            tool: None,
        })
        .collect();
    for name in named {
        if !switches
            .iter()
            .any(|t| t.server.eq_ignore_ascii_case(&name))
        {
            switches.push(ToolToggle {
                server: name,
                tool: None,
                enabled: true,
            });
        }
    }
    Ok(switches)
}

pub(crate) async fn run(
    app: &Arc<App>,
    command: ProfileCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        ProfileCommand::List { json } => list(app, json, out).await,
        ProfileCommand::Show { name, json } => show(app, name, json, out).await,
        ProfileCommand::Create {
            name,
            fields,
            default,
            json,
        } => create(app, name, fields, default, json, out).await,
        ProfileCommand::Edit {
            name,
            rename,
            fields,
            json,
        } => edit(app, name, rename, fields, json, out).await,
        ProfileCommand::Duplicate { name, json } => duplicate(app, name, json, out).await,
        ProfileCommand::Delete { name } => delete(app, name, out).await,
        ProfileCommand::Default { name, none } => default(app, name, none, out).await,
        ProfileCommand::Export { name, out: file } => export(app, name, file, out).await,
        ProfileCommand::Import { file, json } => import(app, file, json, out).await,
        ProfileCommand::Apply {
            conversation,
            name,
            none,
        } => apply(app, conversation, name, none, out).await,
    }
}

async fn default(
    app: &Arc<App>,
    name: Option<String>,
    none: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match (name, none) {
        (Some(name), _) => {
            let profile = app.profiles().get(&name).await?;
            app.profiles().set_default(Some(&profile.id)).await?;
            writeln!(out, "New conversations start from “{}”.", profile.name)?;
        }
        (None, true) => {
            app.profiles().set_default(None).await?;
            writeln!(out, "New conversations start from Settings (no profile).")?;
        }
        (None, false) => match app.profiles().list().await?.iter().find(|p| p.is_default) {
            Some(p) => writeln!(out, "{}", p.name)?,
            None => writeln!(
                out,
                "No default profile: new conversations start from Settings."
            )?,
        },
    }
    Ok(())
}

async fn list(app: &Arc<App>, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let profiles = app.profiles().list().await?;
    list_out(
        out,
        json,
        &profiles,
        "No profiles yet. Make one with: switchboard profile create NAME --system TEXT",
        ["NAME", "MODEL", "TOOLS", "SYSTEM PROMPT"],
        |p| {
            [
                format!("{}{}", p.name, if p.is_default { " (default)" } else { "" }),
                model_of(p),
                tools_of(p),
                first_line(&p.fields.system_prompt),
            ]
        },
    )
}

async fn show(
    app: &Arc<App>,
    name: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let profile = app.profiles().get(&name).await?;
    if json {
        return json_out(out, &profile);
    }
    write_profile(out, &profile)?;
    Ok(())
}

async fn create(
    app: &Arc<App>,
    name: String,
    fields: FieldArgs,
    default: bool,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let fields = fields.apply(app, ProfileFields::default()).await?;
    let mut made = app.profiles().create(&name, fields).await?;
    if default {
        app.profiles().set_default(Some(&made.id)).await?;
        made.is_default = true;
    }
    done(out, json, &made, "Made")?;
    Ok(())
}

async fn edit(
    app: &Arc<App>,
    name: String,
    rename: Option<String>,
    fields: FieldArgs,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let profile = app.profiles().get(&name).await?;
    let fields = fields.apply(app, profile.fields).await?;
    let new_name = rename.unwrap_or(profile.name);
    let updated = app
        .profiles()
        .update(&profile.id, &new_name, fields)
        .await?;
    done(out, json, &updated, "Changed")?;
    Ok(())
}

async fn duplicate(
    app: &Arc<App>,
    name: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let copy = app.profiles().duplicate(&name).await?;
    done(out, json, &copy, "Made")?;
    Ok(())
}

async fn delete(app: &Arc<App>, name: String, out: &mut impl Write) -> Result<(), CliError> {
    let profile = app.profiles().get(&name).await?;
    app.profiles().delete(&profile.id).await?;
    writeln!(out, "Deleted the profile “{}”.", profile.name)?;
    Ok(())
}

async fn export(
    app: &Arc<App>,
    name: String,
    file: Option<std::path::PathBuf>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let json = app.profiles().export(&name).await?;
    match file {
        Some(path) => {
            std::fs::write(&path, json)
                .map_err(|e| CliError::Usage(format!("Cannot write {}: {e}", path.display())))?;
            crate::cli::terminal::say!("switchboard: wrote {}", path.display());
        }
        None => write!(out, "{json}")?,
    }
    Ok(())
}

async fn import(
    app: &Arc<App>,
    file: std::path::PathBuf,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let imported = app.profiles().import_file(file).await?;
    if json {
        return json_out(out, &imported);
    }
    for note in &imported.notes {
        crate::cli::terminal::say!("switchboard: {note}");
    }
    writeln!(out, "Imported the profile “{}”.", imported.profile.name)?;
    Ok(())
}

async fn apply(
    app: &Arc<App>,
    conversation: String,
    name: Option<String>,
    none: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let key = name.filter(|_| !none);
    let updated = app
        .profiles()
        .set_conversation_profile(&conversation, key.as_deref())
        .await?;
    match key {
        Some(_) => {
            let profile = app
                .profiles()
                .get(updated.profile_id.as_deref().unwrap_or_default())
                .await?;
            writeln!(
                out,
                "“{}” follows the profile “{}” from its next message.",
                updated.title, profile.name
            )?;
        }
        None => writeln!(out, "“{}” follows no profile.", updated.title)?,
    }
    Ok(())
}

fn done(out: &mut impl Write, json: bool, profile: &Profile, verb: &str) -> Result<(), CliError> {
    if json {
        return json_out(out, profile);
    }
    writeln!(out, "{verb} the profile “{}”.", profile.name)?;
    Ok(())
}

fn model_of(p: &Profile) -> String {
    match (&p.fields.provider, &p.fields.model) {
        (Some(provider), Some(model)) => format!("{provider} · {model}"),
        (Some(provider), None) => format!("{provider} · its default"),
        _ => "Settings' default".into(),
    }
}

fn tools_of(p: &Profile) -> String {
    if p.fields.tools.is_empty() {
        return "all".into();
    }
    switches_text(&p.fields.tools)
}

/// Tool switches as the person reads them: "git off, fs:write_file on".
pub(super) fn switches_text(tools: &[ToolToggle]) -> String {
    tools
        .iter()
        .map(|t| format!("{} {}", t.target(120), if t.enabled { "on" } else { "off" }))
        .collect::<Vec<_>>()
        .join(", ")
}

fn first_line(text: &str) -> String {
    crate::text::one_line(text.lines().next().unwrap_or_default(), 50)
}

fn write_profile(out: &mut impl Write, p: &Profile) -> Result<(), CliError> {
    let limit = |v: Option<u32>| v.map_or_else(|| "Settings'".to_owned(), |n| n.to_string());
    writeln!(
        out,
        "{}{}",
        p.name,
        if p.is_default { " (default)" } else { "" }
    )?;
    writeln!(out, "  model:        {}", model_of(p))?;
    writeln!(out, "  tools:        {}", tools_of(p))?;
    writeln!(out, "  max rounds:   {}", limit(p.fields.max_rounds))?;
    writeln!(out, "  tool timeout: {}", limit(p.fields.tool_timeout_secs))?;
    writeln!(
        out,
        "  time limit:   {}",
        limit(p.fields.run_time_limit_secs)
    )?;
    writeln!(out, "  system prompt:")?;
    for line in p.fields.system_prompt.lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}
