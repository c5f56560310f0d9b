//! [`Core`], the engine: the one object the desktop shell and the command line hold. It opens the
//! database (or remembers why it could not), owns the secret store, and offers every
//! operation on conversations and providers with input checked and errors typed.
//!
//! It must not know about windows, IPC or the terminal: those are its callers' business.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;

use crate::error::{CoreError, InvalidInput};
use crate::paths::AppPaths;
use crate::provider_config::{
    validate_base_url, validate_model, validate_name, Provider, ProviderKind,
};
use crate::providers::HttpOptions;
use crate::secrets::{provider_account, SecretError, SecretStore};
use crate::store::{
    Conversation, Message, OpenCheck, ProviderRow, Store, StoreError, DEFAULT_BUSY_TIMEOUT,
};
use crate::text::one_line;

use crate::error::DatabaseUnavailable;

/// The longest conversation title kept; longer ones are cut, not stored whole.
pub const MAX_TITLE_CHARS: usize = 200;
pub const DEFAULT_TITLE: &str = "New conversation";

/// Reads a file to import (at most [`MAX_IMPORT_BYTES`]) as text.
///
/// # Errors
/// [`CoreError::Invalid`] (field `file`): it cannot be read or is too large.
async fn read_import_file(path: PathBuf) -> Result<String, CoreError> {
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
async fn write_text_file(path: PathBuf, text: String) -> Result<(), CoreError> {
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
fn new_title(title: &str) -> String {
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
    /// Where the page before this one ends ([`Core::older_messages`]); `None` when `messages`
    /// starts at the first message.
    pub older: Option<i64>,
    /// Where branches part among `messages`.
    pub branches: Vec<crate::store::BranchPoint>,
    /// What the composer held when the conversation was left (none: nothing).
    pub draft: Option<Draft>,
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

pub struct Core {
    paths: AppPaths,
    db: Result<Store, DatabaseUnavailable>,
    secrets: Arc<dyn SecretStore>,
    /// Time limits and retries of every provider client this core builds.
    http: HttpOptions,
    /// The login shell's `PATH` merged with the app's, read once when a server first starts.
    search_path: tokio::sync::OnceCell<std::ffi::OsString>,
}

/// The largest export file an import reads.
pub const MAX_IMPORT_BYTES: u64 = 1024 * 1024 * 1024;

impl Core {
    /// Opens the database on the blocking pool. A database that cannot be opened does not fail
    /// this call: the core remembers why, every storage operation reports it, and the file is
    /// left as it was.
    pub async fn open(paths: AppPaths, secrets: Arc<dyn SecretStore>) -> Core {
        Self::open_with_timeout(paths, secrets, DEFAULT_BUSY_TIMEOUT, OpenCheck::Pages).await
    }

    /// [`Core::open`], waiting at most `busy_timeout` for a lock and checking as much of the
    /// file as `check` says.
    pub async fn open_with_timeout(
        paths: AppPaths,
        secrets: Arc<dyn SecretStore>,
        busy_timeout: Duration,
        check: OpenCheck,
    ) -> Core {
        let file = paths.database_file();
        let opened =
            tokio::task::spawn_blocking(move || Store::open_checking(&file, busy_timeout, check))
                .await
                .unwrap_or_else(|e| Err(StoreError::Task(e.to_string())));
        let db = opened.map_err(|e| {
            tracing::error!(error = %e, "the database could not be opened");
            DatabaseUnavailable::from(&e)
        });
        Core {
            paths,
            db,
            secrets,
            http: HttpOptions::default(),
            search_path: tokio::sync::OnceCell::new(),
        }
    }

    /// A core over an existing store, for tests.
    pub fn with_store(paths: AppPaths, store: Store, secrets: Arc<dyn SecretStore>) -> Core {
        Core {
            paths,
            db: Ok(store),
            secrets,
            http: HttpOptions::default(),
            search_path: tokio::sync::OnceCell::new(),
        }
    }

    /// Replaces the time limits and retries of provider clients (tests use short ones).
    #[must_use]
    pub fn with_http_options(mut self, http: HttpOptions) -> Core {
        self.http = http;
        self
    }

    /// Marks answers a crash (or a kill) left unfinished as interrupted: those whose writing
    /// process is gone, never one the window or another command line is still streaming.
    /// Every entry point calls it when it opens the home ([`crate::App::with_core`]).
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
    }

    pub fn paths(&self) -> &AppPaths {
        &self.paths
    }

    pub fn database_error(&self) -> Option<&DatabaseUnavailable> {
        self.db.as_ref().err()
    }

    /// The app's version, its home, and whether the database opened.
    pub fn status(&self, version: &'static str) -> AppStatus {
        AppStatus {
            version,
            home: self.paths.display_home(),
            database_error: self
                .database_error()
                .map(|e| CoreError::from(e.clone()).into()),
        }
    }

    /// The database, or why it is unavailable.
    ///
    /// # Errors
    /// [`CoreError::DatabaseUnavailable`].
    pub fn store(&self) -> Result<&Store, CoreError> {
        self.db.as_ref().map_err(|e| CoreError::from(e.clone()))
    }

    async fn secrets<T, F>(&self, work: F) -> Result<T, CoreError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn SecretStore) -> Result<T, SecretError> + Send + 'static,
    {
        let secrets = Arc::clone(&self.secrets);
        tokio::task::spawn_blocking(move || work(secrets.as_ref()))
            .await
            .map_err(|e| SecretError::Failed {
                detail: e.to_string(),
            })?
            .map_err(CoreError::from)
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

    // ---- conversations ----------------------------------------------------------------

    /// # Errors
    /// The database is unavailable or a query failed.
    pub async fn list_conversations(&self) -> Result<Vec<Conversation>, CoreError> {
        Ok(self.store()?.list_conversations().await?)
    }

    /// Creates a conversation; a blank title (or one of invisible characters only) becomes "New
    /// conversation", a long one is cut.
    ///
    /// # Errors
    /// The database is unavailable or a query failed.
    pub async fn create_conversation(
        &self,
        title: Option<&str>,
    ) -> Result<Conversation, CoreError> {
        self.create_conversation_with(title, "").await
    }

    /// Creates a conversation that tells the model `system_prompt` first (blank for nothing).
    ///
    /// # Errors
    /// A system prompt that is too long; the database is unavailable or a query failed.
    pub async fn create_conversation_with(
        &self,
        title: Option<&str>,
        system_prompt: &str,
    ) -> Result<Conversation, CoreError> {
        let title = new_title(title.unwrap_or_default());
        let system_prompt = crate::settings::tidy_system_prompt("system_prompt", system_prompt)?;
        Ok(self
            .store()?
            .create_conversation_with(title, system_prompt)
            .await?)
    }

    /// Conversations whose title, or one of whose messages (questions, answers, tool
    /// results), holds every word of `text`; titles first, then messages newest first.
    ///
    /// # Errors
    /// The database is unavailable or a query failed.
    pub async fn search_conversations(
        &self,
        text: &str,
        limit: Option<u32>,
    ) -> Result<Vec<crate::store::SearchHit>, CoreError> {
        Ok(self
            .store()?
            .search(text.to_owned(), limit.unwrap_or(50))
            .await?)
    }

    /// Everything of one conversation, in the versioned export format.
    ///
    /// # Errors
    /// Not found; the database is unavailable.
    pub async fn export_conversation(
        &self,
        id: &str,
    ) -> Result<crate::store::ConversationExport, CoreError> {
        Ok(self.store()?.export_conversation(id.to_owned()).await?)
    }

    /// Deletes a question and its answers; the window goes through [`crate::App::delete_turn`],
    /// which first makes sure no run is under way there.
    ///
    /// # Errors
    /// No such question; the database.
    pub async fn delete_turn(
        &self,
        conversation_id: &str,
        message_id: &str,
    ) -> Result<Vec<String>, CoreError> {
        Ok(self
            .store()?
            .delete_turn(conversation_id.to_owned(), message_id.to_owned())
            .await?)
    }

    /// Writes an export ([`Core::export_conversation`]) to `path` in `format`, whole or not at
    /// all.
    ///
    /// # Errors
    /// [`CoreError::Invalid`] (field `file`) when the file cannot be written.
    pub async fn write_export(
        &self,
        file: &crate::store::ConversationExport,
        format: crate::store::ExportFormat,
        path: std::path::PathBuf,
    ) -> Result<(), CoreError> {
        write_text_file(path, crate::store::export_text(file, format)).await
    }

    /// Reads the export at `path` (JSON, at most [`MAX_IMPORT_BYTES`]) and keeps it as a new
    /// conversation.
    ///
    /// # Errors
    /// [`CoreError::Invalid`] (field `file`) for a file that cannot be read, is too large or is
    /// not an export this build reads; the database.
    pub async fn import_conversation_file(
        &self,
        path: std::path::PathBuf,
    ) -> Result<Conversation, CoreError> {
        let text = read_import_file(path).await?;
        self.import_conversation(&text).await
    }

    /// Reads an exported conversation (JSON text) and keeps it as a new conversation.
    ///
    /// # Errors
    /// [`CoreError::Invalid`] (field `file`) for text that is not an export this build reads;
    /// the database.
    pub async fn import_conversation(&self, json: &str) -> Result<Conversation, CoreError> {
        let file: crate::store::ConversationExport = serde_json::from_str(json).map_err(|e| {
            InvalidInput::new(
                "file",
                format!("This is not a Switchboard conversation export: {e}."),
            )
        })?;
        file.check()?;
        let mut file = file;
        file.conversation.title = new_title(&file.conversation.title);
        for run in &mut file.tool_runs {
            run.rich = run
                .result
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok())
                .is_some_and(|value| crate::mcp::results::is_rich(&value));
        }
        file.conversation.system_prompt =
            crate::settings::tidy_system_prompt("system_prompt", &file.conversation.system_prompt)?;
        Ok(self.store()?.import_conversation(file).await?)
    }

    /// Sets what the model is told before a conversation; blank for nothing.
    ///
    /// # Errors
    /// Too long; not found; the database is unavailable.
    pub async fn set_system_prompt(
        &self,
        id: &str,
        system_prompt: &str,
    ) -> Result<Conversation, CoreError> {
        let system_prompt = crate::settings::tidy_system_prompt("system_prompt", system_prompt)?;
        Ok(self
            .store()?
            .set_system_prompt(id.to_owned(), system_prompt)
            .await?)
    }

    /// # Errors
    /// [`CoreError::Invalid`] for a blank title (or one of invisible characters only, which
    /// would leave a blank row in the list); not found; the database is unavailable.
    pub async fn rename_conversation(
        &self,
        id: &str,
        title: &str,
    ) -> Result<Conversation, CoreError> {
        let title = one_line(title, MAX_TITLE_CHARS);
        if crate::text::is_blank(&title) {
            return Err(InvalidInput::new("title", "A title cannot be empty.").into());
        }
        Ok(self
            .store()?
            .rename_conversation(id.to_owned(), title)
            .await?)
    }

    /// Picks the provider and model a conversation talks to; `None` clears the choice (the
    /// Settings default applies). The provider must exist; the model is not checked against
    /// the provider's list, which may be unreachable right now.
    ///
    /// # Errors
    /// Not found (conversation or provider); a model name too long; the database.
    pub async fn set_conversation_model(
        &self,
        id: &str,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> Result<Conversation, CoreError> {
        let provider = match provider.map(str::trim).filter(|p| !p.is_empty()) {
            Some(name) => Some(self.provider_row(name).await?.name),
            None => None,
        };
        let model = validate_model(model).map_err(|e| InvalidInput::new("model", e.message))?;
        Ok(self
            .store()?
            .set_conversation_model(id.to_owned(), provider, model)
            .await?)
    }

    /// # Errors
    /// Not found; the database is unavailable.
    pub async fn delete_conversation(&self, id: &str) -> Result<(), CoreError> {
        Ok(self.store()?.delete_conversation(id.to_owned()).await?)
    }

    /// # Errors
    /// Not found; the database is unavailable.
    pub async fn get_conversation(&self, id: &str) -> Result<ConversationDetail, CoreError> {
        let store = self.store()?;
        let conversation = store.get_conversation(id.to_owned()).await?;
        let page = store
            .message_page(id.to_owned(), None, MESSAGE_PAGE)
            .await?;
        let draft = drafts::read_draft(store.draft(id.to_owned()).await?);
        Ok(ConversationDetail {
            conversation,
            messages: page.messages,
            tool_runs: page.tool_runs,
            older: page.older,
            branches: page.branches,
            draft,
        })
    }

    /// The page of messages before the one numbered `before` (a page's `older`).
    ///
    /// # Errors
    /// Not found; the database is unavailable.
    pub async fn older_messages(
        &self,
        id: &str,
        before: i64,
        limit: Option<u32>,
    ) -> Result<crate::store::MessagePage, CoreError> {
        let limit = limit.unwrap_or(MESSAGE_PAGE).clamp(1, 1_000);
        Ok(self
            .store()?
            .message_page(id.to_owned(), Some(before), limit)
            .await?)
    }

    /// The whole text of a message a page showed in part (a long tool result).
    ///
    /// # Errors
    /// Not found; the database is unavailable.
    pub async fn message_text(
        &self,
        conversation_id: &str,
        message_id: &str,
    ) -> Result<String, CoreError> {
        Ok(self
            .store()?
            .message_content(conversation_id.to_owned(), message_id.to_owned())
            .await?
            .unwrap_or_default())
    }

    /// The call `call_id` of the answer `message_id` in `conversation_id`, as saved.
    ///
    /// # Errors
    /// Not found; the database.
    pub async fn tool_run(
        &self,
        conversation_id: &str,
        message_id: &str,
        call_id: &str,
    ) -> Result<crate::store::ToolRun, CoreError> {
        Ok(self
            .store()?
            .get_tool_run(
                conversation_id.to_owned(),
                message_id.to_owned(),
                call_id.to_owned(),
            )
            .await?)
    }

    /// What the card of call `call_id` of the answer `message_id` shows beyond the result's
    /// text: its images, audio, resources, links and structured content. Empty for a result
    /// that was no MCP result (an error text) or that the record keeps in a file.
    ///
    /// # Errors
    /// No such call; the database is unavailable.
    pub async fn tool_result_view(
        &self,
        conversation_id: &str,
        message_id: &str,
        call_id: &str,
    ) -> Result<crate::mcp::results::ResultView, CoreError> {
        let run = self.tool_run(conversation_id, message_id, call_id).await?;
        let result = run
            .result
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default();
        Ok(crate::mcp::results::view(&result))
    }

    // ---- providers --------------------------------------------------------------------

    async fn provider_view(&self, row: ProviderRow) -> Result<Provider, CoreError> {
        let account = provider_account(&row.name);
        let has_key = self.secrets(move |s| s.get(&account)).await?.is_some();
        to_provider(row, has_key)
    }

    async fn provider_row(&self, name: &str) -> Result<ProviderRow, CoreError> {
        self.store()?
            .find_provider(name.trim().to_owned())
            .await?
            .ok_or_else(|| CoreError::NotFound {
                what: format!("provider “{}”", one_line(name, 80)),
            })
    }

    /// Every provider, with whether a key is stored (asked of the keychain once per provider).
    /// When the keychain is unreachable, providers are still listed, shown without keys.
    ///
    /// # Errors
    /// The database is unavailable or a query failed.
    pub async fn list_providers(&self) -> Result<Vec<Provider>, CoreError> {
        let rows = self.store()?.list_providers().await?;
        let accounts: Vec<String> = rows.iter().map(|r| provider_account(&r.name)).collect();
        let has_keys = self
            .secrets(move |s| {
                accounts
                    .iter()
                    .map(|a| s.get(a).map(|k| k.is_some()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot ask the keychain which providers have keys");
                vec![false; rows.len()]
            });
        rows.into_iter()
            .zip(has_keys)
            .map(|(row, has_key)| to_provider(row, has_key))
            .collect()
    }

    /// Adds a provider. With a key, the key is stored in the keychain first; if that fails,
    /// nothing is saved at all.
    ///
    /// # Errors
    /// Invalid input (naming the field), a taken name, an unreachable keychain, the database.
    pub async fn add_provider(&self, new: NewProvider) -> Result<Provider, CoreError> {
        let name = validate_name(&new.name)?;
        let kind = match new.kind.as_deref().map(str::trim) {
            None | Some("") => {
                return Err(
                    InvalidInput::new("kind", "Choose what kind of provider this is.").into(),
                )
            }
            Some(k) => ProviderKind::parse(k).ok_or_else(|| {
                InvalidInput::new(
                    "kind",
                    format!("Unknown provider kind “{}”.", one_line(k, 40)),
                )
            })?,
        };
        let base_url = validate_base_url(kind, new.base_url.as_deref())?;
        let default_model = validate_model(new.default_model.as_deref())?;
        let store = self.store()?;
        let key = new.api_key.filter(|k| !k.expose_secret().trim().is_empty());
        // The row first: inserting it claims the name atomically, so two adds of one name can
        // never write (or roll back) each other's key.
        let row = store
            .insert_provider(
                name.clone(),
                kind.as_str().to_owned(),
                base_url,
                default_model,
            )
            .await?
            .ok_or_else(|| name_taken(&name))?;
        let has_key = key.is_some();
        if let Some(key) = key {
            let account = provider_account(&row.name);
            let stored = self
                .secrets(move |s| s.set(&account, &key))
                .await
                .map_err(CoreError::key_not_saved);
            if let Err(e) = stored {
                // Nothing half-saved: the provider goes again with its key.
                let _ = store.delete_provider(row.id.clone()).await;
                return Err(e);
            }
        }
        tracing::info!(provider = %row.name, kind = kind.as_str(), has_key, "provider added");
        to_provider(row, has_key)
    }

    /// Changes a provider's base URL and default model; `None` keeps a value as it is, an
    /// empty string returns it to the default (the kind's URL; no model).
    ///
    /// # Errors
    /// Invalid input, not found, the database.
    pub async fn update_provider(
        &self,
        name: &str,
        base_url: Option<&str>,
        default_model: Option<&str>,
    ) -> Result<Provider, CoreError> {
        let row = self.provider_row(name).await?;
        let kind = ProviderKind::parse(&row.kind).ok_or_else(|| unknown_kind(&row))?;
        let base_url = match base_url {
            Some(url) => validate_base_url(kind, Some(url))?,
            None => row.base_url.clone(),
        };
        let default_model = match default_model {
            Some(model) => validate_model(Some(model))?,
            None => row.default_model.clone(),
        };
        if !crate::net::same_origin_urls(&row.base_url, &base_url) {
            // A key goes only to the address it was entered for: moving the address to another
            // host (or scheme, or port) removes it first, so the webview cannot redirect it.
            let account = provider_account(&row.name);
            self.secrets(move |s| s.delete(&account))
                .await
                .map_err(|e| CoreError::Conflict {
                    field: "base_url",
                    message: format!(
                        "The address was not changed: its stored key could not be removed \
                         first ({e}), and a key goes only to the address it was entered for."
                    ),
                })?;
            tracing::info!(provider = %row.name, "provider moved to another address; its key was removed");
        }
        let row = self
            .store()?
            .update_provider(row.id, base_url, default_model)
            .await?;
        self.provider_view(row).await
    }

    /// Stores or replaces a provider's key in the keychain.
    ///
    /// # Errors
    /// A blank key, not found, an unreachable keychain.
    pub async fn set_provider_key(
        &self,
        name: &str,
        key: SecretString,
    ) -> Result<Provider, CoreError> {
        if key.expose_secret().trim().is_empty() {
            return Err(InvalidInput::new("api_key", "Paste the API key first.").into());
        }
        let row = self.provider_row(name).await?;
        let account = provider_account(&row.name);
        self.secrets(move |s| s.set(&account, &key))
            .await
            .map_err(CoreError::key_not_saved)?;
        tracing::info!(provider = %row.name, "provider key stored in the keychain");
        to_provider(row, true)
    }

    /// # Errors
    /// Not found, an unreachable keychain.
    pub async fn delete_provider_key(&self, name: &str) -> Result<Provider, CoreError> {
        let row = self.provider_row(name).await?;
        let account = provider_account(&row.name);
        self.secrets(move |s| s.delete(&account)).await?;
        tracing::info!(provider = %row.name, "provider key deleted from the keychain");
        to_provider(row, false)
    }

    /// Removes a provider and its key. The key goes first, so a failure leaves the provider
    /// listed (and removable again) rather than an orphaned key in the keychain.
    ///
    /// # Errors
    /// Not found, an unreachable keychain, the database.
    pub async fn remove_provider(&self, name: &str) -> Result<(), CoreError> {
        let row = self.provider_row(name).await?;
        let account = provider_account(&row.name);
        self.secrets(move |s| s.delete(&account)).await?;
        self.store()?.delete_provider(row.id).await?;
        tracing::info!(provider = %row.name, "provider removed");
        Ok(())
    }

    /// The key of a provider, for code that talks to it; never for the UI.
    ///
    /// # Errors
    /// Not found, an unreachable keychain.
    pub async fn provider_key(&self, name: &str) -> Result<Option<SecretString>, CoreError> {
        let row = self.provider_row(name).await?;
        let account = provider_account(&row.name);
        self.secrets(move |s| s.get(&account)).await
    }

    pub fn database_path(&self) -> PathBuf {
        self.paths.database_file()
    }
}

fn name_taken(name: &str) -> CoreError {
    CoreError::Conflict {
        field: "name",
        message: format!("A provider named “{name}” already exists."),
    }
}

fn unknown_kind(row: &ProviderRow) -> CoreError {
    CoreError::Store(StoreError::InvalidRow {
        detail: format!("provider “{}” has an unknown kind “{}”", row.name, row.kind),
    })
}

fn to_provider(row: ProviderRow, has_key: bool) -> Result<Provider, CoreError> {
    let kind = ProviderKind::parse(&row.kind).ok_or_else(|| unknown_kind(&row))?;
    Ok(Provider {
        id: row.id,
        name: row.name,
        kind,
        base_url: row.base_url,
        default_model: row.default_model,
        has_key,
        created_at: row.created_at,
    })
}

mod artifacts;
mod attachments;
mod chat;
mod connections;
mod drafts;
mod mcp;
mod profiles;
mod usage;

pub use crate::events::CallRef;
pub use artifacts::{ConversationArtifact, ToolLink, MAX_PREVIEW_BYTES};
pub use attachments::ToolSuggestion;
pub use chat::{system_prompt, ConversationTool, ToolSelection, TurnRequest};
pub use connections::{ConnectionReport, LocalServer};
pub use drafts::{ComparedModel, Draft, MAX_COMPARED, MAX_DRAFT_CHARS};
pub use mcp::{McpServerStatus, McpServerView, ToolReview};
pub use profiles::{ImportedProfile, ProfileChoice, MAX_PROFILE_NAME_CHARS};
pub use usage::UsageReport;

#[cfg(test)]
mod tests;
