//! MCP Apps' pages (SEP-1865), served by token under the `mcp-app` scheme, each with the
//! Content-Security-Policy built from what it declared (the core's `prepare_mcp_app` hands the
//! window the address; the window never holds the HTML).

use switchboard_core::ipc::APP_PAGE_SCHEME;
use tauri::http::{header, Request, Response, StatusCode};
use tauri::{AppHandle, Manager};

use crate::state::AppState;

/// The scheme app pages are served under.
pub const SCHEME: &str = APP_PAGE_SCHEME;

/// Serves an app page by its token: the HTML with the policy built from what it declared, no
/// sniffing, no caching, nothing for any other path. The frame that loads it is sandboxed by
/// the window (scripts only, an opaque origin).
pub fn serve(app: &AppHandle, request: &Request<Vec<u8>>) -> Response<Vec<u8>> {
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
