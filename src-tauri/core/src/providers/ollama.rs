//! The streaming client for Ollama's native `/api/chat` (NDJSON; no key by default, one can be
//! set for a proxy in front). The exchange is [`super::http`]'s; the body and line decoding
//! [`formats::ollama`]'s. Its model list is `/api/tags`, each model's window read from
//! `/api/show` ([`shown_window`]).

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
            use futures_util::StreamExt;
            let doc = self
                .endpoint
                .get_json(&format!("{}/api/tags", self.base_url))
                .await?;
            let mut models = super::models_from(&doc, "models", "name", None)?;
            // Each model's window, a few at a time; a model that cannot be shown keeps none.
            let url = format!("{}/api/show", self.base_url);
            let ids: Vec<String> = models
                .iter()
                .take(SHOWN_MODELS)
                .map(|m| m.id.clone())
                .collect();
            let shown: Vec<Option<u64>> = futures_util::stream::iter(ids.into_iter().map(|id| {
                let endpoint = Arc::clone(&self.endpoint);
                let url = url.clone();
                async move {
                    let body = serde_json::json!({ "model": id });
                    match endpoint.post_json(&url, &body).await {
                        Ok(show) => shown_window(&show),
                        Err(e) => {
                            tracing::debug!(error = %e, "a model's window could not be read");
                            None
                        }
                    }
                }
            }))
            .buffered(4)
            .collect()
            .await;
            for (model, window) in models.iter_mut().zip(shown) {
                model.window = model.window.or(window);
            }
            Ok(models)
        })
    }

    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        super::with_checked_tools(Api::Ollama, request, |request| self.start(request, cancel))
    }
}

/// The most models whose windows one listing reads.
const SHOWN_MODELS: usize = 64;

/// The window planned for a model whose Modelfile sets no `num_ctx`: Ollama would load it with
/// its own small default and cut every longer request from the start, silently; Switchboard
/// sends `num_ctx` for this instead (or for the model's own context length when that is less).
/// A longer one costs memory the machine may not have; the person can set more
/// (`switchboard provider window`).
pub const PLANNED_WINDOW: u64 = 16_384;

/// A model's window from its `/api/show`: the `num_ctx` its Modelfile sets (what Ollama loads it
/// with), else its trained context length (`model_info`'s `<architecture>.context_length`) up
/// to [`PLANNED_WINDOW`].
pub fn shown_window(show: &serde_json::Value) -> Option<u64> {
    let set = show["parameters"].as_str().and_then(|parameters| {
        parameters.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    let trained = show["model_info"].as_object().and_then(|info| {
        // Its architecture's own key first (`llama.context_length`), else any that says one.
        let own = info
            .get("general.architecture")
            .and_then(|a| a.as_str())
            .and_then(|a| info.get(&format!("{a}.context_length")))
            .and_then(serde_json::Value::as_u64);
        own.or_else(|| {
            info.iter()
                .find(|(key, _)| key.ends_with(".context_length"))
                .and_then(|(_, value)| value.as_u64())
        })
    });
    set.or(trained.map(|t| t.min(PLANNED_WINDOW)))
        .filter(|w| *w > 0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_models_window_is_the_num_ctx_it_sets_else_its_context_length_up_to_the_planned_one() {
        // Ollama's own words (`ollama show --verbose` as JSON), trimmed.
        let llama = json!({
            "parameters": "stop                           \"<|eot_id|>\"",
            "model_info": {"general.architecture": "llama", "llama.context_length": 131072, "llama.embedding_length": 3072}
        });
        assert_eq!(shown_window(&llama), Some(PLANNED_WINDOW));
        let small = json!({"model_info": {"gemma3.context_length": 8192}});
        assert_eq!(shown_window(&small), Some(8192));
        let set = json!({
            "parameters": "num_ctx                        40960\nstop                           \"<|im_end|>\"",
            "model_info": {"qwen3.context_length": 40960}
        });
        assert_eq!(shown_window(&set), Some(40960));
        assert_eq!(shown_window(&json!({})), None);
    }
}
