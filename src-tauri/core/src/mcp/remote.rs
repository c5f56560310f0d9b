//! A remote MCP server reached over HTTP with the static headers its config names: streamable
//! HTTP (rmcp's client, with what [`super::http_client`] adds), the legacy HTTP+SSE transport
//! ([`super::sse`]), or — when the config does not say — streamable HTTP first and legacy SSE
//! when the server does not take that, as the MCP spec's backwards-compatibility section
//! describes.
//!
//! A server that asks for OAuth gets the tokens kept for it ([`super::oauth`]); one that asks
//! and has none is reported as [`McpError::SignInRequired`], never signed in to unasked.
//!
//! Redirects are followed only to the same origin, and only 307/308 (which keep the POST and
//! its body): a server cannot send our headers, which may hold a token, to another host.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::service::{ClientServiceExt, QuitReason, ServiceExt};
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;

use super::client::Roots;
use super::client::{Heard, HostClient, Start};
use super::elicitation::Elicitation;
use super::error::{auth_challenge, McpError};
use super::http_client::ServerHttp;
use super::oauth::RemoteAuth;
use super::process::StderrRing;
use super::server::McpServer;
use super::sse::SseTransport;

/// How long connecting may take before a request is given up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Which HTTP transport to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteTransport {
    /// Streamable HTTP only (`"transport": "http"`).
    Http,
    /// Legacy HTTP+SSE only (`"transport": "sse"`).
    Sse,
    /// Streamable HTTP, then legacy SSE if that fails (no transport named).
    HttpThenSse,
}

/// Everything needed to reach one remote server; header values are the real ones (read from
/// the keychain), so `Debug` shows only their names.
#[derive(Clone)]
pub struct RemoteLaunch {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub transport: RemoteTransport,
    pub startup_timeout: Duration,
    /// Where its OAuth tokens are kept and how to get them (streamable HTTP only).
    pub auth: Option<RemoteAuth>,
    /// Who shows the server's forms to the person.
    pub elicitation: Elicitation,
    /// The folders it is given as its roots.
    pub roots: Roots,
}

impl std::fmt::Debug for RemoteLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteLaunch")
            .field("url", &self.url)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("transport", &self.transport)
            .field("startup_timeout", &self.startup_timeout)
            .field("auth", &self.auth)
            .field("elicitation", &self.elicitation)
            .finish()
    }
}

/// Connects and completes the MCP handshake.
///
/// # Errors
/// [`McpError::Spawn`] for a header that HTTP cannot carry; [`McpError::StartupTimeout`] past
/// the deadline; [`McpError::Startup`] when the server cannot be reached or does not speak
/// MCP (saying what each transport tried answered).
pub async fn connect(name: &str, launch: &RemoteLaunch) -> Result<McpServer, McpError> {
    let headers = header_map(name, &launch.headers)?;
    let http = crate::net::client_builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| McpError::Spawn {
            server: name.to_owned(),
            detail: format!("cannot make an HTTP client: {e}"),
        })?;
    let deadline = tokio::time::Instant::now() + launch.startup_timeout;
    let mut signed_in = match &launch.auth {
        Some(auth) if launch.transport != RemoteTransport::Sse => {
            super::oauth::signed_in_manager(name, &launch.url, auth).await?
        }
        _ => None,
    };
    let mut attempt = |transport| {
        let (http, headers) = (http.clone(), headers.clone());
        let manager = if transport == RemoteTransport::Sse {
            None
        } else {
            signed_in.take()
        };
        async move {
            let connecting = async {
                let client =
                    HostClient::new(name, launch.elicitation.clone(), launch.roots.clone());
                let first = handshake(
                    name,
                    http.clone(),
                    &launch.url,
                    headers.clone(),
                    (transport, true),
                    manager,
                    client,
                )
                .await;
                let Err(Start::ProbeMisanswered) = first else {
                    return first;
                };
                tracing::info!(
                    server = name,
                    "MCP server answered server/discover wrongly; connecting again with initialize"
                );
                // The second connection signs in as the first did.
                let manager = match &launch.auth {
                    Some(auth) => super::oauth::signed_in_manager(name, &launch.url, auth).await?,
                    None => None,
                };
                let client =
                    HostClient::new(name, launch.elicitation.clone(), launch.roots.clone());
                handshake(
                    name,
                    http,
                    &launch.url,
                    headers,
                    (transport, false),
                    manager,
                    client,
                )
                .await
            };
            match tokio::time::timeout_at(deadline, connecting).await {
                Ok(Ok(server)) => Ok(server),
                Ok(Err(Start::Failed(e))) => Err(e),
                Ok(Err(Start::ProbeMisanswered)) => Err(McpError::Startup {
                    server: name.to_owned(),
                    detail: "it answered server/discover with something else".into(),
                    stderr_tail: String::new(),
                }),
                Err(_) => Err(McpError::StartupTimeout {
                    server: name.to_owned(),
                    after: launch.startup_timeout,
                    stderr_tail: String::new(),
                }),
            }
        }
    };
    match launch.transport {
        RemoteTransport::Http => attempt(RemoteTransport::Http).await,
        RemoteTransport::Sse => attempt(RemoteTransport::Sse).await,
        RemoteTransport::HttpThenSse => match attempt(RemoteTransport::Http).await {
            Err(McpError::Startup { detail: http, .. }) => {
                match attempt(RemoteTransport::Sse).await {
                    Ok(server) => {
                        tracing::info!(
                            server = name,
                            "MCP server answers as legacy HTTP+SSE, not streamable HTTP"
                        );
                        Ok(server)
                    }
                    Err(McpError::Startup { detail: sse, .. }) => Err(McpError::Startup {
                        server: name.to_owned(),
                        detail: format!("as streamable HTTP: {http}; as legacy HTTP+SSE: {sse}"),
                        stderr_tail: String::new(),
                    }),
                    Err(other) => Err(other),
                }
            }
            other => other,
        },
    }
}

/// What the server at `launch` says when reached with the tokens kept for it: its
/// `WWW-Authenticate` challenge if it wants a sign-in (at `initialize` or at its first real
/// request), `None` if it answers.
///
/// # Errors
/// It cannot be reached at all.
pub async fn challenge(name: &str, launch: &RemoteLaunch) -> Result<Option<String>, McpError> {
    match connect(name, launch).await {
        Err(McpError::SignInRequired { challenge, .. }) => Ok(Some(challenge)),
        Err(e) => Err(e),
        Ok(server) => {
            let listed = server.list_tools().await;
            server.stop().await;
            match listed {
                Err(McpError::SignInRequired { challenge, .. }) => Ok(Some(challenge)),
                _ => Ok(None),
            }
        }
    }
}

/// How long a streamable HTTP connection waits for its standalone stream to be tried.
const STANDALONE_STREAM_WAIT: Duration = Duration::from_secs(3);

async fn handshake(
    name: &str,
    http: reqwest::Client,
    url: &str,
    headers: HeaderMap,
    (transport, probe): (RemoteTransport, bool),
    signed_in: Option<AuthorizationManager>,
    (client, heard): (HostClient, Heard),
) -> Result<McpServer, Start> {
    let startup = |detail: String| McpError::Startup {
        server: name.to_owned(),
        detail,
        stderr_tail: String::new(),
    };
    // Why the connection ended or a request failed, when it failed on our side (a legacy SSE
    // stream's over-long event; a streamable-HTTP answer over our cap).
    let stream_end;
    let service = if transport == RemoteTransport::Sse {
        let sse = SseTransport::connect(http, url, headers, name)
            .await
            .map_err(|e| startup(e.to_string()))?;
        stream_end = Some(sse.end_reason());
        client.serve(sse).await
    } else {
        let custom: HashMap<HeaderName, HeaderValue> = headers
            .into_iter()
            .filter_map(|(k, v)| Some((k?, v)))
            .collect();
        let config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(custom)
            .max_sse_event_size(super::http_client::MAX_ANSWER_BYTES)
            .max_json_response_size(super::http_client::MAX_ANSWER_BYTES);
        let ended = super::sse::EndReason::default();
        stream_end = Some(Arc::clone(&ended));
        let (opened, mut stream_tried) = tokio::sync::watch::channel(false);
        let opened = Arc::new(opened);
        let service = match signed_in {
            Some(manager) => {
                let http = AuthClient::new(ServerHttp::new(http, &opened, name, &ended), manager);
                client
                    .serve_with_lifecycle(
                        StreamableHttpClientTransport::with_client(http, config),
                        super::client::lifecycle(probe),
                    )
                    .await
            }
            None => {
                let http = ServerHttp::new(http, &opened, name, &ended);
                client
                    .serve_with_lifecycle(
                        StreamableHttpClientTransport::with_client(http, config),
                        super::client::lifecycle(probe),
                    )
                    .await
            }
        };
        // A server may send a request that belongs to no call (a form asked for while a tool
        // runs, with no request named) only on the standalone stream, and drops it while that
        // stream is not open: a call made before it is would wait for its timeout. Wait, a
        // little at most, until the transport has tried to open it. A 2026-07-28 connection has
        // no such stream (it listens with `subscriptions/listen`), so it waits for none.
        if service
            .as_ref()
            .is_ok_and(|s| !super::listen::is_modern(s.peer()))
        {
            let _ =
                tokio::time::timeout(STANDALONE_STREAM_WAIT, stream_tried.wait_for(|t| *t)).await;
        }
        service
    }
    .map_err(|e| {
        if probe && transport != RemoteTransport::Sse && super::client::misanswered_probe(&e) {
            return Start::ProbeMisanswered;
        }
        Start::Failed(if let Some((challenge, more_scope)) = auth_challenge(&e) {
            McpError::SignInRequired {
                server: name.to_owned(),
                challenge,
                more_scope,
            }
        } else {
            match stream_end.as_ref().and_then(ended_because) {
                Some(why) => startup(why),
                None => startup(super::error::readable(&e)),
            }
        })
    })?;
    let kind = if transport == RemoteTransport::Sse {
        "legacy HTTP+SSE"
    } else {
        "streamable HTTP"
    };
    tracing::info!(server = name, kind, "remote MCP server connected");
    let fault = stream_end.clone().unwrap_or_default();
    Ok(McpServer::new(
        name,
        service,
        heard,
        None,
        Arc::new(StderrRing::default()),
        move |reason| async move {
            match reason {
                Ok(QuitReason::Cancelled) => "stopped".to_owned(),
                Ok(_) => match stream_end.as_ref().and_then(ended_because) {
                    Some(why) => format!("stopped: {why}"),
                    None => format!("the {kind} connection to the server closed"),
                },
                Err(e) => format!("the connection's task failed: {e}"),
            }
        },
    )
    .with_fault(fault))
}

fn ended_because(reason: &super::sse::EndReason) -> Option<String> {
    reason
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// The configured headers as HTTP headers.
///
/// # Errors
/// A name or value HTTP cannot carry (a line break in a pasted token, say).
fn header_map(server: &str, headers: &[(String, String)]) -> Result<HeaderMap, McpError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let bad = |what: &str| McpError::Spawn {
            server: server.to_owned(),
            detail: format!("the header “{name}” has {what} that HTTP cannot carry"),
        };
        let key = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| bad("a name"))?;
        let mut value = HeaderValue::from_str(value.trim()).map_err(|_| bad("a value"))?;
        value.set_sensitive(true);
        map.insert(key, value);
    }
    Ok(map)
}

/// Same-origin 307 and 308 redirects only: they keep the method and body, and our headers stay
/// with the server they were configured for.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        if !keeps_body || !crate::net::same_origin(&attempt) {
            attempt.stop()
        } else if attempt.previous().len() > crate::net::MAX_REDIRECTS {
            attempt.error(format!("more than {} redirects", crate::net::MAX_REDIRECTS))
        } else {
            attempt.follow()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_sensitive_and_bad_ones_are_named() {
        let map = header_map("s", &[("Authorization".into(), "Bearer t0ken".into())]).unwrap();
        assert!(map["authorization"].is_sensitive());
        let err = header_map("s", &[("X-Token".into(), "a\nb".into())]).unwrap_err();
        assert!(err.to_string().contains("X-Token"), "{err}");
    }

    #[test]
    fn debug_never_shows_header_values() {
        let launch = RemoteLaunch {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer s3cret".into())],
            transport: RemoteTransport::Http,
            startup_timeout: Duration::from_secs(1),
            auth: None,
            elicitation: Elicitation::default(),
            roots: Roots::default(),
        };
        let shown = format!("{launch:?}");
        assert!(
            shown.contains("Authorization") && !shown.contains("s3cret"),
            "{shown}"
        );
    }
}
