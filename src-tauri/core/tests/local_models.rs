//! Local models (issue 58) against a scripted Ollama: what its listing says of each model
//! (details, tool calling, images) reaches the person and decides how the model is given
//! tools; a model is pulled with progress and can be cancelled and removed; the first answer
//! of a model not loaded says so; `keep_alive` and `num_ctx` go with each answer.

mod support;

#[path = "threats/scripted.rs"]
#[allow(dead_code)]
mod scripted;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::providers::ProviderError;
use switchboard_core::secrets::MemoryStore;
use switchboard_core::{App, AppPaths, CoreError};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// A scripted Ollama on port 0: its models are `llama3.2` (calls tools, loaded) and
/// `smollm2:135m` (no tool calling, not loaded: its answers wait until `/api/ps` is asked); a pull of `slow` streams a step every 50 ms
/// for ten seconds, of anything else twelve steps 0.1 s apart and `success`, of `missing` an error line.
struct Ollama {
    origin: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Ollama {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let record = Arc::clone(&record);
                tokio::spawn(async move {
                    let Some(buf) = support::read_request(&mut socket).await else {
                        return;
                    };
                    let request = String::from_utf8_lossy(&buf).into_owned();
                    record.lock().unwrap().push(request.clone());
                    let mut words = request.split_whitespace();
                    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
                    let body: Value = request
                        .split_once("\r\n\r\n")
                        .and_then(|(_, b)| serde_json::from_str(b).ok())
                        .unwrap_or_default();
                    // `smollm2:135m` is not loaded: its answer waits until the client asks
                    // whether it is loading (it does when no word came for a while), as a
                    // model being loaded would.
                    if path == "/api/chat"
                        && body["model"] == "smollm2:135m"
                        && !body["tools"].is_array()
                    {
                        let asked = |r: &Vec<String>| {
                            r.iter().filter(|r| r.starts_with("GET /api/ps")).count()
                        };
                        let before = asked(&record.lock().unwrap());
                        for _ in 0..500 {
                            if asked(&record.lock().unwrap()) > before {
                                break;
                            }
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    }
                    let head = |status: u16, kind: &str| {
                        format!("HTTP/1.1 {status} Scripted\r\nconnection: close\r\ncontent-type: {kind}\r\n\r\n")
                    };
                    let whole = |status: u16, text: String| {
                        format!("{}{text}", head(status, "application/json"))
                    };
                    let answer = match (method, path) {
                        ("GET", "/api/tags") => whole(200, tags().to_string()),
                        ("POST", "/api/show") => whole(200, show(&body).to_string()),
                        ("GET", "/api/ps") => whole(
                            200,
                            json!({"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest"}]})
                                .to_string(),
                        ),
                        // `smollm2:135m` refuses tools in the API, as Ollama does; given them
                        // by prompt, it calls `raw__echo` in text once, then answers.
                        ("POST", "/api/chat")
                            if body["model"] == "smollm2:135m" && body["tools"].is_array() =>
                        {
                            whole(
                                400,
                                json!({"error": "registry.ollama.ai/library/smollm2:135m does not support tools"})
                                    .to_string(),
                            )
                        }
                        // Held to a call's schema, the answer is the call's JSON.
                        ("POST", "/api/chat") if body["format"].is_object() => {
                            let call = json!({"name": "raw__echo", "arguments": {"text": "hi"}}).to_string();
                            let line = json!({"model": body["model"], "message": {"role": "assistant", "content": call}, "done": true, "done_reason": "stop"});
                            format!("{}{line}\n", head(200, "application/x-ndjson"))
                        }
                        ("POST", "/api/chat") => {
                            let asked = body["messages"].to_string();
                            let answered = asked.contains("<tool_result name=");
                            let content = if asked.contains("# Tools") && !answered {
                                "<tool_call>{\"name\": \"raw__echo\", \"arguments\": {\"text\": \"hi\"}}</tool_call>"
                            } else if answered {
                                "The server said hi back."
                            } else {
                                "Hello."
                            };
                            let line = json!({"model": body["model"], "message": {"role": "assistant", "content": content}, "done": true, "done_reason": "stop"});
                            format!("{}{line}\n", head(200, "application/x-ndjson"))
                        }
                        ("DELETE", "/api/delete") if body["model"] == "gone" => {
                            whole(404, json!({"error": "model 'gone' not found"}).to_string())
                        }
                        ("DELETE", "/api/delete") => whole(200, String::new()),
                        ("POST", "/api/pull") => {
                            let model = body["model"].as_str().unwrap_or_default().to_owned();
                            let _ = socket
                                .write_all(head(200, "application/x-ndjson").as_bytes())
                                .await;
                            pull(&mut socket, &model).await;
                            return;
                        }
                        _ => whole(404, json!({"error": "not found"}).to_string()),
                    };
                    let _ = socket.write_all(answer.as_bytes()).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        Self { origin, requests }
    }

    fn requests_to(&self, head: &str) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.starts_with(head))
            .map(|r| {
                r.split_once("\r\n\r\n")
                    .and_then(|(_, b)| serde_json::from_str(b).ok())
                    .unwrap_or_default()
            })
            .collect()
    }
}

fn tags() -> Value {
    json!({"models": [
        {"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 2_019_393_189_u64,
         "details": {"format": "gguf", "family": "llama", "parameter_size": "3.2B", "quantization_level": "Q4_K_M"}},
        {"name": "smollm2:135m", "model": "smollm2:135m", "size": 270_898_672_u64,
         "details": {"format": "gguf", "family": "llama", "parameter_size": "134.52M", "quantization_level": "F16"}}
    ]})
}

fn show(body: &Value) -> Value {
    match body["model"].as_str() {
        Some("llama3.2:latest") => json!({
            "capabilities": ["completion", "tools"],
            "model_info": {"general.architecture": "llama", "llama.context_length": 131_072}
        }),
        _ => json!({
            "capabilities": ["completion"],
            "parameters": "num_ctx 8192",
            "model_info": {"general.architecture": "llama", "llama.context_length": 8192}
        }),
    }
}

async fn pull(socket: &mut tokio::net::TcpStream, model: &str) {
    let mut lines = vec![json!({"status": "pulling manifest"})];
    let total = 1_000_000_u64;
    let steps: u64 = if model == "slow" { 200 } else { 12 };
    if model == "missing" {
        lines.push(json!({"error": "pull model manifest: file does not exist"}));
    } else {
        lines.extend((1..=steps).map(|i| {
            json!({"status": "pulling 6a0746a1ec1a", "digest": "sha256:6a0746a1ec1a",
                   "total": total, "completed": total * i / steps})
        }));
        lines.push(json!({"status": "verifying sha256 digest"}));
        lines.push(json!({"status": "success"}));
    }
    for line in lines {
        if socket
            .write_all(format!("{line}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(if model == "slow" {
            50
        } else {
            100
        }))
        .await;
    }
    let _ = socket.shutdown().await;
}

async fn app_with_ollama() -> (Arc<App>, Ollama, tempfile::TempDir) {
    let ollama = Ollama::start().await;
    let dir = tempfile::tempdir().unwrap();
    let app = App::open(support::headless_config(
        AppPaths::under_home(dir.path().to_path_buf()),
        Arc::new(MemoryStore::new()),
    ))
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
    (app, ollama, dir)
}

/// How `model` of "Local" is given tools, as the window reads it.
async fn mode_of(app: &App, model: &str) -> Value {
    serde_json::to_value(app.providers().tool_mode("Local", model).await.unwrap()).unwrap()
}

async fn cli(app: &Arc<App>, args: &[&str]) -> (Result<(), String>, String) {
    support::run_cli(
        Arc::clone(app),
        args.iter().map(|a| (*a).to_owned()).collect(),
    )
    .await
}

#[tokio::test]
async fn a_local_models_details_and_tool_calling_come_from_ollama_and_decide_how_it_gets_tools() {
    let (app, _ollama, _dir) = app_with_ollama().await;
    let (ran, out) = cli(&app, &["provider", "models", "Local", "--json"]).await;
    ran.unwrap();
    let models: Vec<Value> = serde_json::from_str(&out).unwrap();
    let llama = &models[0];
    assert_eq!(llama["id"], "llama3.2:latest");
    assert_eq!(
        llama["local"],
        json!({"size_bytes": 2_019_393_189_u64, "family": "llama", "parameters": "3.2B", "quantisation": "Q4_K_M"})
    );
    assert_eq!(llama["takes_tools"], true);
    assert_eq!(
        llama["window"], 16_384,
        "its trained window, up to the planned one"
    );
    let smol = &models[1];
    assert_eq!(smol["takes_tools"], false);
    assert_eq!(smol["takes_images"], false);
    assert_eq!(smol["window"], 8192);
    // A person reads the same on a line of text.
    let (_, text) = cli(&app, &["provider", "models", "Local"]).await;
    assert!(
        text.contains(
            "smollm2:135m\t270.9 MB · llama · 134.52M · F16 · 8192 tokens · no tool calling"
        ),
        "{text}"
    );
    // The model that calls no tools is given them by prompt; the other natively. Learned, so
    // the person's word still wins.
    assert_eq!(
        mode_of(&app, "smollm2:135m").await,
        json!({"mode": "prompted", "source": "learned", "automatic": "prompted"})
    );
    let (_, said) = cli(
        &app,
        &["provider", "tools", "Local", "llama3.2:latest", "--json"],
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&said).unwrap(),
        json!({"mode": "native", "source": "learned", "automatic": "native"})
    );
    cli(&app, &["provider", "tools", "Local", "smollm2:135m", "off"])
        .await
        .0
        .unwrap();
    cli(&app, &["provider", "models", "Local"]).await.0.unwrap();
    assert_eq!(
        mode_of(&app, "smollm2:135m").await,
        json!({"mode": "off", "source": "person", "automatic": "prompted"})
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_model_is_pulled_with_progress_and_its_pull_can_be_cancelled() {
    let (app, _ollama, _dir) = app_with_ollama().await;
    // The command line's --json: one step per line, the last `success`.
    let (ran, out) = cli(&app, &["provider", "pull", "Local", "qwen3:0.6b", "--json"]).await;
    ran.unwrap();
    let steps: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(steps[0], json!({"status": "pulling manifest"}));
    assert_eq!(steps.last().unwrap(), &json!({"status": "success"}));
    // Steps of one status at most every 0.1 s (these come every 0.1 s; a stalled reader may
    // get two at once and report one), each with the bytes so far, rising.
    let downloading: Vec<&Value> = steps.iter().filter(|s| s["total"].is_u64()).collect();
    assert!(downloading.len() >= 2, "{out}");
    assert!(downloading
        .windows(2)
        .all(|w| w[0]["completed"].as_u64() < w[1]["completed"].as_u64()));
    // Speed and time left once two samples are 0.2 s apart (steps come 0.1 s apart).
    assert!(
        downloading
            .iter()
            .any(|s| s["bytes_per_second"].as_f64() > Some(0.0)),
        "{out}"
    );

    // Cancelled part way: the pull ends as cancelled and is forgotten.
    let providers = app.providers().clone();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let pulling = tokio::spawn(async move {
        providers
            .pull_model("Local", "slow", move |step| {
                kept.lock().unwrap().push(step.clone());
            })
            .await
    });
    tokio::time::timeout(Duration::from_secs(10), async {
        while seen.lock().unwrap().len() < 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the pull reports steps as they come");
    // A second pull of the same model is refused while the first runs.
    let twice = app
        .providers()
        .pull_model("Local", "slow", |_| {})
        .await
        .unwrap_err();
    assert!(
        twice.to_string().contains("already being fetched"),
        "{twice}"
    );
    assert!(app.providers().cancel_pull("Local", "slow"));
    let ended = tokio::time::timeout(Duration::from_secs(5), pulling)
        .await
        .expect("a cancelled pull ends at once")
        .unwrap();
    assert!(
        matches!(ended, Err(CoreError::Provider(ProviderError::Cancelled))),
        "{ended:?}"
    );
    assert!(seen.lock().unwrap().len() < 100, "it stopped part way");
    assert!(!app.providers().cancel_pull("Local", "slow"), "forgotten");

    // The server's error line is the pull's error.
    let (missing, _) = cli(&app, &["provider", "pull", "Local", "missing"]).await;
    assert!(
        missing.unwrap_err().contains("file does not exist"),
        "the server's words"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_model_is_removed_and_a_server_that_cannot_fetch_says_so() {
    let (app, ollama, _dir) = app_with_ollama().await;
    let (ran, out) = cli(&app, &["provider", "rm", "Local", "smollm2:135m", "--json"]).await;
    ran.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"removed": "smollm2:135m", "provider": "Local"})
    );
    assert_eq!(
        ollama.requests_to("DELETE /api/delete"),
        vec![json!({"model": "smollm2:135m"})]
    );
    let (gone, _) = cli(&app, &["provider", "rm", "Local", "gone"]).await;
    assert!(gone.unwrap_err().contains("not found"));
    // An OpenAI-compatible server (llama.cpp, LM Studio, vLLM) has no pull.
    support::add_provider(
        &app,
        "Llama",
        "openai_compatible",
        &format!("{}/v1", ollama.origin),
        Some("m"),
        None,
    )
    .await;
    let (cannot, _) = cli(&app, &["provider", "pull", "Llama", "m"]).await;
    assert!(
        cannot.unwrap_err().contains("cannot fetch models"),
        "said plainly"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_model_not_loaded_says_it_is_loading_and_keep_alive_goes_with_each_answer() {
    let (app, ollama, _dir) = app_with_ollama().await;
    let mut settings = app.settings();
    settings.keep_alive = "30m".into();
    app.update_settings(settings, &switchboard_core::policy::confirm::Always(false))
        .await
        .unwrap();
    let chat = |model: &'static str| {
        let app = Arc::clone(&app);
        async move {
            cli(
                &app,
                &[
                    "chat",
                    "--provider",
                    "Local",
                    "--model",
                    model,
                    "--json",
                    "Hi",
                ],
            )
            .await
        }
    };
    let (ran, loading) = chat("smollm2:135m").await;
    ran.unwrap();
    assert!(loading.contains("Loading the model…"), "{loading}");
    let (ran, loaded) = chat("llama3.2").await;
    ran.unwrap();
    assert!(!loaded.contains("Loading the model…"), "{loaded}");
    let bodies = ollama.requests_to("POST /api/chat");
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(body["keep_alive"], "30m", "{body}");
    }
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_model_whose_server_refuses_tools_is_given_them_by_prompt_and_it_is_remembered() {
    if !support::mcp_peers_installed("a_model_whose_server_refuses_tools_is_given_them_by_prompt") {
        return;
    }
    let (app, ollama, _dir) = app_with_ollama().await;
    scripted::raw_server(&app, "raw", &[]).await;
    let (ran, out) = cli(
        &app,
        &[
            "chat",
            "--provider",
            "Local",
            "--model",
            "smollm2:135m",
            "--approve",
            "all",
            "--json",
            "Say hi to the server",
        ],
    )
    .await;
    ran.unwrap();
    assert!(
        out.contains("does not call tools through its API: describing them in its prompt"),
        "the person is told: {out}"
    );
    assert!(out.contains("The server said hi back."), "{out}");
    let bodies = ollama.requests_to("POST /api/chat");
    assert_eq!(
        bodies.len(),
        3,
        "refused, asked again by prompt, then the answer: {bodies:#?}"
    );
    assert!(bodies[0]["tools"].is_array());
    for later in &bodies[1..] {
        assert!(later["tools"].is_null(), "{later}");
        assert!(later["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("# Tools"));
    }
    // Remembered as learned: the next run prompts from its start.
    assert_eq!(
        mode_of(&app, "smollm2:135m").await,
        json!({"mode": "prompted", "source": "learned", "automatic": "prompted"})
    );
    cli(
        &app,
        &[
            "chat",
            "--provider",
            "Local",
            "--model",
            "smollm2:135m",
            "--approve",
            "all",
            "Again",
        ],
    )
    .await
    .0
    .unwrap();
    let bodies = ollama.requests_to("POST /api/chat");
    assert!(bodies[3]["tools"].is_null(), "{}", bodies[3]);
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_required_call_of_a_prompted_ollama_model_is_held_to_a_json_schema_and_run() {
    if !support::mcp_peers_installed("a_required_call_of_a_prompted_ollama_model") {
        return;
    }
    let (app, ollama, _dir) = app_with_ollama().await;
    scripted::raw_server(&app, "raw", &[]).await;
    cli(
        &app,
        &["provider", "tools", "Local", "smollm2:135m", "prompted"],
    )
    .await
    .0
    .unwrap();
    let (ran, out) = cli(
        &app,
        &[
            "chat",
            "--provider",
            "Local",
            "--model",
            "smollm2:135m",
            "--approve",
            "all",
            "--require-tool",
            "--json",
            "Say hi to the server",
        ],
    )
    .await;
    ran.unwrap();
    assert!(out.contains("The server said hi back."), "{out}");
    assert!(
        !out.contains("<tool_call>"),
        "the markup never shows: {out}"
    );
    let bodies = ollama.requests_to("POST /api/chat");
    // The first answer: held to the one tool's call, its arguments to the tool's schema.
    assert_eq!(
        bodies[0]["format"]["properties"]["name"],
        json!({"const": "raw__echo"})
    );
    assert_eq!(
        bodies[0]["format"]["properties"]["arguments"]["properties"]["text"],
        json!({"type": "string"})
    );
    // The answer after the result may be prose: not held.
    assert!(bodies[1]["format"].is_null(), "{}", bodies[1]);
    let calls: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("\"tool_call_proposed\""))
        .collect();
    assert_eq!(calls.len(), 1, "{out}");
    app.shutdown(Duration::from_secs(5)).await;
}
