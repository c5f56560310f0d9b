//! The streaming provider clients against a scripted local HTTP server: each connection gets the
//! next scripted response, byte by byte as written here (chunked encoding, stalls, drops).

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use secrecy::SecretString;
use switchboard_core::providers::openai::OpenAiCompatible;
use switchboard_core::providers::{
    ChatMessage, ChatRequest, FinishReason, HttpOptions, Part, Provider, ProviderError,
    ProviderEvent,
};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

enum Step {
    /// A complete non-streaming response.
    Status(u16, &'static str, String),
    /// Starts a 200 SSE response with chunked encoding.
    Begin,
    /// One chunk of raw body bytes.
    Chunk(Vec<u8>),
    Sleep(Duration),
    /// Ends the body properly.
    End,
    /// Closes the connection mid-body.
    Drop,
}

fn sse(data: &str) -> Step {
    Step::Chunk(format!("data: {data}\n\n").into_bytes())
}

#[derive(Default)]
struct Seen {
    requests: Vec<String>,
}

async fn serve(scripts: Vec<Vec<Step>>) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = Arc::clone(&seen);
    tokio::spawn(async move {
        for script in scripts {
            let (mut socket, _) = listener.accept().await.unwrap();
            let buf = support::read_request(&mut socket).await.unwrap();
            record
                .lock()
                .unwrap()
                .requests
                .push(String::from_utf8_lossy(&buf).to_string());
            for step in script {
                let result = match step {
                    Step::Status(code, extra, body) => {
                        let text = format!(
                            "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        socket.write_all(text.as_bytes()).await
                    }
                    Step::Begin => socket
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
                        .await,
                    Step::Chunk(bytes) => {
                        let mut frame = format!("{:x}\r\n", bytes.len()).into_bytes();
                        frame.extend_from_slice(&bytes);
                        frame.extend_from_slice(b"\r\n");
                        socket.write_all(&frame).await
                    }
                    Step::Sleep(d) => {
                        tokio::time::sleep(d).await;
                        Ok(())
                    }
                    Step::End => socket.write_all(b"0\r\n\r\n").await,
                    Step::Drop => break,
                };
                if result.is_err() {
                    break;
                }
                let _ = socket.flush().await;
            }
            let _ = socket.shutdown().await;
        }
    });
    (base, seen)
}

fn options() -> HttpOptions {
    HttpOptions {
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(5),
        max_retries: 2,
        retry_base_delay: Duration::from_millis(10),
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        messages: vec![ChatMessage::User {
            parts: vec![Part::Text("hi".into())],
        }],
        ..ChatRequest::default()
    }
}

async fn collect(
    provider: &OpenAiCompatible,
    cancel: CancellationToken,
) -> Vec<Result<ProviderEvent, ProviderError>> {
    provider.stream(request(), cancel).collect().await
}

fn client(base: &str, key: Option<&str>, options: HttpOptions) -> OpenAiCompatible {
    OpenAiCompatible::new(base, key.map(SecretString::from), Vec::new(), options).unwrap()
}

#[tokio::test]
async fn text_and_a_tool_call_stream_through_and_the_key_goes_only_in_the_header() {
    let (base, seen) = serve(vec![vec![
        Step::Begin,
        sse(r#"{"choices":[{"delta":{"content":"Hel"}}]}"#),
        sse(r#"{"choices":[{"delta":{"content":"lo"}}]}"#),
        sse(r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"time__now","arguments":"{\"tz\":"}}]}}]}"#),
        sse(r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"UTC\"}"}}]}}]}"#),
        sse(r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#),
        sse(r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}"#),
        sse("[DONE]"),
        Step::End,
    ]])
    .await;
    let provider = client(&base, Some("sk-test-header-only"), options());
    let done = provider
        .complete(request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.text, "Hello");
    assert_eq!(done.tool_calls.len(), 1);
    assert_eq!(
        done.tool_calls[0].arguments,
        Ok(serde_json::json!({"tz": "UTC"}))
    );
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    assert_eq!((done.input_tokens, done.output_tokens), (Some(5), Some(7)));

    let seen = seen.lock().unwrap();
    let raw = &seen.requests[0];
    assert!(raw.starts_with("POST /v1/chat/completions "), "{raw}");
    assert!(raw
        .to_ascii_lowercase()
        .contains("authorization: bearer sk-test-header-only"));
    let body = &raw[raw.find("\r\n\r\n").unwrap() + 4..];
    assert!(!body.contains("sk-test"), "the key is not in the body");
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["stream"], true);
}

#[tokio::test]
async fn a_utf8_character_split_across_chunks_arrives_whole() {
    let line = "data: {\"choices\":[{\"delta\":{\"content\":\"Привет, мир\"}}]}\n\n"
        .as_bytes()
        .to_vec();
    // Cut inside the two bytes of "р".
    let cut = line.windows(2).position(|w| w == "р".as_bytes()).unwrap() + 1;
    let (base, _) = serve(vec![vec![
        Step::Begin,
        Step::Chunk(line[..cut].to_vec()),
        Step::Sleep(Duration::from_millis(30)),
        Step::Chunk(line[cut..].to_vec()),
        sse("[DONE]"),
        Step::End,
    ]])
    .await;
    let done = client(&base, None, options())
        .complete(request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.text, "Привет, мир");
}

#[tokio::test]
async fn a_missing_done_still_finishes_the_answer() {
    let (base, _) = serve(vec![vec![
        Step::Begin,
        sse(r#"{"choices":[{"delta":{"content":"ok"}}]}"#),
        Step::End,
    ]])
    .await;
    let done = client(&base, None, options())
        .complete(request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        (done.text.as_str(), done.finish),
        ("ok", Some(FinishReason::Stop))
    );
}

#[tokio::test]
async fn a_429_is_retried_after_the_servers_retry_after_and_then_succeeds() {
    let (base, seen) = serve(vec![
        vec![Step::Status(
            429,
            "retry-after-ms: 20\r\n",
            r#"{"error":{"message":"slow down"}}"#.into(),
        )],
        vec![
            Step::Begin,
            sse(r#"{"choices":[{"delta":{"content":"fine"},"finish_reason":"stop"}]}"#),
            sse("[DONE]"),
            Step::End,
        ],
    ])
    .await;
    let done = client(&base, None, options())
        .complete(request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.text, "fine");
    assert_eq!(seen.lock().unwrap().requests.len(), 2);
}

#[tokio::test]
async fn an_overloaded_provider_is_tried_three_times_then_reported() {
    let overloaded = || vec![Step::Status(503, "", r#"{"error":"Overloaded"}"#.into())];
    let (base, seen) = serve(vec![overloaded(), overloaded(), overloaded()]).await;
    let err = client(&base, None, options())
        .complete(request(), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ProviderError::Overloaded {
            message: "Overloaded".into()
        }
    );
    assert_eq!(seen.lock().unwrap().requests.len(), 3);
}

#[tokio::test]
async fn a_refused_key_is_reported_at_once_without_retrying() {
    let (base, seen) = serve(vec![vec![Step::Status(
        401,
        "",
        r#"{"error":{"message":"Incorrect API key provided: sk-wr***ng"}}"#.into(),
    )]])
    .await;
    let err = client(&base, Some("sk-wrong"), options())
        .complete(request(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unauthorized { .. }), "{err:?}");
    assert_eq!(seen.lock().unwrap().requests.len(), 1);
}

#[tokio::test]
async fn a_dropped_stream_ends_with_an_error_that_keeps_the_partial_text() {
    let (base, _) = serve(vec![vec![
        Step::Begin,
        sse(r#"{"choices":[{"delta":{"content":"The answer is "}}]}"#),
        Step::Chunk(b"data: {\"choices\":[{\"del".to_vec()),
        Step::Drop,
    ]])
    .await;
    let events = collect(&client(&base, None, options()), CancellationToken::new()).await;
    assert_eq!(
        events[0],
        Ok(ProviderEvent::TextDelta("The answer is ".into()))
    );
    match events.last().unwrap() {
        Err(ProviderError::StreamInterrupted { partial_text, .. }) => {
            assert_eq!(partial_text, "The answer is ");
        }
        other => panic!("expected an interrupted stream, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stalled_stream_is_cut_off_after_the_read_timeout() {
    let (base, _) = serve(vec![vec![
        Step::Begin,
        sse(r#"{"choices":[{"delta":{"content":"thinking"}}]}"#),
        Step::Sleep(Duration::from_secs(3)),
        Step::End,
    ]])
    .await;
    let quick = HttpOptions {
        read_timeout: Duration::from_millis(300),
        ..options()
    };
    let events = collect(&client(&base, None, quick), CancellationToken::new()).await;
    match events.last().unwrap() {
        Err(ProviderError::StreamInterrupted {
            partial_text,
            detail,
        }) => {
            assert_eq!(partial_text, "thinking");
            assert!(detail.contains("read timeout"), "{detail}");
        }
        other => panic!("expected a stall, got {other:?}"),
    }
}

#[tokio::test]
async fn cancelling_ends_the_stream_with_cancelled() {
    let (base, _) = serve(vec![vec![
        Step::Begin,
        sse(r#"{"choices":[{"delta":{"content":"a"}}]}"#),
        Step::Sleep(Duration::from_secs(5)),
        Step::End,
    ]])
    .await;
    let cancel = CancellationToken::new();
    let provider = client(&base, None, options());
    let mut stream = provider.stream(request(), cancel.clone());
    assert_eq!(
        stream.next().await,
        Some(Ok(ProviderEvent::TextDelta("a".into())))
    );
    cancel.cancel();
    assert_eq!(stream.next().await, Some(Err(ProviderError::Cancelled)));
    assert_eq!(stream.next().await, None);
}

#[tokio::test]
async fn anthropic_streams_a_tool_call_with_its_own_headers() {
    use switchboard_core::providers::anthropic::Anthropic;
    let event = |name: &str, data: &str| {
        Step::Chunk(format!("event: {name}\ndata: {data}\n\n").into_bytes())
    };
    let (base, seen) = serve(vec![vec![
        Step::Begin,
        event("message_start", r#"{"type":"message_start","message":{"usage":{"input_tokens":9}}}"#),
        event("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
        event("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"On it."}}"#),
        event("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
        event("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"time__now","input":{}}}"#),
        event("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#),
        event("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
        event("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}"#),
        event("message_stop", r#"{"type":"message_stop"}"#),
        // Nothing after message_stop is read, even if the connection stays open.
        Step::Sleep(Duration::from_secs(10)),
        Step::End,
    ]])
    .await;
    let provider = Anthropic::new(
        &base.replace("/v1", ""),
        SecretString::from("sk-ant-test-key"),
        options(),
    )
    .unwrap();
    let done = tokio::time::timeout(
        Duration::from_secs(5),
        provider.complete(request(), CancellationToken::new()),
    )
    .await
    .expect("finished at message_stop")
    .unwrap();
    assert_eq!(done.text, "On it.");
    assert_eq!(done.tool_calls[0].name, "time__now");
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    assert_eq!((done.input_tokens, done.output_tokens), (Some(9), Some(12)));
    let raw = seen.lock().unwrap().requests[0].to_ascii_lowercase();
    assert!(raw.starts_with("post /v1/messages "), "{raw}");
    assert!(raw.contains("x-api-key: sk-ant-test-key"));
    assert!(raw.contains("anthropic-version: 2023-06-01"));
    assert!(!raw.contains("authorization:"));
}

#[tokio::test]
async fn an_overloaded_error_event_inside_an_anthropic_stream_keeps_the_partial_text() {
    use switchboard_core::providers::anthropic::Anthropic;
    let (base, _) = serve(vec![vec![
        Step::Begin,
        sse(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half"}}"#),
        sse(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
        Step::End,
    ]])
    .await;
    let provider =
        Anthropic::new(&base.replace("/v1", ""), SecretString::from("k"), options()).unwrap();
    let events = provider
        .stream(request(), CancellationToken::new())
        .collect::<Vec<_>>()
        .await;
    match events.last().unwrap() {
        Err(ProviderError::StreamInterrupted {
            partial_text,
            detail,
        }) => {
            assert_eq!(partial_text, "Half");
            assert!(detail.contains("overloaded_error"));
        }
        other => panic!("expected an interrupted stream, got {other:?}"),
    }
}

#[tokio::test]
async fn gemini_streams_with_the_key_in_a_header_and_the_model_in_the_path() {
    use switchboard_core::providers::gemini::Gemini;
    let (base, seen) = serve(vec![vec![
        Step::Begin,
        sse(r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi "}]}}]}"#),
        sse(r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"there"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}"#),
        Step::End,
    ]])
    .await;
    let base = base.replace("/v1", "/v1beta");
    let provider = Gemini::new(&base, SecretString::from("AIza-test-key"), options()).unwrap();
    let done = provider
        .complete(request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(done.text, "Hi there");
    assert_eq!(done.finish, Some(FinishReason::Stop));
    assert_eq!((done.input_tokens, done.output_tokens), (Some(3), Some(2)));
    let raw = seen.lock().unwrap().requests[0].clone();
    assert!(
        raw.starts_with("POST /v1beta/models/test-model:streamGenerateContent?alt=sse "),
        "{raw}"
    );
    assert!(raw
        .to_ascii_lowercase()
        .contains("x-goog-api-key: aiza-test-key"));
    assert!(
        !raw.lines().next().unwrap().contains("AIza"),
        "the key is not in the URL"
    );
}

#[tokio::test]
async fn ollama_ndjson_lines_split_anywhere_decode_and_an_error_line_keeps_the_text() {
    use switchboard_core::providers::ollama::Ollama;
    let body = concat!(
        r#"{"message":{"role":"assistant","content":"Ol"},"done":false}"#, "\n",
        r#"{"message":{"role":"assistant","content":"á, "},"done":false}"#, "\n",
        r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"time__now","arguments":{}}}]},"done":false}"#, "\n",
        r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":4,"eval_count":3}"#, "\n",
    )
    .as_bytes()
    .to_vec();
    // Cut inside "á" and in the middle of lines.
    let cut = body.windows(2).position(|w| w == "á".as_bytes()).unwrap() + 1;
    let (base, seen) = serve(vec![vec![
        Step::Begin,
        Step::Chunk(body[..cut].to_vec()),
        Step::Chunk(body[cut..cut + 7].to_vec()),
        Step::Chunk(body[cut + 7..].to_vec()),
        // After the done line nothing more is read.
        Step::Sleep(Duration::from_secs(10)),
        Step::End,
    ]])
    .await;
    let (broken, _) = serve(vec![vec![
        Step::Begin,
        Step::Chunk(
            b"{\"message\":{\"role\":\"assistant\",\"content\":\"So far\"},\"done\":false}\n"
                .to_vec(),
        ),
        Step::Chunk(b"{\"error\":\"model runner has unexpectedly stopped\"}\n".to_vec()),
        Step::End,
    ]])
    .await;
    let base = base.trim_end_matches("/v1").to_owned();
    let provider = Ollama::new(&base, None, options()).unwrap();
    let done = tokio::time::timeout(
        Duration::from_secs(5),
        provider.complete(request(), CancellationToken::new()),
    )
    .await
    .expect("finished at the done line")
    .unwrap();
    assert_eq!(done.text, "Olá, ");
    assert_eq!(done.tool_calls[0].name, "time__now");
    assert_eq!(done.finish, Some(FinishReason::ToolCalls));
    assert_eq!((done.input_tokens, done.output_tokens), (Some(4), Some(3)));
    assert!(seen.lock().unwrap().requests[0].starts_with("POST /api/chat "));

    let provider = Ollama::new(broken.trim_end_matches("/v1"), None, options()).unwrap();
    let events = provider
        .stream(request(), CancellationToken::new())
        .collect::<Vec<_>>()
        .await;
    match events.last().unwrap() {
        Err(ProviderError::StreamInterrupted {
            partial_text,
            detail,
        }) => {
            assert_eq!(partial_text, "So far");
            assert!(detail.contains("unexpectedly stopped"), "{detail}");
        }
        other => panic!("expected an interrupted stream, got {other:?}"),
    }
}

fn json_ok(body: &str) -> Vec<Step> {
    vec![Step::Status(200, "", body.to_owned())]
}

#[tokio::test]
async fn each_provider_lists_its_models_sorted_from_its_own_endpoint() {
    use switchboard_core::providers::anthropic::Anthropic;
    use switchboard_core::providers::gemini::Gemini;
    use switchboard_core::providers::ollama::Ollama;

    let (base, seen) = serve(vec![json_ok(
        r#"{"object":"list","data":[{"id":"gpt-4o-mini","object":"model"},{"id":"gpt-4o","object":"model"}]}"#,
    )])
    .await;
    let models = client(&base, Some("sk-x"), options())
        .list_models()
        .await
        .unwrap();
    let ids: Vec<_> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["gpt-4o", "gpt-4o-mini"]);
    assert!(seen.lock().unwrap().requests[0].starts_with("GET /v1/models "));

    let (base, seen) = serve(vec![json_ok(
        r#"{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5"}],"has_more":false}"#,
    )])
    .await;
    let models = Anthropic::new(
        base.trim_end_matches("/v1"),
        SecretString::from("k"),
        options(),
    )
    .unwrap()
    .list_models()
    .await
    .unwrap();
    assert_eq!(models[0].name.as_deref(), Some("Claude Sonnet 4.5"));
    assert!(seen.lock().unwrap().requests[0].starts_with("GET /v1/models?limit=1000 "));

    let (base, _) = serve(vec![json_ok(
        r#"{"models":[{"name":"models/gemini-2.5-flash","displayName":"Gemini 2.5 Flash","supportedGenerationMethods":["generateContent","countTokens"]},
                      {"name":"models/text-embedding-004","supportedGenerationMethods":["embedContent"]}]}"#,
    )])
    .await;
    let models = Gemini::new(&base, SecretString::from("k"), options())
        .unwrap()
        .list_models()
        .await
        .unwrap();
    let ids: Vec<_> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        ["gemini-2.5-flash"],
        "only models that can chat, without the prefix"
    );

    let (base, _) = serve(vec![json_ok(
        r#"{"models":[{"name":"qwen3:8b","model":"qwen3:8b"},{"name":"llama3.2:latest","model":"llama3.2:latest"}]}"#,
    )])
    .await;
    let models = Ollama::new(base.trim_end_matches("/v1"), None, options())
        .unwrap()
        .list_models()
        .await
        .unwrap();
    let ids: Vec<_> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["llama3.2:latest", "qwen3:8b"]);
}

#[tokio::test]
async fn a_refused_key_on_the_model_list_says_so() {
    let (base, _) = serve(vec![vec![Step::Status(
        401,
        "",
        r#"{"error":{"message":"Invalid API key"}}"#.into(),
    )]])
    .await;
    let err = client(&base, Some("sk-bad"), options())
        .list_models()
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ProviderError::Unauthorized {
            message: "Invalid API key".into()
        }
    );
}
