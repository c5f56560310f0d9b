//! Summaries of a conversation's earlier messages (issue 55). When a conversation's history no
//! longer fits the model's window, its oldest turns are summarised by the model into one text
//! kept here; the messages themselves stay (in the conversation, in search, in exports). A
//! summary covers every message up to `through_message_id` (including what earlier summaries
//! covered); the newest summary whose last message is still in the conversation is the one in
//! force (an edit that sets later messages aside sets aside the summaries that covered them).

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{new_id, now_ms, Store, StoreError};

/// One summary of a conversation's earlier messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Summary {
    pub id: String,
    pub conversation_id: String,
    /// The last message it covers; it covers every message before it too.
    pub through_message_id: String,
    pub text: String,
    /// How many messages it covers in its own words (beside those an earlier summary covered).
    pub summarised: u32,
    /// How many messages it covers only by saying they were left out (they were too many to
    /// summarise at once).
    pub left_out: u32,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub created_at: i64,
}

/// A summary to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSummary {
    pub conversation_id: String,
    pub through_message_id: String,
    pub text: String,
    pub summarised: u32,
    pub left_out: u32,
    pub provider: Option<String>,
    pub model: Option<String>,
}

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Summary> {
    Ok(Summary {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        through_message_id: row.get(2)?,
        text: row.get(3)?,
        summarised: row.get(4)?,
        left_out: row.get(5)?,
        provider: row.get(6)?,
        model: row.get(7)?,
        created_at: row.get(8)?,
    })
}

impl Store {
    /// Keeps a summary.
    ///
    /// # Errors
    /// A failed write (no such conversation included).
    pub async fn add_summary(&self, summary: NewSummary) -> Result<Summary, StoreError> {
        let kept = Summary {
            id: new_id(),
            conversation_id: summary.conversation_id,
            through_message_id: summary.through_message_id,
            text: summary.text,
            summarised: summary.summarised,
            left_out: summary.left_out,
            provider: summary.provider,
            model: summary.model,
            created_at: now_ms(),
        };
        let row = kept.clone();
        self.call(move |conn| insert(conn, &row)).await?;
        Ok(kept)
    }

    /// Every summary of a conversation, oldest first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn summaries(&self, conversation_id: String) -> Result<Vec<Summary>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, conversation_id, through_message_id, text, summarised, left_out, \
                 provider, model, created_at FROM summaries WHERE conversation_id = ?1 \
                 ORDER BY created_at, rowid",
            )?;
            let rows = stmt.query_map([&conversation_id], from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }
}

/// Writes `row` as it is (an import's, or one just made).
pub(super) fn insert(conn: &rusqlite::Connection, row: &Summary) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO summaries (id, conversation_id, through_message_id, text, summarised, \
         left_out, provider, model, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        row.id,
        row.conversation_id,
        row.through_message_id,
        row.text,
        row.summarised,
        row.left_out,
        row.provider,
        row.model,
        row.created_at
    ])?;
    Ok(())
}

/// The summary in force for `messages` (a conversation's, in order): the newest of `summaries`
/// whose last message is among them, with the index of that message.
pub fn in_force<'s>(
    summaries: &'s [Summary],
    messages: &[super::Message],
) -> Option<(&'s Summary, usize)> {
    summaries.iter().rev().find_map(|s| {
        messages
            .iter()
            .position(|m| m.id == s.through_message_id)
            .map(|at| (s, at))
    })
}
