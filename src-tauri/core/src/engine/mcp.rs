//! MCP servers as a person manages them: the list with each server's state of approval, add,
//! remove (secrets and approval too), import with a preview, approve, and starting a
//! server only when what it runs is exactly what was approved; handing every such server to
//! the supervisor ([`McpHost`]).

use std::path::PathBuf;

use serde::Serialize;

use super::Core;
use crate::error::{CoreError, InvalidInput};
use crate::mcp::catalogue::{Catalogue, ListedTool};
use crate::mcp::config::{
    move_secrets_to_keychain, validate_name, ConfigValue, ImportPreview, Launch, McpFile,
    ServerEntry, FILE_NAME,
};
use crate::mcp::environment::{login_shell_path, search_path, LOGIN_SHELL_TIMEOUT};
use crate::mcp::host::{McpHost, ServerState};
use crate::mcp::launch::{remote_launch, stderr_log_path, stdio_launch, ServerLaunch};
use crate::mcp::oauth::{Authorizer, RemoteAuth};
use crate::mcp::pins::{review, PinnedTool, ToolStatus};
use crate::mcp::remote::{RemoteLaunch, RemoteTransport};
use crate::mcp::server::{McpError, McpServer};
use crate::policy::confirm::ServerApprovalRequest;

fn not_oauth(server: &str) -> CoreError {
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

/// One configured server as lists show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct McpServerView {
    pub name: String,
    /// `stdio`, `http` or `sse`; `None` when the entry cannot be used.
    pub transport: Option<&'static str>,
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
}

impl Core {
    pub fn mcp_file(&self) -> PathBuf {
        self.paths.config_dir.join(FILE_NAME)
    }

    pub(super) fn load_mcp(&self) -> Result<McpFile, CoreError> {
        Ok(McpFile::load(&self.mcp_file())?)
    }

    async fn approved_fingerprint(&self, name: &str) -> Result<Option<String>, CoreError> {
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
                    approved: self.approved_fingerprint(&name).await?.as_deref()
                        == Some(spec.fingerprint.as_str()),
                    transport: Some(match spec.launch {
                        Launch::Stdio { .. } => "stdio",
                        Launch::Http { .. } => "http",
                        Launch::Sse { .. } => "sse",
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
                },
            };
            views.push(view);
        }
        Ok(views)
    }

    /// Adds a server typed on the command line (or confirmed there), which counts as approving
    /// it. Secret `env` / `headers` values move to the keychain first.
    ///
    /// # Errors
    /// An invalid entry, a taken name, the keychain, the file or the database.
    pub async fn mcp_add(
        &self,
        name: &str,
        entry: ServerEntry,
    ) -> Result<McpServerView, CoreError> {
        self.mcp_add_entry(name, entry, true).await
    }

    /// Adds a server without approving it: what the window adds. The webview renders hostile
    /// text, so nothing it sends may start a program; the server waits for the native dialog.
    ///
    /// # Errors
    /// As [`Core::mcp_add`].
    pub async fn mcp_add_unapproved(
        &self,
        name: &str,
        entry: ServerEntry,
    ) -> Result<McpServerView, CoreError> {
        self.mcp_add_entry(name, entry, false).await
    }

    async fn mcp_add_entry(
        &self,
        name: &str,
        mut entry: ServerEntry,
        approved: bool,
    ) -> Result<McpServerView, CoreError> {
        let name = validate_name(name)?;
        let spec = entry.resolve(&name)?;
        let mut file = self.load_mcp()?;
        if file.find(&name).is_some() {
            return Err(CoreError::Conflict {
                field: "name",
                message: format!("A server named “{name}” already exists."),
            });
        }
        let server = name.clone();
        entry = self
            .secrets(move |s| move_secrets_to_keychain(&server, &mut entry, s).map(|_| entry))
            .await
            .map_err(CoreError::key_not_saved)?;
        let fingerprint = entry.fingerprint();
        file.servers.insert(name.clone(), entry);
        file.save(&self.mcp_file())?;
        if approved {
            self.store()?
                .approve_mcp_server(name.clone(), fingerprint)
                .await?;
        }
        tracing::info!(server = %name, command = %spec.launch.display(), approved, "MCP server added");
        self.mcp_server_view(name).await
    }

    /// Changes how a server runs to what the person typed — a program's command line (its
    /// `KEY=value` words replace those variables; others are kept) or a remote server's
    /// address — keeping everything else in its entry. The edited server needs approval again.
    ///
    /// # Errors
    /// Not found; a program turned into an address or back (remove and add instead); an
    /// invalid result; the keychain or the file.
    pub async fn mcp_edit(
        &self,
        name: &str,
        typed: ServerEntry,
    ) -> Result<McpServerView, CoreError> {
        let mut file = self.load_mcp()?;
        let (key, current) = find_server(&file, name).map(|(k, e)| (k.clone(), e.clone()))?;
        let mut entry = current.clone();
        match (current.command.is_some(), typed.command) {
            (true, Some(command)) => {
                entry.command = Some(command);
                entry.args = typed.args;
                entry.env.extend(typed.env);
            }
            (false, None) if current.url.is_some() => entry.url = typed.url,
            (true, None) => {
                return Err(InvalidInput::new(
                    "url",
                    "This server runs a program: give its command line. To reach a remote server instead, remove this one and add that.",
                )
                .into())
            }
            _ => {
                return Err(InvalidInput::new(
                    "command_line",
                    "This is a remote server: give its address. To run a program instead, remove this one and add that.",
                )
                .into())
            }
        }
        entry.resolve(&key)?;
        let server = key.clone();
        entry = self
            .secrets(move |s| move_secrets_to_keychain(&server, &mut entry, s).map(|_| entry))
            .await
            .map_err(CoreError::key_not_saved)?;
        file.servers.insert(key.clone(), entry);
        file.save(&self.mcp_file())?;
        tracing::info!(server = %key, "MCP server edited; it needs approval again");
        self.mcp_server_view(key).await
    }

    /// Removes a server, its keychain values and its approval.
    ///
    /// # Errors
    /// Not found, the keychain, the file or the database.
    pub async fn mcp_remove(&self, name: &str) -> Result<(), CoreError> {
        let mut file = self.load_mcp()?;
        let (key, entry) = find_server(&file, name).map(|(k, e)| (k.clone(), e.clone()))?;
        let accounts: Vec<String> = entry
            .env
            .values()
            .chain(entry.headers.values())
            .filter_map(|v| match v {
                ConfigValue::Keychain { keychain } => Some(keychain.clone()),
                ConfigValue::Plain(_) => None,
            })
            .collect();
        self.secrets(move |s| accounts.iter().try_for_each(|a| s.delete(a)))
            .await?;
        file.servers.remove(&key);
        file.save(&self.mcp_file())?;
        self.store()?.forget_mcp_approval(key.clone()).await?;
        tracing::info!(server = %key, "MCP server removed");
        Ok(())
    }

    /// What importing `text` would add, change nothing yet.
    ///
    /// # Errors
    /// mcp.json or `text` cannot be read.
    pub fn mcp_import_preview(&self, text: &str, origin: &str) -> Result<ImportPreview, CoreError> {
        let current = self.load_mcp()?;
        Ok(ImportPreview::from_text(text, origin, &current)?)
    }

    /// Adds every server the preview lists as added (approved: the person confirmed the
    /// preview, which shows each command line). Returns the names added.
    ///
    /// # Errors
    /// As [`Core::mcp_add`]; servers added before a failure stay added.
    pub async fn mcp_import(&self, preview: &ImportPreview) -> Result<Vec<String>, CoreError> {
        self.mcp_import_entries(preview, true).await
    }

    /// Imports what `preview` shows without approving it: what the window imports (each
    /// server then waits for the native dialog; see [`Core::mcp_add_unapproved`]).
    ///
    /// # Errors
    /// As [`Core::mcp_import`].
    pub async fn mcp_import_unapproved(
        &self,
        preview: &ImportPreview,
    ) -> Result<Vec<String>, CoreError> {
        self.mcp_import_entries(preview, false).await
    }

    async fn mcp_import_entries(
        &self,
        preview: &ImportPreview,
        approved: bool,
    ) -> Result<Vec<String>, CoreError> {
        let mut added = Vec::new();
        for (name, entry) in preview.entries() {
            self.mcp_add_entry(name, entry.clone(), approved).await?;
            added.push(name.clone());
        }
        Ok(added)
    }

    /// What the approval dialog must show for `name` as its entry is now: the full command
    /// line (or address), and the fingerprint that approving exactly this approves.
    ///
    /// # Errors
    /// Not found, an invalid entry.
    pub fn mcp_approval_request(&self, name: &str) -> Result<ServerApprovalRequest, CoreError> {
        let file = self.load_mcp()?;
        let (key, entry) = find_server(&file, name)?;
        let spec = entry.resolve(key)?;
        Ok(ServerApprovalRequest {
            server: key.clone(),
            command_line: spec.launch.display(),
            remote: !matches!(spec.launch, Launch::Stdio { .. }),
            fingerprint: spec.fingerprint,
        })
    }

    /// Approves what `shown` showed, only if the entry still is exactly that: a file edited
    /// while the dialog was open is not approved by it.
    ///
    /// # Errors
    /// [`CoreError::Conflict`] when the entry changed; not found; the database.
    pub async fn mcp_approve_shown(
        &self,
        shown: &ServerApprovalRequest,
    ) -> Result<McpServerView, CoreError> {
        let now = self.mcp_approval_request(&shown.server)?;
        if now.fingerprint != shown.fingerprint {
            return Err(CoreError::Conflict {
                field: "command_line",
                message: format!(
                    "“{}” changed in {} while you were reading it; review it again.",
                    shown.server,
                    self.mcp_file().display()
                ),
            });
        }
        self.store()?
            .approve_mcp_server(now.server.clone(), now.fingerprint)
            .await?;
        tracing::info!(server = %now.server, command = %now.command_line, "MCP server approved");
        self.mcp_server_view(now.server).await
    }

    /// Turns a server on or off in mcp.json (its approval is untouched).
    ///
    /// # Errors
    /// Not found; the file cannot be written.
    pub async fn mcp_set_disabled(
        &self,
        name: &str,
        disabled: bool,
    ) -> Result<McpServerView, CoreError> {
        let mut file = self.load_mcp()?;
        let key = find_server(&file, name)?.0.clone();
        if let Some(entry) = file.servers.get_mut(&key) {
            entry.disabled = disabled;
        }
        file.save(&self.mcp_file())?;
        tracing::info!(server = %key, disabled, "MCP server switched");
        self.mcp_server_view(key).await
    }

    /// (Re)starts one server under `host`: whatever runs under that name is stopped first,
    /// and it starts only if enabled and approved exactly as it is now.
    ///
    /// # Errors
    /// As [`Core::mcp_prepare`].
    pub async fn mcp_restart(&self, host: &McpHost, name: &str) -> Result<(), CoreError> {
        let prepared = self.mcp_prepare(name).await;
        let key = match &prepared {
            Ok((key, _)) => key.clone(),
            Err(_) => name.trim().to_owned(),
        };
        host.stop(&key).await;
        let (key, launch) = prepared?;
        host.spawn(&key, launch).await;
        Ok(())
    }

    /// The end of a server's stderr log (at most `max_bytes`), or empty when it has none.
    ///
    /// # Errors
    /// Not found; the log cannot be read.
    pub async fn mcp_log_tail(&self, name: &str, max_bytes: u64) -> Result<String, CoreError> {
        let file = self.load_mcp()?;
        let key = find_server(&file, name)?.0.clone();
        let path = stderr_log_path(&self.paths.log_dir, &key);
        let read = off_runtime(move || -> std::io::Result<String> {
            use std::io::{Read, Seek, SeekFrom};
            let mut log = match std::fs::File::open(&path) {
                Ok(log) => log,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
                Err(e) => return Err(e),
            };
            let len = log.metadata()?.len();
            log.seek(SeekFrom::Start(len.saturating_sub(max_bytes)))?;
            let mut bytes = Vec::new();
            log.read_to_end(&mut bytes)?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        })
        .await?;
        read.map_err(|e| CoreError::Io {
            what: "the server's log".into(),
            detail: e.to_string(),
        })
    }

    /// Signs in to the remote server `name` with OAuth (`authorizer` visits the authorization
    /// page) and keeps the tokens in the keychain. The server is asked first what it wants (its
    /// `WWW-Authenticate` challenge names the scopes and where its metadata is). Returns the
    /// server's name as configured. The caller restarts it.
    ///
    /// # Errors
    /// Not found, not approved, not a streamable HTTP server; the sign-in failed.
    pub async fn mcp_sign_in(
        &self,
        name: &str,
        authorizer: &dyn Authorizer,
    ) -> Result<String, CoreError> {
        let (key, remote, auth) = self.mcp_remote_auth(name).await?;
        let challenge = crate::mcp::remote::challenge(&key, &remote).await?;
        crate::mcp::oauth::sign_in(&key, &remote.url, &auth, challenge.as_deref(), authorizer)
            .await?;
        Ok(key)
    }

    /// Forgets the remote server `name`'s OAuth tokens. Returns its name as configured.
    ///
    /// # Errors
    /// Not found, not approved, not a remote server; the keychain.
    pub async fn mcp_sign_out(&self, name: &str) -> Result<String, CoreError> {
        let (key, _, auth) = self.mcp_remote_auth(name).await?;
        auth.tokens.forget().await.map_err(|e| {
            CoreError::Mcp(McpError::SignInFailed {
                server: key.clone(),
                detail: e.to_string(),
            })
        })?;
        Ok(key)
    }

    async fn mcp_remote_auth(
        &self,
        name: &str,
    ) -> Result<(String, RemoteLaunch, RemoteAuth), CoreError> {
        let (key, launch) = self.mcp_prepare(name).await?;
        match launch {
            ServerLaunch::Remote(remote) if remote.transport != RemoteTransport::Sse => {
                match remote.auth.clone() {
                    Some(auth) => Ok((key, remote, auth)),
                    None => Err(not_oauth(&key)),
                }
            }
            _ => Err(not_oauth(&key)),
        }
    }

    /// How [`Core::mcp_servers`] shows the server named exactly `name`.
    pub async fn mcp_server_view(&self, name: String) -> Result<McpServerView, CoreError> {
        self.mcp_servers()
            .await?
            .into_iter()
            .find(|v| v.name == name)
            .ok_or(CoreError::NotFound { what: name })
    }

    /// Everything needed to start or reach a server, only if it is enabled and approved exactly
    /// as it is now.
    ///
    /// # Errors
    /// [`CoreError::NeedsApproval`] with the full command line; not found; disabled; a secret
    /// or the command that cannot be found.
    pub async fn mcp_prepare(&self, name: &str) -> Result<(String, ServerLaunch), CoreError> {
        let file = self.load_mcp()?;
        let (key, entry) = find_server(&file, name)?;
        let spec = entry.resolve(key)?;
        if spec.disabled {
            return Err(CoreError::Conflict {
                field: "disabled",
                message: format!("“{key}” is disabled in {}.", self.mcp_file().display()),
            });
        }
        if self.approved_fingerprint(key).await?.as_deref() != Some(spec.fingerprint.as_str()) {
            return Err(CoreError::NeedsApproval {
                server: key.clone(),
                command_line: spec.launch.display(),
            });
        }
        let secrets = std::sync::Arc::clone(&self.secrets);
        if !matches!(spec.launch, Launch::Stdio { .. }) {
            let launch = off_runtime(move || remote_launch(&spec, &secrets)).await??;
            return Ok((key.clone(), ServerLaunch::Remote(launch)));
        }
        let search = self
            .search_path
            .get_or_init(|| async {
                let login = match std::env::var_os("SHELL") {
                    Some(shell) if cfg!(unix) => {
                        login_shell_path(std::path::Path::new(&shell), LOGIN_SHELL_TIMEOUT).await
                    }
                    _ => None,
                };
                search_path(login.as_deref(), std::env::var_os("PATH").as_deref())
            })
            .await
            .clone();
        let home = dirs::home_dir().unwrap_or_else(std::env::temp_dir);
        let log_dir = self.paths.log_dir.clone();
        let launch = off_runtime(move || {
            stdio_launch(
                &spec,
                &*secrets,
                &search,
                std::env::vars_os(),
                &home,
                &log_dir,
            )
        })
        .await??;
        Ok((key.clone(), ServerLaunch::Stdio(launch)))
    }

    /// Starts or connects to a server (see [`Core::mcp_prepare`]) and completes its handshake.
    ///
    /// # Errors
    /// As [`Core::mcp_prepare`]; the start failed (with the server's stderr tail).
    pub async fn mcp_start(&self, name: &str) -> Result<McpServer, CoreError> {
        let (key, launch) = self.mcp_prepare(name).await?;
        Ok(launch.connect(&key, |_| {}).await?)
    }

    /// Hands every enabled, approved server (local or remote) to `host`, which starts them all
    /// in the background. Returns the servers left out, with why (needs approval, invalid, a
    /// secret that cannot be read).
    ///
    /// # Errors
    /// mcp.json cannot be read.
    pub async fn mcp_start_all(&self, host: &McpHost) -> Result<Vec<(String, String)>, CoreError> {
        self.mcp_start_where(host, |_| true).await
    }

    /// As [`Core::mcp_start_all`], for the enabled servers whose name `wanted` accepts.
    ///
    /// # Errors
    /// mcp.json cannot be read, or the database.
    pub async fn mcp_start_where(
        &self,
        host: &McpHost,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<Vec<(String, String)>, CoreError> {
        let mut left_out = Vec::new();
        for view in self.mcp_servers().await? {
            if view.disabled || !wanted(&view.name) {
                continue;
            }
            match self.mcp_prepare(&view.name).await {
                Ok((name, launch)) => host.spawn(&name, launch).await,
                Err(e) => left_out.push((view.name, e.to_string())),
            }
        }
        for (name, why) in &left_out {
            tracing::warn!(server = %name, %why, "MCP server not started");
        }
        Ok(left_out)
    }

    /// Reviews a server's tools against their pins: new tools are pinned now (as first seen),
    /// unchanged ones are offered, changed ones are held back with a diff until accepted.
    ///
    /// # Errors
    /// The database.
    pub async fn mcp_review_tools(
        &self,
        server: &str,
        tools: &[ListedTool],
    ) -> Result<Vec<ToolReview>, CoreError> {
        let catalogue = Catalogue::build([(server, tools)]);
        let store = self.store()?;
        let pins = store.tool_pins(server.to_owned()).await?;
        let statuses = review(catalogue.tools(), &pins);
        let new: Vec<PinnedTool> = catalogue
            .tools()
            .iter()
            .zip(&statuses)
            .filter(|(_, s)| matches!(s, ToolStatus::New))
            .map(|(t, _)| PinnedTool::of(t))
            .collect();
        if !new.is_empty() {
            store.pin_tools(server.to_owned(), new).await?;
        }
        Ok(catalogue
            .tools()
            .iter()
            .zip(statuses)
            .map(|(t, status)| ToolReview {
                tool: t.tool.clone(),
                wire_name: t.wire_name.clone(),
                display_name: t.display_name.clone(),
                offered: !matches!(status, ToolStatus::Changed { .. }),
                status,
            })
            .collect())
    }

    /// Accepts a changed tool as it is now: pinned again, and offered again.
    ///
    /// # Errors
    /// No such tool among `tools`; the database.
    pub async fn mcp_accept_tool(
        &self,
        server: &str,
        tool: &str,
        tools: &[ListedTool],
    ) -> Result<(), CoreError> {
        let catalogue = Catalogue::build([(server, tools)]);
        let current = catalogue
            .tools()
            .iter()
            .find(|t| t.tool == tool)
            .ok_or_else(|| CoreError::NotFound {
                what: format!("tool “{tool}” of “{server}”"),
            })?;
        self.store()?
            .pin_tools(server.to_owned(), vec![PinnedTool::of(current)])
            .await?;
        tracing::info!(server, tool, "changed MCP tool accepted");
        Ok(())
    }

    /// Every configured server with its supervisor state, in name order.
    ///
    /// # Errors
    /// As [`Core::mcp_servers`].
    pub async fn mcp_status(
        &self,
        host: Option<&McpHost>,
    ) -> Result<Vec<McpServerStatus>, CoreError> {
        let states = host.map(McpHost::states).unwrap_or_default();
        let resolved = host.map(McpHost::resolved).unwrap_or_default();
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
                server,
            })
            .collect())
    }

    /// The tools a running server offers now, all pages.
    ///
    /// # Errors
    /// [`CoreError::Conflict`] when it is not running; the server failed.
    pub async fn mcp_running_tools(
        &self,
        host: &McpHost,
        name: &str,
    ) -> Result<Vec<ListedTool>, CoreError> {
        let server = host
            .server(name.trim())
            .ok_or_else(|| CoreError::Conflict {
                field: "name",
                message: format!(
                    "“{}” is not running; start it to see its tools.",
                    name.trim()
                ),
            })?;
        let tools = server.list_tools().await?;
        Ok(tools.iter().map(ListedTool::from_rmcp).collect())
    }

    /// Where the host records its servers' process groups.
    pub fn mcp_pid_file(&self) -> PathBuf {
        self.paths.data_dir.join("mcp-processes.json")
    }
}

/// The entry named `name` (ignoring case), or not found.
/// Runs blocking work (the keychain, files) off the async runtime; a task that panicked is
/// reported as the store's task error, as every other background task is.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, CoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| CoreError::Store(crate::store::StoreError::Task(e.to_string())))
}

fn find_server<'f>(
    file: &'f McpFile,
    name: &str,
) -> Result<(&'f String, &'f ServerEntry), CoreError> {
    file.find(name).ok_or_else(|| CoreError::NotFound {
        what: format!("server “{}”", name.trim()),
    })
}
