//! The canvas (issue 17): the files tools produced in a conversation, read for a preview and
//! saved through the native save dialog. The webview names a file by its conversation and
//! SHA-256 only; the core checks it is one of that conversation's tool results. A resource link
//! a result carries is read into the canvas on the person's click, named by the call that
//! returned it.

use base64::Engine as _;
use switchboard_core::app::ConversationArtifact;
use tauri::{AppHandle, State};

use super::error::CommandResult;
use crate::bridge::choose_file;
use crate::state::AppState;

/// The files tools produced in the conversation, oldest first.
#[tauri::command]
pub async fn list_artifacts(
    state: State<'_, AppState>,
    conversation_id: String,
) -> CommandResult<Vec<ConversationArtifact>> {
    Ok(state.app().await.artifacts(&conversation_id).await?)
}

/// One of them as base64, for its preview.
#[tauri::command]
pub async fn read_artifact(
    state: State<'_, AppState>,
    conversation_id: String,
    sha256: String,
) -> CommandResult<String> {
    let (_, bytes) = state
        .app()
        .await
        .artifact_bytes(&conversation_id, &sha256)
        .await?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Asks where to save one of them (suggesting its name) and writes it there; the path, or
/// `null` when the person closed the dialog.
#[tauri::command]
pub async fn save_artifact(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    sha256: String,
) -> CommandResult<Option<String>> {
    let switchboard = state.app().await;
    let found = switchboard.artifact(&conversation_id, &sha256).await?;
    let name = found.name.clone();
    let extension = name.rsplit_once('.').map_or("*", |(_, e)| e).to_owned();
    let Some(path) = choose_file(
        &app,
        "Save As",
        Some(&name),
        ("This kind of file", &extension),
    )
    .await
    else {
        return Ok(None);
    };
    switchboard.write_artifact(&found, &path).await?;
    Ok(Some(path.display().to_string()))
}

/// Reads the link `uri` that call `call_id` of answer `message_id` returned, through the server
/// that returned it, and keeps what it reads among the conversation's files; returns them.
#[tauri::command]
pub async fn read_tool_link(
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
    call_id: String,
    uri: String,
) -> CommandResult<Vec<ConversationArtifact>> {
    Ok(state
        .app()
        .await
        .read_tool_link(&conversation_id, &message_id, &call_id, &uri)
        .await?)
}
