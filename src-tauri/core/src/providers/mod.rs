//! Talking to model providers: the common request and event model every provider maps to and
//! from. The wire formats are pure functions in [`formats`], tested without a network; the
//! HTTP clients are one file per provider behind the [`Provider`] trait; [`connect`] picks one
//! for a configured provider.
//!
//! This module must not know about storage, the UI or MCP: the tool loop (`agent/`, issue 5)
//! turns stored messages and catalogue tools into a [`ChatRequest`] and consumes
//! [`ProviderEvent`]s.

pub mod anthropic;
pub mod connect;
mod error;
pub mod formats;
pub mod gemini;
mod http;
pub mod media;
pub mod ollama;
pub mod openai;
pub mod overflow;
pub mod prompted;
pub mod tool_names;
pub mod windows;

use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::price;

pub use error::{ProviderError, ProviderFailure};

/// The events of one answer, in order; it ends after `Finish` (and usage) or with an error.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<ProviderEvent, ProviderError>> + Send>>;

/// What [`Provider::list_models`] returns.
pub type ModelsFuture<'a> =
    Pin<Box<dyn std::future::Future<Output = Result<Vec<ModelInfo>, ProviderError>> + Send + 'a>>;

/// A model provider: `stream` and `list_models`; `complete` collects the stream.
pub trait Provider: Send + Sync {
    /// Starts one answer. Cancelling `cancel` ends the stream with [`ProviderError::Cancelled`].
    fn stream(&self, request: ChatRequest, cancel: CancellationToken) -> EventStream;

    /// The models this provider offers, for the picker and "Test connection".
    fn list_models(&self) -> ModelsFuture<'_>;

    /// Fetches `model` onto the provider's machine (Ollama's `/api/pull`); cancelling
    /// `cancel` ends it with [`ProviderError::Cancelled`] (the server keeps what it has, and
    /// goes on from there next time).
    fn pull_model(&self, model: &str, cancel: CancellationToken) -> PullStream {
        let _ = (model, cancel);
        Box::pin(futures_util::stream::once(async {
            Err(ProviderError::Unsupported(
                "This provider's server cannot fetch models: only Ollama's can.".into(),
            ))
        }))
    }

    /// Deletes an installed `model` from the provider's machine (Ollama's `/api/delete`).
    fn remove_model(
        &self,
        model: &str,
    ) -> Pin<Box<dyn std::future::Future<Output = Result<(), ProviderError>> + Send + '_>> {
        let _ = model;
        Box::pin(async {
            Err(ProviderError::Unsupported(
                "This provider's server cannot remove models: only Ollama's can.".into(),
            ))
        })
    }

    /// The whole answer at once.
    fn complete(
        &self,
        request: ChatRequest,
        cancel: CancellationToken,
    ) -> Pin<Box<dyn std::future::Future<Output = Result<Completion, ProviderError>> + Send + '_>>
    {
        let mut stream = self.stream(request, cancel);
        Box::pin(async move {
            let mut done = Completion::default();
            while let Some(event) = stream.next().await {
                match event? {
                    ProviderEvent::TextDelta(t) => done.text.push_str(&t),
                    ProviderEvent::ReasoningDelta(r) => done.reasoning.push_str(&r),
                    ProviderEvent::ToolCall(c) => done.tool_calls.push(c),
                    ProviderEvent::Usage {
                        input_tokens,
                        output_tokens,
                        cached_input_tokens,
                    } => {
                        done.input_tokens = input_tokens.or(done.input_tokens);
                        done.output_tokens = output_tokens.or(done.output_tokens);
                        done.cached_input_tokens = cached_input_tokens.or(done.cached_input_tokens);
                    }
                    ProviderEvent::Finish(reason) => done.finish = Some(reason),
                    ProviderEvent::ToolWarning(w) => done.warnings.push(w),
                    ProviderEvent::ServerBlock(_) | ProviderEvent::Loading => {}
                }
            }
            Ok(done)
        })
    }
}

/// Takes out of `request` the tools `api` would refuse, and streams one
/// [`ProviderEvent::ToolWarning`] per problem ahead of the answer that `start` begins.
fn with_checked_tools(
    api: tool_names::Api,
    mut request: ChatRequest,
    start: impl FnOnce(ChatRequest) -> EventStream,
) -> EventStream {
    let (kept, mut warnings) = tool_names::without_refused(api, std::mem::take(&mut request.tools));
    request.tools = kept;
    let (deferred, more) =
        tool_names::without_refused(api, std::mem::take(&mut request.deferred_tools));
    request.deferred_tools = deferred;
    warnings.extend(more);
    for w in &warnings {
        tracing::warn!(tool = %w.tool, problem = %w.message, "tool left out of the request");
    }
    let warnings = futures_util::stream::iter(
        warnings
            .into_iter()
            .map(|w| Ok(ProviderEvent::ToolWarning(w))),
    );
    Box::pin(warnings.chain(start(request)))
}

/// One model a provider offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ModelInfo {
    /// What goes in a request's `model`.
    pub id: String,
    /// A human name, where the provider gives one.
    pub name: Option<String>,
    /// Whether it takes images, where the list says (OpenRouter's
    /// `architecture.input_modalities`); absent when it does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub takes_images: Option<bool>,
    /// What it costs, where the list says (OpenRouter's `pricing`, dollars per token).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub price: Option<price::Price>,
    /// Its window in tokens, where the list says (OpenRouter's `context_length`, LM Studio's
    /// `max_context_length`, Groq's `context_window`, Gemini's `inputTokenLimit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub window: Option<u64>,
    /// Whether it calls tools through its API, where the server says (Ollama's `/api/show`
    /// `capabilities`); absent when it does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub takes_tools: Option<bool>,
    /// What a local server says of the model's file: its size on disk, family, parameter count
    /// and quantisation (Ollama's `/api/tags` `size` and `details`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub local: Option<LocalModel>,
}

/// What a local server says of an installed model.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, ts_rs::TS)]
pub struct LocalModel {
    /// Bytes on disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub size_bytes: Option<u64>,
    /// Its family (`llama`, `qwen3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub family: Option<String>,
    /// Its parameter count as the server writes it (`8.0B`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parameters: Option<String>,
    /// Its quantisation (`Q4_K_M`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub quantisation: Option<String>,
}

/// How far a model's download has come, as the server says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct PullStep {
    /// The server's words for the step (`pulling manifest`, `verifying sha256 digest`).
    pub status: String,
    /// Bytes of the current file so far and in all, while a file downloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub completed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub total: Option<u64>,
    /// The file downloading (a layer's digest).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub file: Option<String>,
}

/// A model's download, step by step; it ends after the server says it succeeded, or with an
/// error.
pub type PullStream = Pin<Box<dyn Stream<Item = Result<PullStep, ProviderError>> + Send>>;

/// Reads `items[*][id_key]` (and an optional display name) into a sorted model list.
fn models_from(
    doc: &Value,
    items: &str,
    id_key: &str,
    name_key: Option<&str>,
) -> Result<Vec<ModelInfo>, ProviderError> {
    let list = doc.get(items).and_then(Value::as_array).ok_or_else(|| {
        ProviderError::BadResponse(format!("no `{items}` list in the model list"))
    })?;
    let mut models: Vec<ModelInfo> = list
        .iter()
        .filter_map(|m| {
            Some(ModelInfo {
                id: m.get(id_key)?.as_str()?.to_owned(),
                name: name_key
                    .and_then(|k| m.get(k))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                takes_images: m
                    .pointer("/architecture/input_modalities")
                    .and_then(Value::as_array)
                    .map(|kinds| kinds.iter().any(|k| k == "image")),
                price: listed_price(m),
                window: listed_window(m),
                takes_tools: None,
                local: None,
            })
        })
        .collect();
    models.sort_by(|a, b| a.id.cmp(&b.id));
    models.dedup_by(|a, b| a.id == b.id);
    Ok(models)
}

/// A model's window as its provider's list gives it, under the name that provider uses.
fn listed_window(model: &Value) -> Option<u64> {
    [
        "/context_length",
        "/max_context_length",
        "/context_window",
        "/inputTokenLimit",
        "/max_input_tokens",
        "/top_provider/context_length",
    ]
    .iter()
    .find_map(|at| model.pointer(at).and_then(Value::as_u64))
    .filter(|tokens| *tokens > 0)
}

/// A model's price as OpenRouter's list gives it (`pricing.prompt`, `completion` and
/// `input_cache_read`, dollars per token as text); none unless both main prices are there.
fn listed_price(model: &Value) -> Option<price::Price> {
    let per_token = |key: &str| {
        model
            .pointer(&format!("/pricing/{key}"))
            .and_then(Value::as_str)
            .and_then(price::from_usd_per_token)
    };
    Some(price::Price {
        input: per_token("prompt")?,
        output: per_token("completion")?,
        cached_input: per_token("input_cache_read"),
    })
}

/// A whole answer, as [`Provider::complete`] collects it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Completion {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Of the input tokens, those read from the provider's prompt cache.
    pub cached_input_tokens: Option<u64>,
    pub finish: Option<FinishReason>,
    pub warnings: Vec<tool_names::ToolWarning>,
}

/// Time limits and retries of the HTTP clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpOptions {
    pub connect_timeout: Duration,
    /// A stream with no byte for this long is cut off as stalled.
    pub read_timeout: Duration,
    /// Retries before the first token; never after.
    pub max_retries: usize,
    pub retry_base_delay: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(15),
            read_timeout: Duration::from_secs(120),
            max_retries: 2,
            retry_base_delay: Duration::from_millis(500),
        }
    }
}

impl HttpOptions {
    fn client(&self) -> Result<reqwest::Client, ProviderError> {
        crate::net::client_builder()
            .connect_timeout(self.connect_timeout)
            .read_timeout(self.read_timeout)
            .redirect(crate::net::same_origin_redirects())
            .build()
            .map_err(|e| ProviderError::Network(e.to_string()))
    }
}

/// `Retry-After` in seconds, or OpenAI's `retry-after-ms`.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let read = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    read("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1000.0))
        .or_else(|| read("retry-after").map(|s| Duration::from_secs_f64(s.max(0.0))))
}

/// One request to a chat model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    pub tool_choice: ToolChoice,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// The window, in tokens, to load the model with where a request may say (Ollama's
    /// `num_ctx`, whose default is far below most models' and which cuts a longer request
    /// from its start without a word): only a window the person or a provider said, never the
    /// table's guess (a model loaded with a window it cannot hold in memory fails).
    pub load_window: Option<u64>,
    /// Tools the provider finds itself when the model searches for them (Anthropic's tool
    /// search: sent with `defer_loading`, beside its search tool), offered only to a provider
    /// and model that do; empty otherwise. Not counted in the window: only what a search
    /// finds is loaded.
    pub deferred_tools: Vec<ToolSpec>,
    /// How long a local server keeps the model loaded after the answer (Ollama's
    /// `keep_alive`: `5m`, `1h`, `0`, `-1` for ever); the server's own default when `None`.
    pub keep_alive: Option<String>,
    /// A grammar (llama.cpp's GBNF) the answer must follow, for a server that takes one
    /// ([`prompted`] constrains a prompted model's calls so); sent only when set.
    pub grammar: Option<String>,
    /// A JSON schema the whole answer must follow, for a server that takes one (Ollama's
    /// `format`: [`prompted`] holds a required call so); sent only when set.
    pub format: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    User {
        parts: Vec<Part>,
    },
    Assistant {
        text: Option<String>,
        tool_calls: Vec<ToolCall>,
    },
    /// Blocks of the next assistant answer that the provider ran itself (Anthropic's tool
    /// search and its result), given back as they came, before the answer's text and calls,
    /// when the request searches again; other providers leave them out.
    ServerBlocks {
        blocks: Vec<serde_json::Value>,
    },
    /// The result of one tool call, answering the call with the same id.
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
        is_error: bool,
        /// Images the tool returned, given back with its result where the API takes them
        /// (only for a model that takes images; else `content` names them).
        images: Vec<Image>,
    },
}

/// An image as base64 with its media type.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub media_type: String,
    pub data: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text(String),
    /// An image for vision models, as base64 with its media type.
    Image {
        media_type: String,
        data: String,
    },
    /// A PDF, as base64, for the APIs that take one ([`media::Media::pdfs`]); `name` is its
    /// file name.
    Document {
        media_type: String,
        data: String,
        name: String,
    },
}

/// A tool offered to the model: its wire name, description and JSON Schema for its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// How a model is given tools: through its API's own tool calling, described in its system
/// prompt and called in text ([`prompted`]), or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolMode {
    #[default]
    Native,
    Prompted,
    Off,
}

impl ToolMode {
    /// As the database and the command line write it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Prompted => "prompted",
            Self::Off => "off",
        }
    }

    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "native" => Some(Self::Native),
            "prompted" => Some(Self::Prompted),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    #[default]
    Auto,
    None,
    Required,
}

/// A complete tool call, as the model asked for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Exactly the argument text the model sent.
    pub raw_arguments: String,
    /// The arguments parsed as JSON, or why they are not valid JSON (the loop returns that
    /// to the model as an error it can correct).
    pub arguments: Result<Value, String>,
}

impl ToolCall {
    pub fn new(id: String, name: String, raw_arguments: String) -> Self {
        let arguments = parse_arguments(&raw_arguments);
        Self {
            id,
            name,
            raw_arguments,
            arguments,
        }
    }
}

/// Empty argument text means no arguments (`{}`): several hosts send nothing for a
/// parameterless tool.
fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object, not {}",
            json_kind(&other)
        )),
        Err(e) => Err(format!("the arguments are not valid JSON: {e}")),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Other,
}

/// What a provider's stream yields, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    TextDelta(String),
    ReasoningDelta(String),
    /// A tool call whose arguments are complete.
    ToolCall(ToolCall),
    /// Tokens of the answer: `input_tokens` counts every input token, of which
    /// `cached_input_tokens` were read from the provider's prompt cache.
    Usage {
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        cached_input_tokens: Option<u64>,
    },
    Finish(FinishReason),
    /// A tool left out of the request because this provider would refuse it (sent first,
    /// before anything the provider says).
    ToolWarning(tool_names::ToolWarning),
    /// A block of the answer the provider ran itself (Anthropic's tool search, its result),
    /// kept with the answer to be given back with it ([`ChatMessage::ServerBlocks`]).
    ServerBlock(serde_json::Value),
    /// The server is loading the model into memory before it answers (a local server's first
    /// answer after a while): said first, so the wait does not look stuck.
    Loading,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_arguments_mean_an_empty_object() {
        let call = ToolCall::new("c1".into(), "t".into(), "  ".into());
        assert_eq!(call.arguments, Ok(serde_json::json!({})));
    }

    #[test]
    fn arguments_that_are_not_a_json_object_are_an_error_the_model_can_read() {
        let broken = ToolCall::new("c1".into(), "t".into(), "{\"path\": ".into());
        assert!(broken.arguments.unwrap_err().contains("not valid JSON"));
        let array = ToolCall::new("c1".into(), "t".into(), "[1,2]".into());
        assert!(array.arguments.unwrap_err().contains("an array"));
    }
}
