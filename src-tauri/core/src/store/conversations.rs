//! Conversations: create, rename, delete, list newest first, load with their messages.
//! Titles arrive here already normalised by the caller ([`crate::app`]).

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::Serialize;

use super::{new_id, now_ms, Cached, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Conversation {
    pub id: String,
    pub title: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// The provider (by name) and model picked for this conversation, if any.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Every tool call runs without asking (shown as a badge).
    pub auto_approve: bool,
    /// What the model is told before the conversation (empty: nothing).
    pub system_prompt: String,
    /// The profile this conversation follows (its prompt, model, tools and limits), if any.
    pub profile_id: Option<String>,
    /// The project it is in, if any (its instructions are added to the system prompt).
    pub project_id: Option<String>,
    /// Set on a lane of a comparison: the conversation it answers for (hidden from lists; the
    /// window never sees a lane).
    #[serde(skip)]
    #[ts(skip)]
    pub lane_of: Option<String>,
}

const COLUMNS: &str =
    "id, title, created_at, updated_at, provider, model, auto_approve, system_prompt, profile_id, lane_of, \
     project_id";

/// A conversation nobody used: made by New, not named, no system prompt written, no message
/// and no draft (a lane of a comparison is never one: it has messages, and is its own's).
const UNUSED: &str = "kept = 0 AND lane_of IS NULL \
     AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = conversations.id) \
     AND NOT EXISTS (SELECT 1 FROM drafts d WHERE d.conversation_id = conversations.id)";

/// The `updated_at` a conversation gets when something happens in it, given the SQL parameter
/// that holds now: strictly later than every other conversation's, so it moves to the top even
/// within one millisecond.
pub(super) fn touch(now_param: &str) -> String {
    format!("max({now_param}, (SELECT COALESCE(MAX(updated_at), 0) + 1 FROM conversations))")
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: row.get(0)?,
        title: row.get(1)?,
        created_at: row.get(2)?,
        updated_at: row.get(3)?,
        provider: row.get(4)?,
        model: row.get(5)?,
        auto_approve: row.get(6)?,
        system_prompt: row.get(7)?,
        profile_id: row.get(8)?,
        lane_of: row.get(9)?,
        project_id: row.get(10)?,
    })
}

pub(super) fn get(conn: &Connection, id: &str) -> Result<Conversation, StoreError> {
    conn.query_row_cached(
        &format!("SELECT {COLUMNS} FROM conversations WHERE id = ?1"),
        [id],
        from_row,
    )
    .optional()?
    .ok_or_else(|| not_found(id))
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound {
        what: format!("conversation {id}"),
    }
}

/// The conversation after an `UPDATE` that changed `changed` rows; none means no such id.
fn after_update(conn: &Connection, changed: usize, id: &str) -> Result<Conversation, StoreError> {
    if changed == 0 {
        return Err(not_found(id));
    }
    get(conn, id)
}

/// Writes a new conversation (a new id, returned) with the default tool switches, made now
/// unless `created_at` says when. `updated_at` is touched: a new conversation is the newest even right after a burst of renames pushed
/// other clocks past now.
pub(super) fn insert(
    tx: &rusqlite::Transaction<'_>,
    title: &str,
    created_at: Option<i64>,
    provider: Option<&str>,
    model: Option<&str>,
    system_prompt: &str,
    kept: bool,
) -> rusqlite::Result<String> {
    let id = new_id();
    let now = now_ms();
    tx.execute(
        &format!(
            "INSERT INTO conversations (id, title, created_at, updated_at, provider, model, \
             system_prompt, kept) VALUES (?1, ?2, ?3, {}, ?5, ?6, ?7, ?8)",
            touch("?4")
        ),
        params![
            id,
            title,
            created_at.unwrap_or(now),
            now,
            provider,
            model,
            system_prompt,
            kept
        ],
    )?;
    tx.execute(
        "INSERT INTO conversation_tools (conversation_id, server, tool, enabled) \
         SELECT ?1, server, tool, enabled FROM default_tools",
        [&id],
    )?;
    Ok(id)
}

impl Store {
    /// A conversation with no system prompt, named `title` (kept: see
    /// [`Store::discard_if_unused`]).
    ///
    /// # Errors
    /// A failed query.
    pub async fn create_conversation(&self, title: String) -> Result<Conversation, StoreError> {
        self.create_conversation_with(title, String::new(), true)
            .await
    }

    /// A conversation; `named`: `title` is the person's (kept even unused), not the default.
    ///
    /// # Errors
    /// A failed query.
    pub async fn create_conversation_with(
        &self,
        title: String,
        system_prompt: String,
        named: bool,
    ) -> Result<Conversation, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let id = insert(&tx, &title, None, None, None, &system_prompt, named)?;
            let created = get(&tx, &id)?;
            tx.commit()?;
            Ok(created)
        })
        .await
    }

    /// Renames a conversation; the rename counts as activity, so it moves to the top.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn rename_conversation(
        &self,
        id: String,
        title: String,
    ) -> Result<Conversation, StoreError> {
        self.call(move |conn| {
            let changed = conn.execute(
                &format!(
                    "UPDATE conversations SET title = ?2, kept = 1, updated_at = {} WHERE id = ?1",
                    touch("?3")
                ),
                params![id, title, now_ms()],
            )?;
            after_update(conn, changed, &id)
        })
        .await
    }

    /// Sets the provider and model a conversation talks to. Not activity: the order of the list
    /// does not change.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn set_conversation_model(
        &self,
        id: String,
        provider: Option<String>,
        model: Option<String>,
    ) -> Result<Conversation, StoreError> {
        self.call(move |conn| {
            let changed = conn.execute(
                "UPDATE conversations SET provider = ?2, model = ?3 WHERE id = ?1",
                params![id, provider, model],
            )?;
            after_update(conn, changed, &id)
        })
        .await
    }

    /// Sets what the model is told before the conversation. Not activity, but the person's
    /// work: the conversation is kept from now on, even with no message.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn set_system_prompt(
        &self,
        id: String,
        system_prompt: String,
    ) -> Result<Conversation, StoreError> {
        self.call(move |conn| {
            let changed = conn.execute(
                "UPDATE conversations SET system_prompt = ?2, kept = 1 WHERE id = ?1",
                params![id, system_prompt],
            )?;
            after_update(conn, changed, &id)
        })
        .await
    }

    /// Deletes a conversation with its messages, tool runs and tool toggles.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn delete_conversation(&self, id: String) -> Result<(), StoreError> {
        let dir = self.data_dir.clone();
        self.call(move |conn| {
            // Results too large for the database live in files of their own: they go too.
            let mut files = result_files(conn, &id, 0, i64::MAX)?;
            files.extend(super::branches::kept_result_files(
                conn,
                "conversation_id = ?1",
                [&id],
            )?);
            let changed = conn.execute("DELETE FROM conversations WHERE id = ?1", [&id])?;
            if changed == 0 {
                return Err(not_found(&id));
            }
            remove_result_files(dir.as_deref(), &files);
            super::sweep_attachments(conn, dir.as_deref())?;
            Ok(())
        })
        .await
    }

    /// Deletes conversation `id` if it was never used: made by New and left with no message,
    /// no draft, no name and no system prompt of the person's. True when it went (an id that is
    /// already gone is not an error: false).
    ///
    /// # Errors
    /// A failed query.
    pub async fn discard_if_unused(&self, id: String) -> Result<bool, StoreError> {
        self.call(move |conn| {
            let gone = conn.execute(
                &format!("DELETE FROM conversations WHERE id = ?1 AND {UNUSED}"),
                [&id],
            )?;
            Ok(gone == 1)
        })
        .await
    }

    /// Deletes every conversation that was never used ([`Store::discard_if_unused`]): those a
    /// window left open when it closed. Returns how many went.
    ///
    /// # Errors
    /// A failed query.
    pub async fn discard_unused(&self) -> Result<usize, StoreError> {
        self.call(
            |conn| Ok(conn.execute(&format!("DELETE FROM conversations WHERE {UNUSED}"), [])?),
        )
        .await
    }

    /// Every conversation, most recently active first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn list_conversations(&self) -> Result<Vec<Conversation>, StoreError> {
        self.call(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM conversations WHERE lane_of IS NULL \
                 ORDER BY updated_at DESC, id DESC"
            ))?;
            let rows = stmt.query_map([], from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Which of `titles` a conversation (not a comparison's lane) already has.
    ///
    /// # Errors
    /// A failed query.
    pub async fn titles_taken(&self, titles: Vec<String>) -> Result<Vec<String>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT 1 FROM conversations WHERE title = ?1 AND lane_of IS NULL LIMIT 1",
            )?;
            let mut taken = Vec::new();
            for title in titles {
                if stmt.exists([&title])? {
                    taken.push(title);
                }
            }
            Ok(taken)
        })
        .await
    }

    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn get_conversation(&self, id: String) -> Result<Conversation, StoreError> {
        self.call(move |conn| get(conn, &id)).await
    }
}

/// The files (under the data folder) that keep the results of conversation `id`'s calls made
/// by the answers numbered `first..end`, where a result was too large for the database.
pub(super) fn result_files(
    conn: &Connection,
    id: &str,
    first: i64,
    end: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT json_extract(r.result, '$.file') FROM tool_runs r \
             JOIN messages m ON m.id = r.message_id AND m.conversation_id = r.conversation_id \
             WHERE r.conversation_id = ?1 AND m.seq >= ?2 AND m.seq < ?3 AND json_valid(r.result) \
             AND json_extract(r.result, '$.switchboard') IS NOT NULL \
             AND json_extract(r.result, '$.file') IS NOT NULL",
        )?
        .query_map(params![id, first, end], |row| row.get(0))?
        .collect::<Result<_, _>>()?)
}

/// Removes result files named by [`result_files`] once their records are gone (a file that
/// cannot be removed stays: nothing points at it any more).
pub(super) fn remove_result_files(dir: Option<&std::path::Path>, files: &[String]) {
    if let Some(dir) = dir {
        for file in files.iter().filter(|f| is_result_file(f)) {
            let _ = std::fs::remove_file(dir.join(file));
        }
    }
}

/// A file name a record may point at: `results/<id>.json`, nothing that leaves the folder.
pub(super) fn is_result_file(name: &str) -> bool {
    name.strip_prefix("results/")
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
}
