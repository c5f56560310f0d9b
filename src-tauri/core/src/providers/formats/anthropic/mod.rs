//! Anthropic Messages: request body and stream decoding (`tool_use` / `tool_result` blocks,
//! `input_json_delta`, thinking blocks, `event: error` inside the stream), and Anthropic's own
//! tool search: tools sent with `defer_loading` beside its BM25 search tool, whose
//! `server_tool_use` and `tool_search_tool_result` blocks are kept and given back as they came.
//! Reference: <https://docs.anthropic.com/en/api/messages-streaming>,
//! <https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{FormatError, StreamDecode};
use crate::providers::{
    ChatMessage, ChatRequest, FinishReason, Part, ProviderEvent, ToolCall, ToolChoice,
};

/// The `anthropic-version` header value this mapping follows.
pub const API_VERSION: &str = "2023-06-01";

/// Anthropic requires `max_tokens`; this is used when the request leaves it open.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Anthropic's own tool search, by BM25 over the deferred tools' names and descriptions (the
/// model asks in words, as it does Switchboard's search).
pub const TOOL_SEARCH: &str = "tool_search_tool_bm25";
const TOOL_SEARCH_TYPE: &str = "tool_search_tool_bm25_20251119";

/// Whether `model` can search deferred tools itself: Anthropic's tool search is for the Claude
/// 4.5 models and later (Opus 4.1 and earlier, and the Claude 3 models, do not take it). A
/// model that refuses it anyway is offered Switchboard's own search instead.
pub fn searches_tools(model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model);
    let Some(rest) = model.strip_prefix("claude-") else {
        return false;
    };
    // `claude-sonnet-4-5-20250929`, `claude-opus-4-6`, `claude-haiku-5`: the family, then the
    // version's numbers.
    let mut numbers = rest
        .split('-')
        .skip_while(|part| !part.starts_with(|c: char| c.is_ascii_digit()))
        .map_while(|part| part.parse::<u32>().ok().filter(|n| *n < 1000));
    match (numbers.next(), numbers.next()) {
        (Some(major), _) if major >= 5 => true,
        (Some(4), Some(minor)) => minor >= 5,
        _ => false,
    }
}

fn tool(t: &crate::providers::ToolSpec, deferred: bool) -> Value {
    let mut tool =
        json!({"name": t.name, "description": t.description, "input_schema": t.parameters});
    if deferred {
        tool["defer_loading"] = json!(true);
    }
    tool
}

/// The body for `POST {base}/v1/messages`.
pub fn request_body(request: &ChatRequest, stream: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert(
        "max_tokens".into(),
        json!(request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body.insert("system".into(), json!(system));
    }
    // The tools a search's result may name: those this request carries.
    let known: Option<std::collections::HashSet<&str>> =
        (!request.deferred_tools.is_empty()).then(|| {
            request
                .tools
                .iter()
                .chain(&request.deferred_tools)
                .map(|t| t.name.as_str())
                .collect()
        });
    let searching = known.is_some();
    body.insert(
        "messages".into(),
        Value::Array(messages(&request.messages, known.as_ref())),
    );
    if !request.tools.is_empty() || searching {
        let mut tools: Vec<Value> = request.tools.iter().map(|t| tool(t, false)).collect();
        if searching {
            // Every deferred tool is sent each time; the API loads those a search found.
            tools.push(json!({"type": TOOL_SEARCH_TYPE, "name": TOOL_SEARCH}));
            tools.extend(request.deferred_tools.iter().map(|t| tool(t, true)));
        }
        body.insert("tools".into(), Value::Array(tools));
        // `none` keeps the tools in the request: Anthropic refuses a history with tool blocks
        // when `tools` is absent, so the last round forbids calls this way.
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Required => "any",
        };
        body.insert("tool_choice".into(), json!({"type": choice}));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    Value::Object(body)
}

/// Maps the history, merging neighbours of the same role: the API wants user and assistant
/// turns to alternate, and every result of one round's tool calls in one user turn. The blocks
/// of Anthropic's own tool search go back with their answer while the request searches
/// (`known`: the tools it carries), so the tools they found stay loaded.
fn messages(
    history: &[ChatMessage],
    known: Option<&std::collections::HashSet<&str>>,
) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in history {
        let (role, blocks) = match message {
            ChatMessage::ServerBlocks { blocks } => match known.map(|k| given_back(blocks, k)) {
                Some(kept) if !kept.is_empty() => ("assistant", kept),
                _ => continue,
            },
            ChatMessage::User { parts } => ("user", parts.iter().map(part).collect()),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    // Arguments that were not valid JSON go back as an empty object; the tool
                    // result already told the model what was wrong.
                    let input = call.arguments.clone().unwrap_or_else(|_| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                ("assistant", blocks)
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
                is_error,
                images,
                ..
            } => {
                // A result with images is a list of blocks: its text, then each image.
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    let mut blocks = vec![json!({"type": "text", "text": content})];
                    blocks.extend(images.iter().map(|i| {
                        part(&Part::Image {
                            media_type: i.media_type.clone(),
                            data: i.data.clone(),
                        })
                    }));
                    Value::Array(blocks)
                };
                (
                    "user",
                    vec![json!({"type": "tool_result", "tool_use_id": tool_call_id,
                        "content": content, "is_error": is_error})],
                )
            }
        };
        super::push_turn(&mut out, role, blocks);
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// The blocks of the provider's own calls as they go back: each call with its result only (a
/// search stopped before its result came is left out), and a result naming only tools this
/// request carries (a server switched off since takes its tools away).
fn given_back(blocks: &[Value], known: &std::collections::HashSet<&str>) -> Vec<Value> {
    let answered = |id: &Value| {
        blocks
            .iter()
            .any(|b| b["type"] != "server_tool_use" && b["tool_use_id"] == *id)
    };
    let asked = |id: &Value| {
        blocks
            .iter()
            .any(|b| b["type"] == "server_tool_use" && b["id"] == *id)
    };
    blocks
        .iter()
        .filter(|b| {
            if b["type"] == "server_tool_use" {
                answered(&b["id"])
            } else {
                asked(&b["tool_use_id"])
            }
        })
        .map(|b| {
            let mut b = b.clone();
            if let Some(references) = b
                .pointer_mut("/content/tool_references")
                .and_then(Value::as_array_mut)
            {
                references.retain(|r| r["tool_name"].as_str().is_some_and(|n| known.contains(n)));
            }
            b
        })
        .collect()
}

fn part(part: &Part) -> Value {
    match part {
        Part::Text(text) => json!({"type": "text", "text": text}),
        Part::Image { media_type, data } => json!({"type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data}}),
        Part::Document {
            media_type,
            data,
            name,
        } => json!({"type": "document", "title": name,
            "source": {"type": "base64", "media_type": media_type, "data": data}}),
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u32,
        content_block: Value,
    },
    ContentBlockDelta {
        index: u32,
        delta: BlockChange,
    },
    ContentBlockStop {
        index: u32,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        usage: Option<Usage>,
    },
    MessageStop,
    Ping,
    Error {
        error: ApiError,
    },
    /// Event types added after this was written are ignored, never rendered.
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct MessageStart {
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockChange {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// Input read from the prompt cache, and written to it: Anthropic counts neither in
    /// `input_tokens`.
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

impl Usage {
    /// Every input token (cache reads and writes included) and the cache reads, when the
    /// usage says any input at all.
    fn input(&self) -> Option<(u64, u64)> {
        let parts = [
            self.input_tokens,
            self.cache_read_input_tokens,
            self.cache_creation_input_tokens,
        ];
        parts.iter().any(Option::is_some).then(|| {
            let read = self.cache_read_input_tokens.unwrap_or(0);
            (parts.iter().flatten().sum(), read)
        })
    }
}

#[derive(Deserialize)]
struct ApiError {
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<String>,
}

struct OpenCall {
    id: String,
    name: String,
    input: String,
}

/// Decodes one streamed Messages response, event by event.
#[derive(Default)]
pub struct StreamDecoder {
    calls: BTreeMap<u32, OpenCall>,
    /// The provider's own calls (`server_tool_use`) while their input streams: the block as
    /// it started, and its input so far.
    server_calls: BTreeMap<u32, (Value, String)>,
    /// Every input token and the cache reads among them, as `message_start` said.
    input: Option<(u64, u64)>,
    stop_reason: Option<FinishReason>,
    finished: bool,
}

impl StreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }
}

impl StreamDecode for StreamDecoder {
    /// Decodes one SSE event (`event:` name is carried in the data's `type` too).
    ///
    /// # Errors
    /// Not JSON, or an `error` event (overloaded, rate limit, …) inside the stream.
    fn data(&mut self, payload: &str) -> Result<Vec<ProviderEvent>, FormatError> {
        if payload.trim().is_empty() {
            return Ok(Vec::new());
        }
        let event: StreamEvent =
            serde_json::from_str(payload).map_err(|e| FormatError::BadChunk {
                detail: e.to_string(),
            })?;
        let mut out = Vec::new();
        match event {
            StreamEvent::MessageStart { message } => {
                self.input = message.usage.and_then(|u| u.input());
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => match content_block["type"].as_str().unwrap_or_default() {
                "tool_use" => {
                    let text =
                        |key: &str| content_block[key].as_str().unwrap_or_default().to_owned();
                    self.calls.insert(
                        index,
                        OpenCall {
                            id: text("id"),
                            name: text("name"),
                            input: String::new(),
                        },
                    );
                }
                "server_tool_use" => {
                    self.server_calls
                        .insert(index, (content_block, String::new()));
                }
                // The result of the provider's own call comes whole (`tool_search_tool_result`).
                kind if kind.ends_with("_tool_result") => {
                    out.push(ProviderEvent::ServerBlock(content_block));
                }
                _ => {}
            },
            StreamEvent::ContentBlockDelta { index, delta } => match delta {
                BlockChange::TextDelta { text } if !text.is_empty() => {
                    out.push(ProviderEvent::TextDelta(text));
                }
                BlockChange::ThinkingDelta { thinking } if !thinking.is_empty() => {
                    out.push(ProviderEvent::ReasoningDelta(thinking));
                }
                BlockChange::InputJsonDelta { partial_json } => {
                    if let Some(call) = self.calls.get_mut(&index) {
                        call.input.push_str(&partial_json);
                    } else if let Some((_, input)) = self.server_calls.get_mut(&index) {
                        input.push_str(&partial_json);
                    }
                }
                _ => {}
            },
            StreamEvent::ContentBlockStop { index } => {
                if let Some(call) = self.calls.remove(&index) {
                    out.push(ProviderEvent::ToolCall(ToolCall::new(
                        call.id, call.name, call.input,
                    )));
                } else if let Some((mut block, input)) = self.server_calls.remove(&index) {
                    // Given back as it came, its input whole.
                    if !input.trim().is_empty() {
                        block["input"] = serde_json::from_str(&input).unwrap_or_else(|_| json!({}));
                    }
                    out.push(ProviderEvent::ServerBlock(block));
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(finish_reason(&reason));
                }
                if let Some(usage) = usage {
                    // A newer API repeats the input counts here; else message_start's stand.
                    let input = usage.input().or(self.input);
                    out.push(ProviderEvent::Usage {
                        input_tokens: input.map(|(all, _)| all),
                        cached_input_tokens: input.map(|(_, read)| read).filter(|n| *n > 0),
                        output_tokens: usage.output_tokens,
                    });
                }
            }
            StreamEvent::MessageStop => out.extend(self.end()),
            StreamEvent::Error { error } => {
                let kind = error.kind.unwrap_or_default();
                let message = error.message.unwrap_or_else(|| "unknown error".into());
                return Err(FormatError::Api {
                    message: if kind.is_empty() {
                        message
                    } else {
                        format!("{kind}: {message}")
                    },
                });
            }
            StreamEvent::Ping | StreamEvent::Unknown => {}
        }
        Ok(out)
    }

    /// The stream closed: hands out calls whose block never closed, and the finish.
    fn end(&mut self) -> Vec<ProviderEvent> {
        if self.finished {
            return Vec::new();
        }
        self.finished = true;
        let mut out: Vec<ProviderEvent> = std::mem::take(&mut self.calls)
            .into_values()
            .map(|c| ProviderEvent::ToolCall(ToolCall::new(c.id, c.name, c.input)))
            .collect();
        let reason = self.stop_reason.unwrap_or(if out.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        out.push(ProviderEvent::Finish(reason));
        out
    }

    fn is_last(&self, _payload: &str) -> bool {
        self.finished
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" | "pause_turn" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

#[cfg(test)]
mod tests;
