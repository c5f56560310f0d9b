//! The audit record: one row for every tool call, from every path that makes one (the model,
//! a Retry, an MCP App, the command line) — when, where, which tool, the exact arguments, the
//! decision and what made it, how long it ran, and the hash and size of its result. Append-only
//! (the schema refuses a change, and a deletion of the last day's rows); kept after its
//! conversation is deleted; old rows go only by the retention setting ([`Store::prune_audit`]).

use rusqlite::{params, Row};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Cached, Store, StoreError, ToolDecision, ToolRun};

/// What an audit entry says of a call cut off mid-run.
pub const CUT_OFF: &str = "cut off: Switchboard stopped before the call ended, so it may have run";

/// Who asked for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum AuditOrigin {
    Model,
    /// The person's Retry of a failed call.
    Retry,
    /// An MCP App in a tool card.
    App,
    /// `switchboard mcp call`.
    Cli,
}

impl AuditOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditOrigin::Model => "model",
            AuditOrigin::Retry => "retry",
            AuditOrigin::App => "app",
            AuditOrigin::Cli => "cli",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "model" => AuditOrigin::Model,
            "retry" => AuditOrigin::Retry,
            "app" => AuditOrigin::App,
            "cli" => AuditOrigin::Cli,
            _ => return None,
        })
    }
}

/// Whether a call ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum AuditDecision {
    Allowed,
    Denied,
    /// Never up for a decision: a tool that does not exist, arguments that are not JSON.
    NotRun,
}

impl AuditDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditDecision::Allowed => "allowed",
            AuditDecision::Denied => "denied",
            AuditDecision::NotRun => "not_run",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "allowed" => AuditDecision::Allowed,
            "denied" => AuditDecision::Denied,
            "not_run" => AuditDecision::NotRun,
            _ => return None,
        })
    }
}

/// One call in the audit record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct AuditEntry {
    /// Its place in the record (0 until written).
    #[ts(type = "number")]
    pub seq: i64,
    /// When it was decided (ms since the epoch).
    #[ts(type = "number")]
    pub at: i64,
    pub origin: AuditOrigin,
    pub conversation_id: Option<String>,
    pub conversation_title: Option<String>,
    pub server: String,
    pub tool: String,
    /// The arguments exactly as sent.
    pub arguments: String,
    pub decision: AuditDecision,
    /// What decided: a rule, a standing approval, the person, the organisation's policy.
    pub decided_by: String,
    #[ts(type = "number | null")]
    pub duration_ms: Option<i64>,
    pub is_error: bool,
    /// SHA-256 of the whole result as the server sent it (hex), and its size in bytes.
    pub result_sha256: Option<String>,
    #[ts(type = "number | null")]
    pub result_bytes: Option<i64>,
}

impl AuditEntry {
    /// The entry for a call's record as it ended (or was refused), its whole result hashed.
    pub fn of_run(run: &ToolRun) -> AuditEntry {
        let origin = if run.asked_by.is_some() {
            AuditOrigin::App
        } else if run.retry_of.is_some() {
            AuditOrigin::Retry
        } else {
            AuditOrigin::Model
        };
        let decision = match run.decision {
            Some(ToolDecision::Allowed) => AuditDecision::Allowed,
            Some(ToolDecision::Denied) => AuditDecision::Denied,
            None => AuditDecision::NotRun,
        };
        let decided_by = match (&run.decided_by, run.decision_scope, &run.deny_reason) {
            (Some(by), ..) => by.clone(),
            (None, Some(scope), _) => scope.as_str().to_owned(),
            (None, None, Some(why)) => why.clone(),
            (None, None, None) => "not up for a decision".to_owned(),
        };
        let ran = run.started_at.is_some();
        let (result_sha256, result_bytes) =
            match (run.original.as_ref().or(run.result.as_ref()), ran) {
                (Some(result), true) => (Some(sha256(result.as_bytes())), Some(len(result))),
                _ => (None, None),
            };
        AuditEntry {
            seq: 0,
            at: run
                .started_at
                .or(run.finished_at)
                .unwrap_or_else(super::now_ms),
            origin,
            conversation_id: Some(run.conversation_id.clone()),
            conversation_title: None,
            server: run.server.clone(),
            tool: run.tool.clone(),
            arguments: run.arguments.clone(),
            decision,
            decided_by,
            duration_ms: run.started_at.zip(run.finished_at).map(|(s, f)| f - s),
            is_error: run.is_error,
            result_sha256,
            result_bytes,
        }
    }

    /// The entry for a call cut off mid-run (Switchboard's process ended before it did): as
    /// decided, with no duration or result, and what became of it said with what decided it.
    pub fn of_cut_off(run: &ToolRun) -> AuditEntry {
        let mut entry = AuditEntry::of_run(run);
        entry.decided_by = format!("{}; {CUT_OFF}", entry.decided_by);
        entry.duration_ms = None;
        entry.is_error = true;
        entry.result_sha256 = None;
        entry.result_bytes = None;
        entry
    }

    /// The entry for `switchboard mcp call`: the person's own call, from the command line.
    #[allow(clippy::too_many_arguments)]
    pub fn of_cli_call(
        server: &str,
        tool: &str,
        arguments: &str,
        decision: AuditDecision,
        decided_by: &str,
        started_at: Option<i64>,
        finished_at: i64,
        result: Option<&str>,
        is_error: bool,
    ) -> AuditEntry {
        AuditEntry {
            seq: 0,
            at: started_at.unwrap_or(finished_at),
            origin: AuditOrigin::Cli,
            conversation_id: None,
            conversation_title: None,
            server: server.to_owned(),
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
            decision,
            decided_by: decided_by.to_owned(),
            duration_ms: started_at.map(|s| finished_at - s),
            is_error,
            result_sha256: result.map(|r| sha256(r.as_bytes())),
            result_bytes: result.map(len),
        }
    }
}

/// [`AuditEntry::of_run`] on a blocking thread (hashing a 10 MB result takes tens of ms),
/// the run handed back.
pub(super) async fn entry_off_runtime(run: ToolRun) -> (ToolRun, AuditEntry) {
    tokio::task::spawn_blocking(move || {
        let entry = AuditEntry::of_run(&run);
        (run, entry)
    })
    .await
    .expect("hashing a result does not panic")
}

fn len(text: &str) -> i64 {
    i64::try_from(text.len()).unwrap_or(i64::MAX)
}

/// Hex SHA-256.
pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Which entries to read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct AuditFilter {
    /// From this time on (ms since the epoch).
    #[serde(default)]
    #[ts(optional, type = "number")]
    pub since: Option<i64>,
    /// Before this entry (`seq`): the next page back.
    #[serde(default)]
    #[ts(optional, type = "number")]
    pub before: Option<i64>,
    #[serde(default)]
    #[ts(optional)]
    pub server: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub conversation_id: Option<String>,
    #[serde(default)]
    #[ts(optional)]
    pub decision: Option<AuditDecision>,
    /// The most entries, newest first (at most 10,000; default 200).
    #[serde(default)]
    #[ts(optional)]
    pub limit: Option<u32>,
}

pub(super) fn append(tx: &rusqlite::Transaction<'_>, e: &AuditEntry) -> rusqlite::Result<()> {
    tx.execute_cached(
        "INSERT INTO audit (at, origin, conversation_id, conversation_title, server, tool, \
         arguments, decision, decided_by, duration_ms, is_error, result_sha256, result_bytes) \
         VALUES (?1, ?2, ?3, COALESCE(?4, (SELECT title FROM conversations WHERE id = ?3)), \
         ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            e.at,
            e.origin.as_str(),
            e.conversation_id,
            e.conversation_title,
            e.server,
            e.tool,
            e.arguments,
            e.decision.as_str(),
            e.decided_by,
            e.duration_ms,
            e.is_error,
            e.result_sha256,
            e.result_bytes,
        ],
    )?;
    Ok(())
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<AuditEntry> {
    let bad = |i: usize| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            "an unknown value in the audit record".into(),
        )
    };
    Ok(AuditEntry {
        seq: row.get(0)?,
        at: row.get(1)?,
        origin: AuditOrigin::parse(&row.get::<_, String>(2)?).ok_or_else(|| bad(2))?,
        conversation_id: row.get(3)?,
        conversation_title: row.get(4)?,
        server: row.get(5)?,
        tool: row.get(6)?,
        arguments: row.get(7)?,
        decision: AuditDecision::parse(&row.get::<_, String>(8)?).ok_or_else(|| bad(8))?,
        decided_by: row.get(9)?,
        duration_ms: row.get(10)?,
        is_error: row.get(11)?,
        result_sha256: row.get(12)?,
        result_bytes: row.get(13)?,
    })
}

/// The most entries one read returns.
pub const MAX_READ: u32 = 10_000;

impl Store {
    /// Writes one entry (a call that has no conversation: the command line's).
    ///
    /// # Errors
    /// A failed write.
    pub async fn append_audit(&self, entry: AuditEntry) -> Result<(), StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            append(&tx, &entry)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Entries as `filter` says, newest first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn audit(&self, filter: AuditFilter) -> Result<Vec<AuditEntry>, StoreError> {
        self.call(move |conn| {
            let limit = filter.limit.unwrap_or(200).clamp(1, MAX_READ);
            let mut stmt = conn.prepare_cached(
                "SELECT seq, at, origin, conversation_id, conversation_title, server, tool, \
                 arguments, decision, decided_by, duration_ms, is_error, result_sha256, \
                 result_bytes FROM audit \
                 WHERE (?1 IS NULL OR at >= ?1) AND (?2 IS NULL OR seq < ?2) \
                 AND (?3 IS NULL OR server = ?3) AND (?4 IS NULL OR conversation_id = ?4) \
                 AND (?5 IS NULL OR decision = ?5) \
                 ORDER BY seq DESC LIMIT ?6",
            )?;
            let rows = stmt.query_map(
                params![
                    filter.since,
                    filter.before,
                    filter.server,
                    filter.conversation_id,
                    filter.decision.map(AuditDecision::as_str),
                    limit
                ],
                from_row,
            )?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Deletes the entries older than `keep_days` days (at least one); returns how many.
    ///
    /// # Errors
    /// A failed write.
    pub async fn prune_audit(&self, keep_days: u32) -> Result<usize, StoreError> {
        // A minute past the days, so no row the schema keeps (the last day's, by its clock in
        // whole seconds) is asked for: that would refuse the whole deletion.
        let cutoff = super::now_ms() - i64::from(keep_days.max(1)) * 86_400_000 - 60_000;
        self.call(move |conn| Ok(conn.execute("DELETE FROM audit WHERE at < ?1", [cutoff])?))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_record_is_append_only_kept_after_its_conversation_and_pruned_by_age() {
        let store = Store::open_in_memory().unwrap();
        let conversation = store.create_conversation("a".into()).await.unwrap();
        let mut run = ToolRun {
            id: "r1".into(),
            conversation_id: conversation.id.clone(),
            server: "fs".into(),
            tool: "read_file".into(),
            arguments: r#"{"path":"/tmp/a"}"#.into(),
            decision: Some(ToolDecision::Allowed),
            decided_by: Some("rule 1 of your policy.json: allow fs".into()),
            started_at: Some(super::super::now_ms() - 5),
            finished_at: Some(super::super::now_ms()),
            result: Some("hello".into()),
            ..ToolRun::default()
        };
        store.append_audit(AuditEntry::of_run(&run)).await.unwrap();
        run.retry_of = Some(crate::events::CallRef {
            message_id: "m".into(),
            call_id: "c".into(),
        });
        run.result = None;
        run.started_at = None;
        run.decision = Some(ToolDecision::Denied);
        store.append_audit(AuditEntry::of_run(&run)).await.unwrap();
        store
            .delete_conversation(conversation.id.clone())
            .await
            .unwrap();
        let all = store.audit(AuditFilter::default()).await.unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].origin, AuditOrigin::Model);
        assert_eq!(all[0].origin, AuditOrigin::Retry);
        assert_eq!(all[1].result_bytes, Some(5));
        assert_eq!(
            all[1].result_sha256.as_deref(),
            Some("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        );
        assert_eq!(
            all[1].conversation_id.as_deref(),
            Some(conversation.id.as_str())
        );
        assert_eq!(all[0].result_sha256, None);
        // Never changed, and the last day's entries are never deleted.
        let changed = store
            .call(|conn| Ok(conn.execute("UPDATE audit SET decided_by = 'x'", [])?))
            .await;
        assert!(changed.is_err());
        let deleted = store
            .call(|conn| Ok(conn.execute("DELETE FROM audit", [])?))
            .await;
        assert!(deleted.is_err());
        assert_eq!(store.prune_audit(1).await.unwrap(), 0);
        let old = AuditEntry {
            at: super::super::now_ms() - 40 * 86_400_000,
            ..all[0].clone()
        };
        store.append_audit(old).await.unwrap();
        assert_eq!(store.prune_audit(30).await.unwrap(), 1);
        let filtered = store
            .audit(AuditFilter {
                decision: Some(AuditDecision::Denied),
                server: Some("fs".into()),
                ..AuditFilter::default()
            })
            .await
            .unwrap();
        assert_eq!(filtered.len(), 1);
    }
}
