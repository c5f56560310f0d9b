//! Conversation commands.

use switchboard_core::engine::ConversationDetail;
use switchboard_core::store::Conversation;
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

#[tauri::command]
pub async fn list_conversations(state: State<'_, AppState>) -> CommandResult<Vec<Conversation>> {
    Ok(state.core().await.list_conversations().await?)
}

#[tauri::command]
pub async fn create_conversation(
    state: State<'_, AppState>,
    title: Option<String>,
) -> CommandResult<Conversation> {
    Ok(state
        .core()
        .await
        .create_conversation(title.as_deref())
        .await?)
}

#[tauri::command]
pub async fn rename_conversation(
    state: State<'_, AppState>,
    id: String,
    title: String,
) -> CommandResult<Conversation> {
    Ok(state.core().await.rename_conversation(&id, &title).await?)
}

#[tauri::command]
pub async fn delete_conversation(state: State<'_, AppState>, id: String) -> CommandResult<()> {
    Ok(state.core().await.delete_conversation(&id).await?)
}

#[tauri::command]
pub async fn get_conversation(
    state: State<'_, AppState>,
    id: String,
) -> CommandResult<ConversationDetail> {
    Ok(state.core().await.get_conversation(&id).await?)
}

/// `null` provider clears the choice: the Settings default applies.
#[tauri::command]
pub async fn set_conversation_model(
    state: State<'_, AppState>,
    id: String,
    provider: Option<String>,
    model: Option<String>,
) -> CommandResult<Conversation> {
    Ok(state
        .core()
        .await
        .set_conversation_model(&id, provider.as_deref(), model.as_deref())
        .await?)
}
