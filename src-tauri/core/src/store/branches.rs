//! Branches of a conversation. Editing a question and sending it again, or asking for another
//! answer, starts a new branch at that message and keeps the old one, to be switched back to.
//!
//! The `messages` table always holds the branch that is shown, so paging, the model's history,
//! search and export read one line of messages as before. Every other branch is kept whole in
//! `message_branches` as a snapshot of the conversation's tail from the point where the
//! branches part: its messages, their calls' records, and the branch points further down that
//! tail (so branches nest). A branch point is named by the message before it (`after_seq`, 0
//! at the start), so numbers left unused by a deleted turn never split a point from its
//! branch. A branch point's row with no snapshot is the branch shown.
//! Switching swaps the tail shown with the chosen snapshot, in one transaction; rows go back
//! with their ids and numbers, so nothing that points at them changes.

use std::ops::ControlFlow;

use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection, OptionalExtension, Params, Transaction};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Store, StoreError};

/// Where the branches of a conversation part, as a page of messages shows it: the message
/// shown at that point, which of the branches it is, and how many there are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct BranchPoint {
    /// The first message of the branch shown at this point (a question that was edited, or
    /// an answer asked for again).
    pub message_id: String,
    /// Which branch is shown, from 0 (the first one written).
    pub position: i64,
    pub count: i64,
    /// At a comparison, the model (“Provider · model”) that wrote each branch, by position;
    /// empty elsewhere.
    pub models: Vec<Option<String>>,
}

/// A branch point after a switch: the point as it is now, and the number of its first message
/// (read pages back to it to show it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SwitchedBranch {
    pub point: BranchPoint,
    pub seq: i64,
}

/// A tail of a conversation, kept while another branch is shown. Rows are kept column by
/// column as JSON, so a snapshot taken before a migration restores after it (a column added
/// since takes its default).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Snapshot {
    pub messages: Vec<Map<String, Value>>,
    pub tool_runs: Vec<Map<String, Value>>,
    pub points: Vec<Map<String, Value>>,
}

/// The result files (see `conversations::result_files`) that the branches kept at the points
/// `filter` selects (SQL over `message_branches`) point at, with those of the branches nested
/// in them: they go when those points go.
pub(super) fn kept_result_files(
    conn: &Connection,
    filter: &str,
    values: impl Params,
) -> Result<Vec<String>, StoreError> {
    let mut files = Vec::new();
    for text in &kept_snapshots(conn, filter, values)? {
        walk_kept(text, &mut |snapshot, _| {
            for run in &snapshot.tool_runs {
                let Some(Value::String(result)) = run.get("result") else {
                    continue;
                };
                let pointer = super::file_pointer(result);
                if let Some(Value::String(file)) = pointer.as_ref().and_then(|p| p.get("file")) {
                    files.push(file.clone());
                }
            }
            ControlFlow::Continue(())
        });
    }
    Ok(files)
}

/// The snapshots (as kept, JSON) of the branches not shown at the points `filter` (SQL over
/// `message_branches`) selects.
pub(super) fn kept_snapshots(
    conn: &Connection,
    filter: &str,
    values: impl Params,
) -> Result<Vec<String>, StoreError> {
    Ok(conn
        .prepare(&format!(
            "SELECT snapshot FROM message_branches WHERE snapshot IS NOT NULL AND {filter}"
        ))?
        .query_map(values, |row| row.get(0))?
        .collect::<Result<_, _>>()?)
}

/// Hands `visit` every snapshot in the kept branch `text` — the branches nested in it first,
/// then its own — each with the points to switch, outermost first, to show it (empty for
/// `text`'s own), until `visit` breaks. A snapshot that does not read is left out, with what is
/// nested in it; the count of those is returned.
pub(super) fn walk_kept(
    text: &str,
    visit: &mut impl FnMut(Snapshot, &[(i64, i64)]) -> ControlFlow<()>,
) -> usize {
    fn walk(
        text: &str,
        path: &mut Vec<(i64, i64)>,
        unreadable: &mut usize,
        visit: &mut impl FnMut(Snapshot, &[(i64, i64)]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let Ok(snapshot) = serde_json::from_str::<Snapshot>(text) else {
            *unreadable += 1;
            return ControlFlow::Continue(());
        };
        for point in &snapshot.points {
            let Some(Value::String(nested)) = point.get("snapshot") else {
                continue;
            };
            // A point's row always names both (NOT NULL); -1 is no point, should one not.
            let number = |key: &str| point.get(key).and_then(Value::as_i64).unwrap_or(-1);
            path.push((number("after_seq"), number("position")));
            let flow = walk(nested, path, unreadable, visit);
            path.pop();
            if flow.is_break() {
                return flow;
            }
        }
        visit(snapshot, path)
    }
    let mut unreadable = 0;
    let _ = walk(text, &mut Vec::new(), &mut unreadable, visit);
    unreadable
}

fn json_of(value: SqlValue) -> Value {
    match value {
        SqlValue::Null | SqlValue::Blob(_) => Value::Null,
        SqlValue::Integer(i) => Value::from(i),
        SqlValue::Real(f) => Value::from(f),
        SqlValue::Text(t) => Value::String(t),
    }
}

fn sql_of(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => n.as_i64().map_or_else(
            || SqlValue::Real(n.as_f64().unwrap_or(0.0)),
            SqlValue::Integer,
        ),
        Value::String(s) => SqlValue::Text(s.clone()),
        other => SqlValue::Text(other.to_string()),
    }
}

/// The columns `table` has now.
fn columns(tx: &Transaction<'_>, table: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = tx.prepare_cached(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
    let names = stmt.query_map([], |row| row.get(0))?;
    Ok(names.collect::<Result<_, _>>()?)
}

/// The rows of `table` matching `filter` (SQL over `?1` the conversation and `?2` a number).
pub(super) fn rows(
    tx: &Transaction<'_>,
    table: &str,
    filter: &str,
    conversation_id: &str,
    at: i64,
) -> Result<Vec<Map<String, Value>>, StoreError> {
    let names = columns(tx, table)?;
    let mut stmt = tx.prepare(&format!(
        "SELECT {} FROM {table} WHERE {filter} ORDER BY rowid",
        names.join(", ")
    ))?;
    let found = stmt.query_map(params![conversation_id, at], |row| {
        let mut map = Map::new();
        for (i, name) in names.iter().enumerate() {
            map.insert(name.clone(), json_of(row.get(i)?));
        }
        Ok(map)
    })?;
    Ok(found.collect::<Result<_, _>>()?)
}

/// Writes `rows` back into `table`, the columns it still has only.
pub(super) fn put_back(
    tx: &Transaction<'_>,
    table: &str,
    rows: &[Map<String, Value>],
) -> Result<(), StoreError> {
    let known = columns(tx, table)?;
    for row in rows {
        let (names, values): (Vec<&String>, Vec<SqlValue>) = row
            .iter()
            .filter(|(name, _)| known.contains(name))
            .map(|(name, value)| (name, sql_of(value)))
            .unzip();
        let marks = vec!["?"; names.len()].join(", ");
        let names: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
        tx.execute(
            &format!(
                "INSERT INTO {table} ({}) VALUES ({marks})",
                names.join(", ")
            ),
            rusqlite::params_from_iter(values),
        )?;
    }
    Ok(())
}

/// The messages after number `?2`. (A task's late result that landed there goes with them,
/// even when its call came before: a branch keeps its messages' numbers, which a late result
/// left in the line shown could collide with when the branch is shown again.)
pub(super) const TAIL_MESSAGES: &str = "conversation_id = ?1 AND seq > ?2";
pub(super) const TAIL_RUNS: &str = "conversation_id = ?1 AND message_id IN \
     (SELECT id FROM messages WHERE conversation_id = ?1 AND seq > ?2)";
const TAIL_POINTS: &str = "conversation_id = ?1 AND after_seq > ?2";

/// Takes the tail after message number `at` out of the conversation shown, as a snapshot.
pub(super) fn take_tail(
    tx: &Transaction<'_>,
    conversation_id: &str,
    at: i64,
) -> Result<Snapshot, StoreError> {
    let snapshot = Snapshot {
        messages: rows(tx, "messages", TAIL_MESSAGES, conversation_id, at)?,
        tool_runs: rows(tx, "tool_runs", TAIL_RUNS, conversation_id, at)?,
        points: rows(tx, "message_branches", TAIL_POINTS, conversation_id, at)?,
    };
    tx.execute(
        &format!("DELETE FROM tool_runs WHERE {TAIL_RUNS}"),
        params![conversation_id, at],
    )?;
    tx.execute(
        &format!("DELETE FROM messages WHERE {TAIL_MESSAGES}"),
        params![conversation_id, at],
    )?;
    tx.execute(
        &format!("DELETE FROM message_branches WHERE {TAIL_POINTS}"),
        params![conversation_id, at],
    )?;
    Ok(snapshot)
}

/// [`take_tail`] as the text a branch point keeps it in (`message_branches.snapshot`).
pub(super) fn take_tail_kept(
    tx: &Transaction<'_>,
    conversation_id: &str,
    at: i64,
) -> Result<String, StoreError> {
    serde_json::to_string(&take_tail(tx, conversation_id, at)?).map_err(|e| {
        StoreError::InvalidRow {
            detail: e.to_string(),
        }
    })
}

pub(super) fn put_tail(tx: &Transaction<'_>, snapshot: &Snapshot) -> Result<(), StoreError> {
    put_back(tx, "messages", &snapshot.messages)?;
    put_back(tx, "tool_runs", &snapshot.tool_runs)?;
    put_back(tx, "message_branches", &snapshot.points)
}

/// Keeps the tail shown after message number `at` as the snapshot of the branch point's shown
/// branch, and takes it out of what is shown.
fn set_aside_shown(tx: &Transaction<'_>, conversation_id: &str, at: i64) -> Result<(), StoreError> {
    let kept = take_tail_kept(tx, conversation_id, at)?;
    tx.execute(
        "UPDATE message_branches SET snapshot = ?3 \
         WHERE conversation_id = ?1 AND after_seq = ?2 AND snapshot IS NULL",
        params![conversation_id, at, kept],
    )?;
    Ok(())
}

/// Adds branch `position` to the point after message number `at`, as the branch shown.
pub(super) fn new_shown_branch(
    tx: &Transaction<'_>,
    conversation_id: &str,
    at: i64,
    position: i64,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO message_branches (conversation_id, after_seq, position, snapshot) \
         VALUES (?1, ?2, ?3, NULL)",
        params![conversation_id, at, position],
    )?;
    Ok(())
}

/// The number of the message before `message_id` in its conversation (0 for the first).
fn seq_before(
    tx: &Transaction<'_>,
    conversation_id: &str,
    message_id: &str,
) -> Result<i64, StoreError> {
    tx.query_row(
        "SELECT (SELECT COALESCE(MAX(p.seq), 0) FROM messages p \
                 WHERE p.conversation_id = m.conversation_id AND p.seq < m.seq) \
         FROM messages m WHERE m.conversation_id = ?1 AND m.id = ?2",
        params![conversation_id, message_id],
        |row| row.get(0),
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound {
        what: format!("message {message_id}"),
    })
}

/// The branch points of a conversation whose first shown message is numbered
/// `first..=last`, in order.
pub(super) fn points_between(
    conn: &rusqlite::Connection,
    conversation_id: &str,
    first: i64,
    last: i64,
) -> Result<Vec<BranchPoint>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.id, p.position, p.count, p.labelled, p.after_seq FROM \
           (SELECT after_seq, COUNT(*) AS count, COUNT(model) AS labelled, \
                   MAX(CASE WHEN snapshot IS NULL THEN position END) AS position \
            FROM message_branches WHERE conversation_id = ?1 GROUP BY after_seq) p \
         JOIN messages m ON m.conversation_id = ?1 AND m.seq = \
           (SELECT MIN(n.seq) FROM messages n WHERE n.conversation_id = ?1 AND n.seq > p.after_seq) \
         WHERE m.seq BETWEEN ?2 AND ?3 ORDER BY m.seq",
    )?;
    let found = stmt.query_map(params![conversation_id, first, last], |row| {
        let labelled: i64 = row.get(3)?;
        Ok((
            BranchPoint {
                message_id: row.get(0)?,
                position: row.get::<_, Option<i64>>(1)?.unwrap_or(0),
                count: row.get(2)?,
                models: Vec::new(),
            },
            (labelled > 0).then_some(row.get::<_, i64>(4)?),
        ))
    })?;
    let mut points = Vec::new();
    for point in found {
        let (mut point, labelled_at) = point?;
        if let Some(at) = labelled_at {
            let mut models = conn.prepare_cached(
                "SELECT model FROM message_branches WHERE conversation_id = ?1 AND after_seq = ?2 \
                 ORDER BY position",
            )?;
            point.models = models
                .query_map(params![conversation_id, at], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
        }
        points.push(point);
    }
    Ok(points)
}

impl Store {
    /// Starts a new branch at message `message_id`: the conversation from that message on is
    /// kept as a branch of its own and taken out of what is shown, so that the next message
    /// written begins the new branch.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the conversation has no such message; a failed query.
    pub async fn branch_off(
        &self,
        conversation_id: String,
        message_id: String,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let at = seq_before(&tx, &conversation_id, &message_id)?;
            let count: i64 = tx.query_row(
                "SELECT COUNT(*) FROM message_branches WHERE conversation_id = ?1 AND after_seq = ?2",
                params![conversation_id, at],
                |row| row.get(0),
            )?;
            // The first branch at a point is the one that was shown until now.
            if count == 0 {
                new_shown_branch(&tx, &conversation_id, at, 0)?;
            }
            set_aside_shown(&tx, &conversation_id, at)?;
            new_shown_branch(&tx, &conversation_id, at, count.max(1))?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Shows branch `position` at the branch point where message `message_id` (the first
    /// message of the branch shown there) is. Returns the point as it is now (its first
    /// message is the chosen branch's) and that message's number.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such message, no branch point there, or no
    /// such branch; a failed query.
    pub async fn switch_branch(
        &self,
        conversation_id: String,
        message_id: String,
        position: i64,
    ) -> Result<SwitchedBranch, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let at = seq_before(&tx, &conversation_id, &message_id)?;
            if !show_branch(&tx, &conversation_id, at, position)? {
                return Err(StoreError::NotFound {
                    what: format!("branch {} at message {message_id}", position + 1),
                });
            }
            let switched = switched_at(&tx, &conversation_id, at)?;
            tx.commit()?;
            Ok(switched)
        })
        .await
    }

    /// Shows message `message_id` of a conversation: when it is in a branch not shown, that
    /// branch is switched to — and each branch it is nested in, outermost first — in one
    /// transaction. Returns the message's number, and the innermost point switched (`None`
    /// when the message was shown already).
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when neither the conversation shown nor any branch it keeps
    /// holds the message; a failed query.
    pub async fn reveal_message(
        &self,
        conversation_id: String,
        message_id: String,
    ) -> Result<(i64, Option<SwitchedBranch>), StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let shown = |tx: &Transaction<'_>| -> Result<Option<i64>, StoreError> {
                Ok(tx
                    .query_row(
                        "SELECT seq FROM messages WHERE conversation_id = ?1 AND id = ?2",
                        params![conversation_id, message_id],
                        |row| row.get(0),
                    )
                    .optional()?)
            };
            if let Some(seq) = shown(&tx)? {
                return Ok((seq, None));
            }
            let kept: Vec<(i64, i64, String)> = tx
                .prepare(
                    "SELECT after_seq, position, snapshot FROM message_branches \
                     WHERE conversation_id = ?1 AND snapshot IS NOT NULL ORDER BY after_seq",
                )?
                .query_map(params![conversation_id], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })?
                .collect::<Result<_, _>>()?;
            let path = kept.iter().find_map(|(at, position, text)| {
                let mut found = None;
                walk_kept(text, &mut |snapshot, rest| {
                    if snapshot
                        .messages
                        .iter()
                        .any(|m| m.get("id").and_then(Value::as_str) == Some(&message_id))
                    {
                        found = Some([&[(*at, *position)], rest].concat());
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                });
                found
            });
            let not_found = || StoreError::NotFound {
                what: format!("message {message_id}"),
            };
            let path = path.ok_or_else(not_found)?;
            for &(at, position) in &path {
                if !show_branch(&tx, &conversation_id, at, position)? {
                    return Err(not_found());
                }
            }
            let seq = shown(&tx)?.ok_or_else(not_found)?;
            let last = path.last().map_or(0, |(at, _)| *at);
            let switched = switched_at(&tx, &conversation_id, last)?;
            tx.commit()?;
            Ok((seq, Some(switched)))
        })
        .await
    }
}

/// Shows branch `position` of the point after message number `at` in place of the branch
/// shown there. `false` when the point has no such branch.
fn show_branch(
    tx: &Transaction<'_>,
    conversation_id: &str,
    at: i64,
    position: i64,
) -> Result<bool, StoreError> {
    let target: Option<Option<String>> = tx
        .query_row(
            "SELECT snapshot FROM message_branches \
             WHERE conversation_id = ?1 AND after_seq = ?2 AND position = ?3",
            params![conversation_id, at, position],
            |row| row.get(0),
        )
        .optional()?;
    let Some(target) = target else {
        return Ok(false);
    };
    // `None`: the branch asked for is the one shown.
    if let Some(target) = target {
        set_aside_shown(tx, conversation_id, at)?;
        tx.execute(
            "UPDATE message_branches SET snapshot = NULL \
             WHERE conversation_id = ?1 AND after_seq = ?2 AND position = ?3",
            params![conversation_id, at, position],
        )?;
        let snapshot: Snapshot =
            serde_json::from_str(&target).map_err(|e| StoreError::InvalidRow {
                detail: format!("a kept branch: {e}"),
            })?;
        put_tail(tx, &snapshot)?;
    }
    Ok(true)
}

/// The point after message number `at` as it is now, and the number of its first message.
fn switched_at(
    tx: &Transaction<'_>,
    conversation_id: &str,
    at: i64,
) -> Result<SwitchedBranch, StoreError> {
    let first: i64 = tx.query_row(
        "SELECT COALESCE(MIN(seq), 0) FROM messages WHERE conversation_id = ?1 AND seq > ?2",
        params![conversation_id, at],
        |row| row.get(0),
    )?;
    let point = points_between(tx, conversation_id, first, first)?
        .pop()
        .ok_or_else(|| StoreError::NotFound {
            what: format!("the branch point after message {at}"),
        })?;
    Ok(SwitchedBranch { point, seq: first })
}
