//! A hostile server cannot wedge the app: a tool list that pages without end is read no further
//! than 100 pages and the server is marked failed; stopping a server that never answers its
//! tool list (or `initialize`) returns at once; a tool schema nested 10 000 levels costs that
//! one tool (held back with its reason), not the server's whole list.

use std::time::{Duration, Instant};

use switchboard_core::mcp::host::{McpHost, ServerState, MAX_TRIES};

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

/// Waits up to 60 s for `name`'s state to satisfy `done`.
async fn until(host: &McpHost, name: &str, done: impl Fn(&ServerState) -> bool) -> ServerState {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(state) = host.states().get(name).filter(|s| done(s)) {
            return state.clone();
        }
        assert!(Instant::now() < deadline, "{:?}", host.states());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
    if !support::mcp_peers_installed("tool_schema_nested_ten_thousand_levels") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    raw_server(&host, "deep", &["--deep-schema", "10000"]).await;
    let running = until(&host, "deep", |s| !matches!(s, ServerState::Starting)).await;
    assert_eq!(
        running,
        ServerState::Running {
            pid: host.server("deep").and_then(|s| s.pid()),
            tools: 1
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
