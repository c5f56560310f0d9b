//! The app's home: opening its database (or remembering why it could not), the services it
//! hands out (`usage()`, `profiles()`, `providers()`), what the window asks first (version, home, whether the database opened), the shapes conversations
//! and providers are handed out in, and reading and writing the files a person imports and
//! exports.

use std::path::PathBuf;

use secrecy::SecretString;
use serde::Serialize;

use crate::error::{CoreError, InvalidInput};
use crate::paths::AppPaths;
use crate::secrets::{SecretError, SecretStore};
use crate::store::{Conversation, Message, OpenCheck, Store, StoreError, DEFAULT_BUSY_TIMEOUT};
use crate::text::one_line;

use super::{App, Draft};
use crate::error::DatabaseUnavailable;

/// The longest conversation title kept; longer ones are cut, not stored whole.
pub const MAX_TITLE_CHARS: usize = 200;
pub const DEFAULT_TITLE: &str = "New conversation";

/// Reads a file to import (at most [`MAX_IMPORT_BYTES`]) as text.
///
/// # Errors
/// [`CoreError::Invalid`] (field `file`): it cannot be read or is too large.
pub(super) async fn read_import_file(path: PathBuf) -> Result<String, CoreError> {
    let text = tokio::task::spawn_blocking(move || {
        let cannot = |e: std::io::Error| {
            InvalidInput::new("file", format!("Cannot read {}: {e}.", path.display()))
        };
        let size = std::fs::metadata(&path).map_err(cannot)?.len();
        if size > MAX_IMPORT_BYTES {
            return Err(InvalidInput::new(
                "file",
                format!(
                    "{} is {} MB; a file this app imports is at most {} MB.",
                    path.display(),
                    size / (1024 * 1024),
                    MAX_IMPORT_BYTES / (1024 * 1024)
                ),
            ));
        }
        std::fs::read_to_string(&path).map_err(cannot)
    })
    .await
    .map_err(|e| InvalidInput::new("file", format!("The import stopped: {e}.")))??;
    Ok(text)
}

/// Writes `text` to `path` whole (a half-written file is never left there).
///
/// # Errors
/// [`CoreError::Invalid`] (field `file`): it cannot be written.
pub(super) async fn write_text_file(path: PathBuf, text: String) -> Result<(), CoreError> {
    tokio::task::spawn_blocking(move || {
        crate::paths::write_whole(&path, text.as_bytes()).map_err(|e| {
            InvalidInput::new("file", format!("Cannot write {}: {e}.", path.display()))
        })
    })
    .await
    .map_err(|e| InvalidInput::new("file", format!("The export stopped: {e}.")))??;
    Ok(())
}

/// The title a new (or imported) conversation gets: one line, cut to [`MAX_TITLE_CHARS`]; a
/// blank one (or one of invisible characters only) becomes [`DEFAULT_TITLE`].
pub(super) fn new_title(title: &str) -> String {
    let title = one_line(title, MAX_TITLE_CHARS);
    if crate::text::is_blank(&title) {
        DEFAULT_TITLE.to_owned()
    } else {
        title
    }
}

/// What the window needs to know before anything else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct AppStatus {
    pub version: &'static str,
    /// The home in use, as a person would write it.
    pub home: String,
    /// Why the database could not be opened, when it could not.
    pub database_error: Option<crate::error::IpcError>,
    /// Whether a fresh start is offered ([`App::set_aside_database`]): only for a file that is
    /// not a database SQLite can read. A locked one (another program has it) or one a newer
    /// Switchboard wrote is good and is never set aside.
    pub fresh_start: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KeychainStatus {
    pub available: bool,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ConversationDetail {
    pub conversation: Conversation,
    /// The newest messages (a page of them, oldest first; tool results as previews).
    pub messages: Vec<Message>,
    /// The calls of the answers in `messages`, for the tool cards.
    pub tool_runs: Vec<crate::store::ToolRun>,
    /// The records of the tools offered by the answers in `messages`, where the model was
    /// given a choice of them.
    pub offers: Vec<crate::store::ToolOffer>,
    /// Where the page before this one ends
    /// ([`Conversations::older_messages`](super::Conversations::older_messages)); `None` when
    /// `messages` starts at the first message.
    pub older: Option<i64>,
    /// Where branches part among `messages`.
    pub branches: Vec<crate::store::BranchPoint>,
    /// What the composer held when the conversation was left (none: nothing).
    pub draft: Option<Draft>,
    /// The summaries of earlier messages made to fit the model's window, oldest first: the
    /// newest whose last message is in the conversation is the one the model reads.
    pub summaries: Vec<crate::store::Summary>,
    /// What the conversation's model was last given, in tokens (the header's "18.2k of 128k").
    pub context: Option<crate::store::ContextUse>,
}

/// How many messages a window gets at first, and per page as it scrolls back.
pub const MESSAGE_PAGE: u32 = 60;

/// A provider as typed into the form or the command line.
#[derive(Debug, Clone, Default, serde::Deserialize, ts_rs::TS)]
pub struct NewProvider {
    pub name: String,
    #[ts(optional = nullable)]
    pub kind: Option<String>,
    /// Empty or missing: the kind's usual address.
    #[ts(optional = nullable)]
    pub base_url: Option<String>,
    #[ts(optional = nullable)]
    pub default_model: Option<String>,
    /// Moved into the keychain and dropped; never stored anywhere else.
    #[serde(default, deserialize_with = "deserialize_secret")]
    #[ts(type = "string | null", optional)]
    pub api_key: Option<SecretString>,
}

fn deserialize_secret<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<SecretString>, D::Error> {
    let raw: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(raw
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .map(SecretString::from))
}

/// The largest export file an import reads.
pub const MAX_IMPORT_BYTES: u64 = 1024 * 1024 * 1024;

/// Opens the database on the blocking pool, checking as much of the file as `check` says. A
/// database that cannot be opened is not an error here: the app remembers why, every storage
/// operation reports it, and the file is left as it was.
pub(super) async fn open_store(
    paths: &AppPaths,
    check: OpenCheck,
) -> Result<Store, DatabaseUnavailable> {
    let file = paths.database_file();
    let opened = tokio::task::spawn_blocking(move || {
        Store::open_checking(&file, DEFAULT_BUSY_TIMEOUT, check)
    })
    .await
    .unwrap_or_else(|e| Err(StoreError::Task(e.to_string())));
    opened.map_err(|e| {
        tracing::error!(error = %e, "the database could not be opened");
        DatabaseUnavailable::from(&e)
    })
}

impl App {
    /// Marks answers a crash (or a kill) left unfinished as interrupted: those whose writing
    /// process is gone, never one the window or another command line is still streaming.
    /// Every entry point calls it when it opens the home ([`App::open`]).
    pub async fn recover_after_crash(&self) {
        let Ok(store) = self.store() else { return };
        match store.recover_unfinished().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(n, "marked answers left streaming by a crash as interrupted"),
            Err(e) => tracing::warn!(error = %e, "cannot mark unfinished answers as interrupted"),
        }
        match store.fold_left_lanes().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(n, "folded the answers of comparisons a crash left behind"),
            Err(e) => tracing::warn!(error = %e, "cannot fold the lanes of unfinished comparisons"),
        }
        match self.prune_audit().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(n, "deleted audit entries older than the retention setting"),
            Err(e) => tracing::warn!(error = %e, "cannot prune the audit record"),
        }
    }

    /// Deletes the conversations a window left unused when it closed (made by New, nothing in
    /// them): they are not kept until their first message. Only the window calls it, when it
    /// opens the home: a command line run beside a window must not take the window's new
    /// conversation away.
    pub async fn discard_unused_conversations(&self) {
        let Ok(store) = self.store() else { return };
        match store.discard_unused().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(n, "deleted conversations left unused"),
            Err(e) => tracing::warn!(error = %e, "cannot delete conversations left unused"),
        }
    }

    pub fn paths(&self) -> &AppPaths {
        &self.paths
    }

    pub fn database_error(&self) -> Option<&DatabaseUnavailable> {
        self.db.error()
    }

    /// The app's version, its home, and whether the database opened.
    pub fn status(&self, version: &'static str) -> AppStatus {
        AppStatus {
            version,
            home: self.paths.display_home(),
            database_error: self
                .database_error()
                .map(|e| CoreError::from(e.clone()).into()),
            fresh_start: self.database_error().is_some_and(|e| e.reason == "corrupt"),
        }
    }

    /// Moves a damaged database aside, with its journal files, so that the next start makes a
    /// fresh one: `switchboard.db` becomes `switchboard.db.damaged-20261206-044937` in the same
    /// folder, kept whole for the person (or a repair tool) to read. Returns the kept file.
    /// Only a file SQLite cannot read as a database ([`AppStatus::fresh_start`]): a working
    /// database, a locked one or one a newer Switchboard wrote is never set aside.
    ///
    /// # Errors
    /// [`CoreError::Conflict`] when the database is not damaged; [`CoreError::SetAside`] when a
    /// file cannot be renamed (whatever was moved is moved back then).
    pub async fn set_aside_database(&self) -> Result<PathBuf, CoreError> {
        let refused = |message: &str| {
            Err(CoreError::Conflict {
                field: "database",
                message: message.to_owned(),
            })
        };
        match self.database_error() {
            None => return refused("The database is open and working; it was not set aside."),
            Some(e) if e.reason != "corrupt" => {
                return refused(
                    "The database file is not damaged (it is locked, or a newer Switchboard \
                     wrote it); it was not set aside.",
                )
            }
            Some(_) => {}
        }
        let file = self.paths.database_file();
        let shown = file.display().to_string();
        tokio::task::spawn_blocking(move || set_aside(&file, std::time::SystemTime::now()))
            .await
            .map_err(|e| CoreError::SetAside {
                file: shown,
                detail: e.to_string(),
            })?
    }

    /// The database, or why it is unavailable.
    ///
    /// # Errors
    /// [`CoreError::DatabaseUnavailable`].
    pub fn store(&self) -> Result<&Store, CoreError> {
        self.db.store()
    }

    /// Conversations: listed, made, read, renamed, exported and imported.
    pub fn conversations(&self) -> &super::Conversations {
        &self.conversations
    }

    /// Prices and use.
    pub fn usage(&self) -> &super::Usage {
        &self.usage
    }

    /// The person's profiles.
    pub fn profiles(&self) -> &super::Profiles {
        &self.profiles
    }

    /// The person's projects.
    pub fn projects(&self) -> &super::Projects {
        &self.projects
    }

    /// The facts kept across conversations.
    pub fn memory(&self) -> &super::Memories {
        &self.memories
    }

    pub(super) async fn secrets<T, F>(&self, work: F) -> Result<T, CoreError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn SecretStore) -> Result<T, SecretError> + Send + 'static,
    {
        self.keychain.run(work).await
    }

    /// Providers: added and changed, their keys, clients, models and windows (removing one is
    /// [`App::remove_provider`], which also clears a default in Settings that named it).
    pub fn providers(&self) -> &super::Providers {
        &self.providers
    }

    /// Where the database is kept.
    pub fn database_path(&self) -> std::path::PathBuf {
        self.paths.database_file()
    }

    pub async fn keychain_status(&self) -> KeychainStatus {
        match self.secrets(|s| s.probe().map(|()| s.backend())).await {
            Ok(backend) => KeychainStatus {
                available: true,
                message: format!("Keys are kept in {backend}."),
            },
            Err(CoreError::Secret(SecretError::Unavailable { detail })) => KeychainStatus {
                available: false,
                message: detail,
            },
            Err(e) => KeychainStatus {
                available: false,
                message: e.to_string(),
            },
        }
    }
}

/// Renames `file` (and its `-wal`, `-shm` and `-journal` files, where present) to
/// `<file>.damaged-<when>`; a name already taken gets `-2`, `-3`…. The journal files go first
/// and the database last, and a failure moves back whatever was moved: a journal left under the
/// live name would be replayed into the fresh database.
pub(super) fn set_aside(
    file: &std::path::Path,
    now: std::time::SystemTime,
) -> Result<PathBuf, CoreError> {
    const ENDS: [&str; 4] = ["-wal", "-shm", "-journal", ""];
    let secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let stamp = chrono::DateTime::from_timestamp(i64::try_from(secs).unwrap_or(0), 0).map_or_else(
        || secs.to_string(),
        |t| t.format("%Y%m%d-%H%M%S").to_string(),
    );
    let with = |base: &std::path::Path, end: &str| {
        let mut name = base.as_os_str().to_owned();
        name.push(end);
        PathBuf::from(name)
    };
    let taken = |kept: &PathBuf| ENDS.iter().any(|end| with(kept, end).exists());
    let mut kept = with(file, &format!(".damaged-{stamp}"));
    let mut n = 2;
    while taken(&kept) {
        kept = with(file, &format!(".damaged-{stamp}-{n}"));
        n += 1;
    }
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    for end in ENDS {
        let from = with(file, end);
        if !end.is_empty() && !from.exists() {
            continue;
        }
        let to = with(&kept, end);
        if let Err(e) = std::fs::rename(&from, &to) {
            for (back_to, back_from) in moved.iter().rev() {
                if let Err(again) = std::fs::rename(back_from, back_to) {
                    tracing::error!(error = %again, file = %back_from.display(), "cannot move a database file back");
                }
            }
            return Err(CoreError::SetAside {
                file: from.display().to_string(),
                detail: e.to_string(),
            });
        }
        moved.push((from, to));
    }
    tracing::warn!(kept = %kept.display(), "the damaged database was set aside");
    Ok(kept)
}
