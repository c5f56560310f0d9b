//! One MCP server as a child process speaking JSON-RPC on stdin/stdout (rmcp's client over the
//! child's pipes), owned from start to stop:
//! - its own process group (Unix) or Job Object (Windows), so stopping it stops everything it
//!   started;
//! - stdout behind a 16 MiB line cap: a longer line stops the server with a clear error instead
//!   of being buffered;
//! - stderr drained all the time into a bounded ring (its tail goes into every start failure
//!   and crash message) and a log file;
//! - a startup deadline for a server that never answers `initialize`;
//! - stop = close stdin (the MCP spec's shutdown), wait up to 3 s, then TERM and KILL to the
//!   whole group: a leader that exits politely may leave children of its own behind;
//! - its exit awaited, not polled, and reported with the exit code.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::CommandWrap;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ServerResult, Tool,
};
use rmcp::service::{Peer, RoleClient, RunningServiceCancellationToken, ServiceExt};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// The longest line a server may send on stdout; a longer one stops it with a clear error
/// instead of being buffered.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How much of a server's stderr is kept in memory.
pub const STDERR_RING_BYTES: usize = 1024 * 1024;
/// How much of it goes into an error message.
pub const STDERR_TAIL_CHARS: usize = 2000;

/// Everything needed to start one stdio server; built by the host from the config, the login
/// shell's `PATH` and the keychain.
#[derive(Debug, Clone)]
pub struct StdioLaunch {
    /// The resolved program.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The whole environment (nothing else is inherited).
    pub env: Vec<(OsString, OsString)>,
    pub cwd: Option<PathBuf>,
    /// Where stderr is appended, besides the ring.
    pub stderr_log: Option<PathBuf>,
    pub startup_timeout: Duration,
}

/// What went wrong with a server, with its stderr tail where it helps.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    #[error("Cannot start “{server}”: {detail}")]
    Spawn { server: String, detail: String },
    #[error("“{server}” did not start: {detail}{}", tail_text(.stderr_tail))]
    Startup {
        server: String,
        detail: String,
        stderr_tail: String,
    },
    #[error("“{server}” did not answer `initialize` within {} s{}", .after.as_secs(), tail_text(.stderr_tail))]
    StartupTimeout {
        server: String,
        after: Duration,
        stderr_tail: String,
    },
    #[error("“{server}” failed: {detail}{}", tail_text(.stderr_tail))]
    Request {
        server: String,
        detail: String,
        stderr_tail: String,
    },
    #[error("“{server}” did not answer within {} s", .after.as_secs_f64())]
    Timeout { server: String, after: Duration },
    #[error("The call to “{server}” was stopped")]
    Cancelled { server: String },
}

/// How long one call may take: `idle` without an answer or progress, `hard_max` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    pub idle: Duration,
    pub hard_max: Duration,
}

fn tail_text(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("\n--- its last words on stderr ---\n{}", tail.trim_end())
    }
}

/// The last [`STDERR_RING_BYTES`] a server wrote to stderr.
#[derive(Debug, Default)]
pub struct StderrRing {
    bytes: Mutex<VecDeque<u8>>,
}

impl StderrRing {
    fn push(&self, chunk: &[u8]) {
        let mut bytes = self
            .bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        bytes.extend(chunk);
        let excess = bytes.len().saturating_sub(STDERR_RING_BYTES);
        bytes.drain(..excess);
    }

    /// The last `max_chars` characters, as text.
    pub fn tail(&self, max_chars: usize) -> String {
        let bytes = self
            .bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (a, b) = bytes.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        let count = text.chars().count();
        text.chars().skip(count.saturating_sub(max_chars)).collect()
    }
}

/// What the host answers to a server: it hears `notifications/tools/list_changed` (and
/// counts them, so the supervisor can list the tools again); everything else is rmcp's
/// default.
#[derive(Debug)]
pub struct HostClient {
    tools_changed: tokio::sync::watch::Sender<u64>,
}

impl rmcp::ClientHandler for HostClient {
    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.tools_changed.send_modify(|n| *n += 1);
    }
}

/// A running stdio server. Its exit is awaited by a task of its own (not polled): when the
/// server dies, [`StdioServer::exited`] resolves and every pending call fails at once.
pub struct StdioServer {
    name: String,
    peer: Peer<RoleClient>,
    info: Option<String>,
    tools_changed: tokio::sync::watch::Receiver<u64>,
    stop: Mutex<Option<RunningServiceCancellationToken>>,
    exit: tokio::sync::watch::Receiver<Option<String>>,
    pid: Option<u32>,
    stderr: Arc<StderrRing>,
}

impl std::fmt::Debug for StdioServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioServer")
            .field("name", &self.name)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// Starts the server and completes the MCP handshake.
///
/// # Errors
/// [`McpError::Spawn`] when the program cannot run; [`McpError::Startup`] when it exits or
/// answers wrongly before the handshake ends; [`McpError::StartupTimeout`] past the deadline.
/// Each start error carries the stderr tail, and leaves no process behind.
pub async fn start(name: &str, launch: StdioLaunch) -> Result<StdioServer, McpError> {
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
    spawned: impl FnOnce(Option<u32>) + Send,
) -> Result<StdioServer, McpError> {
    let mut command = tokio::process::Command::new(&launch.program);
    command
        .args(&launch.args)
        .env_clear()
        .envs(launch.env.iter().cloned());
    if let Some(cwd) = &launch.cwd {
        command.current_dir(cwd);
    }
    let mut wrapped = CommandWrap::from(command);
    #[cfg(unix)]
    wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    wrapped.wrap(process_wrap::tokio::JobObject);
    wrapped.wrap(process_wrap::tokio::KillOnDrop);

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
        return Err(spawn_error("no pipes to the process".into()));
    };
    let stderr_pipe = child.inner_mut().stderr().take();
    let pid = child.id();
    spawned(pid);
    // Until the handshake is done, a start that is abandoned (its future dropped: the app
    // quitting, a stop) takes the whole group with it.
    let mut abandoned = GroupGuard(pid);
    let overlong = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let transport = (
        LineCap::new(stdout, MAX_LINE_BYTES, Arc::clone(&overlong)),
        stdin,
    );
    let stderr = Arc::new(StderrRing::default());
    if let Some(pipe) = stderr_pipe {
        tokio::spawn(drain_stderr(
            pipe,
            Arc::clone(&stderr),
            launch.stderr_log.clone(),
        ));
    }
    tracing::info!(server = name, pid, program = %launch.program.display(), "MCP server started");

    let (changed_tx, tools_changed) = tokio::sync::watch::channel(0);
    let client = HostClient {
        tools_changed: changed_tx,
    };
    let handshake = tokio::time::timeout(launch.startup_timeout, client.serve(transport)).await;
    let service = match handshake {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => {
            // Give a dying server a moment to finish its last words.
            tokio::time::sleep(Duration::from_millis(100)).await;
            end_process_group(pid).await;
            let detail = if overlong.load(std::sync::atomic::Ordering::SeqCst) {
                format!(
                    "it sent a single line longer than {} MiB on stdout",
                    MAX_LINE_BYTES / (1024 * 1024)
                )
            } else {
                e.to_string()
            };
            return Err(McpError::Startup {
                server: name.to_owned(),
                detail,
                stderr_tail: stderr.tail(STDERR_TAIL_CHARS),
            });
        }
        Err(_) => {
            end_process_group(pid).await;
            return Err(McpError::StartupTimeout {
                server: name.to_owned(),
                after: launch.startup_timeout,
                stderr_tail: stderr.tail(STDERR_TAIL_CHARS),
            });
        }
    };
    abandoned.0 = None;
    let peer = service.peer().clone();
    let info = service.peer_info().and_then(|i| {
        i.server_info
            .as_ref()
            .map(|s| format!("{} {}", s.name, s.version))
    });
    let stop = Mutex::new(Some(service.cancellation_token()));
    let (exit_tx, exit) = tokio::sync::watch::channel(None);
    let server_name = name.to_owned();
    let ring = Arc::clone(&stderr);
    tokio::spawn(async move {
        let reason = service.waiting().await;
        // The connection is closed (stdin with it): give the server a moment to exit on its
        // own, then end its whole group, and say why it ended.
        let status = match tokio::time::timeout(Duration::from_secs(3), child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => None,
        };
        end_process_group(pid).await;
        let status = match status {
            Some(status) => Some(status),
            None => child.wait().await.ok(),
        };
        let why = if overlong.load(std::sync::atomic::Ordering::SeqCst) {
            format!(
                "stopped: it sent a single line longer than {} MiB on stdout",
                MAX_LINE_BYTES / (1024 * 1024)
            )
        } else {
            match reason {
                Ok(rmcp::service::QuitReason::Cancelled) => "stopped".to_owned(),
                Ok(_) => match status.and_then(|s| s.code()) {
                    Some(code) => format!("the server exited with code {code}"),
                    None => "the server exited or was killed by a signal".to_owned(),
                },
                Err(e) => format!("the server's task failed: {e}"),
            }
        };
        tracing::info!(server = %server_name, %why, stderr_tail = %ring.tail(400), "MCP server ended");
        let _ = exit_tx.send(Some(why));
    });
    Ok(StdioServer {
        name: name.to_owned(),
        peer,
        info,
        tools_changed,
        stop,
        exit,
        pid,
        stderr,
    })
}

async fn drain_stderr(
    mut pipe: tokio::process::ChildStderr,
    ring: Arc<StderrRing>,
    log: Option<PathBuf>,
) {
    let mut file = match log {
        Some(path) => {
            if let Some(dir) = path.parent() {
                let _ = tokio::fs::create_dir_all(dir).await;
            }
            tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .await
            .map_err(|e| tracing::warn!(path = %path.display(), error = %e, "cannot open the server's stderr log"))
            .ok()
        }
        None => None,
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                ring.push(&buf[..n]);
                if let Some(f) = file.as_mut() {
                    if f.write_all(&buf[..n]).await.is_err() {
                        file = None;
                    }
                }
            }
        }
    }
}

impl StdioServer {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process id of the server (the leader of its process group).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    pub fn stderr_tail(&self) -> String {
        self.stderr.tail(STDERR_TAIL_CHARS)
    }

    /// The name and version the server gave at `initialize`.
    pub fn server_info(&self) -> Option<String> {
        self.info.clone()
    }

    /// Resolves when the server has ended (stopped, exited or crashed), with why.
    pub async fn exited(&self) -> String {
        let mut exit = self.exit.clone();
        let why = match exit.wait_for(Option::is_some).await {
            Ok(why) => why.clone().unwrap_or_default(),
            Err(_) => "the server's supervisor ended".to_owned(),
        };
        why
    }

    /// Changes each time the server says its tool list changed.
    pub fn tools_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.tools_changed.clone()
    }

    /// Whether the server has ended.
    pub fn has_exited(&self) -> bool {
        self.exit.borrow().is_some()
    }

    fn request_error(&self, e: &impl std::fmt::Display) -> McpError {
        McpError::Request {
            server: self.name.clone(),
            detail: e.to_string(),
            stderr_tail: self.stderr_tail(),
        }
    }

    /// Every tool, all pages.
    ///
    /// # Errors
    /// The server failed or went away.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        self.peer
            .list_all_tools()
            .await
            .map_err(|e| self.request_error(&e))
    }

    /// Calls one tool with `arguments`, giving up after `timeout` without progress (and at
    /// ten times that in all). See [`StdioServer::call_tool_limited`].
    ///
    /// # Errors
    /// As [`StdioServer::call_tool_limited`].
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> Result<CallToolResult, McpError> {
        self.call_tool_limited(
            tool,
            arguments,
            CallLimits {
                idle: timeout,
                hard_max: timeout * 10,
            },
            &CancellationToken::new(),
        )
        .await
    }

    /// Calls one tool. The call fails after `limits.idle` without an answer or a progress
    /// notification (each one extends it), or after `limits.hard_max` in all, or when
    /// `cancel` fires; in each case the server is sent `notifications/cancelled` and a late
    /// answer is ignored.
    ///
    /// # Errors
    /// [`McpError::Timeout`], [`McpError::Cancelled`], or the server failed or went away.
    pub async fn call_tool_limited(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        limits: CallLimits,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut options = PeerRequestOptions::with_timeout(limits.idle);
        options.reset_timeout_on_progress = true;
        options.max_total_timeout = Some(limits.hard_max);
        let handle = self
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.request_error(&e))?;
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            () = cancel.cancelled() => {
                let notification = CancelledNotification::new(CancelledNotificationParam::new(
                    Some(id),
                    Some("stopped by the user".into()),
                ));
                let _ = peer.send_notification(notification.into()).await;
                return Err(McpError::Cancelled { server: self.name.clone() });
            }
        };
        match answer {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err(self.request_error(
                &"the server answered `tools/call` with something other than a tool result",
            )),
            Err(ServiceError::Timeout { timeout }) => Err(McpError::Timeout {
                server: self.name.clone(),
                after: timeout,
            }),
            // The server went away: say how (exit code, an over-long line), which the exit
            // watcher knows a moment later.
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                let why = tokio::time::timeout(Duration::from_secs(5), self.exited()).await;
                match why {
                    Ok(why) => Err(self.request_error(&format!("{e}: {why}"))),
                    Err(_) => Err(self.request_error(&e)),
                }
            }
            // The server answered with an error (an unknown tool, bad arguments): it is still
            // running, so there is no exit to wait for.
            Err(e) => Err(self.request_error(&e)),
        }
    }

    /// Stops the server: stdin closed, then TERM, then KILL (rmcp), then whatever else is
    /// left in its process group. Returns once it has ended (or after 10 s, having killed it).
    pub async fn stop(&self) {
        let token = self
            .stop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(token) = token {
            token.cancel();
        }
        if tokio::time::timeout(Duration::from_secs(10), self.exited())
            .await
            .is_err()
        {
            tracing::warn!(server = %self.name, "MCP server did not end in time; killing its group");
            end_process_group(self.pid).await;
        }
    }
}

/// Kills the group led by its pid when dropped, unless disarmed (set to `None`).
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.0.take().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// TERM to every process left in the group led by `pgid`, then KILL to any still there after
/// a second. Nothing happens when the group is already empty. (Windows: the Job Object ends
/// every process in it when its handle closes.)
#[cfg(unix)]
pub(crate) async fn end_process_group(pgid: Option<u32>) {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;
    let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let group = Pid::from_raw(pgid);
    if killpg(group, Signal::SIGTERM).is_err() {
        return; // no such group: everything has exited
    }
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if killpg(group, None).is_err() {
            return;
        }
    }
    tracing::warn!(
        pgid,
        "processes of a stopped MCP server ignored TERM; killing them"
    );
    let _ = killpg(group, Signal::SIGKILL);
}

#[cfg(not(unix))]
pub(crate) async fn end_process_group(_pgid: Option<u32>) {}

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
