//! [`Confirm`]: how the person is asked about what only they may allow — a server's exact
//! command line before it first runs (or runs changed), and a changed tool before it is offered
//! to models again. The window answers with a native dialog drawn by Rust (never the webview,
//! which renders hostile text), the command line on the terminal. The flows that ask live once,
//! in [`crate::app::App`]; this module owns only the question's shape.

use serde::Serialize;

/// What a person is asked to approve before a server first runs (or runs changed). Approving
/// it approves exactly `fingerprint`: an entry changed while the question was open is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerApprovalRequest {
    pub server: String,
    /// The full command line or address, untruncated, secrets as their keychain reference.
    pub command_line: String,
    /// Reached over HTTP rather than run as a program.
    pub remote: bool,
    pub fingerprint: String,
}

/// A changed tool, held back until the person accepts its change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolChange {
    pub server: String,
    pub tool: String,
    /// What changed since it was pinned, as a unified diff (hostile text: shown as text).
    pub diff: String,
}

/// Asks the person; `true` only for a clear yes. A way of asking that has no one to ask (no
/// terminal, no window) answers no.
#[async_trait::async_trait]
pub trait Confirm: Send + Sync {
    /// May `request.server` run `request.command_line`?
    async fn approve_server(&self, request: &ServerApprovalRequest) -> bool;

    /// May the changed tool be offered to models again?
    async fn accept_tool(&self, change: &ToolChange) -> bool;
}

/// Says the same to every question: `--yes` on the command line, and tests.
#[derive(Debug, Clone, Copy)]
pub struct Always(pub bool);

#[async_trait::async_trait]
impl Confirm for Always {
    async fn approve_server(&self, _: &ServerApprovalRequest) -> bool {
        self.0
    }

    async fn accept_tool(&self, _: &ToolChange) -> bool {
        self.0
    }
}
