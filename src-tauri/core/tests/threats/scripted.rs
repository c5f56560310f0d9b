//! A local HTTP server whose every answer is scripted: it binds port 0 (its port is read back,
//! never probed), records each request (head and body), and closes each connection after
//! answering. And an app whose model is such a server (OpenAI's streamed chat format), and a
//! stand-in for the person answering questions outside the webview.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use switchboard_core::policy::confirm::{Allowance, Confirm, ServerApprovalRequest, ToolChange};
use switchboard_core::secrets::{MemoryStore, SecretStore};
use switchboard_core::store::Store;
use switchboard_core::{App, AppPaths};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// What a scripted server answers a request (method, path): status, extra headers, body.
pub type Answer = Box<dyn Fn(&str, &str) -> (u16, Vec<(String, String)>, String) + Send + Sync>;

/// A local HTTP server (port 0, read back) that records each request and answers it.
pub struct Server {
    pub origin: String,
    requests: Arc<Mutex<Vec<String>>>,
}

/// What a scripted server answers a request (method, path, the whole request as text: head
/// and body), for a script that reads what it was sent.
pub type Reply = Box<dyn Fn(&str, &str, &str) -> Answered + Send + Sync>;

/// An answer: status, extra headers, body.
pub type Answered = (u16, Vec<(String, String)>, String);

/// The JSON body of a request as the scripted server records it (`Null` without one).
#[allow(dead_code)] // the tool loop's tests read what their model was sent; these do not
pub fn body_of(request: &str) -> Value {
    request
        .split_once("\r\n\r\n")
        .and_then(|(_, body)| serde_json::from_str(body).ok())
        .unwrap_or_default()
}

/// The names of the tools a request's body offers (OpenAI's shape, or Anthropic's).
#[allow(dead_code)] // as `body_of`
pub fn tool_names(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            t["function"]["name"]
                .as_str()
                .or_else(|| t["name"].as_str())
        })
        .collect()
}

/// An app, the scripted model it talks to, a conversation of its, and the home it lives in
/// (removed when dropped).
#[allow(dead_code)] // used by the window tests only
pub type Scene = (Arc<App>, Server, String, tempfile::TempDir);

/// A streamed answer (OpenAI's shape) that calls `name` with `arguments` (JSON text) as `id`.
pub fn calling(id: &str, name: &str, arguments: &str) -> Answered {
    let call = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
        "index": 0, "id": id, "type": "function",
        "function": {"name": name, "arguments": arguments}
    }]}}]});
    sse(&[call, stop("tool_calls")])
}

/// A streamed answer (OpenAI's shape) that says `text`.
pub fn saying(text: &str) -> Answered {
    let text = serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]});
    sse(&[text, stop("stop")])
}

pub async fn server(answer: Answer) -> Server {
    reading_server(Box::new(move |method, path, _| answer(method, path))).await
}

/// A scripted server whose answer reads the request.
pub async fn reading_server(answer: Reply) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&requests);
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let record = Arc::clone(&record);
            let answer = Arc::clone(&answer);
            tokio::spawn(async move {
                let Some(buf) = crate::support::read_request(&mut socket).await else {
                    return;
                };
                let head = String::from_utf8_lossy(&buf);
                let mut words = head.split_whitespace();
                let (method, path) = (
                    words.next().unwrap_or("").to_owned(),
                    words.next().unwrap_or("").to_owned(),
                );
                let request = String::from_utf8_lossy(&buf).into_owned();
                let (status, headers, body) = answer(&method, &path, &request);
                record.lock().unwrap().push(request);
                let mut out = format!(
                    "HTTP/1.1 {status} Scripted\r\nconnection: close\r\ncontent-length: {}\r\n",
                    body.len()
                );
                for (name, value) in headers {
                    out.push_str(&format!("{name}: {value}\r\n"));
                }
                out.push_str("\r\n");
                out.push_str(&body);
                let _ = socket.write_all(out.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    Server { origin, requests }
}

impl Server {
    /// Every request so far, head and body, as text.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// A 200 answer streaming `chunks` as OpenAI's server-sent events, then `[DONE]`.
pub fn sse(chunks: &[Value]) -> (u16, Vec<(String, String)>, String) {
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    (
        200,
        vec![("content-type".into(), "text/event-stream".into())],
        body,
    )
}

/// The chunk that ends an answer with `reason`.
pub fn stop(reason: &str) -> Value {
    serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// An app in `home` with its database and keys in memory; the keys are returned to look at.
pub async fn memory_app(home: &std::path::Path) -> (Arc<App>, Arc<MemoryStore>) {
    let paths = AppPaths::under_home(home.to_path_buf());
    paths.create_all().unwrap();
    let secrets = Arc::new(MemoryStore::default());
    // Provider clients as the app has them (time limits and retries), not the tests' short ones.
    let app = App::with_store(
        Store::open_in_memory().unwrap(),
        switchboard_core::AppConfig {
            http: switchboard_core::providers::HttpOptions::default(),
            ..crate::support::headless_config(paths, Arc::clone(&secrets) as Arc<dyn SecretStore>)
        },
    )
    .await;
    (app, secrets)
}

/// An app (in `home`, keys in memory) whose one provider, "Hostile", is a scripted server
/// answering with `answer`; the server is returned to read what it was sent.
pub async fn app_with_model(home: &std::path::Path, answer: Answer) -> (Arc<App>, Server) {
    app_with_reading_model(home, Box::new(move |method, path, _| answer(method, path))).await
}

/// [`app_with_model`] with a model that reads what it is sent.
pub async fn app_with_reading_model(home: &std::path::Path, answer: Reply) -> (Arc<App>, Server) {
    let model = reading_server(answer).await;
    let (app, _secrets) = memory_app(home).await;
    crate::support::add_provider(
        &app,
        "Hostile",
        "openai_compatible",
        &format!("{}/v1", model.origin),
        Some("m"),
        None,
    )
    .await;
    (app, model)
}

/// A model that calls `tool` once with `arguments` (JSON text), then answers "Done.".
pub fn calls_once(tool: &'static str, arguments: &'static str) -> Answer {
    let turn = std::sync::atomic::AtomicUsize::new(0);
    Box::new(move |_, _| {
        if turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            calling("call_1", tool, arguments)
        } else {
            saying("Done.")
        }
    })
}

/// Starts `tests/peers/raw_server.py` with `args` as the app's server `name` and waits (up to
/// 60 s) until it runs.
pub async fn raw_server(app: &App, name: &str, args: &[&str]) {
    let python = crate::support::peers().join(".venv/bin/python");
    let script = crate::support::peers().join("raw_server.py");
    let mut all = vec![script.to_str().unwrap()];
    all.extend_from_slice(args);
    app.host()
        .spawn(
            name,
            crate::support::stdio_launch(
                python.to_str().unwrap(),
                &all,
                std::time::Duration::from_secs(30),
            ),
        )
        .await;
    crate::support::server_running(app.host(), name).await;
}

/// One turn of `conversation` in `app` that sends `text`, every call answered `decision`:
/// everything the window heard, to the run's end.
pub async fn one_turn(
    app: &Arc<App>,
    conversation: &str,
    text: &str,
    decision: switchboard_core::agent::Decision,
) -> Vec<switchboard_core::events::RunEvent> {
    let seen = Arc::new(crate::support::Seen::default());
    app.start_turn_answered_by(
        switchboard_core::app::TurnRequest {
            conversation_id: conversation.to_owned(),
            text: Some(text.into()),
            ..Default::default()
        },
        seen.clone(),
        Arc::new(switchboard_core::agent::FixedApprover(decision)),
    )
    .await
    .unwrap();
    seen.wait_for("run_finished", 1).await;
    let events = seen.0.lock().unwrap().clone();
    events
}

/// Runs `switchboard chat` against the "Hostile" provider, tools off and every call denied,
/// with `extra` arguments before the prompt; returns what it printed.
pub async fn chat(app: &Arc<App>, extra: &[&str], prompt: &str) -> String {
    let mut args = vec![
        "chat",
        "--provider",
        "Hostile",
        "--tools",
        "none",
        "--approve",
        "none",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    let mut out = Vec::new();
    switchboard_core::cli::run_with(app, &args, &mut out)
        .await
        .unwrap();
    String::from_utf8(out).unwrap()
}

/// Runs the command line with `args` in `app`; each line it printed, as JSON.
#[allow(dead_code)] // as `body_of`
pub async fn chat_lines(app: &Arc<App>, args: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    switchboard_core::cli::run_with(app, args, &mut out)
        .await
        .unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The person, asked outside the webview: says `answer` to every [`Allowance`] (and no to the
/// rest) and keeps what it was asked.
pub struct Asked {
    answer: bool,
    seen: Mutex<Vec<Allowance>>,
}

impl Asked {
    pub fn new(answer: bool) -> Arc<Asked> {
        Arc::new(Asked {
            answer,
            seen: Mutex::default(),
        })
    }

    pub fn seen(&self) -> Vec<Allowance> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Confirm for Asked {
    async fn approve_server(&self, _: &ServerApprovalRequest) -> bool {
        false
    }

    async fn accept_tool(&self, _: &ToolChange) -> bool {
        false
    }

    async fn allow(&self, allowance: &Allowance) -> bool {
        self.seen.lock().unwrap().push(allowance.clone());
        self.answer
    }
}
