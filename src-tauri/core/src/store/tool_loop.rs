//! What the tool loop keeps besides messages: a record of every tool call (who allowed it and
//! how, when it ran, its full result), the person's standing approvals of tools (for one
//! conversation or for all), and each conversation's tool toggles and auto-approve switch;
//! and the recovery of what a process that died mid-answer or mid-call left unfinished.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::{conversations, messages, now_ms, Cached, Message, NewMessage, Store, StoreError};

/// One call of a conversation: the call `call_id` of the answer `message_id` (a model's call
/// ids are only unique within one answer; Ollama and Gemini number them from 0 each time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct CallRef {
    pub message_id: String,
    pub call_id: String,
}

/// Whether a call was let run; the values of `tool_runs.decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolDecision {
    Allowed,
    Denied,
}

impl ToolDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolDecision::Allowed => "allowed",
            ToolDecision::Denied => "denied",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "allowed" => ToolDecision::Allowed,
            "denied" => ToolDecision::Denied,
            _ => return None,
        })
    }
}

/// Why a call was allowed or denied; the values of `tool_runs.decision_scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// The person answered for this call only.
    Once,
    /// A standing approval for this conversation.
    Conversation,
    /// A standing approval for every conversation.
    Always,
    /// A read-only tool of a server the person trusts.
    Trusted,
    /// The conversation is in auto-approve.
    AutoApprove,
    /// Decided without asking: the command line's `--approve all|none`, Switchboard's own
    /// reading tools, or a rule of a policy file (the person's or the organisation's).
    Policy,
}

impl ApprovalScope {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalScope::Once => "once",
            ApprovalScope::Conversation => "conversation",
            ApprovalScope::Always => "always",
            ApprovalScope::Trusted => "trusted",
            ApprovalScope::AutoApprove => "auto_approve",
            ApprovalScope::Policy => "policy",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "once" => ApprovalScope::Once,
            "conversation" => ApprovalScope::Conversation,
            "always" => ApprovalScope::Always,
            "trusted" => ApprovalScope::Trusted,
            "auto_approve" => ApprovalScope::AutoApprove,
            "policy" => ApprovalScope::Policy,
            _ => return None,
        })
    }
}

/// Where a call's task stands; the values of `tool_runs.task_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Its run follows it: the call waits for it.
    Running,
    /// Followed outside any run: the call was answered without its result.
    Background,
    Completed,
    Failed,
    Cancelled,
    /// Its server no longer knows it (a local server restarted with the app), or it is gone.
    Lost,
}

impl TaskState {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Running => "running",
            TaskState::Background => "background",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
            TaskState::Lost => "lost",
        }
    }

    pub(super) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "running" => TaskState::Running,
            "background" => TaskState::Background,
            "completed" => TaskState::Completed,
            "failed" => TaskState::Failed,
            "cancelled" => TaskState::Cancelled,
            "lost" => TaskState::Lost,
            _ => return None,
        })
    }

    /// Whether the task may still end with a result.
    pub fn is_open(self) -> bool {
        matches!(self, TaskState::Running | TaskState::Background)
    }
}

/// The task a call was answered with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct CallTask {
    /// The server's id for it.
    pub id: String,
    pub state: TaskState,
}

/// One tool call as it happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct ToolRun {
    pub id: String,
    pub conversation_id: String,
    /// The assistant message that asked for the call.
    pub message_id: String,
    pub call_id: String,
    pub server: String,
    pub tool: String,
    /// "Server · Tool Name" as the person saw it when the call ran; the name the model used
    /// for a tool that does not exist. Rows older than the column get the server's name and the
    /// tool's, title-cased.
    pub display_name: String,
    /// The argument text exactly as the model sent it.
    pub arguments: String,
    /// `None` when the call never got that far (an unknown tool).
    pub decision: Option<ToolDecision>,
    pub decision_scope: Option<ApprovalScope>,
    pub deny_reason: Option<String>,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub is_error: bool,
    /// The whole result as the server sent it (JSON), or the error text. Kept for the record
    /// and never sent to a window: the tool message carries what the model got.
    #[serde(skip)]
    #[ts(skip)]
    pub result: Option<String>,
    /// The failed call this one ran again, from a Retry (the first of a chain of retries).
    pub retry_of: Option<CallRef>,
    /// The model's few words on what the call did, when Settings asked for them.
    pub description: Option<String>,
    /// Whether a Retry can run it again ([`ToolRun::retry_refusal`] has nothing to say); worked
    /// out from the rest whenever a run is read or made, never saved.
    pub can_retry: bool,
    /// Whether the words the card shows are the server's answer (its result, an error it
    /// reported included), not Switchboard's own about the call (a timeout, a crash, a refusal,
    /// a denial): the card reads Switchboard's words for what happened, and never the server's,
    /// which are hostile text. Worked out like `can_retry`: `result` holds the server's whole
    /// answer as a JSON object, and Switchboard's words as plain text.
    #[serde(default)]
    pub answered: bool,
    /// Whether the result has more than text for a person to see (images, audio, resources,
    /// links, structured content: [`crate::mcp::results::is_rich`]); the card then asks for
    /// its [`crate::mcp::results::view`].
    pub rich: bool,
    /// Who asked for the call when the model did not: the MCP App shown in the card of another
    /// call ([`Store::record_app_call`]). Such a call has no tool message: the model never
    /// asked, and does not read its result.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub asked_by: Option<String>,
    /// What decided whether it ran, in the person's words: the rule of a policy file, the
    /// standing approval, the person, … ([`crate::policy::Judgement::by`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decided_by: Option<String>,
    /// The whole result as the server sent it, when the person reviewed it and the model read
    /// less: hashed into the audit record, never stored.
    #[serde(skip)]
    #[ts(skip)]
    pub original: Option<String>,
    /// The task the server answered the call with (the Tasks extension), and where it stands:
    /// kept, so a task outlives its run and Switchboard ([`super::tasks`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub task: Option<CallTask>,
}

impl ToolRun {
    /// The record id of call `call_id` of the answer `message_id`: the same when it is recorded
    /// as started and when it ends (a UUID made from the two, like every other id).
    pub fn id_for(message_id: &str, call_id: &str) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new()
            .chain_update(message_id.as_bytes())
            .chain_update([0])
            .chain_update(call_id.as_bytes())
            .finalize();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        uuid::Builder::from_custom_bytes(bytes)
            .into_uuid()
            .to_string()
    }

    /// Why a Retry cannot run this call again, or `None` when it can as far as the record goes:
    /// it failed, it was allowed, its tool exists and its arguments are a JSON object (no text at
    /// all is an empty one). Whether the tool is still offered is the caller's to check.
    pub fn retry_refusal(&self) -> Option<String> {
        let name = &self.display_name;
        if !self.is_error {
            return Some(format!("“{name}” did not fail; there is nothing to retry."));
        }
        if self.decision == Some(ToolDecision::Denied) {
            return Some(format!(
                "“{name}” was not allowed to run; ask the model again if you want it to."
            ));
        }
        if self.server.is_empty() {
            return Some(format!(
                "The model asked for “{name}”, a tool that does not exist; there is nothing to run again."
            ));
        }
        let object = self.arguments.trim().is_empty()
            || matches!(
                serde_json::from_str::<serde_json::Value>(&self.arguments),
                Ok(serde_json::Value::Object(_))
            );
        if !object {
            return Some(format!(
                "The arguments of “{name}” are not a JSON object, so it cannot run as they are; send a message asking the model to call it again."
            ));
        }
        None
    }

    /// Sets [`ToolRun::can_retry`] from the rest.
    #[must_use]
    pub fn with_retry_rule(mut self) -> Self {
        self.can_retry = self.retry_refusal().is_none();
        self.answered = self.result.as_deref().is_some_and(|r| r.starts_with('{'));
        self
    }
}

/// [`ToolRun::asked_by`] of a call the MCP App in the card of call `call_id` (shown as
/// `display_name`) made.
#[must_use]
pub fn asked_by_app(display_name: &str, call_id: &str) -> String {
    format!("the app in the card of “{display_name}” (call {call_id})")
}

/// The largest raw result a call's record keeps in the database; a larger one goes to a file
/// ([`Store::record_tool_call`]).
pub const MAX_STORED_RESULT: usize = 10 * 1024 * 1024;

/// Writes `run`, replacing a record of the same id (a call recorded as started, now ended).
pub(super) fn upsert_run(tx: &rusqlite::Transaction<'_>, run: &ToolRun) -> rusqlite::Result<usize> {
    tx.execute_cached(
        &format!(
            "INSERT INTO tool_runs ({RUN_COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23) \
             ON CONFLICT(id) DO UPDATE SET {UPDATE_RUN}"
        ),
        params![
            run.id,
            run.conversation_id,
            run.message_id,
            run.call_id,
            run.server,
            run.tool,
            run.arguments,
            run.decision.map(ToolDecision::as_str),
            run.decision_scope.map(ApprovalScope::as_str),
            run.deny_reason,
            run.started_at,
            run.finished_at,
            run.is_error,
            run.result,
            run.display_name,
            run.retry_of.as_ref().map(|r| &r.call_id),
            run.description,
            run.retry_of.as_ref().map(|r| &r.message_id),
            run.rich,
            run.asked_by,
            run.decided_by,
            run.task.as_ref().map(|t| &t.id),
            run.task.as_ref().map(|t| t.state.as_str()),
        ],
    )
}

/// A run recorded again (as it ends) keeps its task when the new record names none: the task
/// is recorded on its own as the server answers with it ([`Store::record_call_task`]).
const UPDATE_RUN: &str = "conversation_id = excluded.conversation_id, \
     message_id = excluded.message_id, call_id = excluded.call_id, server = excluded.server, \
     tool = excluded.tool, arguments = excluded.arguments, decision = excluded.decision, \
     decision_scope = excluded.decision_scope, deny_reason = excluded.deny_reason, \
     started_at = excluded.started_at, finished_at = excluded.finished_at, \
     is_error = excluded.is_error, result = excluded.result, display_name = excluded.display_name, \
     retry_of = excluded.retry_of, description = excluded.description, \
     retry_of_message = excluded.retry_of_message, rich = excluded.rich, \
     asked_by = excluded.asked_by, decided_by = excluded.decided_by, \
     task_id = COALESCE(excluded.task_id, task_id), \
     task_state = CASE WHEN task_state IN ('completed', 'failed', 'cancelled', 'lost') \
         THEN task_state ELSE COALESCE(excluded.task_state, task_state) END";

/// The columns of a run in [`run_from_row`]'s order, with `$result` where the result goes.
macro_rules! run_columns {
    ($result:literal) => {
        concat!(
            "id, conversation_id, message_id, call_id, server, tool, arguments, decision, \
             decision_scope, deny_reason, started_at, finished_at, is_error, ",
            $result,
            ", display_name, retry_of, description, retry_of_message, rich, asked_by, decided_by, \
             task_id, task_state"
        )
    };
}

const RUN_COLUMNS: &str = run_columns!("result");
/// The same with no result: a page of cards never reads a long result. Only whether the
/// server answered ([`ToolRun::answered`]) is read: `{` for its answer (a JSON object), `NULL`
/// for Switchboard's own words ([`runs_between`] then drops it).
const RUN_COLUMNS_NO_RESULT: &str =
    run_columns!("CASE WHEN substr(result, 1, 1) = '{' THEN '{' END");

/// The calls made by the answers numbered `first..=last` of a conversation, without results.
pub(super) fn runs_between(
    conn: &rusqlite::Connection,
    conversation_id: &str,
    first: i64,
    last: i64,
) -> Result<Vec<ToolRun>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RUN_COLUMNS_NO_RESULT} FROM tool_runs WHERE conversation_id = ?1 AND message_id IN \
         (SELECT id FROM messages WHERE conversation_id = ?1 AND seq BETWEEN ?2 AND ?3) \
         ORDER BY COALESCE(started_at, finished_at), rowid"
    ))?;
    let rows = stmt.query_map(params![conversation_id, first, last], run_from_row)?;
    // The marker has told `answered`; no result goes with a page.
    Ok(rows
        .map(|run| {
            run.map(|mut run| {
                run.result = None;
                run
            })
        })
        .collect::<Result<Vec<_>, _>>()?)
}

/// The calls made by the answers of a conversation numbered after `after`, results included.
pub(super) fn runs_after(
    conn: &rusqlite::Connection,
    conversation_id: &str,
    after: i64,
) -> Result<Vec<ToolRun>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RUN_COLUMNS} FROM tool_runs WHERE conversation_id = ?1 AND message_id IN \
         (SELECT id FROM messages WHERE conversation_id = ?1 AND seq > ?2) \
         ORDER BY COALESCE(started_at, finished_at), rowid"
    ))?;
    let rows = stmt.query_map(params![conversation_id, after], run_from_row)?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// Calls recorded as started whose process is gone (`gone` says so of the answer's writer):
/// each gets the result the model reads, [`messages::MAY_HAVE_RUN`], and its
/// record ends as an error. Returns how many.
fn answer_calls_cut_off(
    conn: &mut rusqlite::Connection,
    gone: impl Fn(Option<&str>) -> bool,
) -> Result<usize, StoreError> {
    let started: Vec<(String, String, String, Option<String>, bool, bool)> = conn
        .prepare(
            "SELECT r.id, r.conversation_id, r.call_id, m.writer, r.asked_by IS NOT NULL, \
             IFNULL(r.task_state, '') IN ('running', 'background') \
             FROM tool_runs r JOIN messages m ON m.id = r.message_id \
             WHERE r.finished_at IS NULL AND r.started_at IS NOT NULL",
        )?
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    let mut ended = 0;
    for (run_id, conversation_id, call_id, writer, by_app, task) in started {
        if !gone(writer.as_deref()) {
            continue;
        }
        let tx = conn.transaction()?;
        // A call whose task runs on: it is followed again, and its result comes late.
        let (note, error) = if task {
            (messages::TASK_CUT_OFF, false)
        } else {
            (messages::MAY_HAVE_RUN, true)
        };
        tx.execute(
            "UPDATE tool_runs SET finished_at = ?1, is_error = ?2, result = ?3, \
             task_state = CASE WHEN task_state IN ('running', 'background') THEN 'background' \
                 ELSE task_state END \
             WHERE id = ?4",
            params![super::now_ms(), error, note, run_id],
        )?;
        let run = run_by_id(&tx, &run_id)?;
        super::audit::append(&tx, &super::audit::AuditEntry::of_cut_off(&run))?;
        // An app's call has no tool message: the model never asked for it.
        if !by_app {
            let mut message = NewMessage::text(super::Role::Tool, note);
            message.tool_call_id = Some(call_id);
            message.is_error = error;
            messages::insert(&tx, &conversation_id, &message)?;
        }
        tx.commit()?;
        ended += 1;
    }
    Ok(ended)
}

/// The calls matching `filter` (an SQL condition, with its order and limit), without results.
pub(super) fn runs_where(
    conn: &rusqlite::Connection,
    filter: &str,
    values: impl rusqlite::Params,
) -> Result<Vec<ToolRun>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {RUN_COLUMNS_NO_RESULT} FROM tool_runs WHERE {filter}"
    ))?;
    let runs = stmt
        .query_map(values, run_from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(runs)
}

/// The record of call `id`, result included.
pub(super) fn run_by_id(conn: &rusqlite::Connection, id: &str) -> rusqlite::Result<ToolRun> {
    conn.query_row_cached(
        &format!("SELECT {RUN_COLUMNS} FROM tool_runs WHERE id = ?1"),
        [id],
        run_from_row,
    )
}

/// An optional text column read as one of its known values; any other value is a bad row.
fn parsed<T>(row: &Row<'_>, i: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<Option<T>> {
    row.get::<_, Option<String>>(i)?
        .map(|text| {
            parse(&text).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    i,
                    rusqlite::types::Type::Text,
                    format!("unknown value {text:?}").into(),
                )
            })
        })
        .transpose()
}

fn run_from_row(row: &Row<'_>) -> rusqlite::Result<ToolRun> {
    Ok(ToolRun {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        message_id: row.get(2)?,
        call_id: row.get(3)?,
        server: row.get(4)?,
        tool: row.get(5)?,
        arguments: row.get(6)?,
        decision: parsed(row, 7, ToolDecision::parse)?,
        decision_scope: parsed(row, 8, ApprovalScope::parse)?,
        deny_reason: row.get(9)?,
        started_at: row.get(10)?,
        finished_at: row.get(11)?,
        is_error: row.get(12)?,
        result: row.get(13)?,
        display_name: match row.get::<_, Option<String>>(14)? {
            Some(name) => name,
            None => shown_name(&row.get::<_, String>(4)?, &row.get::<_, String>(5)?),
        },
        retry_of: match (
            row.get::<_, Option<String>>(17)?,
            row.get::<_, Option<String>>(15)?,
        ) {
            (Some(message_id), Some(call_id)) => Some(CallRef {
                message_id,
                call_id,
            }),
            _ => None,
        },
        description: row.get(16)?,
        can_retry: false,
        answered: false,
        rich: row.get(18)?,
        asked_by: row.get(19)?,
        decided_by: row.get(20)?,
        original: None,
        task: match (
            row.get::<_, Option<String>>(21)?,
            parsed(row, 22, TaskState::parse)?,
        ) {
            (Some(id), Some(state)) => Some(CallTask { id, state }),
            _ => None,
        },
    }
    .with_retry_rule())
}

/// The name of a call saved before display names were: its server's and its tool's, or the name
/// the model used when no server has the tool.
fn shown_name(server: &str, tool: &str) -> String {
    if server.is_empty() {
        tool.to_owned()
    } else {
        crate::text::tool_display_name(server, tool, None)
    }
}

/// A tool the person allowed to run without asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct StandingApproval {
    pub server: String,
    pub tool: String,
    /// "Server · Tool Name", as the Settings list shows it.
    pub display_name: String,
    /// The conversation it holds in; `None` for every conversation.
    pub conversation_id: Option<String>,
    /// That conversation's title, for the Settings list.
    pub conversation_title: Option<String>,
    pub created_at: i64,
}

/// A conversation's switch for one server (`tool` is `None`) or one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ToolToggle {
    pub server: String,
    pub tool: Option<String>,
    pub enabled: bool,
}

impl ToolToggle {
    /// What it switches as a person writes it, `SERVER` or `SERVER:TOOL` (the CLI's
    /// `--switch`), each name on one line and at most `max_chars` long.
    #[must_use]
    pub fn target(&self, max_chars: usize) -> String {
        let server = crate::text::one_line(&self.server, max_chars);
        match &self.tool {
            Some(tool) => format!("{server}:{}", crate::text::one_line(tool, max_chars)),
            None => server,
        }
    }
}

impl Store {
    /// Answers left `streaming` by a process that is gone (killed, crashed: see `writers`)
    /// become `interrupted`; returns how many. Answers this process or another live one is
    /// writing are left alone, so any process may call it when it opens the home.
    ///
    /// # Errors
    /// A failed query.
    pub async fn recover_unfinished(&self) -> Result<usize, StoreError> {
        let own = self.writer.id().to_owned();
        let dir = self.data_dir.clone();
        self.call(move |conn| {
            let writers: Vec<Option<String>> = conn
                .prepare("SELECT DISTINCT writer FROM messages WHERE status = 'streaming'")?
                .query_map([], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            let gone = |writer: Option<&str>| super::writers::gone(&own, dir.as_deref(), writer);
            let mut marked = 0;
            for writer in writers {
                if gone(writer.as_deref()) {
                    marked += conn.execute(
                        "UPDATE messages SET status = 'interrupted' \
                         WHERE status = 'streaming' AND writer IS ?1",
                        [&writer],
                    )?;
                }
            }
            marked += answer_calls_cut_off(conn, gone)?;
            if let Some(dir) = &dir {
                super::writers::sweep(dir, &own);
            }
            Ok(marked)
        })
        .await
    }

    /// Records one finished tool call and saves the tool message the model reads, in one
    /// transaction: a call is never recorded without its result, nor the other way round.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the conversation is gone; a failed query.
    pub async fn record_tool_call(
        &self,
        run: ToolRun,
        result: NewMessage,
    ) -> Result<Message, StoreError> {
        let (mut run, audited) = super::audit::entry_off_runtime(run).await;
        self.spill_large_result(&mut run).await;
        self.call(move |conn| {
            let tx = conn.transaction()?;
            upsert_run(&tx, &run)?;
            super::audit::append(&tx, &audited)?;
            let saved = messages::insert(&tx, &run.conversation_id, &result)?;
            tx.commit()?;
            Ok(saved)
        })
        .await
    }

    /// Moves a result past [`MAX_STORED_RESULT`] out of `run` into a file ([`Store::keep_in_file`]).
    async fn spill_large_result(&self, run: &mut ToolRun) {
        if run
            .result
            .as_ref()
            .is_some_and(|r| r.len() > MAX_STORED_RESULT)
        {
            run.result = self
                .keep_in_file(&run.id, run.result.take().unwrap_or_default())
                .await;
        }
    }

    /// A result too large for the database, written to `results/<run id>.json` under the data
    /// folder; what the record keeps instead says where (and how large). Without a folder (a
    /// database in memory) or when the file cannot be written, the record says the result was
    /// not kept.
    pub(super) async fn keep_in_file(&self, run_id: &str, whole: String) -> Option<String> {
        let bytes = whole.len();
        let kept = match &self.data_dir {
            Some(dir) => {
                let name = format!("results/{run_id}.json");
                let path = dir.join(&name);
                let written = tokio::task::spawn_blocking(move || {
                    crate::paths::write_whole(&path, whole.as_bytes())
                })
                .await
                .map_err(std::io::Error::other)
                .and_then(|r| r);
                match written {
                    Ok(()) => Some(name),
                    Err(e) => {
                        tracing::warn!(error = %e, bytes, "a large tool result could not be kept in a file");
                        None
                    }
                }
            }
            None => None,
        };
        Some(
            serde_json::json!({
                "switchboard": "The whole result was larger than the database keeps.",
                "bytes": bytes,
                "file": kept,
            })
            .to_string(),
        )
    }

    /// Records that an allowed call is about to run (no result, no end time yet), and that this
    /// process is the one running its answer: if the process dies mid-call, whoever opens the
    /// home next tells the model the call may have run ([`Store::recover_unfinished`]). The
    /// same run's [`Store::record_tool_call`] replaces the record when the call ends.
    ///
    /// # Errors
    /// A failed write (the call must then not run).
    pub async fn record_tool_started(&self, run: ToolRun) -> Result<(), StoreError> {
        let writer = self.writer.id().to_owned();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            upsert_run(&tx, &run)?;
            tx.execute_cached(
                "UPDATE messages SET writer = ?1 WHERE id = ?2",
                [&writer, &run.message_id],
            )?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Records a call an MCP App made from its tool card (`run.asked_by` says which), as it
    /// ended or was refused: with the conversation's calls, and no tool message.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when the conversation is gone; a failed query.
    pub async fn record_app_call(&self, run: ToolRun) -> Result<(), StoreError> {
        let (mut run, audited) = super::audit::entry_off_runtime(run).await;
        self.spill_large_result(&mut run).await;
        self.call(move |conn| {
            let tx = conn.transaction()?;
            upsert_run(&tx, &run)?;
            super::audit::append(&tx, &audited)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Every tool call of a conversation, oldest first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn list_tool_runs(
        &self,
        conversation_id: String,
    ) -> Result<Vec<ToolRun>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM tool_runs WHERE conversation_id = ?1 \
                 ORDER BY COALESCE(started_at, finished_at), rowid"
            ))?;
            let rows = stmt.query_map([&conversation_id], run_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// One call of a conversation: the call `call_id` of the assistant message `message_id`.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such call; a failed query.
    pub async fn get_tool_run(
        &self,
        conversation_id: String,
        message_id: String,
        call_id: String,
    ) -> Result<ToolRun, StoreError> {
        self.call(move |conn| {
            conn.prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM tool_runs \
                 WHERE conversation_id = ?1 AND message_id = ?2 AND call_id = ?3"
            ))?
            .query_row(params![conversation_id, message_id, call_id], run_from_row)
            .optional()?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("tool call {call_id}"),
            })
        })
        .await
    }

    /// The whole result of the newest call `call_id` of a conversation, as its server sent it
    /// (JSON text), read from its file when it was too large for the database. `None`: no such
    /// call, or it has no result kept (it did not run, or its file is gone).
    ///
    /// # Errors
    /// A failed query.
    pub async fn whole_result(
        &self,
        conversation_id: String,
        call_id: String,
    ) -> Result<Option<String>, StoreError> {
        let result: Option<String> = self
            .call(move |conn| {
                Ok(conn
                    .prepare_cached(
                        "SELECT result FROM tool_runs WHERE conversation_id = ?1 AND call_id = ?2 \
                         AND result IS NOT NULL AND asked_by IS NULL ORDER BY COALESCE(finished_at, started_at) DESC, \
                         rowid DESC LIMIT 1",
                    )?
                    .query_row(params![conversation_id, call_id], |row| row.get(0))
                    .optional()?)
            })
            .await?;
        let Some(result) = result else {
            return Ok(None);
        };
        let pointer = serde_json::from_str::<serde_json::Value>(&result)
            .ok()
            .filter(|v| v.get("switchboard").is_some())
            .and_then(|v| v.get("file").and_then(|f| f.as_str()).map(str::to_owned));
        let Some(file) = pointer else {
            return Ok(Some(result));
        };
        let Some(dir) = self.data_dir.clone() else {
            return Ok(None);
        };
        if !super::conversations::is_result_file(&file) {
            return Ok(None);
        }
        let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(dir.join(file)))
            .await
            .map_err(std::io::Error::other)
            .and_then(|r| r);
        Ok(read.ok())
    }

    /// The tools whose calls were allowed most, those of `conversation_id` first, at most
    /// `limit`: (server, tool). The tools of `except_server` are not among them.
    ///
    /// # Errors
    /// A failed query.
    pub async fn most_used_tools(
        &self,
        conversation_id: String,
        except_server: String,
        limit: usize,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT server, tool FROM tool_runs WHERE decision = 'allowed' AND server <> ?3 \
                 GROUP BY server, tool \
                 ORDER BY SUM(conversation_id = ?1) DESC, COUNT(*) DESC, \
                 MAX(COALESCE(started_at, 0)) DESC, server, tool LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![conversation_id, limit, except_server], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Allows `server`'s `tool` without asking, in one conversation or (`None`) in all.
    ///
    /// # Errors
    /// A failed query.
    pub async fn add_tool_approval(
        &self,
        server: String,
        tool: String,
        conversation_id: Option<String>,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "INSERT OR IGNORE INTO tool_approvals (server, tool, conversation_id, created_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![server, tool, conversation_id.unwrap_or_default(), now_ms()],
            )?;
            Ok(())
        })
        .await
    }

    /// Takes a standing approval back; returns whether there was one.
    ///
    /// # Errors
    /// A failed query.
    pub async fn remove_tool_approval(
        &self,
        server: String,
        tool: String,
        conversation_id: Option<String>,
    ) -> Result<bool, StoreError> {
        self.call(move |conn| {
            Ok(conn.execute(
                "DELETE FROM tool_approvals WHERE server = ?1 AND tool = ?2 AND conversation_id = ?3",
                params![server, tool, conversation_id.unwrap_or_default()],
            )? > 0)
        })
        .await
    }

    /// Every standing approval, newest first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn list_tool_approvals(&self) -> Result<Vec<StandingApproval>, StoreError> {
        self.call(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT a.server, a.tool, a.conversation_id, c.title, a.created_at \
                 FROM tool_approvals a LEFT JOIN conversations c ON c.id = a.conversation_id \
                 ORDER BY a.created_at DESC, a.server, a.tool",
            )?;
            let rows = stmt.query_map([], |row| {
                let conversation: String = row.get(2)?;
                let (server, tool): (String, String) = (row.get(0)?, row.get(1)?);
                Ok(StandingApproval {
                    display_name: shown_name(&server, &tool),
                    server,
                    tool,
                    conversation_id: Some(conversation).filter(|c| !c.is_empty()),
                    conversation_title: row.get(3)?,
                    created_at: row.get(4)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Sets a conversation's switch for a whole server (`tool` `None`) or one of its tools.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn set_tool_toggle(
        &self,
        conversation_id: String,
        toggle: ToolToggle,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            conversations::get(&tx, &conversation_id)?;
            if toggle.tool.is_none() {
                // A server's switch sets all its tools: the tools' own switches go.
                tx.execute(
                    "DELETE FROM conversation_tools \
                     WHERE conversation_id = ?1 AND server = ?2 AND tool <> ''",
                    params![conversation_id, toggle.server],
                )?;
            }
            tx.execute(
                "INSERT INTO conversation_tools (conversation_id, server, tool, enabled) \
                 VALUES (?1, ?2, ?3, ?4) ON CONFLICT (conversation_id, server, tool) \
                 DO UPDATE SET enabled = excluded.enabled",
                params![
                    conversation_id,
                    toggle.server,
                    toggle.tool.unwrap_or_default(),
                    toggle.enabled
                ],
            )?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Makes a conversation's tool switches the ones every new conversation starts with.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn set_default_tools_from(&self, conversation_id: String) -> Result<(), StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            conversations::get(&tx, &conversation_id)?;
            tx.execute("DELETE FROM default_tools", [])?;
            tx.execute(
                "INSERT INTO default_tools (server, tool, enabled) \
                 SELECT server, tool, enabled FROM conversation_tools WHERE conversation_id = ?1",
                [&conversation_id],
            )?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// The tool switches a new conversation starts with (anything not listed is on).
    ///
    /// # Errors
    /// A failed query.
    pub async fn default_tools(&self) -> Result<Vec<ToolToggle>, StoreError> {
        self.call(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT server, tool, enabled FROM default_tools ORDER BY server, tool",
            )?;
            let rows = stmt.query_map([], toggle_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// A conversation's tool switches (anything not listed is on).
    ///
    /// # Errors
    /// A failed query.
    pub async fn tool_toggles(
        &self,
        conversation_id: String,
    ) -> Result<Vec<ToolToggle>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT server, tool, enabled FROM conversation_tools WHERE conversation_id = ?1",
            )?;
            let rows = stmt.query_map([&conversation_id], toggle_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Puts a conversation in or out of auto-approve.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn set_auto_approve(
        &self,
        conversation_id: String,
        on: bool,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            let changed = conn.execute(
                "UPDATE conversations SET auto_approve = ?2 WHERE id = ?1",
                params![conversation_id, on],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound {
                    what: format!("conversation {conversation_id}"),
                });
            }
            Ok(())
        })
        .await
    }

    /// Whether a conversation is in auto-approve.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation.
    pub async fn auto_approve(&self, conversation_id: String) -> Result<bool, StoreError> {
        self.call(move |conn| {
            conn.query_row(
                "SELECT auto_approve FROM conversations WHERE id = ?1",
                [&conversation_id],
                |row| row.get(0),
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("conversation {conversation_id}"),
            })
        })
        .await
    }
}

/// A row of `server, tool, enabled` (`tool` '' for the server's own switch).
pub(super) fn toggle_from_row(row: &Row<'_>) -> rusqlite::Result<ToolToggle> {
    let tool: String = row.get(1)?;
    Ok(ToolToggle {
        server: row.get(0)?,
        tool: Some(tool).filter(|t| !t.is_empty()),
        enabled: row.get(2)?,
    })
}
