//! The command line is a terminal, not a canvas: a model's answer printed by `switchboard chat`
//! cannot send the terminal escape sequences (retitle it, clear it, move the cursor) or hide
//! text with a carriage return or a bidi override; with `--json` the same text arrives exact.

use std::sync::Arc;

use serde_json::Value;
use switchboard_core::App;

use super::scripted::{app_with_model, chat, sse, stop};

/// What the hostile model says: a new window title, a cleared screen, a line rewritten by a
/// carriage return and a file name reversed by a bidi override.
const HOSTILE: &str =
    "Done.\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[1A\rrm -rf ~ \u{202e}fdp.exe\u{9b}31m\u{e0041}";

async fn app_answering(home: &std::path::Path, text: &'static str) -> Arc<App> {
    let (app, _model) = app_with_model(
        home,
        Box::new(move |_, _| {
            let delta = serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]});
            sse(&[delta, stop("stop")])
        }),
    )
    .await;
    app
}

#[tokio::test]
async fn model_text_cannot_send_escape_sequences_to_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let app = app_answering(home.path(), HOSTILE).await;
    let shown = chat(&app, &[], "hello").await;
    let hidden: Vec<char> = shown
        .chars()
        .filter(|&c| switchboard_core::text::is_hidden(c))
        .collect();
    assert!(
        hidden.is_empty(),
        "the terminal was sent {hidden:?} in {shown:?}"
    );
    // Each character is still there to read, as an escape.
    assert_eq!(
        shown.trim_end(),
        "Done.\\u001b]0;owned\\u0007\\u001b[2J\\u001b[1A\\u000drm -rf ~ \\u202efdp.exe\\u009b31m\\udb40\\udc41"
    );
}

#[tokio::test]
async fn model_text_in_json_lines_is_escaped_yet_parses_to_the_exact_text() {
    let home = tempfile::tempdir().unwrap();
    let app = app_answering(home.path(), HOSTILE).await;
    let lines = chat(&app, &["--json"], "hello").await;
    assert!(
        !lines.chars().any(switchboard_core::text::is_hidden),
        "{lines:?}"
    );
    let saved: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "message_saved" && e["message"]["role"] == "assistant")
        .collect();
    assert_eq!(saved.last().unwrap()["message"]["content"], HOSTILE);
}
