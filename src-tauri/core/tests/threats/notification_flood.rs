//! A server's notifications cannot starve the loop or the window: a call whose server sends
//! 20 000 `notifications/progress` and 20 000 `notifications/message` before answering still
//! ends with its result, and the window hears its progress at most every 100 ms, not 20 000
//! times.

use std::time::Duration;

use switchboard_core::agent::Decision;
use switchboard_core::events::RunEvent;

use super::scripted::{app_with_model, calls_once, one_turn, raw_server};
use crate::support;

#[tokio::test]
async fn notification_flood_does_not_starve_the_loop_or_the_window() {
    if !support::mcp_peers_installed("notification_flood") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, _model) = app_with_model(
        home.path(),
        calls_once("flood__echo", "{\"text\": \"made it\"}"),
    )
    .await;
    let flood = ["--progress-flood", "20000", "--notify-flood", "20000"];
    raw_server(&app, "flood", &flood).await;
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let events = one_turn(&app, &conversation, "Echo it", Decision::AllowOnce).await;
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
