//! Chat commands: send a message (or retry it, or run one failed call again) and stream the
//! run's events over a `Channel`, stop a run, answer an approval, and the per-conversation
//! tool switches and standing approvals. The run itself is the core's; the shell only starts
//! it on its own task and keeps its cancel token.

use switchboard_core::agent::{self, ApprovalAnswer, RunServices};
use switchboard_core::engine::{CallRef, ConversationTool, TurnRequest};
use switchboard_core::events::RunEvent;
use switchboard_core::settings::Settings;
use switchboard_core::store::{StandingApproval, ToolToggle};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

use super::error::{CommandError, CommandResult};
use crate::state::AppState;

fn settings(state: &AppState) -> Settings {
    Settings::from_entries(&state.settings.entries().into_iter().collect())
}

/// Starts a turn (`text` `null` retries from the conversation as it is) and returns its run id;
/// every event of the run arrives on `on_event`, the last being `run_finished`.
#[tauri::command]
pub async fn send_message(
    app: AppHandle,
    state: State<'_, AppState>,
    conversation_id: String,
    text: Option<String>,
    on_event: Channel<RunEvent>,
) -> CommandResult<String> {
    let request = TurnRequest {
        conversation_id,
        text,
        ..TurnRequest::default()
    };
    start_run(app, &state, request, on_event).await
}

/// Runs a failed call again (its card's Retry), through the same approvals, and lets the model
/// go on when it works; returns the run id like `send_message`.
#[tauri::command]
pub async fn retry_tool_call(
    app: AppHandle,
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
    start_run(app, &state, request, on_event).await
}

/// Prepares a turn, then runs it on its own task with the events going to `on_event`.
async fn start_run(
    app: AppHandle,
    state: &AppState,
    request: TurnRequest,
    on_event: Channel<RunEvent>,
) -> CommandResult<String> {
    let core = state.core().await;
    let host = state.mcp_host().await;
    let setup = core.prepare_turn(host, request, &settings(state)).await?;
    let run_id = setup.run_id.clone();
    let cancel = state.runs.start(&run_id, &setup.conversation_id)?;
    let id = run_id.clone();
    tauri::async_runtime::spawn(async move {
        let state = app.state::<AppState>();
        let core = state.core().await;
        let sink = move |event: RunEvent| {
            if let Err(e) = on_event.send(event) {
                tracing::debug!(error = %e, "the window stopped listening to a run");
            }
        };
        if let Ok(store) = core.store() {
            let services = RunServices {
                store,
                tools: state.mcp_host().await,
                approver: &state.approvals,
                sink: &sink,
            };
            agent::run(setup, services, cancel).await;
        }
        state.runs.finish(&id);
    });
    Ok(run_id)
}

/// Stops a run: its model stream and every running tool call. Stopping a run that already
/// ended does nothing.
#[tauri::command]
pub async fn stop_run(state: State<'_, AppState>, run_id: String) -> CommandResult<()> {
    state.runs.stop(&run_id);
    Ok(())
}

/// Answers an approval request. Only the calls it asked about can be answered; the loop checks.
#[tauri::command]
pub async fn answer_approval(
    state: State<'_, AppState>,
    request_id: String,
    answers: Vec<ApprovalAnswer>,
) -> CommandResult<()> {
    if state.approvals.answer(&request_id, answers) {
        Ok(())
    } else {
        Err(CommandError {
            kind: "not_found",
            message: "That approval is no longer waiting (the run ended or was answered).".into(),
            field: None,
        })
    }
}

#[tauri::command]
pub async fn list_conversation_tools(
    state: State<'_, AppState>,
    conversation_id: String,
) -> CommandResult<Vec<ConversationTool>> {
    let core = state.core().await;
    let host = state.mcp_host().await;
    Ok(core.conversation_catalogue(host, &conversation_id).await?.1)
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
        .core()
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
        .core()
        .await
        .set_default_tools_from(&conversation_id)
        .await?)
}

#[tauri::command]
pub async fn set_auto_approve(
    state: State<'_, AppState>,
    conversation_id: String,
    on: bool,
) -> CommandResult<()> {
    Ok(state
        .core()
        .await
        .set_auto_approve(&conversation_id, on)
        .await?)
}

#[tauri::command]
pub async fn list_tool_approvals(
    state: State<'_, AppState>,
) -> CommandResult<Vec<StandingApproval>> {
    Ok(state.core().await.tool_approvals().await?)
}

#[tauri::command]
pub async fn revoke_tool_approval(
    state: State<'_, AppState>,
    server: String,
    tool: String,
    conversation_id: Option<String>,
) -> CommandResult<()> {
    Ok(state
        .core()
        .await
        .revoke_tool_approval(&server, &tool, conversation_id.as_deref())
        .await?)
}
