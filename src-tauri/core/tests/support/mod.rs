//! What several integration tests share: a running aimock (the third-party mock of the
//! provider APIs, installed into `tests/peers/` by `scripts/bootstrap.sh test`) with a fixture
//! file of `tests/fixtures/aimock/`, and the paths of the peers.
//!
//! Without the mock installed a test says it was skipped, unless `SWITCHBOARD_REQUIRE_PEERS=1`
//! (set by the test command) makes that a failure.

#![allow(dead_code)] // each test crate uses its own part of this module

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn peers() -> PathBuf {
    repo_root().join("tests/peers")
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
