//! Pure wire mappings, one folder per API family: build the request body, turn each streamed
//! event into [`super::ProviderEvent`]s. No I/O here, so every quirk is tested offline.

pub mod anthropic;
pub mod gemini;
pub mod ollama;
pub mod openai;

use super::ProviderEvent;

/// One API family's stream decoding: payloads in (an SSE event's `data` or an NDJSON line),
/// events out. The HTTP loop in `providers::http` drives it.
pub trait StreamDecode: Send + 'static {
    /// # Errors
    /// The payload is not understood, or it is the host's error report.
    fn data(&mut self, payload: &str) -> Result<Vec<ProviderEvent>, FormatError>;
    /// The body ended: whatever is still pending, and the finish.
    fn end(&mut self) -> Vec<ProviderEvent>;
    /// Whether the payload just given to [`StreamDecode::data`] was the protocol's last
    /// (nothing follows, even on a kept-open connection). Asked after `data`, so a decoder
    /// answers from what it already parsed instead of parsing the payload twice.
    fn is_last(&self, payload: &str) -> bool;
}

/// A streamed payload that cannot be turned into events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The host reported an error inside a 200 stream (OpenRouter, Anthropic and others do).
    #[error("The provider reported an error: {message}")]
    Api { message: String },
    #[error("The provider sent a chunk that is not valid JSON: {detail}")]
    BadChunk { detail: String },
}

/// Appends one turn's blocks, merging with the previous turn of the same role (Anthropic and
/// Gemini want roles to alternate, and one round's tool results in one turn).
fn push_turn(
    turns: &mut Vec<(&'static str, Vec<serde_json::Value>)>,
    role: &'static str,
    blocks: Vec<serde_json::Value>,
) {
    if blocks.is_empty() {
        return;
    }
    match turns.last_mut() {
        Some((last, existing)) if *last == role => existing.extend(blocks),
        _ => turns.push((role, blocks)),
    }
}

/// A tool result's text for APIs with no error flag (OpenAI, Ollama): the failure is said in
/// the text, so the model knows.
fn tool_result_text(content: &str, is_error: bool) -> String {
    if is_error {
        format!("Error: {content}")
    } else {
        content.to_owned()
    }
}

/// Tools in the `{"type": "function", "function": {…}}` shape OpenAI and Ollama share.
fn function_tools(tools: &[super::ToolSpec]) -> serde_json::Value {
    serde_json::Value::Array(
        tools
            .iter()
            .map(|t| {
                serde_json::json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect(),
    )
}

/// Helpers the format tests share.
#[cfg(test)]
mod test_support {
    use super::StreamDecode;
    use crate::providers::{ProviderEvent, ToolCall};

    /// Feeds every payload, then ends the stream; panics on a decoding error.
    pub fn decode_all(mut decoder: impl StreamDecode, payloads: &[&str]) -> Vec<ProviderEvent> {
        let mut events = Vec::new();
        for p in payloads {
            events.extend(decoder.data(p).expect("decodes"));
        }
        events.extend(decoder.end());
        events
    }

    pub fn text_of(events: &[ProviderEvent]) -> String {
        events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn calls_of(events: &[ProviderEvent]) -> Vec<&ToolCall> {
        events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect()
    }
}
