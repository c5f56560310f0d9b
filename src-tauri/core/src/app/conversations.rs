//! Conversations as the app keeps them: listed, made, searched, renamed, read a page at a
//! time, exported and imported, and their tool calls as saved. The [`Conversations`] service
//! holds only the database; the window and the command line reach it as
//! `app.conversations()`. Making one from a profile, deleting one (its run stops first) and
//! summarising one (a model is asked) are the app's, which has the rest they need.

use super::db::Db;
use super::drafts;
use super::{
    new_title, read_import_file, write_text_file, ConversationDetail, MAX_TITLE_CHARS, MESSAGE_PAGE,
};
use crate::error::{CoreError, InvalidInput};
use crate::provider_config::validate_model;
use crate::store::{Conversation, Store};
use crate::text::one_line;

/// The conversations kept in the database, and what each holds.
#[derive(Clone)]
pub struct Conversations {
    db: Db,
}

impl Conversations {
    pub(super) fn new(db: Db) -> Self {
        Self { db }
    }

    fn store(&self) -> Result<&Store, CoreError> {
        self.db.store()
    }

    /// # Errors
    /// The database is unavailable or a query failed.
    pub async fn list(&self) -> Result<Vec<Conversation>, CoreError> {
        Ok(self.store()?.list_conversations().await?)
    }

    /// Creates a conversation that tells the model `system_prompt` first (blank for nothing).
    /// It is the person's from the start (kept even unused) when they named it.
    ///
    /// # Errors
    /// A system prompt that is too long; the database is unavailable or a query failed.
    pub async fn create(
        &self,
        title: Option<&str>,
        system_prompt: &str,
    ) -> Result<Conversation, CoreError> {
        let named = title.is_some_and(|t| !crate::text::is_blank(t));
        self.create_kept(title, system_prompt, named).await
    }

    /// [`Conversations::create`], kept even unused when `kept` (a name or a system prompt of
    /// the person's).
    ///
    /// # Errors
    /// As [`Conversations::create`].
    pub(super) async fn create_kept(
        &self,
        title: Option<&str>,
        system_prompt: &str,
        kept: bool,
    ) -> Result<Conversation, CoreError> {
        let title = new_title(title.unwrap_or_default());
        let system_prompt = crate::settings::tidy_system_prompt("system_prompt", system_prompt)?;
        Ok(self
            .store()?
            .create_conversation_with(title, system_prompt, kept)
            .await?)
    }

    /// Conversations whose title, or one of whose messages (questions, answers, tool
    /// results), holds every word of `text`; titles first, then messages newest first.
    ///
    /// # Errors
    /// The database is unavailable or a query failed.
    pub async fn search(
        &self,
        text: &str,
        limit: Option<u32>,
    ) -> Result<Vec<crate::store::SearchHit>, CoreError> {
        Ok(self
            .store()?
            .search(text.to_owned(), limit.unwrap_or(50))
            .await?)
    }

    /// [`Conversations::search`] in the conversations of the project `project_id` only.
    ///
    /// # Errors
    /// As [`Conversations::search`].
    pub async fn search_in(
        &self,
        text: &str,
        limit: Option<u32>,
        project_id: &str,
    ) -> Result<Vec<crate::store::SearchHit>, CoreError> {
        Ok(self
            .store()?
            .search_in(
                text.to_owned(),
                limit.unwrap_or(50),
                Some(project_id.to_owned()),
            )
            .await?)
    }

    /// Everything of one conversation, in the versioned export format.
    ///
    /// # Errors
    /// Not found; the database is unavailable.
    pub async fn export(&self, id: &str) -> Result<crate::store::ConversationExport, CoreError> {
        Ok(self.store()?.export_conversation(id.to_owned()).await?)
    }

    /// Writes an export ([`Conversations::export`]) to `path` in `format`, whole or not at
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

    /// Reads the export at `path` (JSON, at most [`super::MAX_IMPORT_BYTES`]) and keeps it as a new
    /// conversation.
    ///
    /// # Errors
    /// [`CoreError::Invalid`] (field `file`) for a file that cannot be read, is too large or is
    /// not an export this build reads; the database.
    pub async fn import_file(&self, path: std::path::PathBuf) -> Result<Conversation, CoreError> {
        let text = read_import_file(path).await?;
        self.import(&text).await
    }

    /// Reads an exported conversation (JSON text) and keeps it as a new conversation.
    ///
    /// # Errors
    /// [`CoreError::Invalid`] (field `file`) for text that is not an export this build reads;
    /// the database.
    pub async fn import(&self, json: &str) -> Result<Conversation, CoreError> {
        let file: crate::store::ConversationExport = serde_json::from_str(json).map_err(|e| {
            InvalidInput::new(
                "file",
                format!("This is not a Switchboard conversation export: {e}."),
            )
        })?;
        self.import_export(file).await
    }

    /// Keeps an exported conversation already read (checked first) as a new conversation.
    ///
    /// # Errors
    /// As [`Conversations::import`].
    pub async fn import_export(
        &self,
        file: crate::store::ConversationExport,
    ) -> Result<Conversation, CoreError> {
        file.check()?;
        let mut file = file;
        file.conversation.title = self
            .untaken_title(&new_title(&file.conversation.title))
            .await?;
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

    /// `title`, or when a conversation has it already, the first of "title (imported)",
    /// "title (imported 2)"… that none has, so an import stands apart from its original in the
    /// list (the title cut to leave room).
    async fn untaken_title(&self, title: &str) -> Result<String, CoreError> {
        let named = |n: u32| {
            let end = if n == 1 {
                " (imported)".to_owned()
            } else {
                format!(" (imported {n})")
            };
            let room = MAX_TITLE_CHARS.saturating_sub(end.chars().count());
            format!(
                "{}{end}",
                title.chars().take(room).collect::<String>().trim_end()
            )
        };
        let store = self.store()?;
        if store.titles_taken(vec![title.to_owned()]).await?.is_empty() {
            return Ok(title.to_owned());
        }
        // Twenty at a time: importing one export many times stays a few queries.
        let mut first = 1u32;
        loop {
            let candidates: Vec<String> = (first..first.saturating_add(20)).map(named).collect();
            let taken = store.titles_taken(candidates.clone()).await?;
            if let Some(free) = candidates.into_iter().find(|c| !taken.contains(c)) {
                return Ok(free);
            }
            first = first.saturating_add(20);
        }
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

    /// Deletes conversation `id` if nobody used it: made by New and left with no message, no
    /// draft, no name and no system prompt of the person's. True when it went.
    ///
    /// # Errors
    /// The database.
    pub async fn discard_if_unused(&self, id: &str) -> Result<bool, CoreError> {
        Ok(self.store()?.discard_if_unused(id.to_owned()).await?)
    }

    /// # Errors
    /// [`CoreError::Invalid`] for a blank title (or one of invisible characters only, which
    /// would leave a blank row in the list); not found; the database is unavailable.
    pub async fn rename(&self, id: &str, title: &str) -> Result<Conversation, CoreError> {
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
    pub async fn set_model(
        &self,
        id: &str,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> Result<Conversation, CoreError> {
        let provider = match provider.map(str::trim).filter(|p| !p.is_empty()) {
            Some(name) => Some(self.db.provider_row(name).await?.name),
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
    pub async fn get(&self, id: &str) -> Result<ConversationDetail, CoreError> {
        let store = self.store()?;
        let conversation = store.get_conversation(id.to_owned()).await?;
        let page = store
            .message_page(id.to_owned(), None, MESSAGE_PAGE)
            .await?;
        let draft = drafts::read_draft(store.draft(id.to_owned()).await?);
        let summaries = store.summaries(id.to_owned()).await?;
        let context = store.context_use(id.to_owned()).await?;
        Ok(ConversationDetail {
            conversation,
            messages: page.messages,
            tool_runs: page.tool_runs,
            offers: page.offers,
            older: page.older,
            branches: page.branches,
            draft,
            summaries,
            context,
        })
    }

    /// What the conversation's model was last given (its window, what filled it, and what of
    /// the project's files and the memory), if it was given anything since that was kept.
    ///
    /// # Errors
    /// Not found; the database is unavailable.
    pub async fn context(&self, id: &str) -> Result<Option<crate::store::ContextUse>, CoreError> {
        let store = self.store()?;
        let conversation = store.get_conversation(id.to_owned()).await?;
        Ok(store.context_use(conversation.id).await?)
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
}
