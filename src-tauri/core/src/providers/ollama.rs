//! The streaming client for Ollama's native `/api/chat` (NDJSON; no key by default, one can be
//! set for a proxy in front). The exchange is [`super::http`]'s; the body and line decoding
//! [`formats::ollama`]'s.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use tokio_util::sync::CancellationToken;

use super::formats::ollama::{request_body, StreamDecoder};
use super::http::{self, Endpoint, Framing};
use super::tool_names::Api;
use super::{ChatRequest, EventStream, HttpOptions, Provider, ProviderError};

pub struct Ollama {
    endpoint: Arc<Endpoint>,
    url: String,
    base_url: String,
}

impl Ollama {
    /// `base_url` is the server (`http://127.0.0.1:11434`), without `/api`.
    ///
    /// # Errors
    /// A header that cannot be sent, or no HTTP client.
    pub fn new(
        base_url: &str,
        api_key: Option<SecretString>,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        let secret = api_key
            .map(|k| vec![("authorization", format!("Bearer {}", k.expose_secret()))])
            .unwrap_or_default();
        Ok(Self {
            endpoint: Arc::new(Endpoint::new(secret, Vec::new(), options)?),
            url: format!("{}/api/chat", base_url.trim_end_matches('/')),
            base_url: base_url.trim_end_matches('/').to_owned(),
        })
    }
}

impl Provider for Ollama {
    fn list_models(&self) -> super::ModelsFuture<'_> {
        Box::pin(async move {
            let doc = self
                .endpoint
                .get_json(&format!("{}/api/tags", self.base_url))
                .await?;
            super::models_from(&doc, "models", "name", None)
        })
    }

    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        super::with_checked_tools(Api::Ollama, request, |request| self.start(request, cancel))
    }
}

impl Ollama {
    /// Sends `request` as it is (its tools already checked).
    fn start(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        http::stream(
            Arc::clone(&self.endpoint),
            self.url.clone(),
            Framing::NdJson,
            request_body(&request),
            StreamDecoder::new(),
            cancel,
        )
    }
}
