//! Every provider client against a real third-party mock of the provider APIs,
//! `@copilotkit/aimock` (installed into `tests/peers/` by `scripts/bootstrap.sh test`): streamed
//! text, parallel tool calls, tool results sent back in a form the mock's parser of each API
//! accepts, the headers keys travel in (read back from the mock's request journal), model lists
//! through the app's "Test connection", and the mock's chaos flags (429, 500, disconnect,
//! malformed JSON).
//!
//! Without the mock installed these tests fail, unless `SWITCHBOARD_SKIP_PEERS=1` says to skip
//! them (each then says it was skipped); the test command never sets it.

use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use serde_json::{json, Value};
use switchboard_core::provider_config::ProviderKind;
use switchboard_core::providers::{
    connect, ChatMessage, ChatRequest, Completion, FinishReason, HttpOptions, Part, Provider,
    ProviderError, ProviderFailure, ToolCall, ToolSpec,
};
use switchboard_core::secrets::MemoryStore;
use switchboard_core::{App, AppConfig, AppPaths};
use tokio_util::sync::CancellationToken;

mod support;

#[path = "threats/scripted.rs"]
#[allow(dead_code)]
mod scripted;

use support::Aimock;

fn aimock(test: &str, extra: &[&str]) -> Option<Aimock> {
    support::aimock(test, "providers.json", extra)
}

/// A client of `kind` pointed at `mock`, with the key `key`.
trait Clients {
    fn client(&self, kind: ProviderKind, key: &str) -> Arc<dyn Provider>;
}

impl Clients for Aimock {
    /// A client of `kind` pointed at this mock, with the key `key`.
    fn client(&self, kind: ProviderKind, key: &str) -> Arc<dyn Provider> {
        let base = match kind {
            ProviderKind::Openai | ProviderKind::OpenaiCompatible | ProviderKind::Openrouter => {
                format!("{}/v1", self.root)
            }
            ProviderKind::Gemini => format!("{}/v1beta", self.root),
            ProviderKind::Anthropic | ProviderKind::Ollama => self.root.clone(),
        };
        connect::client(kind, &base, Some(SecretString::from(key)), options()).unwrap()
    }
}

fn options() -> HttpOptions {
    HttpOptions {
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(10),
        max_retries: 2,
        retry_base_delay: Duration::from_millis(20),
    }
}

/// The APIs aimock speaks, with the model name each is asked for.
const APIS: [(ProviderKind, &str); 5] = [
    (ProviderKind::Openai, "gpt-4o"),
    (ProviderKind::Openrouter, "openai/gpt-4o"),
    (ProviderKind::Anthropic, "claude-sonnet-4-5"),
    (ProviderKind::Gemini, "gemini-2.0-flash"),
    (ProviderKind::Ollama, "llama3.2"),
];

fn user(text: &str) -> ChatMessage {
    ChatMessage::User {
        parts: vec![Part::Text(text.into())],
    }
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "get_weather".into(),
            description: "Current weather for a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}),
        },
        ToolSpec {
            name: "get_time".into(),
            description: "Local time in a time zone".into(),
            parameters: json!({"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}),
        },
    ]
}

fn request(model: &str, messages: Vec<ChatMessage>) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        system: Some("You are terse.".into()),
        messages,
        tools: tools(),
        max_tokens: Some(256),
        ..ChatRequest::default()
    }
}

async fn complete(
    client: &dyn Provider,
    request: ChatRequest,
) -> Result<Completion, ProviderError> {
    client.complete(request, CancellationToken::new()).await
}

#[tokio::test]
async fn every_api_streams_a_text_answer_with_its_unicode_intact() {
    let Some(mock) = aimock("every_api_streams_a_text_answer", &[]) else {
        return;
    };
    for (kind, model) in APIS {
        let client = mock.client(kind, "sk-aimock");
        let done = complete(&*client, request(model, vec![user("Say hello")]))
            .await
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(
            done.text, "Hello there, friend! Ünïcödé survives: 漢字, emoji 🚀, and “quotes”.",
            "{kind:?}"
        );
        assert_eq!(done.finish, Some(FinishReason::Stop), "{kind:?}");
        assert!(done.tool_calls.is_empty(), "{kind:?}");
    }
}

#[tokio::test]
async fn parallel_tool_calls_arrive_whole_and_in_the_models_order() {
    let Some(mock) = aimock("parallel_tool_calls", &[]) else {
        return;
    };
    for (kind, model) in APIS {
        let client = mock.client(kind, "sk-aimock");
        let done = complete(
            &*client,
            request(
                model,
                vec![user("What is the weather and the time in Paris?")],
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let calls: Vec<(&str, &Value)> = done
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_ref().expect("valid JSON")))
            .collect();
        assert_eq!(
            calls,
            [
                ("get_weather", &json!({"city": "Paris", "unit": "celsius"})),
                ("get_time", &json!({"timezone": "Europe/Paris"})),
            ],
            "{kind:?}"
        );
        assert!(
            done.tool_calls.iter().all(|c| !c.id.is_empty()),
            "{kind:?}: every call has an id"
        );
        assert_ne!(done.tool_calls[0].id, done.tool_calls[1].id, "{kind:?}");
        // Ollama's done line says "stop" even after tool calls; the client reports tool calls.
        assert_eq!(done.finish, Some(FinishReason::ToolCalls), "{kind:?}");
    }
}

#[tokio::test]
async fn tool_results_go_back_in_a_form_each_api_accepts() {
    let Some(mock) = aimock("tool_results_go_back", &[]) else {
        return;
    };
    for (kind, model) in APIS {
        let client = mock.client(kind, "sk-aimock");
        let question = user("What is the weather and the time in Paris?");
        let first = complete(&*client, request(model, vec![question.clone()]))
            .await
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let results = first
            .tool_calls
            .iter()
            .map(|c: &ToolCall| ChatMessage::Tool {
                tool_call_id: c.id.clone(),
                name: c.name.clone(),
                content: if c.name == "get_weather" {
                    "18 °C, sunny"
                } else {
                    "14:05"
                }
                .into(),
                is_error: false,
                images: Vec::new(),
            });
        let mut history = vec![
            question,
            ChatMessage::Assistant {
                text: None,
                tool_calls: first.tool_calls.clone(),
            },
        ];
        history.extend(results);
        let second = complete(&*client, request(model, history))
            .await
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(
            second.text, "It is 18 °C and sunny in Paris; the local time is 14:05.",
            "{kind:?}: the mock found the tool result in our request"
        );
    }
}

#[tokio::test]
async fn keys_travel_only_in_the_header_each_api_expects() {
    let Some(mock) = aimock("keys_travel_only_in_headers", &[]) else {
        return;
    };
    for (kind, model) in APIS {
        let key = format!("sk-secret-{}", kind.as_str());
        let client = mock.client(kind, &key);
        complete(&*client, request(model, vec![user("Say hello")]))
            .await
            .unwrap();
    }
    let journal = mock.journal().await;
    assert_eq!(journal.len(), APIS.len());
    for (entry, (kind, _)) in journal.iter().zip(APIS) {
        let key = format!("sk-secret-{}", kind.as_str());
        let headers = &entry["headers"];
        // aimock redacts credential headers in its journal, so their presence is what shows.
        let header = match kind {
            ProviderKind::Anthropic => "x-api-key",
            ProviderKind::Gemini => "x-goog-api-key",
            _ => "authorization",
        };
        assert!(headers[header].is_string(), "{kind:?}: {headers}");
        for other in ["authorization", "x-api-key", "x-goog-api-key"] {
            if other != header {
                assert!(headers[other].is_null(), "{kind:?}: no {other} header");
            }
        }
        assert!(
            !entry.to_string().contains(&key),
            "{kind:?}: the key is not in the path, query or body"
        );
        match kind {
            ProviderKind::Anthropic => assert!(headers["anthropic-version"].is_string()),
            ProviderKind::Openrouter => {
                assert_eq!(headers["x-openrouter-title"], json!("Switchboard"));
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_tool_the_api_would_refuse_is_left_out_and_named_in_a_warning() {
    let Some(mock) = aimock("refused_tool", &[]) else {
        return;
    };
    for (kind, model) in APIS {
        let client = mock.client(kind, "sk-aimock");
        let mut req = request(model, vec![user("Say hello")]);
        req.tools.push(ToolSpec {
            name: "files: read it!".into(),
            description: "A name no API accepts".into(),
            parameters: json!({"type": "object"}),
        });
        let done = complete(&*client, req)
            .await
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(done.warnings.len(), 1, "{kind:?}: {:?}", done.warnings);
        assert_eq!(done.warnings[0].tool, "files: read it!");
        assert!(
            done.text.starts_with("Hello there"),
            "{kind:?}: the answer still came"
        );
    }
    // What each API received: the two good tools, not the refused one.
    for entry in mock.journal().await {
        let body = entry["body"].to_string();
        assert!(body.contains("get_weather"), "{body}");
        assert!(
            !body.contains("files: read it!"),
            "{}: {body}",
            entry["path"]
        );
    }
}

#[tokio::test]
async fn a_429_is_retried_twice_then_reported_with_its_retry_after() {
    let Some(mock) = aimock("a_429_is_retried", &["--chaos-ratelimit", "1"]) else {
        return;
    };
    let client = mock.client(ProviderKind::Openai, "sk-aimock");
    let err = complete(&*client, request("gpt-4o", vec![user("Say hello")]))
        .await
        .unwrap_err();
    match err {
        ProviderError::RateLimited { retry_after, .. } => {
            assert_eq!(retry_after, Some(Duration::from_secs(1)));
        }
        other => panic!("expected rate limited, got {other:?}"),
    }
    assert_eq!(mock.journal().await.len(), 3, "one try and two retries");
}

#[tokio::test]
async fn a_dropped_request_and_a_cut_connection_are_retried_then_reported() {
    for (flag, expect) in [
        ("--chaos-drop", ProviderFailure::Server),
        ("--chaos-disconnect", ProviderFailure::Network),
    ] {
        let Some(mock) = aimock("chaos_drop_and_disconnect", &[flag, "1"]) else {
            return;
        };
        for (kind, model) in [
            (ProviderKind::Anthropic, "claude-sonnet-4-5"),
            (ProviderKind::Ollama, "llama3.2"),
        ] {
            let client = mock.client(kind, "sk-aimock");
            let err = complete(&*client, request(model, vec![user("Say hello")]))
                .await
                .unwrap_err();
            assert_eq!(err.kind(), expect, "{flag} {kind:?}: {err}");
        }
        let attempts = mock.journal().await.len();
        // The journal records requests it handled; a destroyed connection may not be kept.
        assert!(
            attempts == 6 || (flag == "--chaos-disconnect" && attempts <= 6),
            "{flag}: {attempts}"
        );
    }
}

#[tokio::test]
async fn malformed_json_from_the_provider_is_a_clear_error_not_a_crash() {
    let Some(mock) = aimock("malformed_json", &["--chaos-malformed", "1"]) else {
        return;
    };
    for (kind, model) in APIS {
        let client = mock.client(kind, "sk-aimock");
        let outcome = complete(&*client, request(model, vec![user("Say hello")])).await;
        let err = outcome.expect_err(&format!("{kind:?}: a garbage body is not an answer"));
        assert_eq!(err.kind(), ProviderFailure::BadResponse, "{kind:?}: {err}");
    }
}

#[tokio::test]
async fn test_connection_lists_the_mocks_models_for_openai_compatible_and_ollama_kinds() {
    let Some(mock) = aimock("test_connection", &[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(AppConfig {
        http: options(),
        ..support::headless_config(
            AppPaths::under_home(dir.path().to_path_buf()),
            Arc::new(MemoryStore::new()),
        )
    })
    .await;
    for (name, kind, base) in [
        ("Studio", "openai_compatible", format!("{}/v1", mock.root)),
        ("Local", "ollama", mock.root.clone()),
    ] {
        support::add_provider(&app, name, kind, &base, None, None).await;
        let report = app.providers().test(name).await.unwrap();
        assert!(report.ok, "{name}: {report:?}");
        assert!(
            report.models.iter().any(|m| m.id == "gpt-4o"),
            "{name}: {:?}",
            report.models
        );
    }
}

/// Ollama is sent `num_ctx` for a window the person set, and none for the table's guess. (A
/// scripted server stands in for Ollama here: aimock's journal keeps a request without its
/// `options`.)
#[tokio::test]
async fn ollama_is_sent_the_window_the_person_set_as_num_ctx_never_a_guess() {
    let ollama = scripted::server(Box::new(|_, _| {
        (
            200,
            vec![("content-type".into(), "application/x-ndjson".into())],
            "{\"model\":\"llama3.2\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":true,\"done_reason\":\"stop\"}\n".to_owned(),
        )
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(AppConfig {
        http: options(),
        ..support::headless_config(
            AppPaths::under_home(dir.path().to_path_buf()),
            Arc::new(MemoryStore::new()),
        )
    })
    .await;
    support::add_provider(
        &app,
        "Local",
        "ollama",
        &ollama.origin,
        Some("llama3.2"),
        None,
    )
    .await;
    let chat = || {
        support::run_cli(
            Arc::clone(&app),
            ["chat", "--provider", "Local", "Say hello"]
                .map(str::to_owned)
                .to_vec(),
        )
    };
    // The table knows llama3.2's window (131 072): a guess is not loaded into memory.
    chat().await.0.unwrap();
    app.providers()
        .set_window("Local", "llama3.2", Some(16_384))
        .await
        .unwrap();
    chat().await.0.unwrap();
    let bodies: Vec<Value> = ollama
        .requests()
        .iter()
        .filter(|r| r.starts_with("POST /api/chat"))
        .map(|r| serde_json::from_str(r.split_once("\r\n\r\n").unwrap().1).unwrap())
        .collect();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[0]["options"]["num_ctx"].is_null(), "{}", bodies[0]);
    assert_eq!(bodies[1]["options"]["num_ctx"], 16_384, "{}", bodies[1]);
    app.shutdown(Duration::from_secs(5)).await;
}
