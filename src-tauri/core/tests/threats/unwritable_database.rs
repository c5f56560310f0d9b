//! A database that stops taking writes mid-answer (the disk full, the file made read-only) does
//! not make the app show what it cannot keep: the answer stops at the last text it saved,
//! nothing after it reaches the window, and the conversation says plainly why.

use std::sync::Arc;

use serde_json::json;
use switchboard_core::agent::{Decision, FixedApprover};
use switchboard_core::engine::TurnRequest;
use switchboard_core::events::RunEvent;
use switchboard_core::store::MessageStatus;

use super::scripted::{app_with_model, sse, stop};
use crate::support::Seen;

fn text(t: &str) -> serde_json::Value {
    json!({"choices": [{"index": 0, "delta": {"content": t}}]})
}

#[tokio::test]
async fn disk_full_mid_answer_stops_at_the_saved_text_and_says_why() {
    let home = tempfile::tempdir().unwrap();
    let big = "x".repeat(400_000);
    let (app, _model) = app_with_model(
        home.path(),
        Box::new(move |_, _| sse(&[text("Hello. "), text(&big), text("The end."), stop("stop")])),
    )
    .await;
    let conversation = app.core().create_conversation(None).await.unwrap().id;
    // The disk fills up: the database may not grow past the pages it has now.
    app.core()
        .store()
        .unwrap()
        .call(|conn| {
            let pages: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
            conn.pragma_update(None, "max_page_count", pages)?;
            Ok(())
        })
        .await
        .unwrap();
    let seen = Arc::new(Seen::default());
    app.start_turn_answered_by(
        TurnRequest {
            conversation_id: conversation.clone(),
            text: Some("Write a lot".into()),
            ..TurnRequest::default()
        },
        seen.clone(),
        Arc::new(FixedApprover(Decision::Deny)),
    )
    .await
    .unwrap();
    seen.wait_for("run_finished", 1).await;
    let events = seen.0.lock().unwrap().clone();
    let shown: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let said = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .expect("the conversation says why");
    assert!(
        said.starts_with("Switchboard cannot write to its database: the disk is full."),
        "{said}"
    );
    assert!(
        said.contains("nothing after that point was shown"),
        "{said}"
    );
    let detail = app.core().get_conversation(&conversation).await.unwrap();
    let answer = detail.messages.last().unwrap();
    let saved = answer.content.clone().unwrap_or_default();
    assert_eq!(shown, saved, "what was shown is exactly what was saved");
    assert!(
        saved.len() < 400_000,
        "the text that could not be saved was not shown"
    );
    assert_ne!(answer.status, MessageStatus::Complete);
    assert!(matches!(events.last(), Some(RunEvent::RunFinished { .. })));
}
