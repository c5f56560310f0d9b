//! MCP server commands: what the Servers page shows.

use switchboard_core::engine::McpServerStatus;
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

/// Every configured server with its state (starting, running, restarting, failed, stopped, or
/// none when it is not run: disabled, needs approval, invalid).
#[tauri::command]
pub async fn list_mcp_servers(state: State<'_, AppState>) -> CommandResult<Vec<McpServerStatus>> {
    let core = state.core().await;
    Ok(core.mcp_status(state.mcp.get()).await?)
}
