//! A heavy day's result against a small window (issue 55): a tool that answers 10 MB, with a
//! model whose window is 8 192 tokens, reaches the model as its share of the window — its start
//! and its end, with what was left out said — and the run goes on to its answer. (That the
//! whole stays kept, in a file beside the database, is the store's test.)

use std::time::Duration;

use switchboard_core::agent::Decision;
use switchboard_core::events::{RunEvent, StopReason};

use crate::scripted::{app_with_model, calls_once, one_turn};
use crate::support;

#[tokio::test]
async fn a_10_mb_result_reaches_an_8k_model_as_its_share_and_the_run_goes_on() {
    if !support::mcp_peers_installed("a 10 MB result against an 8k window") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, model) =
        app_with_model(home.path(), calls_once("fault__big", "{\"megabytes\": 10}")).await;
    app.set_model_window("Hostile", "m", Some(8192))
        .await
        .unwrap();
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
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !matches!(
        app.host().states().get("fault"),
        Some(switchboard_core::mcp::host::ServerState::Running { .. })
    ) {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            app.host().states()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let conversation = app.create_conversation_with(None, "").await.unwrap().id;
    let events = one_turn(&app, &conversation, "Make it big", Decision::AllowOnce).await;

    assert!(
        matches!(
            events.last(),
            Some(RunEvent::RunFinished {
                reason: StopReason::Completed,
                ..
            })
        ),
        "the run went on to its answer: {:?}",
        events.last()
    );
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
