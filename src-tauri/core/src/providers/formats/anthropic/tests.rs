//! The Anthropic wire format, offline.

use serde_json::json;

use super::*;
use crate::providers::formats::test_support;
use crate::providers::formats::StreamDecode;
use crate::providers::{ChatMessage, ChatRequest, Part, ToolCall, ToolSpec};

fn decode_all(payloads: &[&str]) -> Vec<ProviderEvent> {
    test_support::decode_all(StreamDecoder::new(), payloads)
}

#[test]
fn tool_results_of_one_round_go_back_in_one_user_turn_with_their_error_flags() {
    let request = ChatRequest {
        model: "claude-sonnet-4-5".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            ChatMessage::User {
                parts: vec![Part::Text("Time and files?".into())],
            },
            ChatMessage::Assistant {
                text: Some("Checking.".into()),
                tool_calls: vec![
                    ToolCall::new("toolu_1".into(), "time__now".into(), "{}".into()),
                    ToolCall::new(
                        "toolu_2".into(),
                        "fs__list".into(),
                        "{\"path\":\"/\"}".into(),
                    ),
                ],
            },
            ChatMessage::Tool {
                tool_call_id: "toolu_1".into(),
                name: "time__now".into(),
                content: "12:00".into(),
                is_error: false,
                images: Vec::new(),
            },
            ChatMessage::Tool {
                tool_call_id: "toolu_2".into(),
                name: "fs__list".into(),
                content: "denied".into(),
                is_error: true,
                images: Vec::new(),
            },
        ],
        tools: vec![ToolSpec {
            name: "time__now".into(),
            description: "Now".into(),
            parameters: json!({"type": "object"}),
        }],
        tool_choice: ToolChoice::None,
        ..ChatRequest::default()
    };
    assert_eq!(
        request_body(&request, true),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": DEFAULT_MAX_TOKENS,
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Time and files?"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "time__now", "input": {}},
                    {"type": "tool_use", "id": "toolu_2", "name": "fs__list", "input": {"path": "/"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "12:00", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "denied", "is_error": true}
                ]}
            ],
            "tools": [{"name": "time__now", "description": "Now", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "none"},
            "stream": true
        })
    );
}

#[test]
fn a_streamed_answer_with_thinking_text_and_a_tool_call_decodes_in_order() {
    let events = decode_all(&[
        r#"{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":25,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Need the time."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let me check"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_9","name":"time__now","input":{}}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"tz\": \"Eu"}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"rope/Lisbon\"}"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    assert_eq!(
        events,
        vec![
            ProviderEvent::ReasoningDelta("Need the time.".into()),
            ProviderEvent::TextDelta("Let me check".into()),
            ProviderEvent::ToolCall(ToolCall::new(
                "toolu_9".into(),
                "time__now".into(),
                "{\"tz\": \"Europe/Lisbon\"}".into()
            )),
            ProviderEvent::Usage {
                input_tokens: Some(25),
                output_tokens: Some(40),
                cached_input_tokens: None,
            },
            ProviderEvent::Finish(FinishReason::ToolCalls),
        ]
    );
}

#[test]
fn an_error_event_inside_the_stream_is_an_error_and_unknown_events_are_ignored() {
    let mut decoder = StreamDecoder::new();
    assert_eq!(
        decoder
            .data(r#"{"type":"some_future_event","payload":{"x":1}}"#)
            .unwrap(),
        vec![]
    );
    let err = decoder
        .data(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
        .unwrap_err();
    assert_eq!(
        err,
        FormatError::Api {
            message: "overloaded_error: Overloaded".into()
        }
    );
}

#[test]
fn a_required_tool_choice_is_any_and_images_are_base64_sources() {
    let request = ChatRequest {
        model: "m".into(),
        messages: vec![ChatMessage::User {
            parts: vec![Part::Image {
                media_type: "image/png".into(),
                data: "AAAA".into(),
            }],
        }],
        tools: vec![ToolSpec {
            name: "t".into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        }],
        tool_choice: ToolChoice::Required,
        max_tokens: Some(100),
        ..ChatRequest::default()
    };
    let body = request_body(&request, false);
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(
        body["messages"][0]["content"][0]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": "AAAA"})
    );
}

#[test]
fn cache_reads_and_writes_count_as_input_and_the_reads_are_said_apart() {
    let events = decode_all(&[
        r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":21,"cache_creation_input_tokens":188,"cache_read_input_tokens":1800,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":12}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    assert!(events.contains(&ProviderEvent::Usage {
        input_tokens: Some(21 + 188 + 1800),
        output_tokens: Some(12),
        cached_input_tokens: Some(1800),
    }));
}

#[test]
fn the_tool_search_is_for_claude_four_point_five_and_later() {
    for model in [
        "claude-sonnet-4-5",
        "claude-sonnet-4-5-20250929",
        "claude-opus-4-5-20251101",
        "claude-haiku-4-5",
        "claude-opus-4-6",
        "claude-sonnet-5",
        "anthropic/claude-sonnet-4-5",
    ] {
        assert!(searches_tools(model), "{model}");
    }
    for model in [
        "claude-opus-4-1-20250805",
        "claude-sonnet-4-20250514",
        "claude-3-5-sonnet-20241022",
        "claude-3-7-sonnet-latest",
        "gpt-4o",
        "claude",
    ] {
        assert!(!searches_tools(model), "{model}");
    }
}

#[test]
fn deferred_tools_go_with_the_search_tool_and_its_blocks_go_back_only_while_it_searches() {
    let spec = |name: &str| ToolSpec {
        name: name.into(),
        description: format!("{name} does it"),
        parameters: json!({"type": "object"}),
    };
    let blocks = vec![
        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "weather"}}),
        json!({"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
            "content": {"type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "w__get"}]}}),
    ];
    let mut request = ChatRequest {
        model: "claude-sonnet-4-5".into(),
        messages: vec![
            ChatMessage::User {
                parts: vec![Part::Text("Weather?".into())],
            },
            ChatMessage::ServerBlocks {
                blocks: blocks.clone(),
            },
            ChatMessage::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new(
                    "toolu_1".into(),
                    "w__get".into(),
                    "{}".into(),
                )],
            },
        ],
        tools: vec![spec("time__now")],
        deferred_tools: vec![spec("w__get"), spec("w__set")],
        ..ChatRequest::default()
    };
    let body = request_body(&request, true);
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "time__now");
    assert!(tools[0].get("defer_loading").is_none());
    assert_eq!(
        tools[1],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    assert_eq!(tools[2]["defer_loading"], true);
    assert_eq!(tools[3]["name"], "w__set");
    let answer = &body["messages"][1]["content"];
    assert_eq!(answer[0], blocks[0]);
    assert_eq!(answer[1], blocks[1]);
    assert_eq!(answer[2]["type"], "tool_use");

    // Without deferred tools there is no search to give them back to.
    request.deferred_tools.clear();
    let body = request_body(&request, true);
    assert_eq!(body["tools"].as_array().unwrap().len(), 1);
    let answer = body["messages"][1]["content"].as_array().unwrap();
    assert_eq!(answer.len(), 1);
    assert_eq!(answer[0]["type"], "tool_use");
}

#[test]
fn the_providers_own_search_is_kept_whole_and_never_a_call_to_run() {
    let events = decode_all(&[
        r#"{"type":"message_start","message":{"usage":{"input_tokens":10}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"tool_search_tool_bm25","input":{},"caller":{"type":"direct"}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"wea"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"ther\"}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_search_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"w__get"}]}}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"w__get","input":{}}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    let server: Vec<&serde_json::Value> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::ServerBlock(b) => Some(b),
            _ => None,
        })
        .collect();
    assert_eq!(server.len(), 2);
    assert_eq!(
        *server[0],
        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25",
            "input": {"query": "weather"}, "caller": {"type": "direct"}})
    );
    assert_eq!(server[1]["type"], "tool_search_tool_result");
    let calls: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::ToolCall(c) => Some(c.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        ["w__get"],
        "the provider's search is not ours to run"
    );
}

#[test]
fn a_search_goes_back_only_with_its_result_and_names_only_the_tools_still_carried() {
    let spec = |name: &str| ToolSpec {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
    };
    let found = |id: &str, names: &[&str]| {
        json!({"type": "tool_search_tool_result", "tool_use_id": id, "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": names.iter().map(|n| json!({"type": "tool_reference", "tool_name": n})).collect::<Vec<_>>()}})
    };
    let search = |id: &str| json!({"type": "server_tool_use", "id": id, "name": "tool_search_tool_bm25", "input": {"query": "x"}});
    let request = ChatRequest {
        model: "claude-sonnet-4-5".into(),
        messages: vec![
            ChatMessage::User {
                parts: vec![Part::Text("Go".into())],
            },
            ChatMessage::ServerBlocks {
                // The first search found a tool of a server switched off since; the second was
                // stopped before its result came.
                blocks: vec![
                    search("s1"),
                    found("s1", &["gone__tool", "w__get"]),
                    search("s2"),
                ],
            },
            ChatMessage::Assistant {
                text: Some("Stopped.".into()),
                tool_calls: Vec::new(),
            },
        ],
        deferred_tools: vec![spec("w__get")],
        ..ChatRequest::default()
    };
    let body = request_body(&request, true);
    let answer = body["messages"][1]["content"].as_array().unwrap();
    assert_eq!(answer.len(), 3, "{answer:?}");
    assert_eq!(answer[0]["id"], "s1");
    assert_eq!(
        answer[1]["content"]["tool_references"],
        json!([{"type": "tool_reference", "tool_name": "w__get"}])
    );
    assert_eq!(answer[2]["type"], "text");
}
