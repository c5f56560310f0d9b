//! Memory (issue 62): short facts kept across conversations, each in a project's memory or the
//! person's own (no project), with the conversation it came from while that is kept. Listed
//! newest first, edited, deleted, and the ones relevant to a question found: all of them while
//! they are few, else those that share the question's words, best first.

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::Serialize;

use super::{new_id, now_ms, Store, StoreError};

/// A fact kept in memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Memory {
    pub id: String,
    /// The project whose memory it is in; none: the person's own.
    pub project_id: Option<String>,
    pub text: String,
    /// The conversation it came from (none: written by the person, or that conversation was
    /// deleted), and its title.
    pub conversation_id: Option<String>,
    pub conversation_title: Option<String>,
    /// Kept by the model in a conversation (which may since have been deleted); else written
    /// by the person.
    pub from_conversation: bool,
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub updated_at: i64,
}

/// Which memory: a project's, or the person's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryScope {
    Own,
    Project(String),
}

impl MemoryScope {
    fn project(&self) -> Option<&str> {
        match self {
            MemoryScope::Own => None,
            MemoryScope::Project(id) => Some(id),
        }
    }
}

const SELECT: &str =
    "SELECT m.id, m.project_id, m.text, m.conversation_id, c.title, m.created_at, \
     m.updated_at, m.from_conversation FROM memories m LEFT JOIN conversations c ON c.id = m.conversation_id";

/// Facts up to this many are all given; beyond, the relevant ones.
pub const ALL_WHILE_AT_MOST: usize = 20;

fn from_row(row: &Row<'_>) -> rusqlite::Result<Memory> {
    Ok(Memory {
        id: row.get(0)?,
        project_id: row.get(1)?,
        text: row.get(2)?,
        conversation_id: row.get(3)?,
        conversation_title: row.get(4)?,
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
        from_conversation: row.get(7)?,
    })
}

fn get(conn: &Connection, id: &str) -> Result<Memory, StoreError> {
    conn.query_row(&format!("{SELECT} WHERE m.id = ?1"), [id], from_row)
        .optional()?
        .ok_or_else(|| StoreError::NotFound {
            what: format!("memory {id}"),
        })
}

impl Store {
    /// Keeps a fact in `scope`'s memory, from `conversation` if one.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for a project that is not there; a failed write.
    pub async fn add_memory(
        &self,
        scope: MemoryScope,
        text: String,
        conversation: Option<String>,
    ) -> Result<Memory, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            if let Some(project) = scope.project() {
                let there: bool = tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?1)",
                    [project],
                    |row| row.get(0),
                )?;
                if !there {
                    return Err(StoreError::NotFound {
                        what: format!("project {project}"),
                    });
                }
            }
            let (id, now) = (new_id(), now_ms());
            tx.execute(
                "INSERT INTO memories (id, project_id, text, conversation_id, created_at, \
                 updated_at, from_conversation) VALUES (?1, ?2, ?3, \
                 (SELECT id FROM conversations WHERE id = ?4), ?5, ?5, ?4 IS NOT NULL)",
                params![id, scope.project(), text, conversation, now],
            )?;
            let made = get(&tx, &id)?;
            tx.commit()?;
            Ok(made)
        })
        .await
    }

    /// The facts of one memory (`Some`), or of every memory (`None`), newest first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn list_memories(
        &self,
        scope: Option<MemoryScope>,
    ) -> Result<Vec<Memory>, StoreError> {
        self.call(move |conn| {
            let (filter, project) = match &scope {
                None => ("1", None),
                Some(MemoryScope::Own) => ("m.project_id IS NULL", None),
                Some(MemoryScope::Project(id)) => ("m.project_id = ?1", Some(id.clone())),
            };
            let mut stmt = conn.prepare_cached(&format!(
                "{SELECT} WHERE {filter} ORDER BY m.updated_at DESC, m.id DESC"
            ))?;
            let rows = match &project {
                Some(id) => stmt.query_map([id], from_row)?,
                None => stmt.query_map([], from_row)?,
            };
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    /// Changes a fact's words.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed write.
    pub async fn update_memory(&self, id: String, text: String) -> Result<Memory, StoreError> {
        self.call(move |conn| {
            let changed = conn.execute(
                "UPDATE memories SET text = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, text, now_ms()],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound {
                    what: format!("memory {id}"),
                });
            }
            get(conn, &id)
        })
        .await
    }

    /// Deletes a fact; false when there was none of that id.
    ///
    /// # Errors
    /// A failed write.
    pub async fn delete_memory(&self, id: String) -> Result<bool, StoreError> {
        self.call(move |conn| Ok(conn.execute("DELETE FROM memories WHERE id = ?1", [&id])? > 0))
            .await
    }

    /// The facts of `scope`'s memory relevant to a question of `words` (see
    /// [`crate::knowledge::query_words`]): all of them while there are at most
    /// [`ALL_WHILE_AT_MOST`], else at most that many that share its words, best first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn relevant_memories(
        &self,
        scope: MemoryScope,
        words: Vec<String>,
    ) -> Result<Vec<Memory>, StoreError> {
        self.call(move |conn| {
            let project = scope.project().map(str::to_owned);
            let count: i64 = conn.query_row(
                "SELECT COUNT(*) FROM memories WHERE project_id IS ?1",
                [&project],
                |row| row.get(0),
            )?;
            let few = usize::try_from(count).unwrap_or(usize::MAX) <= ALL_WHILE_AT_MOST;
            let limit = i64::try_from(ALL_WHILE_AT_MOST).unwrap_or(i64::MAX);
            if few {
                let mut stmt = conn.prepare_cached(&format!(
                    "{SELECT} WHERE m.project_id IS ?1 ORDER BY m.updated_at DESC LIMIT ?2"
                ))?;
                let rows = stmt.query_map(params![project, limit], from_row)?;
                return Ok(rows.collect::<Result<_, _>>()?);
            }
            if words.is_empty() {
                return Ok(Vec::new());
            }
            let query = crate::knowledge::fts_query(&words, true);
            let mut stmt = conn.prepare_cached(&format!(
                "{SELECT} JOIN memory_search s ON s.rowid = m.rowid \
                 WHERE memory_search MATCH ?1 AND m.project_id IS ?2 ORDER BY s.rank LIMIT ?3"
            ))?;
            let rows = stmt.query_map(params![query, project, limit], from_row)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}
