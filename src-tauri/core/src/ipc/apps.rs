//! MCP Apps (SEP-1865): `prepare_mcp_app` hands the window the address of a call's app page
//! (the shell serves it under the `mcp-app` scheme with the page's own Content-Security-Policy;
//! the window never holds the HTML), and `app_call_tool` runs a tool the app asks for through
//! the conversation's approvals, in a native dialog when they ask.

use serde_json::{Map, Value};

use super::commands;
use crate::mcp::apps::McpAppView;

/// The scheme app pages are served under.
pub const SCHEME: &str = "mcp-app";

/// Where the page kept under `token` is loaded from: `mcp-app://localhost/…`, or
/// `http://mcp-app.localhost/…` where the webview serves custom schemes that way (Windows).
pub fn page_address(token: &str) -> String {
    if cfg!(windows) {
        format!("http://{SCHEME}.localhost/{token}")
    } else {
        format!("{SCHEME}://localhost/{token}")
    }
}

commands! {
    /// The app of a finished tool call, or `null` when its tool has none.
    async fn prepare_mcp_app(cx, id: String, message_id: String, call_id: String) -> Option<McpAppView> {
        let opened = cx.app.open_app(&id, &message_id, &call_id).await?;
        Ok(opened.map(|(token, mut view)| {
            view.src = page_address(&token);
            view
        }))
    }

    /// A tool of the same server, run for the app shown in that call's card.
    async fn app_call_tool(
        cx,
        id: String,
        message_id: String,
        call_id: String,
        tool: String,
        arguments: Map<String, Value>,
    ) -> Value {
        let confirm = cx.host.confirm();
        Ok(cx
            .app
            .app_call_tool(&id, &message_id, &call_id, &tool, arguments, &*confirm)
            .await?)
    }
}
