//! The app's MCP servers: starting them, the list pushed to the window as it changes, the
//! flows that ask the person (approving a server as shown, accepting a changed tool, letting a
//! tool run without asking in every conversation) for the window and the command line alike,
//! adding and editing what the person typed, and pinning each server's tools as it lists them.
//!
//! By idea: [`views`] is the list as the Servers page shows it, [`entries`] changes mcp.json,
//! [`approval`] approves a server as shown, [`running`] starts and stops servers (only as
//! approved), [`tools`] reviews and pins their tools; this file holds the flows that ask.

mod approval;
mod entries;
mod running;
mod tools;
mod views;

pub use entries::ImportSource;
pub(super) use views::pid_file_of;
use views::{find_server, not_oauth, off_runtime};
pub use views::{
    CommandParts, McpServerStatus, McpServerView, ServerSandbox, ToolReview, Transport,
};

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::App;
use crate::error::CoreError;
use crate::mcp::catalogue::ListedTool;
use crate::mcp::config::ServerEntry;
use crate::mcp::features::ServerOffers;
use crate::policy::confirm::{Allowance, Confirm, StandingTool, ToolChange};
use crate::policy::pins::ToolStatus;

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

impl App {
    /// Pins each server's new tools as its list arrives (at start, and after every
    /// `tools/list_changed`): the first sight of a tool is what a later change is held against.
    /// Reading tools (for a turn, a panel, a page) never writes a pin. Ends when the app quits.
    pub(super) fn pin_tools_as_listed(self: &Arc<Self>) {
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
                    match app.mcp_pin_new_tools(&server, &tools).await {
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

    /// Sends every configured server with its state now, and again after every change (a
    /// start, a crash, a restart, a new tool list, a stop, or an approval, switch or removal
    /// made through the app), until `send` says the listener is gone or the app quits. Changes
    /// that come together (ten servers starting) are sent as one list. A later call replaces
    /// this watcher: there is one window.
    pub fn watch_servers(
        self: &Arc<Self>,
        send: impl Fn(Vec<McpServerStatus>) -> bool + Send + 'static,
    ) {
        let stop = self.replace_watcher(&self.server_watcher);
        let (mut hosts, mut configs) = (self.host.watch(), self.config_changes.subscribe());
        let app = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                hosts.borrow_and_update();
                configs.borrow_and_update();
                match app.mcp_status().await {
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

    pub(super) fn servers_changed(&self) {
        self.config_changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Hands every enabled, approved server to the supervisor, which starts them in the
    /// background.
    pub async fn start_servers(&self) {
        if let Err(e) = self.mcp_start_all().await {
            tracing::warn!(error = %e, "MCP servers were not started");
        }
    }

    /// Waits until no server is still starting (each has started or failed), `within` at most;
    /// woken by the supervisor at each change, not by a timer.
    pub async fn servers_started(&self, within: std::time::Duration) {
        let mut changes = self.host.watch();
        let all_started = async {
            while self
                .host
                .states()
                .values()
                .any(|s| matches!(s, crate::mcp::host::ServerState::Starting))
            {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(within, all_started).await;
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
        let request = self.mcp_approval_request(name)?;
        if !confirm.approve_server(&request).await {
            tracing::info!(server = %request.server, "MCP server not approved");
            return Ok(false);
        }
        self.mcp_approve_shown(&request).await?;
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
        if let Err(e) = self.mcp_restart(name).await {
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
        let review = self.mcp_review_tools(server, tools).await?;
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
        self.mcp_accept_tool(server, tool, tools).await?;
        Ok(ToolAcceptance::Accepted)
    }

    /// Lets `server`'s tool `tool` run without asking in every conversation, as the person
    /// asks from Settings or the command line. The tool must be one of `tools` (the server's
    /// list now) and offered (not held back); the standing approval is first put to `confirm`
    /// (outside the webview), naming it.
    ///
    /// # Errors
    /// [`CoreError::NotFound`] when the server does not offer that tool;
    /// [`CoreError::NotConfirmed`] when the person did not confirm; the database.
    pub async fn allow_tool_always(
        &self,
        server: &str,
        tool: &str,
        tools: &[ListedTool],
        confirm: &dyn Confirm,
    ) -> Result<(), CoreError> {
        let server = server.trim();
        let offered = self
            .mcp_review_tools(server, tools)
            .await?
            .into_iter()
            .any(|t| t.tool == tool && t.offered);
        if !offered {
            return Err(CoreError::NotFound {
                what: format!("a tool “{tool}” that “{server}” offers now"),
            });
        }
        let allowance = Allowance::StandingApproval {
            conversation: String::new(),
            tools: vec![StandingTool {
                server: server.to_owned(),
                tool: tool.to_owned(),
                everywhere: true,
            }],
        };
        if !confirm.allow(&allowance).await {
            return Err(CoreError::NotConfirmed {
                what: "that this tool may run without asking".into(),
            });
        }
        Ok(self
            .store()?
            .add_tool_approval(server.to_owned(), tool.to_owned(), None)
            .await?)
    }

    /// [`App::allow_tool_always`] for a running server's tool, as it lists its tools now.
    ///
    /// # Errors
    /// As [`App::running_tools`] and [`App::allow_tool_always`].
    pub async fn allow_running_tool_always(
        &self,
        server: &str,
        tool: &str,
        confirm: &dyn Confirm,
    ) -> Result<(), CoreError> {
        let tools = self.running_tools(server).await?;
        self.allow_tool_always(server, tool, &tools, confirm).await
    }

    /// The tools a running server offers now (all pages).
    ///
    /// # Errors
    /// Not running; the server failed.
    pub async fn running_tools(&self, name: &str) -> Result<Vec<ListedTool>, CoreError> {
        self.mcp_running_tools(name).await
    }

    /// What a running server offers beside its tools: resources, templates, prompts.
    ///
    /// # Errors
    /// Not running; the server failed.
    pub async fn server_offers(&self, name: &str) -> Result<ServerOffers, CoreError> {
        let server = self.running_server(name, "name", Some("see what it offers"))?;
        Ok(server.offers().await?)
    }

    /// Stops a server and removes it with its keychain values and approval.
    ///
    /// # Errors
    /// As [`App::mcp_remove`].
    pub async fn remove_server(&self, name: &str) -> Result<(), CoreError> {
        self.host.stop(name.trim()).await;
        self.mcp_remove(name).await?;
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
        let view = self.mcp_set_disabled(name, !enabled).await?;
        self.servers_changed();
        if !enabled {
            self.host.stop(&view.name).await;
        } else if view.approved {
            self.mcp_restart(&view.name).await?;
        }
        Ok(view)
    }

    /// Gives a server `folders` as its roots (all of them: an empty list takes them away),
    /// kept in mcp.json; a running server is told at once (`notifications/roots/list_changed`)
    /// without a restart.
    ///
    /// # Errors
    /// A folder that is not an absolute path to a folder; not found; the file.
    pub async fn set_server_roots(
        &self,
        name: &str,
        folders: &[std::path::PathBuf],
    ) -> Result<McpServerView, CoreError> {
        let (key, folders) = self.mcp_set_roots(name, folders).await?;
        // A turn lending it its project's folders keeps them until it ends.
        if self.own_roots_changed(&key, folders) {
            self.tell_roots_changed(vec![key.clone()]).await;
        }
        self.servers_changed();
        self.mcp_server_view(key).await
    }

    /// Restarts a server (a failed one gets a fresh count of tries).
    ///
    /// # Errors
    /// As [`App::mcp_restart`].
    pub async fn restart_server(&self, name: &str) -> Result<(), CoreError> {
        self.mcp_restart(name).await
    }

    /// Signs in to the remote server `name` through `authorizer` (the adapter's browser: the
    /// window's asks first in a native dialog, the terminal's says where it goes), with what
    /// the server last refused a call for when it did; the tokens go to the keychain. The
    /// window's app starts the server again with them. Returns its name as configured.
    ///
    /// # Errors
    /// As [`App::mcp_sign_in`]; the server does not start again.
    pub async fn sign_in_server(
        &self,
        name: &str,
        authorizer: &dyn crate::mcp::oauth::Authorizer,
    ) -> Result<String, CoreError> {
        let refused_with = self.host.sign_in_challenge(name.trim());
        let server = self.mcp_sign_in(name, authorizer, refused_with).await?;
        self.restart_if_supervised(&server).await?;
        Ok(server)
    }

    /// Forgets the remote server `name`'s tokens; the window's app starts it again without
    /// them. Returns its name as configured.
    ///
    /// # Errors
    /// As [`App::mcp_sign_out`]; the server does not start again.
    pub async fn sign_out_server(&self, name: &str) -> Result<String, CoreError> {
        let server = self.mcp_sign_out(name).await?;
        self.restart_if_supervised(&server).await?;
        Ok(server)
    }

    /// Starts `server` again as it is now when this app runs the home's servers (the
    /// window's: refused, and said so, when it is off or not approved); a command line's app
    /// runs none between verbs and starts nothing.
    async fn restart_if_supervised(&self, server: &str) -> Result<(), CoreError> {
        if self.runs_the_homes_servers() {
            self.restart_server(server).await?;
        }
        Ok(())
    }

    /// Whether this app keeps the home's own record of server processes: the window's (only
    /// the process holding the home's instance lock may), not a command line's.
    pub(super) fn runs_the_homes_servers(&self) -> bool {
        self.pid_file == self.mcp_pid_file()
    }

    /// Adds a server from what the person typed in the window (a command line or an address)
    /// without approving it, then asks `confirm` about it as it now is: nothing the webview
    /// sends starts a program by itself. Returns the server as it now is, approved or not.
    ///
    /// # Errors
    /// An invalid entry; a taken name; as [`App::approve_server`].
    pub async fn add_typed_server(
        &self,
        name: &str,
        command_line: Option<&str>,
        url: Option<&str>,
        confirm: &dyn Confirm,
    ) -> Result<McpServerView, CoreError> {
        let entry = ServerEntry::from_typed(command_line, url)?;
        let view = self.mcp_add_unapproved(name, entry).await?;
        self.ask_about_changed(view.name, confirm).await
    }

    /// Changes how a server runs to what the person typed, stops it, and asks `confirm` about
    /// the new one (an edited server needs approval again).
    ///
    /// # Errors
    /// An invalid entry; not found; as [`App::approve_server`].
    pub async fn edit_typed_server(
        &self,
        name: &str,
        command_line: Option<&str>,
        url: Option<&str>,
        confirm: &dyn Confirm,
    ) -> Result<McpServerView, CoreError> {
        let entry = ServerEntry::from_typed(command_line, url)?;
        let view = self.mcp_edit(name, entry).await?;
        self.host.stop(&view.name).await;
        self.ask_about_changed(view.name, confirm).await
    }

    /// After a server was added or changed: the list is sent again, the person is asked about
    /// it as it now is, and it is returned as it then is (approved or not).
    pub(super) async fn ask_about_changed(
        &self,
        name: String,
        confirm: &dyn Confirm,
    ) -> Result<McpServerView, CoreError> {
        self.servers_changed();
        self.approve_and_start(&name, confirm).await?;
        self.mcp_server_view(name).await
    }

    /// A running server's tools, each against its pin.
    ///
    /// # Errors
    /// Not running; the server failed; the database.
    pub async fn server_tools(&self, name: &str) -> Result<Vec<ToolReview>, CoreError> {
        let tools = self.running_tools(name).await?;
        self.mcp_review_tools(name.trim(), &tools).await
    }

    /// [`App::accept_tool`] for a running server's tool, as it lists its tools now.
    ///
    /// # Errors
    /// As [`App::running_tools`] and [`App::accept_tool`].
    pub async fn accept_running_tool(
        &self,
        name: &str,
        tool: &str,
        confirm: &dyn Confirm,
    ) -> Result<ToolAcceptance, CoreError> {
        let tools = self.running_tools(name).await?;
        self.accept_tool(name, tool, &tools, confirm).await
    }
}

impl App {
    /// Sets the sandbox of the local server `name` in mcp.json. A change that gives it no
    /// more than it had (the sandbox turned on, a folder or the network taken away) keeps its
    /// approval, and a running server starts again in it; any other needs the person's
    /// approval again before it next starts, the sandbox shown in plain words.
    ///
    /// # Errors
    /// Not found; a remote server; a folder that is not absolute; the file or the database.
    pub async fn set_server_sandbox(
        &self,
        name: &str,
        sandbox: crate::sandbox::SandboxEntry,
    ) -> Result<McpServerView, CoreError> {
        let home = dirs::home_dir().unwrap_or_default();
        for folder in sandbox.allow_read.iter().chain(&sandbox.allow_write) {
            if crate::sandbox::expand(folder, &home).is_none() {
                return Err(crate::error::InvalidInput::new(
                    "sandbox",
                    format!("“{folder}” is not an absolute path (or one that starts with ~/)."),
                )
                .into());
            }
        }
        let mut file = self.load_mcp()?;
        let key = find_server(&file, name)?.0.clone();
        let entry = file.servers.get_mut(&key).expect("found above");
        if entry.url.is_some() && entry.command.is_none() {
            return Err(crate::error::InvalidInput::new(
                "sandbox",
                format!(
                    "“{key}” is reached over HTTP: only a server that runs here has a sandbox."
                ),
            )
            .into());
        }
        let was_approved =
            self.approved_fingerprint(&key).await?.as_deref() == Some(entry.fingerprint().as_str());
        let narrows = crate::sandbox::narrows(entry.sandbox.as_ref(), &sandbox);
        entry.sandbox = Some(sandbox);
        let fingerprint = entry.fingerprint();
        file.save(&self.mcp_file())?;
        if was_approved && narrows {
            self.store()?
                .approve_mcp_server(key.clone(), fingerprint)
                .await?;
        }
        tracing::info!(server = %key, kept_approval = was_approved && narrows, "MCP server's sandbox changed");
        self.servers_changed();
        // Narrowed, it starts again in its new sandbox; widened, it runs on in the narrower
        // one it started in until the person approves the new one.
        if was_approved && narrows && self.host.server(&key).is_some() {
            self.restart_if_supervised(&key).await?;
        }
        self.mcp_server_view(key).await
    }

    /// Turns the sandbox of `name` on or off, with `network` (`None`: as it was, or for a
    /// sandbox newly on, [`crate::sandbox::default_reach_here`] of its program), its folders
    /// kept. See [`App::set_server_sandbox`].
    ///
    /// # Errors
    /// As [`App::set_server_sandbox`].
    pub async fn switch_server_sandbox(
        &self,
        name: &str,
        enabled: bool,
        network: Option<crate::sandbox::Reach>,
    ) -> Result<McpServerView, CoreError> {
        let (now, _) = self.server_sandbox(name)?;
        let newly_on = enabled && now.as_ref().is_none_or(|n| !n.enabled);
        let mut entry = now.unwrap_or_default();
        entry.enabled = enabled;
        match network {
            Some(reach) => entry.set_reach(
                reach
                    .checked()
                    .map_err(|e| crate::error::InvalidInput::new("network", e))?,
            ),
            None if newly_on => {
                let file = self.load_mcp()?;
                let (_, found) = find_server(&file, name)?;
                let program = found.command.clone().unwrap_or_default();
                entry.set_reach(crate::sandbox::default_reach_here(std::path::Path::new(
                    &program,
                )));
            }
            None => {}
        }
        self.set_server_sandbox(name, entry).await
    }

    /// The sandbox of `name` as mcp.json has it (`None`: none written), and in words.
    ///
    /// # Errors
    /// Not found; mcp.json cannot be read.
    pub fn server_sandbox(
        &self,
        name: &str,
    ) -> Result<(Option<crate::sandbox::SandboxEntry>, String), CoreError> {
        let file = self.load_mcp()?;
        let (_, entry) = find_server(&file, name)?;
        let home = dirs::home_dir().unwrap_or_default();
        let roots = entry.root_folders();
        let about = crate::sandbox::About {
            roots: &roots,
            home: &home,
            program: entry.command.as_deref().unwrap_or_default(),
            args: &entry.args,
            cwd: entry.cwd.as_deref().map(std::path::Path::new),
        };
        let said = crate::sandbox::said(entry.sandbox.as_ref(), &about);
        Ok((entry.sandbox.clone(), said))
    }
}

impl App {
    /// Gives the running server `name` what its sandbox refused it (`refused`, one of
    /// [`crate::mcp::server::McpServer::sandbox_refusals`]: the window cannot name anything
    /// else): a path to read or write, or the network; then asks the person in the native
    /// approval dialog, which shows the widened sandbox, and starts it again when they approve.
    /// Returns whether it was approved.
    ///
    /// # Errors
    /// Not a refusal the server met; as [`App::set_server_sandbox`] and
    /// [`App::approve_and_start`].
    pub async fn widen_server_sandbox(
        &self,
        name: &str,
        refused: &str,
        confirm: &dyn crate::policy::confirm::Confirm,
    ) -> Result<bool, CoreError> {
        let met = self
            .host
            .server(name.trim())
            .is_some_and(|s| s.sandbox_refusals().iter().any(|r| r == refused));
        if !met {
            return Err(crate::error::InvalidInput::new(
                "refused",
                "That is not something this server's sandbox refused it.",
            )
            .into());
        }
        let (now, _) = self.server_sandbox(name)?;
        let home = dirs::home_dir().unwrap_or_default();
        let entry = crate::sandbox::widened(now.unwrap_or_default(), refused, &home)
            .map_err(|e| crate::error::InvalidInput::new("refused", e))?;
        self.set_server_sandbox(name, entry).await?;
        self.approve_and_start(name, confirm).await
    }
}
