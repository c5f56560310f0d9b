//! The streaming client for OpenAI Chat Completions and every OpenAI-compatible host.
//! The exchange is [`super::http`]'s; the body and chunk decoding [`formats::openai`]'s.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use tokio_util::sync::CancellationToken;

use super::formats::openai::{request_body, StreamDecoder};
use super::http::{self, Endpoint, Framing};
use super::tool_names::Api;
use super::{ChatRequest, EventStream, HttpOptions, Provider, ProviderError};

pub struct OpenAiCompatible {
    endpoint: Arc<Endpoint>,
    url: String,
    base_url: String,
}

impl OpenAiCompatible {
    /// `base_url` is up to `/v1` (or the host's equivalent). `extra_headers` carry things like
    /// OpenRouter's attribution headers.
    ///
    /// # Errors
    /// A header that cannot be sent, or no HTTP client.
    pub fn new(
        base_url: &str,
        api_key: Option<SecretString>,
        extra_headers: Vec<(String, String)>,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        let secret = api_key
            .map(|k| vec![("authorization", format!("Bearer {}", k.expose_secret()))])
            .unwrap_or_default();
        let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
        Ok(Self {
            endpoint: Arc::new(Endpoint::new(secret, extra_headers, options)?),
            url,
            base_url: base_url.trim_end_matches('/').to_owned(),
        })
    }
}

impl Provider for OpenAiCompatible {
    fn list_models(&self) -> super::ModelsFuture<'_> {
        Box::pin(async move {
            let doc = self
                .endpoint
                .get_json(&format!("{}/models", self.base_url))
                .await?;
            super::models_from(&doc, "data", "id", None)
        })
    }

    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        super::with_checked_tools(Api::OpenAi, request, |request| self.start(request, cancel))
    }
}

impl OpenAiCompatible {
    /// Sends `request` as it is (its tools already checked).
    fn start(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        let body = request_body(&request, true);
        http::stream(
            Arc::clone(&self.endpoint),
            self.url.clone(),
            Framing::Sse,
            body,
            StreamDecoder::new(),
            cancel,
        )
    }
}
