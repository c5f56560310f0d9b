//! What a conversation's model was last given (issue 55): the newest request's size in tokens
//! and what filled it, kept so that the conversation's header says how full the window is when
//! the conversation is opened again, before anything is sent.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError};

/// What a request to the model holds, in tokens, and of how much.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ContextUse {
    /// The whole request.
    #[ts(type = "number")]
    pub tokens: u64,
    /// The model's window, when known.
    #[ts(type = "number | null")]
    pub window: Option<u64>,
    #[ts(type = "number")]
    pub system: u64,
    /// The offered tools' definitions.
    #[ts(type = "number")]
    pub tools: u64,
    /// The messages' text, tool calls and results.
    #[ts(type = "number")]
    pub history: u64,
    /// Images and documents attached to messages or carried by results.
    #[ts(type = "number")]
    pub attachments: u64,
    /// How it was counted: the tokenizer's name, or "estimate"; "calibrated" when scaled by
    /// what the provider reported.
    pub counted_by: String,
}

impl Store {
    /// Keeps what the conversation's model was just given.
    ///
    /// # Errors
    /// A failed write.
    pub async fn set_context_use(
        &self,
        conversation_id: String,
        used: ContextUse,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(&used).map_err(|e| StoreError::Task(e.to_string()))?;
        self.call(move |conn| {
            conn.execute(
                "UPDATE conversations SET context_use = ?2 WHERE id = ?1",
                params![conversation_id, json],
            )?;
            Ok(())
        })
        .await
    }

    /// What the conversation's model was last given, if it was given anything since this was
    /// kept.
    ///
    /// # Errors
    /// A failed query.
    pub async fn context_use(
        &self,
        conversation_id: String,
    ) -> Result<Option<ContextUse>, StoreError> {
        let json: Option<String> = self
            .call(move |conn| {
                Ok(conn
                    .prepare_cached("SELECT context_use FROM conversations WHERE id = ?1")?
                    .query_row([conversation_id], |row| row.get(0))
                    .optional()?
                    .flatten())
            })
            .await?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }
}
