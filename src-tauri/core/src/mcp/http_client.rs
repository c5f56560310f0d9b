//! What Switchboard's streamable HTTP client adds to rmcp's reqwest client, and nothing else:
//! it says when the standalone stream (the `GET` the transport opens after the handshake) has
//! been tried, open or refused, or will not be (a server that gave no session), and it cuts the
//! nesting of everything a server answers at [`super::nesting::MAX_DEPTH`], as the stdio
//! transport does each line.
//!
//! An event stream is flattened event by event as it is read. An answer that is one JSON body
//! is parsed by rmcp itself, then cut here (as text) when it nests deeper than we allow. When
//! rmcp's parse fails on serde_json's own depth limit and the request was a list
//! (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`, which change
//! nothing and may be asked twice), the same request is sent once more and its body flattened
//! before it is parsed, so one tool nested too deep is held back and the rest of the list is
//! kept. Any other request nested too deep fails as rmcp says: a call is never sent twice.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

/// The largest answer a server may send in one piece — a JSON body, or one event of a stream —
/// the same as a stdio server's line ([`super::stdio::MAX_LINE_BYTES`], 32 MiB): rmcp's own
/// default (16 MiB) would end a call whose result is 20 MB.
pub const MAX_ANSWER_BYTES: usize = super::stdio::MAX_LINE_BYTES;

/// The largest JSON body read again to be flattened.
const MAX_JSON_BODY: usize = MAX_ANSWER_BYTES;

/// The requests that may be sent twice: lists, which change nothing on the server.
const LISTS: [&str; 4] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

/// rmcp's reqwest client with the additions above.
#[derive(Clone)]
pub(super) struct ServerHttp {
    inner: reqwest::Client,
    tried: Arc<tokio::sync::watch::Sender<bool>>,
    server: Arc<str>,
    /// Why the connection ended, when it is ours to say (an answer over
    /// [`MAX_ANSWER_BYTES`]): the server's stop and its call's error say it.
    ended: super::sse::EndReason,
}

impl ServerHttp {
    /// `inner` for `server`, telling `tried` once the standalone stream has been tried.
    pub(super) fn new(
        inner: reqwest::Client,
        tried: &Arc<tokio::sync::watch::Sender<bool>>,
        server: &str,
        ended: &super::sse::EndReason,
    ) -> Self {
        Self {
            inner,
            tried: Arc::clone(tried),
            server: server.into(),
            ended: Arc::clone(ended),
        }
    }

    /// Says that the server's answer was over [`MAX_ANSWER_BYTES`] (rmcp fails the request).
    fn too_large(ended: &super::sse::EndReason, server: &str) {
        let why = format!(
            "it sent an answer larger than {} MiB",
            MAX_ANSWER_BYTES / (1024 * 1024)
        );
        tracing::warn!(server, "{why}");
        *ended
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(why);
    }
}

type SseStream = futures_util::stream::BoxStream<'static, Result<sse_stream::Sse, SseError>>;
type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// `events` with each one's data flattened past the depth serde_json parses; an event over
/// [`MAX_ANSWER_BYTES`] said in `ended`.
fn flattened(events: SseStream, server: &Arc<str>, ended: &super::sse::EndReason) -> SseStream {
    let server = Arc::clone(server);
    let ended = Arc::clone(ended);
    events
        .map(move |event| {
            if let Err(SseError::Body(e)) = &event {
                if e.to_string().contains("exceeded the maximum size") {
                    ServerHttp::too_large(&ended, &server);
                }
            }
            event.map(|mut event| {
                event.data = event
                    .data
                    .map(|data| super::nesting::flatten_text(data, &server));
                event
            })
        })
        .boxed()
}

/// Whether rmcp could not parse a JSON answer because it nests past serde_json's limit.
fn too_deep_to_parse(error: &StreamableHttpError<reqwest::Error>) -> bool {
    matches!(error, StreamableHttpError::UnexpectedServerResponse(why)
        if why.contains("could not parse JSON") && why.contains("recursion limit exceeded"))
}

/// Whether a request of `method` may be sent twice (see [`LISTS`]).
fn is_list(method: Option<&str>) -> bool {
    method.is_some_and(|m| LISTS.contains(&m))
}

/// The method `message` calls, if it is a request or a notification.
fn method_of(message: &ClientJsonRpcMessage) -> Option<String> {
    let value = serde_json::to_value(message).ok()?;
    value.get("method")?.as_str().map(str::to_owned)
}

/// One POST as rmcp's client sends it.
#[derive(Clone)]
struct Post {
    uri: Arc<str>,
    message: ClientJsonRpcMessage,
    session_id: Option<Arc<str>>,
    auth_header: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
}

impl ServerHttp {
    /// `post` sent by rmcp's client (through `send`), its event stream flattened; a list whose
    /// JSON answer nests too deep is asked again and read here.
    async fn post<F>(&self, post: Post, send: impl FnOnce(Post) -> F) -> PostResult
    where
        F: std::future::Future<Output = PostResult>,
    {
        let method = method_of(&post.message);
        let again = is_list(method.as_deref()).then(|| post.clone());
        let initializing = method.as_deref() == Some("initialize");
        let answer = send(post).await;
        if initializing {
            if let Ok(
                StreamableHttpPostResponse::Sse(_, None)
                | StreamableHttpPostResponse::Json(_, None),
            ) = &answer
            {
                // No session: rmcp opens a standalone stream only within one, so none will be
                // tried, and nobody need wait for it.
                self.tried.send_replace(true);
            }
        }
        match (answer, again) {
            (Ok(StreamableHttpPostResponse::Sse(events, session)), _) => {
                Ok(StreamableHttpPostResponse::Sse(
                    flattened(events, &self.server, &self.ended),
                    session,
                ))
            }
            (Ok(StreamableHttpPostResponse::Json(message, session)), _) => {
                Ok(StreamableHttpPostResponse::Json(self.cut(message), session))
            }
            (Err(error @ StreamableHttpError::ResponseBodyTooLarge { .. }), _) => {
                Self::too_large(&self.ended, &self.server);
                Err(error)
            }
            (Err(error), Some(again)) if too_deep_to_parse(&error) => {
                match self.flattened_json(again).await {
                    Some(answer) => Ok(answer),
                    None => Err(error),
                }
            }
            (other, _) => other,
        }
    }

    /// A JSON answer rmcp could parse, cut at [`super::nesting::MAX_DEPTH`] as every other
    /// message is (serde_json parses up to 128 levels; a tool nested 65–128 levels is held back
    /// on every transport alike).
    fn cut(&self, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        let Ok(text) = serde_json::to_vec(&message) else {
            return message;
        };
        match super::nesting::flatten_message(&text, &self.server) {
            Some(flat) => serde_json::from_slice(&flat).unwrap_or(message),
            None => message,
        }
    }

    /// `post` sent once more, its answer read only if it is a successful JSON body within
    /// [`MAX_JSON_BODY`], and parsed after flattening; `None` for anything else.
    async fn flattened_json(&self, post: Post) -> Option<StreamableHttpPostResponse> {
        let mut request = self
            .inner
            .post(post.uri.as_ref())
            .header(ACCEPT, [EVENT_STREAM_MIME_TYPE, JSON_MIME_TYPE].join(", "))
            .json(&post.message);
        if let Some(token) = post.auth_header {
            request = request.bearer_auth(token);
        }
        for (name, value) in post.custom_headers {
            request = request.header(name, value);
        }
        if let Some(session) = &post.session_id {
            request = request.header(HEADER_SESSION_ID, session.as_ref());
        }
        let response = request.send().await.ok()?;
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(JSON_MIME_TYPE.as_bytes()));
        if !response.status().is_success() || !is_json {
            return None;
        }
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            body.extend_from_slice(&chunk.ok()?);
            if body.len() > MAX_JSON_BODY {
                return None;
            }
        }
        let flat = super::nesting::flatten_message(&body, &self.server).unwrap_or(body);
        let parsed: ServerJsonRpcMessage = serde_json::from_slice(&flat).ok()?;
        Some(StreamableHttpPostResponse::Json(parsed, session))
    }

    /// A `GET` stream as rmcp's client opens it, flattened, with `tried` told once it is tried.
    async fn stream<F>(&self, opening: F) -> Result<SseStream, StreamableHttpError<reqwest::Error>>
    where
        F: std::future::Future<Output = Result<SseStream, StreamableHttpError<reqwest::Error>>>,
    {
        let opened = opening.await;
        self.tried.send_replace(true);
        opened.map(|events| flattened(events, &self.server, &self.ended))
    }
}

impl StreamableHttpClient for ServerHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        let post = Post {
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
        };
        self.post(post, |p| {
            self.inner.post_message(
                p.uri,
                p.message,
                p.session_id,
                p.auth_header,
                p.custom_headers,
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> PostResult {
        let post = Post {
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
        };
        self.post(post, |p| {
            self.inner.post_message_with_max_sse_event_size(
                p.uri,
                p.message,
                p.session_id,
                p.auth_header,
                p.custom_headers,
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        // Every limit passed on (the trait's default passes the stream's only, and reqwest's
        // client would read a JSON answer under its own 16 MiB).
        let post = Post {
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
        };
        self.post(post, |p| {
            self.inner.post_message_with_response_limits(
                p.uri,
                p.message,
                p.session_id,
                p.auth_header,
                p.custom_headers,
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        self.stream(self.inner.get_stream(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
        ))
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        self.stream(self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        ))
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lists_may_be_asked_twice() {
        let request = |method: &str| -> ClientJsonRpcMessage {
            serde_json::from_value(serde_json::json!({
                "jsonrpc": "2.0", "id": 1, "method": method, "params": {}
            }))
            .unwrap()
        };
        assert!(is_list(method_of(&request("tools/list")).as_deref()));
        assert!(is_list(
            method_of(&request("resources/templates/list")).as_deref()
        ));
        assert!(!is_list(method_of(&request("ping")).as_deref()));
        let call: ClientJsonRpcMessage = serde_json::from_value(serde_json::json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "tools/list", "arguments": {}}
        }))
        .unwrap();
        assert!(
            !is_list(method_of(&call).as_deref()),
            "a call named like a list is still a call"
        );
    }
}
