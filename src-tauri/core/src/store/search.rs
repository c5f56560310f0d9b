//! Full-text search across every conversation: the words a person types turned into a safe
//! FTS5 query, matched against the text of questions, answers and tool results (the
//! `message_search` index, kept in step by triggers), against those of the branches not shown
//! (`branch_search`, brought up to date here before each search) and against titles, newest
//! first, each hit with the words around it split into plain and matched parts (text only:
//! nothing to render).

use std::ops::ControlFlow;

use rusqlite::{params, Connection, Transaction};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::branches::{kept_snapshots, walk_kept};
use super::{OpenCheck, Role, Store, StoreError};

/// The most hits one search returns.
pub const MAX_HITS: u32 = 200;

/// One piece of a hit's text: matched, or around the match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct SnippetPart {
    pub text: String,
    pub hit: bool,
}

/// A conversation whose title or one of whose messages matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct SearchHit {
    pub conversation_id: String,
    pub conversation_title: String,
    /// The message that matched; `None` when the title did.
    pub message_id: Option<String>,
    /// Where that message sits in its conversation: a window opens the conversation at it by
    /// reading pages back until one starts at or before it (a page's `older`).
    pub seq: Option<i64>,
    pub role: Option<Role>,
    /// When the message (or the conversation) was written, ms since the epoch.
    pub created_at: i64,
    /// The words around the match (the title for a title hit).
    pub snippet: Vec<SnippetPart>,
    /// The message is in a branch not shown now (another answer, or the question before an
    /// edit): opening it shows that branch (`reveal_message`).
    pub other_version: bool,
}

/// What marks a match inside FTS5's snippet: private-use characters (a message that holds
/// them itself may show a few words as matched that are not: they stay text either way).
const OPEN: char = '\u{e000}';
const CLOSE: char = '\u{e001}';
/// Words of context a snippet keeps around its match.
const SNIPPET_WORDS: i32 = 16;

/// The FTS5 query for what a person typed: each word quoted (so `AND`, `-`, `"` or `*` are
/// words, never syntax), all of them required, the last one also matching as a prefix while it
/// is being typed. `None` when there is no word to look for.
pub fn fts_query(text: &str) -> Option<String> {
    let words = typed_words(text);
    let last = words.len().checked_sub(1)?;
    Some(
        words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let quoted = format!("\"{w}\"");
                if i == last {
                    format!("{quoted}*")
                } else {
                    quoted
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The words of what a person typed: split at spaces and quotes, each holding a letter or digit.
fn typed_words(text: &str) -> Vec<&str> {
    text.split(|c: char| c.is_whitespace() || c == '"')
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect()
}

/// Splits FTS5's marked snippet into parts.
fn parts(marked: &str) -> Vec<SnippetPart> {
    let mut out: Vec<SnippetPart> = Vec::new();
    let mut hit = false;
    let mut text = String::new();
    for c in marked.chars() {
        if c == OPEN || c == CLOSE {
            if !text.is_empty() {
                out.push(SnippetPart {
                    text: std::mem::take(&mut text),
                    hit,
                });
            }
            hit = c == OPEN;
        } else {
            text.push(c);
        }
    }
    if !text.is_empty() {
        out.push(SnippetPart { text, hit });
    }
    out
}

/// A title split around each case-insensitive occurrence of the query's words.
fn title_parts(title: &str, words: &[String]) -> Vec<SnippetPart> {
    let lower = title.to_lowercase();
    // Byte ranges of matches, on the lowered title only when lowering kept every length.
    let mut marks = vec![false; title.len()];
    if lower.len() == title.len() {
        for word in words.iter().filter(|w| !w.is_empty()) {
            for (at, _) in lower.match_indices(word.as_str()) {
                marks[at..at + word.len()]
                    .iter_mut()
                    .for_each(|m| *m = true);
            }
        }
    }
    let mut out: Vec<SnippetPart> = Vec::new();
    for (i, c) in title.char_indices() {
        let hit = marks[i];
        match out.last_mut() {
            Some(last) if last.hit == hit => last.text.push(c),
            _ => out.push(SnippetPart {
                text: c.to_string(),
                hit,
            }),
        }
    }
    out
}

impl Store {
    /// Conversations whose title holds every word of `text`, then messages that do, newest
    /// first; at most `limit` hits ([`MAX_HITS`] at most).
    ///
    /// # Errors
    /// A failed query.
    pub async fn search(&self, text: String, limit: u32) -> Result<Vec<SearchHit>, StoreError> {
        self.search_in(text, limit, None).await
    }

    /// [`Store::search`] in the conversations of one project (`None`: every conversation).
    ///
    /// # Errors
    /// A failed query.
    pub async fn search_in(
        &self,
        text: String,
        limit: u32,
        project: Option<String>,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let Some(query) = fts_query(&text) else {
            return Ok(Vec::new());
        };
        let limit = limit.clamp(1, MAX_HITS);
        let words: Vec<String> = typed_words(&text)
            .into_iter()
            .map(str::to_lowercase)
            .collect();
        // A store opened by a verb that only reads (checked at the header, not every page)
        // keeps nothing in the file: it brings the index of kept branches up to date inside a
        // transaction it then drops, and the next process that writes does the work for good.
        let keep = self.check == OpenCheck::Pages;
        self.call(move |conn| {
            let tx = conn.transaction()?;
            refresh_branch_index(&tx)?;
            let hits = find(&tx, &query, &words, limit, project.as_deref())?;
            if keep {
                tx.commit()?;
            }
            Ok(hits)
        })
        .await
    }
}

/// The hits of `query` (whose typed `words` a title must all contain), at most `limit`:
/// titles first, then messages of every version, newest first.
fn find(
    conn: &Connection,
    query: &str,
    words: &[String],
    limit: u32,
    project: Option<&str>,
) -> Result<Vec<SearchHit>, StoreError> {
    let mut hits = Vec::new();
    // Titles: few enough to read all; every word must be in the title.
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, updated_at FROM conversations WHERE lane_of IS NULL \
         AND (?1 IS NULL OR project_id = ?1) ORDER BY updated_at DESC, id DESC",
    )?;
    let titles = stmt.query_map([project], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, i64>(2)?,
        ))
    })?;
    for row in titles {
        let (id, title, at) = row?;
        let lower = title.to_lowercase();
        if words.iter().all(|w| lower.contains(w.as_str())) {
            hits.push(SearchHit {
                snippet: title_parts(&title, words),
                conversation_id: id,
                conversation_title: title,
                message_id: None,
                seq: None,
                role: None,
                created_at: at,
                other_version: false,
            });
            if hits.len() >= limit as usize {
                return Ok(hits);
            }
        }
    }
    let left = i64::from(limit) - i64::try_from(hits.len()).unwrap_or(0);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT m.conversation_id, c.title, m.id, m.role, m.created_at, \
                snippet(message_search, 0, '{OPEN}', '{CLOSE}', '…', {SNIPPET_WORDS}), m.seq \
         FROM message_search \
         JOIN messages m ON m.rowid = message_search.rowid \
         JOIN conversations c ON c.id = m.conversation_id \
         WHERE message_search MATCH ?1 AND c.lane_of IS NULL \
         AND (?3 IS NULL OR c.project_id = ?3) \
         ORDER BY message_search.rowid DESC LIMIT ?2"
    ))?;
    let mut found = stmt
        .query_map(params![query, left, project], |row| message_hit(row, false))?
        .collect::<Result<Vec<_>, _>>()?;
    found.extend(branch_hits(conn, query, left, project)?);
    // Newest first, whichever branch a message is in.
    // (Ids are time-ordered: they settle messages written in the same millisecond.)
    found.sort_by(|a, b| (b.created_at, &b.message_id).cmp(&(a.created_at, &a.message_id)));
    found.truncate(usize::try_from(left).unwrap_or(0));
    hits.extend(found);
    Ok(hits)
}

/// Messages of the branches not shown that match `query`, newest first; at most `limit`.
fn branch_hits(
    conn: &Connection,
    query: &str,
    limit: i64,
    project: Option<&str>,
) -> Result<Vec<SearchHit>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT b.conversation_id, c.title, b.message_id, b.role, b.created_at, \
                snippet(branch_search, 0, '{OPEN}', '{CLOSE}', '…', {SNIPPET_WORDS}), b.seq \
         FROM branch_search b JOIN conversations c ON c.id = b.conversation_id \
         WHERE branch_search MATCH ?1 AND c.lane_of IS NULL \
         AND (?3 IS NULL OR c.project_id = ?3) \
         ORDER BY b.created_at DESC, b.message_id DESC LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![query, limit, project], |row| message_hit(row, true))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A message's hit from a row of (conversation id, title, message id, role, created at,
/// marked snippet, seq).
fn message_hit(row: &rusqlite::Row<'_>, other_version: bool) -> rusqlite::Result<SearchHit> {
    let role: String = row.get(3)?;
    let snippet: String = row.get(5)?;
    Ok(SearchHit {
        conversation_id: row.get(0)?,
        conversation_title: row.get(1)?,
        message_id: Some(row.get(2)?),
        seq: Some(row.get(6)?),
        role: Role::parse(&role),
        created_at: row.get(4)?,
        snippet: parts(&snippet),
        other_version,
    })
}

/// Re-reads the kept branches of every conversation whose branches changed since the last
/// search (the triggers of migration 19 name them) into `branch_search`.
///
/// # Errors
/// A failed query; a snapshot that cannot be read is skipped, not fatal.
pub(super) fn refresh_branch_index(tx: &Transaction<'_>) -> Result<(), StoreError> {
    let stale: Vec<String> = tx
        .prepare_cached("SELECT conversation_id FROM branch_search_stale")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    for conversation_id in &stale {
        index_branches(tx, conversation_id)?;
    }
    Ok(())
}

fn index_branches(tx: &Transaction<'_>, conversation_id: &str) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM branch_search WHERE conversation_id = ?1",
        params![conversation_id],
    )?;
    let mut messages = Vec::new();
    for text in &kept_snapshots(tx, "conversation_id = ?1", params![conversation_id])? {
        let unreadable = walk_kept(text, &mut |snapshot, _| {
            messages.extend(snapshot.messages);
            ControlFlow::Continue(())
        });
        if unreadable > 0 {
            tracing::warn!("a kept branch could not be read for search; it is left out");
        }
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO branch_search (content, conversation_id, message_id, role, created_at, seq) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for message in messages {
        let text = |key: &str| message.get(key).and_then(Value::as_str);
        let number = |key: &str| message.get(key).and_then(Value::as_i64);
        let (Some(content), Some(id), Some(role)) = (text("content"), text("id"), text("role"))
        else {
            continue;
        };
        if role == "system" {
            continue;
        }
        insert.execute(params![
            content,
            conversation_id,
            id,
            role,
            number("created_at").unwrap_or(0),
            number("seq").unwrap_or(0)
        ])?;
    }
    tx.execute(
        "DELETE FROM branch_search_stale WHERE conversation_id = ?1",
        params![conversation_id],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_words_never_become_query_syntax() {
        assert_eq!(fts_query("  "), None);
        assert_eq!(fts_query("- * \""), None);
        assert_eq!(fts_query("weather"), Some("\"weather\"*".into()));
        assert_eq!(
            fts_query("paris AND NOT \"tokyo"),
            Some("\"paris\" \"AND\" \"NOT\" \"tokyo\"*".into())
        );
        assert_eq!(fts_query("col:umn x*"), Some("\"col:umn\" \"x*\"*".into()));
    }

    #[test]
    fn a_marked_snippet_splits_into_plain_and_matched_parts() {
        let marked = format!("…the {OPEN}weather{CLOSE} in {OPEN}Paris{CLOSE}");
        assert_eq!(
            parts(&marked),
            vec![
                SnippetPart {
                    text: "…the ".into(),
                    hit: false
                },
                SnippetPart {
                    text: "weather".into(),
                    hit: true
                },
                SnippetPart {
                    text: " in ".into(),
                    hit: false
                },
                SnippetPart {
                    text: "Paris".into(),
                    hit: true
                },
            ]
        );
        assert_eq!(
            title_parts("Trip to Paris", &["paris".into()]),
            vec![
                SnippetPart {
                    text: "Trip to ".into(),
                    hit: false
                },
                SnippetPart {
                    text: "Paris".into(),
                    hit: true
                },
            ]
        );
    }
}
