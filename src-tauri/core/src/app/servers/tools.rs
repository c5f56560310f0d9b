//! A server's tools against their pins: reviewing them (reading only), pinning the new ones as
//! first seen, and accepting a changed one (the rules are [`crate::policy::pins`]').

use super::ToolReview;
use crate::app::App;
use crate::error::CoreError;
use crate::mcp::catalogue::{Catalogue, ListedTool};
use crate::policy::pins::{review, unpinned, PinnedTool, ToolStatus};

impl App {
    /// Reviews a server's tools against their pins, reading only: unchanged and not yet pinned
    /// tools are offered, changed ones are held back with a diff until accepted. Tools are
    /// pinned as the app first sees them listed ([`App::mcp_pin_new_tools`]), never here.
    ///
    /// # Errors
    /// The database.
    pub async fn mcp_review_tools(
        &self,
        server: &str,
        tools: &[ListedTool],
    ) -> Result<Vec<ToolReview>, CoreError> {
        let catalogue = Catalogue::with_app_tools([(server, tools)]);
        let pins = self.store()?.tool_pins(server.to_owned()).await?;
        let statuses = review(catalogue.tools(), &pins);
        Ok(catalogue
            .tools()
            .iter()
            .zip(statuses)
            .map(|(t, status)| ToolReview {
                tool: t.tool.clone(),
                wire_name: t.wire_name.clone(),
                display_name: t.display_name.clone(),
                offered: !matches!(status, ToolStatus::Changed { .. }),
                status,
            })
            .collect())
    }

    /// Pins the tools of `server` that have no pin yet, as listed now (trust on first sight: a
    /// later change to one of them holds it back until accepted). Returns how many it pinned.
    ///
    /// # Errors
    /// The database.
    pub async fn mcp_pin_new_tools(
        &self,
        server: &str,
        tools: &[ListedTool],
    ) -> Result<usize, CoreError> {
        let catalogue = Catalogue::with_app_tools([(server, tools)]);
        let store = self.store()?;
        let pins = store.tool_pins(server.to_owned()).await?;
        let new = unpinned(catalogue.tools(), &pins);
        let count = new.len();
        if count > 0 {
            store.pin_tools(server.to_owned(), new).await?;
            tracing::info!(server, count, "new MCP tools pinned as first seen");
        }
        Ok(count)
    }

    /// Accepts a changed tool as it is now: pinned again, and offered again.
    ///
    /// # Errors
    /// No such tool among `tools`; the database.
    pub async fn mcp_accept_tool(
        &self,
        server: &str,
        tool: &str,
        tools: &[ListedTool],
    ) -> Result<(), CoreError> {
        let catalogue = Catalogue::with_app_tools([(server, tools)]);
        let current = catalogue
            .tools()
            .iter()
            .find(|t| t.tool == tool)
            .ok_or_else(|| CoreError::NotFound {
                what: format!("tool “{tool}” of “{server}”"),
            })?;
        self.store()?
            .pin_tools(server.to_owned(), vec![PinnedTool::of(current)])
            .await?;
        tracing::info!(server, tool, "changed MCP tool accepted");
        Ok(())
    }
}
