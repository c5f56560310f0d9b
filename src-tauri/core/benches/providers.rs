//! How much the provider clients cost over the bytes they read, against a local server.
//!
//! 1. Parse throughput: a 100 000-token answer in each API's stream format (one token per
//!    event, as the APIs send them; the events are written in the shape of the streams each API
//!    documents and aimock replays), read once by a loop that only counts bytes and once by the
//!    real client, which parses every event into `TextDelta`s. Reported in tokens per second,
//!    with the ratio of the two times.
//! 2. Time to first token: a server that answers one event at once; the time from sending the
//!    request to the first body bytes (raw reqwest) against the time from `Provider::stream`
//!    to the first `TextDelta`. The difference is what the client adds.
//!
//! Run: `cargo bench -p switchboard-core --bench providers` (prints a Markdown table).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use secrecy::SecretString;
use serde_json::json;
use switchboard_core::provider_config::ProviderKind;
use switchboard_core::providers::{
    connect, ChatMessage, ChatRequest, HttpOptions, Part, Provider, ProviderEvent,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

const TOKENS: usize = 100_000;
const RUNS: usize = 7;
const TTFT_RUNS: usize = 200;

/// Words of varied length and script, so UTF-8 decoding is part of the work.
const WORDS: [&str; 12] = [
    " the",
    " model",
    " streams",
    " tokens",
    ",",
    " naïve",
    " café",
    " 東京",
    " résumé",
    " ok",
    ".",
    "\n",
];

fn token(i: usize) -> &'static str {
    WORDS[i % WORDS.len()]
}

#[derive(Clone, Copy)]
struct Api {
    name: &'static str,
    kind: ProviderKind,
    ndjson: bool,
}

const APIS: [Api; 4] = [
    Api {
        name: "OpenAI (SSE)",
        kind: ProviderKind::Openai,
        ndjson: false,
    },
    Api {
        name: "Anthropic (SSE)",
        kind: ProviderKind::Anthropic,
        ndjson: false,
    },
    Api {
        name: "Gemini (SSE)",
        kind: ProviderKind::Gemini,
        ndjson: false,
    },
    Api {
        name: "Ollama (NDJSON)",
        kind: ProviderKind::Ollama,
        ndjson: true,
    },
];

fn sse(out: &mut String, event: Option<&str>, data: &serde_json::Value) {
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// The whole recorded answer of `tokens` tokens in `kind`'s wire format.
fn recording(kind: ProviderKind, tokens: usize) -> String {
    let mut out = String::with_capacity(tokens * 200);
    match kind {
        ProviderKind::Anthropic => {
            sse(
                &mut out,
                Some("message_start"),
                &json!({"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}),
            );
            sse(
                &mut out,
                Some("content_block_start"),
                &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
            );
            for i in 0..tokens {
                sse(
                    &mut out,
                    Some("content_block_delta"),
                    &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":token(i)}}),
                );
            }
            sse(
                &mut out,
                Some("content_block_stop"),
                &json!({"type":"content_block_stop","index":0}),
            );
            sse(
                &mut out,
                Some("message_delta"),
                &json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":tokens}}),
            );
            sse(
                &mut out,
                Some("message_stop"),
                &json!({"type":"message_stop"}),
            );
        }
        ProviderKind::Gemini => {
            for i in 0..tokens {
                let mut candidate =
                    json!({"content":{"role":"model","parts":[{"text":token(i)}]},"index":0});
                if i + 1 == tokens {
                    candidate["finishReason"] = json!("STOP");
                }
                sse(
                    &mut out,
                    None,
                    &json!({"candidates":[candidate],"usageMetadata":{"promptTokenCount":25,"candidatesTokenCount":i + 1,"totalTokenCount":i + 26},"modelVersion":"gemini-2.0-flash","responseId":"resp-1"}),
                );
            }
        }
        ProviderKind::Ollama => {
            for i in 0..tokens {
                out.push_str(&json!({"model":"llama3.2","created_at":"2026-11-22T05:00:00.000000Z","message":{"role":"assistant","content":token(i)},"done":false}).to_string());
                out.push('\n');
            }
            out.push_str(&json!({"model":"llama3.2","created_at":"2026-11-22T05:00:01.000000Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1,"load_duration":1,"prompt_eval_count":25,"prompt_eval_duration":1,"eval_count":tokens,"eval_duration":1}).to_string());
            out.push('\n');
        }
        _ => {
            let chunk = |delta: serde_json::Value, finish: serde_json::Value| json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795324260,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish}]});
            sse(
                &mut out,
                None,
                &chunk(json!({"role":"assistant","content":""}), json!(null)),
            );
            for i in 0..tokens {
                sse(
                    &mut out,
                    None,
                    &chunk(json!({"content":token(i)}), json!(null)),
                );
            }
            sse(&mut out, None, &chunk(json!({}), json!("stop")));
            sse(
                &mut out,
                None,
                &json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795324260,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":25,"completion_tokens":tokens,"total_tokens":tokens + 25}}),
            );
            out.push_str("data: [DONE]\n\n");
        }
    }
    out
}

/// Serves `body` (chunked, in 16 KiB writes) to every request, on 127.0.0.1.
async fn serve(body: Arc<Vec<u8>>, content_type: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let body = Arc::clone(&body);
            tokio::spawn(async move {
                socket.set_nodelay(true).ok();
                // Read the request head and its body (content-length) before answering.
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let head = format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n");
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for piece in body.chunks(16 * 1024) {
                    let framed =
                        [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
                    if socket.write_all(&framed).await.is_err() {
                        return;
                    }
                }
                let _ = socket.write_all(b"0\r\n\r\n").await;
            });
        }
    });
    format!("http://{addr}")
}

fn client(kind: ProviderKind, root: &str) -> Arc<dyn Provider> {
    let base = match kind {
        ProviderKind::Gemini => format!("{root}/v1beta"),
        ProviderKind::Anthropic | ProviderKind::Ollama => root.to_owned(),
        _ => format!("{root}/v1"),
    };
    let options = HttpOptions {
        max_retries: 0,
        ..HttpOptions::default()
    };
    connect::client(kind, &base, Some(SecretString::from("sk-bench")), options).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "bench".into(),
        messages: vec![ChatMessage::User {
            parts: vec![Part::Text("Write a long story.".into())],
        }],
        ..ChatRequest::default()
    }
}

/// Reads the whole answer with a plain reqwest POST and a loop that only counts bytes.
async fn raw_read(http: &reqwest::Client, url: &str) -> (Duration, Duration, usize) {
    let started = Instant::now();
    let response = http.post(url).body("{}").send().await.unwrap();
    let mut bytes = response.bytes_stream();
    let mut first = None;
    let mut total = 0;
    while let Some(chunk) = bytes.next().await {
        let chunk = chunk.unwrap();
        if first.is_none() && !chunk.is_empty() {
            first = Some(started.elapsed());
        }
        total += chunk.len();
    }
    (started.elapsed(), first.unwrap_or_default(), total)
}

/// Streams the answer through the real client, counting text deltas.
async fn client_read(client: &dyn Provider) -> (Duration, Duration, usize) {
    let started = Instant::now();
    let mut stream = client.stream(request(), CancellationToken::new());
    let mut first = None;
    let mut deltas = 0;
    while let Some(event) = stream.next().await {
        if let ProviderEvent::TextDelta(_) = event.unwrap() {
            if first.is_none() {
                first = Some(started.elapsed());
            }
            deltas += 1;
        }
    }
    (started.elapsed(), first.unwrap_or_default(), deltas)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let http = switchboard_core::net::client_builder()
        .build()
        .expect("an HTTP client");
    println!("## Provider clients: parse throughput ({TOKENS} tokens, median of {RUNS})\n");
    println!("| API | stream size | raw read | client | client tokens/s | client ÷ raw |");
    println!("|---|---:|---:|---:|---:|---:|");
    for api in APIS {
        let body = Arc::new(recording(api.kind, TOKENS).into_bytes());
        let size = body.len();
        let content_type = if api.ndjson {
            "application/x-ndjson"
        } else {
            "text/event-stream"
        };
        let root = serve(Arc::clone(&body), content_type).await;
        let client = client(api.kind, &root);
        let (mut raw, mut parsed) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let (t, _, n) = raw_read(&http, &format!("{root}/raw")).await;
            assert_eq!(n, size);
            raw.push(t);
            let (t, _, deltas) = client_read(&*client).await;
            assert_eq!(deltas, TOKENS, "{}: every token arrives", api.name);
            parsed.push(t);
        }
        let (raw, parsed) = (median(raw), median(parsed));
        println!(
            "| {} | {:.1} MiB | {} ms | {} ms | {:.0} | {:.1}× |",
            api.name,
            size as f64 / (1024.0 * 1024.0),
            ms(raw),
            ms(parsed),
            TOKENS as f64 / parsed.as_secs_f64(),
            parsed.as_secs_f64() / raw.as_secs_f64()
        );
    }

    println!(
        "\n## Provider clients: time to first token added by the client (median of {TTFT_RUNS})\n"
    );
    println!("| API | raw first bytes | client first token | added |");
    println!("|---|---:|---:|---:|");
    for api in APIS {
        let body = Arc::new(recording(api.kind, 1).into_bytes());
        let content_type = if api.ndjson {
            "application/x-ndjson"
        } else {
            "text/event-stream"
        };
        let root = serve(body, content_type).await;
        let client = client(api.kind, &root);
        // Warm both paths (connection setup code, allocator) before measuring.
        for _ in 0..10 {
            raw_read(&http, &format!("{root}/raw")).await;
            client_read(&*client).await;
        }
        let (mut raw, mut ours) = (Vec::new(), Vec::new());
        for _ in 0..TTFT_RUNS {
            raw.push(raw_read(&http, &format!("{root}/raw")).await.1);
            ours.push(client_read(&*client).await.1);
        }
        let (raw, ours) = (median(raw), median(ours));
        println!(
            "| {} | {:.3} ms | {:.3} ms | {:.3} ms |",
            api.name,
            raw.as_secs_f64() * 1e3,
            ours.as_secs_f64() * 1e3,
            ours.saturating_sub(raw).as_secs_f64() * 1e3
        );
    }
}
