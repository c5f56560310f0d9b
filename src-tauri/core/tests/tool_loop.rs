//! The tool loop end to end in the core: aimock (a real third-party mock of the OpenAI API)
//! plays the model from `tests/fixtures/aimock/tool-loop.json`, real MCP servers run the tools
//! (server-everything over stdio, and our fault server for slow, hanging and crashing tools),
//! and what the loop saved, emitted and sent to the model is checked — the last through
//! aimock's request journal. And (`windows/`) what the loop makes of a model's window against
//! a scripted provider: its refusal of a request over the window or with too many tools, and
//! a result far larger than the window.

mod support;

#[path = "threats/scripted.rs"]
#[allow(dead_code)]
mod scripted;
#[path = "windows/history.rs"]
mod window_history;
#[path = "windows/refusals.rs"]
mod window_refusals;
#[path = "windows/results.rs"]
mod window_results;
#[path = "windows/tools.rs"]
mod window_tools;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_core::agent::{
    self, ApprovalAnswer, ApprovalRequest, Approver, Decision, FixedApprover, RunServices, RunSetup,
};
use switchboard_core::app::{CallRef, TurnRequest};
use switchboard_core::attachments::{Attachment, AttachmentKind};
use switchboard_core::events::{RunEvent, StopReason};
use switchboard_core::mcp::host::ServerState;
use switchboard_core::policy::pins::PinnedTool;
use switchboard_core::secrets::MemoryStore;
use switchboard_core::settings::{MemorySettings, Settings};
use switchboard_core::store::{
    ApprovalScope, Message, MessageStatus, Role, Store, ToolDecision, ToolToggle,
};
use switchboard_core::{App, AppConfig, AppPaths, CoreError};
use tokio_util::sync::CancellationToken;

use support::{aimock, eventually, peers, stdio_launch, Aimock};

/// How long a test server may take to start.
const STARTUP: Duration = Duration::from_secs(30);

/// An app over an in-memory database with one provider pointed at the mock, its host running
/// the servers named, and a conversation.
struct World {
    app: Arc<App>,
    store: Store,
    secrets: Arc<MemoryStore>,
    conversation: String,
    _home: tempfile::TempDir,
    mock: Aimock,
}

async fn world(test: &str, servers: &[&str]) -> Option<World> {
    if !support::mcp_peers_installed(test) {
        return None;
    }
    let mock = aimock(test, "tool-loop.json", &[])?;
    let home = tempfile::tempdir().unwrap();
    let store = Store::open_in_memory().unwrap();
    let secrets = Arc::new(MemoryStore::default());
    let app = App::with_store(
        store.clone(),
        AppConfig {
            pid_file: Some(home.path().join("pids.json")),
            ..support::headless_config(
                AppPaths::under_home(home.path().to_path_buf()),
                Arc::clone(&secrets) as _,
            )
        },
    )
    .await;
    support::add_mock_provider(&app, &mock.root).await;
    let host = app.host();
    for &name in servers {
        let launch = match name {
            "everything" => stdio_launch(
                &peers()
                    .join("node_modules/.bin/mcp-server-everything")
                    .to_string_lossy(),
                &["stdio"],
                STARTUP,
            ),
            "fault" => stdio_launch(
                &peers().join(".venv/bin/python").to_string_lossy(),
                &[&peers().join("fault_server.py").to_string_lossy()],
                STARTUP,
            ),
            other => panic!("no such test server {other}"),
        };
        host.spawn(name, launch).await;
    }
    for &name in servers {
        support::server_running(host, name).await;
    }
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    Some(World {
        app,
        store,
        secrets,
        conversation,
        _home: home,
        mock,
    })
}

/// Every event of a run, and the run's end.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<RunEvent>>>);

impl Events {
    fn all(&self) -> Vec<RunEvent> {
        self.0.lock().unwrap().clone()
    }

    fn kinds(&self) -> Vec<String> {
        self.all()
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }
}

/// Approves or denies as told, and keeps every request it was asked.
struct Recorder {
    decision: Decision,
    reason: Option<String>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl Recorder {
    fn new(decision: Decision, reason: Option<&str>) -> Self {
        Recorder {
            decision,
            reason: reason.map(str::to_owned),
            asked: Mutex::default(),
        }
    }
}

impl Approver for Recorder {
    fn ask(&self, request: ApprovalRequest) -> agent::approval::Answers<'_> {
        let answers = request
            .calls
            .iter()
            .map(|c| ApprovalAnswer {
                call_id: c.call_id.clone(),
                decision: self.decision,
                reason: self.reason.clone(),
            })
            .collect();
        self.asked.lock().unwrap().push(request);
        Box::pin(std::future::ready(answers))
    }
}

impl World {
    async fn setup(&self, text: &str) -> RunSetup {
        self.app
            .prepare_turn(
                TurnRequest {
                    conversation_id: self.conversation.clone(),
                    text: Some(text.into()),
                    ..TurnRequest::default()
                },
                &Settings::default(),
            )
            .await
            .unwrap()
    }

    async fn run(
        &self,
        setup: RunSetup,
        approver: &dyn Approver,
        events: &Events,
        cancel: CancellationToken,
    ) -> StopReason {
        let sink = events.clone();
        let sink = move |e: RunEvent| sink.0.lock().unwrap().push(e);
        agent::run(
            setup,
            RunServices {
                store: &self.store,
                tools: self.app.host(),
                approver,
                sink: &sink,
                controls: &switchboard_core::agent::controls::CallControls::default(),
            },
            cancel,
        )
        .await
    }

    /// A turn that runs the call `call_id` of the answer `message_id` again (its card's Retry).
    async fn retry(&self, message_id: &str, call_id: &str) -> Result<RunSetup, CoreError> {
        self.app
            .prepare_turn(
                TurnRequest {
                    conversation_id: self.conversation.clone(),
                    retry_call: Some(CallRef {
                        message_id: message_id.into(),
                        call_id: call_id.into(),
                    }),
                    ..TurnRequest::default()
                },
                &Settings::default(),
            )
            .await
    }

    async fn say(&self, text: &str, approver: &dyn Approver) -> (StopReason, Events) {
        let events = Events::default();
        let setup = self.setup(text).await;
        let reason = self
            .run(setup, approver, &events, CancellationToken::new())
            .await;
        (reason, events)
    }

    async fn messages(&self) -> Vec<Message> {
        self.store
            .list_messages(self.conversation.clone())
            .await
            .unwrap()
    }

    /// The chat requests the mock received, oldest first.
    async fn requests(&self) -> Vec<Value> {
        self.mock
            .journal()
            .await
            .into_iter()
            .filter(|e| e["path"] == "/v1/chat/completions")
            .map(|e| e["body"].clone())
            .collect()
    }
}

/// Every call's result (a call run, or one denied) was saved before the window was shown it.
fn results_saved_before_shown(events: &[RunEvent]) {
    let mut saved: Vec<String> = Vec::new();
    for event in events {
        match event {
            RunEvent::MessageSaved { message } if message.role == Role::Tool => {
                saved.push(message.tool_call_id.clone().unwrap());
            }
            RunEvent::ToolFinished { call_id, .. }
            | RunEvent::ToolDecided {
                call_id,
                decision: ToolDecision::Denied,
                ..
            } => assert!(
                saved.contains(call_id),
                "{call_id} shown before it was saved"
            ),
            _ => {}
        }
    }
}

fn shape(messages: &[Message]) -> Vec<(Role, MessageStatus)> {
    messages.iter().map(|m| (m.role, m.status)).collect()
}

fn tools_offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

const ALLOW: FixedApprover = FixedApprover(Decision::AllowOnce);

#[tokio::test]
async fn one_tool_call_runs_on_a_real_server_and_the_model_answers_with_its_result() {
    let Some(w) = world("one_tool_call", &["everything"]).await else {
        return;
    };
    let (reason, events) = w.say("Add 2 and 3", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let messages = w.messages().await;
    assert_eq!(
        shape(&messages),
        [
            (Role::User, MessageStatus::Complete),
            (Role::Assistant, MessageStatus::Complete),
            (Role::Tool, MessageStatus::Complete),
            (Role::Assistant, MessageStatus::Complete),
        ]
    );
    assert_eq!(
        messages[1].tool_calls.as_ref().unwrap()[0].name,
        "everything__get-sum"
    );
    assert_eq!(messages[2].tool_call_id.as_deref(), Some("call_sum"));
    assert!(
        messages[2].content.as_deref().unwrap().contains('5'),
        "{:?}",
        messages[2].content
    );
    assert!(!messages[2].is_error);
    assert_eq!(
        messages[3].content.as_deref(),
        Some("The sum of 2 and 3 is 5.")
    );
    assert_eq!(messages[3].output_tokens, Some(9));
    // The model got the tool's result back.
    let requests = w.requests().await;
    assert_eq!(requests.len(), 2);
    let sent = &requests[1]["messages"];
    let tool = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool["tool_call_id"], "call_sum");
    assert!(tool["content"].to_string().contains('5'));
    // The window saw it happen, in order.
    let kinds = events.kinds();
    let at = |k: &str| {
        kinds
            .iter()
            .position(|x| x == k)
            .unwrap_or_else(|| panic!("no {k} in {kinds:?}"))
    };
    assert!(at("run_started") < at("tool_call_proposed"));
    assert!(at("tool_call_proposed") < at("approval_required"));
    assert!(at("approval_required") < at("tool_started"));
    assert!(at("tool_started") < at("tool_finished"));
    assert_eq!(kinds.last().unwrap(), "run_finished");
    assert!(kinds.contains(&"text_delta".to_owned()));
    let statuses: Vec<String> = events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::Status { text } => Some(text),
            _ => None,
        })
        .collect();
    assert!(statuses.contains(&"Thinking…".to_owned()), "{statuses:?}");
    assert!(
        statuses
            .iter()
            .any(|s| s.starts_with("Using everything · ")),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&"Writing the answer…".to_owned()),
        "{statuses:?}"
    );
    // The record of the call keeps the whole result and how it was allowed.
    let runs = w
        .store
        .list_tool_runs(w.conversation.clone())
        .await
        .unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (runs[0].server.as_str(), runs[0].tool.as_str()),
        ("everything", "get-sum")
    );
    assert_eq!(runs[0].decision_scope, Some(ApprovalScope::Once));
    assert!(runs[0].result.as_deref().unwrap().contains("content"));
    // A first message names the conversation.
    let title = w
        .app
        .conversations()
        .get(&w.conversation)
        .await
        .unwrap()
        .conversation
        .title;
    assert_eq!(title, "Add 2 and 3");
}

#[tokio::test]
async fn a_model_without_tool_calling_calls_tools_in_text_through_the_same_loop() {
    let Some(w) = world("prompted_tools", &["everything"]).await else {
        return;
    };
    let set = w
        .app
        .providers()
        .set_tool_mode(
            "Mock",
            "gpt-4o",
            Some(switchboard_core::providers::ToolMode::Prompted),
        )
        .await
        .unwrap();
    assert_eq!(set.source, switchboard_core::app::ToolModeSource::Person);
    let (reason, events) = w.say("Add 2 and 3, calling in text", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    // Recorded exactly as a native call is: the answer with its call, the result, the answer.
    let messages = w.messages().await;
    assert_eq!(
        shape(&messages),
        [
            (Role::User, MessageStatus::Complete),
            (Role::Assistant, MessageStatus::Complete),
            (Role::Tool, MessageStatus::Complete),
            (Role::Assistant, MessageStatus::Complete),
        ]
    );
    let call = &messages[1].tool_calls.as_ref().unwrap()[0];
    assert_eq!(call.name, "everything__get-sum");
    assert_eq!(messages[1].content.as_deref(), Some("I will add them.\n"));
    assert!(messages[2].content.as_deref().unwrap().contains('5'));
    assert_eq!(
        messages[3].content.as_deref(),
        Some("Worked out in text: the sum of 2 and 3 is 5.")
    );
    // The window never saw the call's markup, and was asked to approve it as any call.
    let shown: String = events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert!(!shown.contains("<tool_call>"), "{shown}");
    let kinds = events.kinds();
    assert!(kinds.contains(&"approval_required".to_owned()), "{kinds:?}");
    // The model was sent no tools of the API's own: they were in its system prompt, and the
    // result came back as text.
    let requests = w.requests().await;
    assert_eq!(requests.len(), 2);
    assert!(tools_offered(&requests[0]).is_empty(), "{}", requests[0]);
    let system = requests[0]["messages"][0].to_string();
    assert!(
        system.contains("# Tools") && system.contains("everything__get-sum"),
        "{system}"
    );
    let second = requests[1]["messages"].to_string();
    assert!(!second.contains("\"role\":\"tool\""), "{second}");
    assert!(
        second.contains("<tool_result name=\\\"everything__get-sum\\\">"),
        "{second}"
    );

    // Switched off, the model is offered nothing at all.
    let off = w
        .app
        .providers()
        .set_tool_mode(
            "Mock",
            "gpt-4o",
            Some(switchboard_core::providers::ToolMode::Off),
        )
        .await
        .unwrap();
    assert_eq!(off.mode, switchboard_core::providers::ToolMode::Off);
    let setup = w.setup("When does the ferry leave?").await;
    assert!(setup.tools.is_empty());
    // Not even Switchboard's own tools reach it, and the calls before are text to it.
    let (reason, _) = w.say("When does the ferry leave?", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let last = w.requests().await.pop().unwrap();
    assert!(last.get("tools").is_none(), "{last}");
    assert!(
        !last["messages"].to_string().contains("\"role\":\"tool\""),
        "{last}"
    );
}

#[tokio::test]
async fn three_rounds_run_one_after_another_until_the_model_answers() {
    let Some(w) = world("three_rounds", &["everything"]).await else {
        return;
    };
    let (reason, _) = w.say("Three rounds please", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let messages = w.messages().await;
    let tool_texts: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_deref().unwrap())
        .collect();
    assert_eq!(tool_texts.len(), 3);
    for (text, word) in tool_texts.iter().zip(["one", "two", "three"]) {
        assert!(text.contains(word), "{text}");
    }
    assert_eq!(
        messages.last().unwrap().content.as_deref(),
        Some("Done in three rounds.")
    );
    assert_eq!(w.requests().await.len(), 4);
}

#[tokio::test]
async fn a_tools_progress_reaches_the_window_while_it_runs() {
    let Some(w) = world("progress", &["fault"]).await else {
        return;
    };
    let (reason, events) = w.say("Show me progress", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let all = events.all();
    let at = |kind: &str| events.kinds().iter().position(|k| k == kind).unwrap();
    let progress: Vec<(String, f64, Option<f64>)> = all
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolProgress {
                call_id,
                progress,
                total,
                ..
            } => Some((call_id.clone(), *progress, *total)),
            _ => None,
        })
        .collect();
    assert_eq!(
        progress,
        [0.0, 1.0, 2.0].map(|p| ("call_g1".to_owned(), p, Some(3.0)))
    );
    let first = events
        .kinds()
        .iter()
        .position(|k| k == "tool_progress")
        .unwrap();
    assert!(at("tool_started") < first && first < at("tool_finished"));
}

#[tokio::test]
async fn a_long_result_reaches_the_window_as_a_preview_and_the_model_and_the_record_get_it_whole() {
    let Some(w) = world("big-result", &["fault"]).await else {
        return;
    };
    let (reason, events) = w.say("Fetch a big page", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let finished = events
        .all()
        .into_iter()
        .find_map(|e| match e {
            RunEvent::ToolFinished {
                content,
                full_length,
                ..
            } => Some((content, full_length)),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        finished.0.len(),
        switchboard_core::store::TOOL_PREVIEW_CHARS
    );
    let whole = finished.1.expect("the whole length is noted");
    let shown = events
        .all()
        .into_iter()
        .find_map(|e| match e {
            RunEvent::MessageSaved { message } if message.role == Role::Tool => Some(message),
            _ => None,
        })
        .unwrap();
    assert_eq!(shown.content, Some(finished.0));
    assert_eq!(shown.full_length, Some(whole));
    // Saved whole, read whole on demand, and sent whole to the model.
    let text = w
        .app
        .conversations()
        .message_text(&w.conversation, &shown.id)
        .await
        .unwrap();
    assert_eq!(text.chars().count(), usize::try_from(whole).unwrap());
    // (aimock's journal keeps request bodies up to 64 KB: the result is 2 × 20 KB.)
    let sent = &w.requests().await[1]["messages"];
    let result = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(result["content"].as_str().unwrap(), text);
    assert!(
        text.starts_with(&"x".repeat(20_000)),
        "the result itself, not a stand-in"
    );
}

#[tokio::test]
async fn an_image_structured_content_and_resource_links_reach_the_card_and_the_model_reads_text() {
    use switchboard_core::mcp::results::ResultPart;
    let Some(w) = world("rich-results", &["everything"]).await else {
        return;
    };
    let (reason, events) = w.say("Show me pictures and data", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let answer = events
        .all()
        .into_iter()
        .find_map(|e| match e {
            RunEvent::AnswerStarted { message } => Some(message.id),
            _ => None,
        })
        .unwrap();
    let finished: Vec<(String, bool)> = events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::ToolFinished { call_id, rich, .. } => Some((call_id, rich)),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 3);
    assert!(finished.iter().all(|(_, rich)| *rich), "{finished:?}");
    // Read back as a window opening the conversation reads it.
    let runs = w
        .store
        .list_tool_runs(w.conversation.clone())
        .await
        .unwrap();
    assert!(runs.iter().all(|r| r.rich));

    let view = |call: &'static str| {
        let app = &w.app;
        let conversation = w.conversation.clone();
        let answer = answer.clone();
        async move {
            app.conversations()
                .tool_result_view(&conversation, &answer, call)
                .await
                .unwrap()
        }
    };
    let image = view("call_img").await;
    assert!(
        matches!(&image.parts[..], [ResultPart::Image { mime_type, data }]
            if mime_type == "image/png" && data.starts_with("iVBORw0KGgo")),
        "{image:?}"
    );
    let weather = view("call_struct").await;
    assert!(weather.parts.is_empty());
    let structured = weather.structured.expect("structured content");
    assert!(structured["temperature"].is_number(), "{structured}");
    let links = view("call_links").await;
    assert_eq!(links.parts.len(), 2, "{links:?}");
    assert!(links
        .parts
        .iter()
        .all(|p| matches!(p, ResultPart::Link { uri, .. } if uri.starts_with("demo://"))));

    // The tool message names the image in its text; the image itself follows the round's
    // results as a user message (OpenAI's API takes no image in a tool message), because
    // this model takes images.
    let sent = w.requests().await[1]["messages"].clone();
    let sent = sent.as_array().unwrap();
    let image_result = sent
        .iter()
        .position(|m| m["role"] == "tool" && m["tool_call_id"] == "call_img")
        .unwrap();
    let text = sent[image_result]["content"].as_str().unwrap();
    assert!(text.contains("[image: image/png"), "{text}");
    assert!(!text.contains("iVBORw0KGgo"), "{text}");
    let last_result = sent.iter().rposition(|m| m["role"] == "tool").unwrap();
    let images = &sent[last_result + 1];
    assert_eq!(images["role"], "user", "{images}");
    let parts = images["content"].as_array().unwrap();
    assert_eq!(
        parts[0]["text"],
        "The images the tool everything__get-tiny-image returned (call call_img):"
    );
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url}"
    );
    assert_eq!(parts.len(), 2, "{images}");
    // The image is the conversation's one file from a tool, kept with the tool message.
    let files = w.app.artifacts(&w.conversation).await.unwrap();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(
        (files[0].file.name.as_str(), files[0].call_id.as_str()),
        ("image-1.png", "call_img")
    );

    // The person says this model does not take images: the next answer is told so instead.
    w.app
        .set_model_takes_images("Mock", "gpt-4o", Some(false))
        .await
        .unwrap();
    let (reason, _) = w.say("Say goodbye", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let sent = w.requests().await.last().unwrap()["messages"].clone();
    let sent = sent.as_array().unwrap();
    assert!(!Value::from(sent.clone()).to_string().contains("image_url"));
    let image_result = sent
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_img")
        .unwrap();
    assert!(
        image_result["content"].as_str().unwrap().ends_with(
            "[The image “image-1.png” of this result is not given to you: this model does not take images]"
        ),
        "{image_result}"
    );
}

#[tokio::test]
async fn the_model_reads_a_servers_resource_itself_through_the_same_approvals() {
    let Some(w) = world("read-resource", &["everything"]).await else {
        return;
    };
    let (reason, events) = w.say("Read resource seven", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    // Offered beside the server's tools, naming the servers that have resources.
    let first = &w.requests().await[0];
    let offered = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "switchboard__read_resource")
        .unwrap_or_else(|| panic!("{}", first["tools"]));
    assert_eq!(
        offered["function"]["parameters"]["properties"]["server"]["enum"],
        json!(["everything"])
    );
    // Each call was asked about like any other (the approver saw both), and recorded.
    let asked = events
        .all()
        .into_iter()
        .filter(|e| matches!(e, RunEvent::ApprovalRequired { .. }))
        .count();
    assert!(asked >= 1, "the calls were put to the approver");
    let runs = w
        .store
        .list_tool_runs(w.conversation.clone())
        .await
        .unwrap();
    let read = runs.iter().find(|r| r.call_id == "call_read").unwrap();
    assert_eq!(
        (read.server.as_str(), read.tool.as_str(), read.is_error),
        ("switchboard/built-in", "read_resource", false)
    );
    assert_eq!(read.display_name, "Switchboard · Read Resource");
    let missing = runs.iter().find(|r| r.call_id == "call_missing").unwrap();
    assert!(missing.is_error, "{missing:?}");
    // The model read the resource's text, and the server's refusal of the other.
    let sent = w.requests().await[1]["messages"].clone();
    let result = |id: &str| {
        sent.as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let text = result("call_read");
    assert!(
        text.starts_with("[resource demo://resource/dynamic/text/7]\n"),
        "{text}"
    );
    assert!(
        result("call_missing").starts_with("Error: "),
        "{}",
        result("call_missing")
    );
}

/// Issue 61: the model is given each skill's name and description only; it loads a skill's
/// instructions, then one of its files, without being asked about, and nothing outside the
/// skill, nor a skill switched off in the conversation, is loaded; nothing the skill holds runs.
#[tokio::test]
async fn a_skill_is_listed_by_its_description_and_loaded_on_demand_and_nothing_it_holds_runs() {
    let Some(w) = world("skills", &[]).await else {
        return;
    };
    let source = tempfile::tempdir().unwrap();
    let marker = source.path().join("ran");
    let write = |path: &str, text: &str| {
        let file = source.path().join("pdf").join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write(
        "SKILL.md",
        &format!(
            "---\nname: pdf-forms\ndescription: Fill PDF forms from a table of data.\n\
             hooks:\n  on_load: touch {}\n---\n# PDF forms\nSECRET-STEPS-42: read \
             reference/FORMS.md, then fill each field.\n",
            marker.display()
        ),
    );
    write("reference/FORMS.md", "FORMS-TABLE-7: name, date, amount");
    write(
        "scripts/fill.sh",
        &format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    w.app.add_skill(source.path().join("pdf")).await.unwrap();
    let notes = source.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(
        notes.join("SKILL.md"),
        "---\nname: notes-style\ndescription: How notes are written.\n---\nNOTES-BODY\n",
    )
    .unwrap();
    w.app.add_skill(notes).await.unwrap();
    w.app
        .set_skill_enabled("notes-style", false, Some(&w.conversation), None)
        .await
        .unwrap();

    let (reason, events) = w.say("Fill the form with the skill", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let requests = w.requests().await;
    // First: the list, not the instructions; the skill switched off here is not listed.
    let first = requests[0].to_string();
    let load = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "switchboard__load_skill")
        .unwrap_or_else(|| panic!("{first}"));
    let description = load["function"]["description"].as_str().unwrap();
    assert!(
        description.contains("- pdf-forms: Fill PDF forms from a table of data."),
        "{description}"
    );
    assert!(
        !first.contains("SECRET-STEPS-42") && !first.contains("notes-style"),
        "{first}"
    );
    // Loading asked nobody.
    assert!(!events
        .all()
        .iter()
        .any(|e| matches!(e, RunEvent::ApprovalRequired { .. })));
    let result = |request: &Value, id: &str| {
        request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("{id}: {request}"))["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let instructions = result(&requests[1], "call_skill");
    assert!(instructions.contains("SECRET-STEPS-42"), "{instructions}");
    assert!(
        instructions.contains("from the person's skills folder"),
        "{instructions}"
    );
    assert!(
        instructions.contains("- scripts/fill.sh (") && instructions.contains("nothing runs it"),
        "{instructions}"
    );
    assert!(result(&requests[2], "call_file").contains("FORMS-TABLE-7"));
    let escape = result(&requests[2], "call_escape");
    assert!(
        escape.starts_with("Error: ") && escape.contains("has no file"),
        "{escape}"
    );
    let off = result(&requests[2], "call_off");
    assert!(off.contains("there is no skill “notes-style”"), "{off}");
    assert!(!marker.exists(), "nothing the skill holds ran");
    // The header's count says what the list of skills takes; the skill's page, who used it.
    let used = w
        .store
        .context_use(w.conversation.clone())
        .await
        .unwrap()
        .unwrap();
    assert!(used.skills > 100 && used.skills <= used.tools, "{used:?}");
    let detail = w.app.skill_detail("pdf-forms").await.unwrap();
    assert_eq!(detail.used_in.len(), 1);
    assert_eq!(detail.used_in[0].conversation_id, w.conversation);
}

/// Issue 61: a skill's script is offered to the model only once the person allowed that
/// skill's scripts; the call asks like a server's tool, runs in its sandbox with the model's
/// arguments and input, and the model reads what it printed and the files it wrote. A script
/// changed after allowing is no longer offered.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_skills_script_runs_only_when_allowed_and_asks_each_time() {
    if switchboard_core::sandbox::linux::landlock_abi().is_none() {
        eprintln!("SKIPPED: this kernel has no Landlock, and scripts run only in a sandbox");
        return;
    }
    let Some(w) = world("skill_script", &[]).await else {
        return;
    };
    let source = tempfile::tempdir().unwrap();
    let skill = source.path().join("tally");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: tally\ndescription: Adds numbers.\n---\nRun scripts/tally.py.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("scripts/tally.py"),
        "import sys\nprint('TALLY', sum(int(a) for a in sys.argv[1:]), sys.stdin.read())\n\
         open('tally.txt', 'w').write('7')\n",
    )
    .unwrap();
    w.app.add_skill(skill).await.unwrap();
    let offers = |setup: &RunSetup| setup.tools.iter().any(|t| t.tool == "run_skill_script");
    assert!(
        !offers(&w.setup("Tally with the skill").await),
        "not offered before the person allows the skill's scripts"
    );
    w.app.set_skill_scripts("tally", true, None).await.unwrap();
    let setup = w.setup("Tally with the skill").await;
    let tool = setup
        .tools
        .iter()
        .find(|t| t.tool == "run_skill_script")
        .expect("offered once allowed");
    assert!(
        tool.description.contains("- tally: scripts/tally.py"),
        "{}",
        tool.description
    );

    // Asked even where everything else runs unasked.
    w.store
        .set_auto_approve(w.conversation.clone(), true)
        .await
        .unwrap();
    let recorder = Recorder::new(Decision::AllowOnce, None);
    let (reason, events) = w.say("Tally with the skill", &recorder).await;
    assert_eq!(reason, StopReason::Completed);
    let asked: Vec<_> = events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::ApprovalRequired { calls, .. } => Some(calls),
            _ => None,
        })
        .collect();
    assert_eq!(asked.len(), 1, "the person is asked before it runs");
    assert!(asked[0][0].once_only && asked[0][0].suggested_rule.is_none());
    let requests = w.requests().await;
    let result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_tally")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(result.contains("TALLY 7 from stdin"), "{result}");
    assert!(result.contains("exited with code 0"), "{result}");
    assert!(result.contains("- tally.txt (1 bytes)"), "{result}");

    // Changed after allowing: set aside until allowed again.
    std::fs::write(
        w.app.skill_library().dir().join("tally/scripts/tally.py"),
        "print('other')\n",
    )
    .unwrap();
    assert!(!offers(&w.setup("Tally with the skill").await));
}

/// Issue 61: a server's skills (the MCP Skills extension, a scripted server) are listed without
/// reading a file, off until the person switches one on; loaded from that server only, each
/// file checked against the digest it was listed with (a tampered one is refused), and nothing
/// the entry does not list is read.
#[tokio::test]
async fn a_servers_skill_is_off_until_approved_and_each_file_is_checked_against_its_listing() {
    let Some(mut w) = world("served-skills", &[]).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write(
        "pdf/SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms the server's way.\n---\nSERVED-STEPS-9\n",
    );
    write("pdf/reference/FORMS.md", "the forms");
    write("pdf/notes.md", "NOTES-31");
    let launch = stdio_launch(
        &peers().join(".venv/bin/python").to_string_lossy(),
        &[
            &peers().join("skills_server.py").to_string_lossy(),
            &dir.path().to_string_lossy(),
            "--tamper",
            "pdf/reference/FORMS.md",
        ],
        STARTUP,
    );
    w.app.host().spawn("docs", launch).await;
    support::server_running(w.app.host(), "docs").await;

    let listed = w.app.skills().await.unwrap();
    let skill = listed.iter().find(|s| s.name == "docs/pdf").unwrap();
    assert!(
        !skill.enabled,
        "a server's skill is off until the person switches it on"
    );
    assert_eq!(skill.files.len(), 3);
    assert!(
        !dir.path().join("reads.log").exists(),
        "listing reads no file"
    );
    let setup = w.setup("Use the served skill").await;
    assert!(setup.skills.skills.is_empty());

    // What is approved is what was shown: a switch sent for another listing is refused.
    let refused = w
        .app
        .set_skill_enabled("docs/pdf", true, None, Some("not-what-it-lists"))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("changed on its server"),
        "{refused}"
    );
    w.app
        .set_skill_enabled("docs/pdf", true, None, skill.approval.as_deref())
        .await
        .unwrap();
    // Its server switched off in a conversation switches its skills off there.
    let docs = |enabled| switchboard_core::store::ToolToggle {
        server: "docs".into(),
        tool: None,
        enabled,
    };
    let conversation = w.conversation.clone();
    let store = &w.store;
    store
        .set_tool_toggle(conversation.clone(), docs(false))
        .await
        .unwrap();
    let setup = w.setup("Use the served skill").await;
    assert!(setup.skills.served.is_empty());
    store
        .set_tool_toggle(conversation, docs(true))
        .await
        .unwrap();
    let (reason, _) = w.say("Use the served skill", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let requests = w.requests().await;
    let description = requests
        .iter()
        .find_map(|r| {
            r["tools"].as_array()?.iter().find_map(|t| {
                (t["function"]["name"] == "switchboard__load_skill")
                    .then(|| t["function"]["description"].as_str().unwrap().to_owned())
            })
        })
        .unwrap();
    assert!(
        description.contains("- docs/pdf (from the server “docs”): Fill PDF forms"),
        "{description}"
    );
    let n = requests.len();
    let result = |id: &str| {
        requests[n - 1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("{id}"))["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let instructions = result("call_served");
    assert!(instructions.contains("SERVED-STEPS-9"), "{instructions}");
    assert!(
        instructions.contains("from the MCP server “docs”"),
        "{instructions}"
    );
    let tampered = result("call_tampered");
    assert!(
        tampered.contains("not what the server listed"),
        "{tampered}"
    );
    assert!(!tampered.contains("evil.example"), "{tampered}");
    assert!(result("call_notes").contains("NOTES-31"));
    assert!(result("call_outside").contains("has no file"));
    // The second round's reads run at once, in any order.
    let reads = std::fs::read_to_string(dir.path().join("reads.log")).unwrap();
    let mut reads: Vec<&str> = reads.lines().collect();
    assert_eq!(reads.first(), Some(&"skill://pdf/SKILL.md"));
    reads.sort_unstable();
    assert_eq!(
        reads,
        [
            "skill://pdf/SKILL.md",
            "skill://pdf/notes.md",
            "skill://pdf/reference/FORMS.md"
        ],
        "only what the model asked for, and only listed files"
    );
    // Its instructions are shown before it is switched on, as its server serves them.
    w.app
        .set_skill_enabled("docs/pdf", false, None, None)
        .await
        .unwrap();
    let detail = w.app.skill_detail("docs/pdf").await.unwrap();
    assert!(!detail.skill.enabled);
    assert!(
        detail.instructions.contains("SERVED-STEPS-9"),
        "{}",
        detail.instructions
    );
    let approval = detail.skill.approval.clone();
    w.app
        .set_skill_enabled("docs/pdf", true, None, approval.as_deref())
        .await
        .unwrap();
    // A rule that asks before the server's resources are read asks before its skill loads.
    std::fs::create_dir_all(w.app.policy_file().parent().unwrap()).unwrap();
    std::fs::write(
        w.app.policy_file(),
        json!({"rules": [{"server": "docs", "tool": "read_resource", "outcome": "ask"}]})
            .to_string(),
    )
    .unwrap();
    // In a conversation of its own (the model's script starts from its first step again).
    w.conversation = w
        .app
        .create_conversation(None, None, &switchboard_core::app::ProfileChoice::Default)
        .await
        .unwrap()
        .id;
    let recorder = Recorder::new(Decision::Deny, None);
    let (_, events) = w.say("Use the served skill", &recorder).await;
    let asked: Vec<String> = events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::ApprovalRequired { calls, .. } => Some(calls),
            _ => None,
        })
        .flatten()
        .map(|c| c.tool)
        .collect();
    assert!(
        !asked.is_empty() && asked.iter().all(|t| t == "load_skill"),
        "{asked:?} {:?}",
        events.kinds()
    );
    w.app.host().stop("docs").await;
}

/// A server that never answers `skills/list` holds no turn's start: its skills are left out
/// (after a few seconds), and the turn begins with the others.
#[tokio::test]
async fn a_server_that_never_lists_its_skills_holds_nothing_up() {
    let Some(w) = world("hung-skills", &[]).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pdf")).unwrap();
    std::fs::write(
        dir.path().join("pdf/SKILL.md"),
        "---\nname: pdf\ndescription: d\n---\nx\n",
    )
    .unwrap();
    let launch = stdio_launch(
        &peers().join(".venv/bin/python").to_string_lossy(),
        &[
            &peers().join("skills_server.py").to_string_lossy(),
            &dir.path().to_string_lossy(),
            "--hang-list",
        ],
        STARTUP,
    );
    w.app.host().spawn("hung", launch).await;
    support::server_running(w.app.host(), "hung").await;
    let listed = w.app.skills().await.unwrap();
    assert!(listed.iter().all(|s| !s.name.starts_with("hung/")));
    let setup = w.setup("Use the served skill").await;
    assert!(setup.skills.served.is_empty());
    w.app.host().stop("hung").await;
}

#[tokio::test]
async fn a_results_files_are_kept_listed_read_saved_and_exported_and_seed_002s_contract_opens_the_canvas(
) {
    let Some(w) = world("artifacts", &["fault"]).await else {
        return;
    };
    let (reason, events) = w.say("Make the quarterly report", &ALLOW).await;
    // It failed once under heavy load (session 42): say what the run said, should it again.
    assert_eq!(
        reason,
        StopReason::Completed,
        "{}",
        serde_json::to_string(&events.all()).unwrap()
    );
    let finished: Vec<(String, Vec<Attachment>, Option<String>)> = events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::ToolFinished {
                call_id,
                artifacts,
                open_canvas,
                is_error: false,
                ..
            } => Some((call_id, artifacts, open_canvas)),
            _ => None,
        })
        .collect();
    let of = |call: &str| finished.iter().find(|f| f.0 == call).expect(call).clone();
    // The contract's files, the canvas to open at its primary file (the CSV).
    let (_, report, open) = of("call_report");
    let names: Vec<(&str, &str)> = report
        .iter()
        .map(|a| (a.name.as_str(), a.mime.as_str()))
        .collect();
    assert_eq!(
        names,
        [("report.html", "text/html"), ("scores.csv", "text/csv")]
    );
    assert_eq!(open.as_deref(), Some(report[1].sha256.as_str()));
    // A 5 MB picture is kept whole (the model is given it within its API's limits).
    let (_, picture, open) = of("call_picture");
    assert_eq!(open, None);
    assert_eq!(picture.len(), 1);
    assert_eq!(picture[0].kind, AttachmentKind::Image);
    assert!(picture[0].size > 5_000_000, "{:?}", picture[0]);
    assert_eq!(w.requests().await.len(), 2);

    // Listed for the canvas and the command line, read back, saved where asked.
    let files = w.app.artifacts(&w.conversation).await.unwrap();
    assert_eq!(files.len(), 3);
    let (_, html) = w
        .app
        .artifact_bytes(&w.conversation, &report[0].sha256)
        .await
        .unwrap();
    assert!(String::from_utf8(html).unwrap().contains("<script>"));
    let out = w._home.path().join("saved.csv");
    w.app
        .save_artifact(&w.conversation, &report[1].sha256, &out)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "name,score\nAda,92\nGrace,88\nLinus,75\n"
    );
    // Only a file of this conversation's tool results can be read through it.
    let other = w.app.conversations().create(None, "").await.unwrap();
    assert!(w
        .app
        .artifact_bytes(&other.id, &report[0].sha256)
        .await
        .is_err());

    // An export names the files with the tool messages that carry them (their bytes go with
    // them from a database on disk: the store's tests show that).
    let exported = w.app.conversations().export(&w.conversation).await.unwrap();
    let mut named: Vec<String> = exported
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .flat_map(|m| m.attachments.iter().map(|a| a.name.clone()))
        .collect();
    named.sort(); // the two calls run at once: either may be saved first
    assert_eq!(named, ["image-1.png", "report.html", "scores.csv"]);
}

#[tokio::test]
async fn with_descriptions_on_the_model_says_in_a_few_words_what_a_running_call_does() {
    let Some(w) = world("describe", &["fault"]).await else {
        return;
    };
    let settings = Settings {
        describe_calls: true,
        ..Settings::default()
    };
    let prepare = |conversation: String| {
        w.app.prepare_turn(
            TurnRequest {
                conversation_id: conversation,
                text: Some("Show me progress".into()),
                ..TurnRequest::default()
            },
            &settings,
        )
    };
    let setup = prepare(w.conversation.clone()).await.unwrap();
    assert_eq!(setup.limits.describe_within, Some(Duration::from_secs(2)));
    let events = Events::default();
    let reason = w
        .run(setup, &ALLOW, &events, CancellationToken::new())
        .await;
    assert_eq!(reason, StopReason::Completed);
    let all = events.all();
    let described = all
        .iter()
        .position(|e| {
            *e == RunEvent::ToolDescribed {
                call_id: "call_g1".into(),
                description: "Counting through three slow steps".into(),
            }
        })
        .expect("the call is described, quotes and full stop gone");
    let status = all
        .iter()
        .position(|e| {
            *e == RunEvent::Status {
                text: "Counting through three slow steps…".into(),
            }
        })
        .expect("the status line says it");
    let kinds = events.kinds();
    let at = |kind: &str| kinds.iter().position(|k| k == kind).unwrap();
    // While the call runs: before it ends. (Not necessarily after `tool_started`: the request
    // for words goes out with the call, and its answer can beat the call's start record to the
    // database on a loaded machine; the status line then names the call a moment early.)
    assert!(status < at("tool_finished"), "{kinds:?}");
    assert!(described < at("tool_finished"), "{kinds:?}");
    let asked: Vec<Value> = w
        .mock
        .journal()
        .await
        .into_iter()
        .map(|e| e["body"].clone())
        .filter(|b| {
            b["messages"][0]["content"]
                .as_str()
                .is_some_and(|c| c.contains("status line"))
        })
        .collect();
    assert_eq!(asked.len(), 1, "one small request for the one call");
    assert!(
        asked[0].get("tools").is_none(),
        "offered no tools: {}",
        asked[0]
    );
    let run = &w
        .store
        .list_tool_runs(w.conversation.clone())
        .await
        .unwrap()[0];
    assert_eq!(
        run.description.as_deref(),
        Some("Counting through three slow steps")
    );
    // The description's request counts with the answer's rounds in what the conversation used.
    let answers = w
        .store
        .list_messages(w.conversation.clone())
        .await
        .unwrap()
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .count();
    let used = w
        .store
        .conversation_usage(w.conversation.clone())
        .await
        .unwrap();
    assert_eq!(
        used.requests,
        i64::try_from(answers).unwrap() + 1,
        "{used:?}"
    );

    // Too late: the status line keeps the tool's name, and the call is not held up.
    let other = w.app.conversations().create(None, "").await.unwrap().id;
    let mut setup = prepare(other.clone()).await.unwrap();
    // No time at all: whatever the machine's load, the answer comes after the deadline.
    setup.limits.describe_within = Some(Duration::ZERO);
    let events = Events::default();
    let reason = w
        .run(setup, &ALLOW, &events, CancellationToken::new())
        .await;
    assert_eq!(reason, StopReason::Completed);
    assert!(!events.kinds().contains(&"tool_described".to_owned()));
    assert!(events.all().contains(&RunEvent::Status {
        text: "Using fault · Progress…".into()
    }));
    let run = &w.store.list_tool_runs(other).await.unwrap()[0];
    assert_eq!(run.description, None);
}

#[tokio::test]
async fn four_parallel_calls_run_at_once_and_their_results_come_back_in_the_models_order() {
    let Some(w) = world("four_parallel", &["fault"]).await else {
        return;
    };
    let recorder = Recorder::new(Decision::AllowOnce, None);
    let (reason, events) = w.say("Four at once", &recorder).await;
    assert_eq!(reason, StopReason::Completed);
    // One dialog for the four calls.
    let asked = recorder.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].calls.len(), 4);
    // All four started before the first one finished: they ran at once.
    let kinds = events.kinds();
    let last_start = kinds.iter().rposition(|k| k == "tool_started").unwrap();
    let first_finish = kinds.iter().position(|k| k == "tool_finished").unwrap();
    assert!(last_start < first_finish, "{kinds:?}");
    // The shortest finished first, and was saved first; the model reads them in its order.
    let finished: Vec<String> = events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::ToolFinished { call_id, .. } => Some(call_id),
            _ => None,
        })
        .collect();
    assert_eq!(finished[0], "call_p4");
    let saved: Vec<String> = w
        .messages()
        .await
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.tool_call_id.unwrap())
        .collect();
    let mut by_finish = finished.clone();
    by_finish.dedup();
    assert_eq!(saved, by_finish, "each result saved as its call finished");
    results_saved_before_shown(&events.all());
    let sent = &w.requests().await[1]["messages"];
    let ids: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_p1", "call_p2", "call_p3", "call_p4"]);
}

#[tokio::test]
async fn at_the_round_cap_the_model_answers_once_more_with_tools_forbidden() {
    let Some(w) = world("max_rounds", &["everything"]).await else {
        return;
    };
    let mut setup = w.setup("Loop forever").await;
    setup.limits.max_rounds = 2;
    let events = Events::default();
    let reason = w
        .run(setup, &ALLOW, &events, CancellationToken::new())
        .await;
    assert_eq!(reason, StopReason::MaxRounds);
    let requests = w.requests().await;
    assert_eq!(requests.len(), 3, "two rounds and the last answer");
    assert_eq!(requests[2]["tool_choice"], "none");
    assert!(!tools_offered(&requests[2]).is_empty(), "tools stay listed");
    assert_eq!(
        w.messages().await.last().unwrap().content.as_deref(),
        Some("Here is what I found so far: the echo keeps answering.")
    );
    let Some(RunEvent::RunFinished { message, .. }) = events.all().pop() else {
        panic!("no run_finished last");
    };
    assert!(message.unwrap().contains("2 rounds"));
}

#[tokio::test]
async fn three_failed_calls_in_a_row_stop_the_run_and_say_why() {
    let Some(w) = world("three_failures", &["everything"]).await else {
        return;
    };
    let (reason, events) = w.say("Break things", &ALLOW).await;
    assert_eq!(reason, StopReason::TooManyFailures);
    assert_eq!(w.requests().await.len(), 1, "no second round");
    let tools: Vec<Message> = w
        .messages()
        .await
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert_eq!(tools.len(), 3);
    assert!(tools.iter().all(|m| m.is_error));
    let text = |i: usize| tools[i].content.clone().unwrap();
    assert!(
        text(0).contains("There is no tool named `nowhere__missing`"),
        "{}",
        text(0)
    );
    assert!(
        text(0).contains("everything__echo"),
        "names the tools there are"
    );
    assert!(text(1).contains("not valid JSON"), "{}", text(1));
    assert!(text(2).contains("There is no tool named"), "{}", text(2));
    let Some(RunEvent::RunFinished { message, .. }) = events.all().pop() else {
        panic!("no run_finished last");
    };
    assert!(message.unwrap().contains("3 tool calls in a row failed"));
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_the_model_corrects() {
    let Some(w) = world("unknown_tool", &["everything"]).await else {
        return;
    };
    let (reason, _) = w.say("Typo then fix", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let requests = w.requests().await;
    let first_result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert!(first_result["content"]
        .as_str()
        .unwrap()
        .contains("There is no tool named `everything__ech`"));
    assert_eq!(
        w.messages().await.last().unwrap().content.as_deref(),
        Some("Echoed hi.")
    );
}

#[tokio::test]
async fn a_denied_call_does_not_run_and_the_model_reads_the_reason() {
    let Some(w) = world("deny", &["everything"]).await else {
        return;
    };
    let recorder = Recorder::new(Decision::Deny, Some("not on my machine"));
    let (reason, events) = w.say("Delete everything", &recorder).await;
    assert_eq!(reason, StopReason::Completed);
    assert!(!events.kinds().contains(&"tool_started".to_owned()));
    assert!(events.kinds().contains(&"tool_decided".to_owned()));
    results_saved_before_shown(&events.all());
    let asked = recorder.asked.lock().unwrap()[0].calls[0].clone();
    assert_eq!(asked.display_name, "everything · Echo Tool");
    assert_eq!(asked.arguments, "{\n  \"message\": \"rm -rf /\"\n}");
    let sent = &w.requests().await[1]["messages"];
    let tool = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(tool["content"]
        .as_str()
        .unwrap()
        .contains("The user denied this call. Their reason: not on my machine"));
    let runs = w
        .store
        .list_tool_runs(w.conversation.clone())
        .await
        .unwrap();
    assert_eq!(runs[0].decision, Some(ToolDecision::Denied));
    // What the person refused has no Retry: Rust refuses it too.
    let refused = w
        .retry(&runs[0].message_id, &runs[0].call_id)
        .await
        .err()
        .unwrap();
    assert!(refused.to_string().contains("not allowed"), "{refused}");
}

#[tokio::test]
async fn allowing_for_the_conversation_stops_asking_about_that_tool() {
    let Some(w) = world("allow_conversation", &["everything"]).await else {
        return;
    };
    let recorder = Recorder::new(Decision::AllowConversation, None);
    let (reason, _) = w.say("Three rounds please", &recorder).await;
    assert_eq!(reason, StopReason::Completed);
    assert_eq!(
        recorder.asked.lock().unwrap().len(),
        1,
        "asked in round 1 only"
    );
    let approvals = w.app.tool_approvals().await.unwrap();
    assert_eq!(approvals.len(), 1);
    assert_eq!(
        approvals[0].conversation_id.as_deref(),
        Some(w.conversation.as_str())
    );
    w.app
        .revoke_tool_approval("everything", "echo", Some(&w.conversation))
        .await
        .unwrap();
    assert!(w.app.tool_approvals().await.unwrap().is_empty());
}

#[tokio::test]
async fn stop_during_the_stream_keeps_the_partial_answer_marked_stopped() {
    let Some(w) = world("stop_stream", &[]).await else {
        return;
    };
    let cancel = CancellationToken::new();
    let events = Events::default();
    let setup = w.setup("Tell me a slow story").await;
    let watcher = {
        let (events, cancel) = (events.clone(), cancel.clone());
        tokio::spawn(async move {
            loop {
                let deltas = events.kinds().iter().filter(|k| *k == "text_delta").count();
                if deltas >= 3 {
                    cancel.cancel();
                    return;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let reason = w.run(setup, &ALLOW, &events, cancel).await;
    watcher.await.unwrap();
    assert_eq!(reason, StopReason::Cancelled);
    let answer = w.messages().await.pop().unwrap();
    assert_eq!(answer.status, MessageStatus::Interrupted);
    assert_eq!(
        answer.finish_reason,
        Some(switchboard_core::store::Finish::Stopped)
    );
    let partial = answer.content.unwrap();
    assert!(partial.starts_with("Once"), "{partial}");
    assert!(partial.len() < 100, "the story was cut: {partial}");
}

#[tokio::test]
async fn stop_during_a_slow_tool_cancels_it_and_ends_the_run() {
    let Some(w) = world("stop_tool", &["fault"]).await else {
        return;
    };
    let cancel = CancellationToken::new();
    let events = Events::default();
    let setup = w.setup("Wait for the slow tool").await;
    let watcher = {
        let (events, cancel) = (events.clone(), cancel.clone());
        tokio::spawn(async move {
            while !events.kinds().contains(&"tool_started".to_owned()) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        })
    };
    let reason = w.run(setup, &ALLOW, &events, cancel).await;
    watcher.await.unwrap();
    assert_eq!(reason, StopReason::Cancelled);
    let tool = w.messages().await.pop().unwrap();
    assert_eq!(tool.role, Role::Tool);
    assert!(tool.is_error);
    assert!(tool.content.unwrap().contains("stopped before it finished"));
    assert_eq!(w.requests().await.len(), 1, "the model was not asked again");
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_is_an_error_result_the_run_goes_on_and_a_retry_that_fails_again_ends_it(
) {
    let Some(w) = world("crash", &["fault"]).await else {
        return;
    };
    let (reason, _) = w.say("Crash the server", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let messages = w.messages().await;
    let tool = messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(tool.is_error);
    let text = tool.content.clone().unwrap();
    assert!(
        text.contains("about to crash on purpose"),
        "its last words: {text}"
    );
    assert_eq!(
        messages.last().unwrap().content.as_deref(),
        Some("The server crashed while working; I could not finish.")
    );

    // The supervisor starts the server again; its Retry crashes it again, and the run ends
    // there without asking the model.
    eventually(
        Duration::from_secs(60),
        "fault does not come back",
        || async {
            matches!(
                w.app.host().states().get("fault"),
                Some(ServerState::Running { .. })
            )
            .then_some(())
        },
    )
    .await;
    let asked_for_it = messages.iter().find(|m| m.tool_calls.is_some()).unwrap();
    let setup = w.retry(&asked_for_it.id, "call_c1").await.unwrap();
    let events = Events::default();
    let reason = w
        .run(setup, &ALLOW, &events, CancellationToken::new())
        .await;
    assert_eq!(reason, StopReason::RetryFailed);
    let Some(RunEvent::RunFinished { message, .. }) = events.all().pop() else {
        panic!("no run_finished last");
    };
    let message = message.unwrap();
    assert!(message.contains("failed again"), "{message}");
    assert!(message.contains("about to crash on purpose"), "{message}");
    assert_eq!(w.requests().await.len(), 2, "the model was not asked again");
    let last = w.messages().await.pop().unwrap();
    assert_eq!(last.role, Role::Tool);
    assert!(last.is_error);
}

#[tokio::test]
async fn a_failed_call_runs_again_from_its_retry_and_the_model_goes_on_with_its_result() {
    let Some(w) = world("retry_call", &["fault"]).await else {
        return;
    };
    let (reason, first) = w.say("Try the flaky tool", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let finished: Vec<bool> = first
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::ToolFinished { can_retry, .. } => Some(can_retry),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [true],
        "the window is told the failed call can run again"
    );
    let messages = w.messages().await;
    let failed = messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(failed.is_error);
    let error = failed.content.as_deref().unwrap();
    assert!(error.contains("failed the first time"), "{error}");
    let asked_for_it = messages.iter().find(|m| m.tool_calls.is_some()).unwrap();
    let setup = w.retry(&asked_for_it.id, "call_f1").await.unwrap();
    let events = Events::default();
    let asker = Recorder::new(Decision::AllowOnce, None);
    let reason = w
        .run(setup, &asker, &events, CancellationToken::new())
        .await;
    assert_eq!(reason, StopReason::Completed);
    assert_eq!(
        asker.asked.lock().unwrap().len(),
        1,
        "a retry passes the same approval as the model's calls"
    );
    let proposed = events
        .all()
        .into_iter()
        .find_map(|e| match e {
            RunEvent::ToolCallProposed { call } => Some(call),
            _ => None,
        })
        .unwrap();
    let original = CallRef {
        message_id: asked_for_it.id.clone(),
        call_id: "call_f1".into(),
    };
    assert_eq!(proposed.retry_of.as_ref(), Some(&original));
    assert_eq!(proposed.wire_name, "fault__flaky");
    assert_ne!(proposed.call_id, "call_f1", "a call id of its own");
    assert!(proposed.call_id.len() <= 40, "OpenAI's limit on call ids");
    assert_eq!(
        serde_json::from_str::<Value>(&proposed.arguments).unwrap(),
        json!({"key": "k1"})
    );

    // The model read the new result last, after the call that produced it.
    let requests = w.requests().await;
    assert_eq!(requests.len(), 3, "two for the turn, one after the retry");
    let sent = requests[2]["messages"].as_array().unwrap();
    let last = sent.last().unwrap();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], proposed.call_id.as_str());
    assert!(last["content"].as_str().unwrap().contains("worked for k1"));
    assert_eq!(
        sent[sent.len() - 2]["tool_calls"][0]["id"],
        proposed.call_id.as_str()
    );
    assert_eq!(
        w.messages().await.last().unwrap().content.as_deref(),
        Some("The flaky tool worked when you ran it again.")
    );

    let runs = w
        .store
        .list_tool_runs(w.conversation.clone())
        .await
        .unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].retry_of.as_ref(), Some(&original));
    assert!(!runs[1].is_error);
    // Both calls are in the audit record: the model's, then the person's retry.
    let record = w
        .app
        .audit(switchboard_core::store::AuditFilter::default())
        .await
        .unwrap();
    let origins: Vec<_> = record.iter().map(|e| e.origin).collect();
    assert_eq!(
        origins,
        [
            switchboard_core::store::AuditOrigin::Retry,
            switchboard_core::store::AuditOrigin::Model
        ]
    );
    assert!(!record[0].is_error && record[1].is_error);
    assert_eq!(
        runs.iter().map(|r| r.can_retry).collect::<Vec<_>>(),
        [true, false],
        "the saved record says what the card's Retry offers"
    );

    // A call that worked has nothing to retry.
    let refused = w
        .retry(&runs[1].message_id, &runs[1].call_id)
        .await
        .err()
        .unwrap();
    assert!(refused.to_string().contains("did not fail"), "{refused}");
}

#[tokio::test]
async fn a_switched_off_tool_and_a_held_back_tool_are_never_offered() {
    let Some(w) = world("not_offered", &["everything"]).await else {
        return;
    };
    w.app
        .set_conversation_tool(
            &w.conversation,
            ToolToggle {
                server: "everything".into(),
                tool: Some("get-env".into()),
                enabled: false,
            },
        )
        .await
        .unwrap();
    // get-sum as pinned long ago, before its description changed: held back. The app pins
    // each tool when it first sees it, in the background; that first pin comes before ours,
    // or it would overwrite it.
    eventually(
        Duration::from_secs(30),
        "get-sum was never pinned",
        || async {
            let pins = w.store.tool_pins("everything".into()).await.unwrap();
            pins.iter().any(|p| p.tool == "get-sum").then_some(())
        },
    )
    .await;
    w.store
        .pin_tools(
            "everything".into(),
            vec![PinnedTool {
                tool: "get-sum".into(),
                hash: "an older version".into(),
                title: None,
                description: "Adds two numbers".into(),
                input_schema: json!({"type": "object"}),
                annotations: None,
            }],
        )
        .await
        .unwrap();
    let (reason, _) = w.say("Which tools do you have", &ALLOW).await;
    assert_eq!(reason, StopReason::Completed);
    let offered = tools_offered(&w.requests().await[0]);
    assert!(
        offered.contains(&"everything__echo".to_owned()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"everything__get-env".to_owned()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"everything__get-sum".to_owned()),
        "{offered:?}"
    );
    let (_, panel) = w.app.conversation_catalogue(&w.conversation).await.unwrap();
    let sum = panel.iter().find(|t| t.tool == "get-sum").unwrap();
    assert!(sum.held_back);
    let env = panel.iter().find(|t| t.tool == "get-env").unwrap();
    assert!(!env.enabled && !env.held_back);
}

#[tokio::test]
async fn a_429_is_an_error_in_the_conversation_that_can_be_retried() {
    let Some(w) = world("rate_limited", &[]).await else {
        return;
    };
    let (reason, events) = w.say("Rate limit me", &ALLOW).await;
    assert_eq!(reason, StopReason::Error);
    let error = events.all().into_iter().find_map(|e| match e {
        RunEvent::Error { message, retryable } => Some((message, retryable)),
        _ => None,
    });
    let (message, retryable) = error.expect("an error event");
    assert!(retryable);
    assert!(message.contains("rate limiting"), "{message}");
    let answer = w.messages().await.pop().unwrap();
    assert_eq!(answer.status, MessageStatus::Error);
    assert!(answer.error.unwrap().contains("Slow down"));
    // Retry: no new user message, the conversation as it is; the failed answer is not sent.
    let retry = w
        .app
        .prepare_turn(
            TurnRequest {
                conversation_id: w.conversation.clone(),
                ..TurnRequest::default()
            },
            &Settings::default(),
        )
        .await
        .unwrap();
    assert_eq!(retry.start, agent::TurnStart::Again);
    let events = Events::default();
    w.run(retry, &ALLOW, &events, CancellationToken::new())
        .await;
    let requests = w.requests().await;
    assert_eq!(requests.len(), 2);
    let roles: Vec<&str> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user"]);
}

#[tokio::test]
async fn an_answer_cut_off_by_a_crash_keeps_everything_that_was_shown() {
    let Some(w) = world("crash_mid_stream", &[]).await else {
        return;
    };
    let setup = w.setup("Tell me a slow story").await;
    let events = Events::default();
    // The run is dropped mid-stream, as a killed app would leave it.
    let _ = tokio::time::timeout(
        Duration::from_millis(2500),
        w.run(setup, &ALLOW, &events, CancellationToken::new()),
    )
    .await;
    let shown: String = events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    let left = w.messages().await.pop().unwrap();
    assert_eq!(left.status, MessageStatus::Streaming);
    let saved = left.content.unwrap();
    assert!(saved.starts_with("Once"), "checkpointed text: {saved:?}");
    // Nothing was shown before it was written.
    assert_eq!(saved, shown);
    assert_eq!(w.store.mark_unfinished_as_interrupted().await.unwrap(), 1);
    let after = w.messages().await.pop().unwrap();
    assert_eq!(after.status, MessageStatus::Interrupted);
    assert_eq!(after.content.unwrap(), saved);
}

#[tokio::test]
async fn the_command_line_runs_the_same_loop_and_prints_every_event_as_a_json_line() {
    let Some(w) = world("cli_chat", &[]).await else {
        return;
    };
    // The command line's own app, over the same database and keychain.
    let paths = AppPaths::under_home(w._home.path().to_path_buf());
    let app = App::with_store(
        w.store.clone(),
        AppConfig::headless(
            paths,
            w.secrets.clone(),
            Arc::new(MemorySettings::default()),
        ),
    )
    .await;
    let mut out = Vec::new();
    switchboard_core::cli::run_with(
        &app,
        &[
            "chat",
            "--conversation",
            &w.conversation,
            "--tools",
            "none",
            "--approve",
            "none",
            "--json",
            "Add 2 and 3",
        ],
        &mut out,
    )
    .await
    .unwrap();
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "run_started");
    assert_eq!(lines.last().unwrap()["type"], "run_finished");
    assert_eq!(lines.last().unwrap()["reason"], "completed");
    // Saved messages come whole: no delta stitching needed.
    let saved: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "message_saved")
        .map(|l| &l["message"])
        .collect();
    assert_eq!(saved[0]["role"], "user");
    assert_eq!(saved.last().unwrap()["content"], "The sum of 2 and 3 is 5.");
    // With no tools offered, the model's call is an unknown tool it is told about.
    assert!(tools_offered(&w.requests().await[0]).is_empty());
    let tool = saved.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(tool["content"]
        .as_str()
        .unwrap()
        .contains("no tools are available"));
}

/// Ids (uuids) become `id-1`, `id-2`… in order of first sight; times and durations become 0:
/// what is left of a run is the same on every machine.
fn steady(value: &mut Value, ids: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if (key.ends_with("_at") || key == "duration_ms") && v.is_number() {
                    *v = json!(0);
                } else {
                    steady(v, ids);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| steady(v, ids)),
        Value::String(text) => {
            let is_id = text.len() == 36
                && text.chars().enumerate().all(|(i, c)| {
                    if [8, 13, 18, 23].contains(&i) {
                        c == '-'
                    } else {
                        c.is_ascii_hexdigit()
                    }
                });
            if is_id {
                let n = ids.iter().position(|seen| seen == text).unwrap_or_else(|| {
                    ids.push(text.clone());
                    ids.len() - 1
                });
                *text = format!("id-{}", n + 1);
            }
        }
        _ => {}
    }
}

/// Real runs as the window gets them, live and then saved, for the UI's tests: a Vitest test
/// builds the chat from both and requires the same picture (one reducer), and the UI's fake
/// backend sends events of exactly these shapes. `UPDATE_BINDINGS=1` writes the file anew;
/// otherwise the test fails while it and Rust disagree.
#[tokio::test]
async fn the_golden_runs_the_window_reads_match_rust() {
    let scenarios: [(&str, &str, Decision, &[&str]); 3] = [
        (
            "unknown tool, then a call that works",
            "Typo then fix",
            Decision::AllowOnce,
            &["everything"],
        ),
        (
            "a denied call",
            "Delete everything",
            Decision::Deny,
            &["everything"],
        ),
        (
            "a call that fails and can be retried",
            "Try the flaky tool",
            Decision::AllowOnce,
            &["fault"],
        ),
    ];
    let mut runs = Vec::new();
    for (i, (name, text, decision, servers)) in scenarios.into_iter().enumerate() {
        let Some(w) = world(&format!("golden_{i}"), servers).await else {
            return;
        };
        let asker = Recorder::new(decision, Some("not on my machine"));
        let (_, events) = w.say(text, &asker).await;
        let saved = w.app.conversations().get(&w.conversation).await.unwrap();
        let mut run = json!({"name": name, "events": events.all(), "saved": saved});
        steady(&mut run, &mut Vec::new());
        runs.push(run);
    }
    let now = serde_json::to_string_pretty(&json!({
        "_": "Written by switchboard-core's the_golden_runs_the_window_reads_match_rust: never edit by hand.",
        "runs": runs,
    }))
    .unwrap()
        + "\n";
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/tests/golden/runs.json");
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == now,
        "ui/tests/golden/runs.json does not match what Rust sends: run\n  UPDATE_BINDINGS=1 cargo test -p switchboard-core --test tool_loop golden\nand commit it"
    );
}
