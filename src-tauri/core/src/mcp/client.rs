//! The host's side of a server's connection ([`HostClient`]): who we are at `initialize`, the
//! server's `notifications/tools/list_changed` and `notifications/progress` heard and routed,
//! and its `elicitation/create` forms shown to the person.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::ProgressToken;
use rmcp::service::RoleClient;
use serde_json::Value;

use super::elicitation::{Elicitation, ElicitationAnswer, ElicitationRequest};

/// A `notifications/progress` for a call in flight: how far it is, of how much if known, and
/// what the server says it is doing (server text: show it as text only).
#[derive(Debug, Clone, PartialEq)]
pub struct CallProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
    /// The server's task, when it answered the call with one (the Tasks extension): the call
    /// is now that task's, followed by polling.
    pub task: Option<String>,
}

/// Where a caller wants the progress of its call.
pub type ProgressSink = tokio::sync::mpsc::UnboundedSender<CallProgress>;

/// The calls in flight that want their progress, by the token rmcp gave each request.
pub(super) type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, ProgressSink>>>;

/// What the host answers to a server: it hears `notifications/tools/list_changed` (and
/// counts them, so the supervisor can list the tools again) and `notifications/progress`
/// (passed to the call it is about), and shows a server's `elicitation/create` form to the
/// person through its [`Elicitation`] (declaring the capability only when it has one);
/// everything else is rmcp's default.
#[derive(Debug)]
pub struct HostClient {
    server: String,
    changes: Changes,
    forms: FormsOpen,
    progress: ProgressRoutes,
    elicitation: Elicitation,
    roots: Roots,
}

/// Where a server's news of change is counted, whichever way it arrives: as a notification on
/// a 2025-11-25 connection ([`HostClient`]) or on a 2026-07-28 `subscriptions/listen` stream
/// ([`super::listen`]).
#[derive(Debug, Clone)]
pub(crate) struct Changes {
    tools: Arc<tokio::sync::watch::Sender<u64>>,
    /// Counts `notifications/resources/list_changed`, `…/resources/updated` and
    /// `…/prompts/list_changed`: what the window shows of the server's offers is read again.
    offers: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Changes {
    /// The server's tool list changed.
    pub(crate) fn tools(&self) {
        self.tools.send_modify(|n| *n += 1);
    }

    /// The server's resources or prompts changed.
    pub(crate) fn offers(&self) {
        self.offers.send_modify(|n| *n += 1);
    }
}

/// How many of a server's forms are open now. While one is, that server's calls do not count
/// the time against their limits: a person slower than the idle limit is not a timed-out call.
#[derive(Debug, Clone, Default)]
pub(crate) struct FormsOpen(Arc<tokio::sync::watch::Sender<usize>>);

impl FormsOpen {
    pub(crate) fn watch(&self) -> tokio::sync::watch::Receiver<usize> {
        self.0.subscribe()
    }
}

/// Counts a form as open until dropped (answered, or its call abandoned).
struct FormShown<'a>(&'a FormsOpen);

impl<'a> FormShown<'a> {
    fn new(forms: &'a FormsOpen) -> Self {
        forms.0.send_modify(|n| *n += 1);
        FormShown(forms)
    }
}

impl Drop for FormShown<'_> {
    fn drop(&mut self) {
        self.0 .0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// A server's form, shown to the person (whether it came as a 2025-11-25 request or inside a
/// 2026-07-28 `input_required` result); what they did goes back as it is (an accepted form
/// checked against its schema first). A form that cannot be shown is declined. While it is
/// open it is counted in `forms`.
pub(crate) async fn answer_form(
    server: &str,
    elicitation: &Elicitation,
    forms: &FormsOpen,
    request: &rmcp::model::ElicitRequestParams,
) -> rmcp::model::ElicitResult {
    use rmcp::model::{ElicitResult, ElicitationAction};
    let id = uuid::Uuid::new_v4().to_string();
    let form = ElicitationRequest::from_rmcp(id, server, request);
    let (Some(elicitor), Some(form)) = (&elicitation.0, form) else {
        return ElicitResult::new(ElicitationAction::Decline);
    };
    tracing::info!(server = %server, fields = form.fields.len(), "an MCP server asks for input");
    let _shown = FormShown::new(forms);
    match elicitor.elicit(form).await {
        ElicitationAnswer::Accept { content } => {
            ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
        }
        ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
        ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// What a connected server's [`HostClient`] hears, for its [`McpServer`].
pub(crate) struct Heard {
    pub(super) changes: Changes,
    pub(super) forms: FormsOpen,
    pub(super) elicitation: Elicitation,
    pub(super) tools_changed: tokio::sync::watch::Receiver<u64>,
    pub(super) offers_changed: tokio::sync::watch::Receiver<u64>,
    pub(super) progress: ProgressRoutes,
    pub(super) roots: Roots,
}

/// The folders a server is given as its roots (`roots/list`, issue 17), shared by its launch,
/// its client and its [`McpServer`], so a change reaches a running server (which is then
/// sent `notifications/roots/list_changed`). The 2026-07-28 spec deprecates roots; they are
/// kept small: folders, as `file://` URIs named by their last part.
#[derive(Debug, Clone, Default)]
pub struct Roots(Arc<Mutex<Vec<std::path::PathBuf>>>);

impl Roots {
    pub fn new(folders: Vec<std::path::PathBuf>) -> Self {
        Self(Arc::new(Mutex::new(folders)))
    }

    /// Replaces the folders; whether they changed.
    pub fn set(&self, folders: Vec<std::path::PathBuf>) -> bool {
        let mut now = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = *now != folders;
        *now = folders;
        changed
    }

    pub fn folders(&self) -> Vec<std::path::PathBuf> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The roots as a server reads them (a folder that is not an absolute path is left out).
    #[allow(deprecated)] // roots are deprecated by SEP-2577; the issue keeps them, small
    pub fn list(&self) -> Vec<rmcp::model::Root> {
        self.folders()
            .iter()
            .filter_map(|dir| {
                let uri = url::Url::from_directory_path(dir).ok()?;
                let uri = uri.as_str();
                // `file:///home/me/notes`, as servers write roots; `/` stays `file:///`.
                let uri = if uri.len() > "file:///".len() {
                    uri.trim_end_matches('/')
                } else {
                    uri
                };
                let root = rmcp::model::Root::new(uri);
                Some(match dir.file_name() {
                    Some(name) => root.with_name(name.to_string_lossy()),
                    None => root,
                })
            })
            .collect()
    }
}

/// How a connection over stdio or streamable HTTP begins: `server/discover` at 2026-07-28
/// first (stateless, per-request metadata, `MCP-Protocol-Version` on every HTTP request),
/// and the 2025-11-25 `initialize` handshake on the same connection when the server answers
/// the probe as an older server does (a JSON-RPC error such as "method not found"), or says
/// nothing for rmcp's 10 s. A server that answers `initialize` with 2025-06-18 or 2025-03-26
/// is spoken to in that version. Legacy HTTP+SSE keeps to the handshake, and so does a second
/// start after [`misanswered_probe`] (`probe` false).
pub(crate) fn lifecycle(probe: bool) -> rmcp::service::ClientLifecycleMode {
    use rmcp::model::ProtocolVersion;
    if !probe {
        return rmcp::service::ClientLifecycleMode::Initialize;
    }
    rmcp::service::ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

/// Why one start (or connection) did not give a server.
pub(crate) enum Start {
    Failed(super::error::McpError),
    /// The `server/discover` probe was answered with another result: try `initialize` alone.
    ProbeMisanswered,
}

impl From<super::error::McpError> for Start {
    fn from(e: super::error::McpError) -> Self {
        Start::Failed(e)
    }
}

/// Whether a start that probed with `server/discover` failed because the server answered the
/// probe with some other result (an older server that answers every method with `{}`): worth
/// one more start, with `initialize` alone.
pub(crate) fn misanswered_probe(error: &rmcp::service::ClientInitializeError) -> bool {
    matches!(
        error,
        rmcp::service::ClientInitializeError::ExpectedInitResult(Some(_))
    )
}

impl HostClient {
    /// A client, and what it hears.
    pub(crate) fn new(server: &str, elicitation: Elicitation, roots: Roots) -> (HostClient, Heard) {
        let (tools_changed, heard) = tokio::sync::watch::channel(0);
        let (offers_changed, offers_heard) = tokio::sync::watch::channel(0);
        let changes = Changes {
            tools: Arc::new(tools_changed),
            offers: Arc::new(offers_changed),
        };
        let progress = ProgressRoutes::default();
        let forms = FormsOpen::default();
        (
            HostClient {
                server: server.to_owned(),
                changes: changes.clone(),
                forms: forms.clone(),
                progress: Arc::clone(&progress),
                elicitation: elicitation.clone(),
                roots: roots.clone(),
            },
            Heard {
                changes,
                forms,
                elicitation,
                tools_changed: heard,
                offers_changed: offers_heard,
                progress,
                roots,
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
        let mut roots = rmcp::model::RootsCapabilities::default();
        roots.list_changed = Some(true);
        capabilities.roots = Some(roots);
        // A tool may answer with a task, which the call follows to its end (`tasks`).
        let mut extensions = rmcp::model::ExtensionCapabilities::new();
        extensions.insert(
            rmcp::model::TASKS_EXTENSION_ID.to_owned(),
            serde_json::Map::new(),
        );
        capabilities.extensions = Some(extensions);
        if self.elicitation.0.is_some() {
            capabilities.elicitation = Some(
                rmcp::model::ElicitationCapability::new()
                    .with_form(rmcp::model::FormElicitationCapability::new())
                    .with_url(rmcp::model::UrlElicitationCapability::new()),
            );
        }
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("switchboard", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    /// A server's form (a 2025-11-25 `elicitation/create` sent while a call runs), shown
    /// to the person; see [`answer_form`].
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        Ok(answer_form(&self.server, &self.elicitation, &self.forms, &request).await)
    }

    /// The folders this server is given (none until the person gives it some).
    #[allow(deprecated)] // as in Roots::list
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListRootsResult::new(self.roots.list()))
    }

    /// `notifications/elicitation/complete`: a page the server asked the person to visit is
    /// done. Anything else a server invents is ignored.
    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        if notification.method != "notifications/elicitation/complete" {
            return;
        }
        let id = notification
            .params
            .as_ref()
            .and_then(|p| p.get("elicitationId"))
            .and_then(Value::as_str);
        if let (Some(elicitor), Some(id)) = (&self.elicitation.0, id) {
            elicitor.completed(&self.server, id);
        }
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.changes.tools();
    }

    async fn on_resource_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.changes.offers();
    }

    async fn on_resource_updated(
        &self,
        _params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.changes.offers();
    }

    async fn on_prompt_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.changes.offers();
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
                task: None,
            });
        }
    }
}

/// A call's progress route, taken down when the call ends however it ends.
pub(super) struct ProgressRoute<'a> {
    pub(super) routes: &'a ProgressRoutes,
    pub(super) token: ProgressToken,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        self.routes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.token);
    }
}
