//! Schedules and their runs (issue 61). A schedule's row holds what the person wrote (as JSON)
//! and when it runs next; a run's row says when it was due, what became of it and the
//! conversation it landed in. A run is claimed by moving its schedule's `next_at` on in the
//! same transaction that records it, and `(schedule, due_at)` is unique: two processes that
//! meet at one due time cannot both run it. A run left `running` by a process that is gone
//! reads as `interrupted` (the same writers' locks that tell an answer cut off by a crash).

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::Serialize;

use super::{new_id, now_ms, Store, StoreError};
use crate::schedules::NewSchedule;

/// A schedule as stored: what the person wrote, and when it runs next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleRow {
    pub id: String,
    pub fields: NewSchedule,
    pub enabled: bool,
    pub created_at: i64,
    pub next_at: Option<i64>,
}

/// What became of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    /// A call waits for the person's approval.
    Waiting,
    Completed,
    Failed,
    Stopped,
    /// It was missed, and the schedule skips missed runs.
    Skipped,
    /// The process running it ended first.
    Interrupted,
}

impl RunStatus {
    fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Waiting => "waiting",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Stopped => "stopped",
            RunStatus::Skipped => "skipped",
            RunStatus::Interrupted => "interrupted",
        }
    }

    fn parse(text: &str) -> RunStatus {
        match text {
            "running" => RunStatus::Running,
            "waiting" => RunStatus::Waiting,
            "completed" => RunStatus::Completed,
            "stopped" => RunStatus::Stopped,
            "skipped" => RunStatus::Skipped,
            "interrupted" => RunStatus::Interrupted,
            _ => RunStatus::Failed,
        }
    }

    /// Whether the run is still going.
    pub fn is_live(self) -> bool {
        matches!(self, RunStatus::Running | RunStatus::Waiting)
    }
}

/// One run of a schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ScheduleRun {
    pub id: String,
    pub schedule_id: String,
    pub schedule_name: String,
    /// The time it was due (ms); for a run asked for by hand, when it was asked.
    #[ts(type = "number")]
    pub due_at: i64,
    #[ts(type = "number")]
    pub started_at: i64,
    #[ts(type = "number | null")]
    pub finished_at: Option<i64>,
    pub status: RunStatus,
    /// It was missed and ran at the next start.
    pub late: bool,
    /// Someone asked for it (`schedule run`, "Run now").
    pub manual: bool,
    #[ts(optional = nullable)]
    pub conversation_id: Option<String>,
    /// Why it failed, what waits for approval, or how it ended.
    #[ts(optional = nullable)]
    pub message: Option<String>,
}

/// A run being claimed.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub due_at: i64,
    pub status: RunStatus,
    pub late: bool,
    pub manual: bool,
    pub message: Option<String>,
}

const SCHEDULE_COLUMNS: &str = "id, fields, enabled, created_at, next_at";

fn schedule_from(row: &Row<'_>) -> rusqlite::Result<(String, String, bool, i64, Option<i64>)> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
    ))
}

fn parsed(
    (id, fields, enabled, created_at, next_at): (String, String, bool, i64, Option<i64>),
) -> Result<ScheduleRow, StoreError> {
    let fields = serde_json::from_str(&fields).map_err(|e| StoreError::InvalidRow {
        detail: format!("schedule {id}: {e}"),
    })?;
    Ok(ScheduleRow {
        id,
        fields,
        enabled,
        created_at,
        next_at,
    })
}

fn fields_json(fields: &NewSchedule) -> Result<String, StoreError> {
    serde_json::to_string(fields).map_err(|e| StoreError::InvalidRow {
        detail: e.to_string(),
    })
}

fn name_taken(conn: &Connection, name: &str, except: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM schedules WHERE name = ?1 COLLATE NOCASE AND id <> ?2)",
        params![name, except],
        |row| row.get(0),
    )
}

fn get(conn: &Connection, key: &str) -> Result<ScheduleRow, StoreError> {
    let row = conn
        .query_row(
            &format!(
                "SELECT {SCHEDULE_COLUMNS} FROM schedules \
                 WHERE id = ?1 OR name = ?1 COLLATE NOCASE ORDER BY id = ?1 DESC LIMIT 1"
            ),
            [key],
            schedule_from,
        )
        .optional()?
        .ok_or_else(|| StoreError::NotFound {
            what: format!("no schedule is called “{key}”"),
        })?;
    parsed(row)
}

const RUN_COLUMNS: &str = "r.id, r.schedule_id, s.name, r.due_at, r.started_at, r.finished_at, \
     r.status, r.late, r.manual, r.conversation_id, r.message, r.writer";

impl Store {
    /// Keeps a new schedule, first due at `next_at`.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when another schedule has the name; a failed write.
    pub async fn add_schedule(
        &self,
        fields: NewSchedule,
        created_at: i64,
        next_at: Option<i64>,
    ) -> Result<ScheduleRow, StoreError> {
        let json = fields_json(&fields)?;
        self.call(move |conn| {
            let tx = conn.transaction()?;
            if name_taken(&tx, &fields.name, "")? {
                return Err(StoreError::Conflict {
                    what: format!("A schedule is already called “{}”.", fields.name),
                });
            }
            let id = new_id();
            tx.execute(
                "INSERT INTO schedules (id, name, fields, enabled, created_at, next_at) \
                 VALUES (?1, ?2, ?3, 1, ?4, ?5)",
                params![id, fields.name, json, created_at, next_at],
            )?;
            let made = get(&tx, &id)?;
            tx.commit()?;
            Ok(made)
        })
        .await
    }

    /// Every schedule, by name.
    ///
    /// # Errors
    /// A failed query, or a row that cannot be read.
    pub async fn schedules(&self) -> Result<Vec<ScheduleRow>, StoreError> {
        self.call(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {SCHEDULE_COLUMNS} FROM schedules ORDER BY name COLLATE NOCASE"
            ))?;
            let rows = stmt
                .query_map([], schedule_from)?
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(parsed).collect()
        })
        .await
    }

    /// A count that moves with every change of a schedule or a run (an insert, an update, a
    /// delete, a cascade), made by any process: how the window hears that the command line
    /// added a schedule or ended a run. Kept by triggers; one row read.
    ///
    /// # Errors
    /// A failed query.
    pub async fn schedule_changes(&self) -> Result<i64, StoreError> {
        self.call(|conn| {
            Ok(conn.query_row(
                "SELECT COALESCE((SELECT n FROM change_counts WHERE what = 'schedules'), 0)",
                [],
                |row| row.get(0),
            )?)
        })
        .await
    }

    /// A schedule by its id or name.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn schedule(&self, key: String) -> Result<ScheduleRow, StoreError> {
        self.call(move |conn| get(conn, &key)).await
    }

    /// Removes a schedule and the record of its runs (their conversations stay).
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed write.
    pub async fn remove_schedule(&self, key: String) -> Result<ScheduleRow, StoreError> {
        self.call(move |conn| {
            let found = get(conn, &key)?;
            conn.execute("DELETE FROM schedules WHERE id = ?1", [&found.id])?;
            Ok(found)
        })
        .await
    }

    /// Switches a schedule on (next due at `next_at`) or off.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed write.
    pub async fn set_schedule_enabled(
        &self,
        id: String,
        enabled: bool,
        next_at: Option<i64>,
    ) -> Result<ScheduleRow, StoreError> {
        self.call(move |conn| {
            let changed = conn.execute(
                "UPDATE schedules SET enabled = ?2, next_at = ?3 WHERE id = ?1",
                params![id, enabled, next_at],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound {
                    what: format!("schedule {id}"),
                });
            }
            get(conn, &id)
        })
        .await
    }

    /// Claims the run of schedule `id` due at `run.due_at`, moving its next time from `was` to
    /// `next_at`; `None` when another process claimed it first (the schedule's next time is no
    /// longer `was`). A run asked for by hand (`was`: `None`) leaves the next time alone.
    ///
    /// # Errors
    /// A failed write.
    pub async fn claim_schedule_run(
        &self,
        id: String,
        was: Option<i64>,
        next_at: Option<i64>,
        run: NewRun,
    ) -> Result<Option<String>, StoreError> {
        let writer = self.writer.id().to_owned();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            if !run.manual {
                let moved = tx.execute(
                    "UPDATE schedules SET next_at = ?3 WHERE id = ?1 AND next_at IS ?2",
                    params![id, was, next_at],
                )?;
                if moved == 0 {
                    return Ok(None);
                }
            }
            let run_id = new_id();
            let finished = (!run.status.is_live()).then(now_ms);
            let inserted = tx.execute(
                "INSERT OR IGNORE INTO schedule_runs \
                 (id, schedule_id, due_at, started_at, finished_at, status, late, manual, message, writer) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    run_id,
                    id,
                    run.due_at,
                    now_ms(),
                    finished,
                    run.status.as_str(),
                    run.late,
                    run.manual,
                    run.message,
                    writer
                ],
            )?;
            // A time claimed already (a clock set back, a run by hand in the same millisecond)
            // still moves the schedule on, or it would be due again at once, for ever.
            tx.commit()?;
            Ok((inserted > 0).then_some(run_id))
        })
        .await
    }

    /// Records the conversation a run landed in (its status is left as it is: a call may
    /// already wait for the person).
    ///
    /// # Errors
    /// A failed write.
    pub async fn set_schedule_run_conversation(
        &self,
        run_id: String,
        conversation_id: String,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "UPDATE schedule_runs SET conversation_id = ?2 WHERE id = ?1",
                params![run_id, conversation_id],
            )?;
            Ok(())
        })
        .await
    }

    /// Records what became of a run (and the conversation it landed in).
    ///
    /// # Errors
    /// A failed write.
    pub async fn set_schedule_run(
        &self,
        run_id: String,
        status: RunStatus,
        conversation_id: Option<String>,
        message: Option<String>,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            let finished = (!status.is_live()).then(now_ms);
            conn.execute(
                "UPDATE schedule_runs SET status = ?2, \
                 conversation_id = COALESCE(?3, conversation_id), message = ?4, finished_at = ?5 \
                 WHERE id = ?1",
                params![run_id, status.as_str(), conversation_id, message, finished],
            )?;
            Ok(())
        })
        .await
    }

    /// The runs still going (running, or waiting for the person), however many and however
    /// old; a run whose process is gone is not one of them.
    ///
    /// # Errors
    /// A failed query.
    pub async fn live_schedule_runs(&self) -> Result<Vec<ScheduleRun>, StoreError> {
        self.runs_where("r.status IN ('running', 'waiting')", None, u32::MAX)
            .await
            .map(|runs| runs.into_iter().filter(|r| r.status.is_live()).collect())
    }

    /// The latest runs (of one schedule, or of all), newest first, at most `limit`; a run whose
    /// process is gone reads as interrupted.
    ///
    /// # Errors
    /// A failed query.
    pub async fn schedule_runs(
        &self,
        schedule_id: Option<String>,
        limit: u32,
    ) -> Result<Vec<ScheduleRun>, StoreError> {
        self.runs_where("1", schedule_id, limit).await
    }

    async fn runs_where(
        &self,
        condition: &'static str,
        schedule_id: Option<String>,
        limit: u32,
    ) -> Result<Vec<ScheduleRun>, StoreError> {
        let own = self.writer.id().to_owned();
        let dir = self.data_dir.clone();
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM schedule_runs r JOIN schedules s ON s.id = r.schedule_id \
                 WHERE ({condition}) AND (?1 IS NULL OR r.schedule_id = ?1) \
                 ORDER BY r.started_at DESC, r.id DESC LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![schedule_id, limit], |row| {
                let status = RunStatus::parse(&row.get::<_, String>(6)?);
                let writer: Option<String> = row.get(11)?;
                let gone = status.is_live()
                    && super::writers::gone(&own, dir.as_deref(), writer.as_deref());
                Ok(ScheduleRun {
                    id: row.get(0)?,
                    schedule_id: row.get(1)?,
                    schedule_name: row.get(2)?,
                    due_at: row.get(3)?,
                    started_at: row.get(4)?,
                    finished_at: row.get(5)?,
                    status: if gone { RunStatus::Interrupted } else { status },
                    late: row.get(7)?,
                    manual: row.get(8)?,
                    conversation_id: row.get(9)?,
                    message: row.get(10)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedules::{Missed, TimeRule};

    fn fields(name: &str) -> NewSchedule {
        NewSchedule {
            name: name.into(),
            prompt: "What is new?".into(),
            rule: TimeRule::Every { minutes: 30 },
            profile: None,
            provider: None,
            model: None,
            missed: Missed::RunOnce,
            approval_wait_minutes: 30,
        }
    }

    fn run(due_at: i64) -> NewRun {
        NewRun {
            due_at,
            status: RunStatus::Running,
            late: false,
            manual: false,
            message: None,
        }
    }

    #[tokio::test]
    async fn a_due_time_is_claimed_once() {
        let store = Store::open_in_memory().unwrap();
        let made = store
            .add_schedule(fields("news"), 0, Some(100))
            .await
            .unwrap();
        assert!(matches!(
            store.add_schedule(fields("NEWS"), 0, None).await,
            Err(StoreError::Conflict { .. })
        ));
        let first = store
            .claim_schedule_run(made.id.clone(), Some(100), Some(200), run(100))
            .await
            .unwrap();
        assert!(first.is_some());
        // A second runner that read the same next time finds it moved on.
        let second = store
            .claim_schedule_run(made.id.clone(), Some(100), Some(200), run(100))
            .await
            .unwrap();
        assert_eq!(second, None);
        assert_eq!(
            store.schedule("news".into()).await.unwrap().next_at,
            Some(200)
        );

        store
            .set_schedule_run(
                first.unwrap(),
                RunStatus::Completed,
                None,
                Some("done".into()),
            )
            .await
            .unwrap();
        let runs = store
            .schedule_runs(Some(made.id.clone()), 10)
            .await
            .unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].status, RunStatus::Completed);
        assert!(runs[0].finished_at.is_some());
        assert_eq!(runs[0].schedule_name, "news");

        store.remove_schedule("news".into()).await.unwrap();
        assert!(store.schedule_runs(None, 10).await.unwrap().is_empty());
    }
}
