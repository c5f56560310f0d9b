//! The streaming client for OpenAI Chat Completions and every OpenAI-compatible host.
//!
//! Owns the HTTP exchange only: retries before the first token (exponential backoff honouring
//! `Retry-After`, at most [`HttpOptions::max_retries`] times), SSE decoding, the stall timeout
//! and cancellation. The body and the chunk decoding are [`formats::openai`]'s. The key is put
//! in the `Authorization` header at request time and never logged.

use std::sync::Arc;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::formats::openai::{request_body, FormatError, StreamDecoder};
use super::{ChatRequest, EventStream, HttpOptions, Provider, ProviderError, ProviderEvent};

pub struct OpenAiCompatible {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    /// Up to `/v1` (or the host's equivalent), without a trailing slash.
    base_url: String,
    api_key: Option<SecretString>,
    extra_headers: Vec<(String, String)>,
    options: HttpOptions,
}

impl OpenAiCompatible {
    /// # Errors
    /// The HTTP client cannot be built (no TLS roots, bad header).
    pub fn new(
        base_url: &str,
        api_key: Option<SecretString>,
        extra_headers: Vec<(String, String)>,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        let http = options.client()?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                base_url: base_url.trim_end_matches('/').to_owned(),
                api_key,
                extra_headers,
                options,
            }),
        })
    }
}

impl Provider for OpenAiCompatible {
    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        let (tx, rx) = mpsc::channel(64);
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move {
            let body = request_body(&request, true);
            if let Err(e) = inner.run(&body, &tx, &cancel).await {
                let _ = tx.send(Err(e)).await;
            }
        });
        super::receiver_stream(rx)
    }
}

impl Inner {
    async fn send_once(
        &self,
        body: &serde_json::Value,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut request = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .header("Accept", "text/event-stream")
            .json(body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key.expose_secret());
        }
        for (name, value) in &self.extra_headers {
            request = request.header(name, value);
        }
        let response = request.send().await.map_err(network_error)?;
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

    /// Connects (retrying what is worth retrying), then forwards decoded events until the
    /// stream ends. Errors after the first event carry the text that had arrived.
    async fn run(
        &self,
        body: &serde_json::Value,
        tx: &mpsc::Sender<Result<ProviderEvent, ProviderError>>,
        cancel: &CancellationToken,
    ) -> Result<(), ProviderError> {
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.options.retry_base_delay)
            .with_max_delay(Duration::from_secs(30))
            .with_max_times(self.options.max_retries)
            .with_jitter();
        let connect = (|| self.send_once(body))
            .retry(backoff)
            .when(ProviderError::is_retryable)
            // The server's own Retry-After beats our guess.
            .adjust(|e, planned| match e {
                ProviderError::RateLimited {
                    retry_after: Some(after),
                    ..
                } => Some(*after),
                _ => planned,
            })
            .notify(|e, after| tracing::info!(error = %e, ?after, "retrying the provider"));
        let response = tokio::select! {
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            r = connect => r?,
        };

        let mut events = response.bytes_stream().eventsource();
        let mut decoder = StreamDecoder::new();
        let mut partial = String::new();
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                next = events.next() => next,
            };
            let (decoded, done) = match next {
                None => (decoder.end(), true),
                Some(Ok(event)) => {
                    // After `[DONE]` nothing more comes, even if the host keeps the connection.
                    let done = event.data.trim() == "[DONE]";
                    match decoder.data(&event.data) {
                        Ok(decoded) => (decoded, done),
                        Err(FormatError::Api { message }) => {
                            return Err(ProviderError::StreamInterrupted {
                                partial_text: partial,
                                detail: message,
                            })
                        }
                        Err(e) => return Err(ProviderError::BadResponse(e.to_string())),
                    }
                }
                Some(Err(e)) => {
                    return Err(ProviderError::StreamInterrupted {
                        partial_text: partial,
                        detail: describe_stream_error(&e),
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
}

fn network_error(e: reqwest::Error) -> ProviderError {
    ProviderError::Network(without_url(&e))
}

fn describe_stream_error(e: &eventsource_stream::EventStreamError<reqwest::Error>) -> String {
    match e {
        eventsource_stream::EventStreamError::Transport(e) if e.is_timeout() => {
            "no data arrived before the read timeout".to_owned()
        }
        eventsource_stream::EventStreamError::Transport(e) => without_url(e),
        other => other.to_string(),
    }
}

/// reqwest's message without the URL (which may carry a key in its query for some hosts).
fn without_url(e: &reqwest::Error) -> String {
    let mut msg = e.to_string();
    if let Some(url) = e.url() {
        msg = msg.replace(url.as_str(), "the provider");
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}
