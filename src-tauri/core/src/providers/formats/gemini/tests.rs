//! The Gemini wire format and schema rewriting, offline.

use serde_json::json;

use super::*;
use crate::providers::formats::test_support;
use crate::providers::formats::StreamDecode;
use crate::providers::{ChatMessage, ChatRequest, Part, ToolCall, ToolSpec};

fn decode_all(payloads: &[&str]) -> Vec<ProviderEvent> {
    test_support::decode_all(StreamDecoder::new(), payloads)
}

#[test]
fn history_maps_to_user_and_model_turns_with_function_parts() {
    let request = ChatRequest {
        model: "gemini-2.5-flash".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            ChatMessage::User {
                parts: vec![Part::Text("Echo hi".into())],
            },
            ChatMessage::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new(
                    "call_0".into(),
                    "everything__echo".into(),
                    "{\"message\":\"hi\"}".into(),
                )],
            },
            ChatMessage::Tool {
                tool_call_id: "call_0".into(),
                name: "everything__echo".into(),
                content: "Echo: hi".into(),
                is_error: false,
                images: Vec::new(),
            },
        ],
        tools: vec![
            ToolSpec {
                name: "everything__echo".into(),
                description: "Echoes back the input".into(),
                parameters: json!({"type": "object", "properties": {"message": {"type": "string"}},
                    "required": ["message"], "additionalProperties": false,
                    "$schema": "http://json-schema.org/draft-07/schema#"}),
            },
            ToolSpec {
                name: "everything__get_tiny_image".into(),
                description: "A tiny image".into(),
                parameters: json!({"type": "object", "properties": {}}),
            },
        ],
        tool_choice: ToolChoice::Auto,
        temperature: Some(0.2),
        max_tokens: Some(512),
        load_window: None,
        deferred_tools: Vec::new(),
        keep_alive: None,
        grammar: None,
        format: None,
    };
    assert_eq!(
        request_body(&request),
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "Echo hi"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "everything__echo", "args": {"message": "hi"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "everything__echo", "response": {"content": "Echo: hi"}}}]}
            ],
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "tools": [{"functionDeclarations": [
                {"name": "everything__echo", "description": "Echoes back the input",
                 "parameters": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}},
                {"name": "everything__get_tiny_image", "description": "A tiny image"}
            ]}],
            "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
            "generationConfig": {"temperature": 0.2, "maxOutputTokens": 512}
        })
    );
}

#[test]
fn a_stream_with_thoughts_text_and_whole_function_calls_decodes() {
    let events = decode_all(&[
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me think","thought":true}]}}],"usageMetadata":{"promptTokenCount":10}}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Sure. "}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"a","args":{"x":1}}},{"functionCall":{"id":"fc-2","name":"b"}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":22}}"#,
    ]);
    assert_eq!(
        events,
        vec![
            ProviderEvent::ReasoningDelta("Let me think".into()),
            ProviderEvent::TextDelta("Sure. ".into()),
            ProviderEvent::ToolCall(ToolCall::new(
                "call_0".into(),
                "a".into(),
                "{\"x\":1}".into()
            )),
            ProviderEvent::ToolCall(ToolCall::new("fc-2".into(), "b".into(), "{}".into())),
            ProviderEvent::Usage {
                input_tokens: Some(10),
                output_tokens: Some(22),
                cached_input_tokens: None,
            },
            ProviderEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn safety_stops_and_errors_are_reported() {
    let events = decode_all(&[r#"{"candidates":[{"finishReason":"SAFETY"}]}"#]);
    assert_eq!(
        events,
        vec![ProviderEvent::Finish(FinishReason::ContentFilter)]
    );
    let err = StreamDecoder::new()
        .data(r#"{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}"#)
        .unwrap_err();
    assert_eq!(
        err,
        FormatError::Api {
            message: "Resource has been exhausted".into()
        }
    );
}

/// Shapes taken from what real MCP servers emit (zod-to-json-schema in the TypeScript SDK,
/// pydantic in the Python SDK): `$defs` + `$ref`, `anyOf` with null, `["string","null"]`,
/// `const`, `exclusiveMinimum`, `format: uri`, `additionalProperties`, recursive references.
#[test]
fn mcp_schemas_are_rewritten_into_what_gemini_accepts_keeping_their_meaning() {
    let pydantic = json!({
        "$defs": {
            "Edit": {"type": "object", "title": "Edit",
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "required": ["oldText", "newText"], "additionalProperties": false}
        },
        "type": "object",
        "properties": {
            "path": {"type": "string", "format": "uri", "description": "File"},
            "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
            "dryRun": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": null},
            "timezone": {"type": ["string", "null"]},
            "mode": {"const": "replace"},
            "count": {"type": "integer", "exclusiveMinimum": 0}
        },
        "required": ["path", "edits", "missing"]
    });
    assert_eq!(
        schema::for_gemini(&pydantic),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File (format: uri)"},
                "edits": {"type": "array", "items": {"type": "object", "title": "Edit",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"]}},
                "dryRun": {"type": "boolean", "nullable": true, "default": null},
                "timezone": {"type": "string", "nullable": true},
                "mode": {"enum": ["replace"]},
                "count": {"type": "integer", "description": "(greater than 0)"}
            },
            "required": ["path", "edits"]
        })
    );
}

#[test]
fn a_recursive_schema_is_cut_at_a_depth_instead_of_looping() {
    let tree = json!({
        "$defs": {"Node": {"type": "object", "properties": {
            "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
        "type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}}
    });
    let out = schema::for_gemini(&tree);
    let text = out.to_string();
    assert!(!text.contains("$ref") && !text.contains("$defs"));
    assert!(text.contains("nested too deeply"));
}

#[test]
fn an_unknown_finish_reason_after_function_calls_still_means_run_the_tools() {
    assert_eq!(
        finish_reason("FUNCTION_CALL", true),
        FinishReason::ToolCalls
    );
    assert_eq!(finish_reason("FUNCTION_CALL", false), FinishReason::Other);
    assert_eq!(
        finish_reason("MALFORMED_FUNCTION_CALL", true),
        FinishReason::Other
    );
}

/// Counts the schema nodes (objects) in `value`.
fn nodes(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(nodes).sum::<usize>(),
        Value::Array(items) => items.iter().map(nodes).sum(),
        _ => 0,
    }
}

#[test]
fn gemini_schema_bomb_is_cut_within_budget() {
    // Under 2 KB: a definition with ten properties, each the definition again. Inlined to the
    // depth limit that is about 10^8 nodes.
    let props: serde_json::Map<String, Value> = (0..10)
        .map(|i| (format!("p{i}"), json!({"$ref": "#/$defs/node"})))
        .collect();
    let bomb = json!({"type": "object", "$defs": {"node": {"type": "object", "properties": props}},
                      "properties": {"q": {"$ref": "#/$defs/node"}}});
    assert!(
        bomb.to_string().len() < 2048,
        "{} bytes",
        bomb.to_string().len()
    );
    let started = std::time::Instant::now();
    let out = schema::for_gemini(&bomb);
    eprintln!("rewrote the bomb in {:?}", started.elapsed());
    let text = out.to_string();
    assert!(text.contains("too large to describe"), "the rest is cut");
    assert!(!text.contains("$ref"));
    // Bounded: the nodes made (each may carry a few literal objects of its own).
    assert!(
        nodes(&out) <= 3 * schema::MAX_NODES,
        "{} nodes",
        nodes(&out)
    );
    assert!(text.len() < 1_000_000, "{} bytes", text.len());
}
