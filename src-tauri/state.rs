//! What the shell keeps for the app's lifetime: the core (opened on first use, on the async
//! runtime, so the window's first paint never waits for the database) and the settings store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use switchboard_core::agent::PendingApprovals;
use tokio_util::sync::CancellationToken;

use switchboard_core::mcp::elicitation::ElicitationBroker;
use switchboard_core::mcp::host::McpHost;
use switchboard_core::secrets::SecretStore;
use switchboard_core::{AppPaths, Core};
use tauri::Wry;
use tauri_plugin_store::Store;
use tokio::sync::OnceCell;

use crate::commands::error::CommandError;

pub struct AppState {
    paths: AppPaths,
    secrets: Arc<dyn SecretStore>,
    core: OnceCell<Core>,
    /// The running MCP servers; set once they have been handed over at start-up.
    pub mcp: OnceCell<McpHost>,
    pub settings: Arc<Store<Wry>>,
    /// Runs under way, by id.
    pub runs: Runs,
    /// Approval requests of every run, answered by the window.
    pub approvals: PendingApprovals,
    /// Forms MCP servers ask the person to fill in, answered by the window.
    pub forms: ElicitationBroker,
}

/// The runs under way: their cancel tokens, and one run per conversation at a time.
#[derive(Default)]
pub struct Runs {
    by_id: Mutex<HashMap<String, (String, CancellationToken)>>,
}

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, CancellationToken)>> {
        self.by_id.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a run of `conversation`; refused while another run of it is under way.
    ///
    /// # Errors
    /// A conflict naming the run under way.
    pub fn start(
        &self,
        run_id: &str,
        conversation: &str,
    ) -> Result<CancellationToken, CommandError> {
        let mut runs = self.lock();
        if runs.values().any(|(c, _)| c == conversation) {
            return Err(CommandError {
                kind: "conflict",
                message: "This conversation is already answering; stop it or wait.".into(),
                field: None,
            });
        }
        let token = CancellationToken::new();
        runs.insert(run_id.to_owned(), (conversation.to_owned(), token.clone()));
        Ok(token)
    }

    pub fn stop(&self, run_id: &str) {
        if let Some((_, token)) = self.lock().get(run_id) {
            token.cancel();
        }
    }

    pub fn finish(&self, run_id: &str) {
        self.lock().remove(run_id);
    }

    /// Stops every run (the app is quitting).
    pub fn stop_all(&self) {
        for (_, token) in self.lock().values() {
            token.cancel();
        }
    }
}

impl AppState {
    pub fn new(paths: AppPaths, secrets: Arc<dyn SecretStore>, settings: Arc<Store<Wry>>) -> Self {
        Self {
            paths,
            secrets,
            core: OnceCell::new(),
            mcp: OnceCell::new(),
            settings,
            runs: Runs::default(),
            approvals: PendingApprovals::default(),
            forms: ElicitationBroker::default(),
        }
    }

    /// The core, opening the database the first time it is asked for.
    pub async fn core(&self) -> &Core {
        self.core
            .get_or_init(|| async {
                let core = Core::open(self.paths.clone(), Arc::clone(&self.secrets)).await;
                // This process holds the home's instance lock, so it alone may do this.
                core.recover_after_crash().await;
                core
            })
            .await
    }

    /// The supervisor of the MCP servers, made (stopping leftovers of a killed run) the first
    /// time it is asked for.
    pub async fn mcp_host(&self) -> &McpHost {
        let core = self.core().await;
        self.mcp
            .get_or_init(|| async {
                McpHost::new(core.mcp_pid_file())
                    .await
                    .with_elicitor(Arc::new(self.forms.clone()))
            })
            .await
    }

    /// Starts every enabled, approved MCP server in the background (run on its own task at
    /// start-up: the window never waits for servers).
    pub async fn start_mcp_servers(&self) {
        let core = self.core().await;
        let host = self.mcp_host().await;
        if let Err(e) = core.mcp_start_all(host).await {
            tracing::warn!(error = %e, "MCP servers were not started");
        }
    }

    /// Stops every MCP server, waiting at most `deadline`.
    pub async fn stop_mcp_servers(&self, deadline: std::time::Duration) {
        self.runs.stop_all();
        if let Some(host) = self.mcp.get() {
            host.shutdown(deadline).await;
        }
    }
}
