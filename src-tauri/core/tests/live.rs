//! Live checks against the real provider APIs. Each runs only when its key is in the
//! environment (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, `OPENROUTER_API_KEY`)
//! and prints `SKIPPED` otherwise; CI sets none of them, so no test there calls a cloud API.
//! `SWITCHBOARD_LIVE_<API>_MODEL` overrides the small model each one uses.

use std::time::Duration;

use secrecy::SecretString;
use serde_json::json;
use switchboard_core::provider_config::ProviderKind;
use switchboard_core::providers::{
    connect, ChatMessage, ChatRequest, FinishReason, HttpOptions, Part, ToolChoice, ToolSpec,
};
use tokio_util::sync::CancellationToken;

struct Live {
    kind: ProviderKind,
    key_var: &'static str,
    model: &'static str,
}

const LIVE: [Live; 4] = [
    Live {
        kind: ProviderKind::Openai,
        key_var: "OPENAI_API_KEY",
        model: "gpt-4o-mini",
    },
    Live {
        kind: ProviderKind::Anthropic,
        key_var: "ANTHROPIC_API_KEY",
        model: "claude-3-5-haiku-latest",
    },
    Live {
        kind: ProviderKind::Gemini,
        key_var: "GEMINI_API_KEY",
        model: "gemini-2.0-flash",
    },
    Live {
        kind: ProviderKind::Openrouter,
        key_var: "OPENROUTER_API_KEY",
        model: "openai/gpt-4o-mini",
    },
];

async fn check(live: &Live) {
    let Some(key) = std::env::var(live.key_var)
        .ok()
        .filter(|k| !k.trim().is_empty())
    else {
        eprintln!("SKIPPED live {:?}: {} is not set", live.kind, live.key_var);
        return;
    };
    let model_var = format!(
        "SWITCHBOARD_LIVE_{}_MODEL",
        live.kind.as_str().to_ascii_uppercase()
    );
    let model = std::env::var(&model_var).unwrap_or_else(|_| live.model.to_owned());
    let options = HttpOptions {
        read_timeout: Duration::from_secs(60),
        ..HttpOptions::default()
    };
    let client = connect::client(
        live.kind,
        live.kind.info().default_base_url,
        Some(SecretString::from(key)),
        options,
    )
    .unwrap();

    let models = client.list_models().await.unwrap();
    assert!(!models.is_empty(), "{:?} lists no models", live.kind);

    let request = ChatRequest {
        model,
        system: Some("Use the tool you are given.".into()),
        messages: vec![ChatMessage::User {
            parts: vec![Part::Text("What time is it in Paris?".into())],
        }],
        tools: vec![ToolSpec {
            name: "clock__now".into(),
            description: "The current time in an IANA time zone.".into(),
            parameters: json!({"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}),
        }],
        tool_choice: ToolChoice::Required,
        temperature: Some(0.0),
        max_tokens: Some(200),
        ..ChatRequest::default()
    };
    let done = client
        .complete(request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.finish, Some(FinishReason::ToolCalls), "{done:?}");
    let call = &done.tool_calls[0];
    assert_eq!(call.name, "clock__now");
    assert!(
        call.arguments.as_ref().unwrap()["timezone"].is_string(),
        "{call:?}"
    );
    eprintln!("live {:?}: ok ({} models listed)", live.kind, models.len());
}

#[tokio::test]
async fn live_openai() {
    check(&LIVE[0]).await;
}

#[tokio::test]
async fn live_anthropic() {
    check(&LIVE[1]).await;
}

#[tokio::test]
async fn live_gemini() {
    check(&LIVE[2]).await;
}

#[tokio::test]
async fn live_openrouter() {
    check(&LIVE[3]).await;
}
