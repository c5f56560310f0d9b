//! MCP Apps (SEP-1865): a tool whose definition names a `ui://` resource has that HTML shown in
//! its card after a call. This module owns reading the app's page from the tool's own server
//! (a `ui://` address, HTML, capped) and the Content-Security-Policy it is served under: built
//! here from the domains the page declares (`_meta.ui.csp`), each one checked, so nothing the
//! page loads reaches the network unless a declared domain allows it. Serving it (a scheme of
//! its own, a sandboxed frame with an opaque origin) is the shell's and the window's part.

use std::time::Duration;

use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use super::error::McpError;
use super::server::McpServer;

/// The largest app page served.
pub const MAX_APP_BYTES: usize = 4 * 1024 * 1024;
/// At most this many domains of each kind are taken from a page's declaration.
const MAX_DOMAINS: usize = 32;

/// An app's page, ready to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppDocument {
    pub server: String,
    pub resource_uri: String,
    pub html: String,
    /// The policy the page is served under (its `Content-Security-Policy` header).
    pub csp: String,
    /// The page asks for a border around it (`_meta.ui.prefersBorder`).
    pub prefers_border: bool,
}

/// What the window needs to show a call's app: where to load it from, and what to hand it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct McpAppView {
    /// The address the shell serves the page at (its own scheme).
    pub src: String,
    pub server: String,
    pub tool: String,
    pub resource_uri: String,
    /// The arguments the tool was called with.
    #[ts(type = "unknown")]
    pub arguments: Value,
    /// The call's result as the server sent it (`content`, `structuredContent`, `isError`).
    #[ts(type = "unknown")]
    pub result: Value,
    pub prefers_border: bool,
}

/// Reads the app page `uri` from `server`.
///
/// # Errors
/// Not a `ui://` address; the server could not read it; it is not HTML, or too large.
pub async fn read_app(
    server: &McpServer,
    uri: &str,
    timeout: Duration,
) -> Result<AppDocument, McpError> {
    let refuse = |why: String| McpError::Request {
        server: server.name().to_owned(),
        detail: format!("its app {}: {why}", crate::text::one_line(uri, 120)),
        stderr_tail: String::new(),
    };
    if !uri.starts_with("ui://") {
        return Err(refuse("is not a ui:// resource".into()));
    }
    let read = server.read_resource(uri, timeout).await?;
    let content = read
        .contents
        .into_iter()
        .next()
        .ok_or_else(|| refuse("came back empty".into()))?;
    let value = serde_json::to_value(&content).unwrap_or_default();
    let mime = value["mimeType"]
        .as_str()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !mime.starts_with("text/html") {
        return Err(refuse(format!("is “{mime}”, not HTML")));
    }
    let html = match (value["text"].as_str(), value["blob"].as_str()) {
        (Some(text), _) => text.to_owned(),
        (None, Some(blob)) => {
            if blob.len() > MAX_APP_BYTES / 3 * 4 + 4 {
                return Err(refuse("is too large".into()));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|e| refuse(format!("is not valid base64 ({e})")))?;
            String::from_utf8(bytes).map_err(|_| refuse("is not UTF-8 text".into()))?
        }
        (None, None) => return Err(refuse("has no text".into())),
    };
    if html.len() > MAX_APP_BYTES {
        return Err(refuse(format!(
            "is larger than {} MiB",
            MAX_APP_BYTES / (1024 * 1024)
        )));
    }
    let ui = &value["_meta"]["ui"];
    Ok(AppDocument {
        server: server.name().to_owned(),
        resource_uri: uri.to_owned(),
        html,
        csp: content_security_policy(&ui["csp"]),
        prefers_border: ui["prefersBorder"].as_bool().unwrap_or(false),
    })
}

/// The policy an app page is served under: nothing by default; its own inline scripts and
/// styles; scripts, styles, images, fonts and media from its declared `resourceDomains`;
/// fetches and sockets to its `connectDomains` only; frames from its `frameDomains` only; no
/// plugins, no form posts, no `<base>` but its `baseUriDomains`.
pub fn content_security_policy(declared: &Value) -> String {
    let list = |key: &str| {
        let domains = domains(&declared[key]);
        if domains.is_empty() {
            "'none'".to_owned()
        } else {
            domains.join(" ")
        }
    };
    let resources = domains(&declared["resourceDomains"]).join(" ");
    let with = |base: &str| {
        if resources.is_empty() {
            base.to_owned()
        } else {
            format!("{base} {resources}")
        }
    };
    [
        "default-src 'none'".to_owned(),
        format!("script-src {}", with("'unsafe-inline'")),
        format!("style-src {}", with("'unsafe-inline'")),
        format!("img-src {}", with("data: blob:")),
        format!("font-src {}", with("data:")),
        format!("media-src {}", with("data: blob:")),
        format!("connect-src {}", list("connectDomains")),
        format!("frame-src {}", list("frameDomains")),
        format!("base-uri {}", list("baseUriDomains")),
        "object-src 'none'".to_owned(),
        "form-action 'none'".to_owned(),
        // Sandboxed by its own policy too, not only by the frame that loads it: wherever the
        // page ends up (a top-level window included) it has an opaque origin and no way to the
        // app's commands.
        "sandbox allow-scripts".to_owned(),
    ]
    .join("; ")
}

/// The declared domains that are origins a policy may name: `https://host[:port]`, a
/// `https://*.host` wildcard, `wss://host`, or `http://` on loopback. Anything else (a
/// keyword, `*`, `data:`, a path, quotes, spaces, semicolons) is dropped.
fn domains(list: &Value) -> Vec<String> {
    let Some(list) = list.as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter_map(Value::as_str)
        .filter_map(origin)
        .take(MAX_DOMAINS)
        .collect()
}

fn origin(raw: &str) -> Option<String> {
    let raw = raw.trim().trim_end_matches('/');
    if raw.len() > 255
        || raw
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, ';' | ',' | '\'' | '"'))
    {
        return None;
    }
    let (scheme, rest) = raw.split_once("://")?;
    let (wildcard, host_port) = match rest.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let parsed = url::Url::parse(&format!("{scheme}://{host_port}")).ok()?;
    if parsed.path() != "/" || parsed.query().is_some() || parsed.fragment().is_some() {
        return None;
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return None;
    }
    let host = parsed.host_str()?;
    // `*.localhost` names this computer's own services (the webview's `ipc.localhost`, the
    // app's `tauri.localhost` on Windows): never a page's to reach.
    if host.ends_with(".localhost") {
        return None;
    }
    let loopback = matches!(host, "localhost" | "127.0.0.1" | "[::1]");
    match parsed.scheme() {
        "https" | "wss" => {}
        "http" | "ws" if loopback && !wildcard => {}
        _ => return None,
    }
    // A wildcard needs a real domain under it (not `*.com`).
    if wildcard && !host.contains('.') {
        return None;
    }
    let port = parsed.port().map(|p| format!(":{p}")).unwrap_or_default();
    let star = if wildcard { "*." } else { "" };
    Some(format!("{}://{star}{host}{port}", parsed.scheme()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_page_that_declares_nothing_reaches_nothing() {
        let csp = content_security_policy(&Value::Null);
        assert!(csp.starts_with("default-src 'none'"));
        assert!(csp.contains("connect-src 'none'"));
        assert!(csp.contains("frame-src 'none'"));
        assert!(csp.contains("script-src 'unsafe-inline';"));
        assert!(csp.ends_with("; sandbox allow-scripts"), "{csp}");
        assert!(!csp.contains("http"));
    }

    #[test]
    fn declared_domains_are_checked_one_by_one() {
        let csp = content_security_policy(&json!({
            "connectDomains": ["https://api.example.com", "https://api.example.com/path",
                "*", "'unsafe-eval'", "data:", "https://x.com; script-src *", "http://example.com",
                "http://localhost:8080", "wss://live.example.com", "https://user:pw@example.com",
                "https://ipc.localhost", "http://tauri.localhost"],
            "resourceDomains": ["https://*.cdn.example.com", "https://*.com", "javascript:alert(1)"],
        }));
        assert!(
            csp.contains(
                "connect-src https://api.example.com http://localhost:8080 wss://live.example.com;"
            ),
            "{csp}"
        );
        assert!(
            csp.contains("script-src 'unsafe-inline' https://*.cdn.example.com;"),
            "{csp}"
        );
        for never in [
            "'unsafe-eval'",
            "http://example.com",
            "*.com;",
            "javascript",
            "user:pw",
            " * ",
        ] {
            assert!(!csp.contains(never), "{never} in {csp}");
        }
        assert_eq!(
            csp.matches(';').count(),
            11,
            "no directive smuggled in: {csp}"
        );
    }
}
