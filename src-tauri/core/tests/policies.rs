//! Policies end to end (issue 59): rules in policy.json judge real servers' calls — the
//! reference filesystem server's paths (a `..` and a symlink out of a folder), a web reader's
//! URLs (`tests/peers/web_reader_server.py`, a fetcher's stand-in whose page carries a prompt
//! injection) — a blocked tool is kept out of the request and a call naming it is refused, a
//! turn that read untrusted content asks before another server's write even under
//! auto-approve, the organisation's managed file cannot be loosened from the command line, and
//! every call lands in the audit record. A scripted model (OpenAI's streamed shape) makes the
//! calls; every call that asks is answered no, so a call that ran was let run by the policy.

mod support;

#[path = "threats/scripted.rs"]
#[allow(dead_code)]
mod scripted;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use switchboard_core::agent::Decision;
use switchboard_core::events::RunEvent;
use switchboard_core::store::{AuditDecision, AuditFilter, AuditOrigin};
use switchboard_core::App;

use scripted::{app_with_reading_model, body_of, one_turn, saying, sse, stop, tool_names, Server};

/// A model that answers each request with the next of `answers` (each a list of calls, as
/// (wire name, arguments); none: "Done.").
fn script(answers: Vec<Vec<(&'static str, Value)>>) -> scripted::Reply {
    let turn = AtomicUsize::new(0);
    Box::new(move |_, _, _| {
        let n = turn.fetch_add(1, Ordering::SeqCst);
        match answers.get(n) {
            Some(calls) if !calls.is_empty() => {
                let mut chunks: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| {
                        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
                            "index": i, "id": format!("call_{n}_{i}"), "type": "function",
                            "function": {"name": name, "arguments": args.to_string()}
                        }]}}]})
                    })
                    .collect();
                chunks.push(stop("tool_calls"));
                sse(&chunks)
            }
            _ => saying("Done."),
        }
    })
}

async fn filesystem(app: &App, name: &str, root: &Path) {
    let program = support::peers().join("node_modules/.bin/mcp-server-filesystem");
    app.host()
        .spawn(
            name,
            support::stdio_launch(
                program.to_str().unwrap(),
                &[root.to_str().unwrap()],
                std::time::Duration::from_secs(30),
            ),
        )
        .await;
    support::server_running(app.host(), name).await;
}

async fn web_reader(app: &App) {
    let python = support::peers().join(".venv/bin/python");
    let script = support::peers().join("web_reader_server.py");
    app.host()
        .spawn(
            "web",
            support::stdio_launch(
                python.to_str().unwrap(),
                &[script.to_str().unwrap()],
                std::time::Duration::from_secs(30),
            ),
        )
        .await;
    support::server_running(app.host(), "web").await;
}

fn write_policy(home: &Path, policy: &Value) {
    std::fs::write(home.join("config/policy.json"), policy.to_string()).unwrap();
}

/// Each tool message of a run: (call id, what the model read).
fn tool_results(events: &[RunEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::MessageSaved { message } if message.tool_call_id.is_some() => Some((
                message.tool_call_id.clone().unwrap_or_default(),
                message.content.clone().unwrap_or_default(),
            )),
            _ => None,
        })
        .collect()
}

fn asked(events: &[RunEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ApprovalRequired { calls, .. } => Some(calls.clone()),
            _ => None,
        })
        .flatten()
        .map(|c| (c.call_id, c.asked_because))
        .collect()
}

async fn scene(
    test: &str,
    answers: Vec<Vec<(&'static str, Value)>>,
) -> Option<(Arc<App>, Server, String, tempfile::TempDir)> {
    if !support::mcp_peers_installed(test) {
        return None;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, model) = app_with_reading_model(home.path(), script(answers)).await;
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    Some((app, model, conversation, home))
}

#[tokio::test]
async fn rules_on_a_real_filesystem_servers_paths_follow_dot_dot_and_symlinks() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("notes");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), "meeting at noon").unwrap();
    std::fs::create_dir_all(work.path().join("private")).unwrap();
    std::fs::write(work.path().join("private/key"), "SECRET-KEY").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(work.path().join("private"), root.join("link")).unwrap();
    let read = |p: &Path| ("fs__read_text_file", json!({"path": p}));
    let Some((app, _model, conversation, home)) = scene(
        "rules_on_a_real_filesystem_servers_paths",
        vec![vec![
            read(&root.join("a.txt")),
            read(&root.join("../private/key")),
            read(&root.join("link/key")),
        ]],
    )
    .await
    else {
        return;
    };
    // The server itself is given the whole work folder, so only the policy stands between the
    // model and the private file.
    filesystem(&app, "fs", work.path()).await;
    let notes = root.canonicalize().unwrap();
    write_policy(
        home.path(),
        &json!({"rules": [
            {"server": "fs", "tool": "read_text_file", "when": {"path": {"inside": [notes]}}, "outcome": "allow"},
            {"server": "fs", "when": {"path": {"not": {"inside": [notes]}}}, "outcome": "block", "note": "notes only"}
        ]}),
    );
    let events = one_turn(&app, &conversation, "Read them", Decision::Deny).await;
    assert!(
        asked(&events).is_empty(),
        "no call was asked about: {:?}",
        asked(&events)
    );
    let mut results = tool_results(&events);
    results.sort();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].1.contains("meeting at noon"), "{results:?}");
    for (id, content) in &results[1..] {
        assert!(
            content.contains("blocked by rule 2 of your policy.json")
                && content.contains("notes only"),
            "{id}: {content}"
        );
        assert!(!content.contains("SECRET-KEY"), "{id}: {content}");
    }
    // Every call is in the record, with what decided it.
    let record = app.audit(AuditFilter::default()).await.unwrap();
    assert_eq!(record.len(), 3, "{record:#?}");
    // The refusals are written at once, the call that ran when it ended.
    let ran = &record[0];
    assert_eq!(ran.origin, AuditOrigin::Model);
    assert_eq!(ran.decision, AuditDecision::Allowed);
    assert!(
        ran.decided_by.starts_with("rule 1 of your policy.json"),
        "{}",
        ran.decided_by
    );
    assert!(ran.result_sha256.as_ref().is_some_and(|h| h.len() == 64));
    assert!(ran.duration_ms.is_some());
    assert_eq!(
        serde_json::from_str::<Value>(&ran.arguments).unwrap()["path"],
        json!(root.join("a.txt"))
    );
    assert!(record[1..]
        .iter()
        .all(|e| e.decision == AuditDecision::Denied && e.result_sha256.is_none()));
    // Kept after the conversation is gone.
    app.delete_conversation(&conversation).await.unwrap();
    assert_eq!(app.audit(AuditFilter::default()).await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_blocked_tool_is_not_offered_and_a_call_naming_it_is_refused_saying_why() {
    let work = tempfile::tempdir().unwrap();
    let Some((app, model, conversation, home)) = scene(
        "a_blocked_tool_is_not_offered",
        vec![vec![(
            "fs__write_file",
            json!({"path": work.path().join("x.txt"), "content": "hi"}),
        )]],
    )
    .await
    else {
        return;
    };
    filesystem(&app, "fs", work.path()).await;
    write_policy(
        home.path(),
        &json!({"rules": [{"server": "fs", "tool": "write_file", "outcome": "block"}]}),
    );
    let events = one_turn(&app, &conversation, "Write it", Decision::AllowOnce).await;
    let first = body_of(&model.requests()[0]);
    let offered = tool_names(&first);
    assert!(offered.contains(&"fs__read_text_file"), "{offered:?}");
    assert!(!offered.contains(&"fs__write_file"), "{offered:?}");
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert!(
        results[0]
            .1
            .contains("the tool is blocked by rule 1 of your policy.json: block fs · write_file"),
        "{results:?}"
    );
    assert!(!work.path().join("x.txt").exists());
    // The window's panel says which rule.
    let (_, panel) = app.conversation_catalogue(&conversation).await.unwrap();
    let write = panel.iter().find(|t| t.tool == "write_file").unwrap();
    assert_eq!(
        write.rule.as_ref().map(|r| r.outcome),
        Some(switchboard_core::policy::rules::Outcome::Block)
    );
}

#[tokio::test]
async fn a_turn_that_read_untrusted_content_asks_before_another_servers_write_even_under_auto_approve(
) {
    let work = tempfile::tempdir().unwrap();
    // Not read-only and not destructive: auto-approve lets it run, until the turn is tainted.
    let target = work.path().join(".ssh");
    let before = work.path().join("before");
    let Some((app, _model, conversation, home)) = scene(
        "a_turn_that_read_untrusted_content_asks",
        vec![
            vec![("fs__create_directory", json!({"path": before}))],
            vec![(
                "web__fetch",
                json!({"url": "https://docs.example.com/page"}),
            )],
            vec![("web__fetch", json!({"url": "https://evil.example.net/x"}))],
            vec![("fs__create_directory", json!({"path": target}))],
        ],
    )
    .await
    else {
        return;
    };
    filesystem(&app, "fs", work.path()).await;
    web_reader(&app).await;
    write_policy(
        home.path(),
        &json!({
            "rules": [{"server": "web", "when": {"url": {"not": {"host": ["*.example.com"]}}}, "outcome": "block"}],
            "untrusted": [{"server": "web"}]
        }),
    );
    app.set_auto_approve(
        &conversation,
        true,
        &switchboard_core::policy::confirm::Always(true),
    )
    .await
    .unwrap();
    let events = one_turn(&app, &conversation, "Do it", Decision::Deny).await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 4, "{results:?}");
    // Before anything untrusted was read, auto-approve let the write run.
    assert!(before.exists());
    assert!(
        results[1].1.contains("IGNORE ALL PREVIOUS INSTRUCTIONS"),
        "{results:?}"
    );
    assert!(results[2].1.contains("blocked by rule 1"), "{results:?}");
    // After: the write asks (and the person said no), saying why.
    let asked = asked(&events);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].1.starts_with("this turn read content from web"),
        "{asked:?}"
    );
    assert!(!target.exists());
    let record = app.audit(AuditFilter::default()).await.unwrap();
    assert!(
        record[0]
            .decided_by
            .starts_with("you, when asked (this turn read content from web"),
        "{}",
        record[0].decided_by
    );
}

#[tokio::test]
async fn the_organisations_file_cannot_be_loosened_from_the_command_line() {
    let home = tempfile::tempdir().unwrap();
    let (app, _secrets) = scripted::memory_app(home.path()).await;
    std::fs::create_dir_all(home.path().join("managed")).unwrap();
    std::fs::write(
        home.path().join("managed/policy.json"),
        json!({
            "rules": [{"server": "fs", "tool": "write_file", "outcome": "ask"},
                      {"server": "shell", "outcome": "block"}],
            "allowedServers": ["fs", "shell"]
        })
        .to_string(),
    )
    .unwrap();
    let cli = |args: &[&str]| {
        support::run_cli(
            Arc::clone(&app),
            args.iter().map(|s| (*s).to_owned()).collect(),
        )
    };
    let (ran, _) = cli(&["policy", "allow", "fs", "write_file", "--yes"]).await;
    let refused = ran.unwrap_err();
    assert!(
        refused.contains("Your organisation's policy decides this"),
        "{refused}"
    );
    let (ran, _) = cli(&["policy", "allow", "shell", "--yes"]).await;
    assert!(ran.is_err());
    // Tightening is fine, and shown beside the organisation's rules.
    let (ran, out) = cli(&["policy", "block", "fs", "write_file"]).await;
    ran.unwrap();
    assert!(out.contains("block fs · write_file"), "{out}");
    assert!(
        out.contains("which you can tighten but not loosen"),
        "{out}"
    );
    // Taking a rule that blocks away lets calls run: only when confirmed.
    // (Through the app: a command line run from a terminal would ask there.)
    let refused = app
        .remove_policy_rule(0, &switchboard_core::policy::confirm::Always(false))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("did not confirm"), "{refused}");
    let (ran, _) = cli(&["policy", "remove", "1", "--yes"]).await;
    ran.unwrap();
    let (ran, _) = cli(&["policy", "block", "fs", "write_file"]).await;
    ran.unwrap();
    // A server the organisation does not list cannot be added.
    let (ran, _) = cli(&["mcp", "add", "other", "--", "echo", "hi"]).await;
    assert!(ran
        .unwrap_err()
        .contains("does not allow the server “other”"));
    // One added before the organisation's list does not start.
    std::fs::write(
        home.path().join("config/mcp.json"),
        json!({"mcpServers": {"earlier": {"command": "echo", "args": ["hi"]}}}).to_string(),
    )
    .unwrap();
    let (ran, _) = cli(&["mcp", "call", "earlier", "anything"]).await;
    let refused = ran.unwrap_err();
    assert!(
        refused.contains("“earlier” is not among the servers it allows"),
        "{refused}"
    );
    let refused = app.mcp_start("earlier").await.unwrap_err().to_string();
    assert!(
        refused.contains("does not allow the server “earlier”"),
        "{refused}"
    );
    // A bad rule is refused with where and why, and nothing of it is kept.
    let (ran, _) = cli(&[
        "policy",
        "add",
        "fs",
        "--outcome",
        "allow",
        "--when",
        "path=matches:(",
    ])
    .await;
    let refused = ran.unwrap_err();
    assert!(refused.contains("rules[1].when.path"), "{refused}");
    let (_, out) = cli(&["policy", "list", "--json"]).await;
    let view: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(view["file"]["rules"].as_array().unwrap().len(), 1, "{view}");
    assert_eq!(view["managed_said"][1], "block every tool of shell");
    // Which rule decides a call, from the command line.
    let (_, out) = cli(&["policy", "check", "shell", "run", "{}"]).await;
    assert!(
        out.starts_with("block: rule 2 of your organisation's policy"),
        "{out}"
    );
}

#[tokio::test]
async fn a_call_from_the_command_line_lands_in_the_record_and_a_blocked_one_does_not_run() {
    if !support::mcp_peers_installed("a_call_from_the_command_line_lands_in_the_record") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let (app, _secrets) = scripted::memory_app(home.path()).await;
    let program = support::peers().join("node_modules/.bin/mcp-server-filesystem");
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "hello").unwrap();
    let cli = |args: Vec<String>| support::run_cli(Arc::clone(&app), args);
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let (ran, _) = cli(s(&[
        "mcp",
        "add",
        "fs",
        "--",
        program.to_str().unwrap(),
        work.path().to_str().unwrap(),
    ]))
    .await;
    ran.unwrap();
    let file = work.path().join("a.txt");
    let args = json!({"path": file}).to_string();
    let (ran, out) = cli(s(&["mcp", "call", "fs", "read_text_file", &args])).await;
    ran.unwrap();
    assert!(out.contains("hello"), "{out}");
    let (ran, _) = cli(s(&["policy", "block", "fs", "read_text_file"])).await;
    ran.unwrap();
    let (ran, _) = cli(s(&["mcp", "call", "fs", "read_text_file", &args])).await;
    assert!(ran.unwrap_err().contains("blocked by rule 1"));
    let (ran, out) = cli(s(&["audit", "--jsonl", "--server", "fs"])).await;
    ran.unwrap();
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["origin"], "cli");
    assert_eq!(lines[0]["decision"], "allowed");
    assert_eq!(lines[0]["arguments"], args);
    assert!(lines[0]["result_bytes"].as_i64().unwrap() > 0);
    assert_eq!(lines[1]["decision"], "denied");
    let (_, table) = cli(s(&["audit"])).await;
    assert!(table.contains("fs · read_text_file"), "{table}");

    // A rule that asks asks on the command line too: with no terminal to answer on, the call
    // does not run; `--yes` runs it, and the record says who decided.
    let (ran, _) = cli(s(&["policy", "ask", "fs", "read_text_file", "--yes"])).await;
    ran.unwrap();
    let (ran, out) = cli(s(&["mcp", "call", "fs", "read_text_file", &args])).await;
    assert!(ran.unwrap_err().contains("you said no"), "{out}");
    assert!(!out.contains("hello"), "{out}");
    let (ran, out) = cli(s(&["mcp", "call", "fs", "read_text_file", &args, "--yes"])).await;
    ran.unwrap();
    assert!(out.contains("hello"), "{out}");
    let (ran, out) = cli(s(&["audit", "--json", "--server", "fs", "--limit", "2"])).await;
    ran.unwrap();
    let newest: Vec<Value> = serde_json::from_str(&out).unwrap();
    let decided: Vec<(&str, &str)> = newest
        .iter()
        .map(|e| {
            (
                e["decision"].as_str().unwrap(),
                e["decided_by"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        decided
            .iter()
            .any(|(d, by)| *d == "allowed" && by.starts_with("you, when asked (rule 1")),
        "{decided:?}"
    );
    assert!(
        decided
            .iter()
            .any(|(d, by)| *d == "denied" && by.ends_with(": no")),
        "{decided:?}"
    );
}

/// Answers no to every call it is asked about, and cuts every result it reviews to `keep`.
struct Cutting {
    keep: &'static str,
}

impl switchboard_core::agent::Approver for Cutting {
    fn ask(
        &self,
        request: switchboard_core::agent::ApprovalRequest,
    ) -> switchboard_core::agent::approval::Answers<'_> {
        switchboard_core::agent::FixedApprover(Decision::Deny).ask(request)
    }

    fn review(
        &self,
        _: switchboard_core::agent::approval::ReviewRequest,
    ) -> switchboard_core::agent::approval::Reviewing<'_> {
        Box::pin(std::future::ready(Some(
            switchboard_core::agent::approval::ReviewVerdict::Cut {
                text: self.keep.to_owned(),
            },
        )))
    }
}

#[tokio::test]
async fn a_reviewed_result_is_withheld_or_cut_before_the_model_reads_it() {
    let fetch = || {
        vec![(
            "web__fetch",
            json!({"url": "https://docs.example.com/page"}),
        )]
    };
    let snapshot = || {
        vec![(
            "web__snapshot",
            json!({"url": "https://docs.example.com/page"}),
        )]
    };
    let Some((app, model, conversation, home)) = scene(
        "a_reviewed_result_is_withheld_or_cut",
        vec![
            fetch(),
            vec![],
            fetch(),
            vec![],
            snapshot(),
            vec![],
            snapshot(),
            vec![],
        ],
    )
    .await
    else {
        return;
    };
    web_reader(&app).await;
    write_policy(
        home.path(),
        &json!({"rules": [{"server": "web", "outcome": "allow"}], "review": [{"server": "web"}]}),
    );
    // Withheld: the person saw it, the model reads only that it was withheld.
    let events = one_turn(&app, &conversation, "Read the page", Decision::Deny).await;
    let shown = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ResultReviewRequired { content, .. } => Some(content.clone()),
            _ => None,
        })
        .expect("the result was put to the person");
    assert!(
        shown.contains("IGNORE ALL PREVIOUS INSTRUCTIONS"),
        "{shown}"
    );
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert!(
        results[0]
            .1
            .starts_with("The user withheld this tool's result"),
        "{results:?}"
    );
    let sent: String = model.requests().concat();
    assert!(
        !sent.contains("IGNORE ALL"),
        "the model never read the page"
    );
    // Cut: the model reads what the person kept, and that parts were cut.
    let seen = Arc::new(support::Seen::default());
    app.start_turn_answered_by(
        switchboard_core::app::TurnRequest {
            conversation_id: conversation.clone(),
            text: Some("Again".into()),
            ..Default::default()
        },
        seen.clone(),
        Arc::new(Cutting {
            keep: "Page at https://docs.example.com/page: Welcome!",
        }),
    )
    .await
    .unwrap();
    seen.wait_for("run_finished", 1).await;
    let events = seen.0.lock().unwrap().clone();
    let results = tool_results(&events);
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0].1,
        "Page at https://docs.example.com/page: Welcome!\n\n[The user cut parts of this result out before you read it.]"
    );
    let sent: String = model.requests().concat();
    assert!(
        !sent.contains("IGNORE ALL"),
        "the model never read the cut part"
    );
    assert!(sent.contains("Welcome!"));
    // The record hashes what the server sent, and says what the person did.
    let record = app.audit(AuditFilter::default()).await.unwrap();
    assert_eq!(record.len(), 2);
    assert!(
        record[0].decided_by.ends_with("its result cut by you"),
        "{}",
        record[0].decided_by
    );
    assert!(
        record[1].decided_by.ends_with("its result withheld by you"),
        "{}",
        record[1].decided_by
    );
    assert_eq!(
        record[0].result_sha256, record[1].result_sha256,
        "the same page both times"
    );
    assert!(record[0].result_bytes.unwrap() > 100);

    // The files a result carries are kept only once the person passes it: withheld, none is
    // written; passed, the card has it.
    let kept = || match std::fs::read_dir(home.path().join("data/attachments")) {
        Ok(dir) => dir.count(),
        Err(_) => 0,
    };
    let events = one_turn(&app, &conversation, "Save the page", Decision::Deny).await;
    assert!(tool_results(&events)[0].1.starts_with("The user withheld"));
    assert_eq!(kept(), 0, "a withheld result's file is never written");
    let events = one_turn(&app, &conversation, "Save it again", Decision::AllowOnce).await;
    assert!(tool_results(&events)[0]
        .1
        .contains("Saved https://docs.example.com/page"));
    assert_eq!(kept(), 1, "a passed result's file is kept");
    let artifacts: usize = events
        .iter()
        .map(|e| match e {
            RunEvent::ToolFinished { artifacts, .. } => artifacts.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(artifacts, 1, "its card shows the file");
}

#[tokio::test]
async fn the_rules_reach_resources_switchboards_own_files_and_a_rule_that_outranks_a_block() {
    if !support::mcp_peers_installed("the_rules_reach_resources") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let own = home.path().join("config/made-by-the-model");
    let (app, _model) = app_with_reading_model(
        home.path(),
        script(vec![vec![
            (
                "switchboard__read_resource",
                json!({"server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
            ),
            (
                "switchboard__read_resource",
                json!({"server": "elsewhere", "uri": "file:///etc/passwd"}),
            ),
            ("fs__create_directory", json!({"path": own})),
        ]]),
    )
    .await;
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    // The model's third call names Switchboard's own policy file, through a server given
    // the whole home.
    filesystem(&app, "fs", home.path()).await;
    let everything = support::peers().join("node_modules/.bin/mcp-server-everything");
    app.host()
        .spawn(
            "everything",
            support::stdio_launch(
                everything.to_str().unwrap(),
                &["stdio"],
                std::time::Duration::from_secs(30),
            ),
        )
        .await;
    support::server_running(app.host(), "everything").await;
    write_policy(
        home.path(),
        &json!({"rules": [
            {"server": "everything", "tool": "read_resource", "outcome": "block"},
            {"server": "fs", "outcome": "allow"}
        ]}),
    );
    let events = one_turn(&app, &conversation, "Go", Decision::Deny).await;
    let mut results = tool_results(&events);
    results.sort();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        results[0]
            .1
            .contains("blocked by rule 1 of your policy.json: block everything · read_resource"),
        "{results:?}"
    );
    assert!(
        results[1]
            .1
            .contains("“elsewhere” is not among the servers whose resources you can read"),
        "{results:?}"
    );
    // Asked (and the person said no), though a rule allows every tool of fs.
    let asked = asked(&events);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].1.contains("is among Switchboard's own settings"),
        "{asked:?}"
    );
    let policy = std::fs::read_to_string(home.path().join("config/policy.json")).unwrap();
    assert!(
        policy.contains("read_resource"),
        "the policy file is untouched"
    );

    // A rule that asks, more specific than a block, lets calls through that were refused:
    // it is confirmed like an allow.
    let refused = app
        .set_tool_policy(
            "everything",
            None,
            Some(switchboard_core::policy::rules::Outcome::Block),
            &switchboard_core::policy::confirm::Always(false),
        )
        .await;
    refused.unwrap();
    let loosening = app
        .set_tool_policy(
            "everything",
            Some("echo"),
            Some(switchboard_core::policy::rules::Outcome::Ask),
            &switchboard_core::policy::confirm::Always(false),
        )
        .await
        .unwrap_err();
    assert!(
        loosening.to_string().contains("did not confirm"),
        "{loosening}"
    );
}
