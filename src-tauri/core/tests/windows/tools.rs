//! Many tools on a heavy day (issue 55): a server with 2,000 tools against a provider that takes
//! at most 128 in a request. The model is offered the person's most-used tools and
//! Switchboard's `search_tools`; it searches, the tool it finds is offered from the next
//! request on (appended), it calls it, and the run ends with its answer — no request ever
//! carries more than the provider takes, and the search asks the person nothing. And a
//! provider whose cap is lower than Switchboard plans for refuses the first request: the run
//! narrows what it offers and asks again, once.

use switchboard_core::agent::Decision;
use switchboard_core::events::{RunEvent, StopReason};

use crate::scripted::{
    app_with_reading_model, body_of, calling, one_turn, raw_server, saying, tool_names,
};
use crate::support;

/// A model that takes at most `cap` tools: it calls `many__get_forecast` when it is offered,
/// else searches for it, and answers with what the forecast said.
fn weather_model(cap: usize) -> crate::scripted::Reply {
    Box::new(move |_, _, request| {
        let body = body_of(request);
        let names = tool_names(&body);
        if names.len() > cap {
            let refusal = serde_json::json!({"error": {
                "message": format!("Invalid 'tools': array too long. Expected an array with maximum length {cap}, but got an array with length {} instead.", names.len()),
                "type": "invalid_request_error", "param": "tools", "code": "array_above_max_length"
            }});
            return (
                400,
                vec![("content-type".into(), "application/json".into())],
                refusal.to_string(),
            );
        }
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        let call = |name: &str, arguments: &str| calling(&format!("call_{name}"), name, arguments);
        let said = last["content"].as_str().unwrap_or_default();
        if said.contains("Sunny in Paris") {
            return saying("It is sunny.");
        }
        if names.contains(&"many__get_forecast") {
            return call("many__get_forecast", r#"{"text": "Paris"}"#);
        }
        if names.contains(&"switchboard__search_tools") && last["role"] == "user" {
            return call(
                "switchboard__search_tools",
                r#"{"query": "weather forecast"}"#,
            );
        }
        saying("No forecast tool.")
    })
}

/// The tools each request to the model carried.
fn tools_sent(model: &crate::scripted::Server) -> Vec<Vec<String>> {
    bodies_sent(model)
        .iter()
        .map(|body| tool_names(body).into_iter().map(str::to_owned).collect())
        .collect()
}

/// An app with `tools` tools on its server "many" and a model taking `cap`, and a conversation.
async fn weather_app(tools: usize, cap: usize) -> crate::scripted::Scene {
    let home = tempfile::tempdir().unwrap();
    let (app, model) = app_with_reading_model(home.path(), weather_model(cap)).await;
    raw_server(&app, "many", &["--many", &tools.to_string()]).await;
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    (app, model, conversation, home)
}

async fn ask_weather(
    app: &std::sync::Arc<switchboard_core::App>,
    conversation: &str,
) -> Vec<RunEvent> {
    one_turn(app, conversation, "Weather in Paris?", Decision::AllowOnce).await
}

fn finished_with(events: &[RunEvent], answer: &str) {
    assert!(
        matches!(
            events.last(),
            Some(RunEvent::RunFinished {
                reason: StopReason::Completed,
                ..
            })
        ),
        "the run went on to its answer: {:?}",
        events.last()
    );
    let said: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(said, answer);
}

/// No approval was asked for Switchboard's search.
fn search_asked_nothing(events: &[RunEvent]) {
    for event in events {
        if let RunEvent::ApprovalRequired { calls, .. } = event {
            assert!(calls.iter().all(|c| c.tool != "search_tools"), "{calls:?}");
        }
    }
}

#[tokio::test]
async fn two_thousand_tools_are_searched_and_the_wanted_one_called_under_the_providers_cap() {
    if !support::mcp_peers_installed("2,000 tools against a cap of 128") {
        return;
    }
    let (app, model, conversation, _home) = weather_app(2_000, 128).await;
    let events = ask_weather(&app, &conversation).await;
    let sent = tools_sent(&model);
    finished_with(&events, "It is sunny.");
    search_asked_nothing(&events);
    assert_eq!(sent.len(), 3, "search, call, answer: {sent:?}");
    assert!(sent.iter().all(|tools| tools.len() <= 128));
    assert_eq!(sent[0], ["switchboard__search_tools"], "nothing used yet");
    // What the search found is appended: the first request's tools keep their place.
    assert_eq!(sent[1][0], "switchboard__search_tools");
    assert!(
        sent[1].contains(&"many__get_forecast".to_owned()),
        "{:?}",
        sent[1]
    );
    let offered: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolsOffered { of, found, why, .. } => {
                Some((*of, found.clone(), why.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(offered[0].0, 2_000);
    assert!(
        offered[0]
            .2
            .starts_with("2000 tools are more than a request carries"),
        "{offered:?}"
    );
    assert!(
        offered[1]
            .1
            .iter()
            .any(|name| name.to_lowercase().contains("forecast")),
        "{offered:?}"
    );

    // Each answer keeps the record of what its request offered, for the window and in exports.
    let kept = app
        .conversations()
        .export(&conversation)
        .await
        .unwrap()
        .tool_offers;
    assert_eq!(kept.len(), 3, "one record per answer: {kept:?}");
    assert_eq!(kept[0].offered, ["Switchboard · Search Tools"]);
    assert_eq!(kept[0].of, 2_000);
    assert!(
        kept[0].why.starts_with("2000 tools are more than"),
        "{kept:?}"
    );
    assert!(kept[1].offered.len() > 1 && kept[1].offered[0] == "Switchboard · Search Tools");
    assert!(kept[1]
        .offered
        .iter()
        .any(|name| name.to_lowercase().contains("forecast")));
    let shown = app.conversations().get(&conversation).await.unwrap();
    assert_eq!(shown.offers, kept, "the window's page has the same records");
    // Exported and imported again, each record names its answer's new id.
    let file = app.conversations().export(&conversation).await.unwrap();
    let copy = app
        .store()
        .unwrap()
        .import_conversation(file)
        .await
        .unwrap();
    let copied = app.conversations().get(&copy.id).await.unwrap();
    assert_eq!(copied.offers.len(), 3);
    for (offer, was) in copied.offers.iter().zip(&kept) {
        assert_eq!(
            (&offer.offered, offer.of, &offer.why),
            (&was.offered, was.of, &was.why)
        );
        assert!(copied.messages.iter().any(|m| m.id == offer.message_id));
    }
    let answers: Vec<_> = shown
        .messages
        .iter()
        .filter(|m| m.role == switchboard_core::store::Role::Assistant)
        .map(|m| m.id.clone())
        .collect();
    assert_eq!(
        kept.iter()
            .map(|o| o.message_id.clone())
            .collect::<Vec<_>>(),
        answers
    );

    // The next question offers the tool used, beside the search, from its first request.
    let again = ask_weather(&app, &conversation).await;
    finished_with(&again, "It is sunny.");
    let sent = tools_sent(&model);
    assert_eq!(
        sent[3],
        ["many__get_forecast", "switchboard__search_tools"],
        "{sent:?}"
    );
    assert_eq!(sent.len(), 5, "call, answer");

    // The command line says what the model was given, and why, in its events.
    let lines = crate::scripted::chat_lines(
        &app,
        &[
            "chat",
            "--conversation",
            &conversation,
            "--provider",
            "Hostile",
            "--approve",
            "all",
            "--json",
            "Weather in Paris?",
        ],
    )
    .await;
    let offered = lines
        .iter()
        .find(|e| e["type"] == "tools_offered")
        .expect("a tools_offered event");
    assert_eq!(offered["of"], 2000);
    assert_eq!(offered["offered"][1], "Switchboard · Search Tools");
    assert!(offered["offered"][0]
        .as_str()
        .unwrap()
        .to_lowercase()
        .contains("forecast"));
    assert!(lines.iter().any(|e| e["type"] == "context_used"
        && e["used"]["tools"].as_u64().unwrap() > 0
        && e["used"]["counted_by"] == "estimate"));
    app.host().shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_provider_that_takes_fewer_tools_than_planned_is_asked_again_with_a_choice() {
    if !support::mcp_peers_installed("a provider capped under 128 tools") {
        return;
    }
    let (app, model, conversation, _home) = weather_app(100, 64).await;
    let events = ask_weather(&app, &conversation).await;
    let sent = tools_sent(&model);
    finished_with(&events, "It is sunny.");
    search_asked_nothing(&events);
    assert_eq!(sent[0].len(), 100, "every tool first: 100 is under 128");
    assert!(sent[1..].iter().all(|tools| tools.len() <= 64), "{sent:?}");
    assert!(events.iter().any(|e| matches!(e,
        RunEvent::Status { text } if text.starts_with("The provider takes at most 64 tools in one request"))));
    assert!(!events.iter().any(|e| matches!(e, RunEvent::Error { .. })));
    // The answer's record is of the request that was answered: the narrowed one.
    let kept = app
        .conversations()
        .export(&conversation)
        .await
        .unwrap()
        .tool_offers;
    assert!(
        !kept.is_empty() && kept.iter().all(|o| o.offered.len() <= 64 && o.of == 100),
        "{kept:?}"
    );
    app.host().shutdown(std::time::Duration::from_secs(5)).await;
}

/// The body of each request to the model, in order.
fn bodies_sent(model: &crate::scripted::Server) -> Vec<serde_json::Value> {
    model
        .requests()
        .iter()
        .filter(|r| r.starts_with("POST"))
        .map(|r| body_of(r))
        .collect()
}

/// A 200 answer streaming Anthropic's Messages events (`event:` then `data:`).
fn anthropic_sse(events: &[serde_json::Value]) -> crate::scripted::Answered {
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    (
        200,
        vec![("content-type".into(), "text/event-stream".into())],
        body,
    )
}

/// Anthropic's events for an answer of `blocks` (each a `content_block_start` block, with the
/// input of a `tool_use` or `server_tool_use` streamed after it), ending for `reason`.
fn anthropic_answer(
    blocks: &[(serde_json::Value, Option<&str>)],
    reason: &str,
) -> crate::scripted::Answered {
    use serde_json::json;
    let mut events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 50, "output_tokens": 1}}}),
    ];
    for (index, (block, input)) in blocks.iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": block}));
        if let Some(input) = input {
            events.push(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": input}}));
        }
        if block["type"] == "text" {
            events.push(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": "It is sunny."}}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 9}}));
    events.push(json!({"type": "message_stop"}));
    anthropic_sse(&events)
}

/// Claude with Anthropic's own tool search: it searches (a `server_tool_use` and its
/// `tool_search_tool_result`, run by the provider) and calls what it found, then answers with
/// the forecast; with `refuses`, it refuses any request that defers tools, as a model without
/// the tool search does, and then uses Switchboard's search as any model would.
fn claude(refuses: bool) -> crate::scripted::Reply {
    use serde_json::json;
    Box::new(move |_, _, request| {
        let body = body_of(request);
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        let defers = tools.iter().any(|t| t["defer_loading"] == true);
        if refuses && defers {
            let refusal = json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": "tools.1: 'tool_search_tool_bm25_20251119' is not supported for this model"}});
            return (
                400,
                vec![("content-type".into(), "application/json".into())],
                refusal.to_string(),
            );
        }
        let names = tool_names(&body);
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let last = messages.last().cloned().unwrap_or_default();
        let results = last["content"].to_string();
        if results.contains("Sunny in Paris") {
            return anthropic_answer(&[(json!({"type": "text", "text": ""}), None)], "end_turn");
        }
        let call = |id: &str, name: &str, input: &str| {
            (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                Some(input.to_owned()),
            )
        };
        let answer = |blocks: Vec<(serde_json::Value, Option<String>)>| {
            let blocks: Vec<(serde_json::Value, Option<&str>)> = blocks
                .iter()
                .map(|(b, i)| (b.clone(), i.as_deref()))
                .collect();
            anthropic_answer(&blocks, "tool_use")
        };
        let offered = |name: &str| {
            tools
                .iter()
                .any(|t| t["name"] == name && t["defer_loading"] != true)
        };
        if offered("many__get_forecast") {
            return answer(vec![call(
                "toolu_2",
                "many__get_forecast",
                r#"{"text": "Paris"}"#,
            )]);
        }
        if defers && last["role"] == "user" && names.contains(&"tool_search_tool_bm25") {
            let search = json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {}});
            let found = json!({"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
                "content": {"type": "tool_search_tool_search_result",
                    "tool_references": [{"type": "tool_reference", "tool_name": "many__get_forecast"}]}});
            return answer(vec![
                (search, Some(r#"{"query": "weather forecast"}"#.to_owned())),
                (found, None),
                call("toolu_1", "many__get_forecast", r#"{"text": "Paris"}"#),
            ]);
        }
        if offered("switchboard__search_tools") && !results.contains("many__get_forecast") {
            return answer(vec![call(
                "toolu_s",
                "switchboard__search_tools",
                r#"{"query": "weather forecast"}"#,
            )]);
        }
        anthropic_answer(&[(json!({"type": "text", "text": ""}), None)], "end_turn")
    })
}

/// An app whose one provider is [`claude`] (Claude Sonnet 4.5, on Anthropic's API) and a
/// server of 2,000 tools, and a conversation.
async fn claude_app(refuses: bool) -> crate::scripted::Scene {
    let home = tempfile::tempdir().unwrap();
    let model = crate::scripted::reading_server(claude(refuses)).await;
    let (app, _secrets) = crate::scripted::memory_app(home.path()).await;
    crate::support::add_provider(
        &app,
        "Claude",
        "anthropic",
        &model.origin,
        Some("claude-sonnet-4-5-20250929"),
        Some("sk-ant-test"),
    )
    .await;
    raw_server(&app, "many", &["--many", "2000"]).await;
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    (app, model, conversation, home)
}

#[tokio::test]
async fn anthropics_own_tool_search_finds_the_tool_and_its_blocks_go_back_with_the_answer() {
    if !support::mcp_peers_installed("Anthropic's own tool search") {
        return;
    }
    let (app, model, conversation, _home) = claude_app(false).await;
    let events = ask_weather(&app, &conversation).await;
    finished_with(&events, "It is sunny.");
    let bodies = bodies_sent(&model);
    assert_eq!(
        bodies.len(),
        2,
        "the search and the call in one answer, then the answer"
    );

    // Every server tool goes deferred beside Anthropic's search; Switchboard's is not offered.
    let tools = bodies[0]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2_001);
    assert_eq!(tools[0]["type"], "tool_search_tool_bm25_20251119");
    assert!(tools[1..].iter().all(|t| t["defer_loading"] == true));
    assert!(!tool_names(&bodies[0]).contains(&"switchboard__search_tools"));

    // The answer's search and its result go back as they came, before its call.
    let messages = bodies[1]["messages"].as_array().unwrap();
    let answer = &messages[messages.len() - 2];
    assert_eq!(answer["role"], "assistant");
    let kinds: Vec<&str> = answer["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["server_tool_use", "tool_search_tool_result", "tool_use"]
    );
    assert_eq!(answer["content"][0]["input"]["query"], "weather forecast");
    assert_eq!(
        answer["content"][1]["content"]["tool_references"][0]["tool_name"],
        "many__get_forecast"
    );

    // What was offered, and the answer's record of it, name the provider's search.
    let offered = events.iter().find_map(|e| match e {
        RunEvent::ToolsOffered { offered, .. } => Some(offered.clone()),
        _ => None,
    });
    assert_eq!(
        offered.unwrap(),
        [switchboard_core::agent::offer::PROVIDER_SEARCH]
    );
    let kept = app
        .conversations()
        .export(&conversation)
        .await
        .unwrap()
        .tool_offers;
    assert_eq!(
        kept[0].offered,
        [switchboard_core::agent::offer::PROVIDER_SEARCH]
    );

    // The next question: the tool used is offered outright, the rest deferred again, and the
    // earlier search still goes back with its answer (the tool it found stays loaded).
    let again = ask_weather(&app, &conversation).await;
    finished_with(&again, "It is sunny.");
    let third = bodies_sent(&model).swap_remove(2);
    let tools = third["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "many__get_forecast");
    assert!(tools[0].get("defer_loading").is_none());
    assert_eq!(
        tools.len(),
        2_001,
        "one offered, the search, 1,999 deferred"
    );
    assert!(third["messages"].to_string().contains("srvtoolu_1"));
    app.host().shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_model_that_refuses_anthropics_tool_search_is_asked_again_with_switchboards() {
    if !support::mcp_peers_installed("a refusal of Anthropic's tool search") {
        return;
    }
    let (app, model, conversation, _home) = claude_app(true).await;
    let events = ask_weather(&app, &conversation).await;
    finished_with(&events, "It is sunny.");
    assert!(events.iter().any(|e| matches!(e,
        RunEvent::Status { text } if text.starts_with("The provider refused its own tool search for this model"))));
    let bodies = bodies_sent(&model);
    // Refused, then Switchboard's search, then the call, then the answer.
    assert_eq!(bodies.len(), 4, "{bodies:#?}");
    for body in &bodies[1..] {
        let tools = body["tools"].as_array().unwrap();
        assert!(tools.len() <= 128);
        assert!(tools.iter().all(|t| t.get("defer_loading").is_none()));
        assert!(tool_names(body).contains(&"switchboard__search_tools"));
    }
    // Remembered for the model: the next question is not refused first.
    let again = ask_weather(&app, &conversation).await;
    finished_with(&again, "It is sunny.");
    assert!(!again.iter().any(
        |e| matches!(e, RunEvent::Status { text } if text.starts_with("The provider refused"))
    ));
    let later = &bodies_sent(&model)[4..];
    assert!(!later.is_empty());
    assert!(later
        .iter()
        .all(|body| !body["tools"].to_string().contains("defer_loading")));
    app.host().shutdown(std::time::Duration::from_secs(5)).await;
}
