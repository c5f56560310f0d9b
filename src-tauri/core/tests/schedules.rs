//! Scheduled runs (issue 61), against aimock as the model and a real MCP server process: a
//! schedule kept, listed, run by hand and removed from the command line; a schedule that runs
//! at its time while "the window" (an app on the same home running its scheduler) is open, its
//! call waiting as a pending approval the window answers, while a `schedule run-due` from the
//! command line on the same home stands aside; and after "a restart", a missed run that runs
//! once, one that is skipped, and a call that would ask denied with no one there to ask.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use support::{eventually, peers, stdio_launch, Seen};
use switchboard_core::events::RunEvent;
use switchboard_core::schedules::{Missed, NewSchedule, TimeRule};
use switchboard_core::secrets::{MemoryStore, SecretStore};
use switchboard_core::store::{now_ms, RunStatus};
use switchboard_core::{App, AppConfig, AppPaths};

const WITHIN: Duration = Duration::from_secs(60);

/// An app on `home` with its database on disk, as a process of its own would hold it.
async fn app_on(home: &Path, secrets: Arc<dyn SecretStore>) -> Arc<App> {
    let paths = AppPaths::under_home(home.to_path_buf());
    paths.create_all().unwrap();
    let mut config = AppConfig::headless(
        paths,
        secrets,
        Arc::new(switchboard_core::settings::MemorySettings::default()),
    );
    config.http = support::test_http();
    App::open(config).await
}

async fn cli(app: &Arc<App>, args: &[&str]) -> (Result<(), String>, String) {
    support::run_cli(
        Arc::clone(app),
        args.iter().map(|s| (*s).to_owned()).collect(),
    )
    .await
}

fn schedule(name: &str, prompt: &str, rule: TimeRule, missed: Missed) -> NewSchedule {
    NewSchedule {
        name: name.into(),
        prompt: prompt.into(),
        rule,
        profile: None,
        provider: None,
        model: None,
        missed,
        approval_wait_minutes: 5,
    }
}

/// The MCP server "docs" (a scripted one whose tool `echo` says its text back) on `app`.
async fn docs_server(app: &App, dir: &Path) {
    let launch = stdio_launch(
        &peers().join(".venv/bin/python").to_string_lossy(),
        &[
            &peers().join("skills_server.py").to_string_lossy(),
            &dir.to_string_lossy(),
        ],
        Duration::from_secs(30),
    );
    app.host().spawn("docs", launch).await;
    support::server_running(app.host(), "docs").await;
}

/// The text of the last request's tool result for `call_id`.
fn tool_result(journal: &[Value], call_id: &str) -> Option<String> {
    journal.iter().rev().find_map(|entry| {
        entry["body"]["messages"]
            .as_array()?
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
            .and_then(|m| m["content"].as_str().map(str::to_owned))
    })
}

#[tokio::test]
async fn a_schedule_is_kept_listed_run_by_hand_switched_and_removed_from_the_command_line() {
    let Some(mock) = support::aimock("schedules-cli", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let app = app_on(home.path(), Arc::new(MemoryStore::default())).await;
    support::add_mock_provider(&app, &mock.root).await;

    let (ran, said) = cli(
        &app,
        &[
            "schedule",
            "add",
            "morning",
            "--prompt",
            "Scheduled: say good morning",
            "--every",
            "1d",
            "--at",
            "08:00",
            "--weekdays",
            "--json",
        ],
    )
    .await;
    ran.unwrap();
    let made: Value = serde_json::from_str(&said).unwrap();
    assert_eq!(made["rule_text"], "every day at 08:00, weekdays only");
    assert!(made["next_at"].as_i64().unwrap() > now_ms());
    let (ran, said) = cli(
        &app,
        &[
            "schedule", "add", "MORNING", "--prompt", "x", "--every", "6h",
        ],
    )
    .await;
    assert!(ran.unwrap_err().contains("already called"), "{said}");
    let (ran, _) = cli(
        &app,
        &["schedule", "add", "often", "--prompt", "x", "--every", "1m"],
    )
    .await;
    assert!(ran.unwrap_err().contains("every 5 minutes"));
    let (ran, _) = cli(
        &app,
        &[
            "schedule", "add", "late", "--prompt", "x", "--every", "6h", "--at", "08:00",
        ],
    )
    .await;
    assert!(ran.unwrap_err().contains("--at goes with a period in days"));
    let (ran, _) = cli(
        &app,
        &[
            "schedule",
            "add",
            "past",
            "--prompt",
            "x",
            "--once",
            "2020-01-01 08:00",
        ],
    )
    .await;
    assert!(ran.unwrap_err().contains("That moment has passed"));
    let (ran, _) = cli(
        &app,
        &[
            "schedule",
            "add",
            "both",
            "--prompt",
            "x",
            "--every",
            "6h",
            "--profile",
            "p",
            "--provider",
            "Mock",
        ],
    )
    .await;
    assert!(ran.unwrap_err().contains("cannot be used with"));
    let (ran, _) = cli(
        &app,
        &[
            "schedule",
            "add",
            "nobody",
            "--prompt",
            "x",
            "--every",
            "6h",
            "--provider",
            "Nobody",
        ],
    )
    .await;
    assert!(ran.unwrap_err().contains("No provider is called"));

    let (ran, said) = cli(&app, &["schedule", "list"]).await;
    ran.unwrap();
    assert!(
        said.contains("morning") && said.contains("every day at 08:00, weekdays only"),
        "{said}"
    );

    // Run by hand: it lands in a conversation of its own, and the record says so.
    let (ran, said) = cli(&app, &["schedule", "run", "morning", "--approve", "none"]).await;
    ran.unwrap();
    assert!(said.contains("Good morning from the schedule."), "{said}");
    let (ran, said) = cli(&app, &["schedule", "logs", "morning", "--json"]).await;
    ran.unwrap();
    let runs: Vec<Value> = serde_json::from_str(&said).unwrap();
    assert_eq!(runs.len(), 1, "{said}");
    assert_eq!(runs[0]["status"], "completed");
    assert_eq!(runs[0]["manual"], true);
    let conversation = runs[0]["conversation_id"].as_str().unwrap().to_owned();
    let (ran, said) = cli(&app, &["conversations", "show", &conversation]).await;
    ran.unwrap();
    assert!(
        said.contains("morning · "),
        "titled after its schedule: {said}"
    );
    assert!(said.contains("Good morning from the schedule."), "{said}");

    let (ran, said) = cli(&app, &["schedule", "disable", "morning", "--json"]).await;
    ran.unwrap();
    let off: Value = serde_json::from_str(&said).unwrap();
    assert_eq!(off["enabled"], false, "{said}");
    let listed = app.schedules().await.unwrap();
    assert!(!listed[0].enabled && listed[0].next_at.is_none());
    let (ran, said) = cli(&app, &["schedule", "enable", "morning"]).await;
    ran.unwrap();
    assert!(said.contains("is on; next run"), "{said}");
    let (ran, said) = cli(&app, &["schedule", "remove", "morning", "--json"]).await;
    ran.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&said).unwrap()["removed"],
        "morning"
    );
    let (_, said) = cli(&app, &["schedule", "list"]).await;
    assert!(said.contains("No schedules yet"), "{said}");
    let (_, said) = cli(&app, &["conversations", "show", &conversation]).await;
    assert!(
        said.contains("Good morning"),
        "the run's conversation stays: {said}"
    );
    app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_due_run_waits_for_the_window_and_a_missed_one_runs_once_after_a_restart() {
    let Some(mock) = support::aimock("schedules-due", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let docs = tempfile::tempdir().unwrap();
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let window = app_on(home.path(), Arc::clone(&secrets)).await;
    support::add_mock_provider(&window, &mock.root).await;
    docs_server(&window, docs.path()).await;

    // Far enough ahead to be still to come once it is kept, on a loaded machine too.
    let soon = now_ms() + 4_000;
    window
        .add_schedule(schedule(
            "echo",
            "Scheduled: echo for me",
            TimeRule::Once { at: soon },
            Missed::RunOnce,
        ))
        .await
        .unwrap();
    window.start_scheduler();

    // The command line on the same home stands aside while the window runs the schedules.
    let cli_app = app_on(home.path(), Arc::clone(&secrets)).await;
    let (ran, said) = cli(&cli_app, &["schedule", "run-due"]).await;
    ran.unwrap();
    assert!(
        said.contains("runs this home's schedules now; nothing to do"),
        "{said}"
    );

    // At its time it runs; its call waits for the person, and the window answers it.
    let waiting = eventually(WITHIN, "the run waits for an approval", || async {
        let runs = window.schedule_runs(Some("echo"), 10).await.unwrap();
        runs.into_iter().find(|r| r.status == RunStatus::Waiting)
    })
    .await;
    assert!(waiting.due_at == soon && !waiting.late && !waiting.manual);
    assert!(
        waiting
            .message
            .as_deref()
            .unwrap()
            .contains("Waiting for your approval of docs"),
        "{waiting:?}"
    );
    assert_eq!(window.schedule_runs_waiting().await.unwrap(), 1);
    let conversation = waiting.conversation_id.clone().unwrap();
    let seen = Arc::new(Seen::default());
    window.attach(&conversation, seen.clone());
    let (request_id, calls) = eventually(WITHIN, "the window is asked", || async {
        seen.0.lock().unwrap().iter().find_map(|e| match e {
            RunEvent::ApprovalRequired { request_id, calls } => {
                Some((request_id.clone(), calls.clone()))
            }
            _ => None,
        })
    })
    .await;
    assert_eq!(calls[0].tool, "echo");
    let answers = calls
        .iter()
        .map(|c| switchboard_core::agent::ApprovalAnswer {
            call_id: c.call_id.clone(),
            decision: switchboard_core::agent::Decision::AllowOnce,
            reason: None,
        })
        .collect();
    window
        .answer_approval(
            &request_id,
            answers,
            &switchboard_core::policy::confirm::Always(false),
        )
        .await
        .unwrap();
    let done = eventually(WITHIN, "the run completes", || async {
        let runs = window.schedule_runs(Some("echo"), 10).await.unwrap();
        runs.into_iter().find(|r| r.status == RunStatus::Completed)
    })
    .await;
    assert_eq!(done.conversation_id.as_deref(), Some(conversation.as_str()));
    let result = tool_result(&mock.journal().await, "call_sched_echo").unwrap();
    assert!(
        result.contains("SCHED-7"),
        "the tool ran once approved: {result}"
    );
    assert_eq!(
        window.schedule_runs(Some("echo"), 10).await.unwrap().len(),
        1
    );
    assert_eq!(
        window.schedules().await.unwrap()[0].next_at,
        None,
        "once is once"
    );

    // Two schedules fell due three hours ago while nothing ran: one runs once, one is skipped.
    for (name, missed) in [("missed", Missed::RunOnce), ("skipped", Missed::Skip)] {
        window
            .add_schedule(schedule(
                name,
                "Scheduled: say good morning",
                TimeRule::Every { minutes: 30 },
                missed,
            ))
            .await
            .unwrap();
    }
    window
        .add_schedule(schedule(
            "alone",
            "Scheduled: echo for me",
            TimeRule::Every { minutes: 30 },
            Missed::RunOnce,
        ))
        .await
        .unwrap();
    window.shutdown(Duration::from_secs(5)).await;
    let conn = rusqlite::Connection::open(home.path().join("data/switchboard.db")).unwrap();
    let hours_ago = now_ms() - 3 * 3_600_000;
    conn.execute(
        "UPDATE schedules SET next_at = ?1 WHERE name IN ('missed', 'skipped')",
        [hours_ago],
    )
    .unwrap();
    conn.execute(
        "UPDATE schedules SET next_at = ?1 WHERE name = 'alone'",
        [now_ms() - 1_000],
    )
    .unwrap();
    drop(conn);

    // "After the restart" the command line runs what is due, with no one to ask.
    docs_server(&cli_app, docs.path()).await;
    let (ran, said) = eventually(WITHIN, "the window let go of the lock", || async {
        let (ran, said) = cli(&cli_app, &["schedule", "run-due", "--json"]).await;
        let report: Value = serde_json::from_str(&said).unwrap();
        (report["runner"] == "this").then_some((ran, report))
    })
    .await;
    ran.unwrap();
    let outcome = |name: &str| {
        said["ran"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["schedule"] == name)
            .unwrap_or_else(|| panic!("{name}: {said}"))
            .clone()
    };
    assert_eq!(outcome("missed")["status"], "completed");
    assert_eq!(outcome("skipped")["status"], "skipped");
    assert!(outcome("skipped")["message"]
        .as_str()
        .unwrap()
        .contains("skips missed runs"));
    assert_eq!(outcome("alone")["status"], "completed");
    let denied = tool_result(&mock.journal().await, "call_sched_echo").unwrap();
    assert!(
        denied.contains("had no one to ask"),
        "never approved silently: {denied}"
    );
    let runs = cli_app.schedule_runs(Some("missed"), 10).await.unwrap();
    assert_eq!(runs.len(), 1, "missed six times, run once");
    assert!(runs[0].late);
    for s in cli_app.schedules().await.unwrap() {
        if s.fields.name != "echo" {
            assert!(
                s.next_at.unwrap() > now_ms(),
                "{} waits for its next time",
                s.fields.name
            );
        }
    }
    // Nothing is due again at once.
    let (ran, said) = cli(&cli_app, &["schedule", "run-due"]).await;
    ran.unwrap();
    assert!(said.contains("Nothing is due."), "{said}");
    cli_app.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn two_runners_that_meet_at_one_due_time_run_it_once() {
    let home = tempfile::tempdir().unwrap();
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let a = app_on(home.path(), Arc::clone(&secrets)).await;
    let b = app_on(home.path(), secrets).await;
    // No provider: each run fails to start, which is recorded all the same.
    a.add_schedule(schedule(
        "race",
        "x",
        TimeRule::Every { minutes: 30 },
        Missed::RunOnce,
    ))
    .await
    .unwrap();
    let due = a.schedules().await.unwrap()[0].next_at.unwrap();
    let asker = switchboard_core::app::Asker::NoOne;
    let (ra, rb) = tokio::join!(a.run_due(due, &asker, true), b.run_due(due, &asker, true));
    let ran = ra.unwrap().len() + rb.unwrap().len();
    assert_eq!(ran, 1);
    let runs = a.schedule_runs(None, 10).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Failed);
    assert!(
        runs[0]
            .message
            .as_deref()
            .unwrap()
            .contains("could not start"),
        "{runs:?}"
    );
    a.shutdown(Duration::from_secs(5)).await;
    b.shutdown(Duration::from_secs(5)).await;
}

/// The window hears of what another process (the command line) does to schedules and runs,
/// without anything of its own changing: its page and badge are read again.
#[tokio::test]
async fn the_window_hears_of_schedules_the_command_line_changes() {
    let home = tempfile::tempdir().unwrap();
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let window = app_on(home.path(), Arc::clone(&secrets)).await;
    let (heard, mut hear) = tokio::sync::mpsc::unbounded_channel();
    window.watch_schedules(move |waiting| heard.send(waiting).is_ok());
    // The first count is sent at once.
    assert_eq!(
        tokio::time::timeout(WITHIN, hear.recv()).await.unwrap(),
        Some(0)
    );
    let quiet = tokio::time::timeout(Duration::from_secs(5), hear.recv()).await;
    assert!(
        quiet.is_err(),
        "nothing changed, yet the window was told: {quiet:?}"
    );

    let command_line = app_on(home.path(), secrets).await;
    let steps: [&[&str]; 4] = [
        &[
            "schedule", "add", "report", "--prompt", "Say hi", "--every", "1d",
        ],
        &["schedule", "disable", "report"],
        // No provider: the run fails to start, and that is recorded.
        &["schedule", "run", "report"],
        &["schedule", "remove", "report"],
    ];
    for args in steps {
        let (_, said) = cli(&command_line, args).await;
        assert!(
            tokio::time::timeout(Duration::from_secs(20), hear.recv())
                .await
                .is_ok_and(|got| got == Some(0)),
            "the window did not hear of `{}` ({said})",
            args.join(" ")
        );
        // Told of each change once (a run's start and end may be heard apart), not again and
        // again.
        let mut more = 0;
        while let Ok(Some(_)) = tokio::time::timeout(Duration::from_secs(5), hear.recv()).await {
            more += 1;
            assert!(
                more <= 2,
                "told {more} more times after `{}`",
                args.join(" ")
            );
        }
    }
    assert!(window.schedules().await.unwrap().is_empty());
    command_line.shutdown(Duration::from_secs(5)).await;
    window.shutdown(Duration::from_secs(5)).await;
}
