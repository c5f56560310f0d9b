//! Remote MCP servers through `switchboard_core::mcp::remote`: server-everything (installed
//! into `tests/peers/` by the test command) in its streamable HTTP and legacy SSE modes, bound
//! to 127.0.0.1 by `tests/peers/loopback.cjs`; the fallback from streamable HTTP to SSE when no
//! transport is named; the supervisor running a remote server; and small scripted HTTP servers
//! for what a real one will not do on demand (our headers on the wire, an endpoint on another
//! origin, a server that goes away).
//!
//! Without the peers installed the server-everything tests fail, unless
//! `SWITCHBOARD_SKIP_PEERS=1` says to skip them (each then says SKIPPED).

use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::mcp::host::{McpHost, ServerState};
use switchboard_core::mcp::remote::{self, RemoteLaunch, RemoteTransport};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod support;
use support::{eventually, refused_port, Everything};

fn launch(url: String, transport: RemoteTransport) -> RemoteLaunch {
    RemoteLaunch {
        url,
        headers: vec![("X-Switchboard-Test".into(), "yes".into())],
        transport,
        startup_timeout: Duration::from_secs(20),
        auth: None,
        elicitation: Default::default(),
        roots: Default::default(),
    }
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

async fn lists_and_echoes(server: &switchboard_core::mcp::server::McpServer) {
    let tools = server.list_tools().await.unwrap();
    assert!(tools.len() >= 10, "{} tools", tools.len());
    assert!(tools.iter().any(|t| t.name == "echo"));
    let result = server
        .call_tool(
            "echo",
            args(json!({"message": "über HTTP ✓"})),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("über HTTP ✓"), "{text}");
}

#[tokio::test]
async fn streamable_http_lists_tools_calls_and_stops() {
    let Some(everything) = Everything::start("streamable_http", "streamableHttp") else {
        return;
    };
    let server = remote::connect(
        "everything",
        &launch(everything.url("/mcp"), RemoteTransport::Http),
    )
    .await
    .unwrap();
    assert!(server.pid().is_none());
    lists_and_echoes(&server).await;
    server.stop().await;
    assert_eq!(server.exited().await, "stopped");
}

#[tokio::test]
async fn legacy_sse_lists_tools_and_calls() {
    let Some(everything) = Everything::start("legacy_sse", "sse") else {
        return;
    };
    let server = remote::connect(
        "everything-sse",
        &launch(everything.url("/sse"), RemoteTransport::Sse),
    )
    .await
    .unwrap();
    lists_and_echoes(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn with_no_transport_named_a_legacy_sse_server_is_reached_as_one() {
    let Some(everything) = Everything::start("fallback_to_sse", "sse") else {
        return;
    };
    let server = remote::connect(
        "everything-sse",
        &launch(everything.url("/sse"), RemoteTransport::HttpThenSse),
    )
    .await
    .unwrap();
    lists_and_echoes(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn with_no_transport_named_a_streamable_server_is_reached_as_one() {
    let Some(everything) = Everything::start("no_fallback_needed", "streamableHttp") else {
        return;
    };
    let server = remote::connect(
        "everything",
        &launch(everything.url("/mcp"), RemoteTransport::HttpThenSse),
    )
    .await
    .unwrap();
    lists_and_echoes(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn the_supervisor_runs_a_remote_server_and_notices_when_it_goes_away() {
    let Some(mut everything) = Everything::start("supervised_remote", "streamableHttp") else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let host = McpHost::new(scratch.path().join("pids.json"))
        .await
        .with_backoff_unit(Duration::from_secs(1))
        .with_ping_every(Duration::from_millis(300));
    host.spawn(
        "everything",
        launch(everything.url("/mcp"), RemoteTransport::Http),
    )
    .await;
    eventually(Duration::from_secs(20), "everything runs", || async {
        match host.states().get("everything") {
            Some(ServerState::Running {
                pid: None, tools, ..
            }) if *tools >= 10 => Ok(()),
            other => Err(other.cloned()),
        }
    })
    .await;
    let server = host.server("everything").unwrap();
    // The server goes away: a call fails with a message instead of hanging.
    let _ = everything.child.kill();
    let _ = everything.child.wait();
    let err = server
        .call_tool(
            "echo",
            args(json!({"message": "anyone?"})),
            Duration::from_secs(10),
        )
        .await
        .unwrap_err();
    let err = err.to_string();
    assert!(err.contains("“everything” failed"), "{err}");
    assert!(err.contains("127.0.0.1:"), "says where: {err}");
    assert!(!err.contains("rmcp::"), "no Rust type names: {err}");
    // The supervisor finds out by itself (no process exit to see) and says so.
    eventually(
        Duration::from_secs(20),
        "the supervisor sees it gone",
        || async {
            match host.states().get("everything") {
                Some(ServerState::Restarting { reason, .. })
                    if reason.contains("stopped answering") =>
                {
                    Ok(())
                }
                other => Err(other.cloned()),
            }
        },
    )
    .await;
    host.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn nothing_listening_says_what_each_transport_met() {
    let (_closed, port) = refused_port();
    let err = remote::connect(
        "nobody",
        &launch(
            format!("http://127.0.0.1:{port}/mcp"),
            RemoteTransport::HttpThenSse,
        ),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("“nobody” did not start"), "{err}");
    assert!(!err.contains("rmcp::"), "no Rust type names: {err}");
    assert!(err.contains("as streamable HTTP:"), "{err}");
    assert!(err.contains("as legacy HTTP+SSE:"), "{err}");
    assert!(err.contains("cannot connect at 127.0.0.1:"), "{err}");
    assert!(err.contains("refused"), "{err}");
}

/// A one-request HTTP server: answers the first request with `reply` and returns what it
/// received.
async fn one_request(reply: &'static str) -> (u16, tokio::task::JoinHandle<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut received = Vec::new();
        let mut buf = [0u8; 4096];
        while !received.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            received.extend_from_slice(&buf[..n]);
        }
        socket.write_all(reply.as_bytes()).await.unwrap();
        socket.shutdown().await.ok();
        String::from_utf8_lossy(&received).into_owned()
    });
    (port, task)
}

#[tokio::test]
async fn configured_headers_go_on_the_wire() {
    let (port, request) =
        one_request("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n").await;
    let mut sse = launch(format!("http://127.0.0.1:{port}/sse"), RemoteTransport::Sse);
    sse.headers
        .push(("Authorization".into(), "Bearer s3cret-token".into()));
    let err = remote::connect("guarded", &sse)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("HTTP 401"), "{err}");
    assert!(
        !err.contains("s3cret-token"),
        "a header value in a message: {err}"
    );
    let request = request.await.unwrap().to_ascii_lowercase();
    assert!(request.starts_with("get /sse "), "{request}");
    assert!(
        request.contains("authorization: bearer s3cret-token"),
        "{request}"
    );
    assert!(request.contains("x-switchboard-test: yes"), "{request}");
    assert!(request.contains("accept: text/event-stream"), "{request}");
}

#[tokio::test]
async fn an_sse_endpoint_on_another_origin_is_refused() {
    let (port, _request) = one_request(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: http://attacker.invalid/steal\n\n",
    )
    .await;
    let err = remote::connect(
        "tricky",
        &launch(format!("http://127.0.0.1:{port}/sse"), RemoteTransport::Sse),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("another origin"), "{err}");
    assert!(err.contains("attacker.invalid"), "{err}");
}

#[tokio::test]
async fn an_sse_event_longer_than_the_cap_ends_the_connection_with_a_clear_reason() {
    use switchboard_core::mcp::sse::MAX_EVENT_BYTES;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // A server that names its endpoint, accepts every POST, and answers with one endless event.
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                if head.starts_with(b"POST") {
                    let _ = socket
                        .write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                        .await;
                    return;
                }
                let start = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: /message\n\nevent: message\ndata: ";
                if socket.write_all(start.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 1024 * 1024];
                for _ in 0..(MAX_EVENT_BYTES / chunk.len() + 2) {
                    if socket.write_all(&chunk).await.is_err() {
                        return; // the client gave up, as it should
                    }
                }
            });
        }
    });
    let err = remote::connect(
        "endless",
        &launch(format!("http://127.0.0.1:{port}/sse"), RemoteTransport::Sse),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("“endless” did not start"), "{err}");
    assert!(
        err.contains("the server sent a single event longer than 32 MiB"),
        "{err}"
    );
}
