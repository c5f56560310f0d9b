//! Conversations as the app keeps them: listed, made, searched, renamed, deleted, read a page
//! at a time, exported and imported.

use super::drafts;
use super::{
    new_title, read_import_file, write_text_file, App, ConversationDetail, MAX_TITLE_CHARS,
    MESSAGE_PAGE,
};
use crate::error::{CoreError, InvalidInput};
use crate::provider_config::validate_model;
use crate::store::Conversation;
use crate::text::one_line;

impl App {
    // ---- conversations ----------------------------------------------------------------

    /// # Errors
    /// The database is unavailable or a query failed.
    pub async fn list_conversations(&self) -> Result<Vec<Conversation>, CoreError> {
        Ok(self.store()?.list_conversations().await?)
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

    /// Writes an export ([`App::export_conversation`]) to `path` in `format`, whole or not at
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
    pub async fn get_conversation(&self, id: &str) -> Result<ConversationDetail, CoreError> {
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

    /// Summarises a conversation's earlier messages now (`switchboard conversations compact`):
    /// every turn before the newest one that the summary in force does not cover, with the
    /// conversation's model, in requests that fit its window (32,768 tokens when it is not
    /// known). The messages stay. `None`: nothing to summarise.
    ///
    /// # Errors
    /// No such conversation; no model to ask; the provider's error; the database.
    pub async fn compact_conversation(
        &self,
        id: &str,
    ) -> Result<Option<crate::store::Summary>, CoreError> {
        let settings = &self.settings();
        let store = self.store()?;
        let conversation = store.get_conversation(id.to_owned()).await?;
        let request = super::TurnRequest {
            conversation_id: id.to_owned(),
            ..super::TurnRequest::default()
        };
        let (provider_name, model) = self.choose_model(&conversation, &request, settings).await?;
        let provider = self.providers.client(&provider_name).await?;
        let messages = store.list_messages(id.to_owned()).await?;
        let summaries = store.summaries(id.to_owned()).await?;
        let (previous, from) = match crate::store::summary_in_force(&summaries, &messages) {
            Some((summary, at)) => (Some(summary.clone()), at + 1),
            None => (None, 0),
        };
        let tail = &messages[from..];
        let newest = tail
            .iter()
            .rposition(|m| m.role == crate::store::Role::User)
            .unwrap_or(0);
        let gone = &tail[..newest];
        if gone.is_empty() {
            return Ok(None);
        }
        let known = self.providers.window(&provider_name, &model).await?;
        let window = known.as_ref().map_or(COMPACT_WINDOW, |w| w.tokens);
        let load_window = known
            .filter(|w| w.said_by != crate::store::WindowSource::Table)
            .map(|w| w.tokens);
        let mut usage = Vec::new();
        let summarised = crate::agent::summary::summarise_messages(
            crate::agent::summary::ModelAsked {
                provider: provider.as_ref(),
                model: &model,
                load_window,
            },
            previous.as_ref().map(|s| s.text.as_str()),
            gone,
            crate::agent::fit::budget(window),
            &tokio_util::sync::CancellationToken::new(),
            &mut usage,
        )
        .await;
        let price = self
            .usage
            .price(&provider_name, &model)
            .await?
            .map(|p| p.price);
        for answer in &usage {
            let n = |n: Option<u64>| n.unwrap_or(0);
            let signed = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            let (input, output, cached) = (
                n(answer.input_tokens),
                n(answer.output_tokens),
                n(answer.cached_input_tokens),
            );
            let recorded = store
                .record_usage(crate::store::NewUsage {
                    conversation_id: Some(id.to_owned()),
                    message_id: None,
                    provider: provider_name.clone(),
                    model: model.clone(),
                    purpose: crate::store::UsagePurpose::Summary,
                    input_tokens: signed(input),
                    output_tokens: signed(output),
                    cached_input_tokens: signed(cached),
                    cost_pico: price.map(|p| signed(p.cost_with_cache(input, cached, output))),
                })
                .await;
            if let Err(e) = recorded {
                tracing::warn!(error = %e, "a summary's usage was not recorded");
            }
        }
        let (text, summarised) = summarised?;
        let kept = store
            .add_summary(crate::agent::summary::new_summary(
                id,
                previous.as_ref(),
                gone,
                text,
                summarised,
                (&provider_name, &model),
            ))
            .await?;
        Ok(Some(kept))
    }
}

/// The window a summary asked for from the command line plans for when the model's is not known.
const COMPACT_WINDOW: u64 = 32_768;
