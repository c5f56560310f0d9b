//! Provider commands. A key arrives as a `SecretString` and goes straight to the keychain;
//! no command ever returns one.

use secrecy::SecretString;
use switchboard_core::app::{ConnectionReport, LocalServer, NewProvider};
use switchboard_core::provider_config::{
    Preset, Provider, ProviderKind, ProviderKindInfo, PRESETS,
};
use switchboard_core::providers::ModelInfo;
use tauri::State;

use super::error::CommandResult;
use crate::state::AppState;

#[tauri::command]
pub fn list_provider_kinds() -> Vec<ProviderKindInfo> {
    ProviderKind::ALL.iter().map(|k| k.info()).collect()
}

#[tauri::command]
pub fn list_provider_presets() -> &'static [Preset] {
    PRESETS
}

/// Resolves with a report even when the connection failed; rejects only when there is nothing
/// to test.
#[tauri::command]
pub async fn test_provider(
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<ConnectionReport> {
    Ok(state.app().await.test_provider(&name).await?)
}

#[tauri::command]
pub async fn list_models(
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<Vec<ModelInfo>> {
    Ok(state.app().await.list_models(&name).await?)
}

#[tauri::command]
pub async fn detect_local_providers(state: State<'_, AppState>) -> CommandResult<Vec<LocalServer>> {
    Ok(state.app().await.detect_local_providers().await)
}

#[tauri::command]
pub async fn list_providers(state: State<'_, AppState>) -> CommandResult<Vec<Provider>> {
    Ok(state.app().await.list_providers().await?)
}

#[tauri::command]
pub async fn add_provider(
    state: State<'_, AppState>,
    provider: NewProvider,
) -> CommandResult<Provider> {
    Ok(state.app().await.add_provider(provider).await?)
}

#[tauri::command]
pub async fn update_provider(
    state: State<'_, AppState>,
    name: String,
    base_url: Option<String>,
    default_model: Option<String>,
) -> CommandResult<Provider> {
    Ok(state
        .app()
        .await
        .update_provider(&name, base_url.as_deref(), default_model.as_deref())
        .await?)
}

#[tauri::command]
pub async fn set_provider_key(
    state: State<'_, AppState>,
    name: String,
    api_key: SecretString,
) -> CommandResult<Provider> {
    Ok(state.app().await.set_provider_key(&name, api_key).await?)
}

#[tauri::command]
pub async fn delete_provider_key(
    state: State<'_, AppState>,
    name: String,
) -> CommandResult<Provider> {
    Ok(state.app().await.delete_provider_key(&name).await?)
}

#[tauri::command]
pub async fn remove_provider(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    Ok(state.app().await.remove_provider(&name).await?)
}

#[tauri::command]
pub async fn get_model_window(
    state: State<'_, AppState>,
    provider: String,
    model: String,
) -> CommandResult<Option<switchboard_core::store::ModelWindow>> {
    Ok(state.app().await.model_window(&provider, &model).await?)
}

#[tauri::command]
pub async fn set_model_window(
    state: State<'_, AppState>,
    provider: String,
    model: String,
    tokens: Option<u64>,
) -> CommandResult<Option<switchboard_core::store::ModelWindow>> {
    Ok(state
        .app()
        .await
        .set_model_window(&provider, &model, tokens)
        .await?)
}
