//! `switchboard mcp …`: the MCP verbs of the command line, over the same [`App`] the window
//! holds. `tools` and `call` start the server, do one thing and stop it, whatever happens.
//! Questions (approve this command line? accept this change?) are asked on the terminal by
//! [`TerminalConfirm`], through the same flows the window's native dialog answers.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use clap::Subcommand;

use super::output::{json_out, list_out, write_table, CliError};
use crate::app::{App, ImportSource, InstallRequest, Installed, ToolAcceptance};
use crate::error::CoreError;
use crate::mcp::bundle::{is_bundle_file, BundleError, BundleInfo};
use crate::mcp::catalogue::ListedTool;
use crate::mcp::config::{claude_desktop_config_path, ConfigValue, ImportPreview, ServerEntry};
use crate::mcp::install::InstallError;
use crate::mcp::oauth::LoopbackBrowser;
use crate::mcp::proposal::{self, Proposal};
use crate::mcp::registry;
use crate::mcp::server::HeldBackTool;
use crate::policy::confirm::{Allowance, Confirm, ServerApprovalRequest, ToolChange};
use crate::policy::pins::ToolStatus;

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// List configured servers, with whether each is approved to start.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `mcp add NAME [--env KEY=VALUE]… -- COMMAND ARGS…`, or `--url URL`.
    /// Adding counts as approving exactly this command line.
    Add(AddArgs),
    /// Remove a server, its keychain values and its approval.
    Remove { name: String },
    /// Import servers from Claude Desktop (--claude), a VS Code mcp.json or any JSON file.
    Import {
        #[arg(required_unless_present = "claude")]
        file: Option<std::path::PathBuf>,
        /// Read Claude Desktop's configuration from its usual place.
        #[arg(long, conflicts_with = "file")]
        claude: bool,
        /// Import without asking (the preview is still printed).
        #[arg(long)]
        yes: bool,
    },
    /// Approve a new or changed server to start, after showing its full command line.
    Approve {
        name: String,
        #[arg(long)]
        yes: bool,
    },
    /// Sign in to a remote server that asks for OAuth: opens the browser (the address is
    /// printed too) and keeps the tokens in the OS keychain.
    Login { name: String },
    /// Forget a remote server's OAuth tokens.
    Logout { name: String },
    /// Start a server, list its tools, stop it.
    Tools {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Accept a tool that changed since it was pinned (shows what changed first).
    Accept {
        name: String,
        tool: String,
        #[arg(long)]
        yes: bool,
    },
    /// List the tools that run without asking: in every conversation, or in one.
    Approvals {
        #[arg(long)]
        json: bool,
    },
    /// Let a tool run without asking in every conversation (starts the server to check it
    /// offers the tool, and asks first).
    Allow {
        name: String,
        tool: String,
        #[arg(long)]
        yes: bool,
    },
    /// Take back a tool's standing approval: in every conversation, or (--conversation) in one.
    Revoke {
        name: String,
        tool: String,
        /// The conversation it was allowed in (its id, as `approvals --json` shows).
        #[arg(long)]
        conversation: Option<String>,
    },
    /// Start a server, call one tool with JSON arguments, print the result, stop it. Exits 1 on
    /// a tool error, a timeout or a crash, and leaves no process behind.
    Call {
        name: String,
        tool: String,
        #[arg(default_value = "{}")]
        arguments: String,
        /// Seconds to wait for the answer; else the server's `timeoutSeconds` in mcp.json, else
        /// Settings' tool timeout.
        #[arg(long)]
        timeout: Option<u64>,
        /// Run it without asking when a rule (or a path among Switchboard's own files) says
        /// to ask; a block still holds.
        #[arg(long)]
        yes: bool,
    },
    /// The folders a server is given as its roots: shown, or set to FOLDER… (all of them;
    /// `--none` takes them all away). Relative folders are taken from the current one.
    Roots {
        name: String,
        folders: Vec<PathBuf>,
        #[arg(long, conflicts_with = "folders")]
        none: bool,
        #[arg(long)]
        json: bool,
    },
    /// A local server's sandbox: `show` it, turn it `on` (with --network and folders; a
    /// package runner gets the network it needs by default) or `off`. Turning it on or taking
    /// something away keeps the server's approval; anything that gives it more asks again.
    Sandbox {
        name: String,
        /// on, off or show.
        #[arg(value_parser = ["on", "off", "show"])]
        action: String,
        /// none, any, or the hosts it may reach (HOST,…: `registry.npmjs.org`,
        /// `*.github.com`, either with `:PORT`), through a proxy of its own.
        #[arg(long, value_name = "none|any|HOST,…")]
        network: Option<String>,
        /// With a list of hosts, whether this computer's own ports are open to it too.
        #[arg(long, value_parser = ["on", "off"])]
        loopback: Option<String>,
        /// A folder it may read, besides the system (repeat for more).
        #[arg(long = "allow-read", value_name = "DIR")]
        allow_read: Vec<PathBuf>,
        /// A folder it may read and write, besides its roots (repeat for more).
        #[arg(long = "allow-write", value_name = "DIR")]
        allow_write: Vec<PathBuf>,
        /// Start it even where this system cannot sandbox it.
        #[arg(long)]
        allow_unsandboxed: bool,
        #[arg(long)]
        json: bool,
    },
    /// Search the MCP Registry (the official one, or --registry URL) for servers whose name
    /// holds QUERY: each one's version, where it comes from and what it needs to run.
    Search {
        query: String,
        /// The registry's address (an organisation's own); else Settings' (the official
        /// registry unless changed).
        #[arg(long, value_name = "URL")]
        registry: Option<String>,
        /// Where to go on from (the `next_cursor` of the page before).
        #[arg(long)]
        cursor: Option<String>,
        /// How many servers a page (1 to 100).
        #[arg(long, default_value_t = 30)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Install a server from the MCP Registry (NAME[@VERSION] as `mcp search` lists it) or an
    /// MCP bundle (FILE.mcpb, which is unpacked into the data folder). Shows what it is and
    /// the command line it will run, and asks before approving it, as `mcp approve` does.
    Install(InstallArgs),
    #[command(flatten)]
    Features(super::mcp_features::FeatureCommand),
}

/// The arguments of `mcp add`.
#[derive(Debug, clap::Args)]
pub(crate) struct AddArgs {
    name: String,
    /// An environment variable for the server (a secret-looking one goes to the keychain).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Copy this variable from the current environment (keeps secrets off the command line).
    #[arg(long = "env-from-env", value_name = "KEY")]
    env_from_env: Vec<String>,
    /// A remote server's address (streamable HTTP, or legacy SSE with --transport sse).
    #[arg(long, conflicts_with = "command")]
    url: Option<String>,
    /// A header for a remote server.
    #[arg(long = "header", value_name = "NAME=VALUE")]
    headers: Vec<String>,
    #[arg(long, value_parser = ["stdio", "http", "sse"])]
    transport: Option<String>,
    /// The program and its arguments, after `--`.
    #[arg(last = true)]
    command: Vec<String>,
}

/// The arguments of `mcp install`.
#[derive(Debug, clap::Args)]
pub(crate) struct InstallArgs {
    /// The registry's name of the server, with `@VERSION` for one not the newest; the path
    /// of a `.mcpb` bundle; or a `switchboard://install?…` link.
    server: String,
    #[arg(long, value_name = "URL")]
    registry: Option<String>,
    /// Its name here; else the last part of its registry name.
    #[arg(long = "as", value_name = "NAME")]
    local_name: Option<String>,
    /// Which of its sources to use (1 for the first, as `mcp search` lists them); else
    /// the first one Switchboard can install.
    #[arg(long)]
    source: Option<usize>,
    /// A value it needs (see `mcp search`); repeat for each, and for a repeated argument.
    #[arg(long = "value", value_name = "NAME=VALUE")]
    values: Vec<String>,
    /// A value it needs, read from this environment variable of the same name (keeps
    /// secrets off the command line).
    #[arg(long = "value-from-env", value_name = "NAME")]
    values_from_env: Vec<String>,
    #[arg(long)]
    yes: bool,
}

pub(crate) async fn run(
    app: &App,
    command: McpCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        McpCommand::Features(command) => super::mcp_features::run(app, command, out).await,
        McpCommand::Install(args) => install(app, args, out).await,
        McpCommand::Search {
            query,
            registry,
            cursor,
            limit,
            json,
        } => search(app, query, registry, cursor, limit, json, out).await,
        McpCommand::List { json } => list(app, json, out).await,
        McpCommand::Add(args) => add(app, args, out).await,
        McpCommand::Roots {
            name,
            folders,
            none,
            json,
        } => roots(app, name, folders, none, json, out).await,
        McpCommand::Sandbox {
            name,
            action,
            network,
            loopback,
            allow_read,
            allow_write,
            allow_unsandboxed,
            json,
        } => {
            let change = SandboxChange {
                action,
                network,
                loopback: loopback.map(|l| l == "on"),
                allow_read,
                allow_write,
                allow_unsandboxed,
            };
            sandbox(app, name, change, json, out).await
        }
        McpCommand::Remove { name } => remove(app, name, out).await,
        McpCommand::Import { file, claude, yes } => import(app, file, claude, yes, out).await,
        McpCommand::Approve { name, yes } => approve(app, name, yes, out).await,
        McpCommand::Login { name } => login(app, name, out).await,
        McpCommand::Logout { name } => logout(app, name, out).await,
        McpCommand::Tools { name, json } => tools(app, name, json, out).await,
        McpCommand::Accept { name, tool, yes } => accept(app, name, tool, yes, out).await,
        McpCommand::Approvals { json } => approvals(app, json, out).await,
        McpCommand::Allow { name, tool, yes } => allow(app, name, tool, yes, out).await,
        McpCommand::Revoke {
            name,
            tool,
            conversation,
        } => revoke(app, name, tool, conversation, out).await,
        McpCommand::Call {
            name,
            tool,
            arguments,
            timeout,
            yes,
        } => call(app, name, tool, arguments, timeout, yes, out).await,
    }
}

/// The values `--value NAME=VALUE` and `--value-from-env NAME` give, by name (a name given
/// more than once holds each value, for a repeated argument).
fn given_values(
    values: &[String],
    from_env: Vec<String>,
) -> Result<BTreeMap<String, Vec<String>>, CliError> {
    let mut given: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for item in values {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| CliError::Usage(format!("--value {item}: write it as NAME=VALUE")))?;
        given
            .entry(key.to_owned())
            .or_default()
            .push(value.to_owned());
    }
    for key in from_env {
        let value = std::env::var(&key).map_err(|_| {
            CliError::Usage(format!("--value-from-env {key}: the variable is not set"))
        })?;
        given.entry(key).or_default().push(value);
    }
    Ok(given)
}

async fn install(app: &App, args: InstallArgs, out: &mut impl Write) -> Result<(), CliError> {
    let InstallArgs {
        server,
        registry,
        local_name,
        source,
        values,
        values_from_env,
        yes,
    } = args;
    let given = given_values(&values, values_from_env)?;
    if is_bundle(&server) {
        let path = PathBuf::from(&server);
        let bundle = app.open_bundle(&path).await.map_err(install_error)?;
        write_bundle(bundle.info(), out)?;
        let view = app
            .add_bundle(bundle, local_name.as_deref(), &given)
            .await
            .map_err(install_error)?;
        writeln!(out, "Added “{}” from the bundle.", view.name)?;
        return approve_installed(app, &view.name, yes, out).await;
    }
    let (wanted, version) = if proposal::is_link(&server) {
        match proposal::parse(&server).map_err(|e| CliError::Usage(e.to_string()))? {
            Proposal::Registry { name, version } => (name, version),
            entry => {
                let (name, plan) = entry.into_plan().ok_or_else(|| {
                    CliError::Usage("the link proposes no server entry".to_owned())
                })?;
                let name = local_name.unwrap_or(name);
                let view = app.mcp_install(&name, plan).await?;
                writeln!(out, "Added “{}” from the link.", view.name)?;
                return approve_installed(app, &view.name, yes, out).await;
            }
        }
    } else {
        match server.rsplit_once('@') {
            Some((wanted, version)) => (wanted.to_owned(), Some(version.to_owned())),
            None => (server, None),
        }
    };
    let ask = InstallRequest {
        server: wanted,
        version,
        source: source.map(|n| n.saturating_sub(1)),
        name: local_name,
        values: given,
        registry,
    };
    let Installed { view, found } = app.add_from_registry(&ask).await.map_err(install_error)?;
    writeln!(
        out,
        "Added “{}” ({} {}) from the registry.",
        view.name, found.name, found.version
    )?;
    approve_installed(app, &view.name, yes, out).await?;
    Ok(())
}

async fn search(
    app: &App,
    query: String,
    registry: Option<String>,
    cursor: Option<String>,
    limit: u32,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let page = app
        .search_registry(
            &query,
            cursor.as_deref(),
            limit,
            registry.as_deref(),
            crate::mcp::registry::Icons::None,
        )
        .await
        .map_err(|e| match e {
            CoreError::Registry(_) => CliError::Usage(e.to_string()),
            other => other.into(),
        })?;
    if json {
        json_out(out, &page)?;
    } else {
        write_found(&page, out)?;
    }
    Ok(())
}

async fn list(app: &App, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let servers = app.mcp_servers().await?;
    list_out(
        out,
        json,
        &servers,
        "No MCP servers yet. Add one with: switchboard mcp add NAME -- COMMAND ARGS…\n\
                 or import Claude Desktop's: switchboard mcp import --claude",
        ["NAME", "TRANSPORT", "STATE", "COMMAND OR ADDRESS"],
        |s| {
            let state = match (&s.error, s.disabled, s.approved) {
                (Some(_), _, _) => "invalid",
                (None, true, _) => "disabled",
                (None, false, false) => "needs approval",
                (None, false, true) => "approved",
            };
            [
                s.name.clone(),
                s.transport.map_or("-", |t| t.as_str()).to_owned(),
                state.to_owned(),
                s.command_line
                    .clone()
                    .or_else(|| s.error.clone())
                    .unwrap_or_default(),
            ]
        },
    )?;
    Ok(())
}

async fn add(app: &App, args: AddArgs, out: &mut impl Write) -> Result<(), CliError> {
    let AddArgs {
        name,
        env,
        env_from_env,
        url,
        headers,
        transport,
        command,
    } = args;
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
    let view = app.mcp_add(&name, entry).await?;
    writeln!(
        out,
        "Added MCP server “{}”: {}",
        view.name,
        view.command_line.unwrap_or_default()
    )?;
    Ok(())
}

async fn roots(
    app: &App,
    name: String,
    folders: Vec<PathBuf>,
    none: bool,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let roots = if folders.is_empty() && !none {
        app.mcp_servers()
            .await?
            .into_iter()
            .find(|s| s.name == name.trim())
            .ok_or_else(|| crate::CoreError::NotFound {
                what: format!("MCP server “{}”", name.trim()),
            })?
            .roots
    } else {
        let here = std::env::current_dir()?;
        let folders: Vec<PathBuf> = folders.iter().map(|f| here.join(f)).collect();
        app.set_server_roots(&name, &folders).await?.roots
    };
    if json {
        json_out(out, &roots)?;
    } else if roots.is_empty() {
        writeln!(out, "“{}” is given no folders.", name.trim())?;
    } else {
        for root in roots {
            writeln!(out, "{root}")?;
        }
    }
    Ok(())
}

/// What `mcp sandbox` was told to do.
struct SandboxChange {
    action: String,
    network: Option<String>,
    loopback: Option<bool>,
    allow_read: Vec<PathBuf>,
    allow_write: Vec<PathBuf>,
    allow_unsandboxed: bool,
}

async fn sandbox(
    app: &App,
    name: String,
    change: SandboxChange,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    if change.action != "show" {
        let here = std::env::current_dir()?;
        let folders = |dirs: &[PathBuf]| -> Vec<String> {
            dirs.iter()
                .map(|d| here.join(d).to_string_lossy().into_owned())
                .collect()
        };
        let mut network = change
            .network
            .as_deref()
            .map(crate::sandbox::Reach::parse)
            .transpose()
            .map_err(CliError::Usage)?;
        if let Some(loopback) = change.loopback {
            let reach = match network.take() {
                Some(reach) => reach,
                None => app
                    .server_sandbox(&name)?
                    .0
                    .map(|e| e.reach())
                    .filter(|r| r.network == crate::sandbox::Network::Hosts)
                    .ok_or_else(|| {
                        CliError::Usage(
                            "--loopback goes with a list of hosts (--network HOST,…)".into(),
                        )
                    })?,
            };
            if reach.network != crate::sandbox::Network::Hosts {
                return Err(CliError::Usage(
                    "--loopback goes with a list of hosts (--network HOST,…)".into(),
                ));
            }
            network = Some(crate::sandbox::Reach { loopback, ..reach });
        }
        app.switch_server_sandbox(&name, change.action == "on", network)
            .await?;
        if !change.allow_read.is_empty()
            || !change.allow_write.is_empty()
            || change.allow_unsandboxed
        {
            let mut entry = app.server_sandbox(&name)?.0.unwrap_or_default();
            if !change.allow_read.is_empty() {
                entry.allow_read = folders(&change.allow_read);
            }
            if !change.allow_write.is_empty() {
                entry.allow_write = folders(&change.allow_write);
            }
            entry.allow_unsandboxed |= change.allow_unsandboxed;
            app.set_server_sandbox(&name, entry).await?;
        }
    }
    let (entry, said) = app.server_sandbox(&name)?;
    let view = app
        .mcp_servers()
        .await?
        .into_iter()
        .find(|s| s.name == name.trim());
    let approved = view.as_ref().is_some_and(|v| v.approved);
    if json {
        json_out(
            out,
            &serde_json::json!({
                "server": name.trim(),
                "sandbox": entry,
                "said": said,
                "approved": approved,
                "available": crate::sandbox::available().err(),
            }),
        )?;
    } else {
        writeln!(out, "“{}” sandbox: {said}", name.trim())?;
        if let Err(why) = crate::sandbox::available() {
            writeln!(out, "This system cannot enforce it: {why}.")?;
        }
        if change.action != "show" && !approved {
            writeln!(
                out,
                "It gives the server more than before: approve it again before it starts \
                 (switchboard mcp approve {}).",
                name.trim()
            )?;
        }
    }
    Ok(())
}

async fn remove(app: &App, name: String, out: &mut impl Write) -> Result<(), CliError> {
    app.remove_server(&name).await?;
    writeln!(out, "Removed MCP server “{}”.", name.trim())?;
    Ok(())
}

async fn import(
    app: &App,
    file: Option<std::path::PathBuf>,
    claude: bool,
    yes: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let source = match (file, claude) {
        (Some(path), _) => ImportSource::File(path),
        (None, _) => ImportSource::ClaudeDesktop(claude_desktop_config_path()),
    };
    let preview = app.mcp_import_preview_of(source).await?;
    print_preview(out, &preview)?;
    if preview.added.is_empty() {
        return Ok(());
    }
    if !yes && !confirm(out, &format!("Import {} server(s)?", preview.added.len()))? {
        writeln!(out, "Nothing imported.")?;
        return Ok(());
    }
    let added = app.mcp_import(&preview).await?;
    writeln!(out, "Imported {}.", added.join(", "))?;
    Ok(())
}

async fn approve(app: &App, name: String, yes: bool, out: &mut impl Write) -> Result<(), CliError> {
    // What is approved is exactly what was shown: an mcp.json changed while the
    // question was open is refused (App::approve_server).
    if app.approve_server(&name, &TerminalConfirm { yes }).await? {
        writeln!(out, "Approved.")?;
    } else {
        writeln!(out, "Not approved.")?;
    }
    Ok(())
}

async fn login(app: &App, name: String, out: &mut impl Write) -> Result<(), CliError> {
    let announce = |page: &str| {
        super::terminal::say!(
            "Opening your browser to sign in. If it does not open, visit:\n  {page}"
        );
    };
    let browser = LoopbackBrowser::new(announce);
    let server = app.sign_in_server(&name, &browser).await?;
    writeln!(
        out,
        "Signed in to “{server}”. Its tokens are in the OS keychain."
    )?;
    Ok(())
}

async fn logout(app: &App, name: String, out: &mut impl Write) -> Result<(), CliError> {
    let server = app.sign_out_server(&name).await?;
    writeln!(out, "Signed out of “{server}”: its tokens are forgotten.")?;
    Ok(())
}

async fn tools(app: &App, name: String, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let (tools, held) = listed_by(app, &name).await?;
    let listed: Vec<ListedTool> = tools.iter().map(ListedTool::from_rmcp).collect();
    // Read before the new tools are pinned, so they can be shown as new.
    let reviews = app.mcp_review_tools(name.trim(), &listed).await?;
    // Listed here first: pinned as seen, as the app pins a server's list as it comes.
    app.mcp_pin_new_tools(name.trim(), &listed).await?;
    if json {
        json_out(out, &tools)?;
    } else {
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
        for held in &held {
            writeln!(out, "{}: HELD BACK: {}", held.tool, held.reason)?;
        }
        if reviews.iter().any(|r| !r.offered) {
            writeln!(
                out,
                "\nA held-back tool is not offered to models until you accept it: \
                     switchboard mcp accept {} TOOL",
                name.trim()
            )?;
        }
    }
    Ok(())
}

async fn accept(
    app: &App,
    name: String,
    tool: String,
    yes: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let listed = tools_of(app, &name).await?;
    let said = match app
        .accept_tool(&name, &tool, &listed, &TerminalConfirm { yes })
        .await?
    {
        ToolAcceptance::Unchanged => "It has not changed since it was pinned.",
        ToolAcceptance::Accepted => "Accepted.",
        ToolAcceptance::KeptBack => "Still held back.",
    };
    writeln!(out, "{said}")?;
    Ok(())
}

async fn approvals(app: &App, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let approvals = app.tool_approvals().await?;
    list_out(
        out,
        json,
        &approvals,
        "No tool runs without asking. Allow one with: switchboard mcp allow NAME TOOL",
        ["SERVER", "TOOL", "RUNS WITHOUT ASKING IN"],
        |a| {
            let scope = match (&a.conversation_id, &a.conversation_title) {
                (None, _) => "every conversation".to_owned(),
                (Some(_), Some(title)) => format!("“{title}” only"),
                (Some(id), None) => format!("{id} only (deleted)"),
            };
            [a.server.clone(), a.tool.clone(), scope]
        },
    )?;
    Ok(())
}

async fn allow(
    app: &App,
    name: String,
    tool: String,
    yes: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let listed = tools_of(app, &name).await?;
    // Pinned as seen (as `tools` does), so what is allowed is this definition: one
    // that changes later is held back and asked about again.
    app.mcp_pin_new_tools(name.trim(), &listed).await?;
    match app
        .allow_tool_always(&name, &tool, &listed, &TerminalConfirm { yes })
        .await
    {
        Ok(()) => writeln!(
            out,
            "“{tool}” of “{}” now runs without asking in every conversation.",
            name.trim()
        )?,
        Err(crate::CoreError::NotConfirmed { .. }) => writeln!(out, "Not allowed.")?,
        Err(other) => return Err(other.into()),
    }
    Ok(())
}

async fn revoke(
    app: &App,
    name: String,
    tool: String,
    conversation: Option<String>,
    out: &mut impl Write,
) -> Result<(), CliError> {
    app.revoke_tool_approval(name.trim(), &tool, conversation.as_deref())
        .await?;
    writeln!(out, "Revoked: “{tool}” of “{}” asks again.", name.trim())?;
    Ok(())
}

async fn call(
    app: &App,
    name: String,
    tool: String,
    arguments: String,
    timeout: Option<u64>,
    yes: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let arguments: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&arguments)
        .map_err(|e| CliError::Usage(format!("the arguments must be a JSON object: {e}")))?;
    let timeout = super::mcp_features::timeout_for(app, &name, timeout)?;
    let arguments_text = serde_json::Value::Object(arguments.clone()).to_string();
    // A rule (the person's or the organisation's) that blocks the tool holds here too.
    // One that asks asks here, in the terminal: the person typed the call, but a rule they
    // (or their organisation) wrote to ask is asked, and so is a path among Switchboard's own
    // settings and records.
    let policy = app.policy()?;
    let arguments_value = serde_json::Value::Object(arguments.clone());
    let rule = policy
        .blocked(&name, &tool)
        .or_else(|| policy.rule_for(&name, &tool, Some(&arguments_value), None));
    let mut decided_by = "you, from the command line (mcp call)".to_owned();
    let asks = match &rule {
        Some(hit) if hit.outcome == crate::policy::rules::Outcome::Block => {
            app.audit_cli_call(&name, &tool, &arguments_text, None, None, &hit.said)
                .await;
            return Err(CliError::Usage(format!(
                "the call was not run: it is blocked by {}",
                hit.said
            )));
        }
        Some(hit) if hit.outcome == crate::policy::rules::Outcome::Ask => Some(hit.said.clone()),
        _ => crate::policy::rules::path_inside(Some(&arguments_value), &policy.protected).map(
            |path| {
                format!(
                    "its path “{path}” is among Switchboard's own settings and records, where a \
                     change changes what may run"
                )
            },
        ),
    };
    if let Some(because) = asks {
        let shown = format!(
            "“{}” of “{}” with {}\nasks first: {}",
            crate::text::escape_hidden(&tool),
            crate::text::escape_hidden(&name),
            crate::text::escape_hidden(&crate::text::one_line(&arguments_text, 2000)),
            because
        );
        let answered = TerminalConfirm { yes }.ask(shown, "Run it?").await;
        if !answered {
            let refused = format!("you, when asked ({because}): no");
            app.audit_cli_call(&name, &tool, &arguments_text, None, None, &refused)
                .await;
            return Err(CliError::Usage("the call was not run: you said no".into()));
        }
        decided_by = format!("you, when asked ({because})");
    }
    let server = app.mcp_start(&name).await?;
    let started = crate::store::now_ms();
    let result = server.call_tool(&tool, arguments, timeout).await;
    server.stop().await;
    for refused in server.sandbox_refusals() {
        super::terminal::say!("switchboard: blocked by the sandbox: {refused}");
    }
    let whole = match &result {
        Ok(r) => serde_json::to_string(r).unwrap_or_default(),
        Err(e) => e.to_string(),
    };
    let is_error = result.as_ref().map_or(true, |r| r.is_error == Some(true));
    app.audit_cli_call(
        &name,
        &tool,
        &arguments_text,
        Some((started, &whole)),
        Some(is_error),
        &decided_by,
    )
    .await;
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
        super::terminal::say!("switchboard: the tool “{tool}” reported an error");
        return Err(CliError::Failed);
    }
    Ok(())
}

/// Starts the server, lists its tools (as the host pins and reviews them), and stops it
/// whatever the listing gave.
async fn tools_of(app: &App, name: &str) -> Result<Vec<ListedTool>, CliError> {
    Ok(listed_by(app, name)
        .await?
        .0
        .iter()
        .map(ListedTool::from_rmcp)
        .collect())
}

/// [`tools_of`], with the tools it held back as unusable.
async fn listed_by(
    app: &App,
    name: &str,
) -> Result<(Vec<rmcp::model::Tool>, Vec<HeldBackTool>), CliError> {
    let server = app.mcp_start(name).await?;
    let listed = server.list_tools().await;
    let held = server.held_back();
    server.stop().await;
    Ok((listed.map_err(crate::CoreError::from)?, held))
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
    Ok(read_yes())
}

fn read_yes() -> bool {
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).is_ok()
        && matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

/// The terminal's answer to [`Confirm`]'s questions. What is asked about is printed whole on
/// stderr (stdout stays the command's result); `--yes` answers yes after printing it; with no
/// terminal and no `--yes`, the answer is no.
pub(super) struct TerminalConfirm {
    pub(super) yes: bool,
}

impl TerminalConfirm {
    async fn ask(&self, shown: String, question: &'static str) -> bool {
        let yes = self.yes;
        tokio::task::spawn_blocking(move || {
            super::terminal::say!("{shown}");
            if yes {
                super::terminal::say!("{question} Yes (--yes).");
                return true;
            }
            if !std::io::stdin().is_terminal() {
                super::terminal::say!(
                    "{question} Not asked: no terminal to answer on (use --yes)."
                );
                return false;
            }
            super::terminal::ask!("{question} [y/N] ");
            read_yes()
        })
        .await
        .unwrap_or(false)
    }
}

#[async_trait::async_trait]
impl Confirm for TerminalConfirm {
    async fn approve_server(&self, request: &ServerApprovalRequest) -> bool {
        let what = if request.remote {
            "connects to"
        } else {
            "runs"
        };
        let shown = format!("“{}” {what}:\n  {}", request.server, request.command_line);
        self.ask(shown, "Approve it to start?").await
    }

    async fn accept_tool(&self, change: &ToolChange) -> bool {
        let shown = format!(
            "“{}” of “{}” changed since it was pinned:\n{}",
            change.tool, change.server, change.diff
        );
        self.ask(shown, "Offer it to models as it is now?").await
    }

    async fn allow(&self, allowance: &Allowance) -> bool {
        let shown = format!("{}\n{}", allowance.title(), allowance.message());
        self.ask(shown, "Go on?").await
    }
}

/// An install's failure as the command line says it: what the person can mend (a value
/// missing, a runtime, a registry or bundle refused) as a usage error, a missing value with
/// how to give it.
fn install_error(e: CoreError) -> CliError {
    match e {
        CoreError::Install(InstallError::Missing { .. })
        | CoreError::Bundle(BundleError::Missing(_)) => {
            CliError::Usage(format!("{e}: give each with --value NAME=VALUE"))
        }
        CoreError::Install(_) | CoreError::Bundle(_) | CoreError::Registry(_) => {
            CliError::Usage(e.to_string())
        }
        other => other.into(),
    }
}

/// Whether `mcp install`'s argument names a bundle file rather than a registry name.
fn is_bundle(server: &str) -> bool {
    let path = std::path::Path::new(server);
    is_bundle_file(path) || path.is_file()
}

/// Asks (or, with `--yes`, takes as asked) whether the server just installed may start.
async fn approve_installed(
    app: &App,
    name: &str,
    yes: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    if app.approve_server(name, &TerminalConfirm { yes }).await? {
        writeln!(out, "Approved: it starts with the app.")?;
    } else {
        writeln!(
            out,
            "Not approved: it will not start until you run `switchboard mcp approve {name}`."
        )?;
    }
    Ok(())
}

/// What a bundle is, as the consent screen shows it: its name, author, tools, what it runs
/// and what it asks for.
fn write_bundle(info: &BundleInfo, out: &mut impl Write) -> Result<(), CliError> {
    // The bundle's words are its author's: one line each, no control characters.
    let text = |s: &str| crate::text::one_line(s, 400);
    let title = info.display_name.as_deref().unwrap_or(&info.name);
    writeln!(
        out,
        "{} {} by {}",
        text(title),
        text(&info.version),
        text(&info.author)
    )?;
    if !info.description.is_empty() {
        writeln!(out, "  {}", text(&info.description))?;
    }
    writeln!(
        out,
        "  {} server, {} files ({} bytes unpacked); runs: {}",
        info.server_type,
        info.files,
        info.unpacked_bytes,
        crate::text::one_line(&info.command_line, usize::MAX)
    )?;
    let tools: Vec<String> = info.tools.iter().map(|t| text(&t.name)).collect();
    let more = if info.tools_generated {
        " (and more it makes as it runs)"
    } else {
        ""
    };
    let listed = if tools.is_empty() {
        "none listed".to_owned()
    } else {
        tools.join(", ")
    };
    writeln!(out, "  tools: {listed}{more}")?;
    for option in &info.user_config {
        writeln!(
            out,
            "  asks for {} ({}{}{}): {}",
            text(&option.key),
            text(&option.kind),
            if option.required { ", required" } else { "" },
            if option.sensitive {
                ", kept in the keychain"
            } else {
                ""
            },
            text(&option.title)
        )?;
    }
    Ok(())
}

/// A page of registry servers as a table: name, version, where each comes from (with what it
/// needs: `*` required, `(secret)` a key), description; then how to ask for the next page.
fn write_found(page: &registry::SearchPage, out: &mut impl Write) -> Result<(), CliError> {
    if page.servers.is_empty() {
        writeln!(out, "No servers found.")?;
        return Ok(());
    }
    let rows: Vec<[String; 4]> = page
        .servers
        .iter()
        .map(|server| {
            let sources: Vec<String> = server
                .sources
                .iter()
                .map(|source| {
                    let needs: Vec<String> = source
                        .needs
                        .iter()
                        .map(|need| {
                            format!(
                                "{}{}{}",
                                need.name,
                                if need.required { "*" } else { "" },
                                if need.secret { " (secret)" } else { "" }
                            )
                        })
                        .collect();
                    let what = format!("{} {}", source.kind.label(), source.identifier);
                    if needs.is_empty() {
                        what
                    } else {
                        format!("{what} [{}]", needs.join(", "))
                    }
                })
                .collect();
            [
                server.name.clone(),
                server.version.clone(),
                sources.join("; "),
                crate::text::one_line(&server.description, 80),
            ]
        })
        .collect();
    write_table(out, ["NAME", "VERSION", "FROM", "DESCRIPTION"], &rows)?;
    if let Some(next) = &page.next_cursor {
        writeln!(out, "More: add --cursor '{next}'")?;
    }
    Ok(())
}
