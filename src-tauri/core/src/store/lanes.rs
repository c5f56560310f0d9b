//! Lanes of a comparison (issue 18): several models answer one question at once, each in a
//! lane — a hidden conversation (`lane_of` names the one it answers for) with the
//! conversation's prompt, model and tool switches but none of its messages: its run reads the
//! conversation's messages, then its own, and writes as any run writes. When the comparison ends the lanes are folded back: each lane's answer becomes a
//! branch of the conversation after the question (one shown, the others kept as branches to
//! switch to), their usage is counted in the conversation, and the lanes are gone. Lanes left
//! by a crash are folded at the next start.

use rusqlite::{params, OptionalExtension, Transaction};
use serde_json::Value;

use super::branches::{new_shown_branch, put_tail, take_tail, Snapshot};
use super::conversations::{self, touch};
use super::{new_id, now_ms, Store, StoreError};

/// Every message number is after this.
const FROM_THE_START: i64 = i64::MIN;

/// Makes one lane of `main`: a hidden conversation with its prompt, model and switches, and
/// no messages: a lane's run reads the conversation's messages before its own.
fn open_one(tx: &Transaction<'_>, main: &str, writer: &str) -> Result<String, StoreError> {
    let lane = new_id();
    tx.execute(
        "INSERT INTO conversations (id, title, created_at, updated_at, provider, model, \
         auto_approve, system_prompt, profile_id, lane_of, lane_writer) \
         SELECT ?2, title, created_at, updated_at, provider, model, auto_approve, \
                system_prompt, profile_id, id, ?3 FROM conversations WHERE id = ?1",
        params![main, lane, writer],
    )?;
    tx.execute(
        "INSERT INTO conversation_tools (conversation_id, server, tool, enabled) \
         SELECT ?2, server, tool, enabled FROM conversation_tools WHERE conversation_id = ?1",
        params![main, lane],
    )?;
    Ok(lane)
}

/// `snapshot` as the conversation `to`'s, its messages numbered on from `after`.
fn moved_to(mut snapshot: Snapshot, to: &str, after: i64) -> Snapshot {
    for row in snapshot
        .messages
        .iter_mut()
        .chain(snapshot.tool_runs.iter_mut())
        .chain(snapshot.points.iter_mut())
    {
        row.insert("conversation_id".into(), Value::String(to.to_owned()));
    }
    snapshot
        .messages
        .sort_by_key(|m| m.get("seq").and_then(Value::as_i64).unwrap_or(0));
    for (seq, message) in (after + 1..).zip(snapshot.messages.iter_mut()) {
        message.insert("seq".into(), Value::from(seq));
    }
    snapshot
}

/// Folds `lanes` (in order) back into `main` after its last message: the lane at `shown`
/// (else the first that wrote anything) is shown, the others kept as branches; lanes that
/// wrote nothing leave no branch. Returns the first message shown after that point and which
/// lane it is, when any lane wrote.
fn fold(
    tx: &Transaction<'_>,
    main: &str,
    lanes: &[String],
    shown: usize,
) -> Result<Option<(String, usize)>, StoreError> {
    // Each lane's model, as the newest answer its model wrote there says: the branch's label.
    let label_of = |lane: &str| -> Result<Option<String>, StoreError> {
        Ok(tx
            .query_row(
                "SELECT provider, model FROM messages WHERE conversation_id = ?1 \
                 AND role = 'assistant' AND model IS NOT NULL ORDER BY seq DESC LIMIT 1",
                [lane],
                |row| Ok((row.get::<_, Option<String>>(0)?, row.get::<_, String>(1)?)),
            )
            .optional()?
            .and_then(|(provider, model)| branch_label(provider.as_deref(), Some(&model))))
    };
    let at: i64 = tx.query_row(
        "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?1",
        [main],
        |row| row.get(0),
    )?;
    let mut answers: Vec<(usize, Snapshot, Option<String>)> = Vec::new();
    for (i, lane) in lanes.iter().enumerate() {
        let label = label_of(lane)?;
        let tail = moved_to(take_tail(tx, lane, FROM_THE_START)?, main, at);
        tx.execute(
            "UPDATE usage SET conversation_id = ?1 WHERE conversation_id = ?2",
            params![main, lane],
        )?;
        tx.execute(
            "UPDATE tool_offers SET conversation_id = ?1 WHERE conversation_id = ?2",
            params![main, lane],
        )?;
        tx.execute("DELETE FROM conversations WHERE id = ?1", [lane])?;
        if !tail.messages.is_empty() {
            answers.push((i, tail, label));
        }
    }
    let shown = answers.iter().position(|(i, ..)| *i == shown).unwrap_or(0);
    let shown_lane = answers.get(shown).map(|(i, ..)| *i);
    let several = answers.len() > 1;
    for (position, (_, tail, label)) in answers.into_iter().enumerate() {
        let position = i64::try_from(position).unwrap_or(i64::MAX);
        let is_shown = usize::try_from(position).ok() == Some(shown);
        if is_shown {
            put_tail(tx, &tail)?;
            if !several {
                continue;
            }
            new_shown_branch(tx, main, at, position)?;
        } else {
            let kept = serde_json::to_string(&tail).map_err(|e| StoreError::InvalidRow {
                detail: e.to_string(),
            })?;
            tx.execute(
                "INSERT INTO message_branches (conversation_id, after_seq, position, snapshot) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![main, at, position, kept],
            )?;
        }
        tx.execute(
            "UPDATE message_branches SET model = ?4 \
             WHERE conversation_id = ?1 AND after_seq = ?2 AND position = ?3",
            params![main, at, position, label],
        )?;
    }
    tx.execute(
        &format!(
            "UPDATE conversations SET updated_at = {} WHERE id = ?1",
            touch("?2")
        ),
        params![main, now_ms()],
    )?;
    let first: Option<String> = tx
        .query_row(
            "SELECT id FROM messages WHERE conversation_id = ?1 AND seq > ?2 ORDER BY seq LIMIT 1",
            params![main, at],
            |row| row.get(0),
        )
        .optional()?;
    Ok(first.zip(shown_lane))
}

impl Store {
    /// Opens `n` lanes of the conversation `main` (see the module), in order.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn open_lanes(&self, main: String, n: usize) -> Result<Vec<String>, StoreError> {
        let writer = self.writer.id().to_owned();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            conversations::get(&tx, &main)?;
            let lanes = (0..n)
                .map(|_| open_one(&tx, &main, &writer))
                .collect::<Result<Vec<_>, _>>()?;
            tx.commit()?;
            Ok(lanes)
        })
        .await
    }

    /// Folds `lanes` back into `main` (see the module); returns the first message of the
    /// answer shown and which lane wrote it, when any lane wrote.
    ///
    /// # Errors
    /// A failed query.
    pub async fn fold_lanes(
        &self,
        main: String,
        lanes: Vec<String>,
        shown: usize,
    ) -> Result<Option<(String, usize)>, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let first = fold(&tx, &main, &lanes, shown)?;
            tx.commit()?;
            Ok(first)
        })
        .await
    }

    /// Folds every lane left behind by a process that is gone (killed, crashed) into its
    /// conversation; a comparison this process or another live one runs is left alone, so any
    /// process may call it when it opens the home. Returns how many conversations had some.
    ///
    /// # Errors
    /// A failed query.
    pub async fn fold_left_lanes(&self) -> Result<usize, StoreError> {
        let own = self.writer.id().to_owned();
        let dir = self.data_dir.clone();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let left: Vec<(String, String)> = {
                let mut stmt = tx.prepare(
                    "SELECT lane_of, id, lane_writer FROM conversations \
                     WHERE lane_of IS NOT NULL ORDER BY lane_of, rowid",
                )?;
                let rows = stmt.query_map([], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get::<_, Option<String>>(2)?))
                })?;
                let rows: Vec<(String, String, Option<String>)> = rows.collect::<Result<_, _>>()?;
                rows.into_iter()
                    .filter(|(_, _, writer)| {
                        super::writers::gone(&own, dir.as_deref(), writer.as_deref())
                    })
                    .map(|(main, lane, _)| (main, lane))
                    .collect()
            };
            let mut mains: Vec<String> = left.iter().map(|(m, _)| m.clone()).collect();
            mains.dedup();
            for main in &mains {
                let lanes: Vec<String> = left
                    .iter()
                    .filter(|(m, _)| m == main)
                    .map(|(_, l)| l.clone())
                    .collect();
                fold(&tx, main, &lanes, 0)?;
            }
            tx.commit()?;
            Ok(mains.len())
        })
        .await
    }
}

/// A branch's label at a comparison, from the provider and model its answer names:
/// "Provider · model", the model alone when no provider is named, none without a model.
pub(crate) fn branch_label(provider: Option<&str>, model: Option<&str>) -> Option<String> {
    let model = model?;
    Some(match provider {
        Some(p) => format!("{p} · {model}"),
        None => model.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::branch_label;

    #[test]
    fn a_branch_is_labelled_by_its_provider_and_model() {
        let label = |p: Option<&str>, m: Option<&str>| branch_label(p, m);
        assert_eq!(
            label(Some("Work"), Some("gpt-4o")).as_deref(),
            Some("Work · gpt-4o")
        );
        assert_eq!(label(None, Some("llama3.2")).as_deref(), Some("llama3.2"));
        assert_eq!(label(Some("Work"), None), None);
        assert_eq!(label(None, None), None);
        assert_eq!(label(Some(""), Some("m")).as_deref(), Some(" · m"));
        assert_eq!(
            label(Some("Open · Router"), Some("acme/seer-1")).as_deref(),
            Some("Open · Router · acme/seer-1")
        );
    }
}
