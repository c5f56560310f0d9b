//! The OpenAI wire format, offline: request bodies and every streaming quirk we know of.

use serde_json::json;

use super::*;
use crate::providers::formats::test_support;
use crate::providers::formats::StreamDecode;
use crate::providers::{ChatMessage, ChatRequest, Part, ToolCall, ToolSpec};

fn decode_all(payloads: &[&str]) -> Vec<ProviderEvent> {
    test_support::decode_all(StreamDecoder::new(), payloads)
}

use test_support::{calls_of, text_of};

#[test]
fn a_request_carries_history_tools_and_streaming_options() {
    let request = ChatRequest {
        model: "gpt-4o-mini".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            ChatMessage::User {
                parts: vec![Part::Text("What is in /docs?".into())],
            },
            ChatMessage::Assistant {
                text: None,
                tool_calls: vec![ToolCall::new(
                    "call_123".into(),
                    "fs__list_directory".into(),
                    "{\"path\":\"/docs\"}".into(),
                )],
            },
            ChatMessage::Tool {
                tool_call_id: "call_123".into(),
                name: "fs__list_directory".into(),
                content: "README.md".into(),
                is_error: false,
                images: Vec::new(),
            },
        ],
        tools: vec![ToolSpec {
            name: "fs__list_directory".into(),
            description: "List a directory".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        tool_choice: ToolChoice::Auto,
        temperature: Some(0.5),
        max_tokens: Some(256),
        load_window: None,
        deferred_tools: Vec::new(),
        keep_alive: None,
        grammar: None,
        format: None,
    };
    assert_eq!(
        request_body(&request, true),
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "What is in /docs?"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_123", "type": "function",
                    "function": {"name": "fs__list_directory", "arguments": "{\"path\":\"/docs\"}"}}]},
                {"role": "tool", "tool_call_id": "call_123", "content": "README.md"}
            ],
            "tools": [{"type": "function", "function": {"name": "fs__list_directory",
                "description": "List a directory",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}],
            "tool_choice": "auto",
            "temperature": 0.5,
            "max_tokens": 256,
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
}

#[test]
fn reasoning_models_take_the_system_prompt_as_developer() {
    let role = |model: &str| {
        let request = ChatRequest {
            model: model.into(),
            system: Some("Be brief.".into()),
            ..ChatRequest::default()
        };
        request_body(&request, false)["messages"][0]["role"].clone()
    };
    for model in ["o1", "o3", "o3-mini", "o4-mini", "o1-2024-12-17"] {
        assert_eq!(role(model), "developer", "{model}");
    }
    for model in [
        "gpt-4o",
        "gpt-4.1",
        "openai/o3",
        "ollama3",
        "o",
        "omni",
        "llama3.2",
    ] {
        assert_eq!(role(model), "system", "{model}");
    }
}

#[test]
fn a_failed_tool_result_says_so_in_its_text_and_images_become_data_urls() {
    let request = ChatRequest {
        model: "m".into(),
        messages: vec![
            ChatMessage::User {
                parts: vec![
                    Part::Text("What is this?".into()),
                    Part::Image {
                        media_type: "image/png".into(),
                        data: "iVBORw0K".into(),
                    },
                ],
            },
            ChatMessage::Tool {
                tool_call_id: "c".into(),
                name: "t".into(),
                content: "file not found".into(),
                is_error: true,
                images: Vec::new(),
            },
        ],
        ..ChatRequest::default()
    };
    let body = request_body(&request, false);
    assert_eq!(
        body["messages"][0]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}})
    );
    assert_eq!(body["messages"][1]["content"], "Error: file not found");
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
    assert!(body.get("stream").is_none());
}

#[test]
fn text_streams_as_deltas_then_usage_and_finish() {
    let events = decode_all(&[
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}"#,
        "[DONE]",
    ]);
    assert_eq!(text_of(&events), "Hello");
    assert_eq!(
        &events[events.len() - 2..],
        &[
            ProviderEvent::Finish(FinishReason::Stop),
            ProviderEvent::Usage {
                input_tokens: Some(12),
                output_tokens: Some(2),
                cached_input_tokens: None,
            },
        ]
    );
}

#[test]
fn an_argument_string_split_across_50_chunks_is_one_complete_call() {
    let arguments =
        json!({"path": "/docs/some/deep/folder", "recursive": true, "pattern": "*.md"}).to_string();
    let chars: Vec<char> = arguments.chars().collect();
    assert!(chars.len() >= 50);
    let mut payloads = vec![json!({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "call_abc", "type": "function", "function": {"name": "fs__search", "arguments": ""}}
    ]}}]})
    .to_string()];
    for i in 0..50 {
        let piece: String = chars[i * chars.len() / 50..(i + 1) * chars.len() / 50]
            .iter()
            .collect();
        payloads.push(
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": piece}}]}}]})
            .to_string(),
        );
    }
    assert_eq!(payloads.len(), 51);
    payloads.push(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into());
    let refs: Vec<&str> = payloads.iter().map(String::as_str).collect();
    let events = decode_all(&refs);
    let calls = calls_of(&events);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_abc");
    assert_eq!(calls[0].name, "fs__search");
    assert_eq!(calls[0].raw_arguments, arguments);
    assert_eq!(
        calls[0].arguments.as_ref().unwrap()["pattern"],
        json!("*.md")
    );
    assert_eq!(
        events.last(),
        Some(&ProviderEvent::Finish(FinishReason::ToolCalls))
    );
}

#[test]
fn parallel_calls_interleaved_by_index_come_out_whole_in_the_models_order() {
    let events = decode_all(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"time__now","arguments":""}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"fs__read","arguments":"{\"pa"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\":\"UTC\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.txt\"}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    let calls = calls_of(&events);
    let summary: Vec<_> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.raw_arguments.as_str()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("call_a", "fs__read", "{\"path\":\"a.txt\"}"),
            ("call_b", "time__now", "{\"tz\":\"UTC\"}"),
        ]
    );
}

#[test]
fn a_stream_without_done_or_finish_still_hands_out_its_calls() {
    let events = decode_all(&[
        r#"{"choices":[{"delta":{"content":"Let me look."}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"t","arguments":"{}"}}]}}]}"#,
    ]);
    assert_eq!(text_of(&events), "Let me look.");
    assert_eq!(calls_of(&events).len(), 1);
    assert_eq!(
        events.last(),
        Some(&ProviderEvent::Finish(FinishReason::ToolCalls))
    );
}

#[test]
fn reasoning_fields_of_deepseek_and_openrouter_are_reasoning_not_text() {
    let events = decode_all(&[
        r#"{"choices":[{"delta":{"reasoning_content":"think A"}}]}"#,
        r#"{"choices":[{"delta":{"reasoning":"think B"}}]}"#,
        r#"{"choices":[{"delta":{"content":"answer"},"finish_reason":"stop"}]}"#,
    ]);
    assert_eq!(
        events[..2],
        [
            ProviderEvent::ReasoningDelta("think A".into()),
            ProviderEvent::ReasoningDelta("think B".into())
        ]
    );
    assert_eq!(text_of(&events), "answer");
}

#[test]
fn unknown_fields_are_ignored_and_an_error_object_in_the_stream_is_an_error() {
    let mut decoder = StreamDecoder::new();
    let events = decoder
        .data(r#"{"id":"x","object":"chat.completion.chunk","system_fingerprint":"fp","provider":"Foo","choices":[{"index":0,"delta":{"content":"ok","annotations":[]},"logprobs":null}]}"#)
        .unwrap();
    assert_eq!(events, vec![ProviderEvent::TextDelta("ok".into())]);
    let err = decoder
        .data(r#"{"error":{"message":"Rate limit exceeded","code":429}}"#)
        .unwrap_err();
    assert_eq!(
        err,
        FormatError::Api {
            message: "Rate limit exceeded".into()
        }
    );
    assert!(matches!(
        decoder.data("{not json"),
        Err(FormatError::BadChunk { .. })
    ));
}

#[test]
fn calls_from_a_host_that_omits_ids_and_indexes_get_stable_ids() {
    let events = decode_all(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","arguments":"{}"}},{"function":{"name":"b","arguments":"{\"x\":1}"}}]},"finish_reason":"tool_calls"}]}"#,
    ]);
    let calls = calls_of(&events);
    assert_eq!(
        calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str()))
            .collect::<Vec<_>>(),
        vec![("call_0", "a"), ("call_1", "b")]
    );
}

#[test]
fn cached_prompt_tokens_are_said_apart() {
    let events = decode_all(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":1920}}}"#,
        "[DONE]",
    ]);
    assert!(events.contains(&ProviderEvent::Usage {
        input_tokens: Some(2006),
        output_tokens: Some(300),
        cached_input_tokens: Some(1920),
    }));
}
