//! MCP server commands for the Servers page: the list, and what a person does to a server
//! (approve in a native dialog, switch on and off, restart, remove, add, read its log), and
//! finding and installing servers from the MCP Registry or from MCP bundles, and servers
//! proposed by `switchboard://` links.
//!
//! Approval is decided in Rust, by a native dialog that shows the full command line (the
//! bridge's `NativeConfirm`, through the core's one approval flow): the webview can ask for a
//! server to be approved but cannot approve one itself.

use std::sync::Arc;

use switchboard_core::app::ImportSource;
use switchboard_core::app::{BundleInstallRequest, InstallRequest, OfferedBundle, ToolAcceptance};
use switchboard_core::app::{McpServerStatus, McpServerView, ToolReview};
use switchboard_core::mcp::config::ImportPreview;
use switchboard_core::mcp::elicitation::{ElicitationAnswer, ElicitationRequest};
use switchboard_core::mcp::features::ServerOffers;
use switchboard_core::mcp::oauth::LoopbackBrowser;
use switchboard_core::mcp::proposal::ShownProposal;
use switchboard_core::mcp::registry::SearchPage;
use switchboard_core::policy::confirm::ask_before_sign_in;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};

use super::error::CommandResult;
use crate::bridge::NativeConfirm;
use crate::state::AppState;

/// How much of a server's stderr log the page shows.
const LOG_TAIL_BYTES: u64 = 64 * 1024;
/// How many of the registry's servers a page of Browse shows.
const REGISTRY_PAGE: u32 = 20;

/// Every configured server with its state (starting, running, restarting, failed, stopped, or
/// none when it is not run: disabled, needs approval, invalid).
#[tauri::command]
pub async fn list_mcp_servers(state: State<'_, AppState>) -> CommandResult<Vec<McpServerStatus>> {
    let app = state.app().await;
    Ok(app.mcp_status().await?)
}

/// The window listens for the server list: every configured server with its state arrives on
/// `on_change` now and again after every change (no polling); a later call replaces the
/// listener (a reloaded window).
#[tauri::command]
pub async fn watch_mcp_servers(
    state: State<'_, AppState>,
    on_change: Channel<Vec<McpServerStatus>>,
) -> CommandResult<()> {
    state
        .app()
        .await
        .watch_servers(move |list| on_change.send(list).is_ok());
    Ok(())
}

/// Shows the native approval dialog for `name` and, if the person approves exactly what it
/// showed, records the approval and starts the server. Returns whether it was approved.
#[tauri::command]
pub async fn approve_mcp_server(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<bool> {
    let confirm = NativeConfirm(app);
    Ok(state.app().await.approve_and_start(&name, &confirm).await?)
}

/// Switches a server on (it starts if approved) or off (it stops).
#[tauri::command]
pub async fn set_mcp_server_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> CommandResult<McpServerView> {
    Ok(state.app().await.set_server_enabled(&name, enabled).await?)
}

/// Adds a folder, chosen in Rust's native folder dialog, to those a server is given as its
/// roots (the webview cannot name a folder to give); the server as it now is, or `null`
/// when the person closed the dialog.
#[tauri::command]
pub async fn add_mcp_server_root(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<Option<McpServerView>> {
    let Some(folder) = crate::bridge::choose_folder(&app, "Give this server a folder").await else {
        return Ok(None);
    };
    let app = state.app().await;
    let mut folders = current_roots(app, &name).await?;
    folders.push(folder);
    Ok(Some(app.set_server_roots(&name, &folders).await?))
}

/// Takes a folder away from a server's roots (only ever fewer folders from the webview).
#[tauri::command]
pub async fn remove_mcp_server_root(
    state: State<'_, AppState>,
    name: String,
    folder: String,
) -> CommandResult<McpServerView> {
    let app = state.app().await;
    let folders: Vec<std::path::PathBuf> = current_roots(app, &name)
        .await?
        .into_iter()
        .filter(|f| f.to_string_lossy() != folder)
        .collect();
    Ok(app.set_server_roots(&name, &folders).await?)
}

async fn current_roots(
    app: &switchboard_core::App,
    name: &str,
) -> Result<Vec<std::path::PathBuf>, switchboard_core::CoreError> {
    Ok(app
        .mcp_servers()
        .await?
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.roots.into_iter().map(std::path::PathBuf::from).collect())
        .unwrap_or_default())
}

/// Stops a server and starts it again (a failed one gets a fresh count of tries).
#[tauri::command]
pub async fn restart_mcp_server(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    Ok(state.app().await.restart_server(&name).await?)
}

/// Signs in to a remote server that asks for OAuth: the person's browser opens the server's
/// authorization page (once the person said yes in a native dialog showing its host), the answer
/// comes back to a one-time listener on 127.0.0.1, the tokens go to the OS keychain, and the
/// server is started again with them.
#[tauri::command]
pub async fn sign_in_mcp_server(
    handle: AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<()> {
    let app = state.app().await;
    let browser = LoopbackBrowser::new(|page| tracing::info!(%page, "MCP sign-in page opened"))
        .asking_first(ask_before_sign_in(Arc::new(NativeConfirm(handle)), &name));
    app.sign_in_server(&name, &browser).await?;
    Ok(())
}

/// Forgets a remote server's OAuth tokens and starts it again without them.
#[tauri::command]
pub async fn sign_out_mcp_server(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    state.app().await.sign_out_server(&name).await?;
    Ok(())
}

/// The window listens for servers' forms: each arrives on `on_form` (those already open
/// first), and the id of each closed without its answer (its server said it is done, it timed
/// out, its call stopped) on `on_closed`; a later call replaces the listeners (a reloaded
/// window).
#[tauri::command]
pub async fn watch_mcp_forms(
    state: State<'_, AppState>,
    on_form: Channel<ElicitationRequest>,
    on_closed: Channel<String>,
) -> CommandResult<()> {
    let forms = state.app().await.forms().clone();
    forward(forms.listen_closed(), on_closed);
    forward(forms.listen(), on_form);
    Ok(())
}

/// Sends what `news` hears to the window until either ends.
fn forward<T: tauri::ipc::IpcResponse + Send + 'static>(
    mut news: tokio::sync::mpsc::UnboundedReceiver<T>,
    window: Channel<T>,
) {
    tauri::async_runtime::spawn(async move {
        while let Some(item) = news.recv().await {
            if window.send(item).is_err() {
                break;
            }
        }
    });
}

/// The person's answer to a server's form, checked against the form in Rust.
#[tauri::command]
pub async fn answer_mcp_form(
    state: State<'_, AppState>,
    id: String,
    answer: ElicitationAnswer,
) -> CommandResult<()> {
    Ok(state.app().await.answer_form(&id, answer)?)
}

/// Opens the page a server's URL-mode request names in the person's browser (they clicked
/// Open in its card, then said yes in the native dialog showing the address) and answers the
/// request `accept`; `false` when they said no (the request stays open). The window names the
/// request, never the address: Rust opens only what it checked when the request arrived
/// (`https:`, or `http:` on loopback).
#[tauri::command]
pub async fn visit_mcp_form(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
) -> CommandResult<bool> {
    Ok(state
        .app()
        .await
        .visit_form_page(
            &id,
            &NativeConfirm(app),
            &switchboard_core::mcp::oauth::open_in_browser,
        )
        .await?)
}

/// Stops a server and removes it from mcp.json, with its keychain secrets and approval.
#[tauri::command]
pub async fn remove_mcp_server(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    Ok(state.app().await.remove_server(&name).await?)
}

/// Adds a server from a command line (`KEY=value … program args…`, shell quoting) or a URL,
/// then asks for its approval in the native dialog: nothing the webview sends starts a program
/// by itself. Returns the server as it now is (approved or not).
#[tauri::command]
pub async fn add_mcp_server(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
    command_line: Option<String>,
    url: Option<String>,
) -> CommandResult<McpServerView> {
    Ok(state
        .app()
        .await
        .add_typed_server(
            &name,
            command_line.as_deref(),
            url.as_deref(),
            &NativeConfirm(app),
        )
        .await?)
}

/// Changes how a server runs (its command line, or its address) to what the person typed,
/// stops it, and asks for approval of the new one in the native dialog.
#[tauri::command]
pub async fn edit_mcp_server(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
    command_line: Option<String>,
    url: Option<String>,
) -> CommandResult<McpServerView> {
    Ok(state
        .app()
        .await
        .edit_typed_server(
            &name,
            command_line.as_deref(),
            url.as_deref(),
            &NativeConfirm(app),
        )
        .await?)
}

/// A running server's tools, each as new (not pinned yet), as pinned, or changed since pinned
/// (held back from models, with the diff).
#[tauri::command]
pub async fn list_mcp_tools(
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<Vec<ToolReview>> {
    Ok(state.app().await.server_tools(&name).await?)
}

/// What a running server offers beside its tools: its resources, resource templates and
/// prompts.
#[tauri::command]
pub async fn list_mcp_offers(
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<ServerOffers> {
    Ok(state.app().await.server_offers(&name).await?)
}

/// Offers a changed tool to models again, once the person accepts its diff in the native
/// dialog (the webview can only ask). Returns whether it was accepted.
#[tauri::command]
pub async fn accept_mcp_tool(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
    tool: String,
) -> CommandResult<bool> {
    let answer = state
        .app()
        .await
        .accept_running_tool(&name, &tool, &NativeConfirm(app))
        .await?;
    Ok(answer != ToolAcceptance::KeptBack)
}

/// What importing would add: from `text` (pasted JSON: Claude Desktop's or VS Code's shape, or
/// a bare map of servers), or, without text, from Claude Desktop's own file.
#[tauri::command]
pub async fn preview_mcp_import(
    state: State<'_, AppState>,
    text: Option<String>,
) -> CommandResult<ImportPreview> {
    let app = state.app().await;
    Ok(app.mcp_import_preview_of(import_source(text)).await?)
}

/// Imports what [`preview_mcp_import`] showed for the same source, read again here. Imported
/// servers wait for approval (one native dialog each, from the Servers page).
#[tauri::command]
pub async fn import_mcp_servers(
    state: State<'_, AppState>,
    text: Option<String>,
) -> CommandResult<Vec<String>> {
    let app = state.app().await;
    let preview = app.mcp_import_preview_of(import_source(text)).await?;
    Ok(app.mcp_import_unapproved(&preview).await?)
}

/// Pasted text, or Claude Desktop's file from its usual place.
fn import_source(text: Option<String>) -> ImportSource {
    text.map_or(ImportSource::ClaudeDesktop, ImportSource::Text)
}

/// The end of a server's stderr log.
#[tauri::command]
pub async fn mcp_server_log(state: State<'_, AppState>, name: String) -> CommandResult<String> {
    let app = state.app().await;
    Ok(app.mcp_log_tail(&name, LOG_TAIL_BYTES).await?)
}

/// One page of the MCP Registry's servers (the registry Settings names) matching `query`.
#[tauri::command]
pub async fn search_mcp_registry(
    state: State<'_, AppState>,
    query: String,
    cursor: Option<String>,
) -> CommandResult<SearchPage> {
    Ok(state
        .app()
        .await
        .search_registry(&query, cursor.as_deref(), REGISTRY_PAGE, None)
        .await?)
}

/// Adds the server the registry describes, built from its `server.json` and the values the
/// person gave (secret ones go to the keychain, never back to the webview), then asks for its
/// approval in the native dialog with the full command line. Returns the server as it now is.
#[tauri::command]
pub async fn install_mcp_server(
    app: AppHandle,
    state: State<'_, AppState>,
    request: InstallRequest,
) -> CommandResult<McpServerView> {
    Ok(state
        .app()
        .await
        .install_from_registry(&request, &NativeConfirm(app))
        .await?)
}

/// Asks for an MCP bundle (`.mcpb`) in the native open dialog and reads it, nothing unpacked:
/// what the consent screen shows, with the token to install it by; `null` when the dialog
/// was closed. The webview never names a file.
#[tauri::command]
pub async fn open_mcp_bundle(
    app: AppHandle,
    state: State<'_, AppState>,
) -> CommandResult<Option<OfferedBundle>> {
    let Some(path) =
        crate::bridge::choose_file(&app, "Install an MCP bundle", None, ("MCP bundle", "mcpb"))
            .await
    else {
        return Ok(None);
    };
    Ok(Some(state.app().await.offer_bundle(&path).await?))
}

/// Unpacks the bundle offered under `request.token` and adds its server with the values the
/// person gave (sensitive ones to the keychain), then asks for its approval in the native
/// dialog with the full command line. Returns the server as it now is.
#[tauri::command]
pub async fn install_mcp_bundle(
    app: AppHandle,
    state: State<'_, AppState>,
    request: BundleInstallRequest,
) -> CommandResult<McpServerView> {
    Ok(state
        .app()
        .await
        .install_offered_bundle(&request, &NativeConfirm(app))
        .await?)
}

/// The window listens for servers proposed by `switchboard://` links: those that came before
/// it are sent at once; a later call replaces the listener (a reloaded window).
#[tauri::command]
pub async fn watch_server_proposals(
    state: State<'_, AppState>,
    on_proposal: Channel<ShownProposal>,
) -> CommandResult<()> {
    state
        .app()
        .await
        .watch_proposals(move |shown| on_proposal.send(shown).is_ok());
    Ok(())
}

/// Adds the server a link proposed (by its token), not approved, and asks for its approval in
/// the native dialog with the full command line: only ever because the person asked.
#[tauri::command]
pub async fn accept_server_proposal(
    app: AppHandle,
    state: State<'_, AppState>,
    token: String,
) -> CommandResult<McpServerView> {
    Ok(state
        .app()
        .await
        .accept_proposal(&token, &NativeConfirm(app))
        .await?)
}
