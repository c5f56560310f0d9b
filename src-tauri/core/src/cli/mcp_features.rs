//! `switchboard mcp resources|read|prompts|prompt|complete`: a server's resources and prompts
//! from the terminal. Each verb starts the server, does one thing and stops it, whatever
//! happens (as `mcp tools` and `mcp call` do); `--json` prints what the server answered, whole.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use clap::Subcommand;
use rmcp::model::ResourceContents;
use serde::Serialize;

use super::output::{json_out, write_table, CliError};
use crate::app::App;
use crate::mcp::features::Completing;
use crate::mcp::server::McpServer;

#[derive(Debug, Subcommand)]
pub(crate) enum FeatureCommand {
    /// Start a server, list its resources and resource templates, stop it.
    Resources {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Start a server, read one resource, print it, stop it. Binary contents are described,
    /// or written whole with --output.
    Read {
        name: String,
        uri: String,
        /// Write the resource's contents (text or decoded bytes) to this file instead.
        #[arg(long, short)]
        output: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        /// Seconds to wait for the answer (else as `mcp call`).
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// Start a server, list its prompts with their arguments (* = required), stop it.
    Prompts {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Start a server, get one prompt with its arguments as a JSON object, print its
    /// messages, stop it.
    Prompt {
        name: String,
        prompt: String,
        #[arg(default_value = "{}")]
        arguments: String,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// Start a server, ask what it suggests for an argument of a prompt (--prompt) or a
    /// resource template (--template) given what is typed of it, stop it.
    Complete(CompleteArgs),
}

/// The arguments of `complete`.
#[derive(Debug, clap::Args)]
pub(crate) struct CompleteArgs {
    name: String,
    #[arg(
        long,
        required_unless_present = "template",
        conflicts_with = "template"
    )]
    prompt: Option<String>,
    /// A resource template's `uriTemplate`.
    #[arg(long)]
    template: Option<String>,
    argument: String,
    #[arg(default_value = "")]
    value: String,
    /// The arguments already chosen, as a JSON object of strings.
    #[arg(long)]
    context: Option<String>,
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(
    app: &App,
    command: FeatureCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        FeatureCommand::Resources { name, json } => resources(app, name, json, out).await,
        FeatureCommand::Read {
            name,
            uri,
            output,
            json,
            timeout,
        } => read(app, name, uri, output, json, timeout, out).await,
        FeatureCommand::Prompts { name, json } => prompts(app, name, json, out).await,
        FeatureCommand::Prompt {
            name,
            prompt,
            arguments,
            json,
            timeout,
        } => get_prompt(app, name, prompt, arguments, json, timeout, out).await,
        FeatureCommand::Complete(args) => complete(app, args, out).await,
    }
}

async fn resources(
    app: &App,
    name: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let (resources, templates) = on_server(app, &name, |server| {
        Box::pin(async move {
            Ok((
                server.list_resources().await?,
                server.list_resource_templates().await?,
            ))
        })
    })
    .await?;
    if json {
        let listed = serde_json::json!({
            "resources": resources,
            "resourceTemplates": templates,
        });
        return write_json(out, &listed);
    }
    if resources.is_empty() && templates.is_empty() {
        writeln!(out, "“{}” offers no resources.", name.trim())?;
        return Ok(());
    }
    if !resources.is_empty() {
        let rows: Vec<[String; 4]> = resources
            .iter()
            .map(|r| {
                [
                    r.uri.clone(),
                    r.title.clone().unwrap_or_else(|| r.name.clone()),
                    r.mime_type.clone().unwrap_or_default(),
                    r.size.map(size).unwrap_or_default(),
                ]
            })
            .collect();
        write_table(out, ["URI", "NAME", "TYPE", "SIZE"], &rows)?;
    }
    if !templates.is_empty() {
        if !resources.is_empty() {
            writeln!(out)?;
        }
        let rows: Vec<[String; 3]> = templates
            .iter()
            .map(|t| {
                [
                    t.uri_template.clone(),
                    t.title.clone().unwrap_or_else(|| t.name.clone()),
                    t.mime_type.clone().unwrap_or_default(),
                ]
            })
            .collect();
        write_table(out, ["TEMPLATE", "NAME", "TYPE"], &rows)?;
    }
    Ok(())
}

async fn read(
    app: &App,
    name: String,
    uri: String,
    output: Option<PathBuf>,
    json: bool,
    timeout: Option<u64>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let timeout = timeout_for(app, &name, timeout)?;
    let read = on_server(app, &name, |server| {
        Box::pin(async move { server.read_resource(&uri, timeout).await })
    })
    .await?;
    if json {
        return write_json(out, &read);
    }
    if let Some(path) = output {
        let first = read.contents.first().ok_or_else(|| {
            CliError::Output("the server sent no contents for that resource".into())
        })?;
        let bytes = contents_bytes(first)?;
        crate::paths::write_whole(&path, &bytes)
            .map_err(|e| CliError::Output(format!("cannot write {}: {e}", path.display())))?;
        writeln!(
            out,
            "Wrote {} to {}.",
            size(bytes.len() as u64),
            path.display()
        )?;
        return Ok(());
    }
    for contents in &read.contents {
        match contents {
            ResourceContents::TextResourceContents { text, .. } => {
                writeln!(out, "{text}")?;
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => writeln!(
                out,
                "[{uri}: {}, {} of binary data; --output FILE saves it]",
                mime_type.as_deref().unwrap_or("unknown type"),
                crate::mcp::results::base64_size(blob.len())
            )?,
            other => writeln!(out, "{}", json_text(other)?)?,
        }
    }
    Ok(())
}

async fn prompts(
    app: &App,
    name: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let prompts = on_server(app, &name, |server| {
        Box::pin(async move { server.list_prompts().await })
    })
    .await?;
    if json {
        return write_json(out, &prompts);
    }
    if prompts.is_empty() {
        writeln!(out, "“{}” offers no prompts.", name.trim())?;
        return Ok(());
    }
    let rows: Vec<[String; 3]> = prompts
        .iter()
        .map(|p| {
            let arguments = p
                .arguments
                .iter()
                .flatten()
                .map(|a| match a.required {
                    Some(true) => format!("{}*", a.name),
                    _ => a.name.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ");
            let about = p.title.as_deref().or(p.description.as_deref());
            [
                p.name.clone(),
                arguments,
                crate::text::one_line(about.unwrap_or_default(), 80),
            ]
        })
        .collect();
    write_table(out, ["PROMPT", "ARGUMENTS", "ABOUT"], &rows)?;
    Ok(())
}

async fn get_prompt(
    app: &App,
    name: String,
    prompt: String,
    arguments: String,
    json: bool,
    timeout: Option<u64>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let arguments = object(&arguments, "the arguments")?;
    let timeout = timeout_for(app, &name, timeout)?;
    let got = on_server(app, &name, |server| {
        Box::pin(async move { server.get_prompt(&prompt, arguments, timeout).await })
    })
    .await?;
    if json {
        return write_json(out, &got);
    }
    for message in &got.messages {
        let content =
            serde_json::to_value(&message.content).map_err(|e| CliError::Output(e.to_string()))?;
        let role = serde_json::to_value(&message.role)
            .ok()
            .and_then(|r| r.as_str().map(str::to_owned))
            .unwrap_or_default();
        writeln!(
            out,
            "{role}: {}",
            crate::mcp::results::content_text(&content)
        )?;
    }
    Ok(())
}

async fn complete(app: &App, args: CompleteArgs, out: &mut impl Write) -> Result<(), CliError> {
    let CompleteArgs {
        name,
        prompt,
        template,
        argument,
        value,
        context,
        json,
    } = args;
    let completing = match (prompt, template) {
        (Some(prompt), _) => Completing::Prompt(prompt),
        (None, Some(template)) => Completing::Template(template),
        (None, None) => return Err(CliError::Usage("--prompt or --template".into())),
    };
    let context = match context {
        Some(text) => strings(&text)?,
        None => HashMap::new(),
    };
    let timeout = timeout_for(app, &name, None)?;
    let values = on_server(app, &name, |server| {
        Box::pin(async move {
            server
                .complete(completing, &argument, &value, context, timeout)
                .await
        })
    })
    .await?;
    if json {
        return write_json(out, &values);
    }
    for value in values {
        writeln!(out, "{value}")?;
    }
    Ok(())
}

/// What a verb does on a started server.
type Work<'s, T> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<T, crate::mcp::server::McpError>> + Send + 's>,
>;

/// Starts the server, does `work` on it, and stops it whatever `work` gave.
async fn on_server<T>(
    app: &App,
    name: &str,
    work: impl for<'s> FnOnce(&'s McpServer) -> Work<'s, T>,
) -> Result<T, CliError> {
    let server = app.mcp_start(name).await?;
    let done = work(&server).await;
    server.stop().await;
    Ok(done.map_err(crate::CoreError::from)?)
}

/// How long to wait for one answer (`mcp call` too): `--timeout`, else the server's
/// `timeoutSeconds`, else Settings' tool timeout.
pub(super) fn timeout_for(app: &App, name: &str, secs: Option<u64>) -> Result<Duration, CliError> {
    Ok(match secs {
        Some(secs) => Duration::from_secs(secs.max(1)),
        None => app.mcp_call_timeout(
            name,
            Duration::from_secs(u64::from(app.settings().tool_timeout_secs)),
        )?,
    })
}

/// A value as one line of JSON.
fn json_text(value: &impl Serialize) -> Result<String, CliError> {
    serde_json::to_string(value).map_err(|e| CliError::Output(e.to_string()))
}

fn write_json(out: &mut impl Write, value: &impl Serialize) -> Result<(), CliError> {
    json_out(out, value)?;
    Ok(())
}

/// A JSON object given on the command line.
fn object(text: &str, what: &str) -> Result<serde_json::Map<String, serde_json::Value>, CliError> {
    serde_json::from_str(text)
        .map_err(|e| CliError::Usage(format!("{what} must be a JSON object: {e}")))
}

/// A JSON object of strings given on the command line.
fn strings(text: &str) -> Result<HashMap<String, String>, CliError> {
    serde_json::from_str(text)
        .map_err(|e| CliError::Usage(format!("--context must be a JSON object of strings: {e}")))
}

/// A resource's contents as bytes: text as UTF-8, a blob decoded from base64.
fn contents_bytes(contents: &ResourceContents) -> Result<Vec<u8>, CliError> {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => Ok(text.clone().into_bytes()),
        ResourceContents::BlobResourceContents { blob, .. } => {
            base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .map_err(|e| {
                    CliError::Output(format!("the server's blob is not valid base64: {e}"))
                })
        }
        other => Ok(json_text(other)?.into_bytes()),
    }
}

fn size(bytes: u64) -> String {
    crate::text::byte_size(bytes)
}
