//! MCP server commands for the Servers page: the list, and what a person does to a server
//! (approve in a native dialog, switch on and off, restart, remove, add, read its log).
//!
//! Approval is decided here, in Rust, by a native dialog that shows the full command line: the
//! webview can ask for a server to be approved but cannot approve one itself.

use switchboard_core::engine::{ApprovalRequest, McpServerStatus, McpServerView, ToolReview};
use switchboard_core::mcp::config::{claude_desktop_config_path, ImportPreview, ServerEntry};
use switchboard_core::mcp::elicitation::{ElicitationAnswer, ElicitationRequest};
use switchboard_core::mcp::oauth::LoopbackBrowser;
use switchboard_core::mcp::pins::ToolStatus;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};

use super::error::{CommandError, CommandResult};
use crate::state::AppState;

/// The dialog's buttons; on Linux (GTK) with mnemonics: Alt+A approves, Alt+D declines, and
/// Escape declines everywhere.
#[cfg(target_os = "linux")]
const APPROVE_LABEL: &str = "_Approve and start";
#[cfg(target_os = "linux")]
const DECLINE_LABEL: &str = "_Don't start";
#[cfg(not(target_os = "linux"))]
const APPROVE_LABEL: &str = "Approve and start";
#[cfg(not(target_os = "linux"))]
const DECLINE_LABEL: &str = "Don't start";

#[cfg(target_os = "linux")]
const ACCEPT_TOOL_LABEL: &str = "_Accept the change";
#[cfg(target_os = "linux")]
const KEEP_HELD_LABEL: &str = "_Keep it held back";
#[cfg(not(target_os = "linux"))]
const ACCEPT_TOOL_LABEL: &str = "Accept the change";
#[cfg(not(target_os = "linux"))]
const KEEP_HELD_LABEL: &str = "Keep it held back";

/// How much of a tool's diff the native dialog shows (a dialog taller than the screen cannot be
/// answered).
const DIALOG_DIFF_CHARS: usize = 3000;

/// How much of a server's stderr log the page shows.
const LOG_TAIL_BYTES: u64 = 64 * 1024;

/// Every configured server with its state (starting, running, restarting, failed, stopped, or
/// none when it is not run: disabled, needs approval, invalid).
#[tauri::command]
pub async fn list_mcp_servers(state: State<'_, AppState>) -> CommandResult<Vec<McpServerStatus>> {
    let core = state.core().await;
    Ok(core.mcp_status(state.mcp.get()).await?)
}

/// Shows the native approval dialog for `name` and, if the person approves exactly what it
/// showed, records the approval and starts the server. Returns whether it was approved.
#[tauri::command]
pub async fn approve_mcp_server(
    app: AppHandle,
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<bool> {
    approve_and_start(&app, &state, &name).await
}

/// The approval flow: the native dialog, then the approval of exactly what it showed and the
/// start.
async fn approve_and_start(app: &AppHandle, state: &AppState, name: &str) -> CommandResult<bool> {
    let core = state.core().await;
    let request = core.mcp_approval_request(name)?;
    if !ask_approval(app, &request).await {
        tracing::info!(server = %request.server, "MCP server not approved");
        return Ok(false);
    }
    core.mcp_approve_shown(&request).await?;
    if let Err(e) = core
        .mcp_restart(state.mcp_host().await, &request.server)
        .await
    {
        // Approved but not startable (disabled, a missing secret): the page shows why.
        tracing::warn!(server = %request.server, error = %e, "approved MCP server not started");
    }
    Ok(true)
}

/// The native dialog: the server's name and its full command line (or address), untruncated.
async fn ask_approval(app: &AppHandle, request: &ApprovalRequest) -> bool {
    let (what, recognise) = if request.remote {
        ("connect to", "an address")
    } else {
        ("run this command, with your permissions, for", "a command")
    };
    let message = format!(
        "Switchboard will {what} the MCP server “{}”:\n\n{}\n\nApprove only {recognise} you recognise. \
         If mcp.json changes, you will be asked again.",
        request.server, request.command_line
    );
    ask_native(
        app,
        format!("Start the MCP server “{}”?", request.server),
        message,
        (APPROVE_LABEL, DECLINE_LABEL),
    )
    .await
}

/// A native warning dialog over the main window with two buttons; resolves true for the
/// first. Closing it (Escape) is the second.
async fn ask_native(
    app: &AppHandle,
    title: String,
    message: String,
    (yes, no): (&str, &str),
) -> bool {
    let (answer, answered) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .message(message)
        .title(title)
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom(yes.into(), no.into()));
    if let Some(window) = app.get_webview_window("main") {
        dialog = dialog.parent(&window);
    }
    dialog.show(move |approved| {
        let _ = answer.send(approved);
    });
    answered.await.unwrap_or(false)
}

/// Switches a server on (it starts if approved) or off (it stops).
#[tauri::command]
pub async fn set_mcp_server_enabled(
    state: State<'_, AppState>,
    name: String,
    enabled: bool,
) -> CommandResult<McpServerView> {
    let core = state.core().await;
    let view = core.mcp_set_disabled(&name, !enabled).await?;
    let host = state.mcp_host().await;
    if enabled {
        if view.approved {
            core.mcp_restart(host, &view.name).await?;
        }
    } else {
        host.stop(&view.name).await;
    }
    Ok(view)
}

/// Stops a server and starts it again (a failed one gets a fresh count of tries).
#[tauri::command]
pub async fn restart_mcp_server(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    let core = state.core().await;
    Ok(core.mcp_restart(state.mcp_host().await, &name).await?)
}

/// Signs in to a remote server that asks for OAuth: the person's browser opens the server's
/// authorization page, the answer comes back to a one-time listener on 127.0.0.1, the tokens go
/// to the OS keychain, and the server is started again with them.
#[tauri::command]
pub async fn sign_in_mcp_server(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    let core = state.core().await;
    let browser = LoopbackBrowser::new(|page| tracing::info!(%page, "MCP sign-in page opened"));
    let server = core.mcp_sign_in(&name, &browser).await?;
    Ok(core.mcp_restart(state.mcp_host().await, &server).await?)
}

/// Forgets a remote server's OAuth tokens and starts it again without them.
#[tauri::command]
pub async fn sign_out_mcp_server(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    let core = state.core().await;
    let server = core.mcp_sign_out(&name).await?;
    Ok(core.mcp_restart(state.mcp_host().await, &server).await?)
}

/// The window listens for servers' forms: each arrives on `on_form` (those already open
/// first); a later call replaces the listener (a reloaded window).
#[tauri::command]
pub async fn watch_mcp_forms(
    state: State<'_, AppState>,
    on_form: Channel<ElicitationRequest>,
) -> CommandResult<()> {
    let mut forms = state.forms.listen();
    tauri::async_runtime::spawn(async move {
        while let Some(form) = forms.recv().await {
            if on_form.send(form).is_err() {
                break;
            }
        }
    });
    Ok(())
}

/// The person's answer to a server's form, checked against the form in Rust.
#[tauri::command]
pub async fn answer_mcp_form(
    state: State<'_, AppState>,
    id: String,
    answer: ElicitationAnswer,
) -> CommandResult<()> {
    state
        .forms
        .answer(&id, answer)
        .map_err(|message| CommandError {
            kind: "invalid",
            message,
            field: None,
        })
}

/// Stops a server and removes it from mcp.json, with its keychain secrets and approval.
#[tauri::command]
pub async fn remove_mcp_server(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    let core = state.core().await;
    state.mcp_host().await.stop(name.trim()).await;
    Ok(core.mcp_remove(&name).await?)
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
    let core = state.core().await;
    let entry = ServerEntry::from_typed(command_line.as_deref(), url.as_deref())
        .map_err(switchboard_core::CoreError::from)?;
    let view = core.mcp_add_unapproved(&name, entry).await?;
    approve_and_start(&app, &state, &view.name).await?;
    Ok(core.mcp_server_view(view.name).await?)
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
    let core = state.core().await;
    let entry = ServerEntry::from_typed(command_line.as_deref(), url.as_deref())
        .map_err(switchboard_core::CoreError::from)?;
    let view = core.mcp_edit(&name, entry).await?;
    state.mcp_host().await.stop(&view.name).await;
    approve_and_start(&app, &state, &view.name).await?;
    Ok(core.mcp_server_view(view.name).await?)
}

/// A running server's tools, each as new (pinned now), as pinned, or changed since pinned
/// (held back from models, with the diff).
#[tauri::command]
pub async fn list_mcp_tools(
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<Vec<ToolReview>> {
    let core = state.core().await;
    let tools = core
        .mcp_running_tools(state.mcp_host().await, &name)
        .await?;
    Ok(core.mcp_review_tools(name.trim(), &tools).await?)
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
    let core = state.core().await;
    let name = name.trim();
    let tools = core.mcp_running_tools(state.mcp_host().await, name).await?;
    let review = core.mcp_review_tools(name, &tools).await?;
    let Some(diff) = review
        .iter()
        .find(|t| t.tool == tool)
        .and_then(|t| match &t.status {
            ToolStatus::Changed { diff } => Some(diff.clone()),
            _ => None,
        })
    else {
        return Ok(true); // nothing held back: nothing to accept
    };
    let message = format!(
        "The MCP server “{name}” changed its tool “{tool}” since you first saw it. A changed \
         description can tell the model to do something else. It was held back; accept it \
         only if this change is expected:\n\n{}",
        clip(&diff, DIALOG_DIFF_CHARS)
    );
    let title = format!("Offer the changed tool “{tool}” again?");
    if !ask_native(&app, title, message, (ACCEPT_TOOL_LABEL, KEEP_HELD_LABEL)).await {
        return Ok(false);
    }
    core.mcp_accept_tool(name, &tool, &tools).await?;
    Ok(true)
}

/// The first `max` characters of `text`, saying how much was left out (the page shows all).
fn clip(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!(
        "{kept}\n… ({} more characters: the whole diff is on the Servers page)",
        count - max
    )
}

/// What importing would add: from `text` (pasted JSON: Claude Desktop's or VS Code's shape, or
/// a bare map of servers), or, without text, from Claude Desktop's own file.
#[tauri::command]
pub async fn preview_mcp_import(
    state: State<'_, AppState>,
    text: Option<String>,
) -> CommandResult<ImportPreview> {
    let core = state.core().await;
    let (text, origin) = import_source(text).await?;
    Ok(core.mcp_import_preview(&text, &origin)?)
}

/// Imports what [`preview_mcp_import`] showed for the same source, read again here. Imported
/// servers wait for approval (one native dialog each, from the Servers page).
#[tauri::command]
pub async fn import_mcp_servers(
    state: State<'_, AppState>,
    text: Option<String>,
) -> CommandResult<Vec<String>> {
    let core = state.core().await;
    let (text, origin) = import_source(text).await?;
    let preview = core.mcp_import_preview(&text, &origin)?;
    Ok(core.mcp_import_unapproved(&preview).await?)
}

/// Pasted text, or Claude Desktop's file read from its usual place.
async fn import_source(text: Option<String>) -> CommandResult<(String, String)> {
    if let Some(text) = text {
        return Ok((text, "the pasted text".to_owned()));
    }
    let path =
        claude_desktop_config_path().ok_or_else(|| switchboard_core::CoreError::NotFound {
            what: "Claude Desktop's configuration folder".into(),
        })?;
    match tokio::fs::read_to_string(&path).await {
        Ok(text) => Ok((text, path.display().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(switchboard_core::CoreError::NotFound {
                what: format!("Claude Desktop's settings ({})", path.display()),
            }
            .into())
        }
        Err(e) => Err(switchboard_core::CoreError::Io {
            what: path.display().to_string(),
            detail: e.to_string(),
        }
        .into()),
    }
}

/// The end of a server's stderr log.
#[tauri::command]
pub async fn mcp_server_log(state: State<'_, AppState>, name: String) -> CommandResult<String> {
    let core = state.core().await;
    Ok(core.mcp_log_tail(&name, LOG_TAIL_BYTES).await?)
}
