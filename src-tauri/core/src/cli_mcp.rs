//! `switchboard mcp …`: the MCP verbs of the command line, over the same [`Core`] the window
//! uses. `tools` and `call` start the server, do one thing and stop it, whatever happens.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use crate::cli::{write_table, CliError, McpCommand};
use crate::mcp::catalogue::ListedTool;
use crate::mcp::config::{claude_desktop_config_path, ConfigValue, ImportPreview, ServerEntry};
use crate::mcp::oauth::LoopbackBrowser;
use crate::mcp::pins::ToolStatus;
use crate::Core;

pub(crate) async fn run(
    core: &Core,
    command: McpCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        McpCommand::List { json } => {
            let servers = core.mcp_servers().await?;
            if json {
                serde_json::to_writer_pretty(&mut *out, &servers)
                    .map_err(|e| CliError::Output(e.to_string()))?;
                writeln!(out)?;
            } else if servers.is_empty() {
                writeln!(
                    out,
                    "No MCP servers yet. Add one with: switchboard mcp add NAME -- COMMAND ARGS…\n\
                     or import Claude Desktop's: switchboard mcp import --claude"
                )?;
            } else {
                let rows: Vec<[String; 4]> = servers
                    .iter()
                    .map(|s| {
                        let state = match (&s.error, s.disabled, s.approved) {
                            (Some(_), _, _) => "invalid",
                            (None, true, _) => "disabled",
                            (None, false, false) => "needs approval",
                            (None, false, true) => "approved",
                        };
                        [
                            s.name.clone(),
                            s.transport.unwrap_or("-").to_owned(),
                            state.to_owned(),
                            s.command_line
                                .clone()
                                .or_else(|| s.error.clone())
                                .unwrap_or_default(),
                        ]
                    })
                    .collect();
                write_table(
                    out,
                    ["NAME", "TRANSPORT", "STATE", "COMMAND OR ADDRESS"],
                    &rows,
                )?;
            }
        }
        McpCommand::Add {
            name,
            env,
            env_from_env,
            url,
            headers,
            transport,
            command,
        } => {
            let mut entry = ServerEntry {
                url,
                transport,
                env: pairs(&env, "--env")?,
                headers: pairs(&headers, "--header")?,
                ..ServerEntry::default()
            };
            for key in env_from_env {
                let value = std::env::var(&key).map_err(|_| {
                    CliError::Usage(format!("--env-from-env {key}: the variable is not set"))
                })?;
                entry.env.insert(key, ConfigValue::Plain(value));
            }
            if let Some((program, args)) = command.split_first() {
                entry.command = Some(program.clone());
                entry.args = args.to_vec();
            }
            let view = core.mcp_add(&name, entry).await?;
            writeln!(
                out,
                "Added MCP server “{}”: {}",
                view.name,
                view.command_line.unwrap_or_default()
            )?;
        }
        McpCommand::Remove { name } => {
            core.mcp_remove(&name).await?;
            writeln!(out, "Removed MCP server “{}”.", name.trim())?;
        }
        McpCommand::Import { file, claude, yes } => {
            let path = match (file, claude) {
                (Some(path), _) => path,
                (None, _) => claude_desktop_config_path().ok_or_else(|| {
                    CliError::Usage("this system has no config folder for Claude Desktop".into())
                })?,
            };
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
            let preview = core.mcp_import_preview(&text, &path.display().to_string())?;
            print_preview(out, &preview)?;
            if preview.added.is_empty() {
                return Ok(());
            }
            if !yes && !confirm(out, &format!("Import {} server(s)?", preview.added.len()))? {
                writeln!(out, "Nothing imported.")?;
                return Ok(());
            }
            let added = core.mcp_import(&preview).await?;
            writeln!(out, "Imported {}.", added.join(", "))?;
        }
        McpCommand::Approve { name, yes } => {
            let servers = core.mcp_servers().await?;
            let server = servers
                .iter()
                .find(|s| s.name.eq_ignore_ascii_case(name.trim()))
                .ok_or_else(|| CliError::Usage(format!("no server named “{}”", name.trim())))?;
            if let Some(error) = &server.error {
                return Err(CliError::Usage(error.clone()));
            }
            writeln!(
                out,
                "“{}” runs:\n  {}",
                server.name,
                server.command_line.clone().unwrap_or_default()
            )?;
            if !yes && !confirm(out, "Approve it to start?")? {
                writeln!(out, "Not approved.")?;
                return Ok(());
            }
            core.mcp_approve(&server.name).await?;
            writeln!(out, "Approved.")?;
        }
        McpCommand::Login { name } => {
            let announce = |page: &str| {
                eprintln!("Opening your browser to sign in. If it does not open, visit:\n  {page}");
            };
            let browser = LoopbackBrowser::new(announce);
            let server = core.mcp_sign_in(&name, &browser).await?;
            writeln!(
                out,
                "Signed in to “{server}”. Its tokens are in the OS keychain."
            )?;
        }
        McpCommand::Logout { name } => {
            let server = core.mcp_sign_out(&name).await?;
            writeln!(out, "Signed out of “{server}”: its tokens are forgotten.")?;
        }
        McpCommand::Tools { name, json } => {
            let tools = tools_of(core, &name).await?;
            if json {
                serde_json::to_writer_pretty(&mut *out, &tools)
                    .map_err(|e| CliError::Output(e.to_string()))?;
                writeln!(out)?;
            } else {
                let listed: Vec<ListedTool> = tools.iter().map(ListedTool::from_rmcp).collect();
                let reviews = core.mcp_review_tools(name.trim(), &listed).await?;
                let rows: Vec<[String; 3]> = reviews
                    .iter()
                    .map(|r| {
                        let status = match &r.status {
                            ToolStatus::New => "new (pinned now)",
                            ToolStatus::Pinned => "pinned",
                            ToolStatus::Changed { .. } => "HELD BACK: changed",
                        };
                        [r.tool.clone(), r.wire_name.clone(), status.to_owned()]
                    })
                    .collect();
                write_table(out, ["TOOL", "NAME FOR MODELS", "STATUS"], &rows)?;
                if reviews.iter().any(|r| !r.offered) {
                    writeln!(
                        out,
                        "\nA held-back tool is not offered to models until you accept it: \
                         switchboard mcp accept {} TOOL",
                        name.trim()
                    )?;
                }
            }
        }
        McpCommand::Accept { name, tool, yes } => {
            let listed: Vec<ListedTool> = tools_of(core, &name)
                .await?
                .iter()
                .map(ListedTool::from_rmcp)
                .collect();
            let reviews = core.mcp_review_tools(name.trim(), &listed).await?;
            let review = reviews.iter().find(|r| r.tool == tool).ok_or_else(|| {
                CliError::Usage(format!("“{}” has no tool “{tool}”", name.trim()))
            })?;
            let ToolStatus::Changed { diff } = &review.status else {
                writeln!(out, "“{tool}” has not changed since it was pinned.")?;
                return Ok(());
            };
            writeln!(out, "{diff}")?;
            if !yes && !confirm(out, &format!("Offer “{tool}” to models as it is now?"))? {
                writeln!(out, "Still held back.")?;
                return Ok(());
            }
            core.mcp_accept_tool(name.trim(), &tool, &listed).await?;
            writeln!(out, "Accepted.")?;
        }
        McpCommand::Call {
            name,
            tool,
            arguments,
            timeout,
        } => {
            let arguments: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&arguments).map_err(|e| {
                    CliError::Usage(format!("the arguments must be a JSON object: {e}"))
                })?;
            let server = core.mcp_start(&name).await?;
            let result = server
                .call_tool(&tool, arguments, Duration::from_secs(timeout.max(1)))
                .await;
            server.stop().await;
            let result = result.map_err(crate::CoreError::from)?;
            for part in &result.content {
                match part.as_text() {
                    Some(text) => writeln!(out, "{}", text.text)?,
                    None => writeln!(
                        out,
                        "{}",
                        serde_json::to_string(part).map_err(|e| CliError::Output(e.to_string()))?
                    )?,
                }
            }
            if let Some(structured) = &result.structured_content {
                writeln!(out, "{structured}")?;
            }
            if result.is_error == Some(true) {
                eprintln!("switchboard: the tool “{tool}” reported an error");
                return Err(CliError::Failed);
            }
        }
    }
    Ok(())
}

/// Starts the server, lists its tools, and stops it whatever the listing gave.
async fn tools_of(core: &Core, name: &str) -> Result<Vec<rmcp::model::Tool>, CliError> {
    let server = core.mcp_start(name).await?;
    let listed = server.list_tools().await;
    server.stop().await;
    Ok(listed.map_err(crate::CoreError::from)?)
}

/// `KEY=VALUE` arguments into a map.
fn pairs(items: &[String], flag: &str) -> Result<BTreeMap<String, ConfigValue>, CliError> {
    items
        .iter()
        .map(|item| {
            item.split_once('=')
                .map(|(k, v)| (k.trim().to_owned(), ConfigValue::Plain(v.to_owned())))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| CliError::Usage(format!("{flag} {item}: write it as NAME=VALUE")))
        })
        .collect()
}

fn print_preview(out: &mut impl Write, preview: &ImportPreview) -> std::io::Result<()> {
    for item in &preview.added {
        writeln!(out, "+ {}: {}", item.name, item.detail)?;
    }
    for item in &preview.conflicts {
        writeln!(out, "= {}: skipped, {}", item.name, item.detail)?;
    }
    for item in &preview.invalid {
        writeln!(out, "! {}: skipped, {}", item.name, item.detail)?;
    }
    for warning in &preview.warnings {
        writeln!(out, "note: {warning}")?;
    }
    if preview.added.is_empty() {
        writeln!(out, "Nothing new to import.")?;
    }
    Ok(())
}

/// Asks on the terminal; without one, the answer is no (use `--yes`).
fn confirm(out: &mut impl Write, question: &str) -> Result<bool, CliError> {
    if !std::io::stdin().is_terminal() {
        writeln!(
            out,
            "{question} Not asked: no terminal to answer on (use --yes)."
        )?;
        return Ok(false);
    }
    write!(out, "{question} [y/N] ")?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}
