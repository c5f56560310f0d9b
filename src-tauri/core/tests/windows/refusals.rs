//! A provider's refusal is read for what it says (issue 55): a request over the model's window
//! names the window and the request's size in the conversation and in `--json`, and the window
//! is kept for that model (`switchboard provider window` says whose word it is; the person's
//! own wins); a request with more tools than the provider takes (OpenAI takes 128) says so,
//! and never that the conversation is too long.

use serde_json::Value;

use crate::scripted::app_with_model;
use crate::support::run_cli;

const OVERFLOW: &str = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9034 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;

const TOO_MANY_TOOLS: &str = r#"{"error":{"message":"Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 2009 instead.","type":"invalid_request_error","param":"tools","code":"array_above_max_length"}}"#;

fn refusing(body: &'static str) -> crate::scripted::Answer {
    Box::new(move |_, _| {
        (
            400,
            vec![("content-type".into(), "application/json".into())],
            body.to_owned(),
        )
    })
}

async fn cli(
    app: &std::sync::Arc<switchboard_core::App>,
    args: &[&str],
) -> (Result<(), String>, String) {
    run_cli(
        std::sync::Arc::clone(app),
        args.iter().map(|a| (*a).to_owned()).collect(),
    )
    .await
}

/// The `error` event of a `chat --json` that ended with one.
fn error_event(lines: &str) -> Value {
    lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "error")
        .unwrap_or_else(|| panic!("no error event in {lines}"))
}

#[tokio::test]
async fn an_overflow_names_the_window_and_the_window_is_kept_for_the_model() {
    let home = tempfile::tempdir().unwrap();
    let (app, _model) = app_with_model(home.path(), refusing(OVERFLOW)).await;

    let (said, _) = cli(&app, &["provider", "window", "Hostile", "m"]).await;
    said.unwrap();
    let (ran, lines) = cli(&app, &["chat", "--provider", "Hostile", "--json", "hello"]).await;
    assert!(ran.is_err(), "the run ended with the refusal");
    let error = error_event(&lines);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "The conversation is too long for this model (it takes 8192 tokens; this request was 9034)"
        ),
        "{message}"
    );

    // Learned from the refusal, and said whose word it is.
    let (ran, shown) = cli(&app, &["provider", "window", "Hostile", "m", "--json"]).await;
    ran.unwrap();
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        shown,
        serde_json::json!({"provider": "Hostile", "model": "m", "tokens": 8192, "said_by": "learned"})
    );
    let (ran, listed) = cli(&app, &["provider", "windows", "--json"]).await;
    ran.unwrap();
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    // The person's word wins; forgetting it forgets what was learned too (it may be wrong).
    let (ran, shown) = cli(&app, &["provider", "window", "Hostile", "m", "32768"]).await;
    ran.unwrap();
    assert_eq!(shown.trim(), "“m” of “Hostile”: 32768 tokens (said by you)");
    let (ran, _) = cli(&app, &["provider", "window", "Hostile", "m", "12"]).await;
    assert!(ran.unwrap_err().contains("not one a model has"));
    let (ran, shown) = cli(&app, &["provider", "window", "Hostile", "m", "--forget"]).await;
    ran.unwrap();
    assert!(shown.contains("is not known yet"), "{shown}");
    // A model nobody has said anything of is known from the table, or said to be unknown.
    let (ran, shown) = cli(&app, &["provider", "window", "Hostile", "gpt-4o-mini"]).await;
    ran.unwrap();
    assert!(
        shown.contains("128000 tokens (said by Switchboard's table"),
        "{shown}"
    );
    let (ran, shown) = cli(&app, &["provider", "window", "Hostile", "my-finetune"]).await;
    ran.unwrap();
    assert!(shown.contains("is not known yet"), "{shown}");
}

#[tokio::test]
async fn too_many_tools_is_said_as_such_not_as_a_long_conversation() {
    let home = tempfile::tempdir().unwrap();
    let (app, _model) = app_with_model(home.path(), refusing(TOO_MANY_TOOLS)).await;
    let (ran, lines) = cli(&app, &["chat", "--provider", "Hostile", "--json", "hello"]).await;
    assert!(ran.is_err(), "the run ended with the refusal");
    let message = error_event(&lines)["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with("The provider takes at most 128 tools in one request"),
        "{message}"
    );
    assert!(!message.contains("too long for this model"), "{message}");
    // Nothing was learned of the window.
    let (ran, shown) = cli(&app, &["provider", "windows"]).await;
    ran.unwrap();
    assert_eq!(shown.trim(), "No model's window is recorded yet.");
}

#[tokio::test]
async fn ollamas_models_have_the_window_their_api_show_says_and_it_is_sent_as_num_ctx() {
    let home = tempfile::tempdir().unwrap();
    // Ollama's own answers: `/api/tags`, then `/api/show` for each model (trimmed), then a chat.
    let model = crate::scripted::reading_server(Box::new(|_, path, request| {
        let json = |body: Value| {
            (
                200,
                vec![("content-type".into(), "application/json".into())],
                body.to_string(),
            )
        };
        match path {
            "/api/tags" => json(serde_json::json!({"models": [{"name": "llama3.2:3b"}, {"name": "qwen3:8b"}]})),
            "/api/show" if request.contains("qwen3") => json(serde_json::json!({
                "parameters": "num_ctx                        40960",
                "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}
            })),
            "/api/show" => json(serde_json::json!({
                "parameters": "stop                           \"<|eot_id|>\"",
                "model_info": {"general.architecture": "llama", "llama.context_length": 131072}
            })),
            _ => (
                200,
                vec![("content-type".into(), "application/x-ndjson".into())],
                "{\"model\":\"llama3.2:3b\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi.\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":12,\"eval_count\":2}\n".to_owned(),
            ),
        }
    }))
    .await;
    let (app, _secrets) = crate::scripted::memory_app(home.path()).await;
    crate::support::add_provider(
        &app,
        "Local",
        "ollama",
        &model.origin,
        Some("llama3.2:3b"),
        None,
    )
    .await;
    let (ran, _) = cli(&app, &["provider", "models", "Local", "--json"]).await;
    ran.unwrap();
    let (ran, listed) = cli(&app, &["provider", "windows", "--json"]).await;
    ran.unwrap();
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(
        listed,
        serde_json::json!([
            {"provider": "Local", "model": "llama3.2:3b", "tokens": 16384, "said_by": "provider"},
            {"provider": "Local", "model": "qwen3:8b", "tokens": 40960, "said_by": "provider"}
        ])
    );
    // A chat loads the model with the window planned for it, not Ollama's small default.
    let (ran, _) = cli(&app, &["chat", "--provider", "Local", "--json", "hello"]).await;
    ran.unwrap();
    let chat = model
        .requests()
        .into_iter()
        .find(|r| r.starts_with("POST /api/chat"))
        .expect("a chat request");
    let body: Value = serde_json::from_str(chat.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["options"]["num_ctx"], 16384);
}
