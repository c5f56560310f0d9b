//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp 3 no longer ships, on rmcp's
//! [`Transport`] trait: a GET opens an event stream whose first `endpoint` event names the URL
//! to POST each client message to; the server's messages arrive as `message` events on that
//! stream. The SSE parsing is sse-stream's (rmcp's own choice; it reads each byte once, so a
//! long event costs linear time).
//!
//! The endpoint must be on the server's own origin (a server cannot send our headers, which
//! may hold a token, elsewhere); an event that is not JSON-RPC is logged and skipped; an event
//! longer than [`MAX_EVENT_BYTES`] ends the connection with a clear reason instead of being
//! buffered; the stream ending closes the connection, which fails every pending call at once.

use std::future::Future;

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, CONTENT_TYPE};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use url::Url;

use super::nesting::flatten_text;
use crate::net::describe_error;

/// The most messages read off the stream and not yet taken by the client.
const BACKLOG: usize = 64;

/// The longest single event a server may send (as the stdio transport's line cap).
pub const MAX_EVENT_BYTES: usize = super::stdio::MAX_LINE_BYTES;

/// Why the stream ended, once it has (read by whoever reports the connection's end).
pub type EndReason = std::sync::Arc<std::sync::Mutex<Option<String>>>;

/// Why the transport failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    #[error("“{0}” is not a valid URL")]
    BadUrl(String),
    #[error("{0}")]
    Connect(String),
    #[error("the server answered {what} with HTTP {status}")]
    Status { what: &'static str, status: u16 },
    #[error("the server answered the GET with {}, not an event stream", .0.as_deref().unwrap_or("no content type"))]
    NotEventStream(Option<String>),
    #[error("the event stream failed before it named the message endpoint: {0}")]
    Stream(String),
    #[error("the server closed the event stream without naming its message endpoint")]
    NoEndpoint,
    #[error("the server named a message endpoint on another origin ({0}); refused")]
    CrossOrigin(String),
    #[error("sending a message failed: {0}")]
    Post(String),
}

/// A connection to a legacy HTTP+SSE server.
pub struct SseTransport {
    http: reqwest::Client,
    post_url: Url,
    headers: HeaderMap,
    incoming: tokio::sync::mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
    ended: EndReason,
}

impl std::fmt::Debug for SseTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseTransport")
            .field("post_url", &self.post_url.path())
            .finish_non_exhaustive()
    }
}

impl SseTransport {
    /// Opens the event stream at `url` (of the server `server`) and waits for the `endpoint`
    /// event. Each message's nesting is cut at [`super::nesting::MAX_DEPTH`].
    ///
    /// # Errors
    /// The server cannot be reached, does not answer with an event stream, or does not name a
    /// message endpoint on its own origin.
    pub async fn connect(
        http: reqwest::Client,
        url: &str,
        headers: HeaderMap,
        server: &str,
    ) -> Result<SseTransport, SseError> {
        let url = Url::parse(url).map_err(|_| SseError::BadUrl(url.to_owned()))?;
        let response = http
            .get(url.clone())
            .headers(headers.clone())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .send()
            .await
            .map_err(|e| SseError::Connect(describe_error(&e)))?;
        if !response.status().is_success() {
            return Err(SseError::Status {
                what: "the GET that opens the event stream",
                status: response.status().as_u16(),
            });
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if !content_type
            .as_deref()
            .is_some_and(|t| t.trim_start().starts_with("text/event-stream"))
        {
            return Err(SseError::NotEventStream(content_type));
        }
        let mut events = Box::pin(crate::net::sse_events(response, MAX_EVENT_BYTES));
        let post_url = loop {
            match events.next().await {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    let data = event.data.unwrap_or_default();
                    break url
                        .join(data.trim())
                        .map_err(|_| SseError::BadUrl(data.clone()))?;
                }
                Some(Ok(_)) => {} // nothing else means anything before the endpoint
                Some(Err(e)) => return Err(SseError::Stream(e)),
                None => return Err(SseError::NoEndpoint),
            }
        };
        if post_url.origin() != url.origin() {
            return Err(SseError::CrossOrigin(
                post_url.origin().ascii_serialization(),
            ));
        }
        let (sender, incoming) = tokio::sync::mpsc::channel(BACKLOG);
        let ended = EndReason::default();
        let end = std::sync::Arc::clone(&ended);
        let server = server.to_owned();
        let reader = tokio::spawn(async move {
            while let Some(event) = events.next().await {
                match event {
                    Ok(event)
                        if matches!(event.event.as_deref(), None | Some("message"))
                            && event.data.is_some() =>
                    {
                        let data = flatten_text(event.data.unwrap_or_default(), &server);
                        match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                            Ok(message) => {
                                if sender.send(message).await.is_err() {
                                    break; // the client has gone
                                }
                            }
                            Err(e) => tracing::warn!(
                                error = %e,
                                data = %data.chars().take(200).collect::<String>(),
                                "skipping an SSE message that is not JSON-RPC"
                            ),
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "the MCP server's event stream failed");
                        *end.lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
                        break;
                    }
                }
            }
            // Dropping the sender ends `receive`, which closes the connection.
        });
        Ok(SseTransport {
            http,
            post_url,
            headers,
            incoming,
            reader,
            ended,
        })
    }

    /// Why the event stream ended, once it has failed (an over-long event, a broken
    /// connection); shared, so it can be read after the transport has been handed to rmcp.
    pub fn end_reason(&self) -> EndReason {
        std::sync::Arc::clone(&self.ended)
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SseError>> + Send + 'static {
        let request = self
            .http
            .post(self.post_url.clone())
            .headers(self.headers.clone())
            .json(&item);
        async move {
            let response = request
                .send()
                .await
                .map_err(|e| SseError::Post(describe_error(&e)))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseError::Status {
                    what: "a message POST",
                    status: response.status().as_u16(),
                })
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), SseError> {
        self.reader.abort();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
