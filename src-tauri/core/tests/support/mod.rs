//! What several integration tests (and the benches, which include this file by path) share: a
//! running aimock (the third-party mock of the provider APIs, installed into `tests/peers/` by
//! `scripts/bootstrap.sh test`) with a fixture file of `tests/fixtures/aimock/`, the paths of
//! the peers, and how a test launches a local MCP server.
//!
//! Without the peers installed a test says it was skipped, unless `SWITCHBOARD_REQUIRE_PEERS=1`
//! (set by the test command) makes that a failure.

#![allow(dead_code)] // each test crate uses its own part of this module

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use switchboard_core::mcp::environment::{resolve_command, search_path, server_env};
use switchboard_core::mcp::stdio::StdioLaunch;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn peers() -> PathBuf {
    repo_root().join("tests/peers")
}

/// Whether the MCP peers (server-everything, and the Python venv with our fault server and the
/// PyPI servers) are installed; if not, says `test` is skipped.
pub fn mcp_peers_installed(test: &str) -> bool {
    let ok = peers()
        .join("node_modules/.bin/mcp-server-everything")
        .exists()
        && peers().join(".venv/bin/python").exists();
    if !ok {
        assert!(
            std::env::var_os("SWITCHBOARD_REQUIRE_PEERS").is_none(),
            "the peers in tests/peers are not installed"
        );
        eprintln!("SKIPPED {test}: the MCP peers in tests/peers are not installed");
    }
    ok
}

/// How a test launches a local MCP server: `program` resolved on this process's `PATH`, and the
/// environment filtered the way the app filters it.
pub fn stdio_launch(program: &str, args: &[&str], startup_timeout: Duration) -> StdioLaunch {
    let path = search_path(None, std::env::var_os("PATH").as_deref());
    StdioLaunch {
        program: resolve_command(program, &path, Path::new("/")).unwrap(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: server_env(std::env::vars_os(), &path, []),
        cwd: None,
        stderr_log: None,
        startup_timeout,
        elicitation: Default::default(),
    }
}

/// A running aimock, stopped when dropped.
pub struct Aimock {
    child: Child,
    pub root: String,
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts aimock on a free loopback port with `tests/fixtures/aimock/<fixtures>` and `extra`
/// flags, or says the test is skipped.
pub fn aimock(test: &str, fixtures: &str, extra: &[&str]) -> Option<Aimock> {
    let cli = peers().join("node_modules/@copilotkit/aimock/dist/cli.js");
    if !cli.exists() {
        assert!(
            std::env::var_os("SWITCHBOARD_REQUIRE_PEERS").is_none(),
            "aimock is not installed: run `npm install` in tests/peers (scripts/bootstrap.sh test does)"
        );
        eprintln!("SKIPPED {test}: aimock is not installed in tests/peers (scripts/bootstrap.sh test installs it)");
        return None;
    }
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let fixtures = repo_root().join("tests/fixtures/aimock").join(fixtures);
    let child = Command::new("node")
        .arg(&cli)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .arg("--fixtures")
        .arg(&fixtures)
        .args(["--log-level", "warn"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("node runs aimock");
    let mock = Aimock {
        child,
        root: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "aimock did not start on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(mock)
}

impl Aimock {
    /// What aimock received, oldest first.
    pub async fn journal(&self) -> Vec<Value> {
        let text = switchboard_core::net::client_builder()
            .build()
            .unwrap()
            .get(format!("{}/__aimock/journal?limit=1000", self.root))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let mut entries: Vec<Value> = serde_json::from_str(&text).unwrap();
        entries.sort_by_key(|e| e["timestamp"].as_i64());
        entries
    }
}
