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
    model
        .requests()
        .iter()
        .filter(|r| r.starts_with("POST"))
        .map(|r| {
            tool_names(&body_of(r))
                .into_iter()
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// An app with `tools` tools on its server "many" and a model taking `cap`, and a conversation.
async fn weather_app(
    tools: usize,
    cap: usize,
) -> (
    std::sync::Arc<switchboard_core::App>,
    crate::scripted::Server,
    String,
    tempfile::TempDir,
) {
    let home = tempfile::tempdir().unwrap();
    let (app, model) = app_with_reading_model(home.path(), weather_model(cap)).await;
    raw_server(&app, "many", &["--many", &tools.to_string()]).await;
    let conversation = app.create_conversation_with(None, "").await.unwrap().id;
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
        .export_conversation(&conversation)
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
    let shown = app.get_conversation(&conversation).await.unwrap();
    assert_eq!(shown.offers, kept, "the window's page has the same records");
    // Exported and imported again, each record names its answer's new id.
    let file = app.export_conversation(&conversation).await.unwrap();
    let copy = app.store().unwrap().import_conversation(file).await.unwrap();
    let copied = app.get_conversation(&copy.id).await.unwrap();
    assert_eq!(copied.offers.len(), 3);
    for (offer, was) in copied.offers.iter().zip(&kept) {
        assert_eq!((&offer.offered, offer.of, &offer.why), (&was.offered, was.of, &was.why));
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
        .export_conversation(&conversation)
        .await
        .unwrap()
        .tool_offers;
    assert!(
        !kept.is_empty() && kept.iter().all(|o| o.offered.len() <= 64 && o.of == 100),
        "{kept:?}"
    );
    app.host().shutdown(std::time::Duration::from_secs(5)).await;
}
