//! SQLite storage: opening the file safely, migrations, and typed access to conversations,
//! messages, tool runs, tool toggles and providers.
//!
//! Every query runs on tokio's blocking pool ([`Store::call`]), never on the async runtime.
//! A database that is locked, damaged or from a newer version is reported as such and never
//! written to, let alone recreated.

mod audit;
mod branches;
mod context;
mod conversations;
mod drafts;
mod knowledge;
mod lanes;
mod late_results;
mod mcp_approvals;
mod memory;
mod messages;
mod migrations;
mod pages;
mod profiles;
mod projects;
mod providers;
mod schedules;
mod search;
mod skills;
mod summaries;
mod tasks;
mod tool_loop;
mod transfer;
mod usage;
mod windows;
mod writers;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

pub use audit::{AuditDecision, AuditEntry, AuditFilter, AuditOrigin};
pub use branches::{BranchPoint, SwitchedBranch};
pub use context::{ContextUse, ToolOffer};
pub use conversations::Conversation;
pub use knowledge::{NewProjectFile, ProjectFile};
pub use mcp_approvals::PinnedTool;
pub use memory::{Memory, MemoryScope, ALL_WHILE_AT_MOST as ALL_MEMORIES_WHILE_AT_MOST};
pub use messages::{
    Finish, Message, MessageStatus, MessageUpdate, NewMessage, Role, StoredCall, MAY_HAVE_RUN,
    TASK_CUT_OFF, TOOL_PREVIEW_CHARS,
};
pub use pages::MessagePage;
pub use profiles::{Profile, ProfileFields};
pub use projects::{Project, ProjectFields};
pub use providers::ProviderRow;
pub use schedules::{NewRun, RunStatus, ScheduleRow, ScheduleRun};
pub use search::{SearchHit, SnippetPart, MAX_HITS as MAX_SEARCH_HITS};
pub use skills::{SkillSwitch, SkillUse};
pub use summaries::{in_force as summary_in_force, NewSummary, Summary};
pub use tasks::{late_result_call, TaskEnd, LATE_RESULT};
pub use tool_loop::{
    asked_by_app, ApprovalScope, CallRef, CallTask, StandingApproval, TaskState, ToolDecision,
    ToolRun, ToolToggle,
};
pub use transfer::{
    export_file_name, export_text, to_markdown, ConversationExport, ExportFormat, ExportedBranch,
    ExportedBranchPoint, ExportedConversation, ExportedMessage, ExportedSummary, ExportedToolRun,
    FORMAT as EXPORT_FORMAT, VERSION as EXPORT_VERSION,
};
pub use usage::{ModelPrice, NewUsage, PriceSource, UsageDay, UsagePurpose, UsageTotal};
pub use windows::{ModelWindow, WindowSource};

/// Statements run through the connection's statement cache, for the ones a conversation runs
/// again and again (appending and updating messages, recording tool calls): parsing the SQL
/// each time cost more than running it.
trait Cached {
    fn execute_cached(&self, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize>;
    fn query_row_cached<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T>;
}

impl Cached for Connection {
    fn execute_cached(&self, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    fn query_row_cached<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.prepare_cached(sql)?.query_row(params, f)
    }
}

/// How long a query waits for another process's lock before giving up.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("The database {path} is locked by another program and stayed locked for {waited_secs} s; close the other program and restart Switchboard")]
    Locked { path: PathBuf, waited_secs: u64 },
    #[error(
        "The file {path} is not a readable Switchboard database ({detail}); it was left untouched"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error("The database {path} was written by a newer Switchboard (schema version {found}; this build knows up to {known}); it was left untouched, so update Switchboard to open it")]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error("Cannot open the database {path}: {detail}")]
    Open { path: PathBuf, detail: String },
    #[error("Not found: {what}")]
    NotFound { what: String },
    /// A name (or other unique value) another row has.
    #[error("{what}")]
    Conflict { what: String },
    #[error("A stored value is not valid: {detail}")]
    InvalidRow { detail: String },
    #[error("A database query failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("The database task stopped unexpectedly: {0}")]
    Task(String),
}

impl StoreError {
    /// Why a write failed, in a person's words: the disk is full, the file is read-only, the
    /// disk failed; otherwise the error as it is.
    pub fn why_not_written(&self) -> String {
        let code = match self {
            StoreError::Sqlite(e) => e.sqlite_error_code(),
            _ => None,
        };
        match code {
            Some(ErrorCode::DiskFull) => "the disk is full".into(),
            Some(ErrorCode::ReadOnly) => "its file is read-only".into(),
            Some(ErrorCode::SystemIoFailure) => "the disk reported an input/output error".into(),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                "another program holds it locked".into()
            }
            _ => self.to_string(),
        }
    }
}

/// How much opening a database checks before it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenCheck {
    /// Reads every page (`PRAGMA quick_check`), so that damage is found before anything is
    /// written: the window, and every command that may write.
    #[default]
    Pages,
    /// Only the header and the schema: for a process that only reads (its cost does not grow
    /// with the file). A damaged page shows as an error on the read that meets it. A database
    /// an older version wrote is checked in full all the same, since it is about to be migrated.
    /// Such a store keeps nothing of its own in the file: a search's update of the index of
    /// kept branches is dropped when the search ends.
    Header,
}

/// A handle to the database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    /// This process as a writer of answers, and the folder where writers register (none for
    /// a database in memory).
    writer: Arc<writers::Writer>,
    data_dir: Option<PathBuf>,
    /// How much was checked when the file was opened. A store checked only at its header is a
    /// reader's: it keeps no work of its own in the file (see [`Store::search`]).
    check: OpenCheck,
}

impl Store {
    /// Opens (or creates) the database at `path`, checks it, switches it to WAL and migrates it.
    /// Blocking: call it from a blocking context (the app does so on the blocking pool).
    ///
    /// # Errors
    /// [`StoreError::Locked`], [`StoreError::Corrupt`], [`StoreError::TooNew`] or
    /// [`StoreError::Open`], each saying what happened; the file is not modified in those cases.
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Store, StoreError> {
        Self::open_checking(path, busy_timeout, OpenCheck::Pages)
    }

    /// [`Store::open`], checking as much as `check` says.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_checking(
        path: &Path,
        busy_timeout: Duration,
        check: OpenCheck,
    ) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            crate::paths::create_private_dirs(dir).map_err(|e| StoreError::Open {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?;
        }
        // Made the person's alone before SQLite opens it: its journal files (-wal, -shm) take
        // the database's mode.
        if !path.exists() {
            let mut new = std::fs::OpenOptions::new();
            new.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut new, 0o600);
            let _ = new.open(path);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| classify(path, e, busy_timeout))?;
        conn.busy_timeout(busy_timeout)
            .map_err(|e| classify(path, e, busy_timeout))?;
        let mut store = Self::prepare(conn, path, busy_timeout, check)?;
        if let Some(dir) = path.parent() {
            store.writer = Arc::new(writers::Writer::register(dir));
            store.data_dir = Some(dir.to_path_buf());
        }
        Ok(store)
    }

    /// A private in-memory database, for tests.
    ///
    /// # Errors
    /// Only if SQLite itself fails.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()?;
        Self::prepare(
            conn,
            Path::new(":memory:"),
            DEFAULT_BUSY_TIMEOUT,
            OpenCheck::Pages,
        )
    }

    fn prepare(
        mut conn: Connection,
        path: &Path,
        busy: Duration,
        check: OpenCheck,
    ) -> Result<Store, StoreError> {
        let map = |e| classify(path, e, busy);
        // Reading the version is the first touch of the file: a damaged or foreign file fails
        // here, before anything is written to it.
        let found: u32 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(map)?;
        // A damaged page (a disk error, a copy cut short) is found before anything is written:
        // the file is left as it is for the person (or a recovery tool) to deal with.
        let known = migrations::latest_version();
        if found > 0 && (check == OpenCheck::Pages || found < known) {
            let verdict: String = conn
                .query_row("PRAGMA quick_check(1)", [], |row| row.get(0))
                .map_err(map)?;
            if verdict != "ok" {
                return Err(StoreError::Corrupt {
                    path: path.to_path_buf(),
                    detail: format!("SQLite's check found damage: {verdict}"),
                });
            }
        }
        if found > known {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found,
                known,
            });
        }
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(map)?;
        if path != Path::new(":memory:") {
            let mode: String = conn
                .pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0))
                .map_err(map)?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!(%mode, "SQLite refused WAL mode; continuing with this journal mode");
            }
            conn.pragma_update(None, "synchronous", "full")
                .map_err(map)?;
        }
        migrations::migrate(&mut conn).map_err(|e| match e {
            rusqlite_migration::Error::RusqliteError { err, .. } => classify(path, err, busy),
            other => StoreError::Open {
                path: path.to_path_buf(),
                detail: other.to_string(),
            },
        })?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
            writer: Arc::new(writers::Writer::private()),
            data_dir: None,
            check,
        })
    }

    /// SQLite's `data_version` as this connection reads it: it moves when another connection
    /// (another process, as a rule) commits, never for this one's own writes. Cheap enough to
    /// ask every few seconds.
    ///
    /// # Errors
    /// A failed query.
    pub async fn data_version(&self) -> Result<i64, StoreError> {
        self.call(|conn| Ok(conn.query_row("PRAGMA data_version", [], |row| row.get(0))?))
            .await
    }

    /// Runs `work` with the connection on the blocking pool.
    ///
    /// # Errors
    /// Whatever `work` returns, or [`StoreError::Task`] if the task panicked.
    pub async fn call<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut guard = conn.lock().unwrap_or_else(PoisonError::into_inner);
            work(&mut guard)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }
}

/// Turns SQLite's error codes into the cases a person can act on.
fn classify(path: &Path, err: rusqlite::Error, busy: Duration) -> StoreError {
    match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked {
            path: path.to_path_buf(),
            waited_secs: busy.as_secs(),
        },
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: err.to_string(),
        },
        Some(_) | None => StoreError::Open {
            path: path.to_path_buf(),
            detail: err.to_string(),
        },
    }
}

/// The record `text` when it points at a result file of this machine's home (`{"switchboard":
/// …, "file": "results/…"}`, its `file` null when the file could not be written): meaningless
/// elsewhere, never taken from a file, and its file goes with the last record of it.
fn file_pointer(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .filter(|v| v.get("switchboard").is_some() && v.get("file").is_some())
}

impl Store {
    /// The folder of attached files beside the database (none for a database in memory).
    pub fn attachment_files(&self) -> Option<crate::attachments::AttachmentFiles> {
        self.data_dir
            .as_ref()
            .map(|dir| crate::attachments::AttachmentFiles::new(dir.join("attachments")))
    }
}

/// How long a kept file no message names yet is left alone: it may be waiting in a composer.
pub const UNSENT_ATTACHMENT_GRACE: std::time::Duration = std::time::Duration::from_secs(3600);

/// After messages are deleted: the attached files no message names any more (shown, or in a
/// branch kept aside) and no draft names are removed from `<data>/attachments/`, except those
/// kept within [`UNSENT_ATTACHMENT_GRACE`].
fn sweep_attachments(conn: &Connection, dir: Option<&Path>) -> Result<(), StoreError> {
    let Some(dir) = dir else {
        return Ok(());
    };
    let mut named: std::collections::HashSet<String> = conn
        .prepare(
            "SELECT json_extract(j.value, '$.sha256') FROM messages, json_each(messages.attachments) j \
             WHERE messages.attachments IS NOT NULL",
        )?
        .query_map([], |row| row.get::<_, Option<String>>(0))?
        .filter_map(|r| r.transpose())
        .collect::<Result<_, _>>()?;
    // A branch kept aside holds its rows as JSON: any SHA-256 in it keeps its file (a hash in
    // other text may keep a file longer, never remove one too soon).
    let sha = regex::Regex::new("[0-9a-f]{64}").expect("a valid pattern");
    let snapshots: Vec<String> = conn
        .prepare("SELECT snapshot FROM message_branches WHERE snapshot LIKE '%sha256%'")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    // So does a draft (what a composer holds) that names it.
    let drafts: Vec<String> = conn
        .prepare("SELECT draft FROM drafts WHERE draft LIKE '%sha256%'")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    for kept in snapshots.iter().chain(&drafts) {
        named.extend(sha.find_iter(kept).map(|m| m.as_str().to_owned()));
    }
    crate::attachments::AttachmentFiles::new(dir.join("attachments"))
        .remove_unreferenced(&named, UNSENT_ATTACHMENT_GRACE);
    Ok(())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A new time-ordered identifier.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

#[cfg(test)]
mod tests;
