//! Which MCP servers the person approved to start, and for which fingerprint of their command
//! line or address (see [`crate::mcp::config::ServerEntry::fingerprint`]).

use rusqlite::{params, OptionalExtension};

use super::{now_ms, Store, StoreError};

impl Store {
    /// The fingerprint `server` was last approved with, if any.
    ///
    /// # Errors
    /// A failed query.
    pub async fn mcp_approval(&self, server: String) -> Result<Option<String>, StoreError> {
        self.call(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT fingerprint FROM mcp_approvals WHERE server = ?1",
                    [&server],
                    |row| row.get(0),
                )
                .optional()?)
        })
        .await
    }

    /// Records that the person approved `server` as it is now.
    ///
    /// # Errors
    /// A failed query.
    pub async fn approve_mcp_server(
        &self,
        server: String,
        fingerprint: String,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "INSERT INTO mcp_approvals (server, fingerprint, approved_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(server) DO UPDATE SET fingerprint = excluded.fingerprint, \
                 approved_at = excluded.approved_at",
                params![server, fingerprint, now_ms()],
            )?;
            Ok(())
        })
        .await
    }

    /// Forgets an approval (the server was removed).
    ///
    /// # Errors
    /// A failed query.
    pub async fn forget_mcp_approval(&self, server: String) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute("DELETE FROM mcp_approvals WHERE server = ?1", [&server])?;
            Ok(())
        })
        .await
    }
}
