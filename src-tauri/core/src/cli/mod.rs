//! The headless command line: the same binary as the desktop app, run with a subcommand, no
//! display needed. It is an adapter over the same [`App`] the window holds, one file per verb
//! group (`provider`, `mcp`, `chat`, `conversations`, `usage`, `profile`, `policy`, `skills`,
//! `schedule`, `tasks`, `shell_command`); this module parses, builds the app, dispatches and prints errors.

mod chat;
mod conversations;
mod mcp;
mod mcp_features;
mod memory;
mod output;
mod policy;
mod profile;
mod project;
mod provider;
mod schedule;
mod shell_command;
mod skills;
mod tasks;
mod terminal;
mod usage;

use std::ffi::OsString;
use std::io::Write;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::app::{App, AppConfig};
use crate::secrets::KeyringStore;
use crate::settings::SettingsFile;
use crate::AppPaths;
pub use output::CliError;

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
    Provider(provider::ProviderCommand),
    /// Add, list, import, approve and try MCP servers (kept in mcp.json in the config folder).
    #[command(subcommand)]
    Mcp(mcp::McpCommand),
    /// Chat from the terminal: one turn of the tool loop, the same one the window runs.
    Chat(chat::ChatArgs),
    /// List, read, search, export and import conversations.
    #[command(subcommand)]
    Conversations(conversations::ConversationsCommand),
    /// Tokens and cost by day, provider and model (days in UTC).
    Usage(usage::UsageArgs),
    /// Profiles: a system prompt, a model, a tool set and limits a conversation starts from.
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
    /// Projects: conversations about one piece of work, with instructions they share and the
    /// profile they start from.
    #[command(subcommand)]
    Project(project::ProjectCommand),
    /// Memory: short facts the model keeps across conversations, in a project's memory or
    /// yours; off until switched on.
    #[command(subcommand)]
    Memory(memory::MemoryCommand),
    /// Rules on tool calls: allow, ask or block, by server, tool and arguments (policy.json).
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// The record of every tool call: when, where, the exact arguments, the decision and who
    /// made it, how long it ran, its result's hash and size.
    Audit(policy::AuditArgs),
    /// Skills: instructions and files a model loads when a task needs them (a folder with a
    /// SKILL.md, kept in the skills folder in the config folder).
    #[command(subcommand)]
    Skills(skills::SkillsCommand),
    /// Schedules: a prompt that runs on a time rule, each run in a conversation of its own.
    #[command(subcommand)]
    Schedule(schedule::ScheduleCommand),
    /// Long tasks: calls a server runs as tasks, and following those still open to their ends.
    #[command(subcommand)]
    Tasks(tasks::TasksCommand),
    /// Whether a terminal finds this app as `switchboard`; put it there or take it away.
    #[command(subcommand, name = "shell-command")]
    Shell(shell_command::ShellCommandCommand),
}

impl Command {
    /// Whether the verb only reads the database: its process then checks the file's header,
    /// not every page, when it opens it (a search of a large home answers at once).
    fn only_reads(&self) -> bool {
        use conversations::ConversationsCommand as C;
        matches!(
            self,
            Command::Conversations(
                C::List { .. }
                    | C::Show { .. }
                    | C::Search { .. }
                    | C::Export { .. }
                    | C::Artifacts { .. }
                    | C::Links { .. }
                    | C::Draft { .. }
            ) | Command::Provider(
                provider::ProviderCommand::List { .. }
                    | provider::ProviderCommand::Prices { .. }
                    | provider::ProviderCommand::Windows { .. }
            ) | Command::Usage(_)
                | Command::Profile(
                    profile::ProfileCommand::List { .. }
                        | profile::ProfileCommand::Show { .. }
                        | profile::ProfileCommand::Export { .. }
                )
                | Command::Project(
                    project::ProjectCommand::List { .. } | project::ProjectCommand::Show { .. }
                )
                | Command::Memory(memory::MemoryCommand::List { .. })
                | Command::Mcp(mcp::McpCommand::List { .. } | mcp::McpCommand::Approvals { .. })
                | Command::Audit(_)
                | Command::Skills(
                    skills::SkillsCommand::List { .. } | skills::SkillsCommand::Show { .. }
                )
                | Command::Policy(
                    policy::PolicyCommand::List { .. } | policy::PolicyCommand::Check { .. }
                )
                | Command::Schedule(
                    schedule::ScheduleCommand::List { .. } | schedule::ScheduleCommand::Logs { .. }
                )
                | Command::Tasks(tasks::TasksCommand::List { .. })
        )
    }
}

/// True when the process was started with arguments meant for the command line (anything
/// but the `-psn_…` argument macOS adds to apps started from Finder).
pub fn is_cli_invocation(args: &[OsString]) -> bool {
    args.iter().skip(1).any(|a| {
        let a = a.to_string_lossy();
        !a.starts_with("-psn_") && !crate::mcp::proposal::is_link(&a)
    })
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
    // Needs no data folder and no database: an installer's hook runs it.
    let cli = match cli.command {
        Command::Shell(command) => {
            let mut out = terminal::Terminal::new(std::io::stdout().lock());
            let code = exit_code(shell_command::run(command, &mut out));
            let _ = out.flush();
            return code;
        }
        command => Cli { command },
    };
    let paths = AppPaths::from_env();
    let _ = paths.create_all();
    let logs = crate::logging::init(Some(&paths.log_dir), "error", "info");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            terminal::say!("switchboard: cannot start: {e}");
            return 1;
        }
    };
    let mut out = std::io::stdout().lock();
    let code = runtime.block_on(async {
        let secrets = Arc::new(crate::secrets::Masking::new(
            KeyringStore::new(paths.keychain_service()),
            logs.masks(),
        ));
        let settings = Arc::new(SettingsFile::new(paths.settings_file()));
        let mut config = AppConfig::headless(paths, secrets, settings);
        if cli.command.only_reads() {
            config.check = crate::store::OpenCheck::Header;
        }
        let app = App::open(config).await;
        // `chat` stops its answer on Ctrl-C itself (saving what was shown); any other verb
        // is stopped here, and the servers it started are stopped with it below.
        let stops_itself = matches!(cli.command, Command::Chat(_));
        let code = tokio::select! {
            ran = run(&app, cli.command, &mut out) => exit_code(ran),
            () = crate::app::quit_signal(), if !stops_itself => {
                terminal::say!("switchboard: interrupted; stopping its MCP servers");
                130
            }
        };
        app.shutdown(std::time::Duration::from_secs(5)).await;
        code
    });
    let _ = out.flush();
    code
}

/// The exit code of a verb that ran, its error said on stderr (unless it said it already).
fn exit_code(ran: Result<(), CliError>) -> i32 {
    match ran {
        Ok(()) => 0,
        Err(CliError::Failed) => 1,
        Err(e) => {
            terminal::say!("switchboard: {e}");
            1
        }
    }
}

/// Runs a command line (`args` without the program name) against `app`, writing to `out`.
///
/// # Errors
/// A usage error, or what the command failed with.
pub async fn run_with(app: &Arc<App>, args: &[&str], out: &mut impl Write) -> Result<(), CliError> {
    let cli = Cli::try_parse_from(std::iter::once("switchboard").chain(args.iter().copied()))
        .map_err(|e| CliError::Usage(e.to_string()))?;
    run(app, cli.command, out).await
}

async fn run(app: &Arc<App>, command: Command, out: &mut impl Write) -> Result<(), CliError> {
    // Everything a command prints goes through one terminal filter (see `terminal`).
    let out = &mut terminal::Terminal::new(out);
    match command {
        Command::Provider(command) => provider::run(app, command, out).await,
        Command::Mcp(command) => mcp::run(app, command, out).await,
        Command::Chat(args) => chat::run(app, args, out).await,
        Command::Conversations(command) => conversations::run(app, command, out).await,
        Command::Usage(args) => usage::run(app, args, out).await,
        Command::Profile(command) => profile::run(app, command, out).await,
        Command::Project(command) => project::run(app, command, out).await,
        Command::Memory(command) => memory::run(app, command, out).await,
        Command::Policy(command) => policy::run(app, command, out).await,
        Command::Audit(args) => policy::audit(app, args, out).await,
        Command::Skills(command) => skills::run(app, command, out).await,
        Command::Schedule(command) => schedule::run(app, command, out).await,
        Command::Tasks(command) => tasks::run(app, command, out).await,
        Command::Shell(command) => shell_command::run(command, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider_config::ProviderKind;
    use crate::secrets::{MemoryStore, SecretStore};
    use crate::settings::MemorySettings;
    use crate::store::Store;

    fn headless(paths: AppPaths, secrets: Arc<dyn SecretStore>) -> AppConfig {
        AppConfig::headless(paths, secrets, Arc::new(MemorySettings::default()))
    }

    async fn app() -> Arc<App> {
        let paths = AppPaths::under_home("/nonexistent".into());
        let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
        App::with_store(Store::open_in_memory().unwrap(), headless(paths, secrets)).await
    }

    async fn run_args(app: &Arc<App>, args: &[&str]) -> Result<String, CliError> {
        let cli = Cli::try_parse_from(std::iter::once("switchboard").chain(args.iter().copied()))
            .expect("arguments parse");
        let mut out = Vec::new();
        run(app, cli.command, &mut out).await?;
        Ok(String::from_utf8(out).unwrap())
    }

    /// What the command line printed for `words` (split at spaces), which must succeed.
    async fn said_to(app: &Arc<App>, words: &str) -> String {
        let args: Vec<&str> = words.split(' ').collect();
        run_args(app, &args).await.unwrap()
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

    #[tokio::test]
    async fn shell_command_status_says_what_switchboard_runs_as_json_and_changes_nothing() {
        let app = app().await;
        let out = run_args(&app, &["shell-command", "status", "--json"])
            .await
            .unwrap();
        let status: serde_json::Value = serde_json::from_str(&out).unwrap();
        let exe = std::env::current_exe().unwrap();
        assert_eq!(status["binary"], exe.display().to_string());
        assert_eq!(status["changed"], serde_json::Value::Null);
        assert!(
            status["place"].as_str().unwrap().ends_with("switchboard"),
            "{out}"
        );
        let words = run_args(&app, &["shell-command", "status"]).await.unwrap();
        assert!(words.contains("switchboard"), "{words}");
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
        let app = app().await;
        // A variable name unique to this test; nothing else reads it.
        std::env::set_var("SWITCHBOARD_TEST_KEY_CLI_1", "sk-from-env-777777");
        let out = run_args(
            &app,
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
        let listed = run_args(&app, &["provider", "list"]).await.unwrap();
        assert!(
            listed.contains("OpenAI") && listed.contains("stored"),
            "{listed}"
        );
        assert!(!listed.contains("777777"));
        let json = run_args(&app, &["provider", "list", "--json"])
            .await
            .unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed[0]["has_key"], true);
        assert!(!json.contains("777777"));
    }

    #[tokio::test]
    async fn conversations_draft_prints_what_the_window_has_not_sent() {
        let app = app().await;
        let id = app.conversations().create(None, "").await.unwrap().id;
        assert_eq!(
            run_args(&app, &["conversations", "draft", &id])
                .await
                .unwrap(),
            ""
        );
        assert_eq!(
            run_args(&app, &["conversations", "draft", &id, "--json"])
                .await
                .unwrap()
                .trim(),
            "null"
        );
        let draft = crate::app::Draft {
            text: "Half a thought".into(),
            comparing: true,
            compared: vec![
                crate::app::ComparedModel {
                    provider: "Work".into(),
                    model: Some("gpt-4o".into()),
                },
                crate::app::ComparedModel {
                    provider: "Local".into(),
                    model: None,
                },
            ],
            ..crate::app::Draft::default()
        };
        app.save_draft(&id, &draft).await.unwrap();
        assert_eq!(
            run_args(&app, &["conversations", "draft", &id])
                .await
                .unwrap(),
            "Half a thought\nCompare: Work · gpt-4o, Local\n"
        );
        let json = run_args(&app, &["conversations", "draft", &id, "--json"])
            .await
            .unwrap();
        assert_eq!(
            serde_json::from_str::<crate::app::Draft>(&json).unwrap(),
            draft
        );
        assert!(run_args(&app, &["conversations", "draft", "nowhere"])
            .await
            .is_err());
    }

    #[tokio::test]
    async fn a_missing_key_variable_is_an_error_and_adds_nothing() {
        let app = app().await;
        let err = run_args(
            &app,
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
        assert!(app.providers().list().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_preset_sets_the_kind_and_address_and_a_test_reports_a_failure() {
        let app = app().await;
        let (_closed, port) = crate::net::refused_port();
        let url = format!("http://127.0.0.1:{port}/v1");
        run_args(
            &app,
            &["provider", "add", "Studio", "--preset", "lm_studio"],
        )
        .await
        .unwrap();
        let listed = app.providers().list().await.unwrap();
        assert_eq!(listed[0].kind, ProviderKind::OpenaiCompatible);
        assert_eq!(listed[0].base_url, "http://127.0.0.1:1234/v1");
        app.providers()
            .update("Studio", Some(&url), None)
            .await
            .unwrap();
        let err = run_args(&app, &["provider", "test", "Studio"])
            .await
            .unwrap_err();
        assert!(matches!(err, CliError::Failed));
        let unknown =
            Cli::try_parse_from(["switchboard", "provider", "add", "X", "--preset", "nope"])
                .unwrap_err()
                .to_string();
        assert!(unknown.contains("lm_studio"), "{unknown}");
    }

    #[test]
    fn only_verbs_that_read_skip_the_page_check_at_open() {
        let reads = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("switchboard").chain(args.iter().copied()))
                .unwrap()
                .command
                .only_reads()
        };
        for args in [
            &["conversations", "list"][..],
            &["conversations", "show", "c1", "--json"],
            &["conversations", "search", "tea", "--json"],
            &["conversations", "export", "c1", "--format", "json"],
            &["provider", "list"],
            &["mcp", "list", "--json"],
            &["mcp", "approvals"],
        ] {
            assert!(reads(args), "{args:?}");
        }
        for args in [
            &["conversations", "import", "f.json"][..],
            &["conversations", "delete-turn", "c1", "m1"],
            &["chat", "hello"],
            &["provider", "remove", "p"],
            &["mcp", "remove", "s"],
        ] {
            assert!(!reads(args), "{args:?}");
        }
    }

    /// An app in a fresh home, and server-everything's program (`None`: not installed, so the
    /// test `test` says it is skipped).
    async fn home_with_everything(test: &str) -> Option<(tempfile::TempDir, Arc<App>, String)> {
        let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/peers/node_modules/.bin/mcp-server-everything");
        if !bin.exists() {
            assert!(std::env::var_os("SWITCHBOARD_SKIP_PEERS").is_some_and(|v| v == "1"));
            eprintln!("SKIPPED {test}: server-everything is not installed");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let app = App::open(headless(
            AppPaths::under_home(dir.path().to_path_buf()),
            Arc::new(MemoryStore::new()),
        ))
        .await;
        Some((dir, app, bin.display().to_string()))
    }

    #[tokio::test]
    async fn mcp_add_list_call_and_remove_from_the_command_line() {
        let Some((_dir, app, bin)) = home_with_everything("mcp cli").await else {
            return;
        };
        let added = run_args(
            &app,
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
        let listed = run_args(&app, &["mcp", "list"]).await.unwrap();
        assert!(
            listed.contains("everything") && listed.contains("approved"),
            "{listed}"
        );
        let tools = run_args(&app, &["mcp", "tools", "everything"])
            .await
            .unwrap();
        assert!(
            tools
                .lines()
                .any(|l| l.starts_with("echo ") && l.contains("everything__echo")),
            "{tools}"
        );
        let echoed = run_args(
            &app,
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
        let unknown = run_args(&app, &["mcp", "call", "everything", "no-such-tool"]).await;
        assert!(unknown.is_err(), "{unknown:?}");
        let bad_json = run_args(&app, &["mcp", "call", "everything", "echo", "{not json"]).await;
        assert!(matches!(bad_json, Err(CliError::Usage(_))));
        // `mcp call` waits as long as the server's timeoutSeconds says, not a default of its own.
        let file = app.mcp_file();
        let mut config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        config["mcpServers"]["everything"]["timeoutSeconds"] = 1.into();
        std::fs::write(&file, config.to_string()).unwrap();
        let slow = r#"{"duration": 30, "steps": 30}"#;
        let cut = run_args(
            &app,
            &[
                "mcp",
                "call",
                "everything",
                "trigger-long-running-operation",
                slow,
            ],
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(cut.contains("within 1 s"), "{cut}");
        run_args(&app, &["mcp", "remove", "everything"])
            .await
            .unwrap();
        let listed = run_args(&app, &["mcp", "list"]).await.unwrap();
        assert!(listed.contains("No MCP servers yet"), "{listed}");
    }

    #[tokio::test]
    async fn a_servers_resources_and_prompts_from_the_command_line() {
        let Some((dir, app, bin)) = home_with_everything("mcp resources cli").await else {
            return;
        };
        run_args(&app, &["mcp", "add", "everything", "--", &bin, "stdio"])
            .await
            .unwrap();

        let listed = run_args(&app, &["mcp", "resources", "everything"])
            .await
            .unwrap();
        assert!(
            listed.starts_with("URI ")
                && listed.contains("demo://resource/static/document/")
                && listed.contains("TEMPLATE ")
                && listed.contains("demo://resource/dynamic/text/{resourceId}"),
            "{listed}"
        );
        let json: serde_json::Value = serde_json::from_str(
            &run_args(&app, &["mcp", "resources", "everything", "--json"])
                .await
                .unwrap(),
        )
        .unwrap();
        assert!(json["resources"].as_array().is_some_and(|r| !r.is_empty()));
        assert!(json["resourceTemplates"]
            .as_array()
            .is_some_and(|t| t.len() >= 2));

        let text = run_args(
            &app,
            &[
                "mcp",
                "read",
                "everything",
                "demo://resource/dynamic/text/4",
            ],
        )
        .await
        .unwrap();
        assert!(
            text.starts_with("Resource 4: This is a plaintext resource"),
            "{text}"
        );
        // A blob is described on the terminal, and written whole with --output.
        let blob_uri = "demo://resource/dynamic/blob/5";
        let described = run_args(&app, &["mcp", "read", "everything", blob_uri])
            .await
            .unwrap();
        assert!(
            described.contains("text/plain") && described.contains("--output FILE"),
            "{described}"
        );
        let saved = dir.path().join("blob.txt");
        let wrote = run_args(
            &app,
            &[
                "mcp",
                "read",
                "everything",
                blob_uri,
                "-o",
                saved.to_str().unwrap(),
            ],
        )
        .await
        .unwrap();
        assert!(wrote.starts_with("Wrote "), "{wrote}");
        assert!(std::fs::read_to_string(&saved)
            .unwrap()
            .starts_with("Resource 5: This is a base64 blob"));
        let unknown = run_args(&app, &["mcp", "read", "everything", "demo://nowhere"]).await;
        assert!(unknown.is_err(), "{unknown:?}");

        let prompts = run_args(&app, &["mcp", "prompts", "everything"])
            .await
            .unwrap();
        assert!(
            prompts
                .lines()
                .any(|l| l.starts_with("args-prompt ") && l.contains("city*, state")),
            "{prompts}"
        );
        let prompt = run_args(
            &app,
            &[
                "mcp",
                "prompt",
                "everything",
                "args-prompt",
                r#"{"city": "Oslo"}"#,
            ],
        )
        .await
        .unwrap();
        assert_eq!(prompt, "user: What's weather in Oslo?\n");
        let bad = run_args(&app, &["mcp", "prompt", "everything", "args-prompt", "[1]"]).await;
        assert!(matches!(bad, Err(CliError::Usage(_))), "{bad:?}");

        let completed = run_args(
            &app,
            &[
                "mcp",
                "complete",
                "everything",
                "--prompt",
                "completable-prompt",
                "name",
                "",
                "--context",
                r#"{"department": "Engineering"}"#,
                "--json",
            ],
        )
        .await
        .unwrap();
        let values: Vec<String> = serde_json::from_str(&completed).unwrap();
        assert_eq!(values, ["Alice", "Bob", "Charlie"]);
        let usage = run_with(
            &app,
            &["mcp", "complete", "everything", "name"],
            &mut Vec::new(),
        )
        .await;
        assert!(
            matches!(usage, Err(CliError::Usage(_))),
            "--prompt or --template is required: {usage:?}"
        );
    }

    #[tokio::test]
    async fn remove_deletes_the_provider() {
        let app = app().await;
        run_args(&app, &["provider", "add", "Local", "--kind", "ollama"])
            .await
            .unwrap();
        run_args(&app, &["provider", "remove", "local"])
            .await
            .unwrap();
        let out = run_args(&app, &["provider", "list"]).await.unwrap();
        assert!(out.contains("No providers yet"), "{out}");
    }

    #[tokio::test]
    async fn whether_a_model_takes_images_is_the_persons_to_say() {
        let app = app().await;
        run_args(&app, &["provider", "add", "Local", "--kind", "ollama"])
            .await
            .unwrap();
        let said = |words: &'static str| said_to(&app, words);
        assert_eq!(
            said("provider images Local my-model on").await,
            "“my-model” of “Local” takes images.\n"
        );
        assert_eq!(
            said("provider images Local llava:7b off").await,
            "“llava:7b” of “Local” does not take images.\n"
        );
        assert_eq!(
            said("provider images Local llava:7b auto").await,
            "“llava:7b” of “Local” takes images (as its family is known to).\n"
        );
        let unknown = run_args(&app, &["provider", "images", "Nowhere", "m", "on"]).await;
        assert!(unknown.is_err(), "{unknown:?}");
    }

    #[tokio::test]
    async fn how_a_model_is_given_tools_is_the_persons_to_say() {
        let app = app().await;
        run_args(&app, &["provider", "add", "Local", "--kind", "ollama"])
            .await
            .unwrap();
        let said = |words: &'static str| said_to(&app, words);
        assert_eq!(
            said("provider tools Local smollm2").await,
            "“smollm2” of “Local” calls tools through its API's own tool calling (the default).\n"
        );
        assert_eq!(
            said("provider tools Local smollm2 prompted").await,
            "“smollm2” of “Local” is given tools in its system prompt and calls them in text (your word).\n"
        );
        let json: serde_json::Value =
            serde_json::from_str(&said("provider tools Local smollm2 --json").await).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"mode": "prompted", "source": "person", "automatic": "native"})
        );
        assert_eq!(
            said("provider tools Local smollm2 off").await,
            "“smollm2” of “Local” is given no tools (your word).\n"
        );
        assert_eq!(
            said("provider tools Local smollm2 auto").await,
            "“smollm2” of “Local” calls tools through its API's own tool calling (the default).\n"
        );
        let unknown = run_args(&app, &["provider", "tools", "Nowhere", "m", "off"]).await;
        assert!(unknown.is_err(), "{unknown:?}");
        assert!(Cli::try_parse_from([
            "switchboard",
            "provider",
            "tools",
            "Local",
            "m",
            "sometimes"
        ])
        .is_err());
    }

    #[tokio::test]
    async fn conversations_are_listed_shown_searched_exported_and_imported_from_the_command_line() {
        use crate::store::{NewMessage, Role};
        let app = app().await;
        let conversation = app
            .create_conversation(
                Some("Trip to Lisbon"),
                Some("Be brief."),
                &crate::app::ProfileChoice::Default,
            )
            .await
            .unwrap();
        let store = app.store().unwrap();
        store
            .append_message(
                conversation.id.clone(),
                NewMessage::text(Role::User, "What is the weather in Lisbon?"),
            )
            .await
            .unwrap();
        store
            .append_message(
                conversation.id.clone(),
                NewMessage::text(Role::Assistant, "Sunny, **21 °C**."),
            )
            .await
            .unwrap();

        let listed: serde_json::Value = serde_json::from_str(
            &run_args(&app, &["conversations", "list", "--json"])
                .await
                .unwrap(),
        )
        .unwrap();
        assert_eq!(listed[0]["id"], conversation.id.as_str());
        assert_eq!(listed[0]["system_prompt"], "Be brief.");
        let table = run_args(&app, &["conversations", "list"]).await.unwrap();
        assert!(table.starts_with("ID"), "{table}");
        assert!(table.contains("Trip to Lisbon"), "{table}");

        let shown = run_args(&app, &["conversations", "show", &conversation.id])
            .await
            .unwrap();
        assert!(
            shown.contains("## You\n\nWhat is the weather in Lisbon?"),
            "{shown}"
        );
        assert!(shown.contains("Sunny, **21 °C**."), "{shown}");

        let hits: serde_json::Value = serde_json::from_str(
            &run_args(&app, &["conversations", "search", "sunny", "--json"])
                .await
                .unwrap(),
        )
        .unwrap();
        assert_eq!(hits.as_array().unwrap().len(), 1);
        assert_eq!(hits[0]["conversation_id"], conversation.id.as_str());
        assert_eq!(hits[0]["role"], "assistant");
        let said = run_args(&app, &["conversations", "search", "weather lisbon"])
            .await
            .unwrap();
        assert!(said.contains("[weather] in [Lisbon]"), "{said}");
        let none = run_args(&app, &["conversations", "search", "snow"])
            .await
            .unwrap();
        assert_eq!(none.trim(), "Nothing found for “snow”.");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trip.json");
        let file_arg = file.display().to_string();
        let wrote = run_args(
            &app,
            &[
                "conversations",
                "export",
                &conversation.id,
                "--format",
                "json",
                "-o",
                &file_arg,
            ],
        )
        .await
        .unwrap();
        assert!(wrote.contains("(2 messages)"), "{wrote}");
        let imported: serde_json::Value = serde_json::from_str(
            &run_args(&app, &["conversations", "import", &file_arg, "--json"])
                .await
                .unwrap(),
        )
        .unwrap();
        let copy = imported["id"].as_str().unwrap().to_owned();
        assert_ne!(copy, conversation.id);
        let original = run_args(
            &app,
            &[
                "conversations",
                "export",
                &conversation.id,
                "--format",
                "markdown",
            ],
        )
        .await
        .unwrap();
        let again = run_args(
            &app,
            &["conversations", "export", &copy, "--format", "markdown"],
        )
        .await
        .unwrap();
        // The same conversation but for the export time in the line under the title.
        let body = |text: &str| text.lines().skip(3).collect::<Vec<_>>().join("\n");
        assert_eq!(body(&again), body(&original));
        assert_eq!(
            run_args(&app, &["conversations", "search", "sunny", "--json"])
                .await
                .map(|out| serde_json::from_str::<serde_json::Value>(&out)
                    .unwrap()
                    .as_array()
                    .unwrap()
                    .len())
                .unwrap(),
            2
        );

        // A file that is not an export is refused and nothing is added.
        std::fs::write(&file, "{\"format\": \"other\"}").unwrap();
        let refused = run_args(&app, &["conversations", "import", &file_arg]).await;
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("not a Switchboard conversation"));
        assert_eq!(app.conversations().list().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn branches_are_switched_and_a_turn_is_deleted_from_the_command_line() {
        use crate::store::{NewMessage, Role};
        let app = app().await;
        let id = app
            .create_conversation(None, Some(""), &crate::app::ProfileChoice::Default)
            .await
            .unwrap()
            .id;
        let store = app.store().unwrap();
        let say = |role, text: &str| NewMessage::text(role, text);
        let first = store
            .append_message(id.clone(), say(Role::User, "first try"))
            .await
            .unwrap();
        store
            .append_message(id.clone(), say(Role::Assistant, "first answer"))
            .await
            .unwrap();
        // As an edit does before its run: the old branch set aside, then the new question.
        store
            .branch_off(id.clone(), first.id.clone())
            .await
            .unwrap();
        let second = store
            .append_message(id.clone(), say(Role::User, "second try"))
            .await
            .unwrap();

        let switched: serde_json::Value = serde_json::from_str(
            &run_args(
                &app,
                &["conversations", "branch", &id, &second.id, "1", "--json"],
            )
            .await
            .unwrap(),
        )
        .unwrap();
        assert_eq!(switched["point"]["message_id"], first.id.as_str());
        assert_eq!(switched["point"]["position"], 0);
        assert_eq!(switched["point"]["count"], 2);
        let said = run_args(&app, &["conversations", "branch", &id, &first.id, "2"])
            .await
            .unwrap();
        assert_eq!(
            said.trim(),
            format!(
                "Showing branch 2 of 2 (it starts at message {}).",
                second.id
            )
        );
        let missing = run_args(&app, &["conversations", "branch", &id, &second.id, "3"]).await;
        assert!(missing.unwrap_err().to_string().contains("Not found"));

        let deleted: serde_json::Value = serde_json::from_str(
            &run_args(
                &app,
                &["conversations", "delete-turn", &id, &second.id, "--json"],
            )
            .await
            .unwrap(),
        )
        .unwrap();
        assert_eq!(deleted["deleted"], serde_json::json!([second.id]));
        assert!(store.list_messages(id).await.unwrap().is_empty());
    }
}
