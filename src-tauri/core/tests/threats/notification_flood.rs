//! A server's notifications cannot starve the loop or the window: a call whose server sends
//! 20 000 `notifications/progress` and 20 000 `notifications/message` before answering still
//! ends with its result, and the window hears its progress at most every 100 ms, not 20 000
//! times.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_core::agent::{Decision, FixedApprover};
use switchboard_core::engine::TurnRequest;
use switchboard_core::events::RunEvent;
use switchboard_core::mcp::host::ServerState;

use super::scripted::{app_with_model, sse, stop};
use crate::support::{self, peers, stdio_launch, Seen};

#[tokio::test]
async fn notification_flood_does_not_starve_the_loop_or_the_window() {
    if !support::mcp_peers_installed("notification_flood") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let turn = Arc::new(AtomicUsize::new(0));
    let (app, _model) = app_with_model(
        home.path(),
        Box::new(move |_, _| {
            if turn.fetch_add(1, Ordering::SeqCst) == 0 {
                let call = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
                    "index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "flood__echo", "arguments": "{\"text\": \"made it\"}"}
                }]}}]});
                sse(&[call, stop("tool_calls")])
            } else {
                let text = json!({"choices": [{"index": 0, "delta": {"content": "Done."}}]});
                sse(&[text, stop("stop")])
            }
        }),
    )
    .await;
    let python = peers().join(".venv/bin/python");
    let script = peers().join("raw_server.py");
    app.host()
        .spawn(
            "flood",
            stdio_launch(
                python.to_str().unwrap(),
                &[
                    script.to_str().unwrap(),
                    "--progress-flood",
                    "20000",
                    "--notify-flood",
                    "20000",
                ],
                Duration::from_secs(30),
            ),
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while !matches!(
        app.host().states().get("flood"),
        Some(ServerState::Running { .. })
    ) {
        assert!(Instant::now() < deadline, "{:?}", app.host().states());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let conversation = app.core().create_conversation(None).await.unwrap().id;
    let seen = Arc::new(Seen::default());
    app.start_turn_answered_by(
        TurnRequest {
            conversation_id: conversation,
            text: Some("Echo it".into()),
            ..TurnRequest::default()
        },
        seen.clone(),
        Arc::new(FixedApprover(Decision::AllowOnce)),
    )
    .await
    .unwrap();
    seen.wait_for("run_finished", 1).await;
    let events = seen.0.lock().unwrap().clone();
    let finished = events.iter().find_map(|e| match e {
        RunEvent::ToolFinished {
            content, is_error, ..
        } => Some((content.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(finished, Some(("made it".to_owned(), false)));
    let progress = events
        .iter()
        .filter(|e| matches!(e, RunEvent::ToolProgress { .. }))
        .count();
    assert!(progress >= 1, "the server's progress reached the window");
    assert!(
        progress < 200,
        "the window heard {progress} progress events for 20 000 notifications"
    );
    assert!(matches!(events.last(), Some(RunEvent::RunFinished { .. })));
    app.shutdown(Duration::from_secs(5)).await;
}
