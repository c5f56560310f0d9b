//! A connected MCP server, whatever its transport: the calls the host makes on it (tools,
//! with idle and hard time limits, progress, cancellation) and how it ended. Starting one is
//! [`super::stdio`]'s or [`super::remote`]'s job; the errors a person reads are
//! [`super::error`]'s, and our side of the connection is [`super::client`]'s.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, PaginatedRequestParams, ServerResult, Tool,
};
use rmcp::service::{
    Peer, PeerRequestOptions, QuitReason, RoleClient, RunningService,
    RunningServiceCancellationToken, ServiceError,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub use super::client::{CallProgress, HostClient, ProgressSink};
use super::client::{Heard, ProgressRoute, ProgressRoutes};
use super::error::{auth_challenge, readable};
pub use super::error::{McpError, STDERR_TAIL_CHARS};
pub use super::process::{StderrRing, STDERR_RING_BYTES};

/// A server's skills as last listed (the Skills extension), until when that listing holds, and
/// the one listing under way.
#[derive(Default)]
pub(super) struct SkillsListed {
    pub(super) last: Mutex<Option<(tokio::time::Instant, Arc<Vec<rmcp::model::Skill>>)>>,
    pub(super) listing: tokio::sync::Mutex<()>,
}

/// How much of a server's tool list is read: pages, tools, bytes (as JSON) and time in all.
#[derive(Debug, Clone)]
pub struct ListLimits {
    pub pages: usize,
    pub tools: usize,
    pub bytes: usize,
    pub time: Duration,
}

/// Far beyond what a real server lists, well short of what would wedge the app.
pub const LIST_LIMITS: ListLimits = ListLimits {
    pages: 100,
    tools: 5_000,
    bytes: 16 * 1024 * 1024,
    time: Duration::from_secs(30),
};

/// How long one call may take: `idle` without an answer or progress, `hard_max` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLimits {
    pub idle: Duration,
    pub hard_max: Duration,
}

/// A connected server, local or remote. How its connection ends is awaited by a task of its
/// own (not polled): when the server dies or the connection drops, [`McpServer::exited`]
/// resolves and every pending call fails at once.
pub struct McpServer {
    name: String,
    peer: Peer<RoleClient>,
    info: Option<String>,
    /// What the server said at `initialize` on how to use it, cut to [`MAX_INSTRUCTIONS_CHARS`].
    instructions: Option<String>,
    tools_changed: tokio::sync::watch::Receiver<u64>,
    offers_changed: tokio::sync::watch::Receiver<u64>,
    progress: ProgressRoutes,
    roots: super::client::Roots,
    elicitation: super::elicitation::Elicitation,
    forms: super::client::FormsOpen,
    /// The `WWW-Authenticate` challenge of a call the server refused for want of a sign-in
    /// (a token gone, or a step-up: more scope): the supervisor stops the server and marks it
    /// "Needs sign-in" at once, and the sign-in asks for what the challenge names. With it,
    /// whether it asked for more scope (a 403) rather than for a token at all (a 401).
    sign_in_wanted: tokio::sync::watch::Sender<Option<(String, bool)>>,
    stop: Mutex<Option<RunningServiceCancellationToken>>,
    exit: tokio::sync::watch::Receiver<Option<String>>,
    pid: Option<u32>,
    stderr: Arc<StderrRing>,
    held_back: Mutex<Vec<HeldBackTool>>,
    /// Its skills as last listed, and until when that listing holds (`skills`).
    pub(super) skills_listed: SkillsListed,
    /// What its sandbox refused it, as its messages say (`None`: it runs unsandboxed).
    refusals: Option<Arc<crate::sandbox::Refusals>>,
    /// Why the transport failed a request, when it is ours to say (a remote server's answer
    /// over our size cap): the failed call says it at once, and takes it (the connection may
    /// stand, and a later failure is not this one).
    fault: Fault,
}

/// Why a transport failed, when it is ours to say: shared with the transport, which sets it.
pub type Fault = Arc<Mutex<Option<String>>>;

/// The most of a server's `instructions` that goes into a system prompt: they are the server's
/// words to the model, like a tool's description, and a server may not fill the prompt with
/// them.
pub const MAX_INSTRUCTIONS_CHARS: usize = 4_000;

/// How many times one call may come back `input_required` before it is given up.
pub const MAX_INPUT_ROUNDS: usize = 16;

/// A tool left out of a server's list because it cannot be used as sent, and why: said on
/// the Servers page, in a conversation's tools panel and at a run's start.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct HeldBackTool {
    /// Its name as the server sent it, hidden characters written as escapes.
    pub tool: String,
    pub reason: String,
}

/// Why a listed tool is left out, if it is: a part nested too deep to use, a name holding a
/// hidden character (it would be shown as one thing and be another), or a name the server
/// already gave another tool in this list (of the two, the first is offered).
fn why_held(
    tool: &Tool,
    json: &str,
    seen: &mut std::collections::HashSet<String>,
) -> Option<String> {
    if super::nesting::text_was_too_deep(json) {
        return Some(format!(
            "its definition nests deeper than {} levels, more than any real schema; it is not offered to models",
            super::nesting::MAX_DEPTH
        ));
    }
    if let Some(hidden) = crate::text::first_hidden(&tool.name) {
        return Some(format!(
            "its name holds the hidden character {hidden}, so what you read is not its name; it is not offered to models"
        ));
    }
    if !seen.insert(tool.name.to_string()) {
        return Some(
            "the server lists another tool by this name; only the first is offered to models"
                .to_owned(),
        );
    }
    None
}

impl Drop for McpServer {
    /// A local server dropped while still connected, without [`McpServer::stop`] (whoever held
    /// it was cancelled: Ctrl-C on the command line), takes its process group with it.
    fn drop(&mut self) {
        if self.exit.borrow().is_none() {
            drop(super::process::GroupGuard(self.pid));
        }
    }
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
        let instructions = service
            .peer_info()
            .and_then(|i| i.instructions.clone())
            .map(|text| {
                // Hidden characters are written out, as in every text a server gives the model
                // that a person may be shown.
                let text: String = text.trim().chars().take(MAX_INSTRUCTIONS_CHARS).collect();
                crate::text::escape_hidden(&text).into_owned()
            })
            .filter(|text| !text.is_empty());
        let stop = Mutex::new(Some(service.cancellation_token()));
        let (exit_tx, exit) = tokio::sync::watch::channel(None);
        let server_name = name.to_owned();
        let ring = Arc::clone(&stderr);
        let closed = CancellationToken::new();
        if super::listen::is_modern(&peer) {
            tokio::spawn(super::listen::follow(
                name.to_owned(),
                peer.clone(),
                heard.changes.clone(),
                closed.clone(),
            ));
        }
        tokio::spawn(async move {
            let quit = service.waiting().await;
            closed.cancel();
            let why = ended(quit).await;
            tracing::info!(server = %server_name, %why, stderr_tail = %ring.tail(400), "MCP server ended");
            let _ = exit_tx.send(Some(why));
        });
        McpServer {
            name: name.to_owned(),
            peer,
            info,
            instructions,
            tools_changed: heard.tools_changed,
            offers_changed: heard.offers_changed,
            progress: heard.progress,
            roots: heard.roots,
            elicitation: heard.elicitation,
            forms: heard.forms,
            sign_in_wanted: tokio::sync::watch::Sender::new(None),
            stop,
            exit,
            pid,
            stderr,
            held_back: Mutex::default(),
            skills_listed: SkillsListed::default(),
            refusals: None,
            fault: Fault::default(),
        }
    }

    /// Keeps what its sandbox refuses it in `refusals` (also fed by its stderr).
    #[must_use]
    pub(crate) fn with_refusals(mut self, refusals: Option<Arc<crate::sandbox::Refusals>>) -> Self {
        self.refusals = refusals;
        self
    }

    /// Reads why a request failed from `fault` (set by the transport) before waiting for the
    /// connection's end.
    #[must_use]
    pub(crate) fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
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

    /// The protocol version spoken with the server (`2026-07-28`, `2025-11-25`, …).
    pub fn protocol(&self) -> Option<String> {
        self.peer
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    }

    /// What the server said at `initialize` on how to use its tools, if anything.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
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

    /// Set to the server's challenge, and whether it asked for more scope, when it refused a
    /// call for want of a sign-in.
    pub fn sign_in_wanted(&self) -> tokio::sync::watch::Receiver<Option<(String, bool)>> {
        self.sign_in_wanted.subscribe()
    }

    /// Bumped when the server says its resources or prompts changed.
    pub fn offers_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.offers_changed.clone()
    }

    /// Whether the server has ended.
    /// Our side of the connection, for the requests of [`super::features`].
    pub(super) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    pub fn has_exited(&self) -> bool {
        self.exit.borrow().is_some()
    }

    /// A failed request: a sign-in the server asks for, or what went wrong.
    pub(super) fn service_error(&self, e: &ServiceError) -> McpError {
        match auth_challenge(e) {
            Some((challenge, more_scope)) => McpError::SignInRequired {
                server: self.name.clone(),
                challenge,
                more_scope,
            },
            None => self.request_error(&readable(e)),
        }
    }

    pub(super) fn request_error(&self, e: &impl std::fmt::Display) -> McpError {
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

    /// Every tool, all pages, within [`LIST_LIMITS`]: a server that pages without end, lists
    /// too much or stops answering mid-list is given up on, not waited for.
    ///
    /// # Errors
    /// The server failed or went away; [`McpError::ListTooLong`] past a limit.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        self.list_tools_within(&LIST_LIMITS).await
    }

    /// What its sandbox refused it, as its messages said ("read ~/.ssh/id_ed25519"), newest
    /// last; none for a server that runs unsandboxed.
    pub fn sandbox_refusals(&self) -> Vec<String> {
        self.refusals.as_ref().map(|r| r.seen()).unwrap_or_default()
    }

    /// The tools its last list held that are not offered to models, and why.
    pub fn held_back(&self) -> Vec<HeldBackTool> {
        self.held_back
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Keeps `held` (the tools [`why_held`] left out of the last list) as
    /// [`McpServer::held_back`].
    fn hold_back(&self, held: Vec<HeldBackTool>) {
        for HeldBackTool { tool, reason } in &held {
            tracing::warn!(server = %self.name, %tool, "tool held back: {reason}");
        }
        *self
            .held_back
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = held;
    }

    /// [`McpServer::list_tools`] within `limits`.
    ///
    /// # Errors
    /// As [`McpServer::list_tools`].
    pub async fn list_tools_within(&self, limits: &ListLimits) -> Result<Vec<Tool>, McpError> {
        let mut held = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let tools = self
            .all_pages(
                "tools",
                limits,
                |params| async move {
                    let page = self.peer.list_tools(Some(params)).await?;
                    Ok((page.tools, page.next_cursor))
                },
                // A tool that cannot be used as sent is held back, not offered, and said.
                |tool: &Tool, json: &str| match why_held(tool, json, &mut seen) {
                    Some(reason) => {
                        held.push(HeldBackTool {
                            tool: crate::text::escape_hidden(&tool.name).into_owned(),
                            reason,
                        });
                        false
                    }
                    None => true,
                },
            )
            .await?;
        self.hold_back(held);
        Ok(tools)
    }

    /// Every item of one of the server's lists, page by page, within `limits` (`limits.tools`
    /// counts the items, whatever they are): a server that pages without end, lists too much
    /// or stops answering mid-list is given up on, not waited for. Each item is written as
    /// JSON once, for its size and for `keep`, which may leave it out.
    pub(super) async fn all_pages<T, Fut>(
        &self,
        what: &str,
        limits: &ListLimits,
        page: impl Fn(PaginatedRequestParams) -> Fut,
        mut keep: impl FnMut(&T, &str) -> bool,
    ) -> Result<Vec<T>, McpError>
    where
        T: serde::Serialize,
        Fut: std::future::Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
    {
        let too_long = |detail: String| McpError::ListTooLong {
            server: self.name.clone(),
            detail,
        };
        let deadline = tokio::time::Instant::now() + limits.time;
        let (mut items, mut cursor) = (Vec::new(), None);
        let (mut listed, mut bytes) = (0usize, 0usize);
        for _ in 0..limits.pages {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let (page, next) = tokio::time::timeout_at(deadline, page(params))
                .await
                .map_err(|_| {
                    too_long(format!(
                        "did not finish listing its {what} within {} s",
                        limits.time.as_secs()
                    ))
                })?
                .map_err(|e| self.service_error(&e))?;
            for item in page {
                let json = serde_json::to_string(&item).unwrap_or_default();
                bytes += json.len();
                listed += 1;
                if keep(&item, &json) {
                    items.push(item);
                }
            }
            if listed > limits.tools {
                return Err(too_long(format!(
                    "listed more than {} {what}; the list was not read further",
                    limits.tools
                )));
            }
            if bytes > limits.bytes {
                return Err(too_long(format!(
                    "listed more than {} MiB of {what}; the list was not read further",
                    limits.bytes / (1024 * 1024)
                )));
            }
            cursor = next;
            if cursor.is_none() {
                return Ok(items);
            }
        }
        Err(too_long(format!(
            "kept its list of {what} going past {} pages; it was stopped there",
            limits.pages
        )))
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
    /// answer is ignored. Progress notifications go to `progress`, if given. While one of the
    /// server's forms is open, neither limit counts the time.
    ///
    /// A 2026-07-28 server may answer `input_required` (a multi round-trip request): its
    /// forms are shown, its roots given, and the call sent again with the answers and its
    /// `requestState` untouched, at most [`MAX_INPUT_ROUNDS`] times. A request for sampling
    /// is refused: Switchboard does not run the person's model for a server. A server that
    /// answers with a task (the Tasks extension) has it followed to its end (`tasks`).
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
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let mut state_only = 0u32;
        // The whole call's time, over all its rounds (forms open not counted): `hard_max` is
        // for the call, not for each round of it.
        let mut spent = Duration::ZERO;
        for _ in 0..MAX_INPUT_ROUNDS {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
            let (answer, took) = self
                .send_timed(request, limits, spent, cancel, progress)
                .await?;
            spent += took;
            match answer {
                ServerResult::CallToolResult(result) => {
                    if let (Some(refusals), Some(true)) = (&self.refusals, result.is_error) {
                        for part in &result.content {
                            if let Some(text) = part.as_text() {
                                refusals.note(&text.text);
                            }
                        }
                    }
                    return Ok(result);
                }
                ServerResult::CreateTaskResult(created) => {
                    return self
                        .follow_task(created.task, limits, spent, cancel, progress)
                        .await;
                }
                ServerResult::InputRequiredResult(asked) => {
                    let requests = asked.input_requests.unwrap_or_default();
                    if requests.is_empty() {
                        if asked.request_state.is_none() {
                            return Err(self.request_error(
                                &"the server asked for input without saying what it needs",
                            ));
                        }
                        // Only state: the server is busy and asks to be called again.
                        state_only += 1;
                        let pause = Duration::from_millis(100 * u64::from(state_only.min(20)));
                        if spent + pause >= limits.hard_max {
                            return Err(McpError::Timeout {
                                server: self.name.clone(),
                                after: limits.hard_max,
                            });
                        }
                        spent += pause;
                        tokio::select! {
                            () = tokio::time::sleep(pause) => {}
                            () = cancel.cancelled() => return Err(McpError::Cancelled { server: self.name.clone() }),
                        }
                    } else {
                        state_only = 0;
                    }
                    let answers = tokio::select! {
                        answers = self.answer_inputs(requests) => answers?,
                        () = cancel.cancelled() => return Err(McpError::Cancelled { server: self.name.clone() }),
                    };
                    params.input_responses = (!answers.is_empty()).then_some(answers);
                    params.request_state = asked.request_state;
                }
                _ => {
                    return Err(self.request_error(
                        &"the server answered `tools/call` with something other than a tool result",
                    ))
                }
            }
        }
        Err(self.request_error(&format!(
            "it asked for more input {MAX_INPUT_ROUNDS} times in one call; the call was stopped there"
        )))
    }

    /// The answers to an `input_required` result's requests, under the server's keys.
    pub(super) async fn answer_inputs(
        &self,
        requests: rmcp::model::InputRequests,
    ) -> Result<rmcp::model::InputResponses, McpError> {
        use rmcp::model::InputRequest;
        let mut answers = rmcp::model::InputResponses::new();
        // One at a time: the person answers one form before the next is shown.
        for (key, request) in requests {
            let answer = match request {
                InputRequest::Elicitation(form) => serde_json::to_value(
                    super::client::answer_form(
                        &self.name,
                        &self.elicitation,
                        &self.forms,
                        &form.params,
                    )
                    .await,
                ),
                #[allow(deprecated)] // roots are deprecated (SEP-2577); kept small, as in Roots
                InputRequest::ListRoots(_) => {
                    serde_json::to_value(rmcp::model::ListRootsResult::new(self.roots.list()))
                }
                InputRequest::CreateMessage(_) => {
                    return Err(self.request_error(
                        &"it asked to use the language model (sampling), which Switchboard does not do for servers",
                    ))
                }
                _ => {
                    return Err(self.request_error(
                        &"it asked for a kind of input Switchboard does not know",
                    ))
                }
            };
            let answer = answer.map_err(|e| self.request_error(&e))?;
            answers.insert(key, answer);
        }
        Ok(answers)
    }

    /// Sends one request and waits for its answer within `limits`, of whose `hard_max` the
    /// call has `spent` some already (time spent while one of the server's forms is open is
    /// not counted), or until `cancel`; see [`McpServer::call_tool_limited`]. Returns the
    /// answer and the time it counted.
    async fn send_timed(
        &self,
        request: ClientRequest,
        limits: CallLimits,
        spent: Duration,
        cancel: &CancellationToken,
        progress: Option<&ProgressSink>,
    ) -> Result<(ServerResult, Duration), McpError> {
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.service_error(&e))?;
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        // Every call hears its own progress, to put off its idle limit; the caller hears it
        // too if it asked. Registered once rmcp has named the token, just after the request
        // left: a server that reports progress within that instant has that one report missed.
        let (heard_tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
        self.progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(handle.progress_token.clone(), heard_tx);
        let _route = ProgressRoute {
            routes: &self.progress,
            token: handle.progress_token.clone(),
        };
        let mut forms = self.forms.watch();
        let mut paused = (*forms.borrow_and_update() > 0).then(tokio::time::Instant::now);
        let began = tokio::time::Instant::now();
        let mut idle_end = began + limits.idle;
        let mut hard_end = began + limits.hard_max.saturating_sub(spent);
        let mut not_counted = Duration::ZERO;
        let answer = handle.await_response();
        tokio::pin!(answer);
        let ended = loop {
            let deadline = idle_end.min(hard_end);
            tokio::select! {
                answer = &mut answer => break Ok(answer),
                () = cancel.cancelled() => break Err(None),
                Some(news) = heard.recv() => {
                    idle_end = tokio::time::Instant::now() + limits.idle;
                    if let Some(sink) = progress {
                        let _ = sink.send(news);
                    }
                }
                Ok(()) = forms.changed() => {
                    let open = *forms.borrow_and_update() > 0;
                    let now = tokio::time::Instant::now();
                    match (open, paused) {
                        (true, None) => paused = Some(now),
                        (false, Some(since)) => {
                            paused = None;
                            // The limits start again where they stood; the idle one afresh.
                            hard_end += now - since;
                            not_counted += now - since;
                            idle_end = now + limits.idle;
                        }
                        _ => {}
                    }
                }
                () = tokio::time::sleep_until(deadline), if paused.is_none() => {
                    let after = if idle_end <= hard_end { limits.idle } else { limits.hard_max };
                    break Err(Some(after));
                }
            }
        };
        if let Some(since) = paused {
            not_counted += tokio::time::Instant::now() - since;
        }
        let took = began.elapsed().saturating_sub(not_counted);
        let answer = match ended {
            Ok(answer) => answer,
            Err(timeout) => {
                let reason = if timeout.is_some() {
                    "timed out"
                } else {
                    "stopped by the user"
                };
                let notification = CancelledNotification::new(CancelledNotificationParam::new(
                    Some(id),
                    Some(reason.into()),
                ));
                let _ = peer.send_notification(notification.into()).await;
                return Err(match timeout {
                    Some(after) => McpError::Timeout {
                        server: self.name.clone(),
                        after,
                    },
                    None => McpError::Cancelled {
                        server: self.name.clone(),
                    },
                });
            }
        };
        match answer {
            Ok(answer) => Ok((answer, took)),
            // The server went away: say how (exit code, an over-long line), which the exit
            // watcher knows a moment later.
            // A 401 or 403: the connection stands, a sign-in is wanted.
            Err(e) if auth_challenge(&e).is_some() => {
                let refused = self.service_error(&e);
                if let McpError::SignInRequired {
                    challenge,
                    more_scope,
                    ..
                } = &refused
                {
                    self.sign_in_wanted
                        .send_replace(Some((challenge.clone(), *more_scope)));
                }
                Err(refused)
            }
            Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                let fault = self
                    .fault
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                if let Some(why) = fault {
                    return Err(self.request_error(&format!("{}: {why}", readable(&e))));
                }
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
            super::process::end_process_group(self.pid).await;
        }
    }
}

impl McpServer {
    /// The folders this server is given as its roots.
    pub fn roots(&self) -> Vec<std::path::PathBuf> {
        self.roots.folders()
    }

    /// Gives the server `folders` as its roots; when they changed, it is told
    /// (`notifications/roots/list_changed`) and asks for them again.
    ///
    /// # Errors
    /// The notification could not be sent (the server went away).
    pub async fn set_roots(&self, folders: Vec<std::path::PathBuf>) -> Result<(), McpError> {
        if self.replace_roots(folders) {
            self.notify_roots_changed().await?;
        }
        Ok(())
    }

    /// Gives the server `folders` as its roots without telling it yet; whether they changed.
    /// What it reads when it asks is what was replaced last, so callers that decide under a
    /// lock replace there and tell it after ([`McpServer::notify_roots_changed`]).
    pub fn replace_roots(&self, folders: Vec<std::path::PathBuf>) -> bool {
        self.roots.set(folders)
    }

    /// Tells the server its roots changed (`notifications/roots/list_changed`): it asks again.
    ///
    /// # Errors
    /// The notification could not be sent (the server went away).
    pub async fn notify_roots_changed(&self) -> Result<(), McpError> {
        self.peer
            .notify_roots_list_changed()
            .await
            .map_err(|e| McpError::Request {
                server: self.name.clone(),
                detail: format!("it could not be told its folders changed: {e}"),
                stderr_tail: self.stderr.tail(400),
            })
    }
}
