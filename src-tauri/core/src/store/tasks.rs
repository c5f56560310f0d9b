//! Long tasks kept (issue 61): a call a server answered with a task (the MCP Tasks extension)
//! keeps the task's id and where it stands on its `tool_runs` row, so a task outlives the run
//! that started it (the person went on without waiting) and the process (a crash, a kill, a
//! quit): whoever opens the home next follows it again. A result that comes after the call
//! was answered is kept as a late result: a message of its own, after the call, that the model
//! reads with the next question and the window shows on the call's card.

use rusqlite::params;

use super::tool_loop::{run_by_id, runs_where, TaskState};
use super::{messages, Message, NewMessage, Role, Store, StoreError, ToolRun};

pub use super::late_results::LATE_RESULT;

/// The call a late result is of: the answer's message id and the call's id. A call id alone
/// is not enough: Ollama's and Gemini's restart at `call_0` in each answer.
pub fn late_result_call(m: &Message) -> Option<(&str, &str)> {
    if m.role != Role::System || m.name.as_deref() != Some(LATE_RESULT) {
        return None;
    }
    m.tool_call_id.as_deref()?.split_once(':')
}

/// How a task followed outside its run ended: its state, the whole result as the server sent
/// it (JSON) or Switchboard's words, and what the model reads.
#[derive(Debug, Clone)]
pub struct TaskEnd {
    pub state: TaskState,
    pub result: String,
    pub for_model: String,
    pub is_error: bool,
    pub rich: bool,
}

impl TaskEnd {
    /// An end that is Switchboard's words, not a result: the model and the record both read
    /// `text`, as an error.
    pub fn words(state: TaskState, text: String) -> Self {
        TaskEnd {
            state,
            result: text.clone(),
            for_model: text,
            is_error: true,
            rich: false,
        }
    }
}

/// How far ahead of this clock another process's late result may be dated (their clocks
/// are the same computer's; this allows for a step between reading it and writing).
const FUTURE_SLACK_MS: i64 = 5_000;

impl Store {
    /// Records that call `run_id` runs as the server's task `task_id`, followed by its run.
    ///
    /// # Errors
    /// A failed query.
    pub async fn record_call_task(
        &self,
        run_id: String,
        task_id: String,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "UPDATE tool_runs SET task_id = ?1, task_state = 'running' WHERE id = ?2",
                params![task_id, run_id],
            )?;
            Ok(())
        })
        .await
    }

    /// Hands call `run_id`'s task over to be followed outside its run (the person went on
    /// without it). Returns whether it was still running.
    ///
    /// # Errors
    /// A failed query.
    pub async fn send_task_to_background(&self, run_id: String) -> Result<bool, StoreError> {
        self.call(move |conn| {
            Ok(conn.execute(
                "UPDATE tool_runs SET task_state = 'background' \
                 WHERE id = ?1 AND task_state = 'running'",
                [run_id],
            )? == 1)
        })
        .await
    }

    /// The calls whose tasks this process is to follow outside any run, oldest first (without
    /// results): those its own runs handed over, and those whose process is gone (crashed,
    /// killed, quit). A task another live process handed over is that process's: two would
    /// ask its forms twice, and a local server's task is known only to the process that
    /// started it.
    ///
    /// # Errors
    /// A failed query.
    pub async fn background_tasks(&self) -> Result<Vec<ToolRun>, StoreError> {
        let own = self.writer.id().to_owned();
        let dir = self.data_dir.clone();
        self.call(move |conn| {
            let writers: std::collections::HashMap<String, Option<String>> = conn
                .prepare_cached(
                    "SELECT r.id, m.writer FROM tool_runs r JOIN messages m ON m.id = r.message_id \
                     WHERE r.task_state = 'background'",
                )?
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect::<Result<_, _>>()?;
            let mine = |run: &ToolRun| {
                let writer = writers.get(&run.id).cloned().flatten();
                writer.as_deref() == Some(own.as_str())
                    || super::writers::gone(&own, dir.as_deref(), writer.as_deref())
            };
            let mut runs = runs_where(
                conn,
                "task_state = 'background' ORDER BY started_at, id",
                [],
            )?;
            runs.retain(mine);
            Ok(runs)
        })
        .await
    }

    /// The late results another process (`tasks follow`, another window) kept at or after
    /// `since` (ms since the epoch), oldest first: each one's id, conversation and time. At
    /// `since` itself, so that two kept in one millisecond, one read before the other was
    /// written, are both found (the caller skips those it was told already). Only those a
    /// process kept (an imported one has no writer), and none dated ahead of now: an import
    /// from a clock that ran ahead must not move the caller past every result to come.
    ///
    /// # Errors
    /// A failed query.
    pub async fn late_results_of_others(
        &self,
        since: i64,
    ) -> Result<Vec<(String, String, i64)>, StoreError> {
        let own = self.writer.id().to_owned();
        self.call(move |conn| {
            let found = conn
                .prepare_cached(&format!(
                    "SELECT id, conversation_id, created_at FROM messages \
                     WHERE name = '{LATE_RESULT}' AND role = 'system' \
                     AND created_at >= ?1 AND created_at <= ?3 \
                     AND writer IS NOT NULL AND writer <> ?2 ORDER BY created_at LIMIT 1000"
                ))?
                .query_map(
                    params![since, own, super::now_ms() + FUTURE_SLACK_MS],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(found)
        })
        .await
    }

    /// The call `run_id` (without its result), when it ran as a task.
    ///
    /// # Errors
    /// A failed query.
    pub async fn task_run(&self, run_id: String) -> Result<Option<ToolRun>, StoreError> {
        self.call(move |conn| {
            Ok(
                runs_where(conn, "id = ?1 AND task_id IS NOT NULL", [run_id])?
                    .into_iter()
                    .next(),
            )
        })
        .await
    }

    /// The calls whose tasks are open or ended outside their runs, newest first, at most
    /// `limit` (without results): what `tasks list` shows.
    ///
    /// # Errors
    /// A failed query.
    pub async fn recent_tasks(&self, limit: u32) -> Result<Vec<ToolRun>, StoreError> {
        self.call(move |conn| {
            runs_where(
                conn,
                "task_id IS NOT NULL ORDER BY started_at DESC, id LIMIT ?1",
                [limit],
            )
        })
        .await
    }

    /// Records how call `run_id`'s task, followed outside its run, ended, and keeps its late
    /// result after the call (in one transaction). Returns the late result's message, or
    /// `None` when the task was no longer followed outside a run (someone else ended it), or
    /// its call is not recorded as answered yet (its run records it in a moment: the task is
    /// followed again at the next look, and not ended twice).
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the call (or its conversation) is gone; a failed query.
    pub async fn end_background_task(
        &self,
        run_id: String,
        mut end: TaskEnd,
    ) -> Result<Option<Message>, StoreError> {
        // A result too large for the database goes to a file, as a run's does.
        let result = if end.result.len() > super::tool_loop::MAX_STORED_RESULT {
            self.keep_in_file(&run_id, std::mem::take(&mut end.result))
                .await
        } else {
            Some(std::mem::take(&mut end.result))
        };
        let own = self.writer.id().to_owned();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let changed = tx.execute(
                "UPDATE tool_runs SET task_state = ?1, result = ?2, is_error = ?3, rich = ?4 \
                 WHERE id = ?5 AND task_state = 'background' AND finished_at IS NOT NULL",
                params![end.state.as_str(), result, end.is_error, end.rich, run_id],
            )?;
            if changed == 0 {
                return Ok(None);
            }
            let run = run_by_id(&tx, &run_id)?;
            let mut late = NewMessage::text(Role::System, end.for_model);
            late.name = Some(LATE_RESULT.to_owned());
            // A message id is a UUID: the first ':' ends it.
            late.tool_call_id = Some(format!("{}:{}", run.message_id, run.call_id));
            late.is_error = end.is_error;
            let saved = messages::insert(&tx, &run.conversation_id, &late)?;
            // Whose it is: another process's window hears of it (see `late_results_of_others`).
            tx.execute(
                "UPDATE messages SET writer = ?1 WHERE id = ?2",
                params![own, saved.id],
            )?;
            tx.commit()?;
            Ok(Some(saved))
        })
        .await
    }
}
