//! The model's window on a heavy day (issue 55):
//!
//! 1. Tokens sent per task: ten servers — five written by others from `tests/peers/`
//!    (server-everything, filesystem, memory, time, git) and five of our raw server with 20
//!    generated tools each — about 150 tools, and 20 scripted tasks in one conversation, each
//!    asking for one tool. A scripted model calls the tool when it is offered and searches for
//!    it otherwise (`search_tools`), then answers. Every request's prompt is counted (its body's
//!    bytes over four) beside the requests the same tasks make when every tool is offered (no
//!    search: each task asks twice, and its history has no search in it), and every task must
//!    end with its tool's result, not an error.
//! 2. The loop's added time for budgeting a request, with 1M tokens of history: estimating the
//!    request, finding where it may begin, and fitting its results (medians of 101, with a
//!    probe of machine stalls beside them).
//!
//! Run: `cargo bench -p switchboard-core --bench windows` (prints Markdown). Token counts do not
//! depend on the build, so `--profile dev` gives the same first table, faster.

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "../tests/threats/scripted.rs"]
#[allow(dead_code)]
mod scripted;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use switchboard_core::agent::{fit, Decision};
use switchboard_core::events::{RunEvent, StopReason};
use switchboard_core::providers::{ChatMessage, ChatRequest, Part, ToolCall};

/// The tasks: the tool each asks for (its wire name) and the arguments it is called with.
fn tasks(folder: &str) -> Vec<(String, String)> {
    let mut tasks: Vec<(String, String)> = vec![
        ("time__get_current_time".into(), r#"{"timezone": "UTC"}"#.into()),
        ("everything__echo".into(), r#"{"message": "hello"}"#.into()),
        (
            "filesystem__list_directory".into(),
            format!(r#"{{"path": "{folder}"}}"#),
        ),
        ("memory__read_graph".into(), "{}".into()),
        ("git__git_status".into(), format!(r#"{{"repo_path": "{folder}"}}"#)),
        ("everything__get-sum".into(), r#"{"a": 2, "b": 3}"#.into()),
        (
            "time__convert_time".into(),
            r#"{"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Paris"}"#
                .into(),
        ),
        (
            "memory__create_entities".into(),
            r#"{"entities": [{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}]}"#
                .into(),
        ),
        (
            "git__git_diff_unstaged".into(),
            format!(r#"{{"repo_path": "{folder}"}}"#),
        ),
        (
            "filesystem__list_allowed_directories".into(),
            "{}".into(),
        ),
    ];
    // Ten more among the generated servers' tools.
    for (i, (server, tool)) in [
        ("gen1", "create_invoice_0"),
        ("gen2", "archive_order_29"),
        ("gen3", "delete_alert_50"),
        ("gen4", "export_invoice_70"),
        ("gen5", "sync_user_87"),
        ("gen1", "list_ticket_9"),
        ("gen2", "get_order_28"),
        ("gen3", "update_alert_51"),
        ("gen4", "create_invoice_64"),
        ("gen5", "get_forecast"),
    ]
    .into_iter()
    .enumerate()
    {
        tasks.push((
            format!("{server}__{tool}"),
            format!(r#"{{"text": "task {i}"}}"#),
        ));
    }
    tasks
}

/// The words a model would search with for `wire`: its tool's name, split.
fn search_words(wire: &str) -> String {
    let tool = wire.split_once("__").map_or(wire, |(_, t)| t);
    tool.split('_')
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A model that does the task its newest question names: "Task: <wire name> <arguments>".
fn model() -> scripted::Reply {
    Box::new(move |_, _, request| {
        let body = scripted::body_of(request);
        let names = scripted::tool_names(&body);
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let question = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let (wire, arguments) = question
            .strip_prefix("Task: ")
            .and_then(|t| t.split_once(' '))
            .unwrap_or(("", "{}"));
        // What this turn did so far: the tool messages after the question.
        let asked_at = messages
            .iter()
            .rposition(|m| m["role"] == "user")
            .unwrap_or(0);
        let called = |name: &str| {
            messages[asked_at..].iter().any(|m| {
                m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["function"]["name"] == name)
            })
        };
        let id = format!("call_{}", messages.len());
        let call = |name: &str, arguments: &str| scripted::calling(&id, name, arguments);
        if called(wire) {
            return scripted::saying("Done.");
        }
        if names.contains(&wire) {
            return call(wire, arguments);
        }
        if names.contains(&"switchboard__search_tools") && !called("switchboard__search_tools") {
            let query = serde_json::json!({"query": search_words(wire)}).to_string();
            return call("switchboard__search_tools", &query);
        }
        scripted::saying("Not found.")
    })
}

async fn start(app: &switchboard_core::App, name: &str, program: &str, args: &[&str]) {
    app.host()
        .spawn(
            name,
            support::stdio_launch(program, args, Duration::from_secs(60)),
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(90);
    while !matches!(
        app.host().states().get(name),
        Some(switchboard_core::mcp::host::ServerState::Running { .. })
    ) {
        assert!(
            Instant::now() < deadline,
            "{name}: {:?}",
            app.host().states()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Tokens of `bytes` bytes of request: four to a token.
fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

async fn tokens_per_task() {
    let home = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let repo = folder.path().to_str().unwrap().to_owned();
    std::process::Command::new("git")
        .args(["init", "-q", &repo])
        .status()
        .unwrap();
    std::fs::write(folder.path().join("notes.txt"), "a file to list").unwrap();
    let (app, server) = scripted::app_with_reading_model(home.path(), model()).await;
    let peers = support::peers();
    let bin = |p: &str| peers.join(p).to_string_lossy().into_owned();
    start(
        &app,
        "everything",
        &bin("node_modules/.bin/mcp-server-everything"),
        &["stdio"],
    )
    .await;
    start(
        &app,
        "filesystem",
        &bin("node_modules/.bin/mcp-server-filesystem"),
        &[&repo],
    )
    .await;
    start(
        &app,
        "memory",
        &bin("node_modules/.bin/mcp-server-memory"),
        &[],
    )
    .await;
    start(&app, "time", &bin(".venv/bin/mcp-server-time"), &[]).await;
    start(&app, "git", &bin(".venv/bin/mcp-server-git"), &[]).await;
    let python = bin(".venv/bin/python");
    let raw = bin("raw_server.py");
    for n in 1..=5 {
        let offset = ((n - 1) * 20).to_string();
        start(
            &app,
            &format!("gen{n}"),
            &python,
            &[&raw, "--many", "20", "--offset", &offset],
        )
        .await;
    }
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let (offered, _) = app.conversation_catalogue(&conversation).await.unwrap();
    let every_tool: Vec<Value> = offered
        .iter()
        .map(|t| {
            let spec = switchboard_core::agent::tools::spec(t);
            serde_json::json!({"type": "function", "function": {
                "name": spec.name, "description": spec.description, "parameters": spec.parameters
            }})
        })
        .collect();
    let every_tool_bytes = serde_json::to_string(&every_tool).unwrap().len();
    let servers = offered
        .iter()
        .map(|t| t.server.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();

    let every = Every { tools: every_tool };
    println!(
        "### Tokens sent per task ({servers} servers, {} tools, 20 tasks each)\n",
        offered.len()
    );
    println!(
        "Every tool's definitions take {} tokens of a request.\n",
        tokens(every_tool_bytes)
    );
    println!("| workload | requests | prompt tokens (bytes ÷ 4) | per task | ratio | tasks done |");
    println!("|---|---:|---:|---:|---:|---:|");
    let distinct = tasks(&repo);
    workload(
        "20 tasks, 20 different tools",
        &app,
        &server,
        &distinct,
        &every,
    )
    .await;
    // The same servers, a new conversation: 20 tasks over 5 tools, as a day's work reuses them.
    let reused: Vec<(String, String)> = (0..20)
        .map(|i| distinct[[0, 2, 3, 1, 10][i % 5]].clone())
        .collect();
    workload("20 tasks over 5 tools", &app, &server, &reused, &every).await;
    app.shutdown(Duration::from_secs(5)).await;
}

/// Every tool's definition as a request offering them all carries it.
struct Every {
    tools: Vec<Value>,
}

/// Runs `tasks` in a new conversation and prints its row: the prompt tokens its requests
/// carried beside what the same tasks take offering every tool.
async fn workload(
    title: &str,
    app: &Arc<switchboard_core::App>,
    server: &scripted::Server,
    tasks: &[(String, String)],
    every: &Every,
) {
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let before = server.requests().len();
    let mut done = 0;
    for (wire, arguments) in tasks {
        let events = scripted::one_turn(
            app,
            &conversation,
            &format!("Task: {wire} {arguments}"),
            Decision::AllowOnce,
        )
        .await;
        let finished = matches!(
            events.last(),
            Some(RunEvent::RunFinished {
                reason: StopReason::Completed,
                ..
            })
        );
        let ok = events.iter().any(|e| {
            matches!(e, RunEvent::ToolFinished { is_error: false, call_id, .. }
                if events.iter().any(|p| matches!(p, RunEvent::ToolCallProposed { call }
                    if &call.call_id == call_id && &call.wire_name == wire)))
        });
        if finished && ok {
            done += 1;
        } else {
            eprintln!("task {wire} not done: {:?}", events.last());
        }
    }
    // Every request's prompt; and the requests the same tasks make offering every tool: no
    // search (its calls and results taken out of the history, and the request that carried a
    // search's result gone), every tool's definition in each.
    let search = "switchboard__search_tools";
    let (mut sent, mut all, mut all_requests) = (0usize, 0usize, 0usize);
    let requests = server.requests();
    let requests = &requests[before..];
    for request in requests {
        let Some((_, body)) = request.split_once("\r\n\r\n") else {
            continue;
        };
        let mut parsed: Value = serde_json::from_str(body).unwrap_or_default();
        sent += tokens(body.len());
        let messages = parsed["messages"].as_array().cloned().unwrap_or_default();
        let search_calls: Vec<Value> = messages
            .iter()
            .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
            .filter(|c| c["function"]["name"] == search)
            .map(|c| c["id"].clone())
            .collect();
        if messages
            .last()
            .is_some_and(|m| search_calls.contains(&m["tool_call_id"]))
        {
            continue;
        }
        let kept: Vec<Value> = messages
            .into_iter()
            .filter(|m| !search_calls.contains(&m["tool_call_id"]))
            .filter(|m| {
                !m["tool_calls"]
                    .as_array()
                    .is_some_and(|calls| calls.iter().any(|c| c["function"]["name"] == search))
            })
            .collect();
        parsed["messages"] = Value::Array(kept);
        parsed["tools"] = Value::Array(every.tools.clone());
        all += tokens(serde_json::to_string(&parsed).unwrap_or_default().len());
        all_requests += 1;
    }
    println!(
        "| {title}, every tool offered | {all_requests} | {all} | {} | | |",
        all / tasks.len()
    );
    println!(
        "| {title}, the most-used and a search | {} | {sent} | {} | {:.3} | {done}/{} |",
        requests.len(),
        sent / tasks.len(),
        sent as f64 / all as f64,
        tasks.len()
    );
}

/// A request with about `tokens` tokens of history: turns of a question, a call and a 6 KB
/// result, and an answer.
fn long_request(tokens: usize) -> ChatRequest {
    let mut messages = Vec::new();
    let mut total = 0;
    let mut n = 0;
    while total < tokens {
        let turn = vec![
            ChatMessage::User {
                parts: vec![Part::Text(format!("Question {n}: {}", "q".repeat(400)))],
            },
            ChatMessage::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new(
                    format!("c{n}"),
                    "files__read".into(),
                    r#"{"path": "a.txt"}"#.into(),
                )],
            },
            ChatMessage::Tool {
                tool_call_id: format!("c{n}"),
                name: "files__read".into(),
                content: "r".repeat(6_000),
                is_error: false,
                images: Vec::new(),
            },
            ChatMessage::Assistant {
                text: Some(format!("Answer {n}: {}", "a".repeat(1_200))),
                tool_calls: Vec::new(),
            },
        ];
        total += turn.iter().map(fit::message_tokens).sum::<usize>();
        messages.extend(turn);
        n += 1;
    }
    ChatRequest {
        model: "m".into(),
        system: Some("You help.".into()),
        messages,
        ..ChatRequest::default()
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn budgeting_time() {
    let request = long_request(1_000_000);
    let window = 128_000u64;
    let (worst, stop) = support::stall_probe();
    let mut times = Vec::new();
    let mut kept = 0;
    for _ in 0..101 {
        let started = Instant::now();
        let total = fit::request_tokens(&request);
        let room = fit::budget(window);
        if total > room {
            kept = fit::keep_from(&request.messages, room / 10 * fit::KEEP_TENTHS).unwrap_or(0);
        }
        let fitted = fit::results_to_share(
            &request,
            switchboard_core::mcp::results::share_of_window(window),
        );
        std::hint::black_box((total, &fitted));
        times.push(started.elapsed());
    }
    // Counting it: once cold (every text tokenised), then as each later round does (the counts
    // kept by each text's hash).
    let mut counter = switchboard_core::agent::tokens::Counter::for_model("gpt-4o");
    let started = Instant::now();
    let counted = counter.measure(&request, Some(window));
    let cold = started.elapsed();
    let mut warm = Vec::new();
    for _ in 0..101 {
        let started = Instant::now();
        std::hint::black_box(counter.measure(&request, Some(window)));
        warm.push(started.elapsed());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let stalls = *worst.lock().unwrap();
    println!("### Budgeting one request with 1M tokens of history\n");
    println!(
        "{} messages, {} estimated tokens, a window of {window}: the request may begin at message {kept}.\n",
        request.messages.len(),
        fit::request_tokens(&request)
    );
    println!(
        "| fitting, median of 101 | counting with o200k_base, first | counting, each later round (median of 101) | worst machine stall beside them |\n|---:|---:|---:|---:|\n| {:.3} ms | {:.1} ms | {:.3} ms | {:.3} ms |\n",
        median(times).as_secs_f64() * 1000.0,
        cold.as_secs_f64() * 1000.0,
        median(warm).as_secs_f64() * 1000.0,
        stalls.as_secs_f64() * 1000.0
    );
    println!(
        "Counted: {} tokens (the estimate said {}).\n",
        counted.tokens,
        fit::request_tokens(&request)
    );
}

#[tokio::main]
async fn main() {
    if !support::mcp_peers_installed("the windows bench") {
        return;
    }
    budgeting_time();
    tokens_per_task().await;
}
