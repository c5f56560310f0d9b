//! Server approval: a configured server runs only as the person approved it. Approving shows
//! the full command line (or address) and approves exactly that launch, by its fingerprint; an
//! entry that changes afterwards (a different command, argument, variable or address) needs
//! approving again, and an entry changed while the question was open is not approved by the
//! answer. Pure rules over the entry and the recorded approval: the flow that asks is
//! [`crate::app::App::approve_server`], the record is the store's.

use crate::mcp::config::{Launch, ServerSpec};

pub use super::confirm::ServerApprovalRequest;

impl ServerApprovalRequest {
    /// What approving the server `name`, as `spec` says it runs now, shows and approves.
    pub fn of(name: &str, spec: &ServerSpec) -> ServerApprovalRequest {
        ServerApprovalRequest {
            server: name.to_owned(),
            command_line: spec.launch.display(),
            remote: !matches!(spec.launch, Launch::Stdio { .. }),
            fingerprint: spec.fingerprint.clone(),
        }
    }
}

/// Whether a server may run as `spec` says, given the fingerprint the person approved for it.
pub fn approved(approval: Option<&str>, spec: &ServerSpec) -> bool {
    approval == Some(spec.fingerprint.as_str())
}

/// Whether the answer to `shown` still approves the entry as it is `now`: only when nothing
/// of its launch changed while the question was open.
pub fn still_as_shown(shown: &ServerApprovalRequest, now: &ServerApprovalRequest) -> bool {
    shown.server == now.server && shown.fingerprint == now.fingerprint
}
