//! A long conversation on a heavy day (issue 55): about 3 MB of history against a model whose
//! window is 32,768 tokens. The oldest turns are summarised by the model (one request that asks
//! for a summary), the summary is kept and read by the model in its system prompt in their
//! place, the question is answered, and nothing is deleted: every message stays in the
//! database. The next question reads the same summary without asking for another. When
//! summarising fails, the oldest turns are left out instead and the conversation says so.

use serde_json::Value;
use switchboard_core::agent::Decision;
use switchboard_core::events::{RunEvent, StopReason};
use switchboard_core::store::{NewMessage, Role};

use crate::scripted::{app_with_reading_model, body_of, one_turn, saying};

const WINDOW: u64 = 32_768;

/// A model that summarises when asked to (or fails to, with `fail_summary`), and otherwise says
/// whether it was given a summary.
fn model(fail_summary: bool) -> crate::scripted::Reply {
    Box::new(move |_, _, request| {
        let body = body_of(request);
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let text = saying;
        if system.starts_with("You summarise the earlier part of a conversation") {
            if fail_summary {
                return (
                    503,
                    Vec::new(),
                    "{\"error\": {\"message\": \"down\"}}".to_owned(),
                );
            }
            return text("SUMMARY: the person asked about the weather, many times.");
        }
        if system.contains("SUMMARY: the person asked") {
            return text("Answered with the summary.");
        }
        text("Answered without a summary.")
    })
}

/// An app whose conversation holds 300 turns of about 10 KB each (3 MB), for a model with a
/// window of 32,768 tokens.
async fn long_conversation(fail_summary: bool) -> crate::scripted::Scene {
    let home = tempfile::tempdir().unwrap();
    let (app, server) = app_with_reading_model(home.path(), model(fail_summary)).await;
    app.providers()
        .set_window("Hostile", "m", Some(WINDOW))
        .await
        .unwrap();
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let store = app.store().unwrap();
    for turn in 0..300 {
        let question = format!(
            "Question {turn}: what is the weather? {}",
            "w".repeat(5_000)
        );
        store
            .append_message(conversation.clone(), NewMessage::text(Role::User, question))
            .await
            .unwrap();
        let answer = format!("Answer {turn}: sunny. {}", "s".repeat(5_000));
        store
            .append_message(
                conversation.clone(),
                NewMessage::text(Role::Assistant, answer),
            )
            .await
            .unwrap();
    }
    (app, server, conversation, home)
}

fn the_answer(events: &[RunEvent]) -> String {
    assert!(
        matches!(
            events.last(),
            Some(RunEvent::RunFinished {
                reason: StopReason::Completed,
                ..
            })
        ),
        "{:?}",
        events.last()
    );
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The bodies of the requests the model was sent.
fn bodies(server: &crate::scripted::Server) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter_map(|r| r.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()))
        .collect()
}

#[tokio::test]
async fn a_3_mb_conversation_is_summarised_into_a_32k_window_and_nothing_is_deleted() {
    let (app, server, conversation, _home) = long_conversation(false).await;
    let events = one_turn(&app, &conversation, "And today?", Decision::Deny).await;
    assert_eq!(the_answer(&events), "Answered with the summary.");
    assert!(events.iter().any(
        |e| matches!(e, RunEvent::Status { text } if text == "Summarising earlier messages…")
    ));
    let fitted = events
        .iter()
        .find_map(|e| match e {
            RunEvent::HistoryFitted {
                summary, message, ..
            } => Some((summary.clone(), message.clone())),
            _ => None,
        })
        .expect("the history was fitted");
    let summary = fitted.0.expect("and summarised");
    // What the model was given, counted before it was sent: under the window, with what filled it.
    let used = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ContextUsed { used } => Some(used.clone()),
            _ => None,
        })
        .expect("the request was measured");
    assert_eq!(used.window, Some(WINDOW));
    assert!(used.tokens < WINDOW * 3 / 4, "{used:?}");
    assert!(used.system > 0 && used.history > 0, "{used:?}");
    assert_eq!(used.counted_by, "estimate");
    assert_eq!(
        app.store()
            .unwrap()
            .context_use(conversation.clone())
            .await
            .unwrap(),
        Some(used),
        "kept for the header"
    );
    assert!(
        fitted
            .1
            .contains("earlier messages were summarised to fit the model's window of 32768 tokens"),
        "{}",
        fitted.1
    );
    let sent = bodies(&server);
    assert_eq!(
        sent.len(),
        4,
        "three requests to summarise (the most one summary takes), then the answer"
    );
    // Each request to summarise fits the window too, and carries the summary so far.
    for body in &sent {
        assert!(body.len() < 32_768 * 4, "a request of {} bytes", body.len());
    }
    assert!(!sent[0].contains("A summary of what came before these messages"));
    for body in &sent[1..3] {
        assert!(body.contains("A summary of what came before these messages:\\nSUMMARY:"));
    }
    let answer = &sent[3];
    assert!(answer.contains("And today?"), "the newest question is kept");
    assert!(
        answer.contains("Answer 299: sunny"),
        "the newest turns are kept"
    );
    assert!(!answer.contains("Question 0:"), "the oldest are not sent");

    // Nothing deleted; the summary kept.
    let store = app.store().unwrap();
    let messages = store.list_messages(conversation.clone()).await.unwrap();
    assert_eq!(messages.len(), 602);
    let summaries = store.summaries(conversation.clone()).await.unwrap();
    assert_eq!(summaries, std::slice::from_ref(&summary));
    // 3 MB is more than three windows: the oldest messages are named as left out.
    assert!(
        summary.text.starts_with('[')
            && summary.text.contains(
                " older messages are left out here: too many to summarise at once.]\nSUMMARY:"
            ),
        "{}",
        summary.text
    );
    assert!(
        summary.left_out > 0 && summary.summarised > 0,
        "{summary:?}"
    );

    // The next question reads the same summary, and no new one is asked for.
    let again = one_turn(&app, &conversation, "And tomorrow?", Decision::Deny).await;
    assert_eq!(the_answer(&again), "Answered with the summary.");
    assert_eq!(bodies(&server).len(), 5);
    assert_eq!(
        store.summaries(conversation.clone()).await.unwrap().len(),
        1
    );

    // An export keeps every message and the summary.
    let cli = |args: &[&str]| {
        crate::support::run_cli(
            std::sync::Arc::clone(&app),
            args.iter().map(|a| (*a).to_owned()).collect(),
        )
    };
    let (ran, json) = cli(&["conversations", "export", &conversation, "--format", "json"]).await;
    ran.unwrap();
    let file: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(file["messages"].as_array().unwrap().len(), 604);
    assert_eq!(file["summaries"].as_array().unwrap().len(), 1);
    assert_eq!(file["summaries"][0]["through"], summary.through_message_id);
    // Imported again, the summary comes with the messages: the model reads the same one.
    let imported = store
        .import_conversation(serde_json::from_value(file).unwrap())
        .await
        .unwrap();
    let brought = store.summaries(imported.id.clone()).await.unwrap();
    let kept = store.list_messages(imported.id.clone()).await.unwrap();
    assert_eq!(brought.len(), 1);
    assert_eq!(brought[0].text, summary.text);
    let at = kept
        .iter()
        .position(|m| m.id == brought[0].through_message_id)
        .expect("the summary names an imported message");
    let was = messages
        .iter()
        .position(|m| m.id == summary.through_message_id)
        .unwrap();
    assert_eq!(at, was, "through the same message");
    let (ran, markdown) = cli(&["conversations", "export", &conversation]).await;
    ran.unwrap();
    assert!(markdown.contains("Question 0: what is the weather?"));
    assert!(markdown.contains(
        "<summary>Earlier messages summarised by m (to fit the model's window)</summary>"
    ));

    // Summarising on the command line: every turn before the newest, after the summary.
    let (ran, said) = cli(&["conversations", "compact", &conversation, "--json"]).await;
    ran.unwrap();
    let said: Value = serde_json::from_str(&said).unwrap();
    assert!(said["summary"]["text"]
        .as_str()
        .unwrap()
        .starts_with("SUMMARY:"));
    let summaries = store.summaries(conversation.clone()).await.unwrap();
    assert_eq!(summaries.len(), 2);
    let messages = store.list_messages(conversation.clone()).await.unwrap();
    assert_eq!(
        summaries[1].through_message_id,
        messages[messages.len() - 3].id,
        "through the answer before the newest question"
    );
    assert!(bodies(&server)[5].contains("A summary of what came before these messages"));
    let (ran, said) = cli(&["conversations", "compact", &conversation]).await;
    ran.unwrap();
    assert!(said.starts_with("Nothing to summarise"), "{said}");
}

#[tokio::test]
async fn when_summarising_fails_the_oldest_turns_are_left_out_and_the_conversation_says_so() {
    let (app, server, conversation, _home) = long_conversation(true).await;
    let events = one_turn(&app, &conversation, "And today?", Decision::Deny).await;
    assert_eq!(the_answer(&events), "Answered without a summary.");
    let message = events
        .iter()
        .find_map(|e| match e {
            RunEvent::HistoryFitted {
                summary: None,
                message,
                ..
            } => Some(message.clone()),
            _ => None,
        })
        .expect("said");
    assert!(
        message.contains("earlier messages are left out of what the model reads, to fit its window of 32768 tokens: summarising them failed"),
        "{message}"
    );
    let last = bodies(&server).pop().unwrap();
    assert!(last.len() < 32_768 * 4, "{} bytes", last.len());
    assert!(last.contains("earlier messages are left out here"));
    let store = app.store().unwrap();
    assert_eq!(
        store
            .list_messages(conversation.clone())
            .await
            .unwrap()
            .len(),
        602
    );
    assert!(store.summaries(conversation).await.unwrap().is_empty());
}
