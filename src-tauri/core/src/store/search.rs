//! Full-text search across every conversation: the words a person types turned into a safe
//! FTS5 query, matched against the text of questions, answers and tool results (the
//! `message_search` index, kept in step by triggers) and against titles, newest first, each hit
//! with the words around it split into plain and matched parts (text only: nothing to render).

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Role, Store, StoreError};

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
        let Some(query) = fts_query(&text) else {
            return Ok(Vec::new());
        };
        let limit = limit.clamp(1, MAX_HITS);
        let words: Vec<String> = typed_words(&text)
            .into_iter()
            .map(str::to_lowercase)
            .collect();
        self.call(move |conn| {
            let mut hits = Vec::new();
            // Titles: few enough to read all; every word must be in the title.
            let mut stmt = conn.prepare_cached(
                "SELECT id, title, updated_at FROM conversations WHERE lane_of IS NULL \
                 ORDER BY updated_at DESC, id DESC",
            )?;
            let titles = stmt.query_map([], |row| {
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
                        snippet: title_parts(&title, &words),
                        conversation_id: id,
                        conversation_title: title,
                        message_id: None,
                        seq: None,
                        role: None,
                        created_at: at,
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
                 ORDER BY message_search.rowid DESC LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![query, left], |row| {
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
                })
            })?;
            for row in rows {
                hits.push(row?);
            }
            Ok(hits)
        })
        .await
    }
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
