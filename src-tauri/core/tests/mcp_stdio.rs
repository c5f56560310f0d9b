//! Stdio MCP servers written by others (server-everything, mcp-server-time, installed into
//! `tests/peers/` by the test command) and small misbehaving ones, through
//! `switchboard_core::mcp::stdio`: the handshake, tools, calls, the environment a server sees,
//! start failures with the server's own words, and stopping that leaves no process behind.
//!
//! Without the peers installed these tests fail, unless `SWITCHBOARD_SKIP_PEERS=1` says to skip
//! them (each then says SKIPPED); the test command never sets it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use switchboard_core::mcp::environment::{resolve_command, search_path, server_env};
use switchboard_core::mcp::server::McpError;
use switchboard_core::mcp::stdio::{self, StdioLaunch};

mod support;
use support::eventually;

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

/// The installed program `rel` under tests/peers, or `None` (test skipped) when missing.
fn peer(test: &str, rel: &str) -> Option<PathBuf> {
    let path = peers().join(rel);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("SWITCHBOARD_SKIP_PEERS").is_some_and(|v| v == "1"),
        "{} is not installed (scripts/bootstrap.sh test installs it)",
        path.display()
    );
    eprintln!("SKIPPED {test}: {} is not installed", path.display());
    None
}

fn launch(program: &Path, args: &[&str], declared: &[(&str, &str)]) -> StdioLaunch {
    let path = search_path(None, std::env::var_os("PATH").as_deref());
    let program = resolve_command(&program.to_string_lossy(), &path, Path::new("/")).unwrap();
    // The app's own environment, as the host would see it, with a provider key in it.
    let own = std::env::vars_os().chain([(
        OsString::from("OPENAI_API_KEY"),
        OsString::from("sk-app-secret-must-not-leak"),
    )]);
    StdioLaunch {
        program,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: server_env(own, &path, declared.iter().copied()),
        cwd: None,
        stderr_log: None,
        stderr_masks: Default::default(),
        startup_timeout: Duration::from_secs(20),
        elicitation: Default::default(),
        roots: Default::default(),
        sandbox: None,
    }
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap().to_string()
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// Whether a process is still running (a zombie waiting to be reaped counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_gone(pid: u32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

#[tokio::test]
async fn server_everything_lists_its_tools_answers_calls_and_stops() {
    let Some(bin) = peer(
        "server_everything",
        "node_modules/.bin/mcp-server-everything",
    ) else {
        return;
    };
    let server = stdio::start(
        "everything",
        launch(&bin, &["stdio"], &[("MY_SETTING", "42")]),
    )
    .await
    .unwrap();
    assert!(
        server.server_info().unwrap().contains("everything"),
        "{:?}",
        server.server_info()
    );
    let tools = server.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in ["echo", "get-sum", "get-env"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let echo = server
        .call_tool(
            "echo",
            args(json!({"message": "héllo, wörld 🚀"})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(
        text_of(&echo).contains("héllo, wörld 🚀"),
        "{}",
        text_of(&echo)
    );
    let sum = server
        .call_tool(
            "get-sum",
            args(json!({"a": 2, "b": 40})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(text_of(&sum).contains("42"), "{}", text_of(&sum));

    // The server sees what its config declares, and never the app's provider key.
    let env = text_of(
        &server
            .call_tool("get-env", Map::new(), Duration::from_secs(10))
            .await
            .unwrap(),
    );
    assert!(env.contains("MY_SETTING"), "{env}");
    assert!(
        !env.contains("sk-app-secret-must-not-leak") && !env.contains("OPENAI_API_KEY"),
        "{env}"
    );

    let pid = server.pid().unwrap();
    server.stop().await;
    assert!(
        wait_gone(pid, Duration::from_secs(10)),
        "the server process {pid} is gone"
    );
}

/// What the tests' code logs, kept to read (the runtime is one thread: its tasks log here too).
#[derive(Clone, Default)]
struct Logged(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logged {
    type Writer = Logged;
    fn make_writer(&'a self) -> Logged {
        self.clone()
    }
}

#[tokio::test]
async fn a_server_that_leaves_on_term_is_ended_by_term_and_not_said_to_ignore_it() {
    // server-everything keeps timers running: stdin closing does not end it, TERM does.
    let Some(bin) = peer("term_only", "node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let logged = Logged::default();
    let _logging = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_writer(logged.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .finish(),
    );
    let server = stdio::start("everything", launch(&bin, &["stdio"], &[]))
        .await
        .unwrap();
    server.list_tools().await.unwrap();
    let pid = server.pid().unwrap();
    server.stop().await;
    // Stopping returns once the group has ended: nothing of it is left to wait for.
    assert!(!alive(pid), "the server {pid} outlived its stop");
    let said = String::from_utf8(logged.0.lock().unwrap().clone()).unwrap();
    assert!(
        said.contains("MCP server started"),
        "the log was kept: {said}"
    );
    // Its leader, exited and reaped, is not taken for a process that ignored TERM (it was,
    // while it waited unreaped: a second more and a false warning at every stop).
    assert!(!said.contains("ignored TERM"), "{said}");
    assert!(!said.contains("did not end in time"), "{said}");
}

#[tokio::test]
async fn the_python_time_server_answers_with_a_time() {
    let Some(bin) = peer("time_server", ".venv/bin/mcp-server-time") else {
        return;
    };
    let server = stdio::start("time", launch(&bin, &["--local-timezone", "UTC"], &[]))
        .await
        .unwrap();
    let tools = server.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "get_current_time"));
    let now = server
        .call_tool(
            "get_current_time",
            args(json!({"timezone": "Europe/Paris"})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(text_of(&now).contains("Europe/Paris"), "{}", text_of(&now));
    server.stop().await;
}

#[tokio::test]
async fn a_server_that_exits_at_once_is_reported_with_what_it_said_on_stderr() {
    let err = stdio::start(
        "broken",
        launch(
            Path::new("sh"),
            &["-c", "echo 'fatal: BRAVE_API_KEY is not set' >&2; exit 3"],
            &[],
        ),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Startup { .. }), "{err:?}");
    assert!(
        err.to_string().contains("BRAVE_API_KEY is not set"),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_fails_after_the_deadline_and_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "echo $$ > {}; echo 'starting up…' >&2; exec sleep 1000",
        pidfile.display()
    );
    let mut silent = launch(Path::new("sh"), &["-c", &script], &[]);
    silent.startup_timeout = Duration::from_millis(800);
    let started = Instant::now();
    let err = stdio::start("silent", silent).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(err, McpError::StartupTimeout { .. }), "{err:?}");
    assert!(err.to_string().contains("starting up…"), "{err}");
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_gone(pid, Duration::from_secs(10)),
        "the silent server {pid} was stopped"
    );
}

#[tokio::test]
async fn stopping_a_server_stops_the_processes_it_started_too() {
    let Some(bin) = peer("grandchild", "node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild");
    // The server starts a long-lived grandchild of its own, then becomes the MCP server.
    let script = format!(
        "sleep 1000 & echo $! > {}; exec {} stdio",
        pidfile.display(),
        bin.display()
    );
    let server = stdio::start("parent", launch(Path::new("sh"), &["-c", &script], &[]))
        .await
        .unwrap();
    server.list_tools().await.unwrap();
    let grandchild: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(grandchild));
    server.stop().await;
    assert!(
        wait_gone(grandchild, Duration::from_secs(10)),
        "the grandchild {grandchild} outlived its server"
    );
}

#[tokio::test]
async fn a_missing_program_is_a_clear_spawn_error() {
    let mut missing = launch(Path::new("sh"), &[], &[]);
    missing.program = PathBuf::from("/nonexistent/mcp-server");
    let err = stdio::start("ghost", missing).await.unwrap_err();
    assert!(matches!(err, McpError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/mcp-server"), "{err}");
}

/// The fault server said on stderr that its `hang` call was cancelled (it received
/// `notifications/cancelled`), and it still answers a call.
async fn heard_the_cancel_and_still_answers(server: &switchboard_core::mcp::server::McpServer) {
    eventually(Duration::from_secs(5), "the cancel heard", || async {
        let tail = server.stderr_tail();
        if tail.contains("hang was cancelled by the client") {
            Ok(())
        } else {
            Err(tail)
        }
    })
    .await;
    let echoed = server
        .call_tool(
            "echo",
            args(json!({"text": "still here"})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(text_of(&echoed).contains("still here"));
}

/// Our own misbehaving server (tests/peers/fault_server.py, Python SDK `mcp`).
fn fault_server(test: &str, options: &[&str]) -> Option<StdioLaunch> {
    let python = peer(test, ".venv/bin/python")?;
    let script = peers().join("fault_server.py");
    let script = script.to_string_lossy().into_owned();
    let mut args = vec![script.as_str()];
    args.extend_from_slice(options);
    Some(launch(&python, &args, &[]))
}

#[tokio::test]
async fn plain_text_on_stdout_before_the_protocol_is_skipped() {
    let Some(banner) = fault_server("banner", &["--banner"]) else {
        return;
    };
    let server = stdio::start("banner", banner).await.unwrap();
    let echoed = server
        .call_tool(
            "echo",
            args(json!({"text": "still fine"})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(text_of(&echoed).contains("still fine"));
    server.stop().await;
}

#[tokio::test]
async fn a_crash_mid_call_fails_the_call_at_once_with_the_servers_last_words() {
    let Some(faulty) = fault_server("crash", &[]) else {
        return;
    };
    let server = stdio::start("faulty", faulty).await.unwrap();
    let started = Instant::now();
    let err = server
        .call_tool("crash", Map::new(), Duration::from_secs(30))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the call failed when the server died, not at the timeout ({:?})",
        started.elapsed()
    );
    assert!(matches!(err, McpError::Request { .. }), "{err:?}");
    assert!(
        err.to_string().contains("about to crash on purpose"),
        "{err}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_hung_call_times_out_and_the_server_keeps_answering() {
    let Some(faulty) = fault_server("hang", &[]) else {
        return;
    };
    let server = stdio::start("faulty", faulty).await.unwrap();
    let err = server
        .call_tool("hang", Map::new(), Duration::from_millis(500))
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Timeout { .. }), "{err:?}");
    // The timeout was sent to the server as `notifications/cancelled`.
    heard_the_cancel_and_still_answers(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn a_slow_starting_server_is_waited_for_up_to_the_deadline() {
    let Some(mut slow) = fault_server("slow_start", &["--slow-start", "2"]) else {
        return;
    };
    slow.startup_timeout = Duration::from_secs(20);
    let server = stdio::start("slow", slow).await.unwrap();
    server.list_tools().await.unwrap();
    server.stop().await;
    let Some(mut too_slow) = fault_server("slow_start", &["--slow-start", "10"]) else {
        return;
    };
    too_slow.startup_timeout = Duration::from_secs(1);
    let err = stdio::start("too-slow", too_slow).await.unwrap_err();
    assert!(matches!(err, McpError::StartupTimeout { .. }), "{err:?}");
}

#[tokio::test]
async fn progress_keeps_a_long_call_alive_and_the_hard_maximum_still_ends_it() {
    use switchboard_core::mcp::server::CallLimits;
    use tokio_util::sync::CancellationToken;
    let Some(faulty) = fault_server("progress", &[]) else {
        return;
    };
    let server = stdio::start("faulty", faulty).await.unwrap();
    let work = || args(json!({"seconds": 2.4, "every": 0.3}));
    // 2.4 s of work with a 1 s idle limit: each progress notification extends it, and each
    // reaches the caller.
    let (sink, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let done = server
        .call_tool_limited(
            "progress",
            work(),
            CallLimits {
                idle: Duration::from_secs(1),
                hard_max: Duration::from_secs(20),
            },
            &CancellationToken::new(),
            Some(&sink),
        )
        .await
        .unwrap();
    assert!(
        text_of(&done).contains("finished 8 steps"),
        "{}",
        text_of(&done)
    );
    let mut heard = Vec::new();
    while let Ok(report) = reports.try_recv() {
        heard.push((report.progress, report.total));
    }
    let expected: Vec<(f64, Option<f64>)> = (0..8).map(|i| (f64::from(i), Some(8.0))).collect();
    assert_eq!(heard, expected);
    // The same work under a 1.2 s hard maximum is cut off, progress or not.
    let started = Instant::now();
    let err = server
        .call_tool_limited(
            "progress",
            work(),
            CallLimits {
                idle: Duration::from_secs(1),
                hard_max: Duration::from_millis(1200),
            },
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Timeout { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    server.stop().await;
}

#[tokio::test]
async fn stopping_a_call_tells_the_server_and_returns_at_once() {
    use switchboard_core::mcp::server::CallLimits;
    use tokio_util::sync::CancellationToken;
    let Some(faulty) = fault_server("cancel", &[]) else {
        return;
    };
    let server = stdio::start("faulty", faulty).await.unwrap();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let err = server
        .call_tool_limited(
            "hang",
            Map::new(),
            CallLimits {
                idle: Duration::from_secs(60),
                hard_max: Duration::from_secs(600),
            },
            &cancel,
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Cancelled { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    heard_the_cancel_and_still_answers(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn a_big_result_arrives_whole_and_a_line_over_32_mib_stops_the_server_with_a_clear_error() {
    let Some(faulty) = fault_server("big", &[]) else {
        return;
    };
    let server = stdio::start("faulty", faulty.clone()).await.unwrap();
    // 12 MB: 24 MB on the wire, as text and as structured content, past rmcp's own 16 MiB
    // (which would drop the line quietly and leave the call to hang).
    let twelve = server
        .call_tool(
            "big",
            args(json!({"megabytes": 12})),
            Duration::from_secs(30),
        )
        .await
        .unwrap();
    assert!(text_of(&twelve).len() > 12 * 1024 * 1024);

    let started = Instant::now();
    let err = server
        .call_tool(
            "big",
            args(json!({"megabytes": 50})),
            Duration::from_secs(60),
        )
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the call failed when the line passed the cap, not at its timeout"
    );
    assert!(err.to_string().contains("longer than 32 MiB"), "{err}");
    assert!(server.has_exited());

    // A "server" that writes stdout without ever ending the line is stopped the same way,
    // before it has taken more than the cap.
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "echo $$ > {}; exec sh -c 'while :; do printf yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; done'",
        pidfile.display()
    );
    let err = stdio::start("endless", launch(Path::new("sh"), &["-c", &script], &[]))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("longer than 32 MiB"), "{err}");
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_gone(pid, Duration::from_secs(10)));
}

#[tokio::test]
async fn a_start_abandoned_before_the_handshake_leaves_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild");
    // A server that starts a grandchild, then takes its time to answer anything.
    let script = format!(
        "sleep 1000 & echo $! > {}; exec sleep 999",
        pidfile.display()
    );
    let starting = stdio::start("slow", launch(Path::new("sh"), &["-c", &script], &[]));
    // The app quits (or the server is stopped) while it is still starting.
    assert!(tokio::time::timeout(Duration::from_millis(500), starting)
        .await
        .is_err());
    let grandchild: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_gone(grandchild, Duration::from_secs(5)),
        "grandchild {grandchild} survived"
    );
}

#[tokio::test]
async fn server_filesystem_works_in_the_folders_it_is_given_as_roots_and_hears_when_they_change() {
    let Some(bin) = peer(
        "filesystem roots",
        "node_modules/.bin/mcp-server-filesystem",
    ) else {
        return;
    };
    let dirs = tempfile::tempdir().unwrap();
    let (first, second) = (dirs.path().join("first"), dirs.path().join("second"));
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&second).unwrap();
    std::fs::write(second.join("notes.md"), "# Notes").unwrap();
    // No folder on its command line: it asks for its roots.
    let mut given = launch(&bin, &[], &[]);
    given.roots = switchboard_core::mcp::client::Roots::new(vec![first.clone()]);
    let server = stdio::start("filesystem", given).await.unwrap();
    let allowed = || async {
        let result = server
            .call_tool(
                "list_allowed_directories",
                Map::new(),
                Duration::from_secs(10),
            )
            .await
            .unwrap();
        text_of(&result)
    };
    // It asks once it is initialized: wait for it to have heard.
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    let allows = |folder: String| {
        let allowed = &allowed;
        move || {
            let folder = folder.clone();
            async move {
                let now = allowed().await;
                if now.contains(&folder) {
                    Ok(())
                } else {
                    Err(now)
                }
            }
        }
    };
    eventually(
        Duration::from_secs(15),
        "the first root allowed",
        allows(canonical(&first)),
    )
    .await;
    assert_eq!(server.roots(), std::slice::from_ref(&first));

    // Changed while it runs: it is told, asks again, and works in the new folder only.
    server.set_roots(vec![second.clone()]).await.unwrap();
    eventually(
        Duration::from_secs(15),
        "the new root allowed",
        allows(canonical(&second)),
    )
    .await;
    assert!(!allowed().await.contains(&canonical(&first)));
    let read = server
        .call_tool(
            "read_text_file",
            args(json!({"path": second.join("notes.md")})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(text_of(&read).contains("# Notes"), "{}", text_of(&read));
    server.stop().await;
}

#[tokio::test]
async fn server_memory_keeps_what_it_is_told_in_its_file_and_reads_it_back() {
    let Some(bin) = peer("memory server", "node_modules/.bin/mcp-server-memory") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.jsonl");
    let file_text = file.display().to_string();
    let server = stdio::start(
        "memory",
        launch(&bin, &[], &[("MEMORY_FILE_PATH", file_text.as_str())]),
    )
    .await
    .unwrap();
    let created = server
        .call_tool(
            "create_entities",
            args(json!({"entities": [{
                "name": "Oslo",
                "entityType": "city",
                "observations": ["capital of Norway"]
            }]})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_ne!(created.is_error, Some(true), "{}", text_of(&created));
    let found = server
        .call_tool(
            "search_nodes",
            args(json!({"query": "Norway"})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert!(text_of(&found).contains("Oslo"), "{}", text_of(&found));
    server.stop().await;
    // Kept where its environment said, for its next start.
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(kept.contains("capital of Norway"), "{kept}");
}

#[tokio::test]
async fn the_python_git_server_reads_the_log_of_the_repository_it_is_given() {
    let Some(bin) = peer("git server", ".venv/bin/mcp-server-git") else {
        return;
    };
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let done = std::process::Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", repo.path())
            .output()
            .expect("git runs");
        assert!(done.status.success(), "git {args:?}: {:?}", done);
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("README.md"), "hello\n").unwrap();
    git(&["add", "README.md"]);
    git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "-q",
        "-m",
        "The first words of the project",
    ]);
    let repo_text = repo.path().display().to_string();
    let server = stdio::start(
        "git",
        launch(&bin, &["--repository", repo_text.as_str()], &[]),
    )
    .await
    .unwrap();
    let tools = server.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "git_log"), "{tools:?}");
    let log = server
        .call_tool(
            "git_log",
            args(json!({"repo_path": repo_text})),
            Duration::from_secs(20),
        )
        .await
        .unwrap();
    assert!(
        text_of(&log).contains("The first words of the project"),
        "{}",
        text_of(&log)
    );
    server.stop().await;
}

#[tokio::test]
async fn a_servers_secret_is_masked_in_its_stderr_log_even_when_split_across_reads() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("split.log");
    // A long line (past one read's 16 KiB), the secret's first half, a pause, then the rest.
    let script = "head -c 20000 /dev/zero | tr '\\0' x >&2; printf 'abc-sec' >&2; sleep 0.3; \
                  printf 'ret-value and more\\n' >&2; exit 3";
    let mut given = launch(Path::new("sh"), &["-c", script], &[]);
    given.stderr_log = Some(log.clone());
    given.stderr_masks.add("abc-secret-value");
    let err = stdio::start("split", given).await.unwrap_err();
    assert!(!err.to_string().contains("abc-secret-value"), "{err}");
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(
        !written.contains("abc-secret-value"),
        "the secret was written"
    );
    assert!(
        written.ends_with("[redacted] and more\n"),
        "{}",
        &written[written.len().saturating_sub(80)..]
    );
}
