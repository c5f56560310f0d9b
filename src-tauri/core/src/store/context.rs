//! What a conversation's model was given (issue 55): the newest request's size in tokens and
//! what filled it, kept so that the conversation's header says how full the window is when the
//! conversation is opened again, before anything is sent; and each answer's record of the tools
//! its request offered, when the model was given a choice of them.

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
    /// Of [`ContextUse::tools`], the list of skills the model may load (issue 61).
    #[serde(default)]
    #[ts(type = "number")]
    pub skills: u64,
    /// How it was counted: the tokenizer's name, or "estimate"; "calibrated" when scaled by
    /// what the provider reported.
    pub counted_by: String,
    /// What the whole conversation would have taken, when it was more than the window and the
    /// request was fitted to it (older messages summarised or left out): the header says the
    /// model runs with a window smaller than the conversation needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub needed: Option<u64>,
    /// What of its project's files and its memory the request was given (issue 62), when it
    /// was given any: the system prompt holds them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub given: Option<crate::knowledge::KnowledgeUse>,
}

/// The tools one answer's request offered the model, when it was given a choice of the
/// conversation's tools and a search for the rest (an answer with no record was offered every
/// tool switched on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ToolOffer {
    /// The answer.
    pub message_id: String,
    /// The tools offered, in the order the request listed them (display names).
    pub offered: Vec<String>,
    /// How many tools the conversation had switched on.
    pub of: u32,
    /// Why a choice was made.
    pub why: String,
}

impl Store {
    /// Keeps (or replaces: a request narrowed after a refusal) the record of the tools an
    /// answer's request offered.
    ///
    /// # Errors
    /// A failed write.
    pub async fn record_offer(
        &self,
        conversation_id: String,
        offer: ToolOffer,
    ) -> Result<(), StoreError> {
        self.call(move |conn| record_offer(conn, &conversation_id, &offer))
            .await
    }

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

/// Keeps (or replaces) the record of the tools an answer's request offered.
pub(super) fn record_offer(
    conn: &rusqlite::Connection,
    conversation_id: &str,
    offer: &ToolOffer,
) -> Result<(), StoreError> {
    let offered =
        serde_json::to_string(&offer.offered).map_err(|e| StoreError::Task(e.to_string()))?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO tool_offers (message_id, conversation_id, offered, of_tools, \
         why) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        offer.message_id,
        conversation_id,
        offered,
        offer.of,
        offer.why
    ])?;
    Ok(())
}

/// The records of the tools offered by the answers of a conversation numbered from `first` to
/// `last`, in their order.
pub(super) fn offers_between(
    conn: &rusqlite::Connection,
    conversation_id: &str,
    first: i64,
    last: i64,
) -> Result<Vec<ToolOffer>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT o.message_id, o.offered, o.of_tools, o.why FROM tool_offers o \
         JOIN messages m ON m.id = o.message_id \
         WHERE o.conversation_id = ?1 AND m.seq BETWEEN ?2 AND ?3 ORDER BY m.seq",
    )?;
    let rows = stmt.query_map(params![conversation_id, first, last], |row| {
        let offered: String = row.get(1)?;
        Ok(ToolOffer {
            message_id: row.get(0)?,
            offered: serde_json::from_str(&offered).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, e.into())
            })?,
            of: row.get(2)?,
            why: row.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}
