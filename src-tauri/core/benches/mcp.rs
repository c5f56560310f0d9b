//! The MCP host against bare rmcp, with real servers from `tests/peers/` (run
//! `scripts/bootstrap.sh test` once to install them):
//!
//! 1. `tools/call` round trip to server-everything's `echo` through the host
//!    (`McpServer::call_tool`: progress-aware timeout, cancellation) against a bare rmcp
//!    client on its own copy of the same server, in the same run, interleaved.
//!    The same over streamable HTTP (server-everything's `streamableHttp` mode on loopback):
//!    the host's remote client against rmcp's own default reqwest client.
//! 2. Ten stdio servers (node and Python) started together by the supervisor until all are
//!    running, against the slowest of them started alone.
//! 3. Memory: the host process's RSS before and with the ten servers running, and the servers'
//!    own RSS.
//!
//! Run: `cargo bench -p switchboard-core --bench mcp` (prints Markdown).

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceExt;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::json;
use support::{mcp_peers_installed, peers, stdio_launch, Everything};
use switchboard_core::mcp::host::{McpHost, ServerState};
use switchboard_core::mcp::remote::{self, RemoteLaunch, RemoteTransport};
use switchboard_core::mcp::stdio::{self, StdioLaunch};

const CALLS: usize = 300;

fn launch(program: &Path, args: &[String]) -> StdioLaunch {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    stdio_launch(&program.to_string_lossy(), &args, Duration::from_secs(60))
}

fn servers(scratch: &Path) -> Vec<(String, StdioLaunch)> {
    let bin = |n: &str| peers().join("node_modules/.bin").join(n);
    let py = |n: &str| peers().join(".venv/bin").join(n);
    let dir = scratch.to_string_lossy().into_owned();
    let fault = peers()
        .join("fault_server.py")
        .to_string_lossy()
        .into_owned();
    let mut list = Vec::new();
    for copy in 1..=2 {
        list.push((
            format!("everything-{copy}"),
            launch(&bin("mcp-server-everything"), &["stdio".into()]),
        ));
        list.push((
            format!("filesystem-{copy}"),
            launch(&bin("mcp-server-filesystem"), std::slice::from_ref(&dir)),
        ));
        list.push((
            format!("memory-{copy}"),
            launch(&bin("mcp-server-memory"), &[]),
        ));
        list.push((format!("time-{copy}"), launch(&py("mcp-server-time"), &[])));
    }
    list.push((
        "git".into(),
        launch(&py("mcp-server-git"), &["--repository".into(), dir]),
    ));
    list.push(("fault".into(), launch(&py("python"), &[fault])));
    list
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The RSS of `pid` and every process in its group.
fn group_rss_kib(pgid: u32) -> u64 {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(2))
                    .is_some_and(|g| g == pgid.to_string())
            })
        })
        .map(rss_kib)
        .sum()
}

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if !mcp_peers_installed("the mcp bench") {
        return;
    }
    let everything = launch(
        &peers().join("node_modules/.bin/mcp-server-everything"),
        &["stdio".into()],
    );

    // 1. Round trips, host against bare rmcp, interleaved so both see the same machine.
    let host_server = stdio::start("everything", everything.clone())
        .await
        .unwrap();
    let mut command = tokio::process::Command::new(&everything.program);
    command
        .args(&everything.args)
        .env_clear()
        .envs(everything.env.iter().cloned());
    let bare = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let arguments = json!({"message": "ping"}).as_object().unwrap().clone();
    for _ in 0..20 {
        host_server
            .call_tool("echo", arguments.clone(), Duration::from_secs(10))
            .await
            .unwrap();
        bare.call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone()))
            .await
            .unwrap();
    }
    let (mut via_host, mut via_bare) = (Vec::new(), Vec::new());
    for _ in 0..CALLS {
        let t = Instant::now();
        host_server
            .call_tool("echo", arguments.clone(), Duration::from_secs(10))
            .await
            .unwrap();
        via_host.push(t.elapsed());
        let t = Instant::now();
        bare.call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone()))
            .await
            .unwrap();
        via_bare.push(t.elapsed());
    }
    host_server.stop().await;
    let _ = bare.cancel().await;
    let (h50, b50) = (
        percentile(via_host.clone(), 0.5),
        percentile(via_bare.clone(), 0.5),
    );
    println!("## MCP host: `tools/call` round trip (server-everything `echo`, {CALLS} calls each, interleaved)\n");
    println!("| path | median | p95 |");
    println!("|---|---:|---:|");
    println!(
        "| bare rmcp client | {} | {} |",
        ms(b50),
        ms(percentile(via_bare, 0.95))
    );
    println!(
        "| Switchboard host | {} | {} |",
        ms(h50),
        ms(percentile(via_host, 0.95))
    );
    println!(
        "\nHost ÷ bare (median): {:.2}×\n",
        h50.as_secs_f64() / b50.as_secs_f64()
    );

    // 1b. The same over streamable HTTP: the host's remote client against rmcp's default one.
    let everything = Everything::start("the mcp bench", "streamableHttp").unwrap();
    let url = everything.url("/mcp");
    let host_remote = remote::connect(
        "everything-http",
        &RemoteLaunch {
            url: url.clone(),
            headers: Vec::new(),
            transport: RemoteTransport::Http,
            startup_timeout: Duration::from_secs(20),
            auth: None,
            elicitation: Default::default(),
            roots: Default::default(),
        },
    )
    .await
    .unwrap();
    let bare_http = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
    for _ in 0..20 {
        host_remote
            .call_tool("echo", arguments.clone(), Duration::from_secs(10))
            .await
            .unwrap();
        bare_http
            .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone()))
            .await
            .unwrap();
    }
    let (mut via_host, mut via_bare) = (Vec::new(), Vec::new());
    for _ in 0..CALLS {
        let t = Instant::now();
        host_remote
            .call_tool("echo", arguments.clone(), Duration::from_secs(10))
            .await
            .unwrap();
        via_host.push(t.elapsed());
        let t = Instant::now();
        bare_http
            .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments.clone()))
            .await
            .unwrap();
        via_bare.push(t.elapsed());
    }
    host_remote.stop().await;
    let _ = bare_http.cancel().await;
    drop(everything);
    let (h50, b50) = (
        percentile(via_host.clone(), 0.5),
        percentile(via_bare.clone(), 0.5),
    );
    println!("## MCP host: `tools/call` round trip over streamable HTTP (loopback, {CALLS} calls each, interleaved)\n");
    println!("| path | median | p95 |");
    println!("|---|---:|---:|");
    println!(
        "| bare rmcp client (its default reqwest client) | {} | {} |",
        ms(b50),
        ms(percentile(via_bare, 0.95))
    );
    println!(
        "| Switchboard host (remote::connect) | {} | {} |",
        ms(h50),
        ms(percentile(via_host, 0.95))
    );
    println!(
        "\nHost ÷ bare (median): {:.2}×\n",
        h50.as_secs_f64() / b50.as_secs_f64()
    );

    // 2. Ten servers together against the slowest alone.
    let scratch = tempfile::tempdir().unwrap();
    std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(scratch.path())
        .status()
        .unwrap();
    let list = servers(scratch.path());
    let mut alone = Vec::new();
    for (name, launch) in &list {
        let t = Instant::now();
        let server = stdio::start(name, launch.clone()).await.unwrap();
        server.list_tools().await.unwrap();
        alone.push((name.clone(), t.elapsed()));
        server.stop().await;
    }
    let slowest = alone.iter().max_by_key(|(_, d)| *d).unwrap().clone();
    let pids_dir = tempfile::tempdir().unwrap();
    let me = std::process::id();
    let rss_before = rss_kib(me);
    let host = McpHost::new(pids_dir.path().join("pids.json")).await;
    let t = Instant::now();
    for (name, launch) in &list {
        host.spawn(name, launch.clone()).await;
    }
    loop {
        let states = host.states();
        if states
            .values()
            .all(|s| matches!(s, ServerState::Running { .. }))
        {
            break;
        }
        assert!(
            !states
                .values()
                .any(|s| matches!(s, ServerState::Failed { .. })),
            "{states:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let together = t.elapsed();
    println!(
        "## MCP host: {} stdio servers ready (started, initialized, tools listed)\n",
        list.len()
    );
    println!("| | time |");
    println!("|---|---:|");
    for (name, d) in &alone {
        println!("| {name} alone | {} |", ms(*d));
    }
    println!("| **slowest alone** ({}) | {} |", slowest.0, ms(slowest.1));
    println!("| **all {} together** | {} |", list.len(), ms(together));
    println!(
        "\nTogether ÷ slowest alone: {:.2}×\n",
        together.as_secs_f64() / slowest.1.as_secs_f64()
    );

    // 3. Memory.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_with = rss_kib(me);
    let servers_rss: u64 = host
        .states()
        .values()
        .filter_map(|s| match s {
            ServerState::Running { pid: Some(pid), .. } => Some(group_rss_kib(*pid)),
            _ => None,
        })
        .sum();
    println!("## MCP host: memory with {} servers running\n", list.len());
    println!("| | RSS |");
    println!("|---|---:|");
    println!(
        "| host process before | {:.1} MiB |",
        rss_before as f64 / 1024.0
    );
    println!(
        "| host process with the servers | {:.1} MiB (+{:.1} MiB) |",
        rss_with as f64 / 1024.0,
        (rss_with.saturating_sub(rss_before)) as f64 / 1024.0
    );
    println!(
        "| the servers' own processes | {:.1} MiB |",
        servers_rss as f64 / 1024.0
    );
    host.shutdown(Duration::from_secs(10)).await;
}
