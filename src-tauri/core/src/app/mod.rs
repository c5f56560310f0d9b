//! [`App`], the composition root: the one object the window and the command line hold. Built
//! from paths, a secret store, a settings source, who answers tool approvals and whether
//! servers' forms have someone to show them, it owns the [`Core`] (database, keychain, config
//! files), the MCP supervisor, the runs under way (one per conversation, awaited at shutdown),
//! pending approvals and forms; and it holds the flows that touch more than one of them, so each
//! exists once (approving a server as shown, accepting a changed tool, removing a provider that
//! Settings names as the default).
//!
//! It must not know about windows, IPC or the terminal: adapters pass in an [`EventSink`] per
//! run and a [`Confirm`] per question.

mod runs;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

pub use runs::{Feed, RunHandle, Runs};

use crate::agent::{self, ApprovalAnswer, Approver, PendingApprovals, RunServices};
use crate::engine::{Core, McpServerStatus, McpServerView, TurnRequest};
use crate::error::CoreError;
use crate::events::{EventSink, StopReason};
use crate::mcp::catalogue::ListedTool;
use crate::mcp::elicitation::ElicitationBroker;
use crate::mcp::host::McpHost;
use crate::paths::AppPaths;
use crate::policy::confirm::{Confirm, ToolChange};
use crate::policy::pins::ToolStatus;
use crate::secrets::SecretStore;
use crate::settings::{Settings, SettingsError, SettingsSource};

/// How long a server watcher waits after a change for the ones that come with it.
const SETTLE: Duration = Duration::from_millis(20);

/// What became of a changed tool the person was asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolAcceptance {
    /// It had not changed: nothing to accept.
    Unchanged,
    /// Accepted: pinned as it is now and offered again.
    Accepted,
    /// Declined: still held back.
    KeptBack,
}

/// What an [`App`] is built from.
pub struct AppConfig {
    pub paths: AppPaths,
    pub secrets: Arc<dyn SecretStore>,
    pub settings: Arc<dyn SettingsSource>,
    /// Someone can be shown servers' forms (the window): elicitation is declared to servers
    /// and forms go through [`App::forms`]. Without, it is not declared.
    pub shows_forms: bool,
    /// Where the supervisor records its servers' process groups; `None`: the app's own file
    /// (only the process holding the home's instance lock may use that one).
    pub pid_file: Option<PathBuf>,
}

impl AppConfig {
    /// The command line's app: no forms, its own record of process groups.
    pub fn headless(
        paths: AppPaths,
        secrets: Arc<dyn SecretStore>,
        settings: Arc<dyn SettingsSource>,
    ) -> AppConfig {
        let pid_file = paths
            .data_dir
            .join(format!("mcp-processes-cli-{}.json", std::process::id()));
        AppConfig {
            paths,
            secrets,
            settings,
            shows_forms: false,
            pid_file: Some(pid_file),
        }
    }
}

pub struct App {
    core: Core,
    host: McpHost,
    settings: Arc<dyn SettingsSource>,
    /// Tool-call approvals the window answers ([`App::answer_approval`]).
    approvals: Arc<PendingApprovals>,
    forms: ElicitationBroker,
    runs: Runs,
    pid_file: PathBuf,
    /// Bumped when the app changes a server's configuration (approved, switched, removed), so
    /// the server watcher sends the list again even when no process changed.
    config_changes: tokio::sync::watch::Sender<u64>,
    /// The window's server watcher, replaced when a (reloaded) window asks again.
    server_watcher: std::sync::Mutex<CancellationToken>,
    /// Cancelled at shutdown: watchers end.
    quitting: CancellationToken,
    /// Settings are read, changed and written by one caller at a time (a save from the window
    /// and a removed provider's cleared default must not undo each other).
    settings_writes: tokio::sync::Mutex<()>,
}

impl App {
    /// Opens the database (see [`Core::open`]) and builds the app around it.
    pub async fn open(config: AppConfig) -> Arc<App> {
        let core = Core::open(config.paths.clone(), Arc::clone(&config.secrets)).await;
        App::with_core(core, config).await
    }

    /// Builds the app around a core already open (tests give one over an in-memory store).
    /// Servers recorded in the pid file by a run that was killed are stopped first.
    pub async fn with_core(core: Core, config: AppConfig) -> Arc<App> {
        let pid_file = config.pid_file.unwrap_or_else(|| core.mcp_pid_file());
        let forms = ElicitationBroker::default();
        let mut host = McpHost::new(pid_file.clone()).await;
        if config.shows_forms {
            host = host.with_elicitor(Arc::new(forms.clone()));
        }
        let app = Arc::new(App {
            core,
            host,
            settings: config.settings,
            approvals: Arc::default(),
            forms,
            runs: Runs::default(),
            pid_file,
            config_changes: tokio::sync::watch::Sender::new(0),
            server_watcher: std::sync::Mutex::new(CancellationToken::new()),
            quitting: CancellationToken::new(),
            settings_writes: tokio::sync::Mutex::new(()),
        });
        app.pin_tools_as_listed();
        app
    }

    /// Pins each server's new tools as its list arrives (at start, and after every
    /// `tools/list_changed`): the first sight of a tool is what a later change is held against.
    /// Reading tools (for a turn, a panel, a page) never writes a pin. Ends when the app quits.
    fn pin_tools_as_listed(self: &Arc<Self>) {
        let mut changes = self.host.watch();
        let app = Arc::downgrade(self);
        let quitting = self.quitting.clone();
        tokio::spawn(async move {
            // The list each server had when it was last pinned from, by identity.
            let mut seen: HashMap<String, Arc<Vec<ListedTool>>> = HashMap::new();
            loop {
                changes.borrow_and_update();
                let Some(app) = app.upgrade() else { return };
                let lists = app.host.running_tools();
                seen.retain(|name, _| lists.iter().any(|(n, _)| n == name));
                for (server, tools) in lists {
                    if seen
                        .get(&server)
                        .is_some_and(|old| Arc::ptr_eq(old, &tools))
                    {
                        continue;
                    }
                    match app.core.mcp_pin_new_tools(&server, &tools).await {
                        Ok(_) => {
                            seen.insert(server, tools);
                        }
                        Err(e) => tracing::warn!(server, error = %e, "cannot pin new MCP tools"),
                    }
                }
                drop(app);
                tokio::select! {
                    () = quitting.cancelled() => return,
                    changed = changes.changed() => if changed.is_err() { return },
                }
            }
        });
    }

    pub fn core(&self) -> &Core {
        &self.core
    }

    pub fn host(&self) -> &McpHost {
        &self.host
    }

    /// Servers' forms waiting for the person (the window listens and answers).
    pub fn forms(&self) -> &ElicitationBroker {
        &self.forms
    }

    // ---- settings ---------------------------------------------------------------------

    pub fn settings(&self) -> Settings {
        self.settings.load()
    }

    /// Checks and saves the settings; returns them as saved. A default provider that is no
    /// longer there (removed while the window still showed it) is cleared, as removing it
    /// clears it: a save cannot bring it back.
    ///
    /// # Errors
    /// A value out of range (naming the field), or they cannot be written.
    pub async fn update_settings(&self, settings: Settings) -> Result<Settings, CoreError> {
        let mut settings = settings.validated().map_err(SettingsError::from)?;
        let _one_at_a_time = self.settings_writes.lock().await;
        if let (Some(named), Ok(providers)) = (
            settings.default_provider.as_deref(),
            self.core.list_providers().await,
        ) {
            if !providers
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(named.trim()))
            {
                settings.default_provider = None;
                settings.default_model = None;
            }
        }
        self.settings.save(&settings)?;
        tracing::info!("settings saved");
        Ok(settings)
    }

    /// Removes a provider and its key; a default model in Settings that named it is cleared,
    /// so the next new conversation asks for a model instead of failing.
    ///
    /// # Errors
    /// As [`Core::remove_provider`]; the settings cannot be written.
    pub async fn remove_provider(&self, name: &str) -> Result<(), CoreError> {
        let _one_at_a_time = self.settings_writes.lock().await;
        self.core.remove_provider(name).await?;
        let mut settings = self.settings.load();
        let named_it = settings
            .default_provider
            .as_deref()
            .is_some_and(|p| p.trim().eq_ignore_ascii_case(name.trim()));
        if named_it {
            settings.default_provider = None;
            settings.default_model = None;
            self.settings.save(&settings)?;
            tracing::info!(
                provider = name.trim(),
                "the default provider was removed; default cleared"
            );
        }
        Ok(())
    }

    // ---- runs -------------------------------------------------------------------------

    /// Prepares a turn (checking everything before anything is saved) and starts it on its own
    /// task; every event goes to `sink`, the last being `run_finished`. Its approvals are the
    /// window's to answer ([`App::answer_approval`]).
    ///
    /// # Errors
    /// [`CoreError::RunUnderWay`] while the conversation answers; [`CoreError::Quitting`];
    /// what [`Core::prepare_turn`] refuses.
    pub async fn start_turn(
        self: &Arc<Self>,
        request: TurnRequest,
        sink: Arc<dyn EventSink>,
    ) -> Result<RunHandle, CoreError> {
        let approver = Arc::clone(&self.approvals) as Arc<dyn Approver>;
        self.start_turn_answered_by(request, sink, approver).await
    }

    /// [`App::start_turn`] with its approvals answered by `approver` (the terminal, or a fixed
    /// answer).
    ///
    /// # Errors
    /// As [`App::start_turn`].
    pub async fn start_turn_answered_by(
        self: &Arc<Self>,
        request: TurnRequest,
        sink: Arc<dyn EventSink>,
        approver: Arc<dyn Approver>,
    ) -> Result<RunHandle, CoreError> {
        self.runs.check_free(&request.conversation_id)?;
        let setup = self
            .core
            .prepare_turn(&self.host, request, &self.settings.load())
            .await?;
        let (run_id, conversation_id) = (setup.run_id.clone(), setup.conversation_id.clone());
        let app = Arc::clone(self);
        self.runs.start(
            &run_id,
            &conversation_id,
            sink,
            move |cancel, feed| async move {
                let Ok(store) = app.core.store() else {
                    return StopReason::Error;
                };
                let services = RunServices {
                    store,
                    tools: &app.host,
                    approver: approver.as_ref(),
                    sink: feed.as_ref(),
                };
                agent::run(setup, services, cancel).await
            },
        )
    }

    /// Stops a run (its stream and every running call); a run that ended is left alone.
    pub fn stop_run(&self, run_id: &str) {
        self.runs.stop(run_id);
    }

    /// Deletes a conversation; a run under way there is stopped first and waited for, so
    /// nothing of it is written after the conversation is gone.
    ///
    /// # Errors
    /// Not found; the database.
    pub async fn delete_conversation(&self, id: &str) -> Result<(), CoreError> {
        self.runs.stop_in(id).await;
        self.core.delete_conversation(id).await
    }

    /// Gives `sink` the run under way in `conversation_id`, from its start, then live; the
    /// run's id, or `None` when nothing runs there.
    pub fn attach(&self, conversation_id: &str, sink: Arc<dyn EventSink>) -> Option<String> {
        self.runs.attach(conversation_id, sink)
    }

    /// The window's answer to an approval request. Only the calls it asked about can be
    /// answered: the loop checks.
    ///
    /// # Errors
    /// [`CoreError::NotFound`] when nothing waits for it (the run ended, or it was answered).
    pub fn answer_approval(
        &self,
        request_id: &str,
        answers: Vec<ApprovalAnswer>,
    ) -> Result<(), CoreError> {
        if self.approvals.answer(request_id, answers) {
            Ok(())
        } else {
            Err(CoreError::NotFound {
                what: "that approval: it is no longer waiting (the run ended or was answered)"
                    .into(),
            })
        }
    }

    /// The person's answer to a server's form, checked against the form.
    ///
    /// # Errors
    /// [`CoreError::Invalid`] (field `form`) when the form is no longer open or the values do
    /// not fit it; the form then stays open.
    pub fn answer_form(
        &self,
        id: &str,
        answer: crate::mcp::elicitation::ElicitationAnswer,
    ) -> Result<(), CoreError> {
        self.forms
            .answer(id, answer)
            .map_err(|why| crate::error::InvalidInput::new("form", why).into())
    }

    // ---- MCP servers ------------------------------------------------------------------

    /// Sends every configured server with its state now, and again after every change (a
    /// start, a crash, a restart, a new tool list, a stop, or an approval, switch or removal
    /// made through the app), until `send` says the listener is gone or the app quits. Changes
    /// that come together (ten servers starting) are sent as one list. A later call replaces
    /// this watcher: there is one window.
    pub fn watch_servers(
        self: &Arc<Self>,
        send: impl Fn(Vec<McpServerStatus>) -> bool + Send + 'static,
    ) {
        let stop = self.quitting.child_token();
        let previous = std::mem::replace(
            &mut *self
                .server_watcher
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            stop.clone(),
        );
        previous.cancel();
        let (mut hosts, mut configs) = (self.host.watch(), self.config_changes.subscribe());
        let app = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                hosts.borrow_and_update();
                configs.borrow_and_update();
                match app.core.mcp_status(Some(&app.host)).await {
                    Ok(list) => {
                        if !send(list) {
                            return;
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot list MCP servers for the window"),
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    Ok(()) = hosts.changed() => {}
                    Ok(()) = configs.changed() => {}
                }
                // Let a burst settle into one list.
                tokio::time::sleep(SETTLE).await;
            }
        });
    }

    fn servers_changed(&self) {
        self.config_changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Hands every enabled, approved server to the supervisor, which starts them in the
    /// background.
    pub async fn start_servers(&self) {
        if let Err(e) = self.core.mcp_start_all(&self.host).await {
            tracing::warn!(error = %e, "MCP servers were not started");
        }
    }

    /// Asks `confirm` about `name`'s full command line as it is now, and approves exactly what
    /// was shown: if mcp.json changed in between, nothing is approved. Returns whether it was.
    ///
    /// # Errors
    /// [`CoreError::Conflict`] when the entry changed while it was shown; not found; an
    /// invalid entry; the database.
    pub async fn approve_server(
        &self,
        name: &str,
        confirm: &dyn Confirm,
    ) -> Result<bool, CoreError> {
        let request = self.core.mcp_approval_request(name)?;
        if !confirm.approve_server(&request).await {
            tracing::info!(server = %request.server, "MCP server not approved");
            return Ok(false);
        }
        self.core.mcp_approve_shown(&request).await?;
        self.servers_changed();
        Ok(true)
    }

    /// [`App::approve_server`], then (re)starts it under the supervisor when approved.
    ///
    /// # Errors
    /// As [`App::approve_server`].
    pub async fn approve_and_start(
        &self,
        name: &str,
        confirm: &dyn Confirm,
    ) -> Result<bool, CoreError> {
        if !self.approve_server(name, confirm).await? {
            return Ok(false);
        }
        if let Err(e) = self.core.mcp_restart(&self.host, name).await {
            // Approved but not startable (disabled, a missing secret): the list says why.
            tracing::warn!(server = name.trim(), error = %e, "approved MCP server not started");
        }
        Ok(true)
    }

    /// Shows `confirm` how the held-back tool `tool` of `server` changed (its `tools` as listed
    /// now) and offers it again if accepted.
    ///
    /// # Errors
    /// No such tool; the database.
    pub async fn accept_tool(
        &self,
        server: &str,
        tool: &str,
        tools: &[ListedTool],
        confirm: &dyn Confirm,
    ) -> Result<ToolAcceptance, CoreError> {
        let server = server.trim();
        let review = self.core.mcp_review_tools(server, tools).await?;
        let Some(found) = review.iter().find(|t| t.tool == tool) else {
            return Err(CoreError::NotFound {
                what: format!("tool “{tool}” of “{server}”"),
            });
        };
        let ToolStatus::Changed { diff } = &found.status else {
            return Ok(ToolAcceptance::Unchanged);
        };
        let change = ToolChange {
            server: server.to_owned(),
            tool: tool.to_owned(),
            diff: diff.clone(),
        };
        if !confirm.accept_tool(&change).await {
            return Ok(ToolAcceptance::KeptBack);
        }
        self.core.mcp_accept_tool(server, tool, tools).await?;
        Ok(ToolAcceptance::Accepted)
    }

    /// The tools a running server offers now (all pages).
    ///
    /// # Errors
    /// Not running; the server failed.
    pub async fn running_tools(&self, name: &str) -> Result<Vec<ListedTool>, CoreError> {
        self.core.mcp_running_tools(&self.host, name).await
    }

    /// Stops a server and removes it with its keychain values and approval.
    ///
    /// # Errors
    /// As [`Core::mcp_remove`].
    pub async fn remove_server(&self, name: &str) -> Result<(), CoreError> {
        self.host.stop(name.trim()).await;
        self.core.mcp_remove(name).await?;
        self.servers_changed();
        Ok(())
    }

    /// Switches a server on (started if approved) or off (stopped).
    ///
    /// # Errors
    /// Not found; the file; a start that cannot be prepared.
    pub async fn set_server_enabled(
        &self,
        name: &str,
        enabled: bool,
    ) -> Result<McpServerView, CoreError> {
        let view = self.core.mcp_set_disabled(name, !enabled).await?;
        self.servers_changed();
        if !enabled {
            self.host.stop(&view.name).await;
        } else if view.approved {
            self.core.mcp_restart(&self.host, &view.name).await?;
        }
        Ok(view)
    }

    /// Restarts a server (a failed one gets a fresh count of tries).
    ///
    /// # Errors
    /// As [`Core::mcp_restart`].
    pub async fn restart_server(&self, name: &str) -> Result<(), CoreError> {
        self.core.mcp_restart(&self.host, name).await
    }

    // ---- the end ----------------------------------------------------------------------

    /// Stops every run (each saves what it had and ends `cancelled`) and waits for them, then
    /// stops every server; all within `deadline`, after which what is left is killed.
    pub async fn shutdown(&self, deadline: Duration) {
        let started = Instant::now();
        self.quitting.cancel();
        self.runs.shutdown(deadline).await;
        let left = deadline
            .saturating_sub(started.elapsed())
            .max(Duration::from_secs(1));
        self.host.shutdown(left).await;
        if self.pid_file != self.core.mcp_pid_file() {
            // A command line's own record, empty now.
            let _ = std::fs::remove_file(&self.pid_file);
        }
    }
}

#[cfg(test)]
mod tests;
