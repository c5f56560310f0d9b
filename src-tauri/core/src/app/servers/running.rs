//! Running servers: preparing a launch only when what it runs is exactly what was approved,
//! starting one or all under the supervisor, restarting, signing in and out of a remote one,
//! its log, and the tools it lists now.

use std::path::{Path, PathBuf};

use super::{find_server, not_oauth, off_runtime};
use crate::app::App;
use crate::error::CoreError;
use crate::mcp::catalogue::ListedTool;
use crate::mcp::config::Launch;
use crate::mcp::environment::{login_shell_path, search_path, LOGIN_SHELL_TIMEOUT};
use crate::mcp::launch::{remote_launch, stderr_log_path, stdio_launch, ServerLaunch};
use crate::mcp::oauth::{Authorizer, RemoteAuth};
use crate::mcp::remote::{RemoteLaunch, RemoteTransport};
use crate::mcp::server::{McpError, McpServer};
use crate::policy::servers::{self};

impl App {
    /// Where a server's program is looked for: the login shell's PATH, then the app's own
    /// (asked of the shell once).
    pub async fn server_search_path(&self) -> std::ffi::OsString {
        self.search_path
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
            .clone()
    }

    /// (Re)starts one server: whatever runs under that name is stopped first,
    /// and it starts only if enabled and approved exactly as it is now.
    ///
    /// # Errors
    /// As [`App::mcp_prepare`].
    pub async fn mcp_restart(&self, name: &str) -> Result<(), CoreError> {
        let prepared = self.mcp_prepare(name).await;
        let key = match &prepared {
            Ok((key, _)) => key.clone(),
            Err(_) => name.trim().to_owned(),
        };
        self.host.stop(&key).await;
        let (key, launch) = prepared?;
        self.host.spawn(&key, launch).await;
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
    /// server's name as configured. The caller restarts it. `refused_with` is the challenge of
    /// a call the running server refused for more scope, when there was one.
    ///
    /// # Errors
    /// Not found, not approved, not a streamable HTTP server; the sign-in failed.
    pub async fn mcp_sign_in(
        &self,
        name: &str,
        authorizer: &dyn Authorizer,
        refused_with: Option<String>,
    ) -> Result<String, CoreError> {
        let (key, remote, auth) = self.mcp_remote_auth(name).await?;
        // A call refused while the server ran (a step-up) said what it wants; otherwise the
        // server is asked now.
        let challenge = match refused_with {
            Some(challenge) => Some(challenge),
            None => crate::mcp::remote::challenge(&key, &remote).await?,
        };
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

    pub(super) async fn mcp_remote_auth(
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

    /// Everything needed to start or reach a server, only if it is enabled and approved exactly
    /// as it is now.
    ///
    /// # Errors
    /// [`CoreError::NeedsApproval`] with the full command line; not found; disabled; not among
    /// the servers the organisation's policy allows; a secret or the command that cannot be
    /// found.
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
        // A server the organisation does not allow never starts, whenever it was added.
        self.check_server_allowed(key)?;
        if !servers::approved(self.approved_fingerprint(key).await?.as_deref(), &spec) {
            return Err(CoreError::NeedsApproval {
                server: key.clone(),
                command_line: spec.launch.display(),
            });
        }
        let secrets = std::sync::Arc::clone(self.keychain.store());
        // A turn lending its project's folders to the server now: it starts with them.
        let roots = self.lent_roots(key).unwrap_or_else(|| spec.roots.clone());
        if !matches!(spec.launch, Launch::Stdio { .. }) {
            let launch = off_runtime(move || remote_launch(&spec, &secrets)).await??;
            return Ok((key.clone(), ServerLaunch::Remote(launch).with_roots(roots)));
        }
        let search = self.server_search_path().await;
        let home = dirs::home_dir().unwrap_or_else(std::env::temp_dir);
        let log_dir = self.paths.log_dir.clone();
        let private_dir = self.paths.data_dir.join("sandbox").join(
            stderr_log_path(Path::new(""), key)
                .file_stem()
                .unwrap_or_default(),
        );
        let launch = off_runtime(move || {
            let mut launch = stdio_launch(
                &spec,
                &*secrets,
                &search,
                std::env::vars_os(),
                &home,
                &log_dir,
            )?;
            sandboxed(&mut launch, &spec, &home, private_dir)?;
            Ok::<_, crate::mcp::server::McpError>(launch)
        })
        .await??;
        Ok((key.clone(), ServerLaunch::Stdio(launch).with_roots(roots)))
    }

    /// Starts or connects to a server (see [`App::mcp_prepare`]) and completes its handshake.
    ///
    /// # Errors
    /// As [`App::mcp_prepare`]; the start failed (with the server's stderr tail).
    pub async fn mcp_start(&self, name: &str) -> Result<McpServer, CoreError> {
        let (key, launch) = self.mcp_prepare(name).await?;
        Ok(launch.connect(&key, |_| {}).await?)
    }

    /// Hands every enabled, approved server (local or remote) to the supervisor, which starts them all
    /// in the background. Returns the servers left out, with why (needs approval, invalid, a
    /// secret that cannot be read).
    ///
    /// # Errors
    /// mcp.json cannot be read.
    pub async fn mcp_start_all(&self) -> Result<Vec<(String, String)>, CoreError> {
        self.mcp_start_where(|_| true).await
    }

    /// As [`App::mcp_start_all`], for the enabled servers whose name `wanted` accepts.
    ///
    /// # Errors
    /// mcp.json cannot be read, or the database.
    pub async fn mcp_start_where(
        &self,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<Vec<(String, String)>, CoreError> {
        let mut left_out = Vec::new();
        for view in self.mcp_servers().await? {
            if view.disabled || !wanted(&view.name) {
                continue;
            }
            match self.mcp_prepare(&view.name).await {
                Ok((name, launch)) => self.host.spawn(&name, launch).await,
                Err(e) => left_out.push((view.name, e.to_string())),
            }
        }
        for (name, why) in &left_out {
            tracing::warn!(server = %name, %why, "MCP server not started");
        }
        Ok(left_out)
    }

    /// The tools a running server offers now, all pages.
    ///
    /// # Errors
    /// [`CoreError::Conflict`] when it is not running; the server failed.
    pub async fn mcp_running_tools(&self, name: &str) -> Result<Vec<ListedTool>, CoreError> {
        let server = self.running_server(name, "name", Some("see its tools"))?;
        let tools = server.list_tools().await?;
        Ok(tools.iter().map(ListedTool::from_rmcp).collect())
    }

    /// The server `name` as it runs under the supervisor, or a conflict on `field` saying it
    /// is not running (and, with `to`, what starting it would let the person do).
    pub(in crate::app) fn running_server(
        &self,
        name: &str,
        field: &'static str,
        to: Option<&str>,
    ) -> Result<std::sync::Arc<McpServer>, CoreError> {
        let name = name.trim();
        self.host.server(name).ok_or_else(|| CoreError::Conflict {
            field,
            message: match to {
                Some(to) => format!("“{name}” is not running; start it to {to}."),
                None => format!("“{name}” is not running."),
            },
        })
    }
}

/// Gives `launch` the sandbox its entry asks for: the plan of this start, its own folder as its
/// working folder when mcp.json gives none. Where the system cannot sandbox it, it starts only
/// if the entry allows it unsandboxed (logged).
///
/// # Errors
/// The sandbox is on, this system cannot enforce it, and the entry does not allow it to run
/// without.
fn sandboxed(
    launch: &mut crate::mcp::stdio::StdioLaunch,
    spec: &crate::mcp::config::ServerSpec,
    home: &Path,
    private_dir: PathBuf,
) -> Result<(), crate::mcp::server::McpError> {
    let Some(entry) = spec.sandbox.as_ref().filter(|s| s.enabled) else {
        return Ok(());
    };
    if let Err(why) = crate::sandbox::available() {
        if entry.allow_unsandboxed {
            tracing::warn!(server = %spec.name, %why, "a server set to run in a sandbox runs unsandboxed");
            return Ok(());
        }
        return Err(crate::mcp::server::McpError::Spawn {
            server: spec.name.clone(),
            detail: format!(
                "it is set to run in a sandbox, and {why}; turn its sandbox off, or allow it to \
                 run unsandboxed (`switchboard mcp sandbox {} on --allow-unsandboxed`)",
                spec.name
            ),
        });
    }
    let configured_cwd = match &spec.launch {
        crate::mcp::config::Launch::Stdio { cwd, .. } => cwd.is_some(),
        _ => false,
    };
    let plan = crate::sandbox::plan(
        entry,
        &crate::sandbox::PlanInputs {
            home,
            roots: &spec.roots,
            program: &launch.program,
            args: &launch.args,
            cwd: launch.cwd.as_deref().filter(|_| configured_cwd),
            private_dir,
        },
    );
    if !configured_cwd {
        launch.cwd = Some(plan.private_dir.clone());
    }
    launch.sandbox = Some(plan);
    Ok(())
}
