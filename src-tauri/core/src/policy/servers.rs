//! Server approval: a configured server runs only as the person approved it. Approving shows
//! the full command line (or address) and approves exactly that launch, by its fingerprint; an
//! entry that changes afterwards (a different command, argument, variable or address) needs
//! approving again, and an entry changed while the question was open is not approved by the
//! answer. Pure rules over the entry and the recorded approval: the flow that asks is
//! [`crate::app::App::approve_server`], the record is the store's.

use crate::mcp::config::{looks_secret, ConfigValue, Launch, OAuthEntry, ServerSpec, Trust};

pub use super::confirm::ServerApprovalRequest;

impl ServerApprovalRequest {
    /// What approving the server `name`, as `spec` says it runs now, shows and approves.
    pub fn of(name: &str, spec: &ServerSpec) -> ServerApprovalRequest {
        ServerApprovalRequest {
            server: name.to_owned(),
            command_line: shown(spec),
            remote: !matches!(spec.launch, Launch::Stdio { .. }),
            fingerprint: spec.fingerprint.clone(),
        }
    }
}

/// Everything approving `spec` allows, as the person is shown it: the command line or address;
/// for a remote server each header (a secret's value masked, a keychain reference named);
/// whether its read-only tools run without asking (`trust`); its sign-in settings. Each line's
/// invisible characters are shown as escapes, so nothing hides past the dialog's edge.
fn shown(spec: &ServerSpec) -> String {
    let mut lines = vec![spec.launch.display()];
    if let Launch::Http { headers, .. } | Launch::Sse { headers, .. } = &spec.launch {
        for (name, value) in headers {
            lines.push(format!("  header {name}: {}", header_value(name, value)));
        }
    }
    if spec.trust == Trust::Trusted {
        lines.push("  trusted: the tools it marks read-only run without asking".into());
    }
    let oauth = &spec.oauth;
    if *oauth != OAuthEntry::default() {
        let mut parts = Vec::new();
        if let Some(id) = &oauth.client_id {
            parts.push(format!("client id {id}"));
        }
        if let Some(secret) = &oauth.client_secret {
            parts.push(format!("client secret {}", header_value("secret", secret)));
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

/// A header's value as shown: a keychain reference by its name; a value written in mcp.json
/// under a name that [looks secret](looks_secret), masked but for its scheme word (`Bearer`).
fn header_value(name: &str, value: &ConfigValue) -> String {
    let plain = match value {
        ConfigValue::Keychain { .. } => return value.display(),
        ConfigValue::Plain(plain) => plain,
    };
    if !looks_secret(name) {
        return plain.clone();
    }
    let count = plain.chars().count();
    match plain.split_once(' ') {
        Some((scheme, rest)) if scheme.len() <= 10 && !rest.is_empty() => format!(
            "{scheme} •••• ({} characters, written in mcp.json)",
            rest.chars().count()
        ),
        _ => format!("•••• ({count} characters, written in mcp.json)"),
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
