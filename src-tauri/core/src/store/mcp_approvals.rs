//! Which MCP servers the person approved to start, and for which fingerprint of their command
//! line or address (see [`crate::mcp::config::ServerEntry::fingerprint`]); and each server's
//! tools as they were pinned (see [`crate::policy::pins`]).

use rusqlite::{params, OptionalExtension};

use serde::Serialize;
use serde_json::Value;

use super::{now_ms, Store, StoreError};

/// A tool as it was pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PinnedTool {
    pub tool: String,
    pub hash: String,
    /// The title people read (in approvals and cards), when the server gave one.
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    /// The server's hints as pinned; `None` when it gave none (or it was pinned before they
    /// were kept).
    pub annotations: Option<Value>,
}

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

    /// The pinned version of every tool of `server`.
    ///
    /// # Errors
    /// A failed query.
    pub async fn tool_pins(&self, server: String) -> Result<Vec<PinnedTool>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT tool, hash, description, input_schema, title, annotations FROM mcp_tool_pins WHERE server = ?1",
            )?;
            let rows = stmt.query_map([&server], |row| {
                let schema: String = row.get(3)?;
                let annotations: Option<String> = row.get(5)?;
                Ok(PinnedTool {
                    tool: row.get(0)?,
                    hash: row.get(1)?,
                    title: row.get(4)?,
                    description: row.get(2)?,
                    input_schema: serde_json::from_str(&schema).unwrap_or_default(),
                    annotations: annotations.and_then(|a| serde_json::from_str(&a).ok()),
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Pins these tools of `server` as they are now (replacing earlier pins of the same tools).
    ///
    /// # Errors
    /// A failed query.
    pub async fn pin_tools(
        &self,
        server: String,
        tools: Vec<PinnedTool>,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO mcp_tool_pins (server, tool, hash, description, input_schema, pinned_at, title, annotations) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(server, tool) DO UPDATE SET \
                     hash = excluded.hash, description = excluded.description, \
                     input_schema = excluded.input_schema, pinned_at = excluded.pinned_at, \
                     title = excluded.title, annotations = excluded.annotations",
                )?;
                for t in &tools {
                    let annotations = t.annotations.as_ref().map(Value::to_string);
                    stmt.execute(params![server, t.tool, t.hash, t.description, t.input_schema.to_string(), now_ms(), t.title, annotations])?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Forgets an approval, the server's pins and the standing approvals of its tools (the
    /// server was removed: a new one of the same name inherits nothing).
    ///
    /// # Errors
    /// A failed query.
    pub async fn forget_mcp_approval(&self, server: String) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute("DELETE FROM mcp_approvals WHERE server = ?1", [&server])?;
            conn.execute("DELETE FROM mcp_tool_pins WHERE server = ?1", [&server])?;
            conn.execute("DELETE FROM tool_approvals WHERE server = ?1", [&server])?;
            Ok(())
        })
        .await
    }
}
