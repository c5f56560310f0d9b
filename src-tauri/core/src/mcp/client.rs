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
    tools_changed: tokio::sync::watch::Sender<u64>,
    progress: ProgressRoutes,
    elicitation: Elicitation,
}

/// What a connected server's [`HostClient`] hears, for its [`McpServer`].
pub(crate) struct Heard {
    pub(super) tools_changed: tokio::sync::watch::Receiver<u64>,
    pub(super) progress: ProgressRoutes,
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
