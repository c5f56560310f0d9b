//! Ollama's native `/api/chat`: request body and NDJSON line decoding (`message.content`,
//! `message.thinking`, whole `tool_calls`, the final `done` line with token counts, and an
//! `{"error": …}` line inside a 200 stream).
//! Reference: <https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion>.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{FormatError, StreamDecode};
use crate::providers::{
    ChatMessage, ChatRequest, FinishReason, Part, ProviderEvent, ToolCall, ToolChoice,
};

/// The body for `POST {base}/api/chat`.
pub fn request_body(request: &ChatRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User { parts } => {
                let text: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Text(t) => Some(t.as_str()),
                        // Ollama takes no documents: the run gives it a PDF's name instead
                        // (see `media`), so none arrives here.
                        Part::Image { .. } | Part::Document { .. } => None,
                    })
                    .collect();
                let images: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::Image { data, .. } => Some(data.as_str()),
                        Part::Text(_) | Part::Document { .. } => None,
                    })
                    .collect();
                let mut m = json!({"role": "user", "content": text.join("\n")});
                if !images.is_empty() {
                    m["images"] = json!(images);
                }
                m
            }
            ChatMessage::Assistant { text, tool_calls } => {
                let mut m =
                    json!({"role": "assistant", "content": text.clone().unwrap_or_default()});
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            let args = c.arguments.clone().unwrap_or_else(|_| json!({}));
                            json!({"function": {"name": c.name, "arguments": args}})
                        })
                        .collect();
                    m["tool_calls"] = Value::Array(calls);
                }
                m
            }
            ChatMessage::Tool {
                name,
                content,
                is_error,
                images,
                ..
            } => {
                let mut m = json!({"role": "tool",
                    "content": super::tool_result_text(content, *is_error), "tool_name": name});
                if !images.is_empty() {
                    m["images"] = images.iter().map(|i| json!(i.data)).collect();
                }
                m
            }
            // Blocks another provider ran itself (Anthropic's tool search) mean nothing here.
            ChatMessage::ServerBlocks { .. } => continue,
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    // Ollama has no tool_choice: "none" is said by offering no tools.
    if !request.tools.is_empty() && request.tool_choice != ToolChoice::None {
        body.insert("tools".into(), super::function_tools(&request.tools));
    }
    let mut options = Map::new();
    if let Some(t) = request.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if let Some(m) = request.max_tokens {
        options.insert("num_predict".into(), json!(m));
    }
    if let Some(window) = request.load_window {
        options.insert("num_ctx".into(), json!(window));
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    if let Some(format) = &request.format {
        body.insert("format".into(), format.clone());
    }
    if let Some(keep) = &request.keep_alive {
        // A number of seconds goes as a number; a duration (`5m`) as text.
        body.insert(
            "keep_alive".into(),
            keep.parse::<i64>()
                .map_or_else(|_| json!(keep), |n| json!(n)),
        );
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

#[derive(Deserialize)]
struct Line {
    message: Option<LineMessage>,
    #[serde(default)]
    done: bool,
    done_reason: Option<String>,
    prompt_eval_count: Option<u64>,
    eval_count: Option<u64>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct LineMessage {
    #[serde(default)]
    content: String,
    #[serde(default)]
    thinking: String,
    #[serde(default)]
    tool_calls: Vec<LineToolCall>,
}

#[derive(Deserialize)]
struct LineToolCall {
    id: Option<String>,
    function: LineFunction,
}

#[derive(Deserialize)]
struct LineFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// Decodes one NDJSON response, line by line.
#[derive(Default)]
pub struct StreamDecoder {
    calls_seen: usize,
    finished: bool,
}

impl StreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamDecode for StreamDecoder {
    /// # Errors
    /// Not JSON, or an `{"error": …}` line.
    fn data(&mut self, line: &str) -> Result<Vec<ProviderEvent>, FormatError> {
        if line.trim().is_empty() {
            return Ok(Vec::new());
        }
        let line: Line = serde_json::from_str(line).map_err(|e| FormatError::BadChunk {
            detail: e.to_string(),
        })?;
        if let Some(message) = line.error {
            return Err(FormatError::Api { message });
        }
        let mut out = Vec::new();
        if let Some(message) = line.message {
            if !message.thinking.is_empty() {
                out.push(ProviderEvent::ReasoningDelta(message.thinking));
            }
            if !message.content.is_empty() {
                out.push(ProviderEvent::TextDelta(message.content));
            }
            for call in message.tool_calls {
                let id = call
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{}", self.calls_seen));
                self.calls_seen += 1;
                let args = if call.function.arguments.is_null() {
                    "{}".to_owned()
                } else {
                    call.function.arguments.to_string()
                };
                out.push(ProviderEvent::ToolCall(ToolCall::new(
                    id,
                    call.function.name,
                    args,
                )));
            }
        }
        if line.done {
            out.push(ProviderEvent::Usage {
                input_tokens: line.prompt_eval_count,
                output_tokens: line.eval_count,
                cached_input_tokens: None,
            });
            let reason = match line.done_reason.as_deref() {
                Some("length") => FinishReason::Length,
                _ if self.calls_seen > 0 => FinishReason::ToolCalls,
                Some("stop") | None => FinishReason::Stop,
                Some(_) => FinishReason::Other,
            };
            out.push(ProviderEvent::Finish(reason));
            self.finished = true;
        }
        Ok(out)
    }

    /// The body ended; a finish if the `done` line never came.
    fn end(&mut self) -> Vec<ProviderEvent> {
        if self.finished {
            return Vec::new();
        }
        self.finished = true;
        vec![ProviderEvent::Finish(if self.calls_seen > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        })]
    }

    fn is_last(&self, _payload: &str) -> bool {
        self.finished
    }
}

impl StreamDecoder {
    /// Whether the `done` line has arrived.
    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ToolSpec;

    #[test]
    fn a_chat_with_a_tool_round_maps_to_ollama_messages() {
        let request = ChatRequest {
            model: "llama3.2".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                ChatMessage::User {
                    parts: vec![Part::Text("Time?".into())],
                },
                ChatMessage::Assistant {
                    text: None,
                    tool_calls: vec![ToolCall::new(
                        "call_0".into(),
                        "time__now".into(),
                        "{}".into(),
                    )],
                },
                ChatMessage::Tool {
                    tool_call_id: "call_0".into(),
                    name: "time__now".into(),
                    content: "12:00".into(),
                    is_error: false,
                    images: Vec::new(),
                },
            ],
            tools: vec![ToolSpec {
                name: "time__now".into(),
                description: "Now".into(),
                parameters: json!({"type": "object"}),
            }],
            max_tokens: Some(64),
            load_window: Some(32_768),
            ..ChatRequest::default()
        };
        assert_eq!(
            request_body(&request),
            json!({
                "model": "llama3.2",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Time?"},
                    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "time__now", "arguments": {}}}]},
                    {"role": "tool", "content": "12:00", "tool_name": "time__now"}
                ],
                "tools": [{"type": "function", "function": {"name": "time__now", "description": "Now", "parameters": {"type": "object"}}}],
                "options": {"num_predict": 64, "num_ctx": 32768},
                "stream": true
            })
        );
        let none = ChatRequest {
            tool_choice: ToolChoice::None,
            ..request
        };
        assert!(request_body(&none).get("tools").is_none());
    }

    #[test]
    fn ndjson_lines_decode_to_text_calls_usage_and_finish() {
        let mut d = StreamDecoder::new();
        let mut events = Vec::new();
        for line in [
            r#"{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"Checking"},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"time__now","arguments":{"tz":"UTC"}}}]},"done":false}"#,
            r#"{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":30,"eval_count":9}"#,
        ] {
            events.extend(d.data(line).unwrap());
        }
        assert!(d.is_finished());
        assert_eq!(
            events,
            vec![
                ProviderEvent::ReasoningDelta("hmm".into()),
                ProviderEvent::TextDelta("Checking".into()),
                ProviderEvent::ToolCall(ToolCall::new(
                    "call_0".into(),
                    "time__now".into(),
                    "{\"tz\":\"UTC\"}".into()
                )),
                ProviderEvent::Usage {
                    input_tokens: Some(30),
                    output_tokens: Some(9),
                    cached_input_tokens: None,
                },
                ProviderEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }

    #[test]
    fn an_error_line_inside_a_200_stream_is_an_error() {
        let err = StreamDecoder::new()
            .data(r#"{"error":"model 'nope' not found"}"#)
            .unwrap_err();
        assert_eq!(
            err,
            FormatError::Api {
                message: "model 'nope' not found".into()
            }
        );
    }
}
