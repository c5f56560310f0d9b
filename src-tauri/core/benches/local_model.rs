//! `cargo bench -p switchboard-core --bench local_model`: time to first token and tokens per
//! second of a real local model (llama.cpp's server from PyPI's `xllamacpp`, serving
//! SmolLM2-135M-Instruct, greedy, one thread) read by Switchboard against the engine read
//! alone, for the same request (issue 58; target: within 5 % of the engine alone). Also the
//! engine's own timings, and the whole turn (the run loop, its database writes, the default
//! system prompt) for what a person waits. Needs `scripts/bootstrap.sh test` once. A probe of
//! the machine's stalls is printed beside the figures.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use switchboard_core::providers::formats::openai::request_body;
use switchboard_core::providers::{ChatMessage, ChatRequest, Part, ProviderEvent};
use switchboard_core::App;
use tokio_util::sync::CancellationToken;

const RUNS: usize = 9;
const TOKENS: u32 = 64;

/// One answer as read: time to its first text, then tokens a second after it.
#[derive(Clone, Copy)]
struct Read {
    first: Duration,
    per_second: f64,
}

fn request(model: &str, run: usize) -> ChatRequest {
    ChatRequest {
        model: model.to_owned(),
        // A different question each run: the engine's prompt cache never answers for it.
        messages: vec![ChatMessage::User {
            parts: vec![Part::Text(format!(
                "Question {run}: write a short poem about the sea and a lighthouse."
            ))],
        }],
        max_tokens: Some(TOKENS),
        ..ChatRequest::default()
    }
}

/// The engine alone: the request's exact body, its event stream read with nothing else.
async fn engine_alone(http: &reqwest::Client, origin: &str, body: &Value) -> (Read, Option<f64>) {
    let started = Instant::now();
    let response = http
        .post(format!("{origin}/v1/chat/completions"))
        .json(body)
        .send()
        .await
        .unwrap();
    let mut bytes = response.bytes_stream();
    let (mut first, mut last, mut tokens, mut own) = (None, started, 0u64, None);
    let mut buffer = String::new();
    while let Some(chunk) = bytes.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            let Some(data) = event.trim().strip_prefix("data: ") else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            if value["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|t| !t.is_empty())
            {
                first.get_or_insert_with(|| started.elapsed());
                last = Instant::now();
            }
            if let Some(n) = value["usage"]["completion_tokens"].as_u64() {
                tokens = n;
            }
            if let Some(speed) = value["timings"]["predicted_per_second"].as_f64() {
                own = Some(speed);
            }
        }
    }
    let first = first.expect("the engine wrote text");
    (
        Read {
            first,
            per_second: per_second(tokens, last.duration_since(started) - first),
        },
        own,
    )
}

/// Tokens after the first over the time they took.
fn per_second(tokens: u64, after_first: Duration) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let rest = tokens.saturating_sub(1) as f64;
    rest / after_first.as_secs_f64().max(1e-6)
}

/// Through Switchboard's client for the provider: the same request, its events as the tool
/// loop reads them.
async fn through_switchboard(app: &App, request: ChatRequest) -> Read {
    let client = app.providers().client("Llama").await.unwrap();
    let started = Instant::now();
    let mut stream = client.stream(request, CancellationToken::new());
    let (mut first, mut last, mut tokens) = (None, started, 0);
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            ProviderEvent::TextDelta(t) if !t.is_empty() => {
                first.get_or_insert_with(|| started.elapsed());
                last = Instant::now();
            }
            ProviderEvent::Usage { output_tokens, .. } => tokens = output_tokens.unwrap_or(0),
            _ => {}
        }
    }
    let first = first.expect("the model wrote text");
    Read {
        first,
        per_second: per_second(tokens, last.duration_since(started) - first),
    }
}

/// A whole turn: from the person's message to the first words the window is sent.
async fn whole_turn(app: &Arc<App>, run: usize) -> Duration {
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let seen = Arc::new(support::Seen::default());
    let started = Instant::now();
    app.start_turn_answered_by(
        switchboard_core::app::TurnRequest {
            conversation_id: conversation,
            text: Some(format!(
                "Question {run}: write a short poem about the sea and a lighthouse."
            )),
            ..Default::default()
        },
        seen.clone(),
        Arc::new(switchboard_core::agent::FixedApprover(
            switchboard_core::agent::Decision::Deny,
        )),
    )
    .await
    .unwrap();
    seen.wait_for("text_delta", 1).await;
    let first = started.elapsed();
    seen.wait_for("run_finished", 1).await;
    first
}

fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let Some(engine) = support::Engine::start(4096, TOKENS) else {
        return;
    };
    let (app, model, _dir) = engine
        .app(switchboard_core::providers::HttpOptions::default())
        .await;
    let http = switchboard_core::net::client_builder().build().unwrap();
    // One answer each way first: the model's pages are in memory for both.
    let _ = engine_alone(
        &http,
        &engine.origin,
        &request_body(&request(&model, 0), true),
    )
    .await;
    let _ = through_switchboard(&app, request(&model, 0)).await;

    let (worst, stop) = support::stall_probe();
    let (mut alone, mut through, mut own, mut turns) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 1..=RUNS {
        // Interleaved, the order switched each run: neither way always goes first.
        let body = request_body(&request(&model, 2 * run), true);
        let mut ways = [false, true];
        if run % 2 == 0 {
            ways.reverse();
        }
        for switchboard in ways {
            if switchboard {
                through.push(through_switchboard(&app, request(&model, 2 * run + 1)).await);
            } else {
                let (read, speed) = engine_alone(&http, &engine.origin, &body).await;
                alone.push(read);
                own.extend(speed);
            }
        }
        turns.push(whole_turn(&app, 1000 + run).await);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let stalls = *worst.lock().unwrap();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (alone_first, through_first) = (
        median(alone.iter().map(|r| ms(r.first)).collect()),
        median(through.iter().map(|r| ms(r.first)).collect()),
    );
    let (alone_speed, through_speed) = (
        median(alone.iter().map(|r| r.per_second).collect()),
        median(through.iter().map(|r| r.per_second).collect()),
    );
    println!("## A real local model: Switchboard against the engine alone (median of {RUNS}, {TOKENS} tokens, SmolLM2-135M Q4_1 on llama.cpp, 1 thread)\n");
    println!("| | time to first token | tokens/s after it |");
    println!("|---|---:|---:|");
    println!(
        "| engine alone (same request body, read raw) | {alone_first:.0} ms | {alone_speed:.1} |"
    );
    println!("| through Switchboard's client | {through_first:.0} ms | {through_speed:.1} |");
    println!(
        "| Switchboard ÷ engine | {:+.1} % | {:+.1} % |",
        (through_first / alone_first - 1.0) * 100.0,
        (through_speed / alone_speed - 1.0) * 100.0
    );
    if !own.is_empty() {
        println!(
            "\nThe engine's own count of its speed: {:.1} tokens/s (median).",
            median(own)
        );
    }
    println!(
        "A whole turn (the run loop, its database writes, the default system prompt) to the first words sent to the window: {:.0} ms (median).",
        median(turns.iter().map(|d| ms(*d)).collect())
    );
    println!(
        "Machine stalls while measuring: the longest 1 ms sleep overslept by {:.1} ms.",
        ms(stalls)
    );
    app.shutdown(Duration::from_secs(5)).await;
}
