//! Servers in a sandbox, for real on this Linux kernel (Landlock, user namespaces): a hostile
//! server (tests/peers/hostile_server.py) tries to read a planted key, write outside its roots,
//! follow a symlink out of a root, connect to a port of this computer, send a datagram, signal
//! a process outside, and do the same from a child and from a grandchild that left by `setsid`
//! and a double fork — each refused, while what it was given still works. The real
//! server-filesystem works inside its roots sandboxed; `switchboard mcp sandbox` turns it on
//! and off, keeping the approval only when the sandbox gives no more.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::mcp::server::McpServer;
use switchboard_core::mcp::stdio;
use switchboard_core::sandbox::{self, Network, PlanInputs, SandboxEntry};

#[path = "threats/scripted.rs"]
#[allow(dead_code)]
mod scripted;
mod support;

/// Whether this kernel can sandbox and the peers are installed; if not, says `test` is
/// skipped.
fn ready(test: &str) -> bool {
    match sandbox::available() {
        Ok(()) => support::mcp_peers_installed(test),
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            false
        }
    }
}

/// `launch` in the sandbox `entry` makes for `home` and `roots`, its own folder its working
/// folder.
fn sandboxed(
    mut launch: switchboard_core::mcp::stdio::StdioLaunch,
    home: &Path,
    roots: &[std::path::PathBuf],
    entry: &SandboxEntry,
) -> switchboard_core::mcp::stdio::StdioLaunch {
    let plan = sandbox::plan(
        entry,
        &PlanInputs {
            home,
            roots,
            program: &launch.program,
            args: &launch.args,
            cwd: None,
            private_dir: home.join(".local/share/switchboard/sandbox/server"),
        },
    );
    launch.cwd = Some(plan.private_dir.clone());
    launch.sandbox = Some(plan);
    launch
}

/// A home folder with a planted key, a root holding a file and a symlink out to the key.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
        std::fs::create_dir_all(home.join("notes")).unwrap();
        std::fs::write(home.join("notes/a.txt"), "my notes").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh/id_ed25519"), home.join("notes/link")).unwrap();
        Home { dir }
    }

    fn path(&self, rel: &str) -> String {
        self.dir.path().join(rel).display().to_string()
    }
}

/// The hostile server started in the sandbox `entry` makes for `home`.
async fn hostile(home: &Home, entry: &SandboxEntry) -> McpServer {
    let python = support::peers().join(".venv/bin/python");
    let script = support::peers().join("hostile_server.py");
    let launch = support::stdio_launch(
        python.to_str().unwrap(),
        &[script.to_str().unwrap()],
        Duration::from_secs(30),
    );
    let launch = sandboxed(
        launch,
        home.dir.path(),
        &[home.dir.path().join("notes")],
        entry,
    );
    stdio::start("hostile", launch).await.unwrap()
}

async fn ask(server: &McpServer, tool: &str, op: &str, target: &str) -> String {
    let mut arguments = Map::new();
    arguments.insert("op".into(), json!(op));
    arguments.insert("target".into(), json!(target));
    let result = server
        .call_tool(tool, arguments, Duration::from_secs(30))
        .await
        .unwrap();
    let value = serde_json::to_value(&result.content).unwrap();
    value[0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Runs `switchboard ARGS…` against `app`.
async fn cli(app: &Arc<switchboard_core::App>, args: &[&str]) -> (Result<(), String>, String) {
    support::run_cli(
        Arc::clone(app),
        args.iter().map(|s| (*s).to_owned()).collect(),
    )
    .await
}

/// An app (its home `home`) with the hostile server added and approved from the command line,
/// then each of `then` run; the secrets store is kept alive beside it.
async fn app_with_hostile(
    home: &Path,
    then: &[&[&str]],
) -> (
    Arc<switchboard_core::App>,
    Arc<switchboard_core::secrets::MemoryStore>,
) {
    let (app, secrets) = scripted::memory_app(home).await;
    let python = support::peers().join(".venv/bin/python");
    let script = support::peers().join("hostile_server.py");
    let add = [
        "mcp",
        "add",
        "hostile",
        "--",
        python.to_str().unwrap(),
        script.to_str().unwrap(),
    ];
    for args in [&add[..], &["mcp", "approve", "hostile", "--yes"]]
        .into_iter()
        .chain(then.iter().copied())
    {
        let (ran, out) = cli(&app, args).await;
        ran.unwrap_or_else(|e| panic!("{args:?}: {e} {out}"));
    }
    (app, secrets)
}

/// Widens the running hostile server's sandbox by what it was `refused` (the native dialog
/// answered yes) and waits for it to run again; the server as it now runs.
async fn widened(app: &Arc<switchboard_core::App>, refused: &str) -> Arc<McpServer> {
    let before = app.host().server("hostile").unwrap();
    let approved = app
        .widen_server_sandbox(
            "hostile",
            refused,
            &switchboard_core::policy::confirm::Always(true),
        )
        .await
        .unwrap();
    assert!(approved);
    support::eventually(Duration::from_secs(30), "the server runs again", || {
        let now = app
            .host()
            .server("hostile")
            .filter(|now| !Arc::ptr_eq(now, &before));
        async move { now }
    })
    .await
}

fn on(network: Network) -> SandboxEntry {
    SandboxEntry {
        enabled: true,
        network,
        ..SandboxEntry::default()
    }
}

#[tokio::test]
async fn a_hostile_server_reaches_only_what_it_was_given_and_so_does_everything_it_starts() {
    if !ready("a_hostile_server_reaches_only_what_it_was_given") {
        return;
    }
    let home = Home::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let loopback = format!("127.0.0.1:{port}");
    let outside = tempfile::tempdir().unwrap();
    let written_outside = outside.path().join("dropped.txt").display().to_string();
    // A Unix socket of this computer, as the session bus (and the keychain behind it) is.
    let bus = outside.path().join("bus");
    let _bus = std::os::unix::net::UnixListener::bind(&bus).unwrap();
    let bus = bus.display().to_string();
    let server = hostile(&home, &on(Network::None)).await;
    let me = std::process::id().to_string();

    for tool in ["try_it", "from_child", "from_escaped"] {
        // Given: its root, read and written.
        assert_eq!(
            ask(&server, tool, "read", &home.path("notes/a.txt")).await,
            "ok: my notes",
            "{tool}"
        );
        let new = home.path(&format!("notes/{tool}.txt"));
        assert_eq!(
            ask(&server, tool, "write", &new).await,
            "ok: written",
            "{tool}"
        );
        // Not given: each refused by the system, not by the server's own choice.
        for (op, target) in [
            ("read", home.path(".ssh/id_ed25519")),
            ("list", home.path(".ssh")),
            ("list", home.path("")),
            ("read", home.path("notes/link")),
            ("write", home.path("dropped.txt")),
            ("write", written_outside.clone()),
            ("connect", loopback.clone()),
            ("unix", bus.clone()),
            ("signal", me.clone()),
        ] {
            let said = ask(&server, tool, op, &target).await;
            assert!(
                said.starts_with("refused: "),
                "{tool} {op} {target}: {said}"
            );
        }
        // A datagram goes nowhere: its network is its own.
        let said = ask(&server, tool, "udp", &loopback).await;
        assert!(
            said.starts_with("refused: ") || said == "ok: sent",
            "{tool} udp: {said}"
        );
    }
    assert!(!Path::new(&written_outside).exists());
    assert!(!home.dir.path().join("dropped.txt").exists());
    // The system stays readable.
    assert!(
        ask(&server, "try_it", "read", "/etc/hostname")
            .await
            .starts_with("ok: ")
            || !Path::new("/etc/hostname").exists()
    );
    server.stop().await;

    // With any network, the same server reaches this computer's port; files and Unix
    // sockets stay closed.
    let server = hostile(&home, &on(Network::Any)).await;
    assert_eq!(
        ask(&server, "from_escaped", "connect", &loopback).await,
        "ok: connected"
    );
    let said = ask(&server, "from_child", "unix", &bus).await;
    assert!(said.starts_with("refused: 1 "), "{said}");
    assert!(
        ask(&server, "try_it", "read", &home.path(".ssh/id_ed25519"))
            .await
            .starts_with("refused: ")
    );
    server.stop().await;
}

#[tokio::test]
async fn the_real_filesystem_server_works_inside_its_roots_sandboxed() {
    if !ready("the_real_filesystem_server_works_inside_its_roots_sandboxed") {
        return;
    }
    let home = Home::new();
    let root = home.dir.path().join("notes");
    let program = support::peers().join("node_modules/.bin/mcp-server-filesystem");
    let launch = support::stdio_launch(
        program.to_str().unwrap(),
        &[root.to_str().unwrap()],
        Duration::from_secs(30),
    );
    let launch = sandboxed(
        launch,
        home.dir.path(),
        std::slice::from_ref(&root),
        &on(Network::None),
    );
    let server = stdio::start("fs", launch).await.unwrap();
    let call = |tool: &'static str, arguments: Value| {
        let server = &server;
        async move {
            let result = server
                .call_tool(
                    tool,
                    arguments.as_object().unwrap().clone(),
                    Duration::from_secs(30),
                )
                .await
                .unwrap();
            serde_json::to_string(&result).unwrap()
        }
    };
    let read = call("read_text_file", json!({"path": root.join("a.txt")})).await;
    assert!(read.contains("my notes"), "{read}");
    let wrote = call(
        "write_file",
        json!({"path": root.join("b.txt"), "content": "made in the sandbox"}),
    )
    .await;
    assert!(!wrote.contains("\"isError\":true"), "{wrote}");
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "made in the sandbox"
    );
    // Its own check refuses the link out of its root; the sandbox would too.
    let link = call("read_text_file", json!({"path": root.join("link")})).await;
    assert!(!link.contains("PRIVATE KEY"), "{link}");
    server.stop().await;
}

#[tokio::test]
async fn the_command_line_turns_the_sandbox_on_and_off_and_asks_again_only_when_it_widens() {
    if !ready("the_command_line_turns_the_sandbox_on_and_off") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, _secrets) = app_with_hostile(home.path(), &[]).await;
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("dropped.txt");
    let write = json!({"op": "write", "target": target}).to_string();

    // On: the approval stays (it gives the server less), and a write outside is refused.
    let (ran, out) = cli(&app, &["mcp", "sandbox", "hostile", "on"]).await;
    ran.unwrap();
    assert!(
        out.contains(
            "can read and write: only its own folder; can read: the system; network: none"
        ),
        "{out}"
    );
    let (ran, out) = cli(&app, &["mcp", "call", "hostile", "try_it", &write]).await;
    ran.unwrap();
    assert!(out.starts_with("refused: "), "{out}");
    assert!(!target.exists());
    let (ran, out) = cli(&app, &["mcp", "sandbox", "hostile", "show", "--json"]).await;
    ran.unwrap();
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["approved"], true);
    assert_eq!(shown["sandbox"]["network"], "none");

    // A folder given to write: it gives more, so the server needs approving again.
    let (ran, out) = cli(
        &app,
        &[
            "mcp",
            "sandbox",
            "hostile",
            "on",
            "--allow-write",
            outside.path().to_str().unwrap(),
        ],
    )
    .await;
    ran.unwrap();
    assert!(out.contains("approve it again"), "{out}");
    let (ran, _) = cli(&app, &["mcp", "call", "hostile", "try_it", &write]).await;
    assert!(ran.is_err(), "not approved: it does not start");
    let (ran, _) = cli(&app, &["mcp", "approve", "hostile", "--yes"]).await;
    ran.unwrap();
    let (ran, out) = cli(&app, &["mcp", "call", "hostile", "try_it", &write]).await;
    ran.unwrap();
    assert!(out.starts_with("ok: written"), "{out}");

    // Off: all of the person's rights again, after a new approval.
    let (ran, _) = cli(&app, &["mcp", "sandbox", "hostile", "off"]).await;
    ran.unwrap();
    let (ran, out) = cli(&app, &["mcp", "sandbox", "hostile", "show", "--json"]).await;
    ran.unwrap();
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["approved"], false, "{shown}");
    assert_eq!(shown["said"], "off: it runs with all your rights");
}

#[tokio::test]
async fn what_the_sandbox_refused_shows_on_the_server_and_one_approval_gives_it() {
    if !ready("what_the_sandbox_refused_shows_on_the_server") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, _secrets) =
        app_with_hostile(home.path(), &[&["mcp", "sandbox", "hostile", "on"]]).await;
    app.mcp_restart("hostile").await.unwrap();
    support::server_running(app.host(), "hostile").await;
    let server = app.host().server("hostile").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("dropped.txt");
    let mut arguments = Map::new();
    arguments.insert("path".into(), json!(target));
    let result = server
        .call_tool("write_file", arguments.clone(), Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let refused = format!("write {}", target.display());
    let status = app.mcp_status().await.unwrap();
    let shown = status.iter().find(|s| s.server.name == "hostile").unwrap();
    assert_eq!(shown.sandbox_refused, vec![refused.clone()]);

    // The window cannot name anything it was not refused.
    let made_up = app
        .widen_server_sandbox(
            "hostile",
            "read /etc",
            &switchboard_core::policy::confirm::Always(true),
        )
        .await;
    assert!(made_up.is_err());
    // One approval (the native dialog, here answered yes) gives it that file, and it runs.
    let server = widened(&app, &refused).await;
    let (_, said) = app.server_sandbox("hostile").unwrap();
    assert!(
        said.contains(&format!("can read and write: {}", outside.path().display())),
        "the file's folder: {said}"
    );
    let result = server
        .call_tool("write_file", arguments, Duration::from_secs(30))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(target.exists());
    app.host().shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn with_a_list_of_hosts_it_reaches_those_through_its_proxy_and_nothing_else() {
    if !ready("with_a_list_of_hosts_it_reaches_those_through_its_proxy") {
        return;
    }
    let home = Home::new();
    // Two ports of this computer standing for two hosts: one listed, one not.
    let listed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let listed_port = listed.local_addr().unwrap().port();
    let listed = format!("127.0.0.1:{listed_port}");
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    let other = format!("127.0.0.1:{other_port}");
    let entry = SandboxEntry {
        enabled: true,
        network: Network::Hosts,
        hosts: vec![listed.clone()],
        ..SandboxEntry::default()
    };
    let server = hostile(&home, &entry).await;
    let named_here = format!("localhost:{listed_port}");
    let socket_dir = tempfile::tempdir().unwrap();
    let bus = socket_dir.path().join("bus");
    let _bus = std::os::unix::net::UnixListener::bind(&bus).unwrap();
    let bus = bus.display().to_string();
    for tool in ["try_it", "from_child", "from_escaped"] {
        assert_eq!(
            ask(&server, tool, "proxy", &listed).await,
            "ok: connected",
            "{tool}"
        );
        let said = ask(&server, tool, "proxy", &other).await;
        assert!(said.starts_with("refused: HTTP/1.1 403"), "{tool}: {said}");
        // Around the proxy, even to the listed host: refused by the system.
        let said = ask(&server, tool, "connect", &listed).await;
        assert!(said.starts_with("refused: "), "{tool}: {said}");
        // Nor does the proxy's port lead anywhere else: its network holds nothing but it.
        let elsewhere = format!("192.0.2.1:{}", sandbox::INSIDE_PORT);
        let said = ask(&server, tool, "connect", &elsewhere).await;
        assert!(
            said.starts_with("refused: 101 "),
            "unreachable: {tool}: {said}"
        );
        // Nor a datagram (DNS to anywhere would do), nor a Unix socket.
        for (op, target) in [("udp", other.as_str()), ("unix", bus.as_str())] {
            let said = ask(&server, tool, op, target).await;
            assert!(said.starts_with("refused: 1 "), "{tool} {op}: {said}");
        }
        // Files stay as closed as with no network.
        let said = ask(&server, tool, "read", &home.path(".ssh/id_ed25519")).await;
        assert!(said.starts_with("refused: "), "{tool}: {said}");
    }
    // The proxy's refusals are on its card, exactly.
    let said = ask(&server, "try_it", "proxy", &named_here).await;
    assert!(
        said.starts_with("refused: HTTP/1.1 403"),
        "a name leading here: {said}"
    );
    let refused = server.sandbox_refusals();
    assert!(refused.contains(&format!("connect {other}")), "{refused:?}");
    assert!(
        refused.contains(&format!("connect {named_here}")),
        "{refused:?}"
    );
    server.stop().await;

    // Loopback on: this computer's ports, and still nothing else.
    let entry = SandboxEntry {
        hosts: Vec::new(),
        loopback: true,
        ..entry
    };
    let server = hostile(&home, &entry).await;
    assert_eq!(
        ask(&server, "from_escaped", "proxy", &other).await,
        "ok: connected"
    );
    let said = ask(&server, "try_it", "proxy", "example.com:443").await;
    assert!(said.starts_with("refused: HTTP/1.1 403"), "{said}");
    server.stop().await;
}

#[tokio::test]
async fn an_npx_server_starts_sandboxed_with_its_defaults() {
    if !ready("an_npx_server_starts_sandboxed_with_its_defaults") {
        return;
    }
    // The person's own home: npx's cache (~/.npm) is where the peers were installed from.
    let home = dirs::home_dir().unwrap();
    let package = format!(
        "@modelcontextprotocol/server-everything@{}",
        support::peer_version("@modelcontextprotocol/server-everything")
    );
    let mut launch =
        support::stdio_launch("npx", &["-y", &package, "stdio"], Duration::from_secs(120));
    // Offline first: what the peers' install fetched is used without asking the registry.
    launch
        .env
        .push(("npm_config_prefer_offline".into(), "true".into()));
    let reach = sandbox::default_reach(&launch.program, &home, &|k| std::env::var(k).ok());
    assert_eq!(
        reach.network,
        Network::Hosts,
        "npx gets its registry: {reach:?}"
    );
    assert!(!reach.hosts.is_empty());
    let mut entry = SandboxEntry {
        enabled: true,
        ..SandboxEntry::default()
    };
    entry.set_reach(reach);
    let private = tempfile::tempdir().unwrap();
    let plan = sandbox::plan(
        &entry,
        &PlanInputs {
            home: &home,
            roots: &[],
            program: &launch.program,
            args: &launch.args,
            cwd: None,
            private_dir: private.path().join("everything"),
        },
    );
    launch.cwd = Some(plan.private_dir.clone());
    launch.sandbox = Some(plan);
    let server = stdio::start("everything", launch).await.unwrap();
    let mut arguments = Map::new();
    arguments.insert("message".into(), json!("from the sandbox"));
    let result = server
        .call_tool("echo", arguments, Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        serde_json::to_string(&result)
            .unwrap()
            .contains("from the sandbox"),
        "{result:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_host_its_proxy_refused_joins_its_list_with_one_approval() {
    if !ready("a_host_its_proxy_refused_joins_its_list_with_one_approval") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let host = format!("127.0.0.1:{}", host.local_addr().unwrap().port());
    let (app, _secrets) = app_with_hostile(
        home.path(),
        &[&[
            "mcp",
            "sandbox",
            "hostile",
            "on",
            "--network",
            "Example.invalid",
        ]],
    )
    .await;
    let (_, said) = app.server_sandbox("hostile").unwrap();
    assert!(said.ends_with("network: example.invalid only"), "{said}");
    app.mcp_restart("hostile").await.unwrap();
    support::server_running(app.host(), "hostile").await;
    let server = app.host().server("hostile").unwrap();
    let said = ask(&server, "try_it", "proxy", &host).await;
    assert!(said.starts_with("refused: HTTP/1.1 403"), "{said}");
    let refused = format!("connect {host}");
    let status = app.mcp_status().await.unwrap();
    let shown = status.iter().find(|s| s.server.name == "hostile").unwrap();
    assert_eq!(shown.sandbox_refused, vec![refused.clone()]);

    // One approval (the native dialog, answered yes here) puts the host on its list.
    let server = widened(&app, &refused).await;
    let (_, said) = app.server_sandbox("hostile").unwrap();
    assert!(
        said.ends_with(&format!("network: example.invalid and {host} only")),
        "{said}"
    );
    assert_eq!(
        ask(&server, "try_it", "proxy", &host).await,
        "ok: connected"
    );

    // Loopback from the command line: kept with the list, said in words.
    let (ran, out) = cli(
        &app,
        &["mcp", "sandbox", "hostile", "on", "--loopback", "on"],
    )
    .await;
    ran.unwrap();
    assert!(
        out.contains(&format!(
            "network: example.invalid, {host} and this computer"
        )),
        "{out}"
    );
    let (ran, _) = cli(
        &app,
        &[
            "mcp",
            "sandbox",
            "hostile",
            "on",
            "--network",
            "any",
            "--loopback",
            "on",
        ],
    )
    .await;
    assert!(ran.is_err(), "loopback goes with a list");
    app.host().shutdown(Duration::from_secs(5)).await;
}
