//! What a window shows of a conversation at a time: a page of its messages (tool results as
//! previews) with the calls their answers made, where branches part among them, and the
//! records of the tools each answer was offered. Above the messages and the tool loop's
//! records, so neither needs the other to make one.

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::{conversations, messages, Cached, Store, StoreError};

/// A run of consecutive messages of one conversation, oldest first, with the tool calls their
/// answers made.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct MessagePage {
    /// The page's messages, then the late results of its calls' tasks that came after it
    /// (kept where the conversation stood when each task ended, maybe pages later).
    pub messages: Vec<super::Message>,
    /// The calls of the answers in `messages` (without their results: those are the tool
    /// messages).
    pub tool_runs: Vec<super::ToolRun>,
    /// The records of the tools offered by the answers in `messages`, where the model was
    /// given a choice of them.
    pub offers: Vec<super::ToolOffer>,
    /// Pass as `before` to read the page before this one; `None` when this page starts at the
    /// conversation's first message.
    pub older: Option<i64>,
    /// Where branches part among `messages` (an edited question, an answer asked for again).
    pub branches: Vec<super::BranchPoint>,
}

impl Store {
    /// About `limit` messages of a conversation that come before the message numbered `before`
    /// (the newest when `None`), as a window shows them ([`super::Message::preview`]). A page never
    /// starts with a tool result: it reaches back to the answer that made the call.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the conversation does not exist; a failed query.
    pub async fn message_page(
        &self,
        conversation_id: String,
        before: Option<i64>,
        limit: u32,
    ) -> Result<MessagePage, StoreError> {
        self.call(move |conn| {
            conversations::get(conn, &conversation_id)?;
            let before = before.unwrap_or(i64::MAX);
            let newest: Option<i64> = conn.query_row_cached(
                "SELECT MAX(seq) FROM messages WHERE conversation_id = ?1 AND seq < ?2",
                params![conversation_id, before],
                |row| row.get(0),
            )?;
            let Some(newest) = newest else {
                return Ok(MessagePage {
                    messages: Vec::new(),
                    tool_runs: Vec::new(),
                    offers: Vec::new(),
                    older: None,
                    branches: Vec::new(),
                });
            };
            // The `limit`-th message back, then back again to one that is not a tool result.
            let first: i64 = conn.query_row_cached(
                "SELECT COALESCE(( \
                   SELECT MAX(seq) FROM messages WHERE conversation_id = ?1 AND role <> 'tool' \
                   AND seq <= COALESCE((SELECT seq FROM messages WHERE conversation_id = ?1 \
                     AND seq <= ?2 ORDER BY seq DESC LIMIT 1 OFFSET ?3), 0)), \
                 (SELECT MIN(seq) FROM messages WHERE conversation_id = ?1))",
                params![conversation_id, newest, i64::from(limit.max(1)) - 1],
                |row| row.get(0),
            )?;
            let mut messages = conn
                .prepare_cached(&format!(
                    "SELECT {} FROM messages WHERE conversation_id = ?1 AND seq BETWEEN ?2 AND ?3 \
                     ORDER BY seq",
                    messages::preview_columns()
                ))?
                .query_map(params![conversation_id, first, newest], messages::from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            // A task's late result lands where the conversation is when the task ends: for
            // a call on this page it may be pages later, so it comes with its call's page.
            let answers: std::collections::HashSet<String> = messages
                .iter()
                .filter(|m| m.role == super::Role::Assistant)
                .map(|m| m.id.clone())
                .collect();
            let late = conn
                .prepare_cached(&format!(
                    "SELECT {} FROM messages WHERE conversation_id = ?1 AND seq > ?2 \
                     AND name = '{}' AND role = 'system' ORDER BY seq",
                    messages::preview_columns(),
                    super::LATE_RESULT
                ))?
                .query_map(params![conversation_id, newest], messages::from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            messages.extend(late.into_iter().filter(|m| {
                super::late_result_call(m).is_some_and(|(answer, _)| answers.contains(answer))
            }));
            let tool_runs = super::tool_loop::runs_between(conn, &conversation_id, first, newest)?;
            let branches = super::branches::points_between(conn, &conversation_id, first, newest)?;
            let offers = super::context::offers_between(conn, &conversation_id, first, newest)?;
            let older: Option<i64> = conn
                .query_row_cached(
                    "SELECT 1 FROM messages WHERE conversation_id = ?1 AND seq < ?2 LIMIT 1",
                    params![conversation_id, first],
                    |row| row.get(0),
                )
                .optional()?
                .map(|_: i64| first);
            Ok(MessagePage {
                messages,
                tool_runs,
                offers,
                older,
                branches,
            })
        })
        .await
    }
}
