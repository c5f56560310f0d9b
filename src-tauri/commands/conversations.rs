//! Conversation commands.

use switchboard_core::app::{ConversationDetail, Draft, ProfileChoice};
use switchboard_core::store::{Conversation, MessagePage};
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

#[tauri::command]
pub async fn list_conversations(state: State<'_, AppState>) -> CommandResult<Vec<Conversation>> {
    Ok(state.app().await.list_conversations().await?)
}

#[tauri::command]
pub async fn create_conversation(
    state: State<'_, AppState>,
    title: Option<String>,
    profile: Option<ProfileChoice>,
) -> CommandResult<Conversation> {
    Ok(state
        .app()
        .await
        .create_conversation(title.as_deref(), None, &profile.unwrap_or_default())
        .await?)
}

/// What the model is told before this conversation; blank for nothing.
#[tauri::command]
pub async fn set_system_prompt(
    state: State<'_, AppState>,
    id: String,
    system_prompt: String,
) -> CommandResult<Conversation> {
    Ok(state
        .app()
        .await
        .set_system_prompt(&id, &system_prompt)
        .await?)
}

/// Keeps what the composer of this conversation holds (an empty draft: forgets it).
#[tauri::command]
pub async fn save_draft(state: State<'_, AppState>, id: String, draft: Draft) -> CommandResult<()> {
    Ok(state.app().await.save_draft(&id, &draft).await?)
}

#[tauri::command]
pub async fn rename_conversation(
    state: State<'_, AppState>,
    id: String,
    title: String,
) -> CommandResult<Conversation> {
    Ok(state.app().await.rename_conversation(&id, &title).await?)
}

#[tauri::command]
pub async fn delete_conversation(state: State<'_, AppState>, id: String) -> CommandResult<()> {
    Ok(state.app().await.delete_conversation(&id).await?)
}

#[tauri::command]
pub async fn get_conversation(
    state: State<'_, AppState>,
    id: String,
) -> CommandResult<ConversationDetail> {
    Ok(state.app().await.get_conversation(&id).await?)
}

/// The page of messages before `before` (a page's `older`), as the person scrolls back.
#[tauri::command]
pub async fn get_older_messages(
    state: State<'_, AppState>,
    id: String,
    before: i64,
    limit: Option<u32>,
) -> CommandResult<MessagePage> {
    Ok(state.app().await.older_messages(&id, before, limit).await?)
}

/// The whole text of a message a page showed in part (a long tool result).
#[tauri::command]
pub async fn get_message_text(
    state: State<'_, AppState>,
    id: String,
    message_id: String,
) -> CommandResult<String> {
    Ok(state.app().await.message_text(&id, &message_id).await?)
}

/// What a tool card shows beyond a result's text (images, audio, links, structured content).
#[tauri::command]
pub async fn get_tool_result_view(
    state: State<'_, AppState>,
    id: String,
    message_id: String,
    call_id: String,
) -> CommandResult<switchboard_core::mcp::results::ResultView> {
    Ok(state
        .app()
        .await
        .tool_result_view(&id, &message_id, &call_id)
        .await?)
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
        .app()
        .await
        .set_conversation_model(&id, provider.as_deref(), model.as_deref())
        .await?)
}

/// Deletes a question and everything that answered it; refused while the conversation answers.
/// Resolves with the ids of the messages deleted.
#[tauri::command]
pub async fn delete_turn(
    state: State<'_, AppState>,
    id: String,
    message_id: String,
) -> CommandResult<Vec<String>> {
    Ok(state.app().await.delete_turn(&id, &message_id).await?)
}

/// Shows branch `position` (from 0) where `message_id` is the first message shown; refused
/// while the conversation answers.
#[tauri::command]
pub async fn switch_branch(
    state: State<'_, AppState>,
    id: String,
    message_id: String,
    position: i64,
) -> CommandResult<switchboard_core::store::SwitchedBranch> {
    Ok(state
        .app()
        .await
        .switch_branch(&id, &message_id, position)
        .await?)
}

/// Shows message `message_id` (a search hit), switching to the branch that holds it; returns
/// its number. Refused while the conversation answers.
#[tauri::command]
pub async fn reveal_message(
    state: State<'_, AppState>,
    id: String,
    message_id: String,
) -> CommandResult<i64> {
    Ok(state.app().await.reveal_message(&id, &message_id).await?)
}
