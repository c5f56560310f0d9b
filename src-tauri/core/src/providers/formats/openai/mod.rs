//! OpenAI Chat Completions, spoken by OpenAI and every OpenAI-compatible host (OpenRouter,
//! Ollama's `/v1`, LM Studio, llama.cpp, vLLM, Groq, DeepSeek, Mistral).
//!
//! [`request_body`] builds the JSON body; [`StreamDecoder`] turns the `data:` payloads of the
//! streamed response into [`ProviderEvent`]s, assembling tool calls that arrive in pieces.
//! Reference: <https://platform.openai.com/docs/api-reference/chat/streaming>.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};

pub use super::{FormatError, StreamDecode};
use crate::providers::{
    ChatMessage, ChatRequest, FinishReason, Part, ProviderEvent, ToolCall, ToolChoice,
};

/// The role a system prompt is sent under: OpenAI's reasoning models (`o1`, `o3`, `o4-mini`…)
/// take it as `developer`; every other model, and every other host, as `system`.
fn system_role(model: &str) -> &'static str {
    let mut chars = model.chars();
    let reasoning = chars.next() == Some('o')
        && chars.next().is_some_and(|c| c.is_ascii_digit())
        && chars.next().is_none_or(|c| c == '-');
    if reasoning {
        "developer"
    } else {
        "system"
    }
}

/// The request body for `POST {base}/chat/completions`.
pub fn request_body(request: &ChatRequest, stream: bool) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": system_role(&request.model), "content": system}));
    }
    // Tool messages carry text only: the images of one round's results follow them, in one
    // user message after the last of them (a tool message must answer its call directly).
    let mut images: Vec<Value> = Vec::new();
    for (i, m) in request.messages.iter().enumerate() {
        let Some(sent) = message(m) else {
            continue;
        };
        messages.push(sent);
        if let ChatMessage::Tool {
            tool_call_id,
            name,
            images: given,
            ..
        } = m
        {
            if !given.is_empty() {
                images.push(json!({"type": "text",
                    "text": format!("The images the tool {name} returned (call {tool_call_id}):")}));
                images.extend(given.iter().map(|g| {
                    json!({"type": "image_url",
                    "image_url": {"url": format!("data:{};base64,{}", g.media_type, g.data)}})
                }));
            }
        }
        let round_ends = !matches!(request.messages.get(i + 1), Some(ChatMessage::Tool { .. }));
        if round_ends && !images.is_empty() {
            messages.push(json!({"role": "user", "content": std::mem::take(&mut images)}));
        }
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert("tools".into(), super::function_tools(&request.tools));
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Required => "required",
        };
        body.insert("tool_choice".into(), json!(choice));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(m) = request.max_tokens {
        body.insert("max_tokens".into(), json!(m));
    }
    // llama.cpp's own field; sent only to a server that takes it (see `prompted`).
    if let Some(grammar) = &request.grammar {
        body.insert("grammar".into(), json!(grammar));
    }
    if stream {
        body.insert("stream".into(), json!(true));
        // Without this the stream carries no token usage.
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// One message as the API takes it; `None` for blocks another provider ran itself
/// (Anthropic's tool search), which mean nothing here.
fn message(message: &ChatMessage) -> Option<Value> {
    Some(match message {
        ChatMessage::ServerBlocks { .. } => return None,
        ChatMessage::User { parts } => match parts.as_slice() {
            [Part::Text(text)] => json!({"role": "user", "content": text}),
            parts => {
                let content: Vec<Value> = parts
                    .iter()
                    .map(|p| match p {
                        Part::Text(text) => json!({"type": "text", "text": text}),
                        Part::Image { media_type, data } => json!({"type": "image_url",
                            "image_url": {"url": format!("data:{media_type};base64,{data}")}}),
                        Part::Document {
                            media_type,
                            data,
                            name,
                        } => json!({"type": "file", "file": {"filename": name,
                            "file_data": format!("data:{media_type};base64,{data}")}}),
                    })
                    .collect();
                json!({"role": "user", "content": content})
            }
        },
        ChatMessage::Assistant { text, tool_calls } => {
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            // `null` content is how the API spells "only tool calls".
            m.insert(
                "content".into(),
                text.as_deref()
                    .filter(|t| !t.is_empty())
                    .map_or(Value::Null, |t| json!(t)),
            );
            if !tool_calls.is_empty() {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                            "function": {"name": c.name, "arguments": c.raw_arguments}})
                    })
                    .collect();
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(m)
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
            is_error,
            ..
        } => {
            json!({"role": "tool", "tool_call_id": tool_call_id,
                "content": super::tool_result_text(content, *is_error)})
        }
    })
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
    error: Option<ApiError>,
}

#[derive(Deserialize)]
struct ApiError {
    message: Option<String>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    /// DeepSeek and vLLM call it `reasoning_content`, OpenRouter `reasoning`.
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallDelta>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    index: Option<u32>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    /// `cached_tokens`: of the prompt tokens, those read from OpenAI's prompt cache.
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Decodes one streamed response. Feed it each SSE `data:` payload in order, then call
/// [`StreamDecoder::end`] when the stream closes (with or without `[DONE]`).
#[derive(Default)]
pub struct StreamDecoder {
    /// Tool calls being assembled, by the index the host gives them (its order is the model's).
    calls: BTreeMap<u32, PartialCall>,
    finished: bool,
}

impl StreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamDecode for StreamDecoder {
    /// Decodes one `data:` payload.
    ///
    /// # Errors
    /// The payload is not JSON, or it carries the host's error object.
    fn data(&mut self, payload: &str) -> Result<Vec<ProviderEvent>, FormatError> {
        let payload = payload.trim();
        if payload == "[DONE]" {
            return Ok(self.end());
        }
        if payload.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Chunk = serde_json::from_str(payload).map_err(|e| FormatError::BadChunk {
            detail: e.to_string(),
        })?;
        if let Some(error) = chunk.error {
            return Err(FormatError::Api {
                message: error.message.unwrap_or_else(|| "unknown error".into()),
            });
        }
        let mut events = Vec::new();
        for choice in chunk.choices {
            let delta = choice.delta;
            if let Some(r) = delta.reasoning_content.or(delta.reasoning) {
                if !r.is_empty() {
                    events.push(ProviderEvent::ReasoningDelta(r));
                }
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                events.push(ProviderEvent::TextDelta(text));
            }
            for (position, piece) in delta.tool_calls.into_iter().enumerate() {
                // A host that leaves out `index` sends whole calls: their position orders them.
                let index = piece
                    .index
                    .unwrap_or_else(|| u32::try_from(position).unwrap_or(u32::MAX));
                let call = self.calls.entry(index).or_default();
                if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
                    call.id = id;
                }
                if let Some(function) = piece.function {
                    if let Some(name) = function.name {
                        call.name.push_str(&name);
                    }
                    if let Some(arguments) = function.arguments {
                        call.arguments.push_str(&arguments);
                    }
                }
            }
            if let Some(reason) = choice.finish_reason {
                events.extend(self.flush_calls());
                events.push(ProviderEvent::Finish(finish_reason(&reason)));
                self.finished = true;
            }
        }
        if let Some(usage) = chunk.usage {
            events.push(ProviderEvent::Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
                cached_input_tokens: usage.prompt_tokens_details.and_then(|d| d.cached_tokens),
            });
        }
        Ok(events)
    }

    /// The stream closed: hands out any tool calls still being assembled, and a finish if the
    /// host never sent one (some omit both `finish_reason` and `[DONE]`).
    fn end(&mut self) -> Vec<ProviderEvent> {
        let mut events = self.flush_calls();
        if !self.finished {
            let reason = if events.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            };
            events.push(ProviderEvent::Finish(reason));
            self.finished = true;
        }
        events
    }

    fn is_last(&self, payload: &str) -> bool {
        payload.trim() == "[DONE]"
    }
}

impl StreamDecoder {
    fn flush_calls(&mut self) -> Vec<ProviderEvent> {
        std::mem::take(&mut self.calls)
            .into_values()
            .enumerate()
            .map(|(n, c)| {
                // A call with no id (some local servers) gets a stable one of its own.
                let id = if c.id.is_empty() {
                    format!("call_{n}")
                } else {
                    c.id
                };
                ProviderEvent::ToolCall(ToolCall::new(id, c.name, c.arguments))
            })
            .collect()
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

#[cfg(test)]
mod tests;
