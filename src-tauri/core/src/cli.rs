//! The headless command line: the same binary as the desktop app, run with a subcommand, no
//! display needed. It drives the same [`Core`] the window does: providers, MCP servers and
//! `chat`. Keys never appear on a command line: `--key-from-env VAR` reads one from the
//! environment once and stores it in the keychain.

use std::ffi::OsString;
use std::io::Write;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use secrecy::SecretString;

use crate::engine::NewProvider;
use crate::provider_config::{preset_by_id, Preset, ProviderKind, PRESETS};
use crate::secrets::KeyringStore;
use crate::{AppPaths, Core, CoreError};

#[derive(Debug, Parser)]
#[command(
    name = "switchboard",
    version,
    about = "Switchboard: chat with language models that use tools served by MCP servers.",
    long_about = "Switchboard: chat with language models that use tools served by MCP servers.\n\n\
        Run without arguments to open the window; give a subcommand to work from the terminal.\n\
        SWITCHBOARD_HOME=DIR keeps config, data, logs (and a separate keychain namespace) under DIR."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Add, list or remove model providers (keys are kept in the OS keychain).
    #[command(subcommand)]
    Provider(ProviderCommand),
    /// Add, list, import, approve and try MCP servers (kept in mcp.json in the config folder).
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Chat from the terminal: one turn of the tool loop, the same one the window runs.
    Chat(crate::cli_chat::ChatArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// List configured servers, with whether each is approved to start.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `mcp add NAME [--env KEY=VALUE]… -- COMMAND ARGS…`, or `--url URL`.
    /// Adding counts as approving exactly this command line.
    Add {
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
    },
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
    /// Start a server, call one tool with JSON arguments, print the result, stop it. Exits 1 on
    /// a tool error, a timeout or a crash, and leaves no process behind.
    Call {
        name: String,
        tool: String,
        #[arg(default_value = "{}")]
        arguments: String,
        /// Seconds to wait for the answer.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
}

#[derive(Debug, Subcommand)]
enum ProviderCommand {
    /// Add a provider.
    Add {
        /// A name for it, such as "OpenAI" or "Local Ollama".
        name: String,
        /// What kind of API it speaks.
        #[arg(long, value_enum, required_unless_present = "preset")]
        kind: Option<ProviderKind>,
        /// A known host (openai, groq, lm_studio, llama_cpp, vllm, …): sets the kind and address.
        #[arg(long, conflicts_with = "kind", value_parser = preset_id)]
        preset: Option<&'static Preset>,
        /// Where it listens; defaults to the preset's or kind's usual address.
        #[arg(long)]
        base_url: Option<String>,
        /// The model to use unless a conversation picks another.
        #[arg(long)]
        model: Option<String>,
        /// Read the API key from this environment variable (once) and store it in the keychain.
        #[arg(long, value_name = "VAR")]
        key_from_env: Option<String>,
    },
    /// List providers.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider and its key.
    Remove { name: String },
    /// Ask a provider for its models and say what worked or exactly what failed.
    Test { name: String },
    /// List the models a provider offers.
    Models {
        name: String,
        /// Print JSON instead of one id per line.
        #[arg(long)]
        json: bool,
    },
}

fn preset_id(id: &str) -> Result<&'static Preset, String> {
    preset_by_id(id).ok_or_else(|| {
        let known: Vec<&str> = PRESETS.iter().map(|p| p.id).collect();
        format!("unknown preset; known: {}", known.join(", "))
    })
}

/// True when the process was started with arguments meant for the command line (anything
/// but the `-psn_…` argument macOS adds to apps started from Finder).
pub fn is_cli_invocation(args: &[OsString]) -> bool {
    args.iter()
        .skip(1)
        .any(|a| !a.to_string_lossy().starts_with("-psn_"))
}

/// Runs the command line and returns the process exit code.
pub fn main(args: Vec<OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let paths = AppPaths::from_env();
    let _ = paths.create_all();
    let _logs = crate::logging::init(Some(&paths.log_dir), "error", "info");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("switchboard: cannot start: {e}");
            return 1;
        }
    };
    let mut out = std::io::stdout().lock();
    let code = runtime.block_on(async {
        let secrets = Arc::new(KeyringStore::new(paths.keychain_service()));
        let core = Core::open(paths, secrets).await;
        match run(&core, cli.command, &mut out).await {
            Ok(()) => 0,
            Err(CliError::Failed) => 1,
            Err(e) => {
                eprintln!("switchboard: {e}");
                1
            }
        }
    });
    let _ = out.flush();
    code
}

/// Runs a command line (`args` without the program name) against `core`, writing to `out`.
///
/// # Errors
/// A usage error, or what the command failed with.
pub async fn run_with(core: &Core, args: &[&str], out: &mut impl Write) -> Result<(), CliError> {
    let cli = Cli::try_parse_from(std::iter::once("switchboard").chain(args.iter().copied()))
        .map_err(|e| CliError::Usage(e.to_string()))?;
    run(core, cli.command, out).await
}

async fn run(core: &Core, command: Command, out: &mut impl Write) -> Result<(), CliError> {
    match command {
        Command::Provider(ProviderCommand::Add {
            name,
            kind,
            preset,
            base_url,
            model,
            key_from_env,
        }) => {
            let kind = match (kind, preset) {
                (Some(kind), _) => kind,
                (None, Some(p)) => p.kind,
                (None, None) => unreachable!("clap requires --kind or --preset"),
            };
            let base_url = base_url.or_else(|| {
                preset
                    .filter(|p| !p.base_url.is_empty())
                    .map(|p| p.base_url.to_owned())
            });
            let api_key = match key_from_env {
                None => None,
                Some(var) => Some(read_key(&var)?),
            };
            let provider = core
                .add_provider(NewProvider {
                    name,
                    kind: Some(kind.as_str().to_owned()),
                    base_url,
                    default_model: model,
                    api_key,
                })
                .await?;
            writeln!(
                out,
                "Added provider “{}” ({}, {}){}.",
                provider.name,
                kind.info().label,
                provider.base_url,
                if provider.has_key {
                    "; its key is in the OS keychain"
                } else {
                    ""
                }
            )?;
        }
        Command::Provider(ProviderCommand::List { json }) => {
            let providers = core.list_providers().await?;
            let keychain = core.keychain_status().await;
            if !keychain.available && !providers.is_empty() {
                eprintln!(
                    "switchboard: {} — the KEY column cannot be checked.",
                    keychain.message
                );
            }
            if json {
                serde_json::to_writer_pretty(&mut *out, &providers)
                    .map_err(|e| CliError::Output(e.to_string()))?;
                writeln!(out)?;
            } else if providers.is_empty() {
                writeln!(
                    out,
                    "No providers yet. Add one with: switchboard provider add NAME --kind KIND"
                )?;
            } else {
                let rows: Vec<[String; 5]> = providers
                    .iter()
                    .map(|p| {
                        [
                            p.name.clone(),
                            p.kind.as_str().to_owned(),
                            p.base_url.clone(),
                            p.default_model.clone().unwrap_or_else(|| "-".into()),
                            if p.has_key { "stored" } else { "none" }.to_owned(),
                        ]
                    })
                    .collect();
                write_table(out, ["NAME", "KIND", "BASE URL", "MODEL", "KEY"], &rows)?;
            }
        }
        Command::Provider(ProviderCommand::Remove { name }) => {
            core.remove_provider(&name).await?;
            writeln!(out, "Removed provider “{}” and its key.", name.trim())?;
        }
        Command::Mcp(command) => crate::cli_mcp::run(core, command, out).await?,
        Command::Chat(args) => crate::cli_chat::run(core, args, out).await?,
        Command::Provider(ProviderCommand::Test { name }) => {
            let report = core.test_provider(&name).await?;
            writeln!(out, "{}", report.message)?;
            for model in report.models.iter().take(10) {
                writeln!(out, "  {}", model.id)?;
            }
            if report.models.len() > 10 {
                writeln!(out, "  … and {} more", report.models.len() - 10)?;
            }
            if !report.ok {
                return Err(CliError::Failed);
            }
        }
        Command::Provider(ProviderCommand::Models { name, json }) => {
            let models = core.list_models(&name).await?;
            if json {
                serde_json::to_writer_pretty(&mut *out, &models)
                    .map_err(|e| CliError::Output(e.to_string()))?;
                writeln!(out)?;
            } else {
                for model in models {
                    writeln!(out, "{}", model.id)?;
                }
            }
        }
    }
    Ok(())
}

fn read_key(var: &str) -> Result<SecretString, CliError> {
    match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => Ok(SecretString::from(value.trim().to_owned())),
        Ok(_) => Err(CliError::KeyVariable(format!(
            "the variable {var} is empty"
        ))),
        Err(std::env::VarError::NotPresent) => Err(CliError::KeyVariable(format!(
            "the variable {var} is not set"
        ))),
        Err(std::env::VarError::NotUnicode(_)) => Err(CliError::KeyVariable(format!(
            "the variable {var} is not valid text"
        ))),
    }
}

pub(crate) fn write_table<const N: usize>(
    out: &mut impl Write,
    header: [&str; N],
    rows: &[[String; N]],
) -> std::io::Result<()> {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    #[error(transparent)]
    Core(#[from] CoreError),
    #[error("Cannot read the API key: {0}")]
    KeyVariable(String),
    #[error("Cannot write the output: {0}")]
    Output(String),
    #[error("{0}")]
    Usage(String),
    /// The failure was already printed as the command's output.
    #[error("the connection test failed")]
    Failed,
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Output(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::MemoryStore;
    use crate::store::Store;

    fn core() -> Core {
        Core::with_store(
            AppPaths::under_home("/nonexistent".into()),
            Store::open_in_memory().unwrap(),
            Arc::new(MemoryStore::new()),
        )
    }

    async fn run_args(core: &Core, args: &[&str]) -> Result<String, CliError> {
        let cli = Cli::try_parse_from(std::iter::once("switchboard").chain(args.iter().copied()))
            .expect("arguments parse");
        let mut out = Vec::new();
        run(core, cli.command, &mut out).await?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn only_real_arguments_select_the_command_line() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(!is_cli_invocation(&args(&["switchboard"])));
        assert!(!is_cli_invocation(&args(&["switchboard", "-psn_0_12345"])));
        assert!(is_cli_invocation(&args(&["switchboard", "--help"])));
        assert!(is_cli_invocation(&args(&[
            "switchboard",
            "provider",
            "list"
        ])));
    }

    #[test]
    fn help_lists_the_provider_commands() {
        let err = Cli::try_parse_from(["switchboard", "provider", "--help"]).unwrap_err();
        let help = err.to_string();
        for word in ["add", "list", "remove"] {
            assert!(help.contains(word), "{help}");
        }
    }

    #[tokio::test]
    async fn a_key_is_read_from_the_named_variable_and_never_printed() {
        let core = core();
        // A variable name unique to this test; nothing else reads it.
        std::env::set_var("SWITCHBOARD_TEST_KEY_CLI_1", "sk-from-env-777777");
        let out = run_args(
            &core,
            &[
                "provider",
                "add",
                "OpenAI",
                "--kind",
                "openai",
                "--key-from-env",
                "SWITCHBOARD_TEST_KEY_CLI_1",
            ],
        )
        .await
        .unwrap();
        assert!(out.contains("key is in the OS keychain"), "{out}");
        assert!(!out.contains("777777"));
        let listed = run_args(&core, &["provider", "list"]).await.unwrap();
        assert!(
            listed.contains("OpenAI") && listed.contains("stored"),
            "{listed}"
        );
        assert!(!listed.contains("777777"));
        let json = run_args(&core, &["provider", "list", "--json"])
            .await
            .unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed[0]["has_key"], true);
        assert!(!json.contains("777777"));
    }

    #[tokio::test]
    async fn a_missing_key_variable_is_an_error_and_adds_nothing() {
        let core = core();
        let err = run_args(
            &core,
            &[
                "provider",
                "add",
                "X",
                "--kind",
                "openai",
                "--key-from-env",
                "SWITCHBOARD_TEST_UNSET_VAR",
            ],
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("not set"));
        assert!(core.list_providers().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_preset_sets_the_kind_and_address_and_a_test_reports_a_failure() {
        let core = core();
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", free.local_addr().unwrap());
        drop(free);
        run_args(
            &core,
            &["provider", "add", "Studio", "--preset", "lm_studio"],
        )
        .await
        .unwrap();
        let listed = core.list_providers().await.unwrap();
        assert_eq!(listed[0].kind, ProviderKind::OpenaiCompatible);
        assert_eq!(listed[0].base_url, "http://127.0.0.1:1234/v1");
        core.update_provider("Studio", Some(&url), None)
            .await
            .unwrap();
        let err = run_args(&core, &["provider", "test", "Studio"])
            .await
            .unwrap_err();
        assert!(matches!(err, CliError::Failed));
        let unknown =
            Cli::try_parse_from(["switchboard", "provider", "add", "X", "--preset", "nope"])
                .unwrap_err()
                .to_string();
        assert!(unknown.contains("lm_studio"), "{unknown}");
    }

    #[tokio::test]
    async fn mcp_add_list_call_and_remove_from_the_command_line() {
        let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/peers/node_modules/.bin/mcp-server-everything");
        if !bin.exists() {
            assert!(std::env::var_os("SWITCHBOARD_REQUIRE_PEERS").is_none());
            eprintln!("SKIPPED mcp cli: server-everything is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let core = Core::open(
            AppPaths::under_home(dir.path().to_path_buf()),
            Arc::new(MemoryStore::new()),
        )
        .await;
        let bin = bin.display().to_string();
        let added = run_args(
            &core,
            &[
                "mcp",
                "add",
                "everything",
                "--env",
                "MODE=cli",
                "--",
                &bin,
                "stdio",
            ],
        )
        .await
        .unwrap();
        assert!(
            added.contains("MODE=cli") && added.ends_with("stdio\n"),
            "{added}"
        );
        let listed = run_args(&core, &["mcp", "list"]).await.unwrap();
        assert!(
            listed.contains("everything") && listed.contains("approved"),
            "{listed}"
        );
        let tools = run_args(&core, &["mcp", "tools", "everything"])
            .await
            .unwrap();
        assert!(
            tools
                .lines()
                .any(|l| l.starts_with("echo ") && l.contains("everything__echo")),
            "{tools}"
        );
        let echoed = run_args(
            &core,
            &[
                "mcp",
                "call",
                "everything",
                "echo",
                r#"{"message": "from the terminal"}"#,
            ],
        )
        .await
        .unwrap();
        assert!(echoed.contains("from the terminal"), "{echoed}");
        let unknown = run_args(&core, &["mcp", "call", "everything", "no-such-tool"]).await;
        assert!(unknown.is_err(), "{unknown:?}");
        let bad_json = run_args(&core, &["mcp", "call", "everything", "echo", "{not json"]).await;
        assert!(matches!(bad_json, Err(CliError::Usage(_))));
        run_args(&core, &["mcp", "remove", "everything"])
            .await
            .unwrap();
        let listed = run_args(&core, &["mcp", "list"]).await.unwrap();
        assert!(listed.contains("No MCP servers yet"), "{listed}");
    }

    #[tokio::test]
    async fn remove_deletes_the_provider() {
        let core = core();
        run_args(&core, &["provider", "add", "Local", "--kind", "ollama"])
            .await
            .unwrap();
        run_args(&core, &["provider", "remove", "local"])
            .await
            .unwrap();
        let out = run_args(&core, &["provider", "list"]).await.unwrap();
        assert!(out.contains("No providers yet"), "{out}");
    }
}
