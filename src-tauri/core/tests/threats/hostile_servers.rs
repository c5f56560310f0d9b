//! A hostile server cannot wedge the app: a tool list that pages without end is read no further
//! than 100 pages and the server is marked failed; stopping a server that never answers its
//! tool list (or `initialize`) returns at once; a tool schema nested 10 000 levels costs that
//! one tool (held back with its reason), not the server's whole list, over stdio and over
//! streamable HTTP alike.

use std::time::{Duration, Instant};

use switchboard_core::mcp::elicitation::Elicitation;
use switchboard_core::mcp::host::{McpHost, ServerState, MAX_TRIES};
use switchboard_core::mcp::remote::{RemoteLaunch, RemoteTransport};

use crate::support::{self, peers, stdio_launch};

async fn host(dir: &std::path::Path) -> McpHost {
    McpHost::new(dir.join("pids.json"))
        .await
        .with_backoff_unit(Duration::from_millis(20))
}

async fn raw_server(host: &McpHost, name: &str, fault: &[&str]) {
    let python = peers().join(".venv/bin/python");
    let script = peers().join("raw_server.py");
    let mut args = vec![script.to_str().unwrap()];
    args.extend_from_slice(fault);
    host.spawn(
        name,
        stdio_launch(python.to_str().unwrap(), &args, Duration::from_secs(30)),
    )
    .await;
}

/// `raw_server.py` over streamable HTTP with `fault`: the process (killed when dropped) and
/// its URL.
fn http_raw_server(fault: &[&str]) -> (KilledOnDrop, String) {
    let mut child = std::process::Command::new(peers().join(".venv/bin/python"))
        .arg(peers().join("raw_server.py"))
        .arg("--http")
        .args(fault)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().expect("piped");
    let url = support::read_until(stdout, "LISTENING ");
    let child = KilledOnDrop(child);
    (child, url.unwrap())
}

/// How a streamable-HTTP server at `url` is reached, with no headers and no sign-in.
fn http_launch(url: &str) -> RemoteLaunch {
    RemoteLaunch {
        url: url.to_owned(),
        headers: Vec::new(),
        transport: RemoteTransport::Http,
        startup_timeout: Duration::from_secs(30),
        auth: None,
        elicitation: Elicitation::default(),
        roots: Default::default(),
    }
}

/// A child process, killed and waited for when dropped.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits up to 60 s for `name`'s state to satisfy `done`.
async fn until(host: &McpHost, name: &str, done: impl Fn(&ServerState) -> bool) -> ServerState {
    support::server_state(host, name, done).await
}

#[tokio::test]
async fn server_paging_forever_is_stopped() {
    if !support::mcp_peers_installed("server_paging_forever_is_stopped") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    raw_server(&host, "pager", &["--page-forever"]).await;
    let failed = until(&host, "pager", |s| matches!(s, ServerState::Failed { .. })).await;
    let ServerState::Failed { reason } = failed else {
        unreachable!()
    };
    assert!(reason.contains("past 100 pages"), "{reason}");
    assert!(
        reason.contains(&format!("after {MAX_TRIES} tries")),
        "{reason}"
    );
    assert!(
        host.running_tools().iter().all(|(name, _)| name != "pager"),
        "none of its tools are offered"
    );
    host.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn server_that_never_answers_is_stopped_at_once() {
    if !support::mcp_peers_installed("server_that_never_answers_is_stopped_at_once") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    raw_server(&host, "mute-list", &["--hang-list"]).await;
    raw_server(&host, "mute-init", &["--no-initialize"]).await;
    // Both are connected (or connecting) and waiting on an answer that never comes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for name in ["mute-list", "mute-init"] {
        assert!(
            matches!(host.states().get(name), Some(ServerState::Starting)),
            "{name}: {:?}",
            host.states()
        );
        let began = Instant::now();
        host.stop(name).await;
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "{name}: stopping took {:?}",
            began.elapsed()
        );
        assert_eq!(host.states().get(name), Some(&ServerState::Stopped));
    }
    host.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn tool_schema_nested_ten_thousand_levels_holds_back_that_tool_only() {
    held_back_when_nested(None, 10_000).await;
}

#[tokio::test]
async fn tool_schema_nested_ten_thousand_levels_over_http_holds_back_that_tool_only() {
    held_back_when_nested(Some(&[]), 10_000).await;
}

#[tokio::test]
async fn tool_schema_nested_ten_thousand_levels_in_one_json_body_holds_back_that_tool_only() {
    held_back_when_nested(Some(&["--json-response"]), 10_000).await;
}

/// Deeper than we allow (64) but within what serde_json parses (128): rmcp parses the body,
/// and it is cut as every other transport cuts it.
#[tokio::test]
async fn tool_schema_nested_a_hundred_levels_in_one_json_body_is_held_back_as_over_stdio() {
    held_back_when_nested(Some(&["--json-response"]), 100).await;
    held_back_when_nested(None, 100).await;
}

/// A 20 MB result over streamable HTTP, as an event stream and as one JSON body, reaches
/// Switchboard whole (rmcp's own cap is 16 MiB; ours is a stdio line's, 32 MiB).
#[tokio::test]
async fn a_twenty_megabyte_result_over_http_arrives_whole() {
    if !support::mcp_peers_installed("a 20 MB result over HTTP") {
        return;
    }
    for more in [&[][..], &["--json-response"][..]] {
        let text = big_result_over_http(more, 20_000_000).await.unwrap();
        assert_eq!(text.len(), 20_000_000, "{more:?}");
        assert!(text.starts_with("startxxx"));
        // Past our cap: the call's error says why the connection ended.
        let refused = big_result_over_http(more, 40_000_000).await.unwrap_err();
        assert!(
            refused.contains("it sent an answer larger than 32 MiB"),
            "{more:?}: {refused}"
        );
    }
}

/// Calls `echo` of `raw_server.py --http --result-bytes SIZE` (with `more`): its text, or the
/// call's error.
async fn big_result_over_http(more: &[&str], size: usize) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let size = size.to_string();
    let listening = http_raw_server(&[&["--result-bytes", size.as_str()], more].concat());
    let launch = http_launch(&listening.1);
    host.spawn("big", launch).await;
    let running = until(&host, "big", |s| !matches!(s, ServerState::Starting)).await;
    assert!(
        matches!(running, ServerState::Running { .. }),
        "{more:?}: {running:?}"
    );
    let mut arguments = serde_json::Map::new();
    arguments.insert("text".into(), "start".into());
    let result = host
        .server("big")
        .unwrap()
        .call_tool("echo", arguments, Duration::from_secs(60))
        .await
        .map(|result| result.content[0].as_text().map(|t| t.text.clone()).unwrap())
        .map_err(|e| e.to_string());
    host.shutdown(Duration::from_secs(5)).await;
    result
}

/// `raw_server.py --deep-schema LEVELS` (over streamable HTTP, with these more arguments, when
/// `http`): its `deep` tool is held back with its reason, its `echo` is offered.
async fn held_back_when_nested(http: Option<&[&str]>, levels: usize) {
    let levels = levels.to_string();
    if !support::mcp_peers_installed("tool_schema_nested_ten_thousand_levels") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let _listening = if let Some(more) = http {
        let listening = http_raw_server(&[&["--deep-schema", levels.as_str()], more].concat());
        let launch = http_launch(&listening.1);
        host.spawn("deep", launch).await;
        Some(listening)
    } else {
        raw_server(&host, "deep", &["--deep-schema", &levels]).await;
        None
    };
    let running = until(&host, "deep", |s| !matches!(s, ServerState::Starting)).await;
    assert_eq!(
        running,
        ServerState::Running {
            pid: host.server("deep").and_then(|s| s.pid()),
            tools: 1,
            apps: vec![],
        }
    );
    let offered: Vec<String> = host
        .running_tools()
        .into_iter()
        .filter(|(name, _)| name == "deep")
        .flat_map(|(_, tools)| tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>())
        .collect();
    assert_eq!(offered, ["echo"], "the server's other tool works");
    let held = host.server("deep").unwrap().held_back();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].tool, "deep");
    assert!(held[0].reason.contains("deeper than 64 levels"), "{held:?}");
    host.shutdown(Duration::from_secs(5)).await;
}
