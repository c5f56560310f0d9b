//! A connected MCP server, whatever its transport: the calls the host makes on it (tools,
//! with idle and hard time limits, progress, cancellation), how it ended, and the errors a
//! person reads. Starting one is [`super::stdio`]'s or [`super::remote`]'s job.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ProgressToken, ServerResult, Tool,
};
use rmcp::service::{
    Peer, PeerRequestOptions, QuitReason, RoleClient, RunningService,
    RunningServiceCancellationToken, ServiceError,
};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::elicitation::{Elicitation, ElicitationAnswer, ElicitationRequest};

/// How much of a server's stderr is kept in memory.
pub const STDERR_RING_BYTES: usize = 1024 * 1024;
/// How much of it goes into an error message.
pub const STDERR_TAIL_CHARS: usize = 2000;

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
    /// The server answered 401, or 403 for a scope the tokens lack: a person must sign in
    /// (again). `challenge` is its `WWW-Authenticate` header, which says where and for what.
    #[error("{}", sign_in_text(.server, *.more_scope))]
    SignInRequired {
        server: String,
        challenge: String,
        more_scope: bool,
    },
    #[error("Signing in to “{server}” failed: {detail}")]
    SignInFailed { server: String, detail: String },
}

fn sign_in_text(server: &str, more_scope: bool) -> String {
    if more_scope {
        format!("“{server}” needs more permission than you gave it: sign in to it again")
    } else {
        format!("“{server}” asks you to sign in")
    }
}

/// The `WWW-Authenticate` challenge of a 401 or a 403 somewhere in `e`'s chain, and whether it
/// asks for more scope (403) rather than any sign-in.
pub(crate) fn auth_challenge(e: &(dyn std::error::Error + 'static)) -> Option<(String, bool)> {
    let http = causes(e).find_map(|err| err.downcast_ref::<StreamableHttpError<reqwest::Error>>());
    match http? {
        StreamableHttpError::AuthRequired(a) => Some((a.www_authenticate_header.clone(), false)),
        StreamableHttpError::InsufficientScope(a) => {
            Some((a.www_authenticate_header.clone(), true))
        }
        _ => None,
    }
}

/// `e` and what caused it, down to the lowest cause, through the rmcp errors that do not
/// name their cause as `source`.
fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |err| {
        match err.downcast_ref::<rmcp::service::ClientInitializeError>() {
            // rmcp does not mark this one as the source.
            Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) => {
                Some(error as &(dyn std::error::Error + 'static))
            }
            _ => match err.downcast_ref::<ServiceError>() {
                Some(ServiceError::TransportSend(error)) => Some(error),
                _ => err.source(),
            },
        }
    })
}

/// How long one call may take: `idle` without an answer or progress, `hard_max` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    pub idle: Duration,
    pub hard_max: Duration,
}

/// An rmcp error for a person. A network failure underneath says what failed and where
/// (host and port, never the path or query, which may hold a session id); anything else keeps
/// its text, without the transport's Rust type name.
pub(crate) fn readable(e: &(dyn std::error::Error + 'static)) -> String {
    for err in causes(e) {
        if let Some(http) = err.downcast_ref::<reqwest::Error>() {
            return crate::net::describe_error(http);
        }
        if let Some(StreamableHttpError::Client(http)) =
            err.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return crate::net::describe_error(http);
        }
    }
    without_type_names(&e.to_string())
}

/// rmcp's "Transport [some::Rust<Type>] error: " prefixes, taken out.
fn without_type_names(text: &str) -> String {
    const END: &str = "] error: ";
    let (mut kept, mut rest) = (String::new(), text);
    while let Some(start) = rest.find("Transport [") {
        let Some(end) = rest[start..].find(END) else {
            break;
        };
        kept.push_str(&rest[..start]);
        rest = &rest[start + end + END.len()..];
    }
    kept.push_str(rest);
    kept
}

#[cfg(test)]
mod tests {
    #[test]
    fn transport_type_names_are_taken_out() {
        assert_eq!(
            super::without_type_names(
                "Send message error Transport [rmcp::W<a::B<c::D>>] error: Client error: boom, when x"
            ),
            "Send message error Client error: boom, when x"
        );
        assert_eq!(super::without_type_names("Transport [x"), "Transport [x");
    }
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
    pub(crate) fn push(&self, chunk: &[u8]) {
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

/// A `notifications/progress` for a call in flight: how far it is, of how much if known, and
/// what the server says it is doing (server text: show it as text only).
#[derive(Debug, Clone, PartialEq)]
pub struct CallProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where a caller wants the progress of its call.
pub type ProgressSink = tokio::sync::mpsc::UnboundedSender<CallProgress>;

/// The calls in flight that want their progress, by the token rmcp gave each request.
type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, ProgressSink>>>;

/// What the host answers to a server: it hears `notifications/tools/list_changed` (and
/// counts them, so the supervisor can list the tools again) and `notifications/progress`
/// (passed to the call it is about), and shows a server's `elicitation/create` form to the
/// person through its [`Elicitation`] (declaring the capability only when it has one);
/// everything else is rmcp's default.
#[derive(Debug)]
pub struct HostClient {
    server: String,
    tools_changed: tokio::sync::watch::Sender<u64>,
    progress: ProgressRoutes,
    elicitation: Elicitation,
}

/// What a connected server's [`HostClient`] hears, for its [`McpServer`].
pub(crate) struct Heard {
    tools_changed: tokio::sync::watch::Receiver<u64>,
    progress: ProgressRoutes,
}

impl HostClient {
    /// A client, and what it hears.
    pub(crate) fn new(server: &str, elicitation: Elicitation) -> (HostClient, Heard) {
        let (tools_changed, heard) = tokio::sync::watch::channel(0);
        let progress = ProgressRoutes::default();
        (
            HostClient {
                server: server.to_owned(),
                tools_changed,
                progress: Arc::clone(&progress),
                elicitation,
            },
            Heard {
                tools_changed: heard,
                progress,
            },
        )
    }
}

impl rmcp::ClientHandler for HostClient {
    /// Who we are at `initialize`: Switchboard and its version (not rmcp's crate name), and
    /// the newest protocol version that has an `initialize` handshake — rmcp's newest
    /// (2026-07-28) replaced the handshake, so naming it inside one is a contradiction servers
    /// and the official conformance suite reject.
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        if self.elicitation.0.is_some() {
            capabilities.elicitation = Some(
                rmcp::model::ElicitationCapability::new()
                    .with_form(rmcp::model::FormElicitationCapability::new()),
            );
        }
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("switchboard", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    /// A server's form, shown to the person; what they did goes back as it is (an accepted
    /// form checked against its schema first). A form that cannot be shown is declined.
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let id = uuid::Uuid::new_v4().to_string();
        let form = ElicitationRequest::from_rmcp(id, &self.server, &request);
        let (Some(elicitor), Some(form)) = (&self.elicitation.0, form) else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        tracing::info!(server = %self.server, fields = form.fields.len(), "an MCP server asks for input");
        Ok(match elicitor.elicit(form).await {
            ElicitationAnswer::Accept { content } => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.tools_changed.send_modify(|n| *n += 1);
    }

    /// rmcp has already extended the call's time limit; this passes the news on to whoever
    /// made the call (a token no call is waiting on is ignored).
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let route = self
            .progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&params.progress_token)
            .cloned();
        if let Some(sink) = route {
            let _ = sink.send(CallProgress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }
}

/// A call's progress route, taken down when the call ends however it ends.
struct ProgressRoute<'a> {
    routes: &'a ProgressRoutes,
    token: ProgressToken,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        self.routes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.token);
    }
}

/// A connected server, local or remote. How its connection ends is awaited by a task of its
/// own (not polled): when the server dies or the connection drops, [`McpServer::exited`]
/// resolves and every pending call fails at once.
pub struct McpServer {
    name: String,
    peer: Peer<RoleClient>,
    info: Option<String>,
    tools_changed: tokio::sync::watch::Receiver<u64>,
    progress: ProgressRoutes,
    stop: Mutex<Option<RunningServiceCancellationToken>>,
    exit: tokio::sync::watch::Receiver<Option<String>>,
    pid: Option<u32>,
    stderr: Arc<StderrRing>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// Wraps a connection whose handshake is done. `pid` and `stderr` are a local server's
    /// (a remote one has neither); `ended` is run once the connection has closed, to do what
    /// must follow (end a process group) and say why it ended.
    pub(crate) fn new<F, Fut>(
        name: &str,
        service: RunningService<RoleClient, HostClient>,
        heard: Heard,
        pid: Option<u32>,
        stderr: Arc<StderrRing>,
        ended: F,
    ) -> McpServer
    where
        F: FnOnce(Result<QuitReason, tokio::task::JoinError>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = String> + Send,
    {
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
            let why = ended(service.waiting().await).await;
            tracing::info!(server = %server_name, %why, stderr_tail = %ring.tail(400), "MCP server ended");
            let _ = exit_tx.send(Some(why));
        });
        McpServer {
            name: name.to_owned(),
            peer,
            info,
            tools_changed: heard.tools_changed,
            progress: heard.progress,
            stop,
            exit,
            pid,
            stderr,
        }
    }
}

impl McpServer {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process id of a local server (the leader of its process group).
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

    /// A failed request: a sign-in the server asks for, or what went wrong.
    fn service_error(&self, e: &ServiceError) -> McpError {
        match auth_challenge(e) {
            Some((challenge, more_scope)) => McpError::SignInRequired {
                server: self.name.clone(),
                challenge,
                more_scope,
            },
            None => self.request_error(&readable(e)),
        }
    }

    fn request_error(&self, e: &impl std::fmt::Display) -> McpError {
        McpError::Request {
            server: self.name.clone(),
            detail: e.to_string(),
            stderr_tail: self.stderr_tail(),
        }
    }

    /// Asks the server whether it is still there (`ping`), waiting at most `timeout`.
    ///
    /// # Errors
    /// No answer in time, or the connection failed.
    pub async fn ping(&self, timeout: Duration) -> Result<(), McpError> {
        let request = ClientRequest::PingRequest(rmcp::model::PingRequest::default());
        let options = PeerRequestOptions::with_timeout(timeout);
        let handle = self
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.request_error(&readable(&e)))?;
        match handle.await_response().await {
            Ok(_) => Ok(()),
            Err(ServiceError::Timeout { timeout }) => Err(McpError::Timeout {
                server: self.name.clone(),
                after: timeout,
            }),
            Err(e) => Err(self.request_error(&readable(&e))),
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
            .map_err(|e| self.service_error(&e))
    }

    /// Calls one tool with `arguments`, giving up after `timeout` without progress (and at
    /// ten times that in all). See [`McpServer::call_tool_limited`].
    ///
    /// # Errors
    /// As [`McpServer::call_tool_limited`].
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
            None,
        )
        .await
    }

    /// Calls one tool. The call fails after `limits.idle` without an answer or a progress
    /// notification (each one extends it), or after `limits.hard_max` in all, or when
    /// `cancel` fires; in each case the server is sent `notifications/cancelled` and a late
    /// answer is ignored. Progress notifications go to `progress`, if given.
    ///
    /// # Errors
    /// [`McpError::Timeout`], [`McpError::Cancelled`], or the server failed or went away.
    pub async fn call_tool_limited(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        limits: CallLimits,
        cancel: &CancellationToken,
        progress: Option<&ProgressSink>,
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
            .map_err(|e| self.service_error(&e))?;
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        // Registered once rmcp has named the token, just after the request left: a server
        // that reports progress within that instant has that one report missed.
        let _route = progress.map(|sink| {
            self.progress
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(handle.progress_token.clone(), sink.clone());
            ProgressRoute {
                routes: &self.progress,
                token: handle.progress_token.clone(),
            }
        });
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
            // A 401 or 403: the connection stands, a sign-in is wanted.
            Err(e) if auth_challenge(&e).is_some() => Err(self.service_error(&e)),
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                let why = tokio::time::timeout(Duration::from_secs(5), self.exited()).await;
                match why {
                    Ok(why) => Err(self.request_error(&format!("{}: {why}", readable(&e)))),
                    Err(_) => Err(self.request_error(&readable(&e))),
                }
            }
            // The server answered with an error (an unknown tool, bad arguments) or wants a
            // sign-in: it is still running, so there is no exit to wait for.
            Err(e) => Err(self.service_error(&e)),
        }
    }

    /// Stops the server: the connection closed (a local server's stdin with it, then TERM and
    /// KILL to its process group). Returns once it has ended (or after 10 s, having killed a
    /// local server's group).
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
            super::stdio::end_process_group(self.pid).await;
        }
    }
}
