//! A provider's address cannot redirect its key elsewhere: the provider clients follow a
//! redirect only on the origin (scheme, host, port) they were given, with every header, and fail
//! one to another origin with a clear error before anything is sent there. reqwest alone would
//! follow it and drop only `Authorization`, so `x-api-key` (Anthropic) and `x-goog-api-key`
//! (Gemini) would reach the other host.

use std::sync::Arc;

use secrecy::SecretString;
use switchboard_core::provider_config::ProviderKind;
use switchboard_core::providers::{
    connect, ChatMessage, ChatRequest, HttpOptions, Part, Provider, ProviderError,
};
use tokio_util::sync::CancellationToken;

use super::scripted::{server, Server};

const KEY: &str = "sk-threat-test-key-0123456789";

/// A server that sends every request on to `to` (same path) with `status`.
async fn redirecting_to(to: &str, status: u16) -> Server {
    let to = to.to_owned();
    server(Box::new(move |_, path| {
        (
            status,
            vec![("location".into(), format!("{to}{path}"))],
            String::new(),
        )
    }))
    .await
}

/// A server that would answer anything: it must never be asked.
async fn elsewhere() -> Server {
    server(Box::new(|_, _| (200, Vec::new(), "{}".into()))).await
}

fn quick() -> HttpOptions {
    HttpOptions {
        connect_timeout: std::time::Duration::from_secs(5),
        read_timeout: std::time::Duration::from_secs(10),
        // Retries on: a refused redirect must not be retried (it would change nothing).
        max_retries: 2,
        retry_base_delay: std::time::Duration::from_millis(10),
    }
}

fn provider(kind: ProviderKind, base: &str) -> Arc<dyn Provider> {
    connect::client(kind, base, Some(SecretString::from(KEY)), quick()).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        messages: vec![ChatMessage::User {
            parts: vec![Part::Text("hello".into())],
        }],
        ..ChatRequest::default()
    }
}

/// The base URL a kind's client is given on `origin` (the path its requests go under).
fn base(kind: ProviderKind, origin: &str) -> String {
    match kind {
        ProviderKind::Anthropic | ProviderKind::Ollama => origin.to_owned(),
        ProviderKind::Gemini => format!("{origin}/v1beta"),
        _ => format!("{origin}/v1"),
    }
}

fn assert_refused(result: Result<(), ProviderError>, to: &str, what: &str) {
    match result {
        Err(ProviderError::Redirected { to: got }) => assert_eq!(got, to, "{what}"),
        other => panic!("{what}: expected a refused redirect, got {other:?}"),
    }
}

/// The model list (a GET) and a whole answer (a POST) both fail as refused redirects to `to`.
async fn refuses_models_and_answers(client: &dyn Provider, to: &str, what: &str) {
    assert_refused(
        client.list_models().await.map(|_| ()),
        to,
        &format!("{what}: list_models"),
    );
    let answer = client.complete(request(), CancellationToken::new()).await;
    assert_refused(answer.map(|_| ()), to, &format!("{what}: complete"));
}

const KEYED: [ProviderKind; 5] = [
    ProviderKind::Openai,
    ProviderKind::Openrouter,
    ProviderKind::Anthropic,
    ProviderKind::Gemini,
    ProviderKind::Ollama,
];

#[tokio::test]
async fn provider_key_does_not_follow_redirect_to_another_host() {
    let other = elsewhere().await;
    let provider_host = redirecting_to(&other.origin, 307).await;
    for kind in KEYED {
        let client = provider(kind, &base(kind, &provider_host.origin));
        let what = format!("{kind:?}");
        refuses_models_and_answers(&*client, &other.origin, &what).await;
        let mut stream = client.stream(request(), CancellationToken::new());
        let first = futures_util::StreamExt::next(&mut stream)
            .await
            .expect("an event");
        assert_refused(first.map(|_| ()), &other.origin, &format!("{what} stream"));
    }
    assert!(
        other.requests().is_empty(),
        "the other host was sent: {:?}",
        other.requests()
    );
    // One request per call: the refusal is not retried.
    assert_eq!(provider_host.requests().len(), KEYED.len() * 3);
}

#[tokio::test]
async fn provider_key_does_not_follow_any_kind_of_redirect_to_another_host() {
    let other = elsewhere().await;
    for status in [301, 302, 303, 307, 308] {
        let provider_host = redirecting_to(&other.origin, status).await;
        let client = provider(ProviderKind::Anthropic, &provider_host.origin);
        refuses_models_and_answers(&*client, &other.origin, &format!("HTTP {status}")).await;
    }
    assert!(
        other.requests().is_empty(),
        "the other host was sent: {:?}",
        other.requests()
    );
}

#[tokio::test]
async fn provider_key_does_not_follow_redirect_to_another_port_or_scheme() {
    let other_port = elsewhere().await;
    let provider_host = redirecting_to(&other_port.origin, 307).await;
    let client = provider(
        ProviderKind::Gemini,
        &base(ProviderKind::Gemini, &provider_host.origin),
    );
    assert_refused(
        client.list_models().await.map(|_| ()),
        &other_port.origin,
        "another port",
    );
    assert!(other_port.requests().is_empty());

    // The same host and port over https is another origin too (nothing listens for TLS there).
    let port = provider_host.origin.rsplit(':').next().unwrap().to_owned();
    let https = format!("https://127.0.0.1:{port}");
    let to_https = redirecting_to(&https, 308).await;
    let client = provider(
        ProviderKind::Openai,
        &base(ProviderKind::Openai, &to_https.origin),
    );
    assert_refused(
        client.list_models().await.map(|_| ()),
        &https,
        "another scheme",
    );
}

#[tokio::test]
async fn a_refused_redirect_says_where_it_pointed_and_that_the_key_was_not_sent() {
    let other = elsewhere().await;
    let provider_host = redirecting_to(&other.origin, 302).await;
    let client = provider(
        ProviderKind::Openai,
        &base(ProviderKind::Openai, &provider_host.origin),
    );
    let error = client.list_models().await.unwrap_err();
    assert_eq!(
        error.kind(),
        switchboard_core::providers::ProviderFailure::Redirected
    );
    assert!(!error.is_retryable());
    let message = error.to_string();
    assert!(message.contains(&other.origin), "{message}");
    assert!(message.contains("API key was not sent"), "{message}");
}

#[tokio::test]
async fn a_same_origin_redirect_is_followed_with_the_key() {
    // /v1/… moves to /v2/… on the same server, which answers there.
    let moved = server(Box::new(|method, path| {
        if let Some(rest) = path.strip_prefix("/v1") {
            return (307, vec![("location".into(), format!("/v2{rest}"))], String::new());
        }
        match (method, path) {
            ("GET", "/v2/models") => (200, vec![("content-type".into(), "application/json".into())], r#"{"data":[{"id":"gpt-moved"}]}"#.into()),
            ("POST", "/v2/chat/completions") => (
                200,
                vec![("content-type".into(), "text/event-stream".into())],
                concat!(
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"moved fine\"}}]}\n\n",
                    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                    "data: [DONE]\n\n"
                )
                .into(),
            ),
            _ => (404, Vec::new(), "{}".into()),
        }
    }))
    .await;
    let client = provider(ProviderKind::Openai, &format!("{}/v1", moved.origin));
    let models = client.list_models().await.unwrap();
    assert_eq!(
        models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        ["gpt-moved"]
    );
    let answer = client
        .complete(request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(answer.text, "moved fine");
    let requests = moved.requests();
    let followed: Vec<&String> = requests.iter().filter(|h| h.contains(" /v2/")).collect();
    assert_eq!(followed.len(), 2, "{requests:?}");
    for head in followed {
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("authorization: bearer {KEY}").to_ascii_lowercase()),
            "the key went with a same-origin redirect: {head}"
        );
    }
}
