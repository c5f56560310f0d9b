//! MCP servers as the Servers page and `switchboard mcp list` show them: each configured
//! server with its state of approval and what the supervisor ([`crate::mcp::host::McpHost`]) says of it.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::app::App;
use crate::error::CoreError;
use crate::mcp::config::{Launch, McpFile, ServerEntry, FILE_NAME};
use crate::mcp::host::ServerState;
use crate::mcp::launch::stderr_log_path;
use crate::policy::pins::ToolStatus;
use crate::policy::servers;

pub(super) fn not_oauth(server: &str) -> CoreError {
    CoreError::Conflict {
        field: "url",
        message: format!(
            "“{server}” is not reached over streamable HTTP, so it has nothing to sign in to."
        ),
    }
}

/// A configured server with what the supervisor says about it, for the Servers page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct McpServerStatus {
    #[serde(flatten)]
    pub server: McpServerView,
    /// `None` when the supervisor does not run it (disabled, needs approval, invalid).
    pub state: Option<ServerState>,
    /// What the supervisor runs: the program's resolved path (found on the login shell's
    /// `PATH`), or the address; `None` when it is not run.
    pub resolved: Option<String>,
    /// Where its stderr is logged.
    pub log_file: String,
    /// The tools its last list held that are not offered to models, and why.
    pub held_back: Vec<crate::mcp::server::HeldBackTool>,
    /// What its sandbox refused it while it ran, as its messages said ("read
    /// ~/.ssh/id_ed25519"), newest last.
    pub sandbox_refused: Vec<String>,
}

/// One tool of a server, against its pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ToolReview {
    pub tool: String,
    /// The name models see.
    pub wire_name: String,
    /// "Server · Tool Name".
    pub display_name: String,
    #[serde(flatten)]
    pub status: ToolStatus,
    /// Whether it may be offered to a model (not while held back).
    pub offered: bool,
}

/// How a server is reached: a child process's stdin and stdout, streamable HTTP, or the older
/// HTTP with server-sent events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Stdio,
    Http,
    Sse,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Sse => "sse",
        }
    }
}

/// One configured server as lists show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct McpServerView {
    pub name: String,
    /// How it is reached; `None` when the entry cannot be used.
    pub transport: Option<Transport>,
    /// The exact command line or address (secrets shown as keychain references).
    pub command_line: Option<String>,
    pub disabled: bool,
    /// Approved as it is now; a new or changed server is not.
    pub approved: bool,
    /// Why the entry cannot be used.
    pub error: Option<String>,
    /// What an edit starts from: the program and its arguments as one shell-quoted line, or
    /// the address; `None` for an entry that cannot be used.
    pub edit_text: Option<String>,
    /// The folders it is given as its roots.
    pub roots: Vec<String>,
    /// A local server's command in its parts, as `command_line` shows them (the Servers page
    /// shows them as chips); `None` for a remote server or an entry that cannot be used.
    pub command: Option<CommandParts>,
    /// A local server's sandbox (`None`: a remote server, or an entry that cannot be used).
    pub sandbox: Option<ServerSandbox>,
}

/// A local server's sandbox as its card shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ServerSandbox {
    /// As mcp.json has it (`None`: none written, so it runs with all the person's rights).
    pub entry: Option<crate::sandbox::SandboxEntry>,
    /// In plain words: "can read and write: ~/notes; can read: the system; network: none".
    pub said: String,
    /// Why this system cannot enforce a sandbox (`None`: it can).
    pub unavailable: Option<String>,
}

/// The parts of a local server's command line, each as it will run (a secret variable as its
/// keychain reference).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct CommandParts {
    /// `KEY=value`, in the order they are set.
    pub env: Vec<String>,
    /// The folder it runs in, when it has one of its own.
    pub folder: Option<String>,
    pub program: String,
    pub args: Vec<String>,
}

impl CommandParts {
    fn of(launch: &Launch) -> Option<CommandParts> {
        match launch {
            Launch::Stdio {
                command,
                args,
                env,
                cwd,
            } => Some(CommandParts {
                env: env
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.display()))
                    .collect(),
                folder: cwd.as_ref().map(|dir| dir.display().to_string()),
                program: command.clone(),
                args: args.clone(),
            }),
            Launch::Http { .. } | Launch::Sse { .. } => None,
        }
    }
}

impl App {
    pub fn mcp_file(&self) -> PathBuf {
        self.paths.config_dir.join(FILE_NAME)
    }

    pub(in crate::app) fn load_mcp(&self) -> Result<McpFile, CoreError> {
        Ok(McpFile::load(&self.mcp_file())?)
    }

    /// How long a call to `name` may take: its `timeoutSeconds` in mcp.json, else `default`
    /// (Settings' tool timeout), as the tool loop decides it.
    ///
    /// # Errors
    /// mcp.json cannot be read or parsed.
    pub fn mcp_call_timeout(&self, name: &str, default: Duration) -> Result<Duration, CoreError> {
        Ok(self
            .load_mcp()?
            .servers
            .get(name)
            .and_then(|entry| entry.timeout_seconds)
            .map_or(default, Duration::from_secs))
    }

    pub(super) async fn approved_fingerprint(
        &self,
        name: &str,
    ) -> Result<Option<String>, CoreError> {
        Ok(self.store()?.mcp_approval(name.to_owned()).await?)
    }

    /// Every configured server, in name order.
    ///
    /// # Errors
    /// mcp.json cannot be read or parsed; the database.
    pub async fn mcp_servers(&self) -> Result<Vec<McpServerView>, CoreError> {
        let file = self.load_mcp()?;
        let mut views = Vec::new();
        for (name, spec) in file.specs() {
            let view = match spec {
                Ok(spec) => McpServerView {
                    approved: servers::approved(
                        self.approved_fingerprint(&name).await?.as_deref(),
                        &spec,
                    ),
                    transport: Some(match spec.launch {
                        Launch::Stdio { .. } => Transport::Stdio,
                        Launch::Http { .. } => Transport::Http,
                        Launch::Sse { .. } => Transport::Sse,
                    }),
                    command_line: Some(spec.launch.display()),
                    edit_text: Some(match &spec.launch {
                        Launch::Stdio { command, args, .. } => {
                            shell_words::join(std::iter::once(command).chain(args))
                        }
                        Launch::Http { url, .. } | Launch::Sse { url, .. } => url.clone(),
                    }),
                    disabled: spec.disabled,
                    error: None,
                    roots: spec.roots.iter().map(|p| p.display().to_string()).collect(),
                    command: CommandParts::of(&spec.launch),
                    sandbox: matches!(spec.launch, Launch::Stdio { .. }).then(|| {
                        let home = dirs::home_dir().unwrap_or_default();
                        ServerSandbox {
                            said: crate::sandbox::said(
                                spec.sandbox.as_ref(),
                                &spec.sandbox_about(&home),
                            ),
                            entry: spec.sandbox.clone(),
                            unavailable: crate::sandbox::available().err(),
                        }
                    }),
                    name,
                },
                Err(e) => McpServerView {
                    disabled: file.servers[&name].disabled,
                    name,
                    transport: None,
                    command_line: None,
                    edit_text: None,
                    approved: false,
                    error: Some(e.to_string()),
                    roots: Vec::new(),
                    command: None,
                    sandbox: None,
                },
            };
            views.push(view);
        }
        Ok(views)
    }

    /// How [`App::mcp_servers`] shows the server named exactly `name`.
    pub async fn mcp_server_view(&self, name: String) -> Result<McpServerView, CoreError> {
        self.mcp_servers()
            .await?
            .into_iter()
            .find(|v| v.name == name)
            .ok_or(CoreError::NotFound { what: name })
    }

    /// Every configured server with its supervisor state, in name order.
    ///
    /// # Errors
    /// As [`App::mcp_servers`].
    pub async fn mcp_status(&self) -> Result<Vec<McpServerStatus>, CoreError> {
        let states = self.host.states();
        let resolved = self.host.resolved();
        Ok(self
            .mcp_servers()
            .await?
            .into_iter()
            .map(|server| McpServerStatus {
                state: states.get(&server.name).cloned(),
                resolved: resolved.get(&server.name).cloned(),
                log_file: stderr_log_path(&self.paths.log_dir, &server.name)
                    .display()
                    .to_string(),
                held_back: self
                    .host
                    .server(&server.name)
                    .map(|s| s.held_back())
                    .unwrap_or_default(),
                sandbox_refused: self
                    .host
                    .server(&server.name)
                    .map(|s| s.sandbox_refusals())
                    .unwrap_or_default(),
                server,
            })
            .collect())
    }

    /// Where the window's host records its servers' process groups.
    pub fn mcp_pid_file(&self) -> PathBuf {
        pid_file_of(&self.paths)
    }
}

/// Where the window's host records its servers' process groups, in the home `paths`.
pub(in crate::app) fn pid_file_of(paths: &crate::paths::AppPaths) -> PathBuf {
    paths.data_dir.join("mcp-processes.json")
}

/// Runs blocking work (the keychain, files) off the async runtime; a task that panicked is
/// reported as the store's task error, as every other background task is.
pub(super) async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, CoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| CoreError::Store(crate::store::StoreError::Task(e.to_string())))
}

/// The entry named `name` (ignoring case), or not found.
pub(super) fn find_server<'f>(
    file: &'f McpFile,
    name: &str,
) -> Result<(&'f String, &'f ServerEntry), CoreError> {
    file.find(name).ok_or_else(|| CoreError::NotFound {
        what: format!("server “{}”", name.trim()),
    })
}
