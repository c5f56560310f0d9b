//! A provider that repeats a tool call's id within one answer (some OpenAI-compatible servers
//! send `call_0` for every call) does not get two calls approved, answered or recorded as one:
//! each is made distinct before approval, and each gets its own decision and result.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::scripted::{app_with_model, chat, sse, stop};

fn call(index: u32, id: &str, path: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
        "index": index, "id": id, "type": "function",
        "function": {"name": "files__delete", "arguments": json!({"path": path}).to_string()}
    }]}}]})
}

#[tokio::test]
async fn repeated_call_ids_get_their_own_decision_and_result() {
    let home = tempfile::tempdir().unwrap();
    let turn = Arc::new(AtomicUsize::new(0));
    let (app, model) = app_with_model(
        home.path(),
        Box::new(move |_, _| {
            if turn.fetch_add(1, Ordering::SeqCst) == 0 {
                sse(&[
                    call(0, "call_0", "/tmp/a"),
                    call(1, "call_0", "/home/me"),
                    stop("tool_calls"),
                ])
            } else {
                let text = json!({"choices": [{"index": 0, "delta": {"content": "Done."}}]});
                sse(&[text, stop("stop")])
            }
        }),
    )
    .await;
    let events: Vec<Value> = chat(&app, &["--json"], "Delete them")
        .await
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let proposed: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_call_proposed")
        .map(|e| e["call"]["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        proposed,
        ["call_0", "call_0_2"],
        "each call is proposed on its own"
    );
    let results: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["type"] == "message_saved" && e["message"]["role"] == "tool")
        .map(|e| {
            (
                e["message"]["tool_call_id"].as_str().unwrap(),
                e["message"]["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!([results[0].0, results[1].0], ["call_0", "call_0_2"]);
    // The answer replayed to the model names both calls, each with its own result.
    let replay = model.requests().pop().unwrap();
    let body: Value =
        serde_json::from_str(&replay[replay.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let asked: Vec<&str> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let answered: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(asked, ["call_0", "call_0_2"]);
    assert_eq!(answered, ["call_0", "call_0_2"]);
}
