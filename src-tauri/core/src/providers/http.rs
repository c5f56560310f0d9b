//! The HTTP exchange every streaming provider shares: POST a JSON body, retry what is worth
//! retrying before the first token (exponential backoff honouring `Retry-After`), decode the
//! SSE events with the provider's [`StreamDecode`], cut a stalled stream at the read timeout,
//! stop on cancel, and keep the partial text when the stream breaks.
//!
//! Keys travel in headers marked sensitive, so they never show in debug output or logs.

use std::sync::Arc;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::formats::{FormatError, StreamDecode};
use super::{EventStream, HttpOptions, ProviderError, ProviderEvent};

/// How a response body is cut into payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    /// Server-sent events: each event's `data`.
    Sse,
    /// Newline-delimited JSON (Ollama): each line.
    NdJson,
}

/// The longest NDJSON line or SSE event accepted; a longer one ends the stream with an error
/// instead of eating memory.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

type Payloads = std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<String, String>> + Send>>;

fn payloads(response: reqwest::Response, framing: Framing) -> Payloads {
    match framing {
        // Events without data (comments, keep-alives) carry nothing to decode.
        Framing::Sse => Box::pin(
            crate::net::sse_events(response, MAX_LINE_BYTES)
                .filter_map(|r| std::future::ready(r.map(|event| event.data).transpose())),
        ),
        Framing::NdJson => {
            let reader = tokio_util::io::StreamReader::new(
                response
                    .bytes_stream()
                    .map(|r| r.map_err(std::io::Error::other)),
            );
            let lines = tokio_util::codec::FramedRead::new(
                reader,
                tokio_util::codec::LinesCodec::new_with_max_length(MAX_LINE_BYTES),
            );
            Box::pin(lines.map(|r| r.map_err(|e| describe_lines_error(&e))))
        }
    }
}

fn describe_lines_error(e: &tokio_util::codec::LinesCodecError) -> String {
    match e {
        tokio_util::codec::LinesCodecError::MaxLineLengthExceeded => {
            format!("a line longer than {} MiB", MAX_LINE_BYTES / (1024 * 1024))
        }
        tokio_util::codec::LinesCodecError::Io(io) => {
            let timed_out = io
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
                .is_some_and(reqwest::Error::is_timeout);
            if timed_out {
                "no data arrived before the read timeout".to_owned()
            } else {
                io.to_string()
            }
        }
    }
}

/// How to POST to one provider: the client and the headers (keys marked sensitive). The URL
/// is given per request (Gemini puts the model in it).
pub(super) struct Endpoint {
    http: reqwest::Client,
    headers: HeaderMap,
    options: HttpOptions,
}

impl Endpoint {
    /// `secret_headers` are marked sensitive; `headers` are plain.
    ///
    /// # Errors
    /// A header name or value that HTTP cannot carry, or no HTTP client.
    pub(super) fn new(
        secret_headers: Vec<(&'static str, String)>,
        headers: Vec<(String, String)>,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        let mut map = HeaderMap::new();
        let bad = |what: &str| ProviderError::BadResponse(format!("cannot send the header {what}"));
        for (name, value) in secret_headers {
            let mut value = HeaderValue::from_str(&value).map_err(|_| bad(name))?;
            value.set_sensitive(true);
            map.insert(HeaderName::from_static(name), value);
        }
        for (name, value) in headers {
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad(&name))?;
            map.insert(
                header,
                HeaderValue::from_str(&value).map_err(|_| bad(&name))?,
            );
        }
        Ok(Self {
            http: options.client()?,
            headers: map,
            options,
        })
    }

    /// GETs a JSON document (model lists), with the same headers, retries and errors.
    ///
    /// # Errors
    /// The provider's error, a network failure, or a body that is not JSON.
    pub(super) async fn get_json(&self, url: &str) -> Result<Value, ProviderError> {
        self.json_from(url, None).await
    }

    /// POSTs `body` and reads a JSON document back (Ollama's `/api/show`), as [`Self::get_json`].
    ///
    /// # Errors
    /// The provider's error, a network failure, or a body that is not JSON.
    pub(super) async fn post_json(&self, url: &str, body: &Value) -> Result<Value, ProviderError> {
        self.json_from(url, Some(body)).await
    }

    /// GETs a JSON document once, without retrying (a question that only matters now).
    ///
    /// # Errors
    /// The provider's error, a network failure, or a body that is not JSON.
    pub(super) async fn get_json_once(&self, url: &str) -> Result<Value, ProviderError> {
        let response = self
            .http
            .get(url)
            .headers(self.headers.clone())
            .send()
            .await
            .map_err(|e| ProviderError::from_request(&e))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| ProviderError::from_request(&e))?;
        if !status.is_success() {
            return Err(ProviderError::from_status(status.as_u16(), &text, None));
        }
        serde_json::from_str(&text).map_err(|e| ProviderError::BadResponse(e.to_string()))
    }

    /// The same endpoint with a read timeout of `read_timeout` (a download whose server may be
    /// silent for minutes while it checks what it fetched).
    ///
    /// # Errors
    /// No HTTP client.
    pub(super) fn with_read_timeout(&self, read_timeout: Duration) -> Result<Self, ProviderError> {
        let options = HttpOptions {
            read_timeout,
            ..self.options
        };
        Ok(Self {
            http: options.client()?,
            headers: self.headers.clone(),
            options,
        })
    }

    async fn json_from(&self, url: &str, body: Option<&Value>) -> Result<Value, ProviderError> {
        let once = || async {
            let request = match body {
                Some(body) => self.http.post(url).json(body),
                None => self.http.get(url),
            };
            let response = request
                .headers(self.headers.clone())
                .send()
                .await
                .map_err(|e| ProviderError::from_request(&e))?;
            let status = response.status();
            let retry_after = super::retry_after(response.headers());
            let text = response
                .text()
                .await
                .map_err(|e| ProviderError::from_request(&e))?;
            if !status.is_success() {
                return Err(ProviderError::from_status(
                    status.as_u16(),
                    &text,
                    retry_after,
                ));
            }
            serde_json::from_str(&text).map_err(|e| ProviderError::BadResponse(e.to_string()))
        };
        once.retry(self.backoff())
            .when(ProviderError::is_retryable)
            .await
    }

    /// DELETEs with a JSON body (Ollama's `/api/delete`); the answer's body is not read.
    ///
    /// # Errors
    /// The provider's error, or a network failure.
    pub(super) async fn delete_json(&self, url: &str, body: &Value) -> Result<(), ProviderError> {
        let response = self
            .http
            .delete(url)
            .headers(self.headers.clone())
            .json(body)
            .send()
            .await
            .map_err(|e| ProviderError::from_request(&e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let retry_after = super::retry_after(response.headers());
        let text = response.text().await.unwrap_or_default();
        Err(ProviderError::from_status(
            status.as_u16(),
            &text,
            retry_after,
        ))
    }

    /// POSTs `body` and yields the answer's lines of JSON as they come (Ollama's `/api/pull`),
    /// until the body ends or `cancel` is cancelled ([`ProviderError::Cancelled`]).
    pub(super) fn json_lines(
        self: Arc<Self>,
        url: String,
        body: Value,
        cancel: CancellationToken,
    ) -> std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Value, ProviderError>> + Send>>
    {
        let (tx, mut rx) = mpsc::channel(16);
        tokio::spawn(async move {
            let sent = async {
                let response = tokio::select! {
                    () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                    r = self.connect(&url, &body) => r?,
                };
                let mut lines = payloads(response, Framing::NdJson);
                loop {
                    let next = tokio::select! {
                        () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                        next = lines.next() => next,
                    };
                    let line = match next {
                        None => return Ok(()),
                        Some(Err(detail)) => return Err(ProviderError::Network(detail)),
                        Some(Ok(line)) if line.trim().is_empty() => continue,
                        Some(Ok(line)) => line,
                    };
                    let value = serde_json::from_str(&line)
                        .map_err(|e| ProviderError::BadResponse(e.to_string()))?;
                    if tx.send(Ok(value)).await.is_err() {
                        return Ok(()); // nobody is listening any more
                    }
                }
            };
            if let Err(e) = sent.await {
                let _ = tx.send(Err(e)).await;
            }
        });
        Box::pin(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }

    fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::default()
            .with_min_delay(self.options.retry_base_delay)
            .with_max_delay(Duration::from_secs(30))
            .with_max_times(self.options.max_retries)
            .with_jitter()
    }

    async fn send_once(&self, url: &str, body: &Value) -> Result<reqwest::Response, ProviderError> {
        let response = self
            .http
            .post(url)
            .headers(self.headers.clone())
            .header("accept", "text/event-stream")
            .json(body)
            .send()
            .await
            .map_err(|e| ProviderError::from_request(&e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = super::retry_after(response.headers());
        let text = response.text().await.unwrap_or_default();
        Err(ProviderError::from_status(
            status.as_u16(),
            &text,
            retry_after,
        ))
    }

    async fn connect(&self, url: &str, body: &Value) -> Result<reqwest::Response, ProviderError> {
        (|| self.send_once(url, body))
            .retry(self.backoff())
            .when(ProviderError::is_retryable)
            // The server's own Retry-After beats our guess, but only while retries are left:
            // `planned` is `None` once they are used up, and answering `Some` then would
            // retry a provider that keeps saying 429 for ever.
            .adjust(|e, planned| match e {
                ProviderError::RateLimited {
                    retry_after: Some(after),
                    ..
                } => planned.map(|_| *after),
                _ => planned,
            })
            .notify(|e, after| tracing::info!(error = %e, ?after, "retrying the provider"))
            .await
    }
}

/// Starts one streamed answer on its own task; the returned stream yields its events.
pub(super) fn stream<D: StreamDecode>(
    endpoint: Arc<Endpoint>,
    url: String,
    framing: Framing,
    body: Value,
    decoder: D,
    cancel: CancellationToken,
) -> EventStream {
    let (tx, mut rx) = mpsc::channel(64);
    tokio::spawn(async move {
        if let Err(e) = run(&endpoint, &url, framing, &body, decoder, &tx, &cancel).await {
            let _ = tx.send(Err(e)).await;
        }
    });
    Box::pin(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}

async fn run<D: StreamDecode>(
    endpoint: &Endpoint,
    url: &str,
    framing: Framing,
    body: &Value,
    mut decoder: D,
    tx: &mpsc::Sender<Result<ProviderEvent, ProviderError>>,
    cancel: &CancellationToken,
) -> Result<(), ProviderError> {
    let response = tokio::select! {
        () = cancel.cancelled() => return Err(ProviderError::Cancelled),
        r = endpoint.connect(url, body) => r?,
    };
    let mut events = payloads(response, framing);
    let mut partial = String::new();
    let mut any_payload = false;
    loop {
        let next = tokio::select! {
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            next = events.next() => next,
        };
        let (decoded, done) = match next {
            // A 200 whose body holds no event at all (a JSON document or an HTML page where a
            // stream was expected) is not an empty answer.
            None if !any_payload => {
                return Err(ProviderError::BadResponse(
                    "the provider answered, but sent no stream events at all".to_owned(),
                ))
            }
            None => (decoder.end(), true),
            Some(Ok(payload)) => {
                any_payload = true;
                match decoder.data(&payload) {
                    Ok(decoded) => (decoded, decoder.is_last(&payload)),
                    Err(FormatError::Api { message }) => {
                        return Err(ProviderError::StreamInterrupted {
                            partial_text: partial,
                            detail: message,
                        })
                    }
                    Err(e) => return Err(ProviderError::BadResponse(e.to_string())),
                }
            }
            Some(Err(detail)) => {
                return Err(ProviderError::StreamInterrupted {
                    partial_text: partial,
                    detail,
                })
            }
        };
        for event in decoded {
            if let ProviderEvent::TextDelta(text) = &event {
                partial.push_str(text);
            }
            if tx.send(Ok(event)).await.is_err() {
                return Ok(()); // nobody is listening any more
            }
        }
        if done {
            return Ok(());
        }
    }
}
