//! Google Gemini `streamGenerateContent?alt=sse`: request body (`functionCall` /
//! `functionResponse` parts, `systemInstruction`, `toolConfig`) and chunk decoding. Tool
//! schemas go through [`schema::for_gemini`], because Gemini refuses much of the JSON Schema
//! that MCP servers emit.
//! Reference: <https://ai.google.dev/api/generate-content>.

pub mod schema;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{FormatError, StreamDecode};
use crate::providers::{
    ChatMessage, ChatRequest, FinishReason, Part, ProviderEvent, ToolCall, ToolChoice,
};

/// The body for `POST {base}/models/{model}:streamGenerateContent?alt=sse`.
pub fn request_body(request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents(&request.messages)));
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let parameters = schema::for_gemini(&t.parameters);
                if schema::is_empty_object(&parameters) {
                    json!({"name": t.name, "description": t.description})
                } else {
                    json!({"name": t.name, "description": t.description, "parameters": parameters})
                }
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
        let mode = match request.tool_choice {
            ToolChoice::Auto => "AUTO",
            ToolChoice::None => "NONE",
            ToolChoice::Required => "ANY",
        };
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": {"mode": mode}}),
        );
    }
    let mut generation = Map::new();
    if let Some(t) = request.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(m) = request.max_tokens {
        generation.insert("maxOutputTokens".into(), json!(m));
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Value::Object(body)
}

/// Gemini's roles are `user` and `model`; neighbours of one role are merged, so one round's
/// function responses travel together.
fn contents(history: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in history {
        let (role, parts): (&'static str, Vec<Value>) = match message {
            // Blocks another provider ran itself (Anthropic's tool search) mean nothing here.
            ChatMessage::ServerBlocks { .. } => continue,
            ChatMessage::User { parts } => ("user", parts.iter().map(part).collect()),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut parts = Vec::new();
                if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                    parts.push(json!({"text": text}));
                }
                for call in tool_calls {
                    let args = call.arguments.clone().unwrap_or_else(|_| json!({}));
                    parts.push(json!({"functionCall": {"name": call.name, "args": args}}));
                }
                ("model", parts)
            }
            ChatMessage::Tool {
                name,
                content,
                is_error,
                images,
                ..
            } => {
                let key = if *is_error { "error" } else { "content" };
                let mut response = json!({"name": name, "response": {key: content}});
                if !images.is_empty() {
                    // Gemini's multimodal function responses: the images inside the response.
                    response["parts"] = images
                        .iter()
                        .map(|i| json!({"inlineData": {"mimeType": i.media_type, "data": i.data}}))
                        .collect();
                }
                ("user", vec![json!({"functionResponse": response})])
            }
        };
        super::push_turn(&mut out, role, parts);
    }
    out.into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

fn part(part: &Part) -> Value {
    match part {
        Part::Text(text) => json!({"text": text}),
        Part::Image { media_type, data }
        | Part::Document {
            media_type, data, ..
        } => {
            json!({"inlineData": {"mimeType": media_type, "data": data}})
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    #[serde(default)]
    candidates: Vec<Candidate>,
    usage_metadata: Option<UsageMetadata>,
    error: Option<ApiError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<ResponsePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResponsePart {
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    function_call: Option<FunctionCall>,
}

#[derive(Deserialize)]
struct FunctionCall {
    id: Option<String>,
    name: String,
    #[serde(default)]
    args: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    prompt_token_count: Option<u64>,
    candidates_token_count: Option<u64>,
    /// Of the prompt's tokens, those read from a cached context.
    cached_content_token_count: Option<u64>,
}

#[derive(Deserialize)]
struct ApiError {
    message: Option<String>,
}

/// Decodes one streamed response. Gemini sends each function call whole.
#[derive(Default)]
pub struct StreamDecoder {
    calls_seen: usize,
    usage: Option<UsageMetadata>,
    finish: Option<FinishReason>,
    finished: bool,
}

impl StreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamDecode for StreamDecoder {
    /// # Errors
    /// Not JSON, or the host's error object.
    fn data(&mut self, payload: &str) -> Result<Vec<ProviderEvent>, FormatError> {
        if payload.trim().is_empty() {
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
        let mut out = Vec::new();
        for candidate in chunk.candidates.into_iter().take(1) {
            for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
                if let Some(call) = part.function_call {
                    let id = call
                        .id
                        .filter(|id| !id.is_empty())
                        .unwrap_or_else(|| format!("call_{}", self.calls_seen));
                    self.calls_seen += 1;
                    let args = if call.args.is_null() {
                        "{}".to_owned()
                    } else {
                        call.args.to_string()
                    };
                    out.push(ProviderEvent::ToolCall(ToolCall::new(id, call.name, args)));
                } else if let Some(text) = part.text.filter(|t| !t.is_empty()) {
                    out.push(if part.thought {
                        ProviderEvent::ReasoningDelta(text)
                    } else {
                        ProviderEvent::TextDelta(text)
                    });
                }
            }
            if let Some(reason) = candidate.finish_reason {
                self.finish = Some(finish_reason(&reason, self.calls_seen > 0));
            }
        }
        if let Some(usage) = chunk.usage_metadata {
            // Every chunk repeats the running totals; only the last one counts.
            self.usage = Some(usage);
        }
        Ok(out)
    }

    /// The body ended: the usage and the finish.
    fn end(&mut self) -> Vec<ProviderEvent> {
        if self.finished {
            return Vec::new();
        }
        self.finished = true;
        let mut out = Vec::new();
        if let Some(usage) = self.usage.take() {
            out.push(ProviderEvent::Usage {
                input_tokens: usage.prompt_token_count,
                output_tokens: usage.candidates_token_count,
                cached_input_tokens: usage.cached_content_token_count,
            });
        }
        let reason = self.finish.unwrap_or(if self.calls_seen > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        });
        out.push(ProviderEvent::Finish(reason));
        out
    }

    fn is_last(&self, _payload: &str) -> bool {
        false // Gemini ends the body after its last chunk
    }
}

/// Gemini says `STOP` after function calls too; the loop needs to know calls were made. A
/// reason this list does not know (aimock and some proxies say `FUNCTION_CALL`) after complete
/// calls also means "run the tools"; `MALFORMED_FUNCTION_CALL` does not.
fn finish_reason(reason: &str, made_calls: bool) -> FinishReason {
    match reason {
        "STOP" if made_calls => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => {
            FinishReason::Other
        }
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" => {
            FinishReason::ContentFilter
        }
        _ if made_calls => FinishReason::ToolCalls,
        _ => FinishReason::Other,
    }
}

#[cfg(test)]
mod tests;
