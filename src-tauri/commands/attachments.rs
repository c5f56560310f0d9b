//! Files into a message (issue 17): the native picker, a pasted image, files dropped on the
//! window, and what the composer's "/" and "@" pickers take from running servers (prompts,
//! resources, the completion of their arguments). The webview never names a path: the picker
//! and the drop are Rust's, and a paste hands over bytes the page already has. The core keeps
//! and judges every file.

use base64::Engine as _;
use switchboard_core::app::DropEvent;
use switchboard_core::app::ToolSuggestion;
use switchboard_core::app::{OffersOf, PromptUse};
use switchboard_core::attachments::{Attached, Attachment, AttachmentRef};
use switchboard_core::mcp::features::Completing;
use switchboard_core::InvalidInput;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};

use super::error::CommandResult;
use crate::bridge::choose_files;
use crate::state::AppState;

/// Opens the native picker (several files at once) and keeps what the person chose; nothing
/// when they closed it.
#[tauri::command]
pub async fn choose_attachments(
    app: AppHandle,
    state: State<'_, AppState>,
) -> CommandResult<Attached> {
    let paths = choose_files(&app, "Attach files").await;
    Ok(state.app().await.keep_attachment_files(paths).await)
}

/// The person says the model the conversation uses takes images (after a send with an image
/// was refused for it); returns the model's name.
#[tauri::command]
pub async fn allow_model_images(
    state: State<'_, AppState>,
    conversation_id: String,
) -> CommandResult<String> {
    let app = state.app().await;
    Ok(app
        .allow_images_in(&conversation_id, &app.settings())
        .await?)
}

/// Whether `model` of `provider` is given images: the person's word, else what the
/// provider's model list says, else what its family is known to take.
#[tauri::command]
pub async fn model_images(
    state: State<'_, AppState>,
    provider: String,
    model: String,
) -> CommandResult<bool> {
    Ok(state
        .app()
        .await
        .model_media(&provider, &model)
        .await?
        .images
        .is_some())
}

/// The person says whether `model` of `provider` takes images (the composer's switch).
#[tauri::command]
pub async fn set_model_images(
    state: State<'_, AppState>,
    provider: String,
    model: String,
    takes: bool,
) -> CommandResult<()> {
    Ok(state
        .app()
        .await
        .set_model_takes_images(&provider, &model, Some(takes))
        .await?)
}

/// Keeps a pasted file, given as base64.
#[tauri::command]
pub async fn attach_pasted(
    state: State<'_, AppState>,
    name: String,
    data: String,
) -> CommandResult<Attachment> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|_| InvalidInput::new("attachments", "The pasted data could not be read."))
        .map_err(switchboard_core::CoreError::from)?;
    Ok(state.app().await.keep_attachment(name, bytes).await?)
}

/// The tools switched off in the conversation that fit the files `files` names (seed 002):
/// the composer offers to switch them on.
#[tauri::command]
pub async fn suggest_tools(
    state: State<'_, AppState>,
    conversation_id: String,
    files: Vec<AttachmentRef>,
) -> CommandResult<Vec<ToolSuggestion>> {
    let app = state.app().await;
    Ok(app.suggest_tools_for(&conversation_id, files).await?)
}

/// The window listens for files dragged over it and dropped on it; a later call replaces the
/// listener (a reloaded window).
#[tauri::command]
pub fn watch_dropped_files(state: State<'_, AppState>, on_drop: Channel<DropEvent>) {
    state.listen_for_drops(on_drop);
}

/// Every running server's resources, resource templates and prompts, for the pickers.
#[tauri::command]
pub async fn list_running_offers(state: State<'_, AppState>) -> CommandResult<Vec<OffersOf>> {
    Ok(state.app().await.running_offers().await)
}

/// Reads a resource of a running server and keeps its contents as files (named `name`, the
/// resource's listed name, when it is one).
#[tauri::command]
pub async fn attach_resource(
    state: State<'_, AppState>,
    server: String,
    uri: String,
    name: Option<String>,
) -> CommandResult<Attached> {
    Ok(state
        .app()
        .await
        .attach_resource(&server, &uri, name.as_deref())
        .await?)
}

/// A prompt of a running server, got with `arguments`, made ready for the composer.
#[tauri::command]
pub async fn use_prompt(
    state: State<'_, AppState>,
    server: String,
    prompt: String,
    arguments: serde_json::Map<String, serde_json::Value>,
) -> CommandResult<PromptUse> {
    Ok(state
        .app()
        .await
        .use_prompt(&server, &prompt, arguments)
        .await?)
}

/// What a running server suggests for an argument of a prompt (`prompt`) or of a resource
/// template (`template`), given what is typed of it and the arguments already chosen.
#[tauri::command]
pub async fn complete_argument(
    state: State<'_, AppState>,
    server: String,
    prompt: Option<String>,
    template: Option<String>,
    argument: String,
    value: String,
    context: std::collections::HashMap<String, String>,
) -> CommandResult<Vec<String>> {
    let completing = match (prompt, template) {
        (Some(prompt), _) => Completing::Prompt(prompt),
        (None, Some(template)) => Completing::Template(template),
        (None, None) => return Ok(Vec::new()),
    };
    Ok(state
        .app()
        .await
        .complete_argument(&server, completing, &argument, &value, context)
        .await?)
}
