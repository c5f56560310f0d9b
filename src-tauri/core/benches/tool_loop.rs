//! The tool loop's own cost, with aimock (zero delay) playing the model and real MCP servers
//! from `tests/peers/` (run `scripts/bootstrap.sh test` once to install them):
//!
//! 1. Overhead per round: a run of R rounds, each a streamed answer asking for
//!    server-everything's `echo` over stdio and the call itself, through the whole loop
//!    (SQLite file in WAL, checkpoints, events, permission pipeline, tool records) — against
//!    the same provider streams and bare rmcp calls made directly, with the history kept in
//!    memory, in the same process, interleaved.
//! 2. Eight parallel calls to a tool that sleeps 500 ms (our fault server's `slow`): the time
//!    from the first call starting to the last one finishing.
//!
//! Run: `cargo bench -p switchboard-core --bench tool_loop` (prints Markdown).

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceExt;
use rmcp::transport::TokioChildProcess;
use secrecy::SecretString;
use support::{aimock, peers, stdio_launch};
use switchboard_core::agent::{self, Decision, FixedApprover, RunServices};
use switchboard_core::app::{NewProvider, TurnRequest};
use switchboard_core::events::RunEvent;
use switchboard_core::mcp::host::ServerState;
use switchboard_core::provider_config::ProviderKind;
use switchboard_core::providers::{
    connect, ChatMessage, ChatRequest, HttpOptions, Part, ProviderEvent, ToolCall, ToolSpec,
};
use switchboard_core::secrets::MemoryStore;
use switchboard_core::settings::MemorySettings;
use switchboard_core::settings::Settings;
use switchboard_core::store::Store;
use switchboard_core::{App, AppConfig, AppPaths};
use tokio_util::sync::CancellationToken;

const ROUNDS: u32 = 20;
const REPEATS: usize = 7;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn options() -> HttpOptions {
    HttpOptions {
        max_retries: 0,
        ..HttpOptions::default()
    }
}

/// The same R rounds without the loop: stream an answer, call echo with bare rmcp, keep the
/// history in memory; then the last answer.
async fn direct(
    client: &dyn switchboard_core::providers::Provider,
    peer: &rmcp::service::Peer<rmcp::service::RoleClient>,
    tools: &[ToolSpec],
) -> Duration {
    let started = Instant::now();
    let mut messages = vec![ChatMessage::User {
        parts: vec![Part::Text("Bench loop".into())],
    }];
    for _ in 0..=ROUNDS {
        let request = ChatRequest {
            model: "gpt-4o".into(),
            messages: messages.clone(),
            tools: tools.to_vec(),
            ..ChatRequest::default()
        };
        let mut stream = client.stream(request, CancellationToken::new());
        let mut calls: Vec<ToolCall> = Vec::new();
        while let Some(event) = stream.next().await {
            if let ProviderEvent::ToolCall(call) = event.unwrap() {
                calls.push(call);
            }
        }
        messages.push(ChatMessage::Assistant {
            text: None,
            tool_calls: calls.clone(),
        });
        for call in calls {
            let args = call.arguments.clone().unwrap();
            let result = peer
                .call_tool(
                    CallToolRequestParams::new("echo")
                        .with_arguments(args.as_object().unwrap().clone()),
                )
                .await
                .unwrap();
            messages.push(ChatMessage::Tool {
                tool_call_id: call.id,
                name: call.name,
                content: result.content[0].as_text().unwrap().text.clone(),
                is_error: false,
                images: Vec::new(),
            });
        }
    }
    started.elapsed()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mock = aimock(
        "the tool loop bench",
        "tool-loop.json",
        &["--journal-max", "50", "--log-level", "silent"],
    )
    .expect("aimock is installed in tests/peers (scripts/bootstrap.sh test)");
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::under_home(home.path().to_path_buf());
    let store = Store::open(&paths.database_file(), Duration::from_secs(5)).unwrap();
    let app = App::with_store(
        store.clone(),
        AppConfig {
            pid_file: Some(home.path().join("pids.json")),
            http: options(),
            ..AppConfig::headless(
                paths,
                Arc::new(MemoryStore::default()),
                Arc::new(MemorySettings::default()),
            )
        },
    )
    .await;
    app.providers()
        .add(NewProvider {
            name: "Mock".into(),
            kind: Some("openai_compatible".into()),
            base_url: Some(format!("{}/v1", mock.root)),
            default_model: Some("gpt-4o".into()),
            api_key: Some(SecretString::from("sk-bench")),
        })
        .await
        .unwrap();
    let everything = peers().join("node_modules/.bin/mcp-server-everything");
    let host = app.host();
    let startup = Duration::from_secs(60);
    host.spawn(
        "everything",
        stdio_launch(&everything.to_string_lossy(), &["stdio"], startup),
    )
    .await;
    host.spawn(
        "fault",
        stdio_launch(
            &peers().join(".venv/bin/python").to_string_lossy(),
            &[&peers().join("fault_server.py").to_string_lossy()],
            startup,
        ),
    )
    .await;
    while !host
        .states()
        .values()
        .filter(|s| matches!(s, ServerState::Running { .. }))
        .count()
        .eq(&2)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The bare side: rmcp on its own copy of server-everything, the provider client directly.
    let mut cmd = tokio::process::Command::new(&everything);
    cmd.arg("stdio");
    let peer_service = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let peer = peer_service.peer().clone();
    let client = connect::client(
        ProviderKind::OpenaiCompatible,
        &format!("{}/v1", mock.root),
        Some(SecretString::from("sk-bench")),
        options(),
    )
    .unwrap();
    let tools: Vec<ToolSpec> = {
        let (offered, _) = app.conversation_catalogue("none").await.unwrap_or_default();
        offered.iter().map(agent::tools::spec).collect()
    };

    let allow = FixedApprover(Decision::AllowAlways);
    let sink = |_: RunEvent| {};
    let mut app_times = Vec::new();
    let mut direct_times = Vec::new();
    for i in 0..=REPEATS {
        let conversation = app.conversations().create(None, "").await.unwrap().id;
        let mut setup = app
            .prepare_turn(
                TurnRequest {
                    conversation_id: conversation,
                    text: Some("Bench loop".into()),
                    ..TurnRequest::default()
                },
                &Settings::default(),
            )
            .await
            .unwrap();
        setup.limits.max_rounds = ROUNDS;
        let services = RunServices {
            store: &store,
            tools: host,
            approver: &allow,
            sink: &sink,
            controls: &switchboard_core::agent::controls::CallControls::default(),
        };
        let started = Instant::now();
        agent::run(setup, services, CancellationToken::new()).await;
        let looped = started.elapsed();
        let bare = direct(&*client, &peer, &tools).await;
        if i > 0 {
            // the first pair warms up connections and caches
            app_times.push(looped);
            direct_times.push(bare);
        }
    }
    let (looped, bare) = (median(app_times), median(direct_times));
    let per_round = (looped.saturating_sub(bare)) / (ROUNDS + 1);
    println!("## Tool loop (`cargo bench -p switchboard-core --bench tool_loop`)\n");
    println!("| measure | loop | direct | ratio |\n|---|---:|---:|---:|");
    println!(
        "| {ROUNDS} rounds + the last answer (median of {REPEATS}) | {} | {} | {:.3}× |",
        ms(looped),
        ms(bare),
        looped.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "\nOverhead per round (loop − direct) / {}: {}",
        ROUNDS + 1,
        ms(per_round)
    );

    // Eight calls of 500 ms in one round.
    let mut spans = Vec::new();
    for _ in 0..5 {
        let conversation = app.conversations().create(None, "").await.unwrap().id;
        let setup = app
            .prepare_turn(
                TurnRequest {
                    conversation_id: conversation,
                    text: Some("Eight slow calls".into()),
                    ..TurnRequest::default()
                },
                &Settings::default(),
            )
            .await
            .unwrap();
        let marks: Arc<Mutex<(Option<Instant>, Option<Instant>)>> = Arc::default();
        let record = Arc::clone(&marks);
        let sink = move |e: RunEvent| {
            let mut m = record.lock().unwrap();
            match e {
                RunEvent::ToolStarted { .. } if m.0.is_none() => m.0 = Some(Instant::now()),
                RunEvent::ToolFinished { .. } => m.1 = Some(Instant::now()),
                _ => {}
            }
        };
        let services = RunServices {
            store: &store,
            tools: host,
            approver: &allow,
            sink: &sink,
            controls: &switchboard_core::agent::controls::CallControls::default(),
        };
        agent::run(setup, services, CancellationToken::new()).await;
        let (first, last) = *marks.lock().unwrap();
        spans.push(last.unwrap() - first.unwrap());
    }
    println!(
        "\nEight parallel calls to a tool sleeping 500 ms, first start to last finish (median of 5): {}",
        ms(median(spans))
    );
    host.shutdown(Duration::from_secs(5)).await;
    let _ = peer_service.cancel().await;
}
