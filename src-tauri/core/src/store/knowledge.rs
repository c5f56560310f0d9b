//! A project's knowledge files (issue 62): each file's record and its text as passages, kept in
//! one transaction (a file of the same name in the project is replaced), listed, removed, read
//! whole again (its passages joined), and searched by the words of a question, best first.

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::Serialize;

use super::{new_id, now_ms, Store, StoreError};
use crate::knowledge::FoundPassage;

/// A file of a project, as its list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ProjectFile {
    pub id: String,
    pub name: String,
    pub mime: String,
    #[ts(type = "number")]
    pub size: u64,
    /// Its text's length, in characters.
    #[ts(type = "number")]
    pub chars: u64,
    pub passages: u32,
    #[ts(type = "number")]
    pub added_at: i64,
}

/// A file to keep in a project: its record and its text's passages.
#[derive(Debug, Clone)]
pub struct NewProjectFile {
    pub name: String,
    pub sha256: String,
    pub mime: String,
    pub size: u64,
    pub passages: Vec<String>,
}

const COLUMNS: &str = "id, name, mime, size, chars, passages, added_at";

/// Of the passages that hold every one of a question's words when all are common, how many
/// are ranked.
pub const COMMON_CANDIDATES: i64 = 2_000;

fn from_row(row: &Row<'_>) -> rusqlite::Result<ProjectFile> {
    Ok(ProjectFile {
        id: row.get(0)?,
        name: row.get(1)?,
        mime: row.get(2)?,
        size: u64::try_from(row.get::<_, i64>(3)?).unwrap_or(0),
        chars: u64::try_from(row.get::<_, i64>(4)?).unwrap_or(0),
        passages: row.get(5)?,
        added_at: row.get(6)?,
    })
}

fn project_exists(conn: &Connection, id: &str) -> Result<(), StoreError> {
    let found: Option<i64> = conn
        .query_row("SELECT 1 FROM projects WHERE id = ?1", [id], |row| {
            row.get(0)
        })
        .optional()?;
    found.map(|_| ()).ok_or_else(|| StoreError::NotFound {
        what: format!("project {id}"),
    })
}

impl Store {
    /// Keeps a file's text in a project, replacing a file of the same name.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for no such project; [`StoreError::Conflict`] when the project
    /// has as many files as it may; a failed write.
    pub async fn add_project_file(
        &self,
        project_id: String,
        file: NewProjectFile,
        max_files: usize,
    ) -> Result<ProjectFile, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            project_exists(&tx, &project_id)?;
            tx.execute(
                "DELETE FROM project_files WHERE project_id = ?1 AND name = ?2",
                params![project_id, file.name],
            )?;
            let count: i64 = tx.query_row(
                "SELECT COUNT(*) FROM project_files WHERE project_id = ?1",
                [&project_id],
                |row| row.get(0),
            )?;
            if usize::try_from(count).unwrap_or(usize::MAX) >= max_files {
                return Err(StoreError::Conflict {
                    what: format!("A project keeps at most {max_files} files."),
                });
            }
            let chars: usize = file.passages.iter().map(|p| p.chars().count()).sum();
            let as_sql = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
            let id = new_id();
            tx.execute(
                "INSERT INTO project_files (id, project_id, name, sha256, mime, size, chars, \
                 passages, added_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    id,
                    project_id,
                    file.name,
                    file.sha256,
                    file.mime,
                    i64::try_from(file.size).unwrap_or(i64::MAX),
                    as_sql(chars),
                    as_sql(file.passages.len()),
                    now_ms()
                ],
            )?;
            {
                let mut insert = tx.prepare_cached(
                    "INSERT INTO project_passages (file_id, number, text) VALUES (?1, ?2, ?3)",
                )?;
                for (i, text) in file.passages.iter().enumerate() {
                    insert.execute(params![id, as_sql(i + 1), text])?;
                }
            }
            let made = tx.query_row(
                &format!("SELECT {COLUMNS} FROM project_files WHERE id = ?1"),
                [&id],
                from_row,
            )?;
            tx.commit()?;
            Ok(made)
        })
        .await
    }

    /// A project's files, by name.
    ///
    /// # Errors
    /// A failed query.
    pub async fn project_files(&self, project_id: String) -> Result<Vec<ProjectFile>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM project_files WHERE project_id = ?1 ORDER BY name"
            ))?;
            let rows = stmt.query_map([&project_id], from_row)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    /// Whether a project has any file.
    ///
    /// # Errors
    /// A failed query.
    pub async fn has_project_files(&self, project_id: String) -> Result<bool, StoreError> {
        self.call(move |conn| {
            Ok(conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM project_files WHERE project_id = ?1)",
                [&project_id],
                |row| row.get(0),
            )?)
        })
        .await
    }

    /// Removes a project's file by name; false when it had none of that name.
    ///
    /// # Errors
    /// A failed write.
    pub async fn remove_project_file(
        &self,
        project_id: String,
        name: String,
    ) -> Result<bool, StoreError> {
        self.call(move |conn| {
            let changed = conn.execute(
                "DELETE FROM project_files WHERE project_id = ?1 AND name = ?2",
                params![project_id, name],
            )?;
            Ok(changed > 0)
        })
        .await
    }

    /// Every file of a project whole (its passages joined), by name, when they come to at most
    /// `max_chars` characters in all; `None` when they come to more (or there are none).
    ///
    /// # Errors
    /// A failed query.
    pub async fn project_texts_within(
        &self,
        project_id: String,
        max_chars: usize,
    ) -> Result<Option<Vec<(String, String)>>, StoreError> {
        self.call(move |conn| {
            let total: Option<i64> = conn.query_row(
                "SELECT SUM(chars) FROM project_files WHERE project_id = ?1",
                [&project_id],
                |row| row.get(0),
            )?;
            let Some(total) = total else {
                return Ok(None);
            };
            if usize::try_from(total).unwrap_or(usize::MAX) > max_chars {
                return Ok(None);
            }
            let mut stmt = conn.prepare_cached(
                "SELECT f.name, p.text FROM project_files f JOIN project_passages p \
                 ON p.file_id = f.id WHERE f.project_id = ?1 ORDER BY f.name, p.number",
            )?;
            let mut rows = stmt.query([&project_id])?;
            let mut files: Vec<(String, String)> = Vec::new();
            while let Some(row) = rows.next()? {
                let (name, text): (String, String) = (row.get(0)?, row.get(1)?);
                match files.last_mut() {
                    Some((last, whole)) if *last == name => whole.push_str(&text),
                    _ => files.push((name, text)),
                }
            }
            Ok(Some(files))
        })
        .await
    }

    /// The passages of a project's files that hold `words` (see
    /// [`crate::knowledge::query_words`]), best first, at most `limit`. Among many passages,
    /// words in more than a tenth of them are left out while rarer ones are asked (they say
    /// little of which passage to give, and would have most passages ranked); when all are
    /// that common, a passage must hold all of them, and the best of the first
    /// [`COMMON_CANDIDATES`] that do are given.
    ///
    /// # Errors
    /// A failed query.
    pub async fn search_passages(
        &self,
        project_id: String,
        words: Vec<String>,
        limit: usize,
    ) -> Result<Vec<FoundPassage>, StoreError> {
        self.call(move |conn| {
            let all: i64 = conn.query_row("SELECT COUNT(*) FROM project_passages", [], |row| {
                row.get(0)
            })?;
            // Below this many passages every word is cheap to rank.
            const FEW: i64 = 2_000;
            let (mut rare, mut common, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
            {
                let mut in_passages =
                    conn.prepare_cached("SELECT doc FROM passage_words WHERE term = ?1")?;
                for word in words {
                    let found: Option<i64> = in_passages
                        .query_row([crate::knowledge::folded(&word)], |row| row.get(0))
                        .optional()?;
                    match found {
                        Some(n) if all >= FEW && n * 10 > all => common.push(word),
                        Some(_) => rare.push(word),
                        // In no passage (as the index folds it): it matches nothing, and is
                        // asked only when no other word is there.
                        None => unknown.push(word),
                    }
                }
            }
            // All common: a passage must hold them all, and the best are taken of the first
            // passages that do (ranking every one would take most of a second).
            let (query, candidates) = if !rare.is_empty() {
                rare.append(&mut unknown);
                (crate::knowledge::fts_query(&rare, true), i64::MAX)
            } else if !common.is_empty() {
                (
                    crate::knowledge::fts_query(&common, false),
                    COMMON_CANDIDATES,
                )
            } else {
                (crate::knowledge::fts_query(&unknown, true), i64::MAX)
            };
            if query.is_empty() {
                return Ok(Vec::new());
            }
            let mut stmt = conn.prepare_cached(
                "SELECT f.name, p.number, f.passages, p.text FROM \
                 (SELECT p.id AS id, s.rank AS rank FROM passage_search s \
                  JOIN project_passages p ON p.id = s.rowid \
                  JOIN project_files f ON f.id = p.file_id \
                  WHERE passage_search MATCH ?1 AND f.project_id = ?2 LIMIT ?4) c \
                 JOIN project_passages p ON p.id = c.id \
                 JOIN project_files f ON f.id = p.file_id \
                 ORDER BY c.rank LIMIT ?3",
            )?;
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = stmt.query_map(params![query, project_id, limit, candidates], |row| {
                Ok(FoundPassage {
                    file: row.get(0)?,
                    number: row.get(1)?,
                    of: row.get(2)?,
                    text: row.get(3)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}
