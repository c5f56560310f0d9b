//! The two protocols side by side (issue 19): a 2026-07-28 server (our fault server on the
//! Python SDK, which speaks it) and a 2025-11-25 one (server-everything as installed) in one
//! host, each spoken to in its newest version; multi round-trip requests (a form, the roots,
//! sampling refused, the request state sent back untouched, a server that never stops
//! asking); and a form that takes 70 s of the person's thinking under a 5 s idle limit, on
//! both protocols, without the call timing out.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use switchboard_core::mcp::client::Roots;
use switchboard_core::mcp::elicitation::{
    Elicitation, ElicitationAnswer, ElicitationRequest, Elicitor, FieldKind,
};
use switchboard_core::mcp::server::{CallLimits, McpServer};
use switchboard_core::mcp::stdio::{self, StdioLaunch};
use tokio_util::sync::CancellationToken;

use support::{mcp_peers_installed, peers, stdio_launch};

/// A person who sends each form with its defaults after thinking for `think`.
struct Thinker {
    think: Duration,
    asked: AtomicUsize,
}

impl Elicitor for Thinker {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let think = self.think;
        Box::pin(async move {
            tokio::time::sleep(think).await;
            match request.check(&filled(&request)) {
                Ok(content) => ElicitationAnswer::Accept { content },
                Err(_) => ElicitationAnswer::Cancel,
            }
        })
    }
}

/// The form's defaults, and a plain answer for each required field without one.
fn filled(request: &ElicitationRequest) -> Map<String, Value> {
    let mut content = request.defaults();
    for field in request.fields.iter().filter(|f| f.required) {
        if content.contains_key(&field.name) {
            continue;
        }
        let value = match &field.kind {
            FieldKind::Text { format, .. } => match *format {
                Some("email") => json!("ada@example.com"),
                Some("uri") => json!("https://example.com"),
                Some("date") => json!("1815-12-10"),
                Some(_) => json!("1815-12-10T00:00:00Z"),
                None => json!("Ada Lovelace"),
            },
            FieldKind::Number { minimum, .. } => json!(minimum.unwrap_or(1.0).max(1.0) as i64),
            FieldKind::Boolean => json!(true),
            FieldKind::Choice { options } => json!(options[0].value),
            FieldKind::MultiChoice { options, .. } => json!([options[0].value]),
        };
        content.insert(field.name.clone(), value);
    }
    content
}

fn thinker(think: Duration) -> Arc<Thinker> {
    Arc::new(Thinker {
        think,
        asked: AtomicUsize::new(0),
    })
}

fn with_person(mut launch: StdioLaunch, person: &Arc<Thinker>) -> StdioLaunch {
    launch.elicitation = Elicitation(Some(Arc::clone(person) as Arc<dyn Elicitor>));
    launch
}

fn fault_server() -> StdioLaunch {
    let script = peers().join("fault_server.py");
    stdio_launch(
        &peers().join(".venv/bin/python").to_string_lossy(),
        &[&script.to_string_lossy()],
        Duration::from_secs(20),
    )
}

fn everything() -> StdioLaunch {
    stdio_launch(
        &peers()
            .join("node_modules/.bin/mcp-server-everything")
            .to_string_lossy(),
        &["stdio"],
        Duration::from_secs(20),
    )
}

fn limits(idle: Duration) -> CallLimits {
    CallLimits {
        idle,
        hard_max: idle * 4,
    }
}

async fn call(
    server: &McpServer,
    tool: &str,
    arguments: Value,
    idle: Duration,
) -> Result<String, String> {
    let arguments: Map<String, Value> = arguments.as_object().cloned().unwrap_or_default();
    server
        .call_tool_limited(
            tool,
            arguments,
            limits(idle),
            &CancellationToken::new(),
            None,
        )
        .await
        .map(|result| serde_json::to_string(&result.content).unwrap())
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_server_is_spoken_to_in_its_newest_version_and_multi_round_trips_work() {
    if !mcp_peers_installed("each_server_is_spoken_to_in_its_newest_version") {
        return;
    }
    let person = thinker(Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let mut modern = with_person(fault_server(), &person);
    modern.roots = Roots::new(vec![dir.path().to_owned()]);
    let modern = stdio::start("faulty", modern).await.unwrap();
    let legacy = stdio::start("everything", with_person(everything(), &person))
        .await
        .unwrap();
    assert_eq!(modern.protocol().as_deref(), Some("2026-07-28"));
    assert_eq!(legacy.protocol().as_deref(), Some("2025-11-25"));

    let short = Duration::from_secs(20);
    // Both answer in one host, one after the other and at once.
    let (a, b) = tokio::join!(
        call(&modern, "echo", json!({"text": "modern"}), short),
        call(&legacy, "echo", json!({"message": "legacy"}), short),
    );
    assert!(a.unwrap().contains("modern"));
    assert!(b.unwrap().contains("legacy"));

    // A form inside an `input_required` result: shown, answered, the call sent again.
    let chose = call(&modern, "ask", json!({}), short).await.unwrap();
    assert!(
        chose.contains("the person chose staging with 2 replicas"),
        "{chose}"
    );
    assert_eq!(person.asked.load(Ordering::SeqCst), 1);

    // The roots, asked for the same way.
    let roots = call(&modern, "roots_seen", json!({}), short).await.unwrap();
    let uri = url::Url::from_directory_path(dir.path()).unwrap();
    assert!(
        roots.contains(uri.as_str().trim_end_matches('/')),
        "{roots}"
    );

    // The request state goes back as it came.
    let state = call(&modern, "stateful", json!({}), short).await.unwrap();
    assert!(state.contains("the state came back untouched"), "{state}");

    // Sampling is refused with a clear word, and the server is still there after.
    let sampled = call(&modern, "sample", json!({}), short).await.unwrap_err();
    assert!(sampled.contains("sampling"), "{sampled}");
    // A server that never stops asking is given up on, not followed forever.
    let busy = call(&modern, "busy", json!({}), short).await.unwrap_err();
    assert!(busy.contains("asked for more input"), "{busy}");
    // The call's time limit is the whole call's, over all its rounds, not each round's.
    let limited = modern
        .call_tool_limited(
            "busy",
            Map::new(),
            CallLimits {
                idle: short,
                hard_max: Duration::from_secs(1),
            },
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(limited.contains("did not answer within 1 s"), "{limited}");
    let after = call(&modern, "echo", json!({"text": "still here"}), short)
        .await
        .unwrap();
    assert!(after.contains("still here"));

    modern.stop().await;
    legacy.stop().await;
}

/// The case: the person thinks for 70 s over a form while the call's idle limit is
/// 5 s. On 2025-11-25 (server-everything's form, sent while the call waits) the call's
/// timers pause while the form is open; on 2026-07-28 (the fault server's form inside an
/// `input_required` result) no call is waiting while it is. Both calls end with the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_answered_after_seventy_seconds_does_not_time_out_its_call() {
    if !mcp_peers_installed("a_form_answered_after_seventy_seconds_does_not_time_out_its_call") {
        return;
    }
    let think = Duration::from_secs(70);
    let idle = Duration::from_secs(5);
    let person = thinker(think);
    let modern = stdio::start("faulty", with_person(fault_server(), &person))
        .await
        .unwrap();
    let legacy = stdio::start("everything", with_person(everything(), &person))
        .await
        .unwrap();
    let began = Instant::now();
    let (a, b) = tokio::join!(
        call(&modern, "ask", json!({}), idle),
        call(&legacy, "trigger-elicitation-request", json!({}), idle),
    );
    assert!(began.elapsed() >= think);
    let a = a.unwrap();
    assert!(a.contains("the person chose staging"), "{a}");
    let b = b.unwrap();
    assert!(b.contains("Ada Lovelace"), "{b}");
    assert_eq!(person.asked.load(Ordering::SeqCst), 2);

    // And a call with no form open still times out at its idle limit.
    let hung = call(&legacy, "echo", json!({"message": "ok"}), idle).await;
    assert!(hung.is_ok());
    let slow = call(
        &modern,
        "slow",
        json!({"seconds": 30}),
        Duration::from_secs(1),
    )
    .await
    .unwrap_err();
    assert!(slow.contains("1s") || slow.contains("1 s"), "{slow}");

    modern.stop().await;
    legacy.stop().await;
}

/// A step-up in the app: a running remote server refuses a call with 403 insufficient_scope.
/// The call fails saying so, the server is marked "Needs sign-in" at once (not at its next
/// start), and the challenge is kept for the sign-in to ask for the scopes it names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_for_more_scope_marks_the_server_needs_sign_in_at_once() {
    use switchboard_core::mcp::host::{McpHost, ServerState};
    use switchboard_core::mcp::remote::{RemoteLaunch, RemoteTransport};
    if !mcp_peers_installed("a_call_refused_for_more_scope_marks_the_server_needs_sign_in_at_once")
    {
        return;
    }
    let mut child = std::process::Command::new(peers().join(".venv/bin/python"))
        .arg(peers().join("step_up_server.py"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let port = support::read_until(
        child.stderr.take().unwrap(),
        "step-up: listening on 127.0.0.1:",
    )
    .expect("the step-up server listens");
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _child = Kill(child);

    let dir = tempfile::tempdir().unwrap();
    let host = McpHost::new(dir.path().join("pids.json")).await;
    host.spawn(
        "files",
        RemoteLaunch {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: Vec::new(),
            transport: RemoteTransport::Http,
            startup_timeout: Duration::from_secs(20),
            auth: None,
            elicitation: Elicitation::default(),
            roots: Roots::default(),
        },
    )
    .await;
    support::server_running(&host, "files").await;
    let server = host.server("files").unwrap();
    assert_eq!(server.protocol().as_deref(), Some("2026-07-28"));
    let short = Duration::from_secs(10);
    assert!(call(&server, "read", json!({}), short)
        .await
        .unwrap()
        .contains("read: fine"));

    let refused = call(&server, "write", json!({"text": "x"}), short)
        .await
        .unwrap_err();
    assert!(refused.contains("more permission"), "{refused}");
    let needs_sign_in = |s: &ServerState| matches!(s, ServerState::NeedsSignIn { .. });
    let at_once = Duration::from_secs(10);
    if let ServerState::NeedsSignIn { reason } =
        support::server_state_within(&host, "files", at_once, needs_sign_in).await
    {
        assert!(reason.contains("more permission"), "{reason}");
    }
    let challenge = host
        .sign_in_challenge("files")
        .expect("the challenge is kept");
    assert!(challenge.contains("files:write"), "{challenge}");
    assert!(host.server("files").is_none());
    host.shutdown(Duration::from_secs(10)).await;
}

/// Who answers a page request: records what it was shown and says it went there.
struct Visitor {
    shown: std::sync::Mutex<Vec<ElicitationRequest>>,
}

impl Elicitor for Visitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer> {
        self.shown.lock().unwrap().push(request);
        Box::pin(async {
            ElicitationAnswer::Accept {
                content: Map::new(),
            }
        })
    }
}

/// URL-mode elicitation with a real 2025-11-25 server (server-everything's
/// `trigger-url-elicitation`, offered only to a client that declares URL mode): the page is
/// shown with its host, the person's visit goes back; a page that may not be opened (not
/// https, nor http on loopback) is never shown and is declined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_asks_the_person_to_visit_a_page() {
    if !mcp_peers_installed("a_server_asks_the_person_to_visit_a_page") {
        return;
    }
    let visitor = Arc::new(Visitor {
        shown: std::sync::Mutex::default(),
    });
    let mut launch = everything();
    launch.elicitation = Elicitation(Some(Arc::clone(&visitor) as Arc<dyn Elicitor>));
    let server = stdio::start("everything", launch).await.unwrap();
    let short = Duration::from_secs(20);
    let done = call(
        &server,
        "trigger-url-elicitation",
        json!({"url": "https://pay.example.com/checkout?id=42", "message": "Pay for the upgrade"}),
        short,
    )
    .await
    .unwrap();
    assert!(
        done.contains("User completed the URL elicitation flow"),
        "{done}"
    );
    {
        let shown = visitor.shown.lock().unwrap();
        let page = shown[0].url.as_ref().expect("a page, not a form");
        assert_eq!(page.host, "pay.example.com");
        assert_eq!(page.url, "https://pay.example.com/checkout?id=42");
        assert_eq!(shown[0].message, "Pay for the upgrade");
        assert!(shown[0].fields.is_empty());
    }
    for refused in [
        "http://pay.example.com/checkout",
        "file:///etc/passwd",
        "javascript:alert(1)",
    ] {
        let answer = call(
            &server,
            "trigger-url-elicitation",
            json!({"url": refused}),
            short,
        )
        .await;
        // server-everything's own schema may refuse the address first; either way the
        // person is never shown it.
        if let Ok(answer) = answer {
            assert!(answer.contains("declined"), "{refused}: {answer}");
        }
    }
    assert_eq!(visitor.shown.lock().unwrap().len(), 1);
    let loopback = call(
        &server,
        "trigger-url-elicitation",
        json!({"url": "http://127.0.0.1:8123/done"}),
        short,
    )
    .await
    .unwrap();
    assert!(loopback.contains("completed"), "{loopback}");
    assert_eq!(visitor.shown.lock().unwrap().len(), 2);
    server.stop().await;

    // The same at 2026-07-28: the page rides an `input_required` result (our fault server).
    let mut launch = fault_server();
    launch.elicitation = Elicitation(Some(Arc::clone(&visitor) as Arc<dyn Elicitor>));
    let modern = stdio::start("faulty", launch).await.unwrap();
    assert_eq!(modern.protocol().as_deref(), Some("2026-07-28"));
    let paid = call(&modern, "pay", json!({}), short).await.unwrap();
    assert!(
        paid.contains("the person went to the payment page"),
        "{paid}"
    );
    let shown = visitor.shown.lock().unwrap().last().cloned().unwrap();
    assert_eq!(shown.url.unwrap().host, "pay.example.com");
    modern.stop().await;
}

/// An MCP App's page (SEP-1865) read from its tool's server: the tool names its `ui://`
/// resource, the page comes back as HTML with the policy it is served under (nothing but its
/// own inline code; no network, since it declares no domains), and an address that is not
/// `ui://` is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_page_is_read_from_its_tools_server_with_its_policy() {
    use switchboard_core::mcp::apps::read_app;
    use switchboard_core::mcp::catalogue::ListedTool;
    if !mcp_peers_installed("an_app_page_is_read_from_its_tools_server_with_its_policy") {
        return;
    }
    let server = stdio::start("faulty", fault_server()).await.unwrap();
    let tools = server.list_tools().await.unwrap();
    let dashboard = tools.iter().find(|t| t.name == "dashboard").unwrap();
    let listed = ListedTool::from_rmcp(dashboard);
    assert_eq!(listed.app.as_deref(), Some("ui://fault/dashboard"));
    let page = read_app(&server, "ui://fault/dashboard", Duration::from_secs(10))
        .await
        .unwrap();
    assert!(page.html.contains("Fault dashboard"));
    assert!(page.prefers_border);
    assert!(page.csp.starts_with("default-src 'none'"), "{}", page.csp);
    assert!(page.csp.contains("connect-src 'none'"), "{}", page.csp);
    let refused = read_app(&server, "note://anything", Duration::from_secs(10))
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("not a ui:// resource"), "{refused}");
    server.stop().await;
}

fn tasks_server(log: &std::path::Path) -> StdioLaunch {
    stdio_launch(
        &peers().join(".venv/bin/python").to_string_lossy(),
        &[
            &peers().join("tasks_server.py").to_string_lossy(),
            &log.to_string_lossy(),
        ],
        Duration::from_secs(20),
    )
}

/// Issue 61: a tool that answers with a task (the Tasks extension) is followed to its end:
/// polled with `tasks/get`, its status messages passed on as the call's progress, a task that
/// needs input answered with the person's form through `tasks/update`, and a call stopped (or
/// out of time) sent to the server as `tasks/cancel`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_polled_to_its_result_answered_when_it_asks_and_cancelled_when_stopped() {
    if !mcp_peers_installed("a_task_is_polled") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("tasks.log");
    let person = thinker(Duration::ZERO);
    let server = stdio::start("tasks", with_person(tasks_server(&log), &person))
        .await
        .unwrap();

    // Polled to its end; each status message reached the caller as progress.
    let (progress, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let result = server
        .call_tool_limited(
            "report",
            json!({"topic": "sales"}).as_object().cloned().unwrap(),
            limits(Duration::from_secs(10)),
            &CancellationToken::new(),
            Some(&progress),
        )
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "report on sales");
    let mut messages = Vec::new();
    while let Ok(news) = heard.try_recv() {
        messages.extend(news.message);
    }
    messages.dedup();
    assert_eq!(
        messages,
        [
            "queued",
            "step 1 of 3",
            "step 2 of 3",
            "step 3 of 3",
            "done"
        ]
    );

    // It asks the person: their form's answer goes back with tasks/update.
    let confirmed = call(
        &server,
        "confirm",
        json!({"what": "the deploy"}),
        Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert!(confirmed.contains("the deploy: yes"), "{confirmed}");
    assert_eq!(person.asked.load(Ordering::SeqCst), 1);

    // Stopped: the server is told to cancel it; out of time, likewise.
    let stop = CancellationToken::new();
    let stopping = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(600)).await;
        stopping.cancel();
    });
    let stopped = server
        .call_tool_limited(
            "forever",
            Map::new(),
            limits(Duration::from_secs(10)),
            &stop,
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            stopped,
            switchboard_core::mcp::server::McpError::Cancelled { .. }
        ),
        "{stopped}"
    );
    let timed_out = server
        .call_tool_limited(
            "forever",
            Map::new(),
            CallLimits {
                idle: Duration::from_secs(5),
                hard_max: Duration::from_secs(1),
            },
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            timed_out,
            switchboard_core::mcp::server::McpError::Timeout { .. }
        ),
        "{timed_out}"
    );
    let sent = std::fs::read_to_string(&log).unwrap();
    // What the client sent (the server notes each task it made too).
    let lines: Vec<&str> = sent
        .lines()
        .filter(|l| !l.starts_with("created "))
        .collect();
    assert_eq!(
        sent.lines().count() - lines.len(),
        4,
        "four tasks made: {sent}"
    );
    assert_eq!(lines.len(), 3, "{sent}");
    assert!(
        lines[0].starts_with("update ") && lines[0].contains("\"choice\": \"yes\""),
        "{sent}"
    );
    assert_eq!(&lines[1..], ["cancel task-3", "cancel task-4"]);
    server.stop().await;
}
