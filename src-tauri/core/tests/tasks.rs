//! Long tasks outside their runs (issue 61), against aimock as the model and a scripted server
//! speaking the Tasks extension over HTTP (`tests/peers/tasks_server.py --http`): the person
//! goes on without a task from its card, the run answers at once, the app's follower follows
//! the task to its end and keeps its late result, which the window hears of and the model reads
//! with the next question; the card's Cancel cancels one call (on its server too) and the run
//! goes on; and quitting while a call waits for its task leaves the task running, followed by
//! the next app on the home. (A task followed again after `kill -9` of the app is `tests/e2e/tasks.test.mjs`:
//! a process of its own is killed there.)

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use support::{eventually, peers, Seen};
use switchboard_core::agent::controls::CallControl;
use switchboard_core::app::{ProfileChoice, TurnRequest};
use switchboard_core::events::{RunEvent, StopReason};
use switchboard_core::mcp::remote::{RemoteLaunch, RemoteTransport};
use switchboard_core::secrets::MemoryStore;
use switchboard_core::store::{Role, TaskState, LATE_RESULT};
use switchboard_core::{App, AppConfig, AppPaths};

const WITHIN: Duration = Duration::from_secs(60);

/// The tasks server over HTTP, killed when dropped; every `tasks/cancel` and each task made is
/// a line of its log.
struct TasksServer {
    child: Child,
    url: String,
    log: std::path::PathBuf,
}

impl Drop for TasksServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TasksServer {
    fn start(dir: &Path) -> Self {
        let log = dir.join("tasks.log");
        let mut child = Command::new(peers().join(".venv/bin/python"))
            .arg(peers().join("tasks_server.py"))
            .arg(&log)
            .arg("--http")
            .stdout(Stdio::piped())
            .spawn()
            .expect("the tasks server starts");
        let url = support::read_until(child.stdout.take().unwrap(), "LISTENING").unwrap();
        Self { child, url, log }
    }

    fn said(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// `app` connected to the tasks server as "tasks".
async fn connect(app: &App, server: &TasksServer) {
    app.host()
        .spawn(
            "tasks",
            RemoteLaunch {
                url: server.url.clone(),
                headers: Vec::new(),
                transport: RemoteTransport::Http,
                startup_timeout: Duration::from_secs(20),
                auth: None,
                elicitation: Default::default(),
                roots: Default::default(),
            },
        )
        .await;
    support::server_running(app.host(), "tasks").await;
}

async fn app_on(home: &Path) -> Arc<App> {
    let paths = AppPaths::under_home(home.to_path_buf());
    paths.create_all().unwrap();
    let mut config = AppConfig::headless(
        paths,
        Arc::new(MemoryStore::default()),
        Arc::new(switchboard_core::settings::MemorySettings::default()),
    );
    config.http = support::test_http();
    App::open(config).await
}

/// What each test here starts from: aimock as the model, the tasks server, and an app on a home
/// of its own connected to it, with a conversation; `None` (the test is skipped, and says so)
/// without the peers. Every part is bound by each test: one left unbound would end with the
/// statement (aimock stopped, the folders gone).
struct Setup {
    mock: support::Aimock,
    server: TasksServer,
    home: tempfile::TempDir,
    _dir: tempfile::TempDir,
    app: Arc<App>,
    conversation: String,
}

async fn setup(test: &str) -> Option<Setup> {
    if !support::mcp_peers_installed(test) {
        return None;
    }
    let mock = support::aimock(test, "tool-loop.json", &[])?;
    let dir = tempfile::tempdir().unwrap();
    let server = TasksServer::start(dir.path());
    let home = tempfile::tempdir().unwrap();
    let app = app_on(home.path()).await;
    support::add_mock_provider(&app, &mock.root).await;
    connect(&app, &server).await;
    let conversation = app
        .create_conversation(None, None, &ProfileChoice::Default)
        .await
        .unwrap()
        .id;
    Some(Setup {
        mock,
        server,
        home,
        _dir: dir,
        app,
        conversation,
    })
}

fn ask(conversation: &str, text: &str) -> TurnRequest {
    TurnRequest {
        conversation_id: conversation.to_owned(),
        text: Some(text.to_owned()),
        ..TurnRequest::default()
    }
}

fn allow() -> Arc<dyn switchboard_core::agent::Approver> {
    Arc::new(switchboard_core::agent::FixedApprover(
        switchboard_core::agent::Decision::AllowOnce,
    ))
}

/// Asks `text` in `conversation`, whose call runs as a task the person goes on without; the
/// run answers at once.
async fn went_on_without_its_task(app: &Arc<App>, conversation: &str, text: &str) {
    let seen = Arc::new(Seen::default());
    let run = app
        .start_turn_answered_by(ask(conversation, text), seen.clone(), allow())
        .await
        .unwrap();
    when_its_task_runs(app, &seen, conversation, CallControl::GoOn).await;
    assert_eq!(run.finished().await, StopReason::Completed);
}

/// Waits for the run's call to run as a task, then asks its card for `control`.
async fn when_its_task_runs(app: &App, seen: &Seen, conversation: &str, control: CallControl) {
    let call_id = seen
        .first(|e| match e {
            RunEvent::ToolTask { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .await;
    let messages = app
        .store()
        .unwrap()
        .list_messages(conversation.to_owned())
        .await
        .unwrap();
    let answer = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert!(app
        .control_call(&answer.id, &call_id, control)
        .await
        .unwrap());
}

fn tool_message(messages: &[switchboard_core::store::Message], call: &str) -> String {
    messages
        .iter()
        .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(call))
        .and_then(|m| m.content.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_task_the_person_goes_on_without_is_followed_to_its_end_and_the_model_reads_its_late_result(
) {
    let Some(Setup {
        mock,
        server,
        home: _home,
        _dir,
        app,
        conversation,
    }) = setup("tasks-go-on").await
    else {
        return;
    };
    app.start_task_follower();
    let heard: Arc<Mutex<Vec<String>>> = Arc::default();
    let hearing = Arc::clone(&heard);
    app.watch_tasks(move |conversation| {
        hearing.lock().unwrap().push(conversation);
        true
    });

    // The call runs as a task; the person goes on without it, and the run answers at once.
    went_on_without_its_task(&app, &conversation, "Task: slow report").await;
    let store = app.store().unwrap().clone();
    let messages = store.list_messages(conversation.clone()).await.unwrap();
    let said = tool_message(&messages, "call_task_slow");
    assert!(
        said.contains("go on without waiting") && said.contains("task-1"),
        "{said}"
    );
    assert_eq!(
        messages.last().unwrap().content.as_deref(),
        Some("Going on while the report is written.")
    );
    assert!(
        !server.said().contains("cancel"),
        "going on does not cancel: {}",
        server.said()
    );

    // The follower keeps its result when the task ends, and the window hears of it.
    let late = eventually(WITHIN, "the late result", || async {
        let all = store.list_messages(conversation.clone()).await.unwrap();
        all.into_iter()
            .find(|m| m.name.as_deref() == Some(LATE_RESULT))
            .ok_or("none yet")
    })
    .await;
    assert_eq!(
        switchboard_core::store::late_result_call(&late).map(|(_, call)| call),
        Some("call_task_slow")
    );
    assert_eq!(late.content.as_deref(), Some("slow report on tides"));
    eventually(WITHIN, "the window told", || async {
        let heard = heard.lock().unwrap().clone();
        if heard == [conversation.clone()] {
            Ok(())
        } else {
            Err(heard)
        }
    })
    .await;
    let tasks = app.tasks(10).await.unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].task.as_ref().unwrap().state, TaskState::Completed);

    // The model reads it with the next question.
    let run = app
        .start_turn_answered_by(
            ask(&conversation, "Task: and the report?"),
            Arc::new(Seen::default()),
            allow(),
        )
        .await
        .unwrap();
    assert_eq!(run.finished().await, StopReason::Completed);
    let journal = mock.journal().await;
    let last: &Value = journal.last().unwrap();
    let user = last["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()
        .to_string();
    assert!(
        user.contains("call_task_slow (tasks__slow) has ended")
            && user.contains("slow report on tides")
            && user.contains("Task: and the report?"),
        "{user}"
    );
}

#[tokio::test]
async fn the_cards_cancel_cancels_one_call_on_its_server_and_the_run_goes_on() {
    let Some(Setup {
        mock: _mock,
        server,
        home: _home,
        _dir,
        app,
        conversation,
    }) = setup("tasks-cancel").await
    else {
        return;
    };
    let seen = Arc::new(Seen::default());
    let run = app
        .start_turn_answered_by(ask(&conversation, "Task: endless"), seen.clone(), allow())
        .await
        .unwrap();
    when_its_task_runs(&app, &seen, &conversation, CallControl::Cancel).await;
    assert_eq!(run.finished().await, StopReason::Completed);
    let messages = app
        .store()
        .unwrap()
        .list_messages(conversation.clone())
        .await
        .unwrap();
    let said = tool_message(&messages, "call_task_forever");
    assert!(said.contains("The person cancelled this call"), "{said}");
    assert_eq!(
        messages.last().unwrap().content.as_deref(),
        Some("The endless task was cancelled.")
    );
    assert!(server.said().contains("cancel task-1"), "{}", server.said());
    let tasks = app.tasks(10).await.unwrap();
    assert_eq!(tasks[0].task.as_ref().unwrap().state, TaskState::Cancelled);
    // Nothing is left to follow.
    assert!(app.background_tasks().await.unwrap().is_empty());
}

#[tokio::test]
async fn quitting_while_a_call_waits_for_its_task_leaves_the_task_running_for_the_next_start() {
    let Some(Setup {
        mock: _mock,
        server,
        home,
        _dir,
        app,
        conversation,
    }) = setup("tasks-quit").await
    else {
        return;
    };
    // The window's follower runs, as it does: quitting must not end the task through it.
    app.start_task_follower();
    let seen = Arc::new(Seen::default());
    let _run = app
        .start_turn_answered_by(
            ask(&conversation, "Task: slow report"),
            seen.clone(),
            allow(),
        )
        .await
        .unwrap();
    seen.first(|e| matches!(e, RunEvent::ToolTask { .. }).then_some(()))
        .await;
    app.shutdown(Duration::from_secs(10)).await;
    assert!(
        !server.said().contains("cancel"),
        "quitting cancelled the task: {}",
        server.said()
    );
    let store = app.store().unwrap().clone();
    let messages = store.list_messages(conversation.clone()).await.unwrap();
    let said = tool_message(&messages, "call_task_slow");
    assert!(said.contains("Switchboard was closing"), "{said}");
    assert_eq!(
        app.background_tasks().await.unwrap().len(),
        1,
        "left to be followed"
    );
    assert!(
        !store
            .list_messages(conversation.clone())
            .await
            .unwrap()
            .iter()
            .any(|m| m.name.as_deref() == Some(LATE_RESULT)),
        "nothing was said of it at quit"
    );
    // The process ends (its writer's lock goes with it): until then, another process on the
    // home leaves its task alone.
    let other = app_on(home.path()).await;
    assert!(
        other.background_tasks().await.unwrap().is_empty(),
        "the quitting app's own"
    );
    drop(other);
    drop(store);
    drop(app);

    // The next start follows it, and its result comes.
    let next = app_on(home.path()).await;
    let store = next.store().unwrap().clone();
    connect(&next, &server).await;
    next.start_task_follower();
    let late = eventually(WITHIN, "the late result", || async {
        let all = store.list_messages(conversation.clone()).await.unwrap();
        all.into_iter()
            .find(|m| m.name.as_deref() == Some(LATE_RESULT))
            .ok_or("none yet")
    })
    .await;
    assert_eq!(late.content.as_deref(), Some("slow report on tides"));
    assert_eq!(
        next.tasks(10).await.unwrap()[0]
            .task
            .as_ref()
            .unwrap()
            .state,
        TaskState::Completed
    );
    next.shutdown(Duration::from_secs(10)).await;
}

#[tokio::test]
async fn a_task_whose_server_is_no_longer_among_the_persons_servers_is_said_to_be_lost() {
    let Some(Setup {
        mock: _mock,
        server: _server,
        home: _home,
        _dir,
        app,
        conversation,
    }) = setup("tasks-removed").await
    else {
        return;
    };
    went_on_without_its_task(&app, &conversation, "Task: slow report").await;
    // The server goes (it was never in this home's mcp.json): the task cannot be followed.
    app.host().stop("tasks").await;
    let followed = app.follow_tasks_until_done().await.unwrap();
    assert_eq!(followed.len(), 1);
    assert_eq!(followed[0].state, TaskState::Lost);
    assert!(
        followed[0].said.contains("no longer among your servers"),
        "{}",
        followed[0].said
    );
    let messages = app
        .store()
        .unwrap()
        .list_messages(conversation.clone())
        .await
        .unwrap();
    let late = messages
        .iter()
        .find(|m| m.name.as_deref() == Some(LATE_RESULT))
        .expect("the conversation says so");
    assert!(late.is_error);
    assert!(app.background_tasks().await.unwrap().is_empty());
}

/// A task in the background that is not being followed (no follower runs here, as when its
/// server is down or it waits its turn) is cancelled from its card all the same: recorded
/// cancelled, the conversation says so, and its server is told.
#[tokio::test]
async fn a_background_task_no_one_follows_now_is_cancelled_from_its_card() {
    let Some(Setup {
        mock: _mock,
        server,
        home: _home,
        _dir,
        app,
        conversation,
    }) = setup("tasks-cancel-unfollowed").await
    else {
        return;
    };
    went_on_without_its_task(&app, &conversation, "Task: slow report").await;
    let tasks = app.tasks(10).await.unwrap();
    assert_eq!(tasks[0].task.as_ref().unwrap().state, TaskState::Background);

    let store = app.store().unwrap().clone();
    let answer = store
        .list_messages(conversation.clone())
        .await
        .unwrap()
        .into_iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert!(app
        .control_call(&answer.id, "call_task_slow", CallControl::Cancel)
        .await
        .unwrap());
    assert!(server.said().contains("cancel task-1"), "{}", server.said());
    let tasks = app.tasks(10).await.unwrap();
    assert_eq!(tasks[0].task.as_ref().unwrap().state, TaskState::Cancelled);
    let late = store
        .list_messages(conversation.clone())
        .await
        .unwrap()
        .into_iter()
        .find(|m| m.name.as_deref() == Some(LATE_RESULT))
        .unwrap();
    assert!(
        late.content
            .as_deref()
            .unwrap_or_default()
            .contains("The person cancelled the task"),
        "{late:?}"
    );
    // Nothing is followed of it afterwards, and a second Cancel reaches nothing.
    assert!(app.background_tasks().await.unwrap().is_empty());
    assert!(!app
        .control_call(&answer.id, "call_task_slow", CallControl::Cancel)
        .await
        .unwrap());
}

/// A task followed outside its run whose server asks for an input Switchboard never gives
/// (the client's model, by sampling) ends there: failed, said, and cancelled on its server,
/// not followed again every 30 s for ever.
#[tokio::test]
async fn a_background_task_asking_for_an_input_switchboard_never_gives_ends_failed() {
    let Some(Setup {
        mock: _mock,
        server,
        home: _home,
        _dir,
        app,
        conversation,
    }) = setup("tasks-sampling").await
    else {
        return;
    };
    app.start_task_follower();
    went_on_without_its_task(&app, &conversation, "Task: draft").await;
    let store = app.store().unwrap().clone();
    let late = eventually(WITHIN, "the task's end", || async {
        store
            .list_messages(conversation.clone())
            .await
            .unwrap()
            .into_iter()
            .find(|m| m.name.as_deref() == Some(LATE_RESULT))
            .ok_or("none yet")
    })
    .await;
    let said = late.content.unwrap_or_default();
    assert!(said.contains("sampling"), "{said}");
    let tasks = app.tasks(10).await.unwrap();
    assert_eq!(tasks[0].task.as_ref().unwrap().state, TaskState::Failed);
    eventually(WITHIN, "the server told", || async {
        if server.said().contains("cancel task-1") {
            Ok(())
        } else {
            Err(server.said())
        }
    })
    .await;
}

/// A late result another process keeps (`switchboard tasks follow` beside the open window) is
/// told to the window at its follower's next look, and the window's follower leaves that
/// process's task alone.
#[tokio::test]
async fn the_window_hears_of_a_late_result_another_process_kept() {
    window_hears_of_another_process_late_result(Duration::from_millis(200)).await;
}

/// With its follower looking only hourly, the window still hears at once (its look at the
/// database's version every 2 s).
#[tokio::test]
async fn the_window_hears_of_another_process_late_result_before_its_next_look() {
    window_hears_of_another_process_late_result(Duration::from_secs(3600)).await;
}

async fn window_hears_of_another_process_late_result(look_again: Duration) {
    let Some(Setup {
        mock,
        server,
        home,
        _dir,
        app: window,
        conversation,
    }) = setup("tasks-other-process").await
    else {
        return;
    };
    window.follow_tasks_every(look_again);
    let heard: Arc<Mutex<Vec<String>>> = Arc::default();
    let hearing = Arc::clone(&heard);
    window.watch_tasks(move |conversation| {
        hearing.lock().unwrap().push(conversation);
        true
    });

    // The provider is the home's, added already.
    let _mock = mock;
    let cli = app_on(home.path()).await;
    connect(&cli, &server).await;
    went_on_without_its_task(&cli, &conversation, "Task: slow report").await;
    let followed = cli.follow_tasks_until_done().await.unwrap();
    assert_eq!(followed.len(), 1);
    assert_eq!(followed[0].state, TaskState::Completed);
    eventually(WITHIN, "the window told", || async {
        let heard = heard.lock().unwrap().clone();
        if heard == [conversation.clone()] {
            Ok(())
        } else {
            Err(heard)
        }
    })
    .await;
    // Told once: later looks (and looks at the database's version, every 2 s) find nothing
    // new.
    tokio::time::sleep(Duration::from_millis(2_600)).await;
    assert_eq!(heard.lock().unwrap().len(), 1);
}
