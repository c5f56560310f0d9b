//! The supervisor with real servers: everything starts in the background at once, a crash
//! restarts with backoff, a server that keeps dying is left failed with its last words,
//! shutdown leaves no process, and groups left by a killed app are stopped at the next start.
//! Unix only: its servers are shell scripts and its leftovers process groups.
#![cfg(unix)]

mod support;

use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use serde_json::Map;
use switchboard_core::mcp::host::{stop_left_by_gone_processes, McpHost, ServerState};
use switchboard_core::mcp::stdio::StdioLaunch;

use support::{mcp_peers_installed, peers, stdio_launch};

fn launch(program: &str, args: &[&str]) -> StdioLaunch {
    stdio_launch(program, args, Duration::from_secs(20))
}

fn everything() -> StdioLaunch {
    launch(
        &peers()
            .join("node_modules/.bin/mcp-server-everything")
            .to_string_lossy(),
        &["stdio"],
    )
}

fn fault() -> StdioLaunch {
    let script = peers().join("fault_server.py");
    launch(
        &peers().join(".venv/bin/python").to_string_lossy(),
        &[&script.to_string_lossy()],
    )
}

async fn wait_for(host: &McpHost, name: &str, what: impl Fn(&ServerState) -> bool) -> ServerState {
    support::server_state_within(host, name, Duration::from_secs(30), what).await
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_start_in_the_background_and_a_crash_restarts_with_backoff() {
    if !mcp_peers_installed("servers_start_in_the_background_and_a_crash_restarts_with_backoff") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = McpHost::new(dir.path().join("pids.json"))
        .await
        .with_backoff_unit(Duration::from_millis(50));
    let began = Instant::now();
    host.spawn("everything", everything()).await;
    host.spawn("faulty", fault()).await;
    host.spawn(
        "time",
        launch(
            &peers().join(".venv/bin/mcp-server-time").to_string_lossy(),
            &[],
        ),
    )
    .await;
    assert!(
        began.elapsed() < Duration::from_millis(500),
        "spawning does not wait for servers"
    );
    for name in ["everything", "faulty", "time"] {
        wait_for(&host, name, |s| matches!(s, ServerState::Running { .. })).await;
    }
    let states = host.states();
    let ServerState::Running {
        pid: Some(first_pid),
        tools,
        ref apps,
    } = states["faulty"]
    else {
        panic!()
    };
    assert_eq!(tools, 19);
    // Its state names the tools that have an MCP App, so a card asks only for those.
    assert_eq!(apps, &["dashboard".to_owned()]);
    let records = std::fs::read_to_string(dir.path().join("pids.json")).unwrap();
    assert!(
        records.contains("faulty") && records.contains("everything"),
        "{records}"
    );

    // A server that adds a tool and says so has its list read again.
    let server = host.server("faulty").unwrap();
    let grow = serde_json::json!({"name": "sprout"});
    server
        .call_tool(
            "grow",
            grow.as_object().unwrap().clone(),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    wait_for(&host, "faulty", |s| {
        matches!(s, ServerState::Running { tools: 20, .. })
    })
    .await;

    // The fault server dies mid-call: the call fails at once and the server comes back.
    assert!(server
        .call_tool("crash", Map::new(), Duration::from_secs(30))
        .await
        .is_err());
    let back = wait_for(
        &host,
        "faulty",
        |s| matches!(s, ServerState::Running { pid: Some(p), .. } if *p != first_pid),
    )
    .await;
    assert!(
        matches!(back, ServerState::Running { tools: 19, .. }),
        "the restarted server starts afresh: {back:?}"
    );

    host.shutdown(Duration::from_secs(10)).await;
    for (name, state) in host.states() {
        assert_eq!(state, ServerState::Stopped, "{name}");
    }
    assert!(!alive(first_pid));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pids.json")).unwrap(),
        "{}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_keeps_dying_is_left_failed_after_five_tries_with_its_last_words() {
    let dir = tempfile::tempdir().unwrap();
    let host = McpHost::new(dir.path().join("pids.json"))
        .await
        .with_backoff_unit(Duration::from_millis(20));
    host.spawn(
        "doomed",
        launch(
            "sh",
            &["-c", "echo \"doomed: DATABASE_URL is not set\" >&2; exit 1"],
        ),
    )
    .await;
    let seen_restart = wait_for(&host, "doomed", |s| {
        matches!(
            s,
            ServerState::Restarting { .. } | ServerState::Failed { .. }
        )
    })
    .await;
    assert!(
        matches!(&seen_restart, ServerState::Restarting { reason, .. } if reason.contains("DATABASE_URL")),
        "{seen_restart:?}"
    );
    let failed = wait_for(&host, "doomed", |s| matches!(s, ServerState::Failed { .. })).await;
    let ServerState::Failed { reason } = failed else {
        unreachable!()
    };
    assert!(
        reason.contains("DATABASE_URL is not set") && reason.contains("5 tries"),
        "{reason}"
    );
}

#[tokio::test]
async fn server_groups_left_by_a_killed_app_are_stopped_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    // A "server" that was running when the app was killed: its own group, with a child.
    let mut leftover = std::process::Command::new("sh")
        .args(["-c", "sleep 1000 & exec sleep 1001"])
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = leftover.id();
    let start_time = start_time_of(pgid);
    // And a record whose process has been replaced by another (a reused PID): left alone.
    let mut bystander = std::process::Command::new("sleep")
        .arg("1002")
        .process_group(0)
        .spawn()
        .unwrap();
    // And a server whose leader has exited (its stdin closed with the app) but whose child
    // lives on in its group.
    let orphaned_group = std::process::Command::new("sh")
        .args(["-c", "sleep 1003 >/dev/null 2>&1 & echo $!"])
        .process_group(0)
        .output()
        .unwrap();
    let orphan: u32 = String::from_utf8_lossy(&orphaned_group.stdout)
        .trim()
        .parse()
        .unwrap();
    let orphan_pgid = group_of(orphan);
    let records = serde_json::json!({
        "leftover": {"pgid": pgid, "start_time": start_time},
        "reused": {"pgid": bystander.id(), "start_time": 1},
        "orphaned": {"pgid": orphan_pgid, "start_time": 1},
    });
    std::fs::write(dir.path().join("pids.json"), records.to_string()).unwrap();

    let _host = McpHost::new(dir.path().join("pids.json")).await;
    let status = leftover.wait().unwrap();
    assert!(!status.success(), "the leftover was stopped");
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "a reused PID is not killed"
    );
    bystander.kill().unwrap();
    bystander.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pids.json")).unwrap(),
        "{}"
    );
    // The leftover's child went with it.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !group_members(pgid).is_empty() {
        assert!(
            Instant::now() < deadline,
            "{:?} still in the group",
            group_members(pgid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process's start time as the supervisor records it (field 22 of /proc/PID/stat).
fn start_time_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap()
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap()
}

/// A group with a child, as a server leaves it, and its record (`pgid`, `start_time`).
fn running_group(seconds: u32) -> (std::process::Child, serde_json::Value) {
    let child = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("sleep {seconds} & exec sleep {}", seconds + 1),
        ])
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = child.id();
    let start_time = start_time_of(pgid);
    (
        child,
        serde_json::json!({"server": {"pgid": pgid, "start_time": start_time}}),
    )
}

#[tokio::test]
async fn servers_left_by_a_killed_command_line_or_window_are_stopped_by_whoever_starts_next() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    // A process that has ended: its id names no process now.
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    let dead = ended.id();
    ended.wait().unwrap();
    // `switchboard chat` killed with -9 while its server ran.
    let (mut cli_server, cli_record) = running_group(1100);
    let cli_file = data.join(format!("mcp-processes-cli-{dead}.json"));
    std::fs::write(&cli_file, cli_record.to_string()).unwrap();
    // The window killed too: instance.json still names it.
    let (mut window_server, window_record) = running_group(1200);
    let window_file = data.join("mcp-processes.json");
    std::fs::write(&window_file, window_record.to_string()).unwrap();
    std::fs::write(
        data.join("instance.json"),
        serde_json::json!({"pid": dead, "port": 1, "token": "t"}).to_string(),
    )
    .unwrap();
    // A command line still running (this test's own process): its servers are its own.
    let (mut live_server, live_record) = running_group(1300);
    let live_file = data.join(format!("mcp-processes-cli-{}.json", std::process::id()));
    std::fs::write(&live_file, live_record.to_string()).unwrap();

    stop_left_by_gone_processes(data, &data.join("mine.json"), &window_file).await;
    assert!(
        !cli_server.wait().unwrap().success(),
        "the killed command line's server is stopped"
    );
    assert!(
        !window_server.wait().unwrap().success(),
        "the killed window's server is stopped"
    );
    assert!(
        !cli_file.exists() && !window_file.exists(),
        "their records are gone"
    );
    assert!(
        live_server.try_wait().unwrap().is_none(),
        "a live process's server runs on"
    );
    assert!(live_file.exists());
    live_server.kill().unwrap();
    live_server.wait().unwrap();
    // Its child too, as the app would on quitting (each by its own id: nothing wider).
    let pgid = u32::try_from(live_record["server"]["pgid"].as_u64().unwrap()).unwrap();
    for pid in group_members(pgid) {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
}

fn group_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap()
}

/// Live (not zombie) processes whose process group is `pgid`, read from /proc.
fn group_members(pgid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let fields: Vec<&str> = stat
                    .rsplit_once(')')
                    .map_or("", |r| r.1)
                    .split_whitespace()
                    .collect();
                fields.first() != Some(&"Z") && fields.get(2) == Some(&pgid.to_string().as_str())
            })
        })
        .collect()
}
