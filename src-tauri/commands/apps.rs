//! MCP Apps (SEP-1865): `prepare_mcp_app` hands the window the address of a call's app page
//! (served by [`serve_app_page`] under the `mcp-app` scheme with the page's own
//! Content-Security-Policy; the window never holds the HTML), and `app_call_tool` runs a tool
//! the app asks for through the conversation's approvals, in a native dialog when they ask.

use serde_json::{Map, Value};
use switchboard_core::mcp::apps::McpAppView;
use tauri::http::{header, Request, Response, StatusCode};
use tauri::{AppHandle, Manager, State};

use super::error::CommandResult;
use crate::bridge::NativeConfirm;
use crate::state::AppState;

/// The scheme app pages are served under.
pub const SCHEME: &str = "mcp-app";

/// Where the page kept under `token` is loaded from: `mcp-app://localhost/…`, or
/// `http://mcp-app.localhost/…` where the webview serves custom schemes that way (Windows).
fn page_address(token: &str) -> String {
    if cfg!(windows) {
        format!("http://{SCHEME}.localhost/{token}")
    } else {
        format!("{SCHEME}://localhost/{token}")
    }
}

/// The app of a finished tool call, or `null` when its tool has none.
#[tauri::command]
pub async fn prepare_mcp_app(
    state: State<'_, AppState>,
    id: String,
    message_id: String,
    call_id: String,
) -> CommandResult<Option<McpAppView>> {
    let opened = state
        .app()
        .await
        .open_app(&id, &message_id, &call_id)
        .await?;
    Ok(opened.map(|(token, mut view)| {
        view.src = page_address(&token);
        view
    }))
}

/// A tool of the same server, run for the app shown in that call's card.
#[tauri::command]
pub async fn app_call_tool(
    handle: AppHandle,
    state: State<'_, AppState>,
    id: String,
    message_id: String,
    call_id: String,
    tool: String,
    arguments: Map<String, Value>,
) -> CommandResult<Value> {
    Ok(state
        .app()
        .await
        .app_call_tool(
            &id,
            &message_id,
            &call_id,
            &tool,
            arguments,
            &NativeConfirm(handle),
        )
        .await?)
}

/// Serves an app page by its token: the HTML with the policy built from what it declared, no
/// sniffing, no caching, nothing for any other path. The frame that loads it is sandboxed by
/// the window (scripts only, an opaque origin).
pub fn serve_app_page(app: &AppHandle, request: &Request<Vec<u8>>) -> Response<Vec<u8>> {
    let token = request.uri().path().trim_start_matches('/');
    let page = app
        .try_state::<AppState>()
        .and_then(|state| state.app_now().and_then(|running| running.app_page(token)));
    let builder = Response::builder()
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::REFERRER_POLICY, "no-referrer");
    let response = match page {
        Some(page) if request.method() == tauri::http::Method::GET => builder
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
            .header(header::CONTENT_SECURITY_POLICY, page.csp)
            .body(page.html.into_bytes()),
        _ => builder
            .status(StatusCode::NOT_FOUND)
            .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(b"no such app page".to_vec()),
    };
    response.unwrap_or_else(|_| Response::new(Vec::new()))
}
