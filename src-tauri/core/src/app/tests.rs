//! What a person notices of the flows the app owns: Settings kept true when a provider goes,
//! and a server approved only as it was shown.

use std::sync::Arc;

use super::NewProvider;
use super::*;
use crate::mcp::config::ServerEntry;
use crate::policy::confirm::{Allowance, Always, Confirm, ServerApprovalRequest, ToolChange};
use crate::secrets::MemoryStore;
use crate::settings::MemorySettings;
use crate::store::Store;

async fn app_in(dir: &std::path::Path, settings: Settings) -> Arc<App> {
    let paths = AppPaths::under_home(dir.to_path_buf());
    paths.create_all().unwrap();
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    App::with_store(
        Store::open_in_memory().unwrap(),
        AppConfig::headless(paths, secrets, Arc::new(MemorySettings::new(settings))),
    )
    .await
}

fn provider(name: &str) -> NewProvider {
    NewProvider {
        name: name.into(),
        kind: Some("ollama".into()),
        base_url: None,
        default_model: Some("llama3.2".into()),
        api_key: None,
    }
}

#[tokio::test]
async fn removing_the_default_provider_clears_the_default_and_a_new_conversation_asks_for_a_model()
{
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(
        dir.path(),
        Settings {
            default_provider: Some("Local".into()),
            default_model: Some("llama3.2".into()),
            ..Settings::default()
        },
    )
    .await;
    for name in ["Local", "Other", "Third"] {
        app.providers().add(provider(name)).await.unwrap();
    }
    app.remove_provider("local").await.unwrap();
    let settings = app.settings();
    assert_eq!(settings.default_provider, None);
    assert_eq!(settings.default_model, None);

    let conversation = app.conversations().create(None, "").await.unwrap();
    let refused = app
        .start_turn(
            TurnRequest {
                conversation_id: conversation.id,
                text: Some("hello".into()),
                ..TurnRequest::default()
            },
            Arc::new(|_: crate::events::RunEvent| {}),
        )
        .await
        .err()
        .expect("no model chosen");
    match refused {
        CoreError::Invalid(e) => {
            assert_eq!(e.field, "provider");
            assert!(e.message.contains("Choose a model"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_save_that_still_names_a_removed_default_provider_does_not_bring_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(dir.path(), Settings::default()).await;
    app.providers().add(provider("Local")).await.unwrap();
    app.providers().add(provider("Other")).await.unwrap();
    let chosen = Settings {
        default_provider: Some("Local".into()),
        default_model: Some("llama3.2".into()),
        ..Settings::default()
    };
    let saved = app
        .update_settings(chosen.clone(), &Always(false))
        .await
        .unwrap();
    assert_eq!(saved.default_provider.as_deref(), Some("Local"));
    // The window read the settings before the provider went, and saves them after.
    app.remove_provider("Local").await.unwrap();
    let saved = app.update_settings(chosen, &Always(false)).await.unwrap();
    assert_eq!(saved.default_provider, None);
    assert_eq!(saved.default_model, None);
    assert_eq!(app.settings().default_provider, None, "what was written");
}

#[tokio::test]
async fn removing_another_provider_keeps_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(
        dir.path(),
        Settings {
            default_provider: Some("Local".into()),
            ..Settings::default()
        },
    )
    .await;
    app.providers().add(provider("Local")).await.unwrap();
    app.providers().add(provider("Other")).await.unwrap();
    app.remove_provider("Other").await.unwrap();
    assert_eq!(app.settings().default_provider.as_deref(), Some("Local"));
}

/// Edits mcp.json while the person reads the question, then says yes.
struct EditsWhileAsking(std::path::PathBuf);

#[async_trait::async_trait]
impl Confirm for EditsWhileAsking {
    async fn approve_server(&self, request: &ServerApprovalRequest) -> bool {
        assert!(request.command_line.contains("--version"), "{request:?}");
        let text = std::fs::read_to_string(&self.0).unwrap();
        std::fs::write(&self.0, text.replace("--version", "-c print(1)")).unwrap();
        true
    }

    async fn accept_tool(&self, _: &ToolChange) -> bool {
        true
    }

    async fn allow(&self, _: &Allowance) -> bool {
        true
    }
}

#[tokio::test]
async fn a_server_changed_while_its_approval_was_shown_is_not_approved() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(dir.path(), Settings::default()).await;
    let entry = ServerEntry::from_typed(Some("python3 --version"), None).unwrap();
    app.mcp_add_unapproved("py", entry).await.unwrap();

    let err = app
        .approve_server("py", &EditsWhileAsking(app.mcp_file()))
        .await
        .unwrap_err();
    assert!(matches!(err, CoreError::Conflict { .. }), "{err:?}");
    assert!(err.to_string().contains("changed"), "{err}");
    assert!(!app.mcp_server_view("py".into()).await.unwrap().approved);

    // Shown as it is now and approved: approved.
    assert!(app.approve_server("py", &Always(true)).await.unwrap());
    assert!(app.mcp_server_view("py".into()).await.unwrap().approved);
    // A "no" approves nothing.
    let entry = ServerEntry::from_typed(Some("python3 -V"), None).unwrap();
    app.mcp_add_unapproved("other", entry).await.unwrap();
    assert!(!app.approve_server("other", &Always(false)).await.unwrap());
    assert!(!app.mcp_server_view("other".into()).await.unwrap().approved);
}

#[tokio::test]
async fn a_message_sent_from_the_composer_takes_its_draft_along_and_a_refused_one_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(dir.path(), Settings::default()).await;
    let conversation = app.conversations().create(None, "").await.unwrap();
    let draft = crate::app::Draft {
        text: "hello".into(),
        ..crate::app::Draft::default()
    };
    app.save_draft(&conversation.id, &draft).await.unwrap();
    let ask = |provider: Option<&str>| TurnRequest {
        conversation_id: conversation.id.clone(),
        text: Some("hello".into()),
        provider: provider.map(Into::into),
        ..TurnRequest::default()
    };
    let quiet = || Arc::new(|_: crate::events::RunEvent| {});

    // Refused (no model chosen): the draft stays, to be sent again.
    assert!(app.send_composed(ask(None), quiet()).await.is_err());
    assert_eq!(app.draft(&conversation.id).await.unwrap(), Some(draft));

    // Started (its model's server is not there, which the run finds out later): gone.
    app.providers()
        .add(NewProvider {
            base_url: Some("http://127.0.0.1:9".into()),
            ..provider("Local")
        })
        .await
        .unwrap();
    app.send_composed(ask(Some("Local")), quiet())
        .await
        .unwrap();
    assert_eq!(app.draft(&conversation.id).await.unwrap(), None);
    app.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_form_no_longer_open_is_not_found_and_a_form_is_not_a_page_to_visit() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(dir.path(), Settings::default()).await;
    let decline = crate::mcp::elicitation::ElicitationAnswer::Decline;
    let closed = app.answer_form("gone", decline).unwrap_err();
    assert_eq!(closed.kind(), crate::error::ErrorKind::NotFound, "{closed}");
    let never_opened = app
        .visit_form_page("gone", &crate::policy::confirm::Always(true), &|_| Ok(()))
        .await
        .unwrap_err();
    assert_eq!(never_opened.kind(), crate::error::ErrorKind::NotFound);
}

#[tokio::test]
async fn an_import_reads_pasted_text_and_names_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(dir.path(), Settings::default()).await;
    let pasted = r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#;
    let preview = app
        .mcp_import_preview_of(ImportSource::Text(pasted.into()))
        .await
        .unwrap();
    assert_eq!(preview.added.len(), 1);
    let missing = dir.path().join("no-such.json");
    let err = app
        .mcp_import_preview_of(ImportSource::File(missing.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), crate::error::ErrorKind::NotFound);
    assert!(
        err.to_string().contains(&missing.display().to_string()),
        "{err}"
    );
}

#[tokio::test]
async fn only_the_windows_app_starts_a_server_again_after_a_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    // A command line's app keeps a record of its own and runs no server between verbs.
    let cli = app_in(dir.path(), Settings::default()).await;
    assert!(!cli.runs_the_homes_servers());
    let paths = AppPaths::under_home(dir.path().join("window"));
    paths.create_all().unwrap();
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
    let window = App::with_store(
        Store::open_in_memory().unwrap(),
        AppConfig {
            pid_file: None,
            ..AppConfig::headless(paths, secrets, Arc::new(MemorySettings::default()))
        },
    )
    .await;
    assert!(window.runs_the_homes_servers());
}

#[tokio::test]
async fn the_policy_is_compiled_once_while_its_files_say_the_same_and_again_when_one_changes() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(dir.path(), Settings::default()).await;
    let first = app.policy().unwrap();
    assert!(
        Arc::ptr_eq(&first, &app.policy().unwrap()),
        "no file: compiled once"
    );
    let file = app.policy_file();
    std::fs::write(
        &file,
        r#"{"rules": [{"server": "web", "outcome": "block"}]}"#,
    )
    .unwrap();
    let blocking = app.policy().unwrap();
    assert!(blocking.blocked("web", "fetch").is_some());
    assert!(Arc::ptr_eq(&blocking, &app.policy().unwrap()));
    // The same size, written at once: compared by text, it is still a change.
    std::fs::write(
        &file,
        r#"{"rules": [{"server": "web", "outcome": "allow"}]}"#,
    )
    .unwrap();
    assert!(app.policy().unwrap().blocked("web", "fetch").is_none());
    // The organisation's file counts as much as the person's.
    let managed = app.paths.managed_dirs()[0].join("policy.json");
    std::fs::create_dir_all(managed.parent().unwrap()).unwrap();
    std::fs::write(
        &managed,
        r#"{"rules": [{"server": "web", "outcome": "block"}]}"#,
    )
    .unwrap();
    assert!(app.policy().unwrap().blocked("web", "fetch").is_some());
    // A broken file is said, and not hidden by what was compiled before it.
    std::fs::write(&file, "{").unwrap();
    assert!(app.policy().is_err());
}

#[tokio::test]
async fn a_shorter_audit_record_is_confirmed_first_and_a_longer_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_in(dir.path(), Settings::default()).await;
    let with_days = |days: u32| Settings {
        audit_retention_days: days,
        ..app.settings()
    };
    let refused = app
        .update_settings(with_days(7), &Always(false))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, CoreError::NotConfirmed { .. }),
        "{refused}"
    );
    assert_eq!(app.settings().audit_retention_days, 365, "nothing written");
    app.update_settings(with_days(7), &Always(true))
        .await
        .unwrap();
    assert_eq!(app.settings().audit_retention_days, 7);
    // Keeping more asks nothing; neither does a save that leaves it as it is.
    app.update_settings(with_days(30), &Always(false))
        .await
        .unwrap();
    app.update_settings(with_days(30), &Always(false))
        .await
        .unwrap();
    assert_eq!(app.settings().audit_retention_days, 30);
    let asked = Allowance::ShorterAuditRecord {
        from_days: 30,
        to_days: 1,
    };
    assert_eq!(
        asked.title(),
        "Keep the record of tool calls for only 1 day?"
    );
    assert!(asked.message().contains("kept for 30 days now"));
}
