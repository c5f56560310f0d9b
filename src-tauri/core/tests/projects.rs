//! Projects (issue 62) as a person uses them from the command line, with aimock playing the
//! model: a project's instructions reach the model after its profile's prompt, in every one of
//! its conversations and only there; edited, they reach the next message; a conversation moved
//! out is told them no more; a project removed keeps its conversations.

mod support;

use std::sync::Arc;

use switchboard_core::secrets::{MemoryStore, SecretStore};
use switchboard_core::store::Store;
use switchboard_core::{App, AppPaths};

use support::{bodies_since, tool_names};

async fn cli(app: &Arc<App>, args: &[&str]) -> String {
    let (ran, out) = support::run_cli(
        Arc::clone(app),
        args.iter().map(|s| (*s).to_owned()).collect(),
    )
    .await;
    ran.unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"));
    out
}

async fn json(app: &Arc<App>, args: &[&str]) -> serde_json::Value {
    let out = cli(app, args).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

/// The system message of the newest request aimock received (`None`: it had none).
async fn last_system(mock: &support::Aimock) -> Option<String> {
    let journal = mock.journal().await;
    let first = &journal.last().expect("a request was sent")["body"]["messages"][0];
    (first["role"] == "system").then(|| first["content"].as_str().unwrap_or_default().to_owned())
}

/// The system prompt of the first request a `chat` with `args` sent (the first message's
/// words when it had none).
async fn system_of_chat(mock: &support::Aimock, app: &Arc<App>, args: &[&str]) -> String {
    let before = mock.journal().await.len();
    let all: Vec<&str> = std::iter::once("chat")
        .chain(args.iter().copied())
        .collect();
    cli(app, &all).await;
    bodies_since(mock, before).await[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_projects_instructions_reach_each_of_its_conversations_after_the_profiles_prompt() {
    let Some(mock) = support::aimock("projects", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::under_home(home.path().to_path_buf());
    paths.create_all().unwrap();
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let app = support::headless_app(Store::open_in_memory().unwrap(), paths, secrets).await;
    support::add_mock_provider(&app, &mock.root).await;

    cli(
        &app,
        &["profile", "create", "Terse", "--system", "Be terse."],
    )
    .await;
    let bridge = json(
        &app,
        &[
            "project",
            "add",
            "Bridge",
            "--instructions",
            "Steel, not wood.",
            "--profile",
            "terse",
            "--json",
        ],
    )
    .await;
    assert_eq!(bridge["name"], "Bridge");
    assert_eq!(bridge["instructions"], "Steel, not wood.");
    assert!(bridge["profile_id"].is_string(), "{bridge}");
    let (taken, _) = support::run_cli(
        Arc::clone(&app),
        ["project", "add", "BRIDGE"].map(str::to_owned).to_vec(),
    )
    .await;
    assert!(taken.unwrap_err().contains("exists already"));

    // A conversation made in it starts from its profile, and the model is told both.
    cli(
        &app,
        &[
            "chat",
            "--tools",
            "none",
            "--project",
            "bridge",
            "Say hello",
        ],
    )
    .await;
    let system = last_system(&mock).await.expect("a system prompt");
    assert_eq!(
        system,
        "Be terse.\n\n## Project “Bridge”\n\nSteel, not wood."
    );
    let shown = json(&app, &["project", "show", "Bridge", "--json"]).await;
    assert_eq!(shown["conversations"], 1);
    assert_eq!(shown["profile"], "Terse");
    let conversation = shown["conversation_list"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(shown["conversation_list"][0]["project_id"], bridge["id"]);

    // Edited: the next message is told the new instructions.
    cli(
        &app,
        &[
            "project",
            "edit",
            "Bridge",
            "--instructions",
            "Rivets only.",
        ],
    )
    .await;
    cli(
        &app,
        &[
            "chat",
            "--tools",
            "none",
            "--conversation",
            &conversation,
            "Say hello",
        ],
    )
    .await;
    let system = last_system(&mock).await.expect("a system prompt");
    assert!(
        system.ends_with("## Project “Bridge”\n\nRivets only."),
        "{system}"
    );
    assert!(!system.contains("Steel"), "{system}");

    // A conversation outside it is told nothing of it.
    cli(
        &app,
        &["chat", "--tools", "none", "--profile", "none", "Say hello"],
    )
    .await;
    assert!(!last_system(&mock)
        .await
        .unwrap_or_default()
        .contains("Rivets"));

    // Moved out, it is told them no more; moved back, again.
    let moved = json(
        &app,
        &["project", "move", &conversation, "--none", "--json"],
    )
    .await;
    assert!(moved["project_id"].is_null(), "{moved}");
    cli(
        &app,
        &[
            "chat",
            "--tools",
            "none",
            "--conversation",
            &conversation,
            "Say hello",
        ],
    )
    .await;
    assert_eq!(last_system(&mock).await.as_deref(), Some("Be terse."));
    let said = cli(&app, &["project", "move", &conversation, "Bridge"]).await;
    assert!(said.contains("into “Bridge”"), "{said}");

    // Search in the project finds its conversation only; everywhere, both.
    let in_hits = |hits: &serde_json::Value| {
        let mut ids: Vec<String> = hits
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["conversation_id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids.dedup();
        ids
    };
    let everywhere = json(&app, &["conversations", "search", "hello", "--json"]).await;
    assert_eq!(in_hits(&everywhere).len(), 2, "{everywhere}");
    let within = json(
        &app,
        &[
            "conversations",
            "search",
            "hello",
            "--project",
            "Bridge",
            "--json",
        ],
    )
    .await;
    assert_eq!(
        in_hits(&within),
        std::slice::from_ref(&conversation),
        "{within}"
    );

    let list = json(&app, &["project", "list", "--json"]).await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["conversations"], 1);
    let table = cli(&app, &["project", "list"]).await;
    assert!(
        table.contains("Bridge") && table.contains("Terse"),
        "{table}"
    );

    // Removed: the conversation stays, in no project, and is told nothing of it.
    let said = cli(&app, &["project", "remove", "Bridge"]).await;
    assert!(said.contains("conversation is kept"), "{said}");
    let kept = app.conversations().get(&conversation).await.unwrap();
    assert_eq!(kept.conversation.project_id, None);
    cli(
        &app,
        &[
            "chat",
            "--tools",
            "none",
            "--conversation",
            &conversation,
            "Say hello",
        ],
    )
    .await;
    assert_eq!(last_system(&mock).await.as_deref(), Some("Be terse."));
    let (gone, _) = support::run_cli(
        Arc::clone(&app),
        ["chat", "--project", "Bridge", "Say hello"]
            .map(str::to_owned)
            .to_vec(),
    )
    .await;
    assert!(gone.unwrap_err().contains("project “Bridge”"));
    assert_eq!(
        app.conversations().list().await.unwrap().len(),
        2,
        "a project not there leaves no conversation behind"
    );
}

#[tokio::test]
async fn a_projects_files_are_given_whole_while_they_fit_and_else_by_the_passages_that_match() {
    let Some(mock) = support::aimock("project-files", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let app = app_on(&mock, home.path()).await;
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };

    cli(
        &app,
        &[
            "project",
            "add",
            "Bridge",
            "--instructions",
            "Steel, not wood.",
        ],
    )
    .await;
    let notes = write("notes.md", "The bridge opens at dawn.\n");
    let image = dir.path().join("photo.png");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\n0000").unwrap();
    let (refused, out) = support::run_cli(
        Arc::clone(&app),
        [
            "project",
            "files",
            "Bridge",
            "--add",
            &notes,
            &image.display().to_string(),
            "--json",
        ]
        .map(str::to_owned)
        .to_vec(),
    )
    .await;
    assert!(refused.is_err(), "an image is refused: {out}");
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["added"], serde_json::json!(["notes.md"]));
    assert!(
        listed["refused"][0]
            .as_str()
            .unwrap()
            .contains("is an image"),
        "{listed}"
    );

    // Small: given whole, after the instructions; the search is offered.
    let before = mock.journal().await.len();
    cli(
        &app,
        &[
            "chat",
            "--tools",
            "none",
            "--project",
            "Bridge",
            "Say hello",
        ],
    )
    .await;
    let body = &bodies_since(&mock, before).await[0];
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains(
            "## Project “Bridge”\n\nSteel, not wood.\n\n## Files of the project “Bridge”"
        ),
        "{system}"
    );
    assert!(
        system.contains("### notes.md\n\n```\nThe bridge opens at dawn.\n```"),
        "{system}"
    );

    // Large (1 MB, for a model with an 8k window): the passages that match the question, not
    // the file; the rest through the search tool, which finds the passage and answers.
    let mut manual = String::new();
    for i in 0..1_400 {
        manual.push_str(&format!(
            "Section {i}. The deck is painted grey and inspected by the crew. Lamps line the \
             walkway and the railings are cleaned often. Traffic flows in two lanes.\n\n"
        ));
        if i == 900 {
            manual
                .push_str("Maintenance: the rivet torque is 420 newton metres on every joint.\n\n");
        }
    }
    assert!(manual.len() > 200_000);
    let manual_path = write("manual.txt", &manual);
    cli(&app, &["project", "files", "Bridge", "--add", &manual_path]).await;
    let table = cli(&app, &["project", "files", "Bridge"]).await;
    assert!(
        table.contains("manual.txt") && table.contains("notes.md"),
        "{table}"
    );
    cli(&app, &["provider", "window", "Mock", "gpt-4o", "8192"]).await;
    let before = mock.journal().await.len();
    cli(
        &app,
        &[
            "chat",
            "--project",
            "Bridge",
            "--approve",
            "none",
            "Search the project files for the rivet torque",
        ],
    )
    .await;
    let bodies = bodies_since(&mock, before).await;
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("These passages of them match the question"),
        "{system}"
    );
    assert!(
        system.contains("420 newton metres"),
        "the matching passage is given: {system}"
    );
    assert!(
        !system.contains("Section 5."),
        "not the whole file: {} chars",
        system.len()
    );
    assert!(
        system.len() < 12_000,
        "within the files' share: {} chars",
        system.len()
    );
    assert!(
        tool_names(&bodies[0]).contains(&"switchboard__search_project_files".to_owned()),
        "{:?}",
        tool_names(&bodies[0])
    );
    // The search ran without asking (`--approve none` denies anything that asks) and found it.
    let answered = bodies.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| {
            m["role"] == "tool"
                && m["content"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("manual.txt, passage")
        });
    assert!(answered, "{}", bodies.last().unwrap());
    let conversation = app.conversations().list().await.unwrap().remove(0);
    let detail = app.conversations().get(&conversation.id).await.unwrap();
    let last = detail.messages.last().unwrap();
    assert_eq!(
        last.content.as_deref(),
        Some("The rivet torque is 420 newton metres.")
    );
    // The person can see which passages the turn was given: the header's count and the CLI.
    let given = detail.context.as_ref().unwrap().given.as_ref().unwrap();
    assert!(given.whole.is_empty(), "{given:?}");
    assert!(
        given
            .passages
            .iter()
            .all(|p| p.starts_with("manual.txt, passage ")),
        "{given:?}"
    );
    // Each answer of the turn keeps what its request was given, to say it later.
    assert_eq!(last.given.as_ref(), Some(given));
    let said = json(
        &app,
        &["conversations", "context", &conversation.id, "--json"],
    )
    .await;
    assert_eq!(said["given"]["passages"], serde_json::json!(given.passages));
    let said = cli(&app, &["conversations", "context", &conversation.id]).await;
    assert!(
        said.contains(&format!(
            "Passages of the project's files given ({}):\n  manual.txt, passage ",
            given.passages.len()
        )) && said.contains("of 8,192 tokens in the window"),
        "{said}"
    );

    // Removed: nothing of it is given any more.
    cli(
        &app,
        &[
            "project",
            "files",
            "Bridge",
            "--remove",
            "manual.txt",
            "--remove",
            "notes.md",
        ],
    )
    .await;
    let system = system_of_chat(
        &mock,
        &app,
        &[
            "--tools",
            "none",
            "--conversation",
            &conversation.id,
            "Say hello",
        ],
    )
    .await;
    assert!(
        system.ends_with("## Project “Bridge”\n\nSteel, not wood."),
        "{system}"
    );
}

/// An app on aimock in a home of its own.
async fn app_on(mock: &support::Aimock, home: &std::path::Path) -> Arc<App> {
    app_and_store_on(mock, home).await.0
}

/// [`app_on`], with its database to read.
async fn app_and_store_on(mock: &support::Aimock, home: &std::path::Path) -> (Arc<App>, Store) {
    let paths = AppPaths::under_home(home.to_path_buf());
    paths.create_all().unwrap();
    let store = Store::open_in_memory().unwrap();
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let app = support::headless_app(store.clone(), paths, secrets).await;
    support::add_mock_provider(&app, &mock.root).await;
    (app, store)
}

#[tokio::test]
async fn a_project_exported_is_imported_whole_on_a_fresh_home() {
    let Some(mock) = support::aimock("project-export", "tool-loop.json", &[]) else {
        return;
    };
    let (home, fresh) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let app = app_on(&mock, home.path()).await;
    cli(
        &app,
        &["profile", "create", "Terse", "--system", "Be terse."],
    )
    .await;
    cli(
        &app,
        &[
            "project",
            "add",
            "Bridge",
            "--instructions",
            "Steel, not wood.",
            "--profile",
            "Terse",
            "--switch",
            "git=off",
            "--switch",
            "shell=on",
        ],
    )
    .await;
    let notes = home.path().join("notes.md");
    std::fs::write(&notes, "The rivet torque is 420 newton metres.\n").unwrap();
    cli(
        &app,
        &[
            "project",
            "files",
            "Bridge",
            "--add",
            &notes.display().to_string(),
        ],
    )
    .await;
    cli(
        &app,
        &[
            "chat",
            "--tools",
            "none",
            "--project",
            "Bridge",
            "Say hello",
        ],
    )
    .await;
    cli(
        &app,
        &[
            "chat",
            "--tools",
            "none",
            "--project",
            "Bridge",
            "Say goodbye",
        ],
    )
    .await;
    cli(&app, &["chat", "--tools", "none", "Say hello"]).await;
    let file = home.path().join("bridge.json");
    let said = cli(
        &app,
        &[
            "project",
            "export",
            "Bridge",
            "--out",
            &file.display().to_string(),
        ],
    )
    .await;
    assert!(said.starts_with("Wrote "), "{said}");

    // A fresh home, without the profile: the project, its files and its two conversations.
    let other = app_on(&mock, fresh.path()).await;
    let imported = json(
        &other,
        &["project", "import", &file.display().to_string(), "--json"],
    )
    .await;
    assert_eq!(imported["project"]["name"], "Bridge");
    assert_eq!(imported["project"]["instructions"], "Steel, not wood.");
    assert_eq!(imported["project"]["conversations"], 2);
    assert!(imported["project"]["profile_id"].is_null());
    assert!(
        imported["notes"][0]
            .as_str()
            .unwrap()
            .contains("no profile “Terse”"),
        "{imported}"
    );
    // A file only switches tools off: the switch that turned one on is said, not kept.
    assert_eq!(
        imported["project"]["tools"],
        serde_json::json!([{"server": "git", "tool": null, "enabled": false}])
    );
    assert!(
        imported["notes"][1]
            .as_str()
            .unwrap()
            .contains("The file switched on “shell”"),
        "{imported}"
    );
    let files = json(&other, &["project", "files", "Bridge", "--json"]).await;
    assert_eq!(files["files"][0]["name"], "notes.md");
    let shown = json(&other, &["project", "show", "Bridge", "--json"]).await;
    let mut titles: Vec<String> = shown["conversation_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap().to_owned())
        .collect();
    titles.sort();
    assert_eq!(titles, ["Say goodbye", "Say hello"]);
    let id = shown["conversation_list"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let detail = other.conversations().get(&id).await.unwrap();
    assert_eq!(detail.messages.len(), 2, "the question and its answer");
    // Its conversations are told the project's files and instructions there too.
    let system = system_of_chat(
        &mock,
        &other,
        &["--tools", "none", "--conversation", &id, "Say hello"],
    )
    .await;
    assert!(
        system.contains("Steel, not wood.") && system.contains("420 newton metres"),
        "{system}"
    );

    // Imported again: a name of its own; not an export at all: refused by name.
    let again = json(
        &other,
        &["project", "import", &file.display().to_string(), "--json"],
    )
    .await;
    assert_eq!(again["project"]["name"], "Bridge (2)");
    // Two files of one name in an export: the first is kept, and that is said.
    let mut export: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    export["files"] = serde_json::json!([
        {"name": "a.md", "mime": "text/plain", "text": "first"},
        {"name": "a.md", "mime": "text/plain", "text": "second"}
    ]);
    std::fs::write(&file, export.to_string()).unwrap();
    let twice = json(
        &other,
        &["project", "import", &file.display().to_string(), "--json"],
    )
    .await;
    assert!(
        twice["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("in the export twice")),
        "{twice}"
    );
    std::fs::write(
        &file,
        r#"{"format": "switchboard.conversation", "version": 1}"#,
    )
    .unwrap();
    let (refused, _) = support::run_cli(
        Arc::clone(&other),
        ["project", "import", &file.display().to_string()]
            .map(str::to_owned)
            .to_vec(),
    )
    .await;
    assert!(refused.unwrap_err().contains("not a Switchboard project"));
}

#[tokio::test]
async fn memory_is_kept_and_told_only_while_it_is_on_and_can_be_edited_and_deleted() {
    let Some(mock) = support::aimock("memory", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let app = app_on(&mock, home.path()).await;

    // Off (as it starts): no tool to keep facts, nothing told, nothing kept.
    let before = mock.journal().await.len();
    cli(
        &app,
        &["chat", "--approve", "all", "Remember that my bike is blue"],
    )
    .await;
    let body = &bodies_since(&mock, before).await[0];
    assert!(!tool_names(body).contains(&"switchboard__remember".to_owned()));
    assert_eq!(
        json(&app, &["memory", "list", "--all", "--json"]).await,
        serde_json::json!([])
    );

    // On: the model keeps it (asked like any call: `--approve all` answers), from this
    // conversation.
    cli(&app, &["memory", "on"]).await;
    let before = mock.journal().await.len();
    cli(
        &app,
        &["chat", "--approve", "all", "Remember that my bike is blue"],
    )
    .await;
    let body = &bodies_since(&mock, before).await[0];
    assert!(
        tool_names(body).contains(&"switchboard__remember".to_owned()),
        "{:?}",
        tool_names(body)
    );
    let facts = json(&app, &["memory", "list", "--json"]).await;
    assert_eq!(facts.as_array().unwrap().len(), 1, "{facts}");
    assert_eq!(facts[0]["text"], "The person's bike is blue.");
    assert_eq!(
        facts[0]["conversation_title"],
        "Remember that my bike is blue"
    );
    let id = facts[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(facts[0]["from_conversation"], true);
    // Its conversation deleted, the fact stays, said to have come from one.
    let from = facts[0]["conversation_id"].as_str().unwrap().to_owned();
    app.delete_conversation(&from).await.unwrap();
    let facts = json(&app, &["memory", "list", "--json"]).await;
    assert_eq!(facts[0]["conversation_id"], serde_json::Value::Null);
    assert_eq!(facts[0]["from_conversation"], true);
    let table = cli(&app, &["memory", "list"]).await;
    assert!(table.contains("(a conversation since deleted)"), "{table}");

    // A new conversation is told it, under its heading.
    let system = system_of_chat(&mock, &app, &["--tools", "none", "What colour is my bike?"]).await;
    assert!(
        system.contains("## What you remember") && system.contains("- The person's bike is blue."),
        "{system}"
    );
    // And the header says which facts it was given.
    let newest = app.conversations().list().await.unwrap().remove(0);
    let said = json(&app, &["conversations", "context", &newest.id, "--json"]).await;
    assert_eq!(
        said["given"],
        serde_json::json!({"whole": [], "passages": [], "facts": ["The person's bike is blue."]})
    );

    // Edited, then deleted: told the new words, then nothing.
    cli(&app, &["memory", "edit", &id, "The bike is red now."]).await;
    let system = system_of_chat(&mock, &app, &["--tools", "none", "What colour is my bike?"]).await;
    assert!(
        system.contains("- The bike is red now.") && !system.contains("blue"),
        "{system}"
    );
    cli(&app, &["memory", "remove", &id]).await;
    let system = system_of_chat(&mock, &app, &["--tools", "none", "What colour is my bike?"]).await;
    assert!(!system.contains("What you remember"), "{system}");

    // A project has its own memory, off until switched on; the person's is not told there.
    let written = json(&app, &["memory", "add", "Prefers metric units.", "--json"]).await;
    assert_eq!(written["from_conversation"], false, "{written}");
    cli(&app, &["project", "add", "Bridge"]).await;
    let system = system_of_chat(
        &mock,
        &app,
        &[
            "--tools",
            "none",
            "--project",
            "Bridge",
            "What colour is my bike?",
        ],
    )
    .await;
    assert!(!system.contains("metric"), "{system}");
    cli(&app, &["memory", "on", "--project", "Bridge"]).await;
    cli(
        &app,
        &["memory", "add", "--project", "Bridge", "Rivets are steel."],
    )
    .await;
    let system = system_of_chat(
        &mock,
        &app,
        &[
            "--tools",
            "none",
            "--project",
            "Bridge",
            "What colour is my bike?",
        ],
    )
    .await;
    assert!(
        system.contains("the project “Bridge”'s memory") && system.contains("- Rivets are steel."),
        "{system}"
    );
    assert!(!system.contains("metric"), "{system}");
    // Off again: nothing of it told, and the tool not offered.
    cli(&app, &["memory", "off", "--project", "Bridge"]).await;
    let before = mock.journal().await.len();
    cli(
        &app,
        &[
            "chat",
            "--approve",
            "all",
            "--project",
            "Bridge",
            "What colour is my bike?",
        ],
    )
    .await;
    let body = &bodies_since(&mock, before).await[0];
    assert!(!tool_names(body).contains(&"switchboard__remember".to_owned()));
    assert!(!body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .contains("Rivets"));
    let all = json(&app, &["memory", "list", "--all", "--json"]).await;
    assert_eq!(
        all.as_array().unwrap().len(),
        2,
        "both facts are kept while off: {all}"
    );
    let refused = support::run_cli(
        Arc::clone(&app),
        ["memory", "add", " "].map(str::to_owned).to_vec(),
    )
    .await
    .0;
    assert!(refused.unwrap_err().contains("Write the fact"));
}

/// Answers every approval by switching the person's memory off first: as if they turned it off
/// while the dialog waited, then allowed the call.
struct SwitchesMemoryOff(Arc<App>);

impl switchboard_core::agent::Approver for SwitchesMemoryOff {
    fn ask(
        &self,
        request: switchboard_core::agent::ApprovalRequest,
    ) -> switchboard_core::agent::approval::Answers<'_> {
        Box::pin(async move {
            self.0.set_own_memory(false).await.unwrap();
            allowed(&request)
        })
    }
}

#[tokio::test]
async fn a_fact_allowed_after_memory_was_switched_off_is_not_kept() {
    let Some(mock) = support::aimock("memory-off", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let app = app_on(&mock, home.path()).await;
    cli(&app, &["memory", "on"]).await;
    let conversation = app.conversations().create(None, "").await.unwrap();
    let seen = Arc::new(support::Seen::default());
    let run = app
        .start_turn_answered_by(
            switchboard_core::app::TurnRequest {
                conversation_id: conversation.id.clone(),
                text: Some("Remember that my bike is blue".to_owned()),
                ..Default::default()
            },
            seen.clone(),
            Arc::new(SwitchesMemoryOff(Arc::clone(&app))),
        )
        .await
        .unwrap();
    run.finished().await;
    assert_eq!(
        json(&app, &["memory", "list", "--all", "--json"]).await,
        serde_json::json!([]),
        "nothing kept"
    );
    let detail = app.conversations().get(&conversation.id).await.unwrap();
    let result = detail
        .messages
        .iter()
        .find(|m| m.role == switchboard_core::store::Role::Tool)
        .expect("the call ran");
    assert!(result.is_error, "{result:?}");
    assert!(
        result
            .content
            .as_deref()
            .unwrap_or_default()
            .contains("memory was switched off in this conversation: nothing was kept"),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_projects_tool_switches_are_put_over_its_profiles_on_its_conversations() {
    let Some(mock) = support::aimock("project-tools", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let (app, store) = app_and_store_on(&mock, home.path()).await;
    let switches = |id: String| {
        let store = store.clone();
        async move {
            let mut on: Vec<String> = store
                .tool_toggles(id)
                .await
                .unwrap()
                .into_iter()
                .map(|t| {
                    format!(
                        "{}{}={}",
                        t.server,
                        t.tool.map(|t| format!(":{t}")).unwrap_or_default(),
                        if t.enabled { "on" } else { "off" }
                    )
                })
                .collect();
            on.sort();
            on
        }
    };

    // A conversation started in the project (or in none), and the newest one then.
    let chat_in = |project: Option<&'static str>| {
        let app = Arc::clone(&app);
        async move {
            let mut args = vec!["chat", "--tools", "none"];
            args.extend(project.map(|p| ["--project", p]).into_iter().flatten());
            args.push("Say hello");
            cli(&app, &args).await;
            app.conversations().list().await.unwrap().remove(0)
        }
    };

    cli(
        &app,
        &[
            "profile", "create", "Coder", "--switch", "git=off", "--switch", "fs=on",
        ],
    )
    .await;
    cli(
        &app,
        &[
            "project",
            "add",
            "Bridge",
            "--profile",
            "Coder",
            "--switch",
            "fs:write_file=off",
            "--switch",
            "time=off",
            "--switch",
            "git:log=on",
        ],
    )
    .await;
    let shown = cli(&app, &["project", "show", "Bridge"]).await;
    assert!(
        shown.contains("Tool switches: fs:write_file off, time off, git:log on"),
        "{shown}"
    );

    // Started in the project: the profile's switches, then the project's over them.
    let started = chat_in(Some("Bridge")).await;
    assert_eq!(
        switches(started.id.clone()).await,
        [
            "fs:write_file=off",
            "fs=on",
            "git:log=on",
            "git=off",
            "time=off"
        ]
    );

    // Moved in: the project's over what it had (a whole server's switch sets all its tools).
    let loose = chat_in(None).await;
    assert_ne!(loose.id, started.id);
    store
        .set_tool_toggle(
            loose.id.clone(),
            switchboard_core::store::ToolToggle {
                server: "time".into(),
                tool: Some("now".into()),
                enabled: true,
            },
        )
        .await
        .unwrap();
    cli(&app, &["project", "move", &loose.id, "Bridge"]).await;
    assert_eq!(
        switches(loose.id.clone()).await,
        ["fs:write_file=off", "git:log=on", "time=off"]
    );

    // Forgotten: a conversation started then has only its profile's.
    cli(&app, &["project", "edit", "Bridge", "--no-switches"]).await;
    let shown = cli(&app, &["project", "show", "Bridge", "--json"]).await;
    assert!(shown.contains("\"tools\": []"), "{shown}");
    let third = chat_in(Some("Bridge")).await;
    assert_eq!(switches(third.id).await, ["fs=on", "git=off"]);
}

#[tokio::test]
async fn a_projects_folders_are_its_servers_roots_while_its_turn_runs_and_given_back_after() {
    if !support::mcp_peers_installed("project roots") {
        return;
    }
    let Some(mock) = support::aimock("project-roots", "tool-loop.json", &[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let app = app_on(&mock, home.path()).await;
    let entry = switchboard_core::mcp::config::ServerEntry {
        command: Some(
            support::peers()
                .join(".venv/bin/python")
                .display()
                .to_string(),
        ),
        args: vec![support::peers()
            .join("fault_server.py")
            .display()
            .to_string()],
        ..Default::default()
    };
    app.mcp_add("fault", entry).await.unwrap();
    app.start_servers().await;
    support::server_state(app.host(), "fault", |s| {
        matches!(s, switchboard_core::mcp::host::ServerState::Running { .. })
    })
    .await;
    let folder = tempfile::tempdir().unwrap();
    let folder_path = folder.path().display().to_string();
    cli(&app, &["project", "add", "Bridge", "--root", &folder_path]).await;
    let shown = cli(&app, &["project", "show", "Bridge"]).await;
    assert!(
        shown.contains(&format!("Folders: {folder_path}")),
        "{shown}"
    );
    // A folder that is not there is refused.
    let (refused, said) = support::run_cli(
        Arc::clone(&app),
        ["project", "edit", "Bridge", "--root", "/no/such/folder"]
            .map(str::to_owned)
            .to_vec(),
    )
    .await;
    assert!(refused.is_err(), "{said}");

    // The tool asks for the roots while the turn in the project runs: the project's folder.
    let seen = |conversation: &switchboard_core::app::ConversationDetail| {
        conversation
            .messages
            .iter()
            .find(|m| m.role == switchboard_core::store::Role::Tool)
            .and_then(|m| m.content.clone())
            .unwrap_or_default()
    };
    let ask = |in_project: bool| {
        let app = Arc::clone(&app);
        async move {
            let conversation = app.conversations().create(None, "").await.unwrap();
            if in_project {
                cli(&app, &["project", "move", &conversation.id, "Bridge"]).await;
            }
            let run = app
                .start_turn_answered_by(
                    switchboard_core::app::TurnRequest {
                        conversation_id: conversation.id.clone(),
                        text: Some("Which folders does the fault server see".to_owned()),
                        ..Default::default()
                    },
                    Arc::new(support::Seen::default()),
                    Arc::new(Allows),
                )
                .await
                .unwrap();
            run.finished().await;
            app.conversations().get(&conversation.id).await.unwrap()
        }
    };
    let detail = ask(true).await;
    let url = url::Url::from_directory_path(folder.path()).unwrap();
    let url = url.as_str().trim_end_matches('/');
    assert!(seen(&detail).contains(url), "{}", seen(&detail));
    // And a path argument outside the project's folders asks: the turn's servers are judged by
    // them.
    let conversation = app.conversations().create(None, "").await.unwrap();
    cli(&app, &["project", "move", &conversation.id, "Bridge"]).await;
    let setup = app
        .prepare_turn(
            switchboard_core::app::TurnRequest {
                conversation_id: conversation.id.clone(),
                text: Some("Say hello".to_owned()),
                ..Default::default()
            },
            &app.settings(),
        )
        .await
        .unwrap();
    assert_eq!(setup.rules["fault"].roots, [folder.path().to_path_buf()]);
    assert_eq!(setup.project_roots, [folder.path().to_path_buf()]);
    // Given back once it ended: the server's own (none).
    let server = app.host().server("fault").unwrap();
    assert!(server.roots().is_empty(), "{:?}", server.roots());

    // Outside the project: not the project's folder.
    let detail = ask(false).await;
    assert!(seen(&detail).starts_with("roots:"), "{}", seen(&detail));
    assert!(!seen(&detail).contains(url), "{}", seen(&detail));
}

/// Allows every call it is asked about.
struct Allows;

impl switchboard_core::agent::Approver for Allows {
    fn ask(
        &self,
        request: switchboard_core::agent::ApprovalRequest,
    ) -> switchboard_core::agent::approval::Answers<'_> {
        Box::pin(std::future::ready(allowed(&request)))
    }
}

/// Every call of `request` allowed once.
fn allowed(
    request: &switchboard_core::agent::ApprovalRequest,
) -> Vec<switchboard_core::agent::ApprovalAnswer> {
    request
        .calls
        .iter()
        .map(|c| switchboard_core::agent::ApprovalAnswer {
            call_id: c.call_id.clone(),
            decision: switchboard_core::agent::Decision::AllowOnce,
            reason: None,
        })
        .collect()
}
