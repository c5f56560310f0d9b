//! The streaming client for Google Gemini (`streamGenerateContent?alt=sse`, key in the
//! `x-goog-api-key` header, never in the URL). The exchange is [`super::http`]'s; the body,
//! schema rewriting and chunk decoding [`formats::gemini`]'s.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use tokio_util::sync::CancellationToken;

use super::formats::gemini::{request_body, StreamDecoder};
use super::http::{self, Endpoint, Framing};
use super::tool_names::Api;
use super::{ChatRequest, EventStream, HttpOptions, Provider, ProviderError};

pub struct Gemini {
    endpoint: Arc<Endpoint>,
    base_url: String,
}

impl Gemini {
    /// `base_url` is up to the API version (`…/v1beta`).
    ///
    /// # Errors
    /// A header that cannot be sent, or no HTTP client.
    pub fn new(
        base_url: &str,
        api_key: SecretString,
        options: HttpOptions,
    ) -> Result<Self, ProviderError> {
        let endpoint = Endpoint::new(
            vec![("x-goog-api-key", api_key.expose_secret().to_owned())],
            Vec::new(),
            options,
        )?;
        Ok(Self {
            endpoint: Arc::new(endpoint),
            base_url: base_url.trim_end_matches('/').to_owned(),
        })
    }
}

impl Provider for Gemini {
    fn list_models(&self) -> super::ModelsFuture<'_> {
        Box::pin(async move {
            let url = format!("{}/models?pageSize=1000", self.base_url);
            let mut doc = self.endpoint.get_json(&url).await?;
            // Only models that can chat, named without the `models/` prefix.
            if let Some(list) = doc
                .get_mut("models")
                .and_then(serde_json::Value::as_array_mut)
            {
                list.retain(|m| {
                    m.get("supportedGenerationMethods")
                        .and_then(serde_json::Value::as_array)
                        .is_none_or(|methods| methods.iter().any(|x| x == "generateContent"))
                });
                for m in list.iter_mut() {
                    if let Some(name) = m.get("name").and_then(serde_json::Value::as_str) {
                        let id = name.trim_start_matches("models/").to_owned();
                        m["name"] = serde_json::Value::String(id);
                    }
                }
            }
            super::models_from(&doc, "models", "name", Some("displayName"))
        })
    }

    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        super::with_checked_tools(Api::Gemini, request, |request| self.start(request, cancel))
    }
}

impl Gemini {
    /// Sends `request` as it is (its tools already checked).
    fn start(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        let model = request.model.trim_start_matches("models/");
        let url = format!(
            "{}/models/{}:streamGenerateContent?alt=sse",
            self.base_url,
            url::form_urlencoded::byte_serialize(model.as_bytes()).collect::<String>()
        );
        let body = request_body(&request);
        http::stream(
            Arc::clone(&self.endpoint),
            url,
            Framing::Sse,
            body,
            StreamDecoder::new(),
            cancel,
        )
    }
}
