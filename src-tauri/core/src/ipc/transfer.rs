//! Finding and keeping conversations: full-text search, export through the native save dialog
//! (Markdown or the versioned JSON) and import of such a JSON file through the open dialog.
//! The files are read and written by the core; the dialogs are the host's.

use super::commands;
use crate::store::{export_file_name, Conversation, ExportFormat, SearchHit};

commands! {
    /// Conversations whose title, and messages whose text, hold every word of `text`.
    async fn search_conversations(cx, text: String, limit: Option<u32>, project_id: Option<String>) -> Vec<SearchHit> {
        Ok(match project_id {
            Some(project) => cx.app.conversations().search_in(&text, limit, &project).await?,
            None => cx.app.conversations().search(&text, limit).await?,
        })
    }

    /// Asks where to save conversation `id` and writes it there; resolves with the file's path,
    /// or `null` when the person closed the dialog.
    async fn export_conversation(cx, id: String, format: ExportFormat) -> Option<String> {
        let file = cx.app.conversations().export(&id).await?;
        let (kind, title) = match format {
            ExportFormat::Markdown => ("Markdown", "Export as Markdown"),
            ExportFormat::Json => ("Switchboard conversation (JSON)", "Export as JSON"),
        };
        let name = export_file_name(&file.conversation.title, format);
        let filter = (kind, format.extension());
        let Some(path) = cx.host.choose_file(title, Some(&name), filter).await else {
            return Ok(None);
        };
        cx.app.conversations().write_export(&file, format, path.clone()).await?;
        Ok(Some(path.display().to_string()))
    }

    /// Asks for an exported conversation (JSON) and keeps it as a new conversation; `null` when
    /// the person closed the dialog.
    async fn import_conversation(cx) -> Option<Conversation> {
        let filter = ("Switchboard conversation (JSON)", "json");
        let Some(path) = cx.host.choose_file("Import a conversation", None, filter).await else {
            return Ok(None);
        };
        Ok(Some(cx.app.conversations().import_file(path).await?))
    }
}
