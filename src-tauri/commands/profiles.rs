//! Profiles (issue 18): list, create, edit, copy, delete, choose the default, export to and
//! import from a JSON file the person picks, and put one on a conversation.

use switchboard_core::app::ImportedProfile;
use switchboard_core::store::{
    export_file_name, Conversation, ExportFormat, Profile, ProfileFields,
};
use tauri::{AppHandle, State};

use super::error::CommandResult;
use crate::bridge::choose_file;
use crate::state::AppState;

const KIND: (&str, &str) = ("Switchboard profile (JSON)", "json");

#[tauri::command]
pub async fn list_profiles(state: State<'_, AppState>) -> CommandResult<Vec<Profile>> {
    Ok(state.app().await.list_profiles().await?)
}

#[tauri::command]
pub async fn create_profile(
    state: State<'_, AppState>,
    name: String,
    fields: ProfileFields,
) -> CommandResult<Profile> {
    Ok(state.app().await.create_profile(&name, fields).await?)
}

#[tauri::command]
pub async fn update_profile(
    state: State<'_, AppState>,
    id: String,
    name: String,
    fields: ProfileFields,
) -> CommandResult<Profile> {
    Ok(state.app().await.update_profile(&id, &name, fields).await?)
}

#[tauri::command]
pub async fn duplicate_profile(state: State<'_, AppState>, id: String) -> CommandResult<Profile> {
    Ok(state.app().await.duplicate_profile(&id).await?)
}

#[tauri::command]
pub async fn delete_profile(state: State<'_, AppState>, id: String) -> CommandResult<()> {
    Ok(state.app().await.delete_profile(&id).await?)
}

/// Makes a profile the one new conversations start from; `null`: none is.
#[tauri::command]
pub async fn set_default_profile(
    state: State<'_, AppState>,
    id: Option<String>,
) -> CommandResult<()> {
    Ok(state.app().await.set_default_profile(id.as_deref()).await?)
}

/// Asks where to save the profile's JSON and writes it; the path, or `null` when the person
/// closed the dialog.
#[tauri::command]
pub async fn export_profile(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
) -> CommandResult<Option<String>> {
    let switchboard = state.app().await;
    let profile = switchboard.profile(&id).await?;
    let name = export_file_name(&profile.name, ExportFormat::Json);
    let Some(path) = choose_file(&app, "Export the profile", Some(&name), KIND).await else {
        return Ok(None);
    };
    switchboard.write_profile(&profile.id, path.clone()).await?;
    Ok(Some(path.display().to_string()))
}

/// Asks for a profile's JSON file and keeps the profile; `null` when the dialog was closed.
#[tauri::command]
pub async fn import_profile(
    app: AppHandle,
    state: State<'_, AppState>,
) -> CommandResult<Option<ImportedProfile>> {
    let Some(path) = choose_file(&app, "Import a profile", None, KIND).await else {
        return Ok(None);
    };
    Ok(Some(state.app().await.import_profile_file(path).await?))
}

/// Puts a profile on a conversation (its prompt, model and tools from the next message);
/// `null`: it follows no profile and keeps what it has.
#[tauri::command]
pub async fn set_conversation_profile(
    state: State<'_, AppState>,
    conversation_id: String,
    profile_id: Option<String>,
) -> CommandResult<Conversation> {
    Ok(state
        .app()
        .await
        .set_conversation_profile(&conversation_id, profile_id.as_deref())
        .await?)
}
