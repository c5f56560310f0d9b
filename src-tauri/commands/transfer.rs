//! Finding and keeping conversations: full-text search, export through the native save dialog
//! (Markdown or the versioned JSON) and import of such a JSON file through the open dialog.
//! The files are read and written by the core; the dialogs are the only thing here.

use switchboard_core::store::{export_file_name, Conversation, ExportFormat, SearchHit};
use tauri::{AppHandle, State};

use super::error::CommandResult;
use crate::bridge::choose_file;
use crate::state::AppState;

/// Conversations whose title, and messages whose text, hold every word of `text`.
#[tauri::command]
pub async fn search_conversations(
    state: State<'_, AppState>,
    text: String,
    limit: Option<u32>,
) -> CommandResult<Vec<SearchHit>> {
    Ok(state.app().await.search_conversations(&text, limit).await?)
}

/// Asks where to save conversation `id` and writes it there; resolves with the file's path, or
/// `null` when the person closed the dialog.
#[tauri::command]
pub async fn export_conversation(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
    format: ExportFormat,
) -> CommandResult<Option<String>> {
    let switchboard = state.app().await;
    let file = switchboard.export_conversation(&id).await?;
    let (kind, title) = match format {
        ExportFormat::Markdown => ("Markdown", "Export as Markdown"),
        ExportFormat::Json => ("Switchboard conversation (JSON)", "Export as JSON"),
    };
    let name = export_file_name(&file.conversation.title, format);
    let Some(path) = choose_file(&app, title, Some(&name), (kind, format.extension())).await else {
        return Ok(None);
    };
    switchboard
        .write_export(&file, format, path.clone())
        .await?;
    Ok(Some(path.display().to_string()))
}

/// Asks for an exported conversation (JSON) and keeps it as a new conversation; `null` when
/// the person closed the dialog.
#[tauri::command]
pub async fn import_conversation(
    app: AppHandle,
    state: State<'_, AppState>,
) -> CommandResult<Option<Conversation>> {
    let Some(path) = choose_file(
        &app,
        "Import a conversation",
        None,
        ("Switchboard conversation (JSON)", "json"),
    )
    .await
    else {
        return Ok(None);
    };
    Ok(Some(
        state.app().await.import_conversation_file(path).await?,
    ))
}
