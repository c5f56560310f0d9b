//! The streaming client for Ollama's native `/api/chat` (NDJSON; no key by default, one can be
//! set for a proxy in front). The exchange is [`super::http`]'s; the body and line decoding
//! [`formats::ollama`]'s. Its model list is `/api/tags` (size and details), each model's
//! window and capabilities read from `/api/show` ([`shown_window`], [`capabilities`]); a model
//! is fetched with `/api/pull`, deleted with `/api/delete`, and `/api/ps` says whether the
//! model must be loaded first.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};
use tokio_util::sync::CancellationToken;

use super::formats::ollama::{request_body, StreamDecoder};
use super::http::{self, Endpoint, Framing};
use super::tool_names::Api;
use super::{ChatRequest, EventStream, HttpOptions, Provider, ProviderError, ProviderEvent};

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
            for model in &mut models {
                model.local = installed(&doc, &model.id);
            }
            // Each model's window and what it can do, a few at a time; a model that cannot be
            // shown keeps none.
            let url = format!("{}/api/show", self.base_url);
            let ids: Vec<String> = models
                .iter()
                .take(SHOWN_MODELS)
                .map(|m| m.id.clone())
                .collect();
            let shown: Vec<Option<serde_json::Value>> =
                futures_util::stream::iter(ids.into_iter().map(|id| {
                    let endpoint = Arc::clone(&self.endpoint);
                    let url = url.clone();
                    async move {
                        let body = serde_json::json!({ "model": id });
                        match endpoint.post_json(&url, &body).await {
                            Ok(show) => Some(show),
                            Err(e) => {
                                tracing::debug!(error = %e, "a model could not be shown");
                                None
                            }
                        }
                    }
                }))
                .buffered(4)
                .collect()
                .await;
            for (model, show) in models.iter_mut().zip(shown) {
                let Some(show) = show else { continue };
                model.window = model.window.or(shown_window(&show));
                if let Some(can) = capabilities(&show) {
                    model.takes_tools = Some(can.iter().any(|c| c == "tools"));
                    model.takes_images = Some(can.iter().any(|c| c == "vision"));
                }
            }
            Ok(models)
        })
    }

    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        super::with_checked_tools(Api::Ollama, request, |request| self.start(request, cancel))
    }

    fn pull_model(&self, model: &str, cancel: CancellationToken) -> super::PullStream {
        use futures_util::StreamExt;
        // Ollama says nothing while it checks a large download's digest: minutes on a slow
        // disk. Cancel stops a pull; silence does not.
        let endpoint = match self.endpoint.with_read_timeout(PULL_SILENCE) {
            Ok(endpoint) => Arc::new(endpoint),
            Err(e) => return Box::pin(futures_util::stream::once(async { Err(e) })),
        };
        let lines = endpoint.json_lines(
            format!("{}/api/pull", self.base_url),
            serde_json::json!({ "model": model, "stream": true }),
            cancel,
        );
        Box::pin(lines.map(|line| pull_step(&line?)))
    }

    fn remove_model(
        &self,
        model: &str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), ProviderError>> + Send + '_>>
    {
        let body = serde_json::json!({ "model": model });
        Box::pin(async move {
            self.endpoint
                .delete_json(&format!("{}/api/delete", self.base_url), &body)
                .await
        })
    }
}

/// What `/api/tags` says of the installed model `id`: size on disk, family, parameters and
/// quantisation.
fn installed(tags: &serde_json::Value, id: &str) -> Option<super::LocalModel> {
    let entry = tags["models"]
        .as_array()?
        .iter()
        .find(|m| m["name"].as_str() == Some(id))?;
    let text = |at: &str| {
        entry
            .pointer(at)
            .and_then(serde_json::Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    Some(super::LocalModel {
        size_bytes: entry["size"].as_u64(),
        family: text("/details/family"),
        parameters: text("/details/parameter_size"),
        quantisation: text("/details/quantization_level"),
    })
}

/// What `/api/show` says the model can do (`completion`, `tools`, `vision`, `thinking`), when
/// the server is new enough to say.
pub fn capabilities(show: &serde_json::Value) -> Option<Vec<String>> {
    show["capabilities"].as_array().map(|can| {
        can.iter()
            .filter_map(|c| c.as_str().map(str::to_owned))
            .collect()
    })
}

/// One line of `/api/pull`: a step, or the error the server put in the line.
fn pull_step(line: &serde_json::Value) -> Result<super::PullStep, ProviderError> {
    if let Some(error) = line["error"].as_str() {
        return Err(ProviderError::PullFailed(error.to_owned()));
    }
    let status = line["status"].as_str().ok_or_else(|| {
        ProviderError::BadResponse(format!("a pull step without a status: {line}"))
    })?;
    Ok(super::PullStep {
        status: status.to_owned(),
        completed: line["completed"].as_u64(),
        total: line["total"].as_u64(),
        file: line["digest"].as_str().map(str::to_owned),
    })
}

/// Whether `/api/ps` lists `model` as loaded (`llama3.2` is `llama3.2:latest` there).
fn is_loaded(ps: &serde_json::Value, model: &str) -> bool {
    let tagged = |name: &str| {
        if name.contains(':') {
            name.to_owned()
        } else {
            format!("{name}:latest")
        }
    };
    let wanted = tagged(model);
    ps["models"].as_array().is_some_and(|loaded| {
        loaded.iter().any(|m| {
            ["name", "model"]
                .iter()
                .filter_map(|k| m[*k].as_str())
                .any(|name| tagged(name) == wanted)
        })
    })
}

/// The longest a download may go without a line from the server.
const PULL_SILENCE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

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
    /// When no word of the answer came within [`LOADING_AFTER`], `/api/ps` is asked whether
    /// the model is loaded; when it is not, [`ProviderEvent::Loading`] comes first (a server
    /// that cannot say says nothing, and a quick answer costs no extra request).
    fn start(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream {
        use futures_util::StreamExt;
        let endpoint = Arc::clone(&self.endpoint);
        let ps = format!("{}/api/ps", self.base_url);
        let model = request.model.clone();
        let mut answer = http::stream(
            Arc::clone(&self.endpoint),
            self.url.clone(),
            Framing::NdJson,
            request_body(&request),
            StreamDecoder::new(),
            cancel,
        );
        let first = async move {
            tokio::select! {
                first = answer.next() => {
                    return Box::pin(futures_util::stream::iter(first).chain(answer)) as EventStream;
                }
                () = tokio::time::sleep(LOADING_AFTER) => {}
            }
            // One quick question, never waited on past the answer's first word (or Stop, which
            // ends the answer).
            let asked = tokio::time::timeout(PROBE_WITHIN, endpoint.get_json_once(&ps));
            let loading = tokio::select! {
                first = answer.next() => {
                    return Box::pin(futures_util::stream::iter(first).chain(answer)) as EventStream;
                }
                said = asked => match said {
                    Ok(Ok(ps)) if !is_loaded(&ps, &model) => Some(Ok(ProviderEvent::Loading)),
                    _ => None,
                },
            };
            Box::pin(futures_util::stream::iter(loading).chain(answer))
        };
        Box::pin(futures_util::stream::once(first).flatten())
    }
}

/// How long an answer may take to begin before the server is asked whether it is loading the
/// model.
pub const LOADING_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the question whether the model is loading may take.
const PROBE_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

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

    #[test]
    fn what_a_model_can_do_and_whether_it_is_loaded_are_read_from_ollamas_words() {
        let show = json!({"capabilities": ["completion", "tools", "vision"]});
        assert_eq!(
            capabilities(&show),
            Some(vec!["completion".into(), "tools".into(), "vision".into()])
        );
        assert_eq!(capabilities(&json!({"details": {}})), None);
        let ps = json!({"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest"}]});
        assert!(is_loaded(&ps, "llama3.2"));
        assert!(is_loaded(&ps, "llama3.2:latest"));
        assert!(!is_loaded(&ps, "llama3.2:1b"));
        assert!(!is_loaded(&json!({"models": []}), "qwen3"));
    }

    #[test]
    fn a_pull_line_is_a_step_or_the_error_it_carries() {
        let step = pull_step(&json!({"status": "pulling 6a0746a1ec1a", "digest": "sha256:6a07", "total": 100, "completed": 40})).unwrap();
        assert_eq!(step.status, "pulling 6a0746a1ec1a");
        assert_eq!((step.completed, step.total), (Some(40), Some(100)));
        let error =
            pull_step(&json!({"error": "pull model manifest: file does not exist"})).unwrap_err();
        assert!(error.to_string().contains("file does not exist"), "{error}");
    }
}
