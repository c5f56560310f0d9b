//! The streaming client for Anthropic Messages (`x-api-key`, `anthropic-version`).
//! The exchange is [`super::http`]'s; the body and event decoding [`formats::anthropic`]'s.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use tokio_util::sync::CancellationToken;

use super::formats::anthropic::{request_body, StreamDecoder, API_VERSION};
use super::http::{self, Endpoint, Framing};
use super::tool_names::Api;
use super::{ChatRequest, EventStream, HttpOptions, Provider, ProviderError};

pub struct Anthropic {
    endpoint: Arc<Endpoint>,
    url: String,
    base_url: String,
}

impl Anthropic {
    /// `base_url` is the host (`https://api.anthropic.com`), without `/v1`.
    ///
    /// # Errors
    /// A header that cannot be sent, or no HTTP client.
    pub fn new(
        base_url: &str,
        api_key: SecretString,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        let url = format!("{}/v1/messages", base_url.trim_end_matches('/'));
        let endpoint = Endpoint::new(
            vec![("x-api-key", api_key.expose_secret().to_owned())],
            vec![("anthropic-version".to_owned(), API_VERSION.to_owned())],
            options,
        )?;
        Ok(Self {
            endpoint: Arc::new(endpoint),
            url,
            base_url: base_url.trim_end_matches('/').to_owned(),
        })
    }
}

impl Provider for Anthropic {
    fn list_models(&self) -> super::ModelsFuture<'_> {
        Box::pin(async move {
            let url = format!("{}/v1/models?limit=1000", self.base_url);
            let doc = self.endpoint.get_json(&url).await?;
            super::models_from(&doc, "data", "id", Some("display_name"))
        })
    }

    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        super::with_checked_tools(Api::Anthropic, request, |request| {
            self.start(request, cancel)
        })
    }
}

impl Anthropic {
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
