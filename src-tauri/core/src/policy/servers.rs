//! Server approval: a configured server runs only as the person approved it. Approving shows
//! the full command line (or address) and approves exactly that launch, by its fingerprint; an
//! entry that changes afterwards (a different command, argument, variable or address) needs
//! approving again, and an entry changed while the question was open is not approved by the
//! answer. Pure rules over the entry and the recorded approval: the flow that asks is
//! [`crate::app::App::approve_server`], the record is the store's.

use crate::mcp::config::{Launch, OAuthEntry, ServerSpec, Trust};

pub use super::confirm::ServerApprovalRequest;

impl ServerApprovalRequest {
    /// What approving the server `name`, as `spec` says it runs now, shows and approves.
    pub fn of(name: &str, spec: &ServerSpec) -> ServerApprovalRequest {
        ServerApprovalRequest {
            server: name.to_owned(),
            command_line: shown(spec),
            remote: !matches!(spec.launch, Launch::Stdio { .. }),
            sandboxed: spec.sandbox.as_ref().is_some_and(|s| s.enabled),
            fingerprint: spec.fingerprint.clone(),
        }
    }
}

/// Everything approving `spec` allows, as the person is shown it: the command line or address;
/// for a remote server each header, its value whole (a keychain reference by its name): a
/// value written in mcp.json was not typed into Switchboard, which would have put it in the
/// keychain, so it is shown like every value that decides what runs;
/// whether its read-only tools run without asking (`trust`); its sign-in settings. Each line's
/// invisible characters are shown as escapes, so nothing hides past the dialog's edge.
fn shown(spec: &ServerSpec) -> String {
    let mut lines = spec.launch.lines_whole();
    if spec.trust == Trust::Trusted {
        lines.push("  trusted: the tools it marks read-only run without asking".into());
    }
    if let Some(sandbox) = &spec.sandbox {
        let home = dirs::home_dir().unwrap_or_default();
        lines.push(format!(
            "  sandbox: {}",
            crate::sandbox::words(sandbox, &spec.sandbox_about(&home))
        ));
    }
    let oauth = &spec.oauth;
    if *oauth != OAuthEntry::default() {
        let mut parts = Vec::new();
        if let Some(id) = &oauth.client_id {
            parts.push(format!("client id {id}"));
        }
        if let Some(secret) = &oauth.client_secret {
            parts.push(format!("client secret {}", secret.display()));
        }
        if let Some(url) = &oauth.client_metadata_url {
            parts.push(format!("client metadata {url}"));
        }
        if !oauth.scopes.is_empty() {
            parts.push(format!("scopes {}", oauth.scopes.join(" ")));
        }
        lines.push(format!("  sign-in: {}", parts.join(", ")));
    }
    crate::text::escaped_lines(&lines)
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
