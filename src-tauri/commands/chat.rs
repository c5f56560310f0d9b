//! Chat commands: send a message (or retry it, or run one failed call again) and stream the
//! run's events over a `Channel`, attach to a run under way, stop a run, answer an approval,
//! and the per-conversation tool switches and standing approvals. Runs are `App`'s:
//! it starts them on their own tasks, keeps their tokens and awaits them at quit.

use std::sync::Arc;
use switchboard_core::agent::ApprovalAnswer;
use switchboard_core::app::{CallRef, ConversationTool, TurnRequest};
use switchboard_core::app::{CompareRequest, ComparedModel};
use switchboard_core::attachments::AttachmentRef;

use switchboard_core::events::{EventSink, RunEvent};
use switchboard_core::store::{StandingApproval, ToolToggle};
use tauri::ipc::Channel;
use tauri::{AppHandle, State, Window};

use super::error::CommandResult;
use crate::bridge::{channel_sink, NativeConfirm};
use crate::state::AppState;

/// Starts a turn (`text` `null` retries from the conversation as it is), carrying the kept files
/// `attachments` names, and returns its run id; every event of the run arrives on `on_event`,
/// the last being `run_finished`.
#[tauri::command]
pub async fn send_message(
    window: Window,
    state: State<'_, AppState>,
    conversation_id: String,
    text: Option<String>,
    attachments: Option<Vec<AttachmentRef>>,
    on_event: Channel<RunEvent>,
) -> CommandResult<String> {
    let request = TurnRequest {
        conversation_id,
        text,
        attachments: attachments.unwrap_or_default(),
        ..TurnRequest::default()
    };
    let sink = channel_sink(on_event, window.label());
    let app = state.app().await;
    // A new message is what the composer held; a retry is not.
    let handle = if request.text.is_some() {
        app.send_composed(request, sink).await?
    } else {
        app.start_turn(request, sink).await?
    };
    Ok(handle.run_id)
}

/// Runs a failed call again (its card's Retry), through the same approvals, and lets the model
/// go on when it works; returns the run id like `send_message`.
#[tauri::command]
pub async fn retry_tool_call(
    window: Window,
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
    call_id: String,
    on_event: Channel<RunEvent>,
) -> CommandResult<String> {
    let request = TurnRequest {
        conversation_id,
        retry_call: Some(CallRef {
            message_id,
            call_id,
        }),
        ..TurnRequest::default()
    };
    start(&state, request, channel_sink(on_event, window.label())).await
}

/// Asks two to four models the same question at once (each its own tool loop and approvals);
/// returns the comparison's run id. Every event arrives on `on_event`, those of each model's run
/// wrapped in `lane` with its model; `comparison_folded` says where the answers are kept, and
/// `run_finished` ends it. Stop with `stop_run`: the comparison's id stops all, a lane's one.
#[tauri::command]
pub async fn compare_models(
    window: Window,
    state: State<'_, AppState>,
    conversation_id: String,
    text: String,
    attachments: Option<Vec<AttachmentRef>>,
    models: Vec<ComparedModel>,
    on_event: Channel<RunEvent>,
) -> CommandResult<String> {
    let request = CompareRequest {
        conversation_id,
        text,
        attachments: attachments.unwrap_or_default(),
        models: models.into_iter().map(|m| (m.provider, m.model)).collect(),
        ..CompareRequest::default()
    };
    let sink = channel_sink(on_event, window.label());
    Ok(state
        .app()
        .await
        .compare_composed(request, sink)
        .await?
        .run_id)
}

/// Starts a turn with its events going to the window's channel; its run id.
async fn start(
    state: &AppState,
    request: TurnRequest,
    sink: Arc<dyn EventSink>,
) -> CommandResult<String> {
    Ok(state.app().await.start_turn(request, sink).await?.run_id)
}

/// A window that shows a conversation (again: after a reload, or coming back to it) is given
/// the run under way there, if any: everything it sent so far, then its live events on
/// `on_event`. Returns the run id, or `null` when nothing runs there.
#[tauri::command]
pub async fn attach_run(
    window: Window,
    state: State<'_, AppState>,
    conversation_id: String,
    on_event: Channel<RunEvent>,
) -> CommandResult<Option<String>> {
    let sink = channel_sink(on_event, window.label());
    Ok(state.app().await.attach(&conversation_id, sink))
}

/// Stops a run: its model stream and every running tool call. Stopping a run that already
/// ended does nothing.
#[tauri::command]
pub async fn stop_run(state: State<'_, AppState>, run_id: String) -> CommandResult<()> {
    state.app().await.stop_run(&run_id);
    Ok(())
}

/// Answers an approval request. Only the calls it asked about can be answered; the loop checks.
/// "For this conversation" and "always" are confirmed in a native dialog first.
#[tauri::command]
pub async fn answer_approval(
    app: AppHandle,
    state: State<'_, AppState>,
    request_id: String,
    answers: Vec<ApprovalAnswer>,
) -> CommandResult<()> {
    let confirm = NativeConfirm(app);
    Ok(state
        .app()
        .await
        .answer_approval(&request_id, answers, &confirm)
        .await?)
}

#[tauri::command]
pub async fn list_conversation_tools(
    state: State<'_, AppState>,
    conversation_id: String,
) -> CommandResult<Vec<ConversationTool>> {
    let app = state.app().await;
    Ok(app.conversation_catalogue(&conversation_id).await?.1)
}

/// Switches a server (`tool` `null`) or one tool on or off for a conversation.
#[tauri::command]
pub async fn set_conversation_tool(
    state: State<'_, AppState>,
    conversation_id: String,
    server: String,
    tool: Option<String>,
    enabled: bool,
) -> CommandResult<()> {
    let toggle = ToolToggle {
        server,
        tool,
        enabled,
    };
    Ok(state
        .app()
        .await
        .set_conversation_tool(&conversation_id, toggle)
        .await?)
}

/// Makes this conversation's tool switches the ones new conversations start with.
#[tauri::command]
pub async fn set_default_tools(
    state: State<'_, AppState>,
    conversation_id: String,
) -> CommandResult<()> {
    Ok(state
        .app()
        .await
        .set_default_tools_from(&conversation_id)
        .await?)
}

/// Turning auto-approve on is confirmed in a native dialog first; off is not.
#[tauri::command]
pub async fn set_auto_approve(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    on: bool,
) -> CommandResult<()> {
    let confirm = NativeConfirm(app);
    Ok(state
        .app()
        .await
        .set_auto_approve(&conversation_id, on, &confirm)
        .await?)
}

#[tauri::command]
pub async fn list_tool_approvals(
    state: State<'_, AppState>,
) -> CommandResult<Vec<StandingApproval>> {
    Ok(state.app().await.tool_approvals().await?)
}

/// Adding a standing approval from Settings is confirmed in a native dialog first.
#[tauri::command]
pub async fn allow_tool_always(
    app: AppHandle,
    state: State<'_, AppState>,
    server: String,
    tool: String,
) -> CommandResult<()> {
    let confirm = NativeConfirm(app);
    Ok(state
        .app()
        .await
        .allow_running_tool_always(&server, &tool, &confirm)
        .await?)
}

#[tauri::command]
pub async fn revoke_tool_approval(
    state: State<'_, AppState>,
    server: String,
    tool: String,
    conversation_id: Option<String>,
) -> CommandResult<()> {
    Ok(state
        .app()
        .await
        .revoke_tool_approval(&server, &tool, conversation_id.as_deref())
        .await?)
}

/// Sends `text` with `attachments` (the files the message had that the person kept, and any
/// added) in place of the message of yours `message_id` and goes on from there; what followed
/// it is kept as another branch. Returns the run id like `send_message`.
#[tauri::command]
pub async fn edit_message(
    window: Window,
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
    text: String,
    attachments: Vec<AttachmentRef>,
    on_event: Channel<RunEvent>,
) -> CommandResult<String> {
    let request = TurnRequest {
        conversation_id,
        text: Some(text),
        attachments,
        branch_from: Some(message_id),
        ..TurnRequest::default()
    };
    start(&state, request, channel_sink(on_event, window.label())).await
}

/// Asks again for the answer that starts at `message_id` (the first message after a message of
/// yours); the old answer is kept as another branch. Returns the run id like `send_message`.
#[tauri::command]
pub async fn regenerate(
    window: Window,
    state: State<'_, AppState>,
    conversation_id: String,
    message_id: String,
    on_event: Channel<RunEvent>,
) -> CommandResult<String> {
    let request = TurnRequest {
        conversation_id,
        branch_from: Some(message_id),
        ..TurnRequest::default()
    };
    start(&state, request, channel_sink(on_event, window.label())).await
}
