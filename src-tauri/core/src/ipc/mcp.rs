//! MCP server commands for the Servers page: the list, and what a person does to a server
//! (approve in a native dialog, switch on and off, restart, remove, add, read its log), and
//! finding and installing servers from the MCP Registry or from MCP bundles, and servers
//! proposed by `switchboard://` links.
//!
//! Approval is decided in Rust, by a native dialog that shows the full command line (the
//! host's [`Confirm`](crate::policy::confirm::Confirm), through the core's one approval flow):
//! the window can ask for a server to be approved but cannot approve one itself.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::{commands, Cx, Sink};
use crate::app::{
    BundleInstallRequest, ImportSource, InstallRequest, McpServerStatus, McpServerView,
    OfferedBundle, ToolAcceptance, ToolReview,
};
use crate::mcp::config::ImportPreview;
use crate::mcp::elicitation::{ElicitationAnswer, ElicitationRequest};
use crate::mcp::features::ServerOffers;
use crate::mcp::oauth::LoopbackBrowser;
use crate::mcp::proposal::ShownProposal;
use crate::mcp::registry::SearchPage;
use crate::policy::confirm::ask_before_sign_in;
use crate::{App, CoreError};

/// How much of a server's stderr log the page shows.
const LOG_TAIL_BYTES: u64 = 64 * 1024;
/// How many of the registry's servers a page of Browse shows.
const REGISTRY_PAGE: u32 = 20;

async fn current_roots(app: &App, name: &str) -> Result<Vec<PathBuf>, CoreError> {
    Ok(app
        .mcp_servers()
        .await?
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.roots.into_iter().map(PathBuf::from).collect())
        .unwrap_or_default())
}

/// Sends what `news` hears to the window until either ends.
fn forward<T: Serialize + Send + 'static>(
    mut news: tokio::sync::mpsc::UnboundedReceiver<T>,
    window: Sink<T>,
) {
    tokio::spawn(async move {
        while let Some(item) = news.recv().await {
            if !window.send(&item) {
                break;
            }
        }
    });
}

/// Pasted text, or Claude Desktop's file from its usual place (as the host knows it).
fn import_source(cx: &Cx, text: Option<String>) -> ImportSource {
    match text {
        Some(text) => ImportSource::Text(text),
        None => ImportSource::ClaudeDesktop(cx.host.claude_desktop_config()),
    }
}

commands! {
    /// Every configured server with its state (starting, running, restarting, failed, stopped,
    /// or none when it is not run: disabled, needs approval, invalid).
    async fn list_mcp_servers(cx) -> Vec<McpServerStatus> {
        Ok(cx.app.mcp_status().await?)
    }

    /// The window listens for the server list: every configured server with its state arrives
    /// on `on_change` now and again after every change (no polling); a later call replaces the
    /// listener (a reloaded window).
    async fn watch_mcp_servers(cx, on_change: Sink<Vec<McpServerStatus>>) -> () {
        cx.app.watch_servers(move |list| on_change.send(&list));
        Ok(())
    }

    /// Shows the native approval dialog for `name` and, if the person approves exactly what it
    /// showed, records the approval and starts the server. Returns whether it was approved.
    async fn approve_mcp_server(cx, name: String) -> bool {
        let confirm = cx.host.confirm();
        Ok(cx.app.approve_and_start(&name, &*confirm).await?)
    }

    /// Switches a server on (it starts if approved) or off (it stops).
    async fn set_mcp_server_enabled(cx, name: String, enabled: bool) -> McpServerView {
        Ok(cx.app.set_server_enabled(&name, enabled).await?)
    }

    /// Adds a folder, chosen in the native folder dialog, to those a server is given as its
    /// roots (the window cannot name a folder to give); the server as it now is, or `null` when
    /// the person closed the dialog.
    async fn add_mcp_server_root(cx, name: String) -> Option<McpServerView> {
        let Some(folder) = cx.host.choose_folder("Give this server a folder").await else {
            return Ok(None);
        };
        let mut folders = current_roots(&cx.app, &name).await?;
        folders.push(folder);
        Ok(Some(cx.app.set_server_roots(&name, &folders).await?))
    }

    /// Takes a folder away from a server's roots (only ever fewer folders from the window).
    async fn remove_mcp_server_root(cx, name: String, folder: String) -> McpServerView {
        let folders: Vec<PathBuf> = current_roots(&cx.app, &name)
            .await?
            .into_iter()
            .filter(|f| f.to_string_lossy() != folder)
            .collect();
        Ok(cx.app.set_server_roots(&name, &folders).await?)
    }

    /// Turns a local server's sandbox on or off and sets its network (`null`: as it is, or
    /// for a sandbox newly on, the network its runtime needs: a package runner's registry),
    /// keeping its folders. Turning it on or narrowing it keeps the server's approval;
    /// anything that gives it more leaves it to be approved again in the native dialog, which
    /// shows the sandbox in words.
    async fn set_mcp_server_sandbox(cx, name: String, enabled: bool, network: Option<crate::sandbox::Reach>) -> McpServerView {
        Ok(cx.app.switch_server_sandbox(&name, enabled, network).await?)
    }

    /// Gives a local server's sandbox a folder, chosen in the native folder dialog, to read
    /// (`writable` false) or to read and write; `null` when the person closed the dialog. It
    /// gives the server more: it is approved again before it starts.
    async fn add_mcp_server_sandbox_folder(cx, name: String, writable: bool) -> Option<McpServerView> {
        let title = if writable {
            "Let this server read and write a folder"
        } else {
            "Let this server read a folder"
        };
        let Some(folder) = cx.host.choose_folder(title).await else {
            return Ok(None);
        };
        let (now, _) = cx.app.server_sandbox(&name)?;
        let mut entry = now.unwrap_or_default();
        let folder = folder.to_string_lossy().into_owned();
        let list = if writable { &mut entry.allow_write } else { &mut entry.allow_read };
        if !list.contains(&folder) {
            list.push(folder);
        }
        Ok(Some(cx.app.set_server_sandbox(&name, entry).await?))
    }

    /// Takes a folder away from a local server's sandbox (read or write).
    async fn remove_mcp_server_sandbox_folder(cx, name: String, folder: String) -> McpServerView {
        let (now, _) = cx.app.server_sandbox(&name)?;
        let mut entry = now.unwrap_or_default();
        entry.allow_read.retain(|f| *f != folder);
        entry.allow_write.retain(|f| *f != folder);
        Ok(cx.app.set_server_sandbox(&name, entry).await?)
    }

    /// Gives a running server what its sandbox refused it (one of its `sandbox_refused`),
    /// after the native approval dialog shows the widened sandbox; whether it was approved.
    async fn widen_mcp_server_sandbox(cx, name: String, refused: String) -> bool {
        let confirm = cx.host.confirm();
        Ok(cx.app.widen_server_sandbox(&name, &refused, &*confirm).await?)
    }

    /// Stops a server and starts it again (a failed one gets a fresh count of tries).
    async fn restart_mcp_server(cx, name: String) -> () {
        Ok(cx.app.restart_server(&name).await?)
    }

    /// Signs in to a remote server that asks for OAuth: the person's browser opens the server's
    /// authorization page (once the person said yes in a native dialog showing its host), the
    /// answer comes back to a one-time listener on 127.0.0.1, the tokens go to the OS keychain,
    /// and the server is started again with them.
    async fn sign_in_mcp_server(cx, name: String) -> () {
        let host = Arc::clone(&cx.host);
        let browser = LoopbackBrowser::new(|page| tracing::info!(%page, "MCP sign-in page opened"))
            .with_opener(Arc::new(move |page| host.open_url(page)))
            .asking_first(ask_before_sign_in(cx.host.confirm(), &name));
        cx.app.sign_in_server(&name, &browser).await?;
        Ok(())
    }

    /// Forgets a remote server's OAuth tokens and starts it again without them.
    async fn sign_out_mcp_server(cx, name: String) -> () {
        cx.app.sign_out_server(&name).await?;
        Ok(())
    }

    /// The window listens for servers' forms: each arrives on `on_form` (those already open
    /// first), and the id of each closed without its answer (its server said it is done, it
    /// timed out, its call stopped) on `on_closed`; a later call replaces the listeners (a
    /// reloaded window).
    async fn watch_mcp_forms(cx, on_form: Sink<ElicitationRequest>, on_closed: Sink<String>) -> () {
        let forms = cx.app.forms().clone();
        forward(forms.listen_closed(), on_closed);
        forward(forms.listen(), on_form);
        Ok(())
    }

    /// The person's answer to a server's form, checked against the form in Rust.
    async fn answer_mcp_form(cx, id: String, answer: ElicitationAnswer) -> () {
        Ok(cx.app.answer_form(&id, answer)?)
    }

    /// Opens the page a server's URL-mode request names in the person's browser (they clicked
    /// Open in its card, then said yes in the native dialog showing the address) and answers
    /// the request `accept`; `false` when they said no (the request stays open). The window
    /// names the request, never the address: Rust opens only what it checked when the request
    /// arrived (`https:`, or `http:` on loopback).
    async fn visit_mcp_form(cx, id: String) -> bool {
        let host = &cx.host;
        Ok(cx
            .app
            .visit_form_page(&id, &*host.confirm(), &|url| host.open_url(url))
            .await?)
    }

    /// Stops a server and removes it from mcp.json, with its keychain secrets and approval.
    async fn remove_mcp_server(cx, name: String) -> () {
        Ok(cx.app.remove_server(&name).await?)
    }

    /// Adds a server from a command line (`KEY=value … program args…`, shell quoting) or a
    /// URL, then asks for its approval in the native dialog: nothing the window sends starts a
    /// program by itself. Returns the server as it now is (approved or not).
    async fn add_mcp_server(cx, name: String, command_line: Option<String>, url: Option<String>) -> McpServerView {
        let confirm = cx.host.confirm();
        Ok(cx
            .app
            .add_typed_server(&name, command_line.as_deref(), url.as_deref(), &*confirm)
            .await?)
    }

    /// Changes how a server runs (its command line, or its address) to what the person typed,
    /// stops it, and asks for approval of the new one in the native dialog.
    async fn edit_mcp_server(cx, name: String, command_line: Option<String>, url: Option<String>) -> McpServerView {
        let confirm = cx.host.confirm();
        Ok(cx
            .app
            .edit_typed_server(&name, command_line.as_deref(), url.as_deref(), &*confirm)
            .await?)
    }

    /// A running server's tools, each as new (not pinned yet), as pinned, or changed since
    /// pinned (held back from models, with the diff).
    async fn list_mcp_tools(cx, name: String) -> Vec<ToolReview> {
        Ok(cx.app.server_tools(&name).await?)
    }

    /// What a running server offers beside its tools: its resources, resource templates and
    /// prompts.
    async fn list_mcp_offers(cx, name: String) -> ServerOffers {
        Ok(cx.app.server_offers(&name).await?)
    }

    /// Offers a changed tool to models again, once the person accepts its diff in the native
    /// dialog (the window can only ask). Returns whether it was accepted.
    async fn accept_mcp_tool(cx, name: String, tool: String) -> bool {
        let confirm = cx.host.confirm();
        let answer = cx.app.accept_running_tool(&name, &tool, &*confirm).await?;
        Ok(answer != ToolAcceptance::KeptBack)
    }

    /// What importing would add: from `text` (pasted JSON: Claude Desktop's or VS Code's shape,
    /// or a bare map of servers), or, without text, from Claude Desktop's own file.
    async fn preview_mcp_import(cx, text: Option<String>) -> ImportPreview {
        Ok(cx.app.mcp_import_preview_of(import_source(cx, text)).await?)
    }

    /// Imports what `preview_mcp_import` showed for the same source, read again here. Imported
    /// servers wait for approval (one native dialog each, from the Servers page).
    async fn import_mcp_servers(cx, text: Option<String>) -> Vec<String> {
        let preview = cx.app.mcp_import_preview_of(import_source(cx, text)).await?;
        Ok(cx.app.mcp_import_unapproved(&preview).await?)
    }

    /// The end of a server's stderr log.
    async fn mcp_server_log(cx, name: String) -> String {
        Ok(cx.app.mcp_log_tail(&name, LOG_TAIL_BYTES).await?)
    }

    /// One page of the MCP Registry's servers (the registry Settings names) matching `query`.
    async fn search_mcp_registry(cx, query: String, cursor: Option<String>) -> SearchPage {
        Ok(cx
            .app
            .search_registry(
                &query,
                cursor.as_deref(),
                REGISTRY_PAGE,
                None,
                crate::mcp::registry::Icons::Fetched,
            )
            .await?)
    }

    /// Adds the server the registry describes, built from its `server.json` and the values the
    /// person gave (secret ones go to the keychain, never back to the window), then asks for
    /// its approval in the native dialog with the full command line. Returns the server as it
    /// now is.
    async fn install_mcp_server(cx, request: InstallRequest) -> McpServerView {
        let confirm = cx.host.confirm();
        Ok(cx.app.install_from_registry(&request, &*confirm).await?)
    }

    /// Asks for an MCP bundle (`.mcpb`) in the native open dialog and reads it, nothing
    /// unpacked: what the consent screen shows, with the token to install it by; `null` when
    /// the dialog was closed. The window never names a file.
    async fn open_mcp_bundle(cx) -> Option<OfferedBundle> {
        let filter = ("MCP bundle", "mcpb");
        let Some(path) = cx.host.choose_file("Install an MCP bundle", None, filter).await else {
            return Ok(None);
        };
        Ok(Some(cx.app.offer_bundle(&path).await?))
    }

    /// Unpacks the bundle offered under `request.token` and adds its server with the values the
    /// person gave (sensitive ones to the keychain), then asks for its approval in the native
    /// dialog with the full command line. Returns the server as it now is.
    async fn install_mcp_bundle(cx, request: BundleInstallRequest) -> McpServerView {
        let confirm = cx.host.confirm();
        Ok(cx.app.install_offered_bundle(&request, &*confirm).await?)
    }

    /// The window listens for servers proposed by `switchboard://` links: those that came
    /// before it are sent at once; a later call replaces the listener (a reloaded window).
    async fn watch_server_proposals(cx, on_proposal: Sink<ShownProposal>) -> () {
        cx.app.watch_proposals(move |shown| on_proposal.send(&shown));
        Ok(())
    }

    /// Adds the server a link proposed (by its token), not approved, and asks for its approval
    /// in the native dialog with the full command line: only ever because the person asked.
    async fn accept_server_proposal(cx, token: String) -> McpServerView {
        let confirm = cx.host.confirm();
        Ok(cx.app.accept_proposal(&token, &*confirm).await?)
    }
}
