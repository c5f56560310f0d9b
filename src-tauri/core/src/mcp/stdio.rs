//! One MCP server as a child process speaking JSON-RPC on stdin/stdout (rmcp's client over the
//! child's pipes), owned from start to stop:
//! - its own process group (Unix) or Job Object (Windows), so stopping it stops everything it
//!   started;
//! - stdout behind a 32 MiB line cap: a longer line stops the server with a clear error instead
//!   of being buffered;
//! - stderr drained all the time into a bounded ring (its tail goes into every start failure
//!   and crash message) and a log file;
//! - a startup deadline for a server that never answers `initialize`;
//! - stop = close stdin (the MCP spec's shutdown), wait [`STDIN_GRACE`] (40 ms), then TERM
//!   to the whole group and KILL to whatever of it is left up to two seconds later: a leader
//!   that exits politely may leave children of its own behind;
//! - its exit awaited, not polled, and reported with the exit code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::ClientServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use super::client::Roots;
use super::client::{HostClient, Start};
use super::elicitation::Elicitation;
use super::error::{McpError, STDERR_TAIL_CHARS};
use super::nesting;
use super::process::StderrRing;
use super::process::{end_process_group, term_group, GroupGuard, STDIN_GRACE};
use super::server::McpServer;

/// The longest line a server may send on stdout; a longer one stops it with a clear error
/// instead of being buffered. A heavy day's 10 MB result is twice that on the wire when the
/// server sends it as text and as structured content too (the Python SDK does for a tool
/// that returns a string), so the cap is well above it.
pub const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// Everything needed to start one stdio server; built by the host from the config, the login
/// shell's `PATH` and the keychain. The environment holds real secrets, so `Debug` shows only
/// its names.
#[derive(Clone)]
pub struct StdioLaunch {
    /// The resolved program.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The whole environment (nothing else is inherited).
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    /// Where stderr is appended, besides the ring.
    pub stderr_log: Option<PathBuf>,
    /// The server's own secrets (read from the keychain for its environment), masked in what
    /// its stderr is kept as: a server that prints its token does not write it to a file.
    pub stderr_masks: crate::logging::Masks,
    pub startup_timeout: Duration,
    /// Who shows the server's forms to the person.
    pub elicitation: Elicitation,
    /// The folders it is given as its roots.
    pub roots: Roots,
    /// The sandbox it runs in (`None`: with all the person's rights).
    pub sandbox: Option<crate::sandbox::SandboxPlan>,
}

impl std::fmt::Debug for StdioLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioLaunch")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &self.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

/// Starts the server and completes the MCP handshake.
///
/// # Errors
/// [`McpError::Spawn`] when the program cannot run; [`McpError::Startup`] when it exits or
/// answers wrongly before the handshake ends; [`McpError::StartupTimeout`] past the deadline.
/// Each start error carries the stderr tail, and leaves no process behind.
pub async fn start(name: &str, launch: StdioLaunch) -> Result<McpServer, McpError> {
    start_with(name, launch, |_| {}).await
}

/// [`start`], calling `spawned` with the process id as soon as the process exists (before the
/// handshake), so a supervisor can record it even if the app dies during start-up.
///
/// # Errors
/// As [`start`].
pub async fn start_with(
    name: &str,
    launch: StdioLaunch,
    spawned: impl Fn(Option<u32>) + Send + Sync,
) -> Result<McpServer, McpError> {
    match start_once(name, &launch, true, &spawned).await {
        Err(Start::ProbeMisanswered) => {
            tracing::info!(
                server = name,
                "MCP server answered server/discover wrongly; starting it again with initialize"
            );
            match start_once(name, &launch, false, &spawned).await {
                Ok(server) => Ok(server),
                Err(Start::Failed(e)) => Err(e),
                Err(Start::ProbeMisanswered) => unreachable!("no probe without one"),
            }
        }
        Err(Start::Failed(e)) => Err(e),
        Ok(server) => Ok(server),
    }
}

/// One start: with the `server/discover` probe first when `probe`, else `initialize` alone.
async fn start_once(
    name: &str,
    launch: &StdioLaunch,
    probe: bool,
    spawned: &(impl Fn(Option<u32>) + Send + Sync),
) -> Result<McpServer, Start> {
    let refusals = launch
        .sandbox
        .clone()
        .map(|plan| Arc::new(crate::sandbox::Refusals::new(plan)));
    let sandbox_error = |e: std::io::Error| McpError::Spawn {
        server: name.to_owned(),
        detail: format!(
            "{} (it could not be put in its sandbox: {e})",
            launch.program.display()
        ),
    };
    // A list of hosts is reached through a proxy of this start's own, which stops with it:
    // inside a network of the server's own where this system allows one (the proxy accepts
    // on the socket the server hands over as it starts), else on this computer's 127.0.0.1.
    let mut proxy = None;
    let list = launch
        .sandbox
        .as_ref()
        .filter(|plan| plan.network == crate::sandbox::Network::Hosts)
        .map(|plan| crate::sandbox::hosts::HostList::new(&plan.hosts, plan.loopback));
    let inside = list.is_some() && crate::sandbox::own_network_allowed();
    if let (Some(list), Some(refusals), false) = (&list, &refusals, inside) {
        if cfg!(target_os = "linux") {
            tracing::warn!(
                server = name,
                "this system allows no network of a server's own: its list of hosts is held \
                 by its proxy's port alone (Landlock), which the same port elsewhere passes"
            );
        }
        proxy = Some(
            crate::sandbox::proxy::Proxy::start(list.clone(), Arc::clone(refusals))
                .await
                .map_err(sandbox_error)?,
        );
    }
    let proxy_port = proxy.as_ref().map(crate::sandbox::proxy::Proxy::port);
    let mut command = crate::sandbox::command::new_command(
        &launch.program,
        &launch.args,
        launch.sandbox.as_ref(),
        proxy_port,
    )
    .map_err(sandbox_error)?;
    command.env_clear().envs(launch.env.iter().cloned());
    if let Some(cwd) = &launch.cwd {
        command.current_dir(cwd);
    }
    let mut handoff = None;
    if let Some(plan) = &launch.sandbox {
        handoff = crate::sandbox::command::confine(&mut command, plan, proxy_port, inside)
            .map_err(sandbox_error)?;
    }
    let mut wrapped = crate::sandbox::command::in_own_group(command);

    let spawn_error = |detail: String| McpError::Spawn {
        server: name.to_owned(),
        detail: format!("{} ({detail})", launch.program.display()),
    };
    wrapped
        .command_mut()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = wrapped.spawn().map_err(|e| spawn_error(e.to_string()))?;
    let (Some(stdin), Some(stdout)) = (
        child.inner_mut().stdin().take(),
        child.inner_mut().stdout().take(),
    ) else {
        return Err(spawn_error("no pipes to the process".into()).into());
    };
    let stderr_pipe = child.inner_mut().stderr().take();
    let pid = child.id();
    spawned(pid);
    // Until the handshake is done, a start that is abandoned (its future dropped: the app
    // quitting, a stop) takes the whole group with it.
    let mut abandoned = GroupGuard(pid);
    if let (Some(handoff), Some(list), Some(refusals)) = (handoff, list, &refusals) {
        let listener = handoff.receive().map_err(sandbox_error)?;
        proxy = Some(
            crate::sandbox::proxy::Proxy::on(listener, list, Arc::clone(refusals))
                .map_err(sandbox_error)?,
        );
    }
    let overlong = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // rmcp drops a line over its own 16 MiB quietly and waits on (the call then hangs to its
    // timeout): its cap is lifted, since ours (LineCap) bounds what the server sends and ends
    // it with a clear error past that; flattening a deep value can lengthen a line a little.
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(
        flattened(
            LineCap::new(stdout, MAX_LINE_BYTES, Arc::clone(&overlong)),
            name,
        ),
        stdin,
    )
    .with_max_line_length(usize::MAX);
    let stderr = Arc::new(StderrRing::default());
    if let Some(pipe) = stderr_pipe {
        tokio::spawn(drain_stderr(
            pipe,
            Arc::clone(&stderr),
            launch.stderr_log.clone(),
            launch.stderr_masks.clone(),
            refusals.clone(),
        ));
    }
    tracing::info!(server = name, pid, program = %launch.program.display(), "MCP server started");

    let (client, heard) = HostClient::new(name, launch.elicitation.clone(), launch.roots.clone());
    let handshake = tokio::time::timeout(
        launch.startup_timeout,
        client.serve_with_lifecycle(transport, super::client::lifecycle(probe)),
    )
    .await;
    let service = match handshake {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => {
            // Give a dying server a moment to finish its last words.
            tokio::time::sleep(Duration::from_millis(100)).await;
            end_process_group(pid).await;
            if probe && super::client::misanswered_probe(&e) {
                return Err(Start::ProbeMisanswered);
            }
            let detail = if overlong.load(std::sync::atomic::Ordering::SeqCst) {
                format!(
                    "it sent a single line longer than {} MiB on stdout",
                    MAX_LINE_BYTES / (1024 * 1024)
                )
            } else {
                super::error::readable(&e)
            };
            return Err(McpError::Startup {
                server: name.to_owned(),
                detail,
                stderr_tail: stderr.tail(STDERR_TAIL_CHARS),
            }
            .into());
        }
        Err(_) => {
            end_process_group(pid).await;
            return Err(McpError::StartupTimeout {
                server: name.to_owned(),
                after: launch.startup_timeout,
                stderr_tail: stderr.tail(STDERR_TAIL_CHARS),
            }
            .into());
        }
    };
    abandoned.0 = None;
    Ok(McpServer::new(
        name,
        service,
        heard,
        pid,
        stderr,
        move |reason| async move {
            // The proxy lives as long as the server.
            let _proxy = proxy;
            // The connection is closed (stdin with it): give the server a moment to exit on
            // its own, else TERM its group; its leader is reaped as it leaves (an exited
            // leader not yet reaped would count as still running), then whatever is left of
            // the group is ended, and why it ended is said.
            let mut status = tokio::time::timeout(STDIN_GRACE, child.wait())
                .await
                .ok()
                .and_then(Result::ok);
            if status.is_none() && term_group(pid) {
                status = tokio::time::timeout(Duration::from_secs(1), child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
            }
            end_process_group(pid).await;
            let status = match status {
                Some(status) => Some(status),
                None => child.wait().await.ok(),
            };
            if overlong.load(std::sync::atomic::Ordering::SeqCst) {
                return format!(
                    "stopped: it sent a single line longer than {} MiB on stdout",
                    MAX_LINE_BYTES / (1024 * 1024)
                );
            }
            match reason {
                Ok(rmcp::service::QuitReason::Cancelled) => "stopped".to_owned(),
                Ok(_) => match status.and_then(|s| s.code()) {
                    Some(code) => format!("the server exited with code {code}"),
                    None => "the server exited or was killed by a signal".to_owned(),
                },
                Err(e) => format!("the server's task failed: {e}"),
            }
        },
    )
    .with_refusals(refusals))
}

async fn drain_stderr(
    mut pipe: tokio::process::ChildStderr,
    ring: Arc<StderrRing>,
    log: Option<PathBuf>,
    masks: crate::logging::Masks,
    refusals: Option<Arc<crate::sandbox::Refusals>>,
) {
    let mut file = match log {
        Some(path) => RotatingLog::open(path, STDERR_LOG_BYTES).await,
        None => None,
    };
    let mut buf = vec![0u8; 16 * 1024];
    // Bytes after the last newline, held until their line is whole so that a secret split
    // across two reads is still masked; a line without an end is held up to
    // [`STDERR_LINE_BYTES`], then goes out as it is (masked, but a secret cut there could be).
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let read = pipe.read(&mut buf).await;
        let done = !matches!(read, Ok(n) if n > 0);
        if let Ok(n) = read {
            pending.extend_from_slice(&buf[..n]);
        }
        let line_end = pending
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let cut = if done || masks.is_empty() || pending.len() - line_end > STDERR_LINE_BYTES {
            pending.len()
        } else {
            line_end
        };
        if cut > 0 {
            let whole: Vec<u8> = pending.drain(..cut).collect();
            let text = String::from_utf8_lossy(&whole);
            let masked = masks.mask(&text);
            let bytes = match &masked {
                std::borrow::Cow::Borrowed(_) => whole.as_slice(),
                std::borrow::Cow::Owned(out) => out.as_bytes(),
            };
            ring.push(bytes);
            if let Some(refusals) = &refusals {
                refusals.note(&masked);
            }
            if let Some(f) = file.as_mut() {
                if f.write(bytes).await.is_err() {
                    file = None;
                }
            }
        }
        if done {
            break;
        }
    }
}

/// The longest line of a server's stderr held whole for its secrets to be masked.
const STDERR_LINE_BYTES: usize = 1024 * 1024;

/// How large a server's stderr log grows before it is rotated: the log and the one before it
/// are kept, so a server that writes without end takes at most twice this.
const STDERR_LOG_BYTES: u64 = 5 * 1024 * 1024;

/// A log file that, past `cap` bytes, becomes `<name>.1` (replacing the one before) and starts
/// afresh.
struct RotatingLog {
    path: PathBuf,
    file: tokio::fs::File,
    written: u64,
    cap: u64,
}

impl RotatingLog {
    async fn open(path: PathBuf, cap: u64) -> Option<RotatingLog> {
        if let Some(dir) = path.parent() {
            let _ = crate::paths::create_private_dirs(dir);
        }
        let file = Self::append_to(&path)
            .await
            .map_err(|e| tracing::warn!(path = %path.display(), error = %e, "cannot open the server's stderr log"))
            .ok()?;
        let written = file.metadata().await.map_or(0, |m| m.len());
        Some(RotatingLog {
            path,
            file,
            written,
            cap,
        })
    }

    async fn append_to(path: &Path) -> std::io::Result<tokio::fs::File> {
        let mut options = tokio::fs::OpenOptions::new();
        options.create(true).append(true);
        // What a server writes to stderr is the person's to read alone.
        #[cfg(unix)]
        options.mode(0o600);
        options.open(path).await
    }

    fn previous(&self) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(".1");
        PathBuf::from(name)
    }

    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.written > 0 && self.written + bytes.len() as u64 > self.cap {
            self.file.flush().await?;
            tokio::fs::rename(&self.path, self.previous()).await?;
            self.file = Self::append_to(&self.path).await?;
            self.written = 0;
        }
        self.file.write_all(bytes).await?;
        // On disk at once (tokio hands writes to a thread): a person reading the log after a
        // crash sees the last words.
        self.file.flush().await?;
        self.written += bytes.len() as u64;
        Ok(())
    }
}

/// The server's stdout, line by line, with any value nested past [`nesting::MAX_DEPTH`]
/// flattened (so a schema nested 10 000 levels costs one tool, not the whole message). Ends
/// (EOF) when `stdout` ends or fails.
fn flattened(
    stdout: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    server: &str,
) -> tokio::io::DuplexStream {
    let (mut into, out) = tokio::io::duplex(64 * 1024);
    let server = server.to_owned();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let flat = nesting::flatten_message(&line, &server);
            if into
                .write_all(flat.as_deref().unwrap_or(&line))
                .await
                .is_err()
            {
                break;
            }
        }
    });
    out
}

/// Reads a server's stdout and fails the read (which ends the connection) once a line grows
/// past `cap` bytes without a newline, noting that it did.
struct LineCap<R> {
    inner: R,
    cap: usize,
    current: usize,
    tripped: Arc<std::sync::atomic::AtomicBool>,
}

impl<R> LineCap<R> {
    fn new(inner: R, cap: usize, tripped: Arc<std::sync::atomic::AtomicBool>) -> Self {
        Self {
            inner,
            cap,
            current: 0,
            tripped,
        }
    }
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for LineCap<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = std::pin::Pin::new(&mut this.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = &polled {
            for &byte in &buf.filled()[before..] {
                if byte == b'\n' {
                    this.current = 0;
                } else {
                    this.current += 1;
                }
            }
            if this.current > this.cap {
                this.tripped
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                return std::task::Poll::Ready(Err(std::io::Error::other(format!(
                    "a line longer than {} bytes",
                    this.cap
                ))));
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::RotatingLog;

    #[tokio::test]
    async fn a_server_writing_without_end_keeps_two_logs_at_most_each_within_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp").join("chatty.log");
        let mut log = RotatingLog::open(path.clone(), 1000).await.unwrap();
        for i in 0..500 {
            log.write(format!("line {i:04} of endless stderr\n").as_bytes())
                .await
                .unwrap();
        }
        drop(log);
        let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["chatty.log", "chatty.log.1"]);
        for name in &names {
            let len = std::fs::metadata(path.parent().unwrap().join(name))
                .unwrap()
                .len();
            assert!(len <= 1000, "{name}: {len} bytes");
        }
        // The newest lines are in the log, the ones just before in .1.
        let newest = std::fs::read_to_string(&path).unwrap();
        assert!(
            newest.ends_with("line 0499 of endless stderr\n"),
            "{newest}"
        );
        // A reopened log goes on from its size.
        let mut again = RotatingLog::open(path.clone(), 1000).await.unwrap();
        assert_eq!(again.written, newest.len() as u64);
        again.write(&[b'x'; 990]).await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().len(), 990);
    }
}
