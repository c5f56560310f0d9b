//! A heavy day's result against a small window (issue 55): a tool that answers 10 MB, with a
//! model whose window is 8 192 tokens, reaches the model as its share of the window — its start
//! and its end, with what was left out said — and the run goes on to its answer. (That the
//! whole stays kept, in a file beside the database, is the store's test.) And when the window
//! is not known until the provider refuses a request over it: the window is learned, the
//! request fitted and asked again, once, and the run goes on.

use std::time::Duration;

use switchboard_core::agent::Decision;
use switchboard_core::events::{RunEvent, StopReason};

use crate::scripted::{app_with_model, calling, calls_once, one_turn, saying, sse, stop};
use crate::support;

/// Starts our fault server as the app's server "fault" and waits until it runs.
async fn fault_server(app: &switchboard_core::App) {
    let python = support::peers().join(".venv/bin/python");
    let script = support::peers().join("fault_server.py");
    app.host()
        .spawn(
            "fault",
            support::stdio_launch(
                python.to_str().unwrap(),
                &[script.to_str().unwrap()],
                Duration::from_secs(30),
            ),
        )
        .await;
    support::server_running(app.host(), "fault").await;
}

/// Starts the fault server, asks "Make it big" in a new conversation (its call allowed), and
/// returns the run's events once it has gone on to its answer.
async fn big_turn(app: &std::sync::Arc<switchboard_core::App>) -> Vec<RunEvent> {
    fault_server(app).await;
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let events = one_turn(app, &conversation, "Make it big", Decision::AllowOnce).await;
    assert!(
        matches!(
            events.last(),
            Some(RunEvent::RunFinished {
                reason: StopReason::Completed,
                ..
            })
        ),
        "the run went on to its answer: {events:?}"
    );
    events
}

#[tokio::test]
async fn a_window_learned_from_a_refusal_fits_the_request_and_asks_again_once() {
    if !support::mcp_peers_installed("a window learned from a refusal") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    // Calls `big` (1 MB), then refuses the request that carries its result as over 8 192
    // tokens, then answers.
    let turn = std::sync::atomic::AtomicUsize::new(0);
    let (app, model) = app_with_model(
        home.path(),
        Box::new(move |_, _| match turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => {
                let call = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
                    "index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "fault__big", "arguments": "{\"megabytes\": 1}"}
                }]}}]});
                sse(&[call, stop("tool_calls")])
            }
            1 => (
                400,
                vec![("content-type".into(), "application/json".into())],
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 26214 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#.to_owned(),
            ),
            _ => {
                let text = serde_json::json!({"choices": [{"index": 0, "delta": {"content": "Done."}}]});
                sse(&[text, stop("stop")])
            }
        }),
    )
    .await;
    let events = big_turn(&app).await;
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::Status { text } if text.starts_with("The model takes 8192 tokens: fitting the request to it"))),
        "the person is told: {events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, RunEvent::Error { .. })),
        "no error is shown: {events:?}"
    );
    let requests = model.requests();
    assert_eq!(
        requests.len(),
        3,
        "the call, the refused request, the fitted one"
    );
    assert!(
        requests[1].len() > 100_000,
        "the refused request carried 100 000 characters"
    );
    assert!(
        requests[2].len() < 8192 * 3,
        "the fitted request was {} bytes",
        requests[2].len()
    );
    let window = app
        .providers()
        .window("Hostile", "m")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(window.tokens, 8192);
    assert_eq!(
        window.said_by,
        switchboard_core::store::WindowSource::Learned
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_10_mb_result_reaches_an_8k_model_as_its_share_and_the_run_goes_on() {
    if !support::mcp_peers_installed("a 10 MB result against an 8k window") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, model) =
        app_with_model(home.path(), calls_once("fault__big", "{\"megabytes\": 10}")).await;
    app.providers()
        .set_window("Hostile", "m", Some(8192))
        .await
        .unwrap();
    let events = big_turn(&app).await;
    // The card shows what the model got: the cut, said.
    let shown = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolFinished { content, .. } => Some(content.clone()),
            _ => None,
        })
        .expect("the call finished");
    assert!(
        shown.starts_with("xxxx"),
        "{}",
        shown.chars().take(600).collect::<String>()
    );
    // What the model was sent after the call: the result's share of 8 192 tokens.
    let requests = model.requests();
    assert_eq!(
        requests.len(),
        2,
        "a request for the call, one for the answer"
    );
    let after = &requests[1];
    assert!(
        after.len() < 8192 * 3,
        "the second request was {} bytes",
        after.len()
    );
    assert!(
        after.contains("of this result's 10485760 characters were left out here"),
        "the model is told what was left out"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_model_reads_the_part_of_a_kept_result_it_was_not_given_without_asking_anyone() {
    if !support::mcp_peers_installed("reading a cut result") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    // Calls `big` (4 MB), then reads 100 characters from its middle, then answers.
    let turn = std::sync::atomic::AtomicUsize::new(0);
    let (app, model) = app_with_model(
        home.path(),
        Box::new(
            move |_, _| match turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                0 => calling("call_fault__big", "fault__big", r#"{"megabytes": 4}"#),
                1 => calling(
                    "call_read",
                    "switchboard__read_result",
                    r#"{"call_id": "call_fault__big", "offset": 2000000, "length": 100}"#,
                ),
                _ => saying("Done."),
            },
        ),
    )
    .await;
    app.providers()
        .set_window("Hostile", "m", Some(8192))
        .await
        .unwrap();
    let events = big_turn(&app).await;
    let requests = model.requests();
    assert_eq!(requests.len(), 3, "the call, the read, the answer");
    assert!(
        !requests[0].contains("switchboard__read_result"),
        "offered only once a result was cut"
    );
    assert!(
        requests[1]
            .contains(r#"read_result with call_id \"call_fault__big\" reads them from offset"#),
        "the note names the call"
    );
    assert!(requests[1].contains("\"name\":\"switchboard__read_result\""));
    assert!(
        requests[2].contains(&format!(
            "Characters 2000000 to 2000100 of the result's 4194304:\\n{}\\n[2194204 more characters after this; read on from offset 2000100]",
            "x".repeat(100)
        )),
        "{}",
        &requests[2][requests[2].len().saturating_sub(800)..]
    );
    // The person was asked about `big` only.
    let asked: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ApprovalRequired { calls, .. } => Some(
                calls
                    .iter()
                    .map(|c| c.tool.clone())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(asked, ["big"]);
    app.shutdown(Duration::from_secs(5)).await;
}
