//! A database that stops taking writes mid-answer (the disk full, the file made read-only) does
//! not make the app show what it cannot keep: the answer stops at the last text it saved,
//! nothing after it reaches the window, and the conversation says plainly why. The same for a
//! call: one whose start cannot be recorded does not run, one whose result cannot be saved does
//! not show it, and either way the run stops there instead of asking the model on.

use serde_json::json;
use switchboard_core::agent::Decision;
use switchboard_core::events::RunEvent;
use switchboard_core::store::MessageStatus;

use super::scripted::{app_with_model, calls_once, one_turn, raw_server, sse, stop};
use crate::support;

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
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    // The disk fills up: the database may not grow past the pages it has now.
    app.store()
        .unwrap()
        .call(|conn| {
            let pages: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
            conn.pragma_update(None, "max_page_count", pages)?;
            Ok(())
        })
        .await
        .unwrap();
    let events = one_turn(&app, &conversation, "Write a lot", Decision::Deny).await;
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
    let detail = app.conversations().get(&conversation).await.unwrap();
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

/// One turn in which the model calls `echo` on a running server, with `sql` (a trigger that
/// refuses some write) run on the database first: what the window heard, and how many times
/// the model was asked.
async fn turn_with_a_write_refused(sql: &'static str) -> (Vec<RunEvent>, usize) {
    let home = tempfile::tempdir().unwrap();
    let (app, model) = app_with_model(
        home.path(),
        calls_once("raw__echo", "{\"text\": \"the secret result\"}"),
    )
    .await;
    raw_server(&app, "raw", &[]).await;
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    app.store()
        .unwrap()
        .call(move |conn| Ok(conn.execute_batch(sql)?))
        .await
        .unwrap();
    let events = one_turn(&app, &conversation, "Echo it", Decision::AllowOnce).await;
    app.shutdown(std::time::Duration::from_secs(5)).await;
    (events, model.requests().len())
}

/// The run's end: it stopped on an error saying the database cannot be written.
fn stopped_on_the_database(events: &[RunEvent]) {
    let Some(RunEvent::RunFinished { reason, message }) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(
        serde_json::to_value(reason).unwrap(),
        json!("error"),
        "{message:?}"
    );
    let said = message.clone().unwrap_or_default();
    assert!(
        said.starts_with("Switchboard cannot write to its database:"),
        "{said}"
    );
    assert!(said.contains("The run stops here"), "{said}");
}

#[tokio::test]
async fn call_that_cannot_be_recorded_as_started_does_not_run_and_the_run_stops() {
    if !support::mcp_peers_installed("call_that_cannot_be_recorded") {
        return;
    }
    let (events, asked) = turn_with_a_write_refused(
        "CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.tool_runs \
         BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
    )
    .await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, RunEvent::ToolStarted { .. })),
        "the call ran"
    );
    let finished = events.iter().find_map(|e| match e {
        RunEvent::ToolFinished { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert!(
        finished
            .as_deref()
            .is_some_and(|c| c.contains("cannot write to its database")),
        "{finished:?}"
    );
    assert_eq!(asked, 1, "the model was asked on after the failed write");
    stopped_on_the_database(&events);
}

#[tokio::test]
async fn call_result_that_cannot_be_saved_is_not_shown_and_the_run_stops() {
    if !support::mcp_peers_installed("call_result_that_cannot_be_saved") {
        return;
    }
    let (events, asked) = turn_with_a_write_refused(
        "CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.messages WHEN NEW.role = 'tool' \
         BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
    )
    .await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::ToolStarted { .. })),
        "the call was recorded as started and ran"
    );
    assert!(
        !events.iter().any(|e| matches!(
            e,
            RunEvent::MessageSaved { message } if message.role == switchboard_core::store::Role::Tool
        )),
        "a tool message that could not be saved was shown"
    );
    let finished = events.iter().find_map(|e| match e {
        RunEvent::ToolFinished {
            content, is_error, ..
        } => Some((content.clone(), *is_error)),
        _ => None,
    });
    let (content, is_error) = finished.expect("the card ends");
    assert!(
        is_error && content.contains("cannot write to its database"),
        "{content}"
    );
    assert!(!content.contains("the secret result"), "{content}");
    assert_eq!(asked, 1, "the model was asked on after the failed write");
    stopped_on_the_database(&events);
}
