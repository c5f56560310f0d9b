//! A script in the webview can answer an approval and flip a conversation's switches, but it
//! cannot widen what runs without asking: a standing approval ("for this conversation",
//! "always") and auto-approve take effect only once the person said yes outside the webview,
//! to a question naming each tool. "Allow once" needs nothing more. And a provider's key does
//! not follow its address to another host.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use switchboard_core::agent::{ApprovalAnswer, Decision};
use switchboard_core::app::TurnRequest;
use switchboard_core::events::RunEvent;
use switchboard_core::policy::confirm::{Allowance, StandingTool};
use switchboard_core::secrets::{provider_account, SecretStore};
use switchboard_core::{App, CoreError};

use super::scripted::{app_with_model, memory_app, raw_server, sse, stop, Asked, Server};
use crate::support::{self, Seen};

/// An app whose model asks once for the time server's `get_current_time`, then says "Done.";
/// with mcp-server-time running as "time". `None` when the peers are not installed.
async fn app_with_time_tool(home: &std::path::Path) -> Option<(Arc<App>, Server)> {
    if !support::mcp_peers_installed("webview_grants") {
        return None;
    }
    let turn = Arc::new(AtomicUsize::new(0));
    let (app, model) = app_with_model(
        home,
        Box::new(move |_, _| {
            if turn.fetch_add(1, Ordering::SeqCst) == 0 {
                let call = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
                    "index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "time__get_current_time",
                                 "arguments": "{\"timezone\": \"UTC\"}"}
                }]}}]});
                sse(&[call, stop("tool_calls")])
            } else {
                let text = json!({"choices": [{"index": 0, "delta": {"content": "Done."}}]});
                sse(&[text, stop("stop")])
            }
        }),
    )
    .await;
    let program = support::peers().join(".venv/bin/mcp-server-time");
    app.host()
        .spawn(
            "time",
            support::stdio_launch(&program.to_string_lossy(), &[], Duration::from_secs(60)),
        )
        .await;
    support::server_running(app.host(), "time").await;
    Some((app, model))
}

/// Starts a turn in a new conversation and waits for its approval request: (conversation,
/// request id, call id, events).
async fn asked_about_a_call(app: &Arc<App>) -> (String, String, String, Arc<Seen>) {
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let seen = Arc::new(Seen::default());
    app.start_turn(
        TurnRequest {
            conversation_id: conversation.clone(),
            text: Some("What time is it?".into()),
            ..TurnRequest::default()
        },
        seen.clone(),
    )
    .await
    .unwrap();
    let (request, call) = seen
        .first(|e| match e {
            RunEvent::ApprovalRequired { request_id, calls } => {
                Some((request_id.clone(), calls[0].call_id.clone()))
            }
            _ => None,
        })
        .await;
    (conversation, request, call, seen)
}

fn answer(call: &str, decision: Decision) -> Vec<ApprovalAnswer> {
    vec![ApprovalAnswer {
        call_id: call.to_owned(),
        decision,
        reason: None,
    }]
}

async fn finished(seen: &Seen) {
    seen.first(|e| matches!(e, RunEvent::RunFinished { .. }).then_some(()))
        .await;
}

#[tokio::test]
async fn webview_cannot_grant_always_without_native_confirmation() {
    let home = tempfile::tempdir().unwrap();
    let Some((app, _model)) = app_with_time_tool(home.path()).await else {
        return;
    };
    let (_, request, call, seen) = asked_about_a_call(&app).await;
    let person = Asked::new(false);
    for decision in [Decision::AllowAlways, Decision::AllowConversation] {
        let refused = app
            .answer_approval(&request, answer(&call, decision), person.as_ref())
            .await
            .unwrap_err();
        assert!(
            matches!(refused, CoreError::NotConfirmed { .. }),
            "{refused:?}"
        );
    }
    assert_eq!(person.seen().len(), 2, "the person was asked each time");
    assert!(
        app.tool_approvals().await.unwrap().is_empty(),
        "nothing standing"
    );
    // The request still waits; allowing once asks nobody else.
    let nobody = Asked::new(false);
    app.answer_approval(
        &request,
        answer(&call, Decision::AllowOnce),
        nobody.as_ref(),
    )
    .await
    .unwrap();
    assert!(nobody.seen().is_empty());
    finished(&seen).await;
    assert!(app.tool_approvals().await.unwrap().is_empty());
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_confirmed_standing_approval_names_its_tool_and_holds() {
    let home = tempfile::tempdir().unwrap();
    let Some((app, _model)) = app_with_time_tool(home.path()).await else {
        return;
    };
    let (_, request, call, seen) = asked_about_a_call(&app).await;
    let person = Asked::new(true);
    app.answer_approval(
        &request,
        answer(&call, Decision::AllowAlways),
        person.as_ref(),
    )
    .await
    .unwrap();
    let asked = person.seen();
    let [Allowance::StandingApproval { tools, .. }] = asked.as_slice() else {
        panic!("{asked:?}");
    };
    assert_eq!(
        tools,
        &[StandingTool {
            server: "time".into(),
            tool: "get_current_time".into(),
            everywhere: true,
        }]
    );
    assert!(asked[0].message().contains("every conversation"));
    finished(&seen).await;
    let standing = app.tool_approvals().await.unwrap();
    assert_eq!(standing.len(), 1, "{standing:?}");
    assert_eq!(standing[0].conversation_id, None);
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn webview_cannot_add_a_standing_approval_in_settings_without_native_confirmation() {
    if !support::mcp_peers_installed("webview_grants") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, _model) = app_with_model(home.path(), Box::new(|_, _| sse(&[stop("stop")]))).await;
    // `echo` is offered; `deep` is held back (nested too deep), so it is not the server's now.
    raw_server(&app, "raw", &["--deep-schema", "200"]).await;
    let nobody = Asked::new(true);
    let unknown = app
        .allow_running_tool_always("raw", "deep", nobody.as_ref())
        .await
        .unwrap_err();
    assert!(matches!(unknown, CoreError::NotFound { .. }), "{unknown:?}");
    assert!(
        nobody.seen().is_empty(),
        "nobody is asked about a tool not offered"
    );

    let person = Asked::new(false);
    let refused = app
        .allow_running_tool_always("raw", "echo", person.as_ref())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, CoreError::NotConfirmed { .. }),
        "{refused:?}"
    );
    assert!(app.tool_approvals().await.unwrap().is_empty());
    let asked = person.seen();
    assert_eq!(
        asked,
        [Allowance::StandingApproval {
            conversation: String::new(),
            tools: vec![StandingTool {
                server: "raw".into(),
                tool: "echo".into(),
                everywhere: true,
            }],
        }]
    );
    assert!(asked[0]
        .message()
        .contains("“echo” of “raw”, in every conversation"));

    app.allow_running_tool_always("raw", "echo", Asked::new(true).as_ref())
        .await
        .unwrap();
    let standing = app.tool_approvals().await.unwrap();
    assert_eq!(standing.len(), 1, "{standing:?}");
    assert_eq!(
        (
            standing[0].tool.as_str(),
            standing[0].conversation_id.as_deref()
        ),
        ("echo", None)
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn webview_cannot_turn_on_auto_approve_without_native_confirmation() {
    let home = tempfile::tempdir().unwrap();
    let (app, _model) = app_with_model(home.path(), Box::new(|_, _| sse(&[stop("stop")]))).await;
    let conversation = app
        .conversations()
        .create(Some("Payments"), "")
        .await
        .unwrap()
        .id;
    let auto_approve = || async {
        app.conversations()
            .get(&conversation)
            .await
            .unwrap()
            .conversation
            .auto_approve
    };
    let person = Asked::new(false);
    let refused = app
        .set_auto_approve(&conversation, true, person.as_ref())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, CoreError::NotConfirmed { .. }),
        "{refused:?}"
    );
    assert!(!auto_approve().await);
    assert_eq!(
        person.seen(),
        [Allowance::AutoApprove {
            conversation: "Payments".into()
        }]
    );

    app.set_auto_approve(&conversation, true, Asked::new(true).as_ref())
        .await
        .unwrap();
    assert!(auto_approve().await);
    // Turning it off narrows: nobody is asked.
    let nobody = Asked::new(false);
    app.set_auto_approve(&conversation, false, nobody.as_ref())
        .await
        .unwrap();
    assert!(!auto_approve().await && nobody.seen().is_empty());
}

#[tokio::test]
async fn provider_key_does_not_move_with_its_address() {
    let home = tempfile::tempdir().unwrap();
    let (app, secrets) = memory_app(home.path()).await;
    crate::support::add_provider(
        &app,
        "Work",
        "openai_compatible",
        "https://llm.example.com/v1",
        Some("m"),
        Some("sk-work"),
    )
    .await;
    let key = || secrets.get(&provider_account("Work")).unwrap().is_some();

    // Another path on the same origin keeps the key.
    let moved = app
        .providers()
        .update("Work", Some("https://llm.example.com/v2"), None)
        .await
        .unwrap();
    assert!(moved.has_key && key());

    // Another host, scheme or port: the key is removed before the address changes.
    for other in [
        "https://collector.example.net/v1",
        "https://llm.example.com:8443/v1",
        "http://10.0.0.7/v1",
    ] {
        secrets
            .set(&provider_account("Work"), &"sk-work".to_owned().into())
            .unwrap();
        let moved = app
            .providers()
            .update("Work", Some(other), None)
            .await
            .unwrap();
        assert_eq!(moved.base_url, other);
        assert!(!moved.has_key && !key(), "{other}: the key stayed");
    }
}
