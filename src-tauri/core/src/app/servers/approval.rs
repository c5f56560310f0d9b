//! Approving a server: what the dialog shows for it as its entry is now, and approving exactly
//! that (the rules are [`crate::policy::servers`]'; the flow that asks is
//! [`crate::App::approve_server`]).

use super::{find_server, McpServerView};
use crate::app::App;
use crate::error::CoreError;
use crate::policy::servers::{self, ServerApprovalRequest};

impl App {
    /// What the approval dialog must show for `name` as its entry is now: the full command
    /// line (or address), and the fingerprint that approving exactly this approves.
    ///
    /// # Errors
    /// Not found, an invalid entry.
    pub fn mcp_approval_request(&self, name: &str) -> Result<ServerApprovalRequest, CoreError> {
        let file = self.load_mcp()?;
        let (key, entry) = find_server(&file, name)?;
        Ok(ServerApprovalRequest::of(key, &entry.resolve(key)?))
    }

    /// Approves what `shown` showed, only if the entry still is exactly that: a file edited
    /// while the dialog was open is not approved by it.
    ///
    /// # Errors
    /// [`CoreError::Conflict`] when the entry changed; not found; the database.
    pub async fn mcp_approve_shown(
        &self,
        shown: &ServerApprovalRequest,
    ) -> Result<McpServerView, CoreError> {
        let now = self.mcp_approval_request(&shown.server)?;
        if !servers::still_as_shown(shown, &now) {
            return Err(CoreError::Conflict {
                field: "command_line",
                message: format!(
                    "“{}” changed in {} while you were reading it; review it again.",
                    shown.server,
                    self.mcp_file().display()
                ),
            });
        }
        // Not what it runs: the approval shows a remote server's headers whole, and a log is no
        // place for them (what runs is logged, masked, when the server is added and started).
        tracing::info!(server = %now.server, fingerprint = %now.fingerprint, "MCP server approved");
        self.store()?
            .approve_mcp_server(now.server.clone(), now.fingerprint)
            .await?;
        self.mcp_server_view(now.server).await
    }
}
