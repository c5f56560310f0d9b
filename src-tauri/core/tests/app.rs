//! The app as its adapters hold it: runs started through [`App`], and quitting while they are
//! under way. aimock plays the model (`tests/fixtures/aimock/tool-loop.json`) and our fault
//! server runs a slow tool.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use switchboard_core::app::{McpServerStatus, ProfileChoice, TurnRequest};
use switchboard_core::events::{RunEvent, StopReason};
use switchboard_core::mcp::config::ServerEntry;
use switchboard_core::mcp::host::ServerState;
use switchboard_core::secrets::{MemoryStore, SecretStore};
use switchboard_core::store::{MessageStatus, Role, Store};
use switchboard_core::{App, AppPaths};

use support::{aimock, bodies_since, eventually, peers, run_cli, stdio_launch, tool_names, Seen};

/// A turn that sends `text` in `conversation`.
fn ask(conversation: &str, text: &str) -> TurnRequest {
    TurnRequest {
        conversation_id: conversation.to_owned(),
        text: Some(text.to_owned()),
        ..TurnRequest::default()
    }
}

async fn app_in(home: &std::path::Path, mock_root: &str) -> (Arc<App>, Store) {
    let paths = AppPaths::under_home(home.to_path_buf());
    paths.create_all().unwrap();
    let store = Store::open_in_memory().unwrap();
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let app = support::headless_app(store.clone(), paths, secrets).await;
    support::add_mock_provider(&app, mock_root).await;
    (app, store)
}

/// aimock playing the model (tool-loop.json) and an app on it in a home of its own, for a test
/// that also needs the MCP peers; `None` (the test is skipped, and says so) without them.
async fn app_with_peers(
    test: &str,
) -> Option<(support::Aimock, tempfile::TempDir, Arc<App>, Store)> {
    if !support::mcp_peers_installed(test) {
        return None;
    }
    let mock = aimock(test, "tool-loop.json", &[])?;
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), &mock.root).await;
    Some((mock, home, app, store))
}

/// An app in `home` with no provider (a database in memory).
async fn app_without_a_model(home: &std::path::Path) -> Arc<App> {
    support::app_without_a_model(home, Arc::new(MemoryStore::default())).await
}

fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
}

#[tokio::test]
async fn quitting_mid_answer_and_mid_call_cancels_both_keeps_what_was_shown_and_leaves_no_server() {
    let Some((_mock, _home, app, store)) = app_with_peers("quit").await else {
        return;
    };
    app.host()
        .spawn(
            "fault",
            stdio_launch(
                &peers().join(".venv/bin/python").to_string_lossy(),
                &[&peers().join("fault_server.py").to_string_lossy()],
                Duration::from_secs(30),
            ),
        )
        .await;
    let running = |s: &ServerState| matches!(s, ServerState::Running { pid: Some(_), .. });
    let ServerState::Running { pid: Some(pid), .. } =
        support::server_state(app.host(), "fault", running).await
    else {
        unreachable!()
    };

    let story = app.conversations().create(None, "").await.unwrap().id;
    let slow_tool = app.conversations().create(None, "").await.unwrap().id;
    let (story_seen, tool_seen) = (Arc::new(Seen::default()), Arc::new(Seen::default()));
    let story_run = app
        .start_turn(ask(&story, "Tell me a slow story"), story_seen.clone())
        .await
        .unwrap();
    // The slow tool's call is allowed by the window, as a person would.
    let tool_run = app
        .start_turn(ask(&slow_tool, "Wait for the slow tool"), tool_seen.clone())
        .await
        .unwrap();
    tool_seen.wait_for("approval_required", 1).await;
    let request_id = tool_seen
        .0
        .lock()
        .unwrap()
        .iter()
        .find_map(|e| match e {
            RunEvent::ApprovalRequired { request_id, calls } => {
                Some((request_id.clone(), calls.clone()))
            }
            _ => None,
        })
        .unwrap();
    let answers = request_id
        .1
        .iter()
        .map(|c| switchboard_core::agent::ApprovalAnswer {
            call_id: c.call_id.clone(),
            decision: switchboard_core::agent::Decision::AllowOnce,
            reason: None,
        })
        .collect();
    app.answer_approval(
        &request_id.0,
        answers,
        &switchboard_core::policy::confirm::Always(false),
    )
    .await
    .expect("allowing once asks nobody else");
    tool_seen.wait_for("tool_started", 1).await;
    story_seen.wait_for("text_delta", 3).await;
    assert!(
        matches!(
            app.start_turn(ask(&story, "and another"), Arc::new(Seen::default()))
                .await,
            Err(switchboard_core::CoreError::RunUnderWay)
        ),
        "one run per conversation"
    );

    // Quit.
    app.shutdown(Duration::from_secs(10)).await;

    assert_eq!(story_run.finished().await, StopReason::Cancelled);
    assert_eq!(tool_run.finished().await, StopReason::Cancelled);
    let answer = store
        .list_messages(story.clone())
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(answer.role, Role::Assistant);
    assert_eq!(answer.status, MessageStatus::Interrupted);
    let partial = answer.content.unwrap();
    assert!(
        partial.starts_with("Once"),
        "the shown text is kept: {partial}"
    );
    let tool = store
        .list_messages(slow_tool.clone())
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(tool.role, Role::Tool);
    assert!(tool.content.unwrap().contains("stopped before it finished"));
    assert!(!alive(pid), "the server's process {pid} is gone");
    assert!(
        matches!(
            app.start_turn(ask(&story, "again"), Arc::new(Seen::default()))
                .await,
            Err(switchboard_core::CoreError::Quitting)
        ),
        "nothing starts once quitting"
    );
}

#[tokio::test]
async fn a_window_that_comes_back_mid_answer_gets_the_answer_so_far_and_the_rest_live() {
    let Some(mock) = aimock("attach", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, _store) = app_in(home.path(), &mock.root).await;
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let first = Arc::new(Seen::default());
    let run = app
        .start_turn(ask(&conversation, "Tell me a slow story"), first.clone())
        .await
        .unwrap();
    first.wait_for("text_delta", 3).await;
    let again = Arc::new(Seen::default());
    assert_eq!(
        app.attach(&conversation, again.clone()).as_deref(),
        Some(run.run_id.as_str())
    );
    assert_eq!(run.finished().await, StopReason::Completed);
    let text = |seen: &Seen| -> String {
        seen.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                RunEvent::TextDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    };
    assert!(!text(&first).is_empty());
    assert_eq!(text(&again), text(&first), "the same answer, whole");
    assert_eq!(again.count("run_started"), 1);
    assert_eq!(again.count("run_finished"), 1);
    assert_eq!(
        app.attach(&conversation, again.clone()),
        None,
        "nothing runs now"
    );
}

/// One list the server watcher sent, and when it came.
type Sent = (Instant, Vec<McpServerStatus>);

/// Every list the server watcher sent.
#[derive(Clone, Default)]
struct Pushed(Arc<Mutex<Vec<Sent>>>);

impl Pushed {
    /// Waits for a list whose `fault` entry passes `test`; returns when it came.
    async fn first(
        &self,
        after: Instant,
        what: &str,
        test: impl Fn(&ServerState) -> bool,
    ) -> Instant {
        let what = format!("no list showing {what}");
        eventually(Duration::from_secs(30), what, || async {
            self.0.lock().unwrap().iter().find_map(|(at, list)| {
                let state = list
                    .iter()
                    .find(|s| s.server.name == "fault")?
                    .state
                    .as_ref()?;
                (*at >= after && test(state)).then_some(*at)
            })
        })
        .await
    }
}

#[tokio::test]
async fn the_server_list_is_pushed_on_a_new_tool_a_new_resource_a_crash_a_restart_and_a_switch_off()
{
    if !support::mcp_peers_installed("pushed servers") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, _store) = app_in(home.path(), "http://127.0.0.1:9").await;
    let python = peers().join(".venv/bin/python").display().to_string();
    let script = peers().join("fault_server.py").display().to_string();
    let entry = ServerEntry {
        command: Some(python),
        args: vec![script],
        ..ServerEntry::default()
    };
    app.mcp_add("fault", entry).await.unwrap();
    let pushed = Pushed::default();
    let log = pushed.clone();
    app.watch_servers(move |list| {
        log.0.lock().unwrap().push((Instant::now(), list));
        true
    });
    let start = Instant::now();
    app.start_servers().await;
    pushed
        .first(start, "fault running", |s| {
            matches!(s, ServerState::Running { .. })
        })
        .await;
    let tools = |s: &ServerState| match s {
        ServerState::Running { tools, .. } => *tools,
        _ => 0,
    };
    let before = pushed.0.lock().unwrap().last().unwrap().1[0]
        .state
        .as_ref()
        .map(tools)
        .unwrap();

    // A new tool: the server says its list changed; the list that follows has it.
    let server = app.host().server("fault").unwrap();
    let grow = serde_json::json!({"name": "sprout"});
    server
        .call_tool(
            "grow",
            grow.as_object().unwrap().clone(),
            Duration::from_secs(30),
        )
        .await
        .unwrap();
    let grown = Instant::now();
    let seen = pushed
        .first(grown, "the new tool", |s| tools(s) == before + 1)
        .await;
    eprintln!(
        "new tool pushed {} ms after its call returned",
        seen.saturating_duration_since(grown).as_millis()
    );

    // A new resource: the server says its resources changed; a list is pushed (the window
    // reads the server's offers again on it), and they have the resource.
    let noted = Instant::now();
    let note = serde_json::json!({"name": "plan", "text": "Ship it"});
    server
        .call_tool(
            "note",
            note.as_object().unwrap().clone(),
            Duration::from_secs(30),
        )
        .await
        .unwrap();
    pushed
        .first(noted, "the resource change", |s| {
            matches!(s, ServerState::Running { .. })
        })
        .await;
    let offers = app.server_offers("fault").await.unwrap();
    assert!(
        offers.resources.iter().any(|r| r.uri == "note://plan"),
        "{offers:?}"
    );

    // A crash, then the restart.
    let crashed = Instant::now();
    let _ = server
        .call_tool("crash", serde_json::Map::new(), Duration::from_secs(30))
        .await;
    let seen = pushed
        .first(crashed, "the crash", |s| {
            matches!(s, ServerState::Restarting { .. })
        })
        .await;
    eprintln!(
        "crash pushed {} ms after the call",
        seen.saturating_duration_since(crashed).as_millis()
    );
    pushed
        .first(seen, "the restart", |s| {
            matches!(s, ServerState::Running { .. })
        })
        .await;

    // A change made through the app (switched off) is pushed too.
    let off = Instant::now();
    app.set_server_enabled("fault", false).await.unwrap();
    pushed
        .first(off, "stopped", |s| matches!(s, ServerState::Stopped))
        .await;
    let lists = pushed.0.lock().unwrap().len();
    assert!(
        lists < 40,
        "bursts are sent together, not one list per change: {lists}"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_servers_tools_are_pinned_as_they_are_listed_not_when_they_are_read() {
    if !support::mcp_peers_installed("pins as listed") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), "http://127.0.0.1:9").await;
    let entry = ServerEntry {
        command: Some(peers().join(".venv/bin/python").display().to_string()),
        args: vec![peers().join("fault_server.py").display().to_string()],
        ..ServerEntry::default()
    };
    app.mcp_add("fault", entry).await.unwrap();
    app.start_servers().await;
    let pins_of = |want: &'static str| {
        let store = store.clone();
        async move {
            eventually(
                Duration::from_secs(60),
                format!("{want} pinned"),
                || async {
                    let pins = store.tool_pins("fault".into()).await.unwrap();
                    if pins.iter().any(|p| p.tool == want) {
                        Ok(pins)
                    } else {
                        Err(pins)
                    }
                },
            )
            .await
        }
    };
    // No conversation and no page read the tools: the app pinned them as the server listed them.
    let first = pins_of("echo").await;
    let listed = app.running_tools("fault").await.unwrap();
    assert_eq!(first.len(), listed.len(), "every tool listed is pinned");

    // A tool the server adds later is pinned as its new list arrives.
    let server = app.host().server("fault").unwrap();
    let grow = serde_json::json!({"name": "sprout"});
    server
        .call_tool(
            "grow",
            grow.as_object().unwrap().clone(),
            Duration::from_secs(30),
        )
        .await
        .unwrap();
    let grown = pins_of("sprout").await;
    assert_eq!(grown.len(), first.len() + 1);
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn deleting_a_conversation_mid_answer_stops_its_run_first_and_leaves_nothing_of_it() {
    let Some(mock) = aimock("delete mid-run", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), &mock.root).await;
    let story = app.conversations().create(None, "").await.unwrap().id;
    let seen = Arc::new(Seen::default());
    let run = app
        .start_turn(ask(&story, "Tell me a slow story"), seen.clone())
        .await
        .unwrap();
    seen.wait_for("text_delta", 3).await;

    app.delete_conversation(&story).await.unwrap();

    // The run had ended before the conversation went: nothing of it is written afterwards.
    assert_eq!(run.finished().await, StopReason::Cancelled);
    assert!(store.list_messages(story.clone()).await.unwrap().is_empty());
    assert!(app.conversations().get(&story).await.is_err(), "gone");
    assert!(
        !app.conversations()
            .list()
            .await
            .unwrap()
            .iter()
            .any(|c| c.id == story),
        "not listed"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_command_line_allows_lists_and_revokes_a_tool_that_runs_without_asking() {
    if !support::mcp_peers_installed("cli_approvals") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let app = app_without_a_model(home.path()).await;
    let cli = |args: Vec<String>| run_cli(Arc::clone(&app), args);
    let words = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let python = peers().join(".venv/bin/python");
    let script = peers().join("raw_server.py");
    let (added, _) = cli(vec![
        "mcp".into(),
        "add".into(),
        "raw".into(),
        "--".into(),
        python.display().to_string(),
        script.display().to_string(),
        "--deep-schema".into(),
        "200".into(),
    ])
    .await;
    added.unwrap();

    // A tool the server does not offer (held back: nested too deep) is refused.
    let (refused, _) = cli(words("mcp allow raw deep --yes")).await;
    assert!(refused
        .unwrap_err()
        .contains("a tool “deep” that “raw” offers now"));
    let (allowed, said) = cli(words("mcp allow raw echo --yes")).await;
    allowed.unwrap();
    assert_eq!(
        said.trim(),
        "“echo” of “raw” now runs without asking in every conversation."
    );

    // What was allowed is the definition seen then: it was pinned before the question.
    let (_, tools) = cli(words("mcp tools raw")).await;
    let echo = tools.lines().find(|l| l.starts_with("echo")).unwrap();
    assert!(echo.ends_with("pinned") && !echo.contains("new"), "{tools}");

    let (listed, json) = cli(words("mcp approvals --json")).await;
    listed.unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1, "{json}");
    assert_eq!(json[0]["server"], "raw");
    assert_eq!(json[0]["tool"], "echo");
    assert_eq!(json[0]["conversation_id"], serde_json::Value::Null);
    let (_, table) = cli(words("mcp approvals")).await;
    assert!(table.contains("every conversation"), "{table}");

    let (revoked, said) = cli(words("mcp revoke raw echo")).await;
    revoked.unwrap();
    assert!(said.contains("asks again"), "{said}");
    let (_, table) = cli(words("mcp approvals")).await;
    assert!(table.starts_with("No tool runs without asking"), "{table}");
    let (again, _) = cli(words("mcp revoke raw echo")).await;
    assert!(again.is_err(), "nothing left to revoke");
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn tools_a_server_lists_but_cannot_offer_are_said_on_its_page_in_the_panel_and_at_a_runs_start(
) {
    let Some((_mock, _home, app, _store)) = app_with_peers("held back tools").await else {
        return;
    };
    let python = peers().join(".venv/bin/python").display().to_string();
    let script = peers().join("raw_server.py").display().to_string();
    start_and_wait(
        &app,
        "odd",
        stdio_launch(&python, &[&script, "--odd-names"], Duration::from_secs(30)),
    )
    .await;
    // The Servers page: each, with why.
    let held = app
        .mcp_status()
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.server.name == "odd")
        .map(|s| s.held_back);
    // A server the host runs without an mcp.json entry is not on the page; ask the host.
    let held = held.unwrap_or_else(|| app.host().server("odd").unwrap().held_back());
    assert_eq!(held.len(), 2, "{held:?}");
    assert_eq!(held[0].tool, "echo");
    assert!(
        held[0].reason.contains("another tool by this name"),
        "{held:?}"
    );
    assert_eq!(
        held[1].tool, "read\\u200bfile",
        "shown with its hidden character as an escape"
    );
    assert!(held[1].reason.contains("U+200B"), "{held:?}");

    // The first echo is offered, once; the panel shows all three.
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let (offered, panel) = app.conversation_catalogue(&conversation).await.unwrap();
    let odd: Vec<_> = offered.iter().filter(|t| t.server == "odd").collect();
    assert_eq!(odd.len(), 1);
    assert_eq!(odd[0].description, "echo says the text back");
    let panel: Vec<_> = panel.iter().filter(|t| t.server == "odd").collect();
    assert_eq!(panel.len(), 3);
    assert_eq!(panel.iter().filter(|t| t.held_back).count(), 2);
    assert!(panel
        .iter()
        .filter(|t| t.held_back)
        .all(|t| t.held_reason.is_some() && !t.enabled));

    // A run starts by saying them.
    let seen = Arc::new(Seen::default());
    let run = app
        .start_turn(ask(&conversation, "Say hello"), seen.clone())
        .await
        .unwrap();
    run.finished().await;
    let warnings: Vec<String> = seen
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolWarning { tool, message } => Some(format!("{tool}: {message}")),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("odd · Echo: the server lists another tool"),
        "{warnings:?}"
    );
    assert!(warnings[1].contains("U+200B"), "{warnings:?}");
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_call_an_mcp_app_makes_is_recorded_with_the_conversations_calls_saying_who_asked() {
    if !support::mcp_peers_installed("app calls recorded") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), "http://127.0.0.1:9").await;
    let python = peers().join(".venv/bin/python").display().to_string();
    let script = peers().join("fault_server.py").display().to_string();
    start_and_wait(
        &app,
        "fault",
        stdio_launch(&python, &[&script], Duration::from_secs(30)),
    )
    .await;
    // The model's call whose card shows the app.
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let answer = store
        .append_message(
            conversation.clone(),
            switchboard_core::store::NewMessage::text(Role::Assistant, ""),
        )
        .await
        .unwrap();
    let card = switchboard_core::store::ToolRun {
        id: switchboard_core::store::ToolRun::id_for(&answer.id, "call_1"),
        conversation_id: conversation.clone(),
        message_id: answer.id.clone(),
        call_id: "call_1".into(),
        server: "fault".into(),
        tool: "dashboard".into(),
        display_name: "fault · Dashboard".into(),
        arguments: r#"{"city":"Oslo"}"#.into(),
        decision: Some(switchboard_core::store::ToolDecision::Allowed),
        decision_scope: Some(switchboard_core::store::ApprovalScope::Once),
        started_at: Some(1),
        finished_at: Some(2),
        result: Some("{}".into()),
        ..Default::default()
    };
    store
        .record_tool_call(
            card,
            switchboard_core::store::NewMessage {
                tool_call_id: Some("call_1".into()),
                ..switchboard_core::store::NewMessage::text(Role::Tool, "dashboard")
            },
        )
        .await
        .unwrap();
    let messages_before = store
        .list_messages(conversation.clone())
        .await
        .unwrap()
        .len();

    let echo = |text: &str| {
        let mut args = serde_json::Map::new();
        args.insert("text".into(), text.into());
        args
    };
    let yes = switchboard_core::policy::confirm::Always(true);
    let no = switchboard_core::policy::confirm::Always(false);
    let ran = app
        .app_call_tool(
            &conversation,
            &answer.id,
            "call_1",
            "echo",
            echo("from the app"),
            &yes,
        )
        .await
        .unwrap();
    assert!(ran.to_string().contains("from the app"), "{ran}");
    let refused = app
        .app_call_tool(
            &conversation,
            &answer.id,
            "call_1",
            "echo",
            echo("refused"),
            &no,
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("you said no"), "{refused}");

    let runs = store.list_tool_runs(conversation.clone()).await.unwrap();
    let by_app: Vec<_> = runs.iter().filter(|r| r.asked_by.is_some()).collect();
    assert_eq!(by_app.len(), 2, "{runs:?}");
    for run in &by_app {
        assert_eq!(
            run.asked_by.as_deref(),
            Some("the app in the card of “fault · Dashboard” (call call_1)")
        );
        assert_eq!((run.server.as_str(), run.tool.as_str()), ("fault", "echo"));
        assert_eq!(run.message_id, answer.id);
    }
    assert_eq!(
        by_app[0].decision,
        Some(switchboard_core::store::ToolDecision::Allowed)
    );
    assert_eq!(by_app[0].arguments, r#"{"text":"from the app"}"#);
    assert!(by_app[0]
        .result
        .as_deref()
        .unwrap()
        .contains("from the app"));
    assert!(by_app[0].started_at.is_some() && by_app[0].finished_at.is_some());
    assert_eq!(
        by_app[1].decision,
        Some(switchboard_core::store::ToolDecision::Denied)
    );
    assert_eq!(by_app[1].deny_reason.as_deref(), Some("you said no"));
    // Both are in the audit record as the app's, with what decided each (the model's own call,
    // written by hand above, too).
    let record = app
        .audit(switchboard_core::store::AuditFilter::default())
        .await
        .unwrap();
    let apps: Vec<_> = record
        .iter()
        .filter(|e| e.origin == switchboard_core::store::AuditOrigin::App)
        .collect();
    assert_eq!(apps.len(), 2, "{record:#?}");
    assert_eq!(apps[1].arguments, r#"{"text":"from the app"}"#);
    assert_eq!(
        apps[1].decision,
        switchboard_core::store::AuditDecision::Allowed
    );
    assert!(
        apps[1].decided_by.starts_with("you, when asked ("),
        "{}",
        apps[1].decided_by
    );
    assert!(apps[1].result_sha256.is_some());
    assert_eq!(
        apps[0].decision,
        switchboard_core::store::AuditDecision::Denied
    );
    // The model never asked: it reads nothing of them.
    assert_eq!(
        store
            .list_messages(conversation.clone())
            .await
            .unwrap()
            .len(),
        messages_before
    );
    // The conversation as the command line shows it says who asked, what ran, what came back.
    let (shown, said) = run_cli(
        Arc::clone(&app),
        vec!["conversations".into(), "show".into(), conversation.clone()],
    )
    .await;
    shown.unwrap();
    assert!(
        said.contains("Tool call by the app in the card of “fault · Dashboard” (call call_1): fault · Echo</summary>"),
        "{said}"
    );
    assert!(said.contains("from the app"), "{said}");
    assert!(
        said.contains("fault · Echo — refused: you said no"),
        "{said}"
    );
    let (shown, json) = run_cli(
        Arc::clone(&app),
        vec![
            "conversations".into(),
            "show".into(),
            conversation,
            "--json".into(),
        ],
    )
    .await;
    shown.unwrap();
    assert_eq!(json.matches("\"asked_by\"").count(), 2, "{json}");
    app.shutdown(Duration::from_secs(5)).await;
}

/// Adds a server on the command line (`server`: `NAME -- COMMAND ARGS…`, split at spaces),
/// sends `prompt` in a new conversation with every call allowed; returns the conversation's id
/// and what the chat printed.
async fn chat_with_server(app: &Arc<App>, server: &str, prompt: &str) -> (String, String) {
    let mut add = vec!["mcp".to_owned(), "add".to_owned()];
    add.extend(server.split(' ').map(str::to_owned));
    run_cli(Arc::clone(app), add).await.0.unwrap();
    let chat = [
        "chat",
        prompt,
        "--approve",
        "all",
        "--wait-for-servers",
        "30",
    ];
    let (ran, said) = run_cli(Arc::clone(app), chat.map(str::to_owned).to_vec()).await;
    ran.unwrap();
    let conversation = app.conversations().list().await.unwrap()[0].id.clone();
    (conversation, said)
}

/// Starts server-everything (stdio) in `app`'s host and waits until it runs.
async fn start_everything(app: &App) {
    let program = peers().join("node_modules/.bin/mcp-server-everything");
    let launch = stdio_launch(
        &program.to_string_lossy(),
        &["stdio"],
        Duration::from_secs(30),
    );
    start_and_wait(app, "everything", launch).await;
}

/// Starts `launch` as `name` in `app`'s host and waits (up to a minute) until it runs.
async fn start_and_wait(app: &App, name: &str, launch: switchboard_core::mcp::stdio::StdioLaunch) {
    app.host().spawn(name, launch).await;
    let what = format!("{name} did not start");
    eventually(Duration::from_secs(60), what, || async {
        matches!(
            app.host().states().get(name),
            Some(ServerState::Running { .. })
        )
        .then_some(())
    })
    .await;
}

/// The system message of the newest request aimock received (`None`: the request had none).
async fn last_system_message(mock: &support::Aimock) -> Option<String> {
    let journal = mock.journal().await;
    let body = &journal.last().expect("a request was sent")["body"];
    let first = &body["messages"][0];
    (first["role"] == "system").then(|| first["content"].as_str().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn a_new_conversation_tells_the_model_the_default_system_prompt_and_the_offered_servers_instructions(
) {
    let Some((mock, home, app, _store)) = app_with_peers("system_prompt").await else {
        return;
    };
    // server-everything answers `initialize` with instructions of its own.
    start_everything(&app).await;
    let instructions = app
        .host()
        .server("everything")
        .and_then(|s| s.instructions().map(str::to_owned))
        .expect("server-everything gives instructions");

    let conversation = app
        .create_conversation(None, None, &ProfileChoice::Default)
        .await
        .unwrap();
    assert_eq!(
        conversation.system_prompt,
        switchboard_core::settings::DEFAULT_SYSTEM_PROMPT
    );
    let turn = |text: &str, tools| TurnRequest {
        tools,
        ..ask(&conversation.id, text)
    };
    let sink = Arc::new(Seen::default());
    let run = app
        .start_turn(
            turn("Say hello", switchboard_core::app::ToolSelection::All),
            sink.clone(),
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);
    let system = last_system_message(&mock).await.expect("a system message");
    let heading = "## Instructions from the MCP server “everything”";
    assert!(
        system.starts_with(switchboard_core::settings::DEFAULT_SYSTEM_PROMPT),
        "{system}"
    );
    assert!(
        system.ends_with(&format!("{heading}\n\n{}", instructions.trim())),
        "{system}"
    );

    // With the server's tools not offered, its instructions are not sent either.
    let run = app
        .start_turn(
            turn(
                "Say hello again",
                switchboard_core::app::ToolSelection::None,
            ),
            sink.clone(),
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);
    assert_eq!(
        last_system_message(&mock).await.as_deref(),
        Some(switchboard_core::settings::DEFAULT_SYSTEM_PROMPT)
    );

    // The conversation keeps an edited prompt; a cleared one sends no system message at all.
    let edited = app
        .conversations()
        .set_system_prompt(&conversation.id, "Answer in French.\n\n")
        .await
        .unwrap();
    assert_eq!(edited.system_prompt, "Answer in French.");
    let run = app
        .start_turn(
            turn(
                "Say hello in French",
                switchboard_core::app::ToolSelection::None,
            ),
            sink.clone(),
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);
    assert_eq!(
        last_system_message(&mock).await.as_deref(),
        Some("Answer in French.")
    );
    app.conversations()
        .set_system_prompt(&conversation.id, " \n")
        .await
        .unwrap();
    let run = app
        .start_turn(
            turn(
                "Say hello once more",
                switchboard_core::app::ToolSelection::None,
            ),
            sink,
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);
    assert_eq!(last_system_message(&mock).await, None);

    // A prompt given outright wins over the default, and one too long is refused.
    let told = app
        .create_conversation(
            Some("Pirate"),
            Some("Talk like a pirate."),
            &ProfileChoice::Default,
        )
        .await
        .unwrap();
    assert_eq!(told.system_prompt, "Talk like a pirate.");
    let long = "x".repeat(switchboard_core::settings::MAX_SYSTEM_PROMPT_CHARS + 1);
    assert!(matches!(
        app.conversations()
            .set_system_prompt(&conversation.id, &long)
            .await,
        Err(switchboard_core::CoreError::Invalid(_))
    ));

    // The command line: `--system` and `--system-file` are sent, and the conversation keeps them.
    let file = home.path().join("prompt.txt");
    std::fs::write(&file, "Answer from the file.\n").unwrap();
    for (flag, value, expected) in [
        ("--system", "Be terse.".to_owned(), "Be terse."),
        (
            "--system-file",
            file.display().to_string(),
            "Answer from the file.",
        ),
    ] {
        let args = [
            "chat",
            "--tools",
            "none",
            flag,
            &value,
            "Say hello from the terminal",
        ];
        let mut out = Vec::new();
        switchboard_core::cli::run_with(&app, &args, &mut out)
            .await
            .unwrap();
        assert_eq!(last_system_message(&mock).await.as_deref(), Some(expected));
        let newest = app.conversations().list().await.unwrap().remove(0);
        assert_eq!(newest.system_prompt, expected);
    }
}

#[tokio::test]
async fn an_edited_message_and_a_regenerated_answer_branch_the_conversation_and_switch_back() {
    let Some(mock) = aimock("branches", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), &mock.root).await;
    let conversation = app
        .create_conversation(None, Some(""), &ProfileChoice::Default)
        .await
        .unwrap();
    let id = conversation.id.clone();
    let run = |request: TurnRequest| {
        let app = Arc::clone(&app);
        async move {
            let handle = app
                .start_turn(request, Arc::new(Seen::default()))
                .await
                .unwrap();
            handle.finished().await
        }
    };
    let texts = || {
        let store = store.clone();
        let id = id.clone();
        async move {
            store
                .list_messages(id)
                .await
                .unwrap()
                .into_iter()
                .map(|m| (m.role, m.content.unwrap_or_default()))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(run(ask(&id, "Say hello")).await, StopReason::Completed);
    let first = store.list_messages(id.clone()).await.unwrap();

    // Only a message of yours can be edited; only an answer to one can be written again.
    let refused = app
        .start_turn(
            TurnRequest {
                branch_from: Some(first[1].id.clone()),
                ..ask(&id, "Say goodbye")
            },
            Arc::new(Seen::default()),
        )
        .await;
    assert!(matches!(
        refused,
        Err(switchboard_core::CoreError::Invalid(_))
    ));
    assert_eq!(texts().await.len(), 2, "a refused edit changes nothing");

    // Edit "Say hello" into "Say goodbye": the model sees only the new branch.
    let edit = TurnRequest {
        branch_from: Some(first[0].id.clone()),
        ..ask(&id, "Say goodbye")
    };
    assert_eq!(run(edit).await, StopReason::Completed);
    assert_eq!(
        texts().await,
        [
            (Role::User, "Say goodbye".into()),
            (Role::Assistant, "Goodbye.".into())
        ]
    );
    let journal = mock.journal().await;
    let sent = &journal.last().unwrap()["body"]["messages"];
    let said: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(said, ["Say goodbye"]);

    // Regenerate the answer: a second branch point, nested in the first.
    let edited = store.list_messages(id.clone()).await.unwrap();
    let again = TurnRequest {
        conversation_id: id.clone(),
        branch_from: Some(edited[1].id.clone()),
        ..TurnRequest::default()
    };
    assert_eq!(run(again).await, StopReason::Completed);
    let detail = app.conversations().get(&id).await.unwrap();
    assert_eq!(detail.messages.len(), 2);
    let points: Vec<(i64, i64)> = detail
        .branches
        .iter()
        .map(|p| (p.position, p.count))
        .collect();
    assert_eq!(points, [(1, 2), (1, 2)]);
    assert_eq!(detail.branches[0].message_id, edited[0].id);
    assert_ne!(detail.branches[1].message_id, edited[1].id, "a new answer");

    // Back to the first branch, whole.
    let switched = app.switch_branch(&id, &edited[0].id, 0).await.unwrap();
    assert_eq!(switched.point.message_id, first[0].id);
    assert_eq!(
        texts().await,
        [
            (Role::User, "Say hello".into()),
            (Role::Assistant, "Hello.".into())
        ]
    );
}

/// A PNG of `width` × `height` pixels of one colour (small once scaled and written as JPEG:
/// aimock's journal keeps request bodies up to 64 KB).
fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(width, height, image::Rgb([40, 90, 160]));
    let mut out = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

#[tokio::test]
async fn attached_files_reach_the_model_as_it_takes_them_and_one_it_cannot_read_is_refused_first() {
    let Some(mock) = aimock("attachments", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), &mock.root).await;
    let dir = home.path();
    std::fs::write(dir.join("photo.txt"), png(3000, 1000)).unwrap(); // an image, whatever its name
    std::fs::write(dir.join("scores.csv"), "team,points\nred,3\n").unwrap();
    std::fs::write(dir.join("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();

    let refused = app
        .keep_attachment_file(&dir.join("blob.bin"))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("binary data"), "{refused}");
    let image = app
        .keep_attachment_file(&dir.join("photo.txt"))
        .await
        .unwrap();
    assert_eq!(image.mime, "image/png");
    let table = app
        .keep_attachment_file(&dir.join("scores.csv"))
        .await
        .unwrap();
    // A PDF, for an API that takes none (an OpenAI-compatible host): its text goes instead.
    let pdf = app
        .keep_attachment_file(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/files/itinerary.pdf"),
        )
        .await
        .unwrap();
    let files = vec![(&image).into(), (&table).into(), (&pdf).into()];

    let conversation = app
        .create_conversation(None, None, &ProfileChoice::Default)
        .await
        .unwrap();
    let run = app
        .start_turn(
            TurnRequest {
                attachments: files.clone(),
                ..ask(&conversation.id, "Say hello")
            },
            Arc::new(Seen::default()),
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);

    // The model got the files in the order attached — the image (scaled to fit the API's
    // 2048 px), the table inline under its name — then the words.
    let journal = mock.journal().await;
    let sent = &journal.last().unwrap()["body"]["messages"];
    let user = sent
        .as_array()
        .unwrap_or_else(|| panic!("{}", journal.last().unwrap()))
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    let parts = user["content"].as_array().expect("parts");
    assert_eq!(parts.len(), 4, "{user}");
    let url = parts[0]["image_url"]["url"].as_str().unwrap();
    let sent_image = {
        use base64::Engine as _;
        let data = url.strip_prefix("data:image/jpeg;base64,").expect(url);
        image::load_from_memory(
            &base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!((sent_image.width(), sent_image.height()), (2048, 683));
    assert_eq!(
        parts[1]["text"],
        "The attached file “scores.csv”:\n```\nteam,points\nred,3\n```"
    );
    let pdf_text = parts[2]["text"].as_str().unwrap();
    assert!(
        pdf_text.starts_with("The attached file “itinerary.pdf”:\n```\n")
            && pdf_text.contains("Itinerary: Paris on Monday, Tokyo on Friday."),
        "{pdf_text}"
    );
    assert_eq!(parts[3]["text"], "Say hello");
    // The conversation keeps the files with the message, by name.
    let saved = store.list_messages(conversation.id.clone()).await.unwrap();
    let names: Vec<&str> = saved[0]
        .attachments
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["photo.txt", "scores.csv", "itinerary.pdf"]);

    // The person says this model does not take images: the same send is refused before
    // anything is saved or sent, saying why.
    app.set_model_takes_images("Mock", "gpt-4o", Some(false))
        .await
        .unwrap();
    let refused = app
        .start_turn(
            TurnRequest {
                attachments: files,
                ..ask(&conversation.id, "Say hello")
            },
            Arc::new(Seen::default()),
        )
        .await
        .err()
        .expect("refused");
    assert!(
        refused.to_string().contains("not known to take images"),
        "{refused}"
    );
    assert_eq!(
        store
            .list_messages(conversation.id.clone())
            .await
            .unwrap()
            .len(),
        saved.len()
    );
    assert_eq!(mock.journal().await.len(), journal.len());

    // The window's answer to that refusal: the person says this model takes images, and the
    // same send goes.
    let model = app
        .allow_images_in(&conversation.id, &app.settings())
        .await
        .unwrap();
    assert_eq!(model, "gpt-4o");
    let run = app
        .start_turn(
            TurnRequest {
                attachments: vec![(&image).into()],
                ..ask(&conversation.id, "Say hello")
            },
            Arc::new(Seen::default()),
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_composers_pickers_take_a_running_servers_prompts_and_resources_as_text_and_files() {
    if !support::mcp_peers_installed("pickers") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let app = app_without_a_model(home.path()).await;
    start_everything(&app).await;

    let offers = app.running_offers().await;
    assert_eq!(offers.len(), 1);
    assert_eq!(offers[0].server, "everything");
    assert!(offers[0]
        .offers
        .prompts
        .iter()
        .any(|p| p.name == "args-prompt"));

    // "/": a prompt with its arguments becomes the composer's text…
    let used = app
        .use_prompt(
            "everything",
            "args-prompt",
            serde_json::json!({"city": "Oslo"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .await
        .unwrap();
    assert_eq!(used.text, "What's weather in Oslo?");
    assert!(used.attached.kept.is_empty());
    // …and one that embeds a resource brings it as a file.
    let embedded = app
        .use_prompt(
            "everything",
            "resource-prompt",
            serde_json::json!({"resourceType": "Text", "resourceId": "2"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .await
        .unwrap();
    assert_eq!(embedded.attached.kept.len(), 1, "{embedded:?}");
    assert_eq!(
        embedded.attached.kept[0].kind,
        switchboard_core::attachments::AttachmentKind::Text
    );
    let refused = app
        .use_prompt("everything", "args-prompt", serde_json::Map::new())
        .await;
    assert!(
        refused.is_err(),
        "a required argument left out: {refused:?}"
    );

    // "@": a resource becomes a file under its listed name, judged by its content.
    let attached = app
        .attach_resource(
            "everything",
            "demo://resource/dynamic/text/3",
            Some("Dynamic Text 3"),
        )
        .await
        .unwrap();
    assert_eq!(attached.kept.len(), 1);
    assert_eq!(attached.kept[0].name, "Dynamic Text 3");
    let bytes = app
        .attachment_files()
        .read(&attached.kept[0].sha256)
        .unwrap();
    assert!(String::from_utf8(bytes).unwrap().starts_with("Resource 3:"));

    // Arguments are completed by the server as they are typed.
    let completed = app
        .complete_argument(
            "everything",
            switchboard_core::mcp::features::Completing::Prompt("completable-prompt".into()),
            "department",
            "Ma",
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(completed, ["Marketing"]);
    let stopped = app.attach_resource("nowhere", "demo://x", None).await;
    assert!(stopped.is_err());
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_command_line_lists_and_saves_a_conversations_tool_files_and_gives_a_server_folders() {
    let Some(mock) = aimock("cli files", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, _store) = app_in(home.path(), &mock.root).await;
    let cli = |args: Vec<String>| run_cli(Arc::clone(&app), args);
    let words = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let python = peers().join(".venv/bin/python").display().to_string();
    let script = peers().join("fault_server.py").display().to_string();
    let (conversation, said) = chat_with_server(
        &app,
        &format!("fault -- {python} {script}"),
        "Make the quarterly report",
    )
    .await;
    assert!(said.contains("The report is ready"), "{said}");

    let (ran, listed) = cli(words(&format!(
        "conversations artifacts {conversation} --json"
    )))
    .await;
    ran.unwrap();
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let mut names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["file"]["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["image-1.png", "report.html", "scores.csv"]);
    let out = home.path().join("scores-copy.csv");
    let (ran, said) = cli(words(&format!(
        "conversations save-artifact {conversation} scores.csv -o {}",
        out.display()
    )))
    .await;
    ran.unwrap();
    assert!(
        said.starts_with("Saved “scores.csv” (36 bytes) to "),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "name,score\nAda,92\nGrace,88\nLinus,75\n"
    );
    let (ran, _) = cli(words(&format!(
        "conversations save-artifact {conversation} nothing.txt -o {}",
        out.display()
    )))
    .await;
    assert!(ran.unwrap_err().contains("nothing.txt"));

    // Folders for a server: set (kept in mcp.json), shown, taken away.
    let folder = home.path().join("notes");
    std::fs::create_dir_all(&folder).unwrap();
    // Written one way and kept once, as a project's folders are.
    let (ran, said) = cli(words(&format!(
        "mcp roots fault {0}/ {0}",
        folder.display()
    )))
    .await;
    ran.unwrap();
    assert_eq!(said.trim(), folder.display().to_string());
    let (ran, said) = cli(words("mcp roots fault --json")).await;
    ran.unwrap();
    assert_eq!(
        serde_json::from_str::<Vec<String>>(&said).unwrap(),
        [folder.display().to_string()]
    );
    let mcp_json = std::fs::read_to_string(home.path().join("config/mcp.json")).unwrap();
    assert!(mcp_json.contains("\"roots\""), "{mcp_json}");
    let (ran, _) = cli(words("mcp roots fault /no/such/folder")).await;
    assert!(ran.unwrap_err().contains("is not a folder"));
    // A folder it has that has since gone does not block taking another away.
    let gone = home.path().join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let both = format!("mcp roots fault {} {}", folder.display(), gone.display());
    cli(words(&both)).await.0.unwrap();
    std::fs::remove_dir(&gone).unwrap();
    let (ran, said) = cli(words(&format!("mcp roots fault {}", gone.display()))).await;
    ran.unwrap();
    assert_eq!(said.trim(), gone.display().to_string());
    let (ran, said) = cli(words("mcp roots fault --none")).await;
    ran.unwrap();
    assert_eq!(said.trim(), "“fault” is given no folders.");
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_resource_link_a_tool_returned_is_read_into_the_canvas_only_when_asked_and_only_if_it_was_returned(
) {
    let Some(mock) = aimock("links", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), &mock.root).await;
    let cli = |args: Vec<String>| run_cli(Arc::clone(&app), args);
    let words = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let everything = peers()
        .join("node_modules/.bin/mcp-server-everything")
        .display()
        .to_string();
    let (conversation, said) = chat_with_server(
        &app,
        &format!("everything -- {everything} stdio"),
        "Show me pictures and data",
    )
    .await;
    assert!(said.contains("two resources"), "{said}");

    // Both links the call returned are listed, none read yet.
    let links = app.tool_links(&conversation).await.unwrap();
    assert_eq!(links.len(), 2, "{links:?}");
    assert!(links
        .iter()
        .all(|l| l.server == "everything" && l.call_id == "call_links"));
    let before = app.artifacts(&conversation).await.unwrap().len();
    let (ran, said) = cli(words(&format!("conversations links {conversation} --json"))).await;
    ran.unwrap();
    let said: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(said[1]["uri"], links[1].uri.as_str());

    // The command line starts the server, reads the newest link with that address, keeps it.
    let (ran, said) = cli(words(&format!(
        "conversations read-link {conversation} {} --json",
        links[0].uri
    )))
    .await;
    ran.unwrap();
    let kept: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(kept[0]["file"]["name"], links[0].name.as_str(), "{kept}");
    let after = app.artifacts(&conversation).await.unwrap();
    assert_eq!(after.len(), before + 1);
    let new = after.iter().find(|a| a.file.name == links[0].name).unwrap();
    assert_eq!(new.call_id, "call_links");
    assert!(new.file.size > 0);

    // The window's way (an app of its own on the same database, as the command line's
    // stopped its host): through the running server; the same file is not kept twice.
    let paths = AppPaths::under_home(home.path().to_path_buf());
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let window = support::headless_app(store.clone(), paths, secrets).await;
    start_everything(&window).await;
    let second = &links[1];
    let read = window
        .read_tool_link(
            &conversation,
            &second.message_id,
            &second.call_id,
            &second.uri,
        )
        .await
        .unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].file.name, second.name);
    let again = window
        .read_tool_link(
            &conversation,
            &second.message_id,
            &second.call_id,
            &second.uri,
        )
        .await
        .unwrap();
    // server-everything's resources carry the time they were read, to the second: two reads
    // on either side of a second's turn are two files, and both are kept; the same bytes
    // read again are not.
    let changed = usize::from(again[0].file.sha256 != read[0].file.sha256);
    assert_eq!(
        app.artifacts(&conversation).await.unwrap().len(),
        before + 2 + changed
    );

    // An address the call did not return is not read, whatever server has it.
    let other = window
        .read_tool_link(
            &conversation,
            &second.message_id,
            &second.call_id,
            "demo://resource/static/document/architecture.md",
        )
        .await
        .unwrap_err();
    assert!(other.to_string().contains("that link"), "{other}");
    let (ran, _) = cli(words(&format!(
        "conversations read-link {conversation} file:///etc/passwd"
    )))
    .await;
    assert!(ran.unwrap_err().contains("conversations links"));
    window.shutdown(Duration::from_secs(5)).await;
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn an_edited_message_keeps_its_files_unless_others_are_attached() {
    let Some(mock) = aimock("edit files", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), &mock.root).await;
    let cli = |args: Vec<String>| run_cli(Arc::clone(&app), args);
    let owned = |words: &[&str]| words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
    let notes = home.path().join("notes.txt");
    std::fs::write(&notes, "the first file\n").unwrap();
    let other = home.path().join("other.txt");
    std::fs::write(&other, "the second file\n").unwrap();
    let (ran, _) = cli(owned(&[
        "chat",
        "Say hello",
        "--attach",
        &notes.display().to_string(),
    ]))
    .await;
    ran.unwrap();
    let conversation = app.conversations().list().await.unwrap()[0].id.clone();
    let files_of_first = || async {
        let messages = store.list_messages(conversation.clone()).await.unwrap();
        let names: Vec<String> = messages[0]
            .attachments
            .iter()
            .map(|a| a.name.clone())
            .collect();
        (
            messages[0].id.clone(),
            messages[0].content.clone().unwrap_or_default(),
            names,
        )
    };
    let (first, _, names) = files_of_first().await;
    assert_eq!(names, ["notes.txt"]);

    let (ran, _) = cli(owned(&[
        "chat",
        "Say goodbye",
        "--conversation",
        &conversation,
        "--edit",
        &first,
    ]))
    .await;
    ran.unwrap();
    let (edited, text, names) = files_of_first().await;
    assert_eq!(
        (text.as_str(), names.as_slice()),
        ("Say goodbye", ["notes.txt".to_owned()].as_slice())
    );
    let journal = mock.journal().await;
    let sent = journal.last().unwrap()["body"]["messages"].to_string();
    assert!(sent.contains("the first file"), "{sent}");

    let (ran, _) = cli(owned(&[
        "chat",
        "Say hello",
        "--conversation",
        &conversation,
        "--edit",
        &edited,
        "--attach",
        &other.display().to_string(),
    ]))
    .await;
    ran.unwrap();
    let (_, _, names) = files_of_first().await;
    assert_eq!(names, ["other.txt"]);
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn each_answer_costs_its_tokens_at_the_models_price_and_the_totals_are_their_exact_sum() {
    let Some(mock) = aimock("cost", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), &mock.root).await;
    let cli = |args: &[&str]| {
        run_cli(
            Arc::clone(&app),
            args.iter().map(|a| (*a).to_owned()).collect(),
        )
    };

    // No price yet: tokens only, and said so.
    let (ran, said) = cli(&["provider", "price", "Mock", "gpt-4o"]).await;
    ran.unwrap();
    assert!(said.contains("has no price"), "{said}");
    let (ran, _) = cli(&["chat", "Say hello"]).await;
    ran.unwrap();
    let (ran, said) = cli(&[
        "provider", "price", "Mock", "gpt-4o", "--input", "2.50", "--output", "10",
    ])
    .await;
    ran.unwrap();
    assert_eq!(
        said.trim(),
        "“gpt-4o” of “Mock”: input $2.5, output $10 per million tokens (said by you)."
    );
    let (ran, _) = cli(&["provider", "price", "Mock", "gpt-4o", "--input", "two"]).await;
    assert!(ran.is_err(), "a price is a number, with --output");
    // Read as the window's form reads it: the same words, naming the field.
    let (ran, _) = cli(&[
        "provider", "price", "Mock", "gpt-4o", "--input", "2", "--output", "ten",
    ])
    .await;
    let refused = ran.unwrap_err();
    assert!(
        refused.contains("--output ten") && refused.contains("Write dollars per million tokens"),
        "{refused}"
    );
    // An empty value (an unset variable in a script) is refused, not read as "no price".
    let (ran, _) = cli(&[
        "provider", "price", "Mock", "gpt-4o", "--input", "", "--output", "",
    ])
    .await;
    assert!(ran.is_err(), "an empty price is refused");
    let (ran, said) = cli(&["provider", "price", "Mock", "gpt-4o"]).await;
    ran.unwrap();
    assert!(said.contains("input $2.5"), "the price stays: {said}");

    // Priced: two answers in a new conversation.
    let (ran, _) = cli(&["chat", "Say goodbye"]).await;
    ran.unwrap();
    let conversation = app.conversations().list().await.unwrap()[0].id.clone();
    let (ran, _) = cli(&["chat", "--conversation", &conversation, "Say hello"]).await;
    ran.unwrap();
    let messages = store.list_messages(conversation.clone()).await.unwrap();
    let answers: Vec<_> = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .collect();
    assert_eq!(answers.len(), 2);
    let mut sum = 0;
    for answer in &answers {
        let (input, output) = (answer.input_tokens.unwrap(), answer.output_tokens.unwrap());
        assert!(input > 0 && output > 0, "aimock reports usage");
        let cost = answer.cost_pico.expect("a priced answer has a cost");
        assert_eq!(cost, input * 2_500_000 + output * 10_000_000);
        sum += cost;
    }
    let total = app.usage().of_conversation(&conversation).await.unwrap();
    assert_eq!(
        (total.requests, total.cost_pico, total.unpriced),
        (2, sum, 0)
    );

    // Every conversation's requests by day: the unpriced one counted, its cost not guessed.
    let (ran, said) = cli(&["usage", "--json"]).await;
    ran.unwrap();
    let report: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(report["total"]["requests"], 3);
    assert_eq!(report["total"]["unpriced"], 1);
    assert_eq!(report["total"]["cost_pico"], sum);
    assert_eq!(report["days"][0]["model"], "gpt-4o");
    let (ran, said) = cli(&["usage"]).await;
    ran.unwrap();
    assert!(said.contains("+ 1 unpriced"), "{said}");
    let (ran, _) = cli(&["usage", "--since", "yesterday"]).await;
    assert!(ran.unwrap_err().contains("YYYY-MM-DD"));
    let (ran, said) = cli(&["usage", "--since", "2999-01-01"]).await;
    ran.unwrap();
    assert!(said.contains("No model was asked"), "{said}");
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_profile_gives_a_conversation_its_system_prompt_model_tools_and_limits() {
    let Some((mock, home, app, _store)) = app_with_peers("profiles").await else {
        return;
    };
    start_everything(&app).await;
    let cli = |args: &[&str]| {
        run_cli(
            Arc::clone(&app),
            args.iter().map(|a| (*a).to_owned()).collect(),
        )
    };

    // Made on the command line: the echo tool alone of server-everything's, another model,
    // two rounds at most; the default for new conversations.
    let (made, json) = cli(&[
        "profile",
        "create",
        "Echo only",
        "--system",
        "You test tools.",
        "--provider",
        "mock",
        "--model",
        "gpt-4o-mini",
        "--max-rounds",
        "2",
        "--switch",
        "everything=off",
        "--switch",
        "everything:echo=on",
        "--default",
        "--json",
    ])
    .await;
    made.unwrap();
    let profile: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(profile["name"], "Echo only");
    assert_eq!(
        profile["provider"], "Mock",
        "the provider as it is spelled here"
    );
    assert_eq!(profile["is_default"], true);
    assert_eq!(profile["tools"].as_array().unwrap().len(), 2, "{json}");
    let profile_id = profile["id"].as_str().unwrap().to_owned();
    let (taken, _) = cli(&["profile", "create", "echo ONLY"]).await;
    assert!(taken.unwrap_err().contains("exists already"));

    // A new conversation starts from the default profile: its prompt, model and tools go in
    // the request, and its limit stops the loop.
    let conversation = app
        .create_conversation(None, None, &ProfileChoice::Default)
        .await
        .unwrap();
    assert_eq!(
        conversation.profile_id.as_deref(),
        Some(profile_id.as_str())
    );
    assert_eq!(conversation.system_prompt, "You test tools.");
    let before = mock.journal().await.len();
    let seen = Arc::new(Seen::default());
    let run = app
        .start_turn_answered_by(
            ask(&conversation.id, "Loop forever"),
            seen.clone(),
            Arc::new(switchboard_core::agent::FixedApprover(
                switchboard_core::agent::Decision::AllowOnce,
            )),
        )
        .await
        .unwrap();
    assert_eq!(
        run.finished().await,
        StopReason::MaxRounds,
        "the profile's 2 rounds"
    );
    let bodies = bodies_since(&mock, before).await;
    assert_eq!(bodies.len(), 3, "two rounds and the last answer");
    assert_eq!(bodies[0]["model"], "gpt-4o-mini");
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You test tools."), "{system}");
    let names = tool_names(&bodies[0]);
    assert!(names.contains(&"everything__echo".to_owned()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("everything__") && n != "everything__echo"),
        "only the echo tool of everything's: {names:?}"
    );

    // `--profile none` starts from Settings whatever the default; `--profile NAME` from it.
    let before = mock.journal().await.len();
    let (ran, _) = cli(&["chat", "--tools", "none", "--profile", "none", "Say hello"]).await;
    ran.unwrap();
    let plain = app.conversations().list().await.unwrap().remove(0);
    assert_eq!(plain.profile_id, None);
    let body = &bodies_since(&mock, before).await[0];
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(
        body["messages"][0]["content"],
        switchboard_core::settings::DEFAULT_SYSTEM_PROMPT
    );

    // Switching: the plain conversation follows the profile from its next message.
    let (applied, said) = cli(&["profile", "apply", &plain.id, "echo only"]).await;
    applied.unwrap();
    assert!(said.contains("follows the profile “Echo only”"), "{said}");
    let before = mock.journal().await.len();
    let (ran, _) = cli(&[
        "chat",
        "--conversation",
        &plain.id,
        "--tools",
        "none",
        "Say goodbye",
    ])
    .await;
    ran.unwrap();
    let body = &bodies_since(&mock, before).await[0];
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(body["messages"][0]["content"], "You test tools.");
    let toggles = app
        .store()
        .unwrap()
        .tool_toggles(plain.id.clone())
        .await
        .unwrap();
    assert_eq!(toggles.len(), 2, "the profile's switches: {toggles:?}");

    // Export, import (a taken name gets a number; a provider this machine lacks is left
    // out, and said), duplicate, delete.
    let file = home.path().join("echo.json");
    let (exported, _) = cli(&[
        "profile",
        "export",
        "Echo only",
        "--out",
        &file.display().to_string(),
    ])
    .await;
    exported.unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["kind"], "switchboard.profile");
    assert!(written.get("id").is_none() && written.get("is_default").is_none());
    let (imported, json) = cli(&["profile", "import", &file.display().to_string(), "--json"]).await;
    imported.unwrap();
    let imported: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(imported["profile"]["name"], "Echo only (2)");
    assert_eq!(imported["profile"]["model"], "gpt-4o-mini");
    assert_eq!(imported["profile"]["is_default"], false);
    let elsewhere = home.path().join("elsewhere.json");
    let mut other = written.clone();
    other["provider"] = "Far away".into();
    std::fs::write(&elsewhere, other.to_string()).unwrap();
    let (imported, json) = cli(&[
        "profile",
        "import",
        &elsewhere.display().to_string(),
        "--json",
    ])
    .await;
    imported.unwrap();
    let imported: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(imported["profile"]["name"], "Echo only (3)");
    assert_eq!(imported["profile"]["provider"], serde_json::Value::Null);
    assert_eq!(imported["notes"].as_array().unwrap().len(), 2, "{json}");
    std::fs::write(
        &elsewhere,
        r#"{"kind":"switchboard.conversation","version":1,"name":"x"}"#,
    )
    .unwrap();
    let (refused, _) = cli(&["profile", "import", &elsewhere.display().to_string()]).await;
    assert!(refused.unwrap_err().contains("not a Switchboard profile"));
    let (copied, json) = cli(&["profile", "duplicate", "Echo only", "--json"]).await;
    copied.unwrap();
    assert!(json.contains("\"name\": \"Echo only (copy)\""), "{json}");
    let (listed, table) = cli(&["profile", "list"]).await;
    listed.unwrap();
    assert!(table.contains("Echo only (default)"), "{table}");
    assert_eq!(
        table.lines().count(),
        5,
        "a header and four profiles: {table}"
    );

    let (deleted, _) = cli(&["profile", "delete", "Echo only"]).await;
    deleted.unwrap();
    let kept = app
        .conversations()
        .get(&plain.id)
        .await
        .unwrap()
        .conversation;
    assert_eq!(kept.profile_id, None, "follows no profile now");
    assert_eq!(
        kept.system_prompt, "You test tools.",
        "and keeps what it gave"
    );
    let (_, said) = cli(&["profile", "default"]).await;
    assert!(said.starts_with("No default profile"), "{said}");
    app.shutdown(Duration::from_secs(5)).await;
}

/// Allows every call as `decision` says, noting who asked about which tool.
struct Noting {
    decision: switchboard_core::agent::Decision,
    asked: Mutex<Vec<(Option<String>, String)>>,
}

impl switchboard_core::agent::Approver for Noting {
    fn ask(
        &self,
        request: switchboard_core::agent::ApprovalRequest,
    ) -> switchboard_core::agent::approval::Answers<'_> {
        let mut asked = self.asked.lock().unwrap();
        for call in &request.calls {
            asked.push((request.asked_by.clone(), call.tool.clone()));
        }
        let answers = request
            .calls
            .iter()
            .map(|c| switchboard_core::agent::ApprovalAnswer {
                call_id: c.call_id.clone(),
                decision: self.decision,
                reason: None,
            })
            .collect();
        Box::pin(std::future::ready(answers))
    }
}

#[tokio::test]
async fn two_models_answer_one_question_side_by_side_each_with_its_tools_and_approvals_and_one_is_picked(
) {
    let Some((mock, _home, app, store)) = app_with_peers("compare").await else {
        return;
    };
    support::add_provider(
        &app,
        "Other",
        "openai_compatible",
        &format!("{}/v1", mock.root),
        Some("gpt-4o-mini"),
        Some("sk-aimock"),
    )
    .await;
    start_everything(&app).await;
    let conversation = app
        .create_conversation(None, Some(""), &ProfileChoice::None)
        .await
        .unwrap()
        .id;
    let noting = Arc::new(Noting {
        decision: switchboard_core::agent::Decision::AllowConversation,
        asked: Mutex::new(Vec::new()),
    });
    let seen = Arc::new(Seen::default());
    let before = mock.journal().await.len();
    let run = app
        .start_comparison_answered_by(
            switchboard_core::app::CompareRequest {
                conversation_id: conversation.clone(),
                text: "Compare the sum".into(),
                models: vec![
                    ("mock".into(), Some("gpt-4o".into())),
                    ("Other".into(), None),
                ],
                ..Default::default()
            },
            seen.clone(),
            noting.clone(),
        )
        .await
        .unwrap();
    assert!(matches!(
        app.start_turn(ask(&conversation, "Say hello"), Arc::new(Seen::default()))
            .await,
        Err(switchboard_core::CoreError::RunUnderWay)
    ));
    assert_eq!(run.finished().await, StopReason::Completed);

    // Each model ran its own loop: its own tool, asked about under its name.
    let mut asked = noting.asked.lock().unwrap().clone();
    asked.sort();
    assert_eq!(
        asked,
        [
            (Some("Mock · gpt-4o".to_owned()), "get-sum".to_owned()),
            (Some("Other · gpt-4o-mini".to_owned()), "echo".to_owned()),
        ]
    );
    let bodies = bodies_since(&mock, before).await;
    assert_eq!(bodies.len(), 4, "two rounds per model");
    let models: Vec<&str> = bodies.iter().filter_map(|b| b["model"].as_str()).collect();
    assert_eq!(models.iter().filter(|m| **m == "gpt-4o").count(), 2);
    assert_eq!(models.iter().filter(|m| **m == "gpt-4o-mini").count(), 2);
    // Every event of a model's run came tagged with it.
    let events = seen.0.lock().unwrap().clone();
    let tagged = |lane: u32| {
        events
            .iter()
            .filter_map(|e| match e {
                RunEvent::Lane {
                    lane: l,
                    model,
                    event,
                    ..
                } if *l == lane => Some((model.clone(), event.as_ref().clone())),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert!(tagged(0).iter().all(|(m, _)| m == "gpt-4o"));
    assert!(tagged(1).iter().any(|(m, e)| m == "gpt-4o-mini"
        && matches!(e, RunEvent::ToolFinished { content, .. } if content.contains("five"))));
    let folded = events.iter().find_map(|e| match e {
        RunEvent::ComparisonFolded { message_id } => message_id.clone(),
        _ => None,
    });
    let first_answer = folded.expect("the answers were folded");

    // "For this conversation" in a lane holds in the conversation itself.
    let approvals = app.tool_approvals().await.unwrap();
    assert_eq!(approvals.len(), 2, "{approvals:?}");
    assert!(approvals
        .iter()
        .all(|a| a.conversation_id.as_deref() == Some(conversation.as_str())));

    // One conversation with the question once and the first answer shown; the other kept
    // as a branch; the lanes gone; the usage of both counted in the conversation.
    let texts = || {
        let store = store.clone();
        let id = conversation.clone();
        async move {
            store
                .list_messages(id)
                .await
                .unwrap()
                .into_iter()
                .filter(|m| m.role != Role::Tool)
                .filter_map(|m| m.content.filter(|c| !c.is_empty()))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(texts().await, ["Compare the sum", "gpt-4o: the sum is 5."]);
    assert_eq!(app.conversations().list().await.unwrap().len(), 1);
    let detail = app.conversations().get(&conversation).await.unwrap();
    assert_eq!(detail.branches.len(), 1);
    assert_eq!(detail.branches[0].message_id, first_answer);
    assert_eq!(detail.branches[0].count, 2);
    assert_eq!(
        detail.branches[0].models,
        [
            Some("Mock · gpt-4o".to_owned()),
            Some("Other · gpt-4o-mini".to_owned())
        ]
    );
    let usage = app.usage().of_conversation(&conversation).await.unwrap();
    assert_eq!(usage.requests, 4);
    assert_eq!(
        (
            detail.conversation.provider.as_deref(),
            detail.conversation.model.as_deref()
        ),
        (Some("Mock"), Some("gpt-4o"))
    );

    // The export has both answers: the other under its model's name.
    let export = app.conversations().export(&conversation).await.unwrap();
    assert_eq!(export.branches.len(), 1);
    let point = &export.branches[0];
    assert_eq!(point.others.len(), 1);
    assert_eq!(
        point.model(point.others[0].position),
        Some("Other · gpt-4o-mini")
    );
    assert_eq!(point.model(point.shown), Some("Mock · gpt-4o"));
    let markdown = switchboard_core::store::to_markdown(&export);
    assert!(
        markdown.contains(
            "<details>\n<summary>Also answered by Other · gpt-4o-mini</summary>\n\ngpt-4o-mini: it echoed five."
        ),
        "{markdown}"
    );

    // Picking the other answer: it is shown, and its model answers the next message.
    app.switch_branch(&conversation, &first_answer, 1)
        .await
        .unwrap();
    assert_eq!(
        texts().await,
        ["Compare the sum", "gpt-4o-mini: it echoed five."]
    );
    let before = mock.journal().await.len();
    let run = app
        .start_turn(
            ask(&conversation, "And after the comparison"),
            Arc::new(Seen::default()),
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);
    let body = &bodies_since(&mock, before).await[0];
    assert_eq!(body["model"], "gpt-4o-mini");
    let history = body["messages"].to_string();
    assert!(history.contains("it echoed five") && !history.contains("the sum is 5"));

    // The command line: each answer under its model's name; with --json, events tagged.
    let (ran, said) = run_cli(
        Arc::clone(&app),
        [
            "chat",
            "--compare",
            "Mock:gpt-4o,Other",
            "--approve",
            "all",
            "Compare the sum",
        ]
        .map(str::to_owned)
        .to_vec(),
    )
    .await;
    ran.unwrap();
    assert!(
        said.contains("── Mock · gpt-4o ──\ngpt-4o: the sum is 5.")
            && said.contains("── Other · gpt-4o-mini ──\ngpt-4o-mini: it echoed five."),
        "{said}"
    );
    let (ran, json) = run_cli(
        Arc::clone(&app),
        [
            "chat",
            "--compare",
            "Mock:gpt-4o,Other",
            "--tools",
            "none",
            "--json",
            "Say hello",
        ]
        .map(str::to_owned)
        .to_vec(),
    )
    .await;
    ran.unwrap();
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let lanes: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "lane").collect();
    assert!(lanes.iter().any(|l| l["model"] == "gpt-4o"));
    assert!(lanes.iter().any(|l| l["model"] == "gpt-4o-mini"
        && l["event"]["type"] == "message_saved"
        && l["event"]["message"]["content"] == "Hello."));
    assert!(lines.iter().any(|l| l["type"] == "comparison_folded"));
    let (refused, _) = run_cli(
        Arc::clone(&app),
        ["chat", "--compare", "Mock", "x"]
            .map(str::to_owned)
            .to_vec(),
    )
    .await;
    assert!(refused.unwrap_err().contains("two to"));
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn stop_on_one_model_stops_it_alone_and_stop_all_ends_the_comparison_keeping_what_each_said()
{
    let Some(mock) = aimock("compare_stop", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_in(home.path(), &mock.root).await;
    let conversation = app
        .create_conversation(None, Some(""), &ProfileChoice::None)
        .await
        .unwrap()
        .id;
    let seen = Arc::new(Seen::default());
    let run = app
        .start_comparison_answered_by(
            switchboard_core::app::CompareRequest {
                conversation_id: conversation.clone(),
                text: "Tell me a long slow story".into(),
                models: vec![
                    ("Mock".into(), Some("gpt-4o".into())),
                    ("Mock".into(), Some("gpt-4o-mini".into())),
                ],
                tools: switchboard_core::app::ToolSelection::None,
                ..Default::default()
            },
            seen.clone(),
            Arc::new(switchboard_core::agent::FixedApprover(
                switchboard_core::agent::Decision::Deny,
            )),
        )
        .await
        .unwrap();
    let lane_of = |e: &RunEvent, lane: u32| match e {
        RunEvent::Lane { lane: l, event, .. } if *l == lane => Some(event.as_ref().clone()),
        _ => None,
    };
    let first_run = seen
        .first(|e| match lane_of(e, 0) {
            Some(RunEvent::RunStarted { run_id, .. }) => Some(run_id),
            _ => None,
        })
        .await;
    seen.first(|e| matches!(lane_of(e, 0), Some(RunEvent::TextDelta { .. })).then_some(()))
        .await;
    app.stop_run(&first_run);
    let stopped = seen
        .first(|e| match lane_of(e, 0) {
            Some(RunEvent::RunFinished { reason, .. }) => Some(reason),
            _ => None,
        })
        .await;
    assert_eq!(stopped, StopReason::Cancelled);
    // The other model goes on after the first stopped.
    let count_of_second = || {
        seen.0
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(lane_of(e, 1), Some(RunEvent::TextDelta { .. })))
            .count()
    };
    let before = count_of_second();
    eventually(
        Duration::from_secs(20),
        "the second model stopped too",
        || async { (count_of_second() > before).then_some(()) },
    )
    .await;
    // Stop all ends it; each partial answer is kept, the first model's as a branch.
    app.stop_run(&run.run_id);
    assert_eq!(run.finished().await, StopReason::Cancelled);
    let shown = store.list_messages(conversation.clone()).await.unwrap();
    assert_eq!(shown.len(), 2, "the question and one answer shown");
    assert_eq!(shown[1].status, MessageStatus::Interrupted);
    assert!(shown[1].content.as_deref().is_some_and(|c| {
        // What was streamed before the stop: some of the story's beginning.
        let start = "Once upon a long night the switchboard hummed.";
        !c.is_empty() && (start.starts_with(c) || c.starts_with(start))
    }));
    let detail = app.conversations().get(&conversation).await.unwrap();
    assert_eq!(detail.branches.len(), 1);
    assert_eq!(detail.branches[0].count, 2);
    assert!(
        app.start_turn(ask(&conversation, "Say hello"), Arc::new(Seen::default()))
            .await
            .is_ok(),
        "the conversation is free again"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

/// Issue 19: a real 2025-11-25 server (server-everything as installed) and a 2026-07-28 one
/// (our fault server on the Python SDK) answer in one conversation, in one round, each spoken
/// to in its own version; both results reach the model.
#[tokio::test]
async fn a_2025_server_and_a_2026_server_answer_side_by_side_in_one_conversation() {
    let Some((mock, _home, app, store)) = app_with_peers("two_protocols").await else {
        return;
    };
    start_everything(&app).await;
    app.host()
        .spawn(
            "fault",
            stdio_launch(
                &peers().join(".venv/bin/python").to_string_lossy(),
                &[&peers().join("fault_server.py").to_string_lossy()],
                Duration::from_secs(30),
            ),
        )
        .await;
    eventually(
        Duration::from_secs(60),
        "the fault server did not start",
        || async {
            matches!(
                app.host().states().get("fault"),
                Some(ServerState::Running { .. })
            )
            .then_some(())
        },
    )
    .await;
    assert_eq!(
        app.host()
            .server("everything")
            .unwrap()
            .protocol()
            .as_deref(),
        Some("2025-11-25")
    );
    assert_eq!(
        app.host().server("fault").unwrap().protocol().as_deref(),
        Some("2026-07-28")
    );
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let before = mock.journal().await.len();
    let run = app
        .start_turn_answered_by(
            ask(&conversation, "Ask both protocols"),
            Arc::new(Seen::default()),
            Arc::new(switchboard_core::agent::FixedApprover(
                switchboard_core::agent::Decision::AllowOnce,
            )),
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);
    let messages = store.list_messages(conversation.clone()).await.unwrap();
    let tool_texts: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_deref().unwrap_or_default())
        .collect();
    assert_eq!(tool_texts.len(), 2, "{tool_texts:?}");
    assert!(
        tool_texts.iter().any(|t| t.contains("from 2025-11-25")),
        "{tool_texts:?}"
    );
    assert!(
        tool_texts.iter().any(|t| t.contains("from 2026-07-28")),
        "{tool_texts:?}"
    );
    let answer = messages.last().unwrap();
    assert_eq!(answer.content.as_deref(), Some("Both servers answered."));
    assert_eq!(bodies_since(&mock, before).await.len(), 2);
}
