//! Messages of a conversation, in the shape every provider maps from: role, nullable content,
//! tool calls as JSON, the id of the call a tool message answers, plus status and usage.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::{conversations, new_id, now_ms, Cached, Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    System,
    Tool,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }

    pub(super) fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "system" => Role::System,
            "tool" => Role::Tool,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    Streaming,
    Complete,
    Interrupted,
    Error,
}

impl MessageStatus {
    fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Streaming => "streaming",
            MessageStatus::Complete => "complete",
            MessageStatus::Interrupted => "interrupted",
            MessageStatus::Error => "error",
        }
    }

    fn parse(s: &str) -> Option<MessageStatus> {
        Some(match s {
            "streaming" => MessageStatus::Streaming,
            "complete" => MessageStatus::Complete,
            "interrupted" => MessageStatus::Interrupted,
            "error" => MessageStatus::Error,
            _ => return None,
        })
    }
}

/// A tool call an answer made, as kept: its id, the tool's name (as the model was given it) and
/// exactly the argument text the model sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct StoredCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl StoredCall {
    /// The calls kept in `value` (a JSON array), leniently: an entry without a string id and
    /// name is left out, and arguments that are not text are none.
    pub fn read_all(value: &serde_json::Value) -> Vec<StoredCall> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                Some(StoredCall {
                    id: c.get("id")?.as_str()?.to_owned(),
                    name: c.get("name")?.as_str()?.to_owned(),
                    arguments: c
                        .get("arguments")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                })
            })
            .collect()
    }
}

/// Why an answer ended, as kept: what its provider said, or `stopped` when the person stopped
/// it. A reason this version does not know reads as `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Stopped,
    #[serde(other)]
    Other,
}

impl Finish {
    pub fn as_str(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::ToolCalls => "tool_calls",
            Finish::Length => "length",
            Finish::ContentFilter => "content_filter",
            Finish::Stopped => "stopped",
            Finish::Other => "other",
        }
    }

    pub fn parse(text: &str) -> Finish {
        match text {
            "stop" => Finish::Stop,
            "tool_calls" => Finish::ToolCalls,
            "length" => Finish::Length,
            "content_filter" => Finish::ContentFilter,
            "stopped" => Finish::Stopped,
            _ => Finish::Other,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Message {
    pub id: String,
    pub conversation_id: String,
    pub role: Role,
    pub content: Option<String>,
    pub created_at: i64,
    pub tool_calls: Option<Vec<StoredCall>>,
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
    pub finish_reason: Option<Finish>,
    pub status: MessageStatus,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    /// The model's reasoning text, where it showed any.
    pub reasoning: Option<String>,
    /// Why an answer failed (status `error`), as the person reads it.
    pub error: Option<String>,
    /// A tool message whose result is an error.
    pub is_error: bool,
    /// Set when `content` is only the start of a long tool result ([`TOOL_PREVIEW_CHARS`]):
    /// how many characters the whole has. [`Store::message_content`] reads the whole.
    pub full_length: Option<i64>,
    /// Files attached to a message of the person's (their bytes are in the attachments folder).
    pub attachments: Vec<crate::attachments::Attachment>,
    /// What the answer cost in pico-dollars, when its model had a price.
    #[ts(type = "number | null")]
    pub cost_pico: Option<i64>,
    /// The blocks of an answer its provider ran itself (Anthropic's tool search and its
    /// result), as they came: given back to that provider with the answer. Not shown.
    #[serde(skip)]
    #[ts(skip)]
    pub server_blocks: Option<serde_json::Value>,
    /// What of its project's files and its memory the answer's request was given, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub given: Option<crate::knowledge::KnowledgeUse>,
}

/// How much of a tool result reaches the window with its message; the rest is read on demand.
pub const TOOL_PREVIEW_CHARS: usize = 4_000;

impl Message {
    /// The message as a window shows it: a tool result cut to its first
    /// [`TOOL_PREVIEW_CHARS`] characters, with its whole length noted.
    #[must_use]
    pub fn preview(mut self) -> Self {
        if self.role == Role::Tool {
            if let Some(content) = self.content.take() {
                let (shown, whole) = Self::preview_of(&content);
                self.content = Some(if whole.is_some() { shown } else { content });
                self.full_length = whole;
            }
        }
        self
    }

    /// The first [`TOOL_PREVIEW_CHARS`] characters of a tool result, and the whole length when
    /// that is not all of it.
    #[must_use]
    pub fn preview_of(content: &str) -> (String, Option<i64>) {
        match content.char_indices().nth(TOOL_PREVIEW_CHARS) {
            Some((cut, _)) => (
                content[..cut].to_owned(),
                Some(i64::try_from(content.chars().count()).unwrap_or(i64::MAX)),
            ),
            None => (content.to_owned(), None),
        }
    }
}

/// What a caller supplies to append a message; ids, order and time are the store's.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub role: Role,
    pub content: Option<String>,
    pub tool_calls: Option<Vec<StoredCall>>,
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
    pub finish_reason: Option<Finish>,
    pub status: MessageStatus,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub reasoning: Option<String>,
    pub error: Option<String>,
    pub is_error: bool,
    pub attachments: Vec<crate::attachments::Attachment>,
    /// What of its project's files and its memory an answer was given ([`Message::given`]).
    pub given: Option<crate::knowledge::KnowledgeUse>,
}

impl NewMessage {
    /// A complete message with only a role and text.
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: None,
            tool_call_id: None,
            name: None,
            finish_reason: None,
            status: MessageStatus::Complete,
            provider: None,
            model: None,
            input_tokens: None,
            output_tokens: None,
            reasoning: None,
            error: None,
            is_error: false,
            attachments: Vec::new(),
            given: None,
        }
    }
}

/// What changes on a message after it was appended: the text a stream has produced so far, and
/// at the end its status, tool calls, finish reason and usage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageUpdate {
    pub content: Option<String>,
    pub reasoning: Option<String>,
    pub tool_calls: Option<Vec<StoredCall>>,
    pub finish_reason: Option<Finish>,
    pub status: Option<MessageStatus>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub error: Option<String>,
    pub cost_pico: Option<i64>,
    /// The blocks the provider ran itself ([`Message::server_blocks`]).
    pub server_blocks: Option<serde_json::Value>,
}

const COLUMNS: &str = "id, conversation_id, role, content, created_at, tool_calls, tool_call_id, \
     name, finish_reason, status, provider, model, input_tokens, output_tokens, reasoning, error, \
     is_error, NULL, attachments, cost_pico, server_blocks, given";

/// [`COLUMNS`] for a window: a tool result cut to [`TOOL_PREVIEW_CHARS`] by SQLite, so a long
/// one is never read whole.
pub(super) fn preview_columns() -> String {
    let n = TOOL_PREVIEW_CHARS;
    format!(
        "id, conversation_id, role, \
         CASE WHEN role = 'tool' AND length(content) > {n} THEN substr(content, 1, {n}) ELSE content END, \
         created_at, tool_calls, tool_call_id, name, finish_reason, status, provider, model, \
         input_tokens, output_tokens, reasoning, error, is_error, \
         CASE WHEN role = 'tool' AND length(content) > {n} THEN length(content) END, attachments, \
         cost_pico, server_blocks, given"
    )
}

/// The calls as the `tool_calls` column keeps them (a JSON array).
fn calls_text(calls: &[StoredCall]) -> String {
    serde_json::to_string(calls).unwrap_or_else(|_| "[]".to_owned())
}

pub(super) fn from_row(row: &Row<'_>) -> rusqlite::Result<Message> {
    let bad = |i: usize, what: &str| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            format!("unknown {what}").into(),
        )
    };
    let role: String = row.get(2)?;
    let status: String = row.get(9)?;
    let tool_calls: Option<String> = row.get(5)?;
    let attachments: Option<String> = row.get(18)?;
    Ok(Message {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        role: Role::parse(&role).ok_or_else(|| bad(2, "role"))?,
        content: row.get(3)?,
        created_at: row.get(4)?,
        tool_calls: tool_calls
            .map(|t| serde_json::from_str(&t).map(|v| StoredCall::read_all(&v)))
            .transpose()
            .map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(5, rusqlite::types::Type::Text, e.into())
            })?,
        tool_call_id: row.get(6)?,
        name: row.get(7)?,
        finish_reason: row
            .get::<_, Option<String>>(8)?
            .as_deref()
            .map(Finish::parse),
        status: MessageStatus::parse(&status).ok_or_else(|| bad(9, "status"))?,
        provider: row.get(10)?,
        model: row.get(11)?,
        input_tokens: row.get(12)?,
        output_tokens: row.get(13)?,
        reasoning: row.get(14)?,
        error: row.get(15)?,
        is_error: row.get(16)?,
        full_length: row.get(17)?,
        attachments: attachments
            .map(|a| serde_json::from_str(&a))
            .transpose()
            .map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(18, rusqlite::types::Type::Text, e.into())
            })?
            .unwrap_or_default(),
        cost_pico: row.get(19)?,
        server_blocks: row
            .get::<_, Option<String>>(20)?
            .and_then(|b| serde_json::from_str(&b).ok()),
        given: row
            .get::<_, Option<String>>(21)?
            .and_then(|g| serde_json::from_str(&g).ok()),
    })
}

impl Store {
    /// Every answer left `streaming` becomes `interrupted`, whoever writes it; returns how
    /// many. For a process that knows nothing else writes (a test that plays a crash); the app
    /// calls [`Store::recover_unfinished`].
    ///
    /// # Errors
    /// A failed query.
    pub async fn mark_unfinished_as_interrupted(&self) -> Result<usize, StoreError> {
        self.call(|conn| {
            Ok(conn.execute(
                "UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'",
                [],
            )?)
        })
        .await
    }

    /// Appends a message to a conversation and marks the conversation active.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the conversation does not exist.
    pub async fn append_message(
        &self,
        conversation_id: String,
        message: NewMessage,
    ) -> Result<Message, StoreError> {
        let writer = self.writer.id().to_owned();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let saved = insert(&tx, &conversation_id, &message)?;
            if saved.status == MessageStatus::Streaming {
                tx.execute_cached(
                    "UPDATE messages SET writer = ?1 WHERE id = ?2",
                    [&writer, &saved.id],
                )?;
            }
            tx.commit()?;
            Ok(saved)
        })
        .await
    }

    /// Changes what `update` names on message `id` (a field left `None` keeps its value) and
    /// returns the message as it is now.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such message.
    pub async fn update_message(
        &self,
        id: String,
        update: MessageUpdate,
    ) -> Result<Message, StoreError> {
        self.call(move |conn| {
            let tool_calls = update.tool_calls.as_deref().map(calls_text);
            let server_blocks = update.server_blocks.as_ref().map(ToString::to_string);
            let changed = conn.execute_cached(
                "UPDATE messages SET content = COALESCE(?2, content), \
                 reasoning = COALESCE(?3, reasoning), tool_calls = COALESCE(?4, tool_calls), \
                 finish_reason = COALESCE(?5, finish_reason), status = COALESCE(?6, status), \
                 input_tokens = COALESCE(?7, input_tokens), \
                 output_tokens = COALESCE(?8, output_tokens), error = COALESCE(?9, error), \
                 cost_pico = COALESCE(?10, cost_pico), \
                 server_blocks = COALESCE(?11, server_blocks) WHERE id = ?1",
                params![
                    id,
                    update.content,
                    update.reasoning,
                    tool_calls,
                    update.finish_reason.map(Finish::as_str),
                    update.status.map(MessageStatus::as_str),
                    update.input_tokens,
                    update.output_tokens,
                    update.error,
                    update.cost_pico,
                    server_blocks,
                ],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound {
                    what: format!("message {id}"),
                });
            }
            Ok(conn.query_row_cached(
                &format!("SELECT {COLUMNS} FROM messages WHERE id = ?1"),
                [&id],
                from_row,
            )?)
        })
        .await
    }

    /// One message of a conversation, in full.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn get_message(
        &self,
        conversation_id: String,
        id: String,
    ) -> Result<Message, StoreError> {
        self.call(move |conn| {
            conn.query_row_cached(
                &format!("SELECT {COLUMNS} FROM messages WHERE id = ?1 AND conversation_id = ?2"),
                [&id, &conversation_id],
                from_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("message {id}"),
            })
        })
        .await
    }

    /// The messages of a conversation in the order they were written.
    ///
    /// # Errors
    /// A failed query.
    pub async fn list_messages(&self, conversation_id: String) -> Result<Vec<Message>, StoreError> {
        self.call(move |conn| tail(conn, &conversation_id, 0)).await
    }

    /// The text of the newest message of the person's in a conversation, if any.
    ///
    /// # Errors
    /// A failed query.
    pub async fn last_question(
        &self,
        conversation_id: String,
    ) -> Result<Option<String>, StoreError> {
        self.call(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT content FROM messages WHERE conversation_id = ?1 AND role = 'user' \
                     ORDER BY seq DESC LIMIT 1",
                    [&conversation_id],
                    |row| row.get::<_, Option<String>>(0),
                )
                .optional()?
                .flatten())
        })
        .await
    }

    /// The role of message `message_id` and of the message before it, if any.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the conversation has no such message; a failed query.
    pub async fn role_and_previous(
        &self,
        conversation_id: String,
        message_id: String,
    ) -> Result<(Role, Option<Role>), StoreError> {
        self.call(move |conn| {
            let found: Option<(String, Option<String>)> = conn
                .query_row(
                    "SELECT m.role, (SELECT p.role FROM messages p WHERE p.conversation_id = m.conversation_id \
                       AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1) \
                     FROM messages m WHERE m.conversation_id = ?1 AND m.id = ?2",
                    params![conversation_id, message_id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            let (role, before) = found.ok_or_else(|| StoreError::NotFound {
                what: format!("message {message_id}"),
            })?;
            let parse = |text: &str| {
                Role::parse(text).ok_or_else(|| StoreError::InvalidRow {
                    detail: format!("role {text}"),
                })
            };
            Ok((parse(&role)?, before.as_deref().map(parse).transpose()?))
        })
        .await
    }

    /// Deletes the question `message_id` and everything that answered it: the messages after it
    /// up to the next question, and their calls' records (and result files). Returns the ids of
    /// the messages deleted, the question first.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the conversation has no such question; a failed query.
    pub async fn delete_turn(
        &self,
        conversation_id: String,
        message_id: String,
    ) -> Result<Vec<String>, StoreError> {
        let dir = self.data_dir.clone();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let first: i64 = tx
                .query_row(
                    "SELECT seq FROM messages WHERE conversation_id = ?1 AND id = ?2 AND role = 'user'",
                    params![conversation_id, message_id],
                    |row| row.get(0),
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound {
                    what: format!("question {message_id}"),
                })?;
            let end: i64 = tx.query_row(
                "SELECT COALESCE(MIN(seq), ?3) FROM messages \
                 WHERE conversation_id = ?1 AND role = 'user' AND seq > ?2",
                params![conversation_id, first, i64::MAX],
                |row| row.get(0),
            )?;
            let mut files = conversations::result_files(&tx, &conversation_id, first, end)?;
            // A late result of an earlier turn's call that landed in this turn stays.
            let turn = format!(
                "conversation_id = ?1 AND seq >= ?2 AND seq < ?3 AND {}",
                super::late_results::not_late_result_of_calls("<")
            );
            let mut ids: Vec<String> = tx
                .prepare(&format!(
                    "SELECT id FROM messages WHERE {turn} ORDER BY seq"
                ))?
                .query_map(params![conversation_id, first, end], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            // The late results of this turn's calls that landed in a later turn go too.
            let late_of_turn = super::late_results::LATE_RESULTS_OF_TURN;
            let later: Vec<String> = tx
                .prepare(&format!(
                    "SELECT id FROM messages WHERE {late_of_turn} AND seq >= ?3 ORDER BY seq"
                ))?
                .query_map(params![conversation_id, first, end], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            tx.execute(
                &format!("DELETE FROM messages WHERE {late_of_turn} AND seq >= ?3"),
                params![conversation_id, first, end],
            )?;
            ids.extend(later);
            tx.execute(
                "DELETE FROM tool_runs WHERE conversation_id = ?1 AND message_id IN \
                 (SELECT id FROM messages WHERE conversation_id = ?1 AND seq >= ?2 AND seq < ?3)",
                params![conversation_id, first, end],
            )?;
            // Branch points whose branches start inside the turn go with it (their other
            // branches too, and the result files those point at); one just before the next
            // question stays where it is.
            files.extend(super::branches::kept_result_files(
                &tx,
                TURN_POINTS,
                params![conversation_id, first, end],
            )?);
            tx.execute(
                &format!("DELETE FROM message_branches WHERE {TURN_POINTS}"),
                params![conversation_id, first, end],
            )?;
            tx.execute(
                &format!("DELETE FROM messages WHERE {turn}"),
                params![conversation_id, first, end],
            )?;
            // A summary of earlier messages may hold what the turn said: the summaries go too
            // (the model reads the messages, or a summary made again, from now on).
            tx.execute(
                "DELETE FROM summaries WHERE conversation_id = ?1",
                params![conversation_id],
            )?;
            tx.commit()?;
            conversations::remove_result_files(dir.as_deref(), &files);
            super::sweep_attachments(conn, dir.as_deref())?;
            Ok(ids)
        })
        .await
    }

    /// The whole text of message `id` of a conversation (a tool result a page showed in part).
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such message; a failed query.
    pub async fn message_content(
        &self,
        conversation_id: String,
        id: String,
    ) -> Result<Option<String>, StoreError> {
        self.call(move |conn| {
            conn.query_row_cached(
                "SELECT content FROM messages WHERE conversation_id = ?1 AND id = ?2",
                params![conversation_id, id],
                |row| row.get(0),
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("message {id}"),
            })
        })
        .await
    }

    /// Adds `files` to the files message `id` of a conversation carries (one already there is
    /// not added twice); returns the message's files as they are now.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such message; a failed query.
    pub async fn add_attachments(
        &self,
        conversation_id: String,
        id: String,
        files: Vec<crate::attachments::Attachment>,
    ) -> Result<Vec<crate::attachments::Attachment>, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let stored: Option<String> = tx
                .query_row(
                    "SELECT attachments FROM messages WHERE conversation_id = ?1 AND id = ?2",
                    params![conversation_id, id],
                    |row| row.get(0),
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound {
                    what: format!("message {id}"),
                })?;
            let mut all: Vec<crate::attachments::Attachment> = stored
                .map(|a| serde_json::from_str(&a))
                .transpose()
                .map_err(|e| StoreError::InvalidRow {
                    detail: format!("message {id}'s files: {e}"),
                })?
                .unwrap_or_default();
            for file in files {
                if !all.iter().any(|a| a.sha256 == file.sha256) {
                    all.push(file);
                }
            }
            let text = serde_json::to_string(&all).map_err(|e| StoreError::InvalidRow {
                detail: format!("message {id}'s files: {e}"),
            })?;
            tx.execute(
                "UPDATE messages SET attachments = ?3 WHERE conversation_id = ?1 AND id = ?2",
                params![conversation_id, id, text],
            )?;
            tx.commit()?;
            Ok(all)
        })
        .await
    }
}

/// Inserts `message` at the end of the conversation and marks the conversation active, inside
/// the caller's transaction.
/// The result a call gets when it was started but never ended (its process was killed
/// mid-call): it may have done its work, so the model must not assume it did not.
pub const MAY_HAVE_RUN: &str = "This call was started, but Switchboard stopped (its process ended) before it finished: it may have run, and its outcome is unknown. Check before doing it again.";

/// The result a call gets when Switchboard stopped while the task the server answered it with
/// ran: the task is followed again, and its result comes later in the conversation.
pub const TASK_CUT_OFF: &str = "This call runs as a task on its server. Switchboard stopped (its process ended) while the task ran; it follows the task again, and the task's result will be added to the conversation when it ends. Do not start the same work again.";

/// The branch points of conversation `?1` whose branches start inside the turn of messages
/// numbered `?2..?3`.
const TURN_POINTS: &str = "conversation_id = ?1 AND after_seq >= \
     (SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?1 AND seq < ?2) \
     AND after_seq < (SELECT MAX(seq) FROM messages WHERE conversation_id = ?1 AND seq < ?3)";

/// The messages of a conversation numbered after `after` (all of them after 0), whole, in order.
pub(super) fn tail(
    conn: &rusqlite::Connection,
    conversation_id: &str,
    after: i64,
) -> Result<Vec<Message>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM messages WHERE conversation_id = ?1 AND seq > ?2 ORDER BY seq"
    ))?;
    let rows = stmt.query_map(params![conversation_id, after], from_row)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

pub(super) fn insert(
    tx: &rusqlite::Transaction<'_>,
    conversation_id: &str,
    message: &NewMessage,
) -> Result<Message, StoreError> {
    conversations::get(tx, conversation_id)?;
    let seq: i64 = tx.query_row_cached(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?1",
        [conversation_id],
        |row| row.get(0),
    )?;
    let id = new_id();
    let now = now_ms();
    let tool_calls = message.tool_calls.as_deref().map(calls_text);
    let attachments = (!message.attachments.is_empty())
        .then(|| serde_json::to_string(&message.attachments))
        .transpose()
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
    let given = message
        .given
        .as_ref()
        .filter(|g| !g.is_empty())
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
    tx.execute_cached(
        "INSERT INTO messages (id, conversation_id, seq, role, content, created_at, tool_calls, \
         tool_call_id, name, finish_reason, status, provider, model, input_tokens, output_tokens, \
         reasoning, error, is_error, attachments, given) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, \
         ?19, ?20)",
        params![
            id,
            conversation_id,
            seq,
            message.role.as_str(),
            &message.content,
            now,
            tool_calls,
            &message.tool_call_id,
            &message.name,
            message.finish_reason.map(Finish::as_str),
            message.status.as_str(),
            &message.provider,
            &message.model,
            message.input_tokens,
            message.output_tokens,
            &message.reasoning,
            &message.error,
            message.is_error,
            attachments,
            given,
        ],
    )?;
    tx.execute_cached(
        &format!(
            "UPDATE conversations SET updated_at = {} WHERE id = ?1",
            conversations::touch("?2")
        ),
        params![conversation_id, now],
    )?;
    Ok(tx.query_row_cached(
        &format!("SELECT {COLUMNS} FROM messages WHERE id = ?1"),
        [&id],
        from_row,
    )?)
}
