//! The exact JSON body each provider receives for one rich request (system prompt, an image, a
//! PDF, parallel tool calls, a tool's image in its result, a failed tool result, a schema with `$ref`, forced tool use),
//! pinned in `tests/golden/<api>.json`. A change to a wire format shows up here as a diff to review;
//! `UPDATE_GOLDEN=1 cargo test -p switchboard-core --test golden_requests` rewrites the files.

use std::path::PathBuf;

use serde_json::{json, Value};
use switchboard_core::providers::formats::{anthropic, gemini, ollama, openai};
use switchboard_core::providers::{
    ChatMessage, ChatRequest, Image, Part, ToolCall, ToolChoice, ToolSpec,
};

fn rich_request() -> ChatRequest {
    ChatRequest {
        model: "model-under-test".into(),
        system: Some("You are Switchboard's assistant. Use tools when they help.".into()),
        messages: vec![
            ChatMessage::User {
                parts: vec![
                    Part::Text("What is in this picture, and what's the weather in Paris and Tōkyō?".into()),
                    Part::Image {
                        media_type: "image/png".into(),
                        data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==".into(),
                    },
                    // An attached PDF (issue 17): a document where the API takes one; the run
                    // never gives Ollama one (it is told the file's name instead).
                    Part::Document {
                        media_type: "application/pdf".into(),
                        data: "JVBERi0xLjcKJeLjz9MK".into(),
                        name: "itinerary.pdf".into(),
                    },
                ],
            },
            ChatMessage::Assistant {
                text: Some("A single pixel. Let me check the weather.".into()),
                tool_calls: vec![
                    ToolCall::new(
                        "call_1".into(),
                        "weather__get_forecast".into(),
                        r#"{"city":"Paris","days":2}"#.into(),
                    ),
                    ToolCall::new(
                        "call_2".into(),
                        "weather__get_forecast".into(),
                        r#"{"city":"Tōkyō","days":2}"#.into(),
                    ),
                ],
            },
            ChatMessage::Tool {
                tool_call_id: "call_1".into(),
                name: "weather__get_forecast".into(),
                content: "Paris: 18 °C, sunny; tomorrow 15 °C, rain\n[image: image/png, 67 bytes of base64 data]".into(),
                is_error: false,
                // A tool's image (issue 17): in the tool result for Anthropic and Gemini, on the
                // tool message for Ollama, in a user message after the round's results for
                // OpenAI.
                images: vec![Image {
                    media_type: "image/png".into(),
                    data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==".into(),
                }],
            },
            ChatMessage::Tool {
                tool_call_id: "call_2".into(),
                name: "weather__get_forecast".into(),
                content: "upstream weather service timed out after 60 s".into(),
                is_error: true,
                images: Vec::new(),
            },
        ],
        tools: vec![
            ToolSpec {
                name: "weather__get_forecast".into(),
                description: "Forecast for a city, day by day.".into(),
                parameters: json!({
                    "type": "object",
                    "$defs": {"Days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1}},
                    "properties": {
                        "city": {"type": "string", "description": "City name"},
                        "days": {"$ref": "#/$defs/Days"},
                        "units": {"anyOf": [{"const": "metric"}, {"const": "imperial"}]}
                    },
                    "required": ["city"],
                    "additionalProperties": false
                }),
            },
            ToolSpec {
                name: "clock__now".into(),
                description: "The current time.".into(),
                parameters: json!({"type": "object", "properties": {}}),
            },
        ],
        tool_choice: ToolChoice::Required,
        temperature: Some(0.2),
        max_tokens: Some(1024),
        load_window: None,
        deferred_tools: Vec::new(),
        keep_alive: Some("10m".into()),
        grammar: None,
        format: None,
    }
}

fn check(api: &str, body: &Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{api}.json"));
    let pretty = serde_json::to_string_pretty(body).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, pretty).unwrap();
        eprintln!("updated {}", path.display());
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    let expected: Value = serde_json::from_str(&stored).unwrap();
    assert!(
        &expected == body,
        "the {api} request body changed; review the diff and rerun with UPDATE_GOLDEN=1 if it is right.\n--- {}\n+++ now\n{pretty}",
        path.display()
    );
}

#[test]
fn the_openai_request_body_is_pinned() {
    check("openai", &openai::request_body(&rich_request(), true));
}

#[test]
fn the_anthropic_request_body_is_pinned() {
    check("anthropic", &anthropic::request_body(&rich_request(), true));
}

#[test]
fn the_gemini_request_body_is_pinned() {
    check("gemini", &gemini::request_body(&rich_request()));
}

#[test]
fn the_ollama_request_body_is_pinned() {
    check("ollama", &ollama::request_body(&rich_request()));
}
