//! What a person notices when using conversations and providers through the app.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};

use super::*;
use crate::secrets::MemoryStore;
use crate::store::{Store, StoreError};

use crate::providers::ProviderFailure;

fn config(paths: AppPaths, secrets: Arc<dyn SecretStore>) -> AppConfig {
    AppConfig::headless(
        paths,
        secrets,
        Arc::new(crate::settings::MemorySettings::default()),
    )
}

/// An app whose home is `dir`, its database opened there.
async fn core_in(dir: &std::path::Path, secrets: Arc<dyn SecretStore>) -> Arc<App> {
    App::open(config(AppPaths::under_home(dir.to_path_buf()), secrets)).await
}

/// [`core_in`], with provider clients that give up quickly.
async fn quick_core_in(dir: &std::path::Path, secrets: Arc<dyn SecretStore>) -> Arc<App> {
    App::open(AppConfig {
        http: quick(),
        ..config(AppPaths::under_home(dir.to_path_buf()), secrets)
    })
    .await
}

/// An app over a database in memory, with `secrets`.
async fn in_memory(secrets: Arc<dyn SecretStore>) -> Arc<App> {
    App::with_store(
        Store::open_in_memory().unwrap(),
        config(AppPaths::under_home("/nonexistent".into()), secrets),
    )
    .await
}

fn provider(name: &str, kind: &str, key: Option<&str>) -> NewProvider {
    NewProvider {
        name: name.into(),
        kind: Some(kind.into()),
        base_url: None,
        default_model: Some("gpt-4o-mini".into()),
        api_key: key.map(SecretString::from),
    }
}

/// Every byte of every file under `dir`, to prove a secret is in none of them.
fn files_containing(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
            {
                hits.push(path);
            }
        }
    }
    hits
}

#[tokio::test]
async fn a_100_000_character_title_is_trimmed_not_stored_whole() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    let conv = core
        .conversations()
        .create(Some(&"t".repeat(100_000)), "")
        .await
        .unwrap();
    assert_eq!(conv.title.chars().count(), MAX_TITLE_CHARS);
    let renamed = core
        .conversations()
        .rename(&conv.id, &"r".repeat(100_000))
        .await
        .unwrap();
    assert_eq!(renamed.title.chars().count(), MAX_TITLE_CHARS);
    assert!(std::fs::metadata(core.database_path()).unwrap().len() < 100_000);
}

#[tokio::test]
async fn a_conversation_made_with_a_name_or_a_system_prompt_of_the_persons_is_kept_unused() {
    use crate::app::ProfileChoice;
    let core = in_memory(Arc::new(MemoryStore::new())).await;
    let new = |title: Option<&'static str>, prompt: Option<&'static str>| {
        let core = Arc::clone(&core);
        async move {
            let made = core.create_conversation(title, prompt, &ProfileChoice::None);
            made.await.unwrap().id
        }
    };
    let plain = new(None, None).await;
    let named = new(Some("Trip"), None).await;
    // The command line's `chat --system`.
    let prompted = new(None, Some("Answer in French.")).await;
    let conversations = core.conversations();
    assert!(conversations.discard_if_unused(&plain).await.unwrap());
    assert!(!conversations.discard_if_unused(&named).await.unwrap());
    assert!(!conversations.discard_if_unused(&prompted).await.unwrap());
}

#[tokio::test]
async fn a_blank_title_is_refused_on_rename_and_defaulted_on_create() {
    let core = in_memory(Arc::new(MemoryStore::new())).await;
    let conv = core.conversations().create(Some("   "), "").await.unwrap();
    assert_eq!(conv.title, DEFAULT_TITLE);
    let err = core
        .conversations()
        .rename(&conv.id, " \n ")
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.field()),
        ("invalid_input", Some("title"))
    );
    // Invisible characters alone would leave a blank row in the list.
    let invisible = core
        .conversations()
        .create(Some("\u{202e}\u{200b} \u{2066}"), "")
        .await
        .unwrap();
    assert_eq!(invisible.title, DEFAULT_TITLE);
    let err = core
        .conversations()
        .rename(&conv.id, "\u{200b}\u{e0041}")
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("title"));
}

#[tokio::test]
async fn a_hundred_concurrent_creates_and_deletes_leave_a_consistent_list() {
    let core = in_memory(Arc::new(MemoryStore::new())).await;
    let mut tasks = Vec::new();
    for i in 0..100 {
        let core = Arc::clone(&core);
        tasks.push(tokio::spawn(async move {
            let c = core
                .conversations()
                .create(Some(&format!("c{i}")), "")
                .await
                .unwrap();
            if i % 2 == 0 {
                core.delete_conversation(&c.id).await.unwrap();
                None
            } else {
                Some(c.id)
            }
        }));
    }
    let mut kept = Vec::new();
    for t in tasks {
        kept.extend(t.await.unwrap());
    }
    let listed = core.conversations().list().await.unwrap();
    assert_eq!(listed.len(), 50);
    let mut listed_ids: Vec<_> = listed.iter().map(|c| c.id.clone()).collect();
    listed_ids.sort();
    kept.sort();
    assert_eq!(listed_ids, kept);
    assert!(listed
        .windows(2)
        .all(|w| w[0].updated_at >= w[1].updated_at));
}

#[tokio::test]
async fn a_provider_key_goes_to_the_secret_store_and_nowhere_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemoryStore::new());
    let core = core_in(dir.path(), secrets.clone()).await;
    let added = core
        .providers()
        .add(provider("OpenAI", "openai", Some("sk-test-SECRET-4242")))
        .await
        .unwrap();
    assert!(added.has_key);
    assert_eq!(added.base_url, "https://api.openai.com/v1");
    assert_eq!(
        secrets
            .get("provider/OpenAI")
            .unwrap()
            .unwrap()
            .expose_secret(),
        "sk-test-SECRET-4242"
    );
    drop(core);
    assert!(files_containing(dir.path(), "SECRET-4242").is_empty());
    assert!(!serde_json::to_string(&added).unwrap().contains("SECRET"));
}

#[tokio::test]
async fn with_no_keychain_a_provider_with_a_key_is_not_saved_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_in(dir.path(), Arc::new(MemoryStore::unreachable("no D-Bus"))).await;
    let err = core
        .providers()
        .add(provider("OpenAI", "openai", Some("sk-test-nothere")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "keychain");
    assert!(err.to_string().contains("nothing was saved"));
    assert!(core.providers().list().await.unwrap().is_empty());
    assert!(!core.keychain_status().await.available);
    assert!(files_containing(dir.path(), "sk-test-nothere").is_empty());
}

#[tokio::test]
async fn bad_provider_input_is_refused_naming_the_field() {
    let core = in_memory(Arc::new(MemoryStore::new())).await;
    let err = core
        .providers()
        .add(provider("  ", "openai", None))
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("name"));
    let mut bad_url = provider("X", "openai", None);
    bad_url.base_url = Some("htp:/nope".into());
    assert_eq!(
        core.providers().add(bad_url).await.unwrap_err().field(),
        Some("base_url")
    );
    let err = core
        .providers()
        .add(provider("X", "gopher", None))
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("kind"));

    core.providers()
        .add(provider("Local", "ollama", None))
        .await
        .unwrap();
    let err = core
        .providers()
        .add(provider("local", "ollama", None))
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.field()),
        ("conflict", Some("name"))
    );
}

#[tokio::test]
async fn a_key_can_be_replaced_and_deleted_and_goes_with_its_provider() {
    let secrets = Arc::new(MemoryStore::new());
    let core = in_memory(secrets.clone()).await;
    core.providers()
        .add(provider("Claude", "anthropic", None))
        .await
        .unwrap();
    assert!(!core.providers().list().await.unwrap()[0].has_key);

    core.providers()
        .set_key("claude", SecretString::from("sk-ant-1"))
        .await
        .unwrap();
    core.providers()
        .set_key("Claude", SecretString::from("sk-ant-2"))
        .await
        .unwrap();
    assert!(core.providers().list().await.unwrap()[0].has_key);
    assert_eq!(
        core.providers()
            .key("Claude")
            .await
            .unwrap()
            .unwrap()
            .expose_secret(),
        "sk-ant-2"
    );

    assert!(!core.providers().delete_key("Claude").await.unwrap().has_key);
    core.providers()
        .set_key("Claude", SecretString::from("sk-ant-3"))
        .await
        .unwrap();
    core.remove_provider("Claude").await.unwrap();
    assert!(core.providers().list().await.unwrap().is_empty());
    assert!(secrets.get("provider/Claude").unwrap().is_none());
    assert_eq!(
        core.remove_provider("Claude").await.unwrap_err().kind(),
        "not_found"
    );
}

#[tokio::test]
async fn a_damaged_database_is_reported_by_every_operation_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let paths = AppPaths::under_home(dir.path().to_path_buf());
    std::fs::create_dir_all(&paths.data_dir).unwrap();
    std::fs::write(
        paths.database_file(),
        b"garbage, not SQLite at all".repeat(100),
    )
    .unwrap();
    let before = std::fs::read(paths.database_file()).unwrap();

    let core = App::open(config(paths.clone(), Arc::new(MemoryStore::new()))).await;
    let problem = core.database_error().expect("must report");
    assert_eq!(problem.reason, "corrupt");
    let err = core
        .conversations()
        .create(Some("x"), "")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "database");
    assert_eq!(std::fs::read(paths.database_file()).unwrap(), before);
}

#[tokio::test]
async fn a_damaged_database_is_set_aside_whole_and_the_next_start_is_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let paths = AppPaths::under_home(dir.path().to_path_buf());
    std::fs::create_dir_all(&paths.data_dir).unwrap();
    let garbage = b"garbage, not SQLite at all".repeat(100);
    std::fs::write(paths.database_file(), &garbage).unwrap();
    let core = App::open(config(paths.clone(), Arc::new(MemoryStore::new()))).await;
    assert!(core.database_error().is_some());
    assert!(core.status("0").fresh_start);
    // A journal beside it (SQLite's own, as another program may have left one) goes with it.
    let mut wal = paths.database_file().into_os_string();
    wal.push("-wal");
    std::fs::write(&wal, b"a journal").unwrap();
    let kept = core.set_aside_database().await.unwrap();
    let name = kept.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("switchboard.db.damaged-"), "{name}");
    assert_eq!(kept.parent(), paths.database_file().parent());
    assert_eq!(std::fs::read(&kept).unwrap(), garbage);
    let mut kept_wal = kept.clone().into_os_string();
    kept_wal.push("-wal");
    assert_eq!(std::fs::read(kept_wal).unwrap(), b"a journal");
    assert!(!paths.database_file().exists());
    assert!(!std::path::Path::new(&wal).exists());

    // The next start opens a fresh database beside the kept one.
    drop(core);
    let again = App::open(config(paths.clone(), Arc::new(MemoryStore::new()))).await;
    assert!(again.database_error().is_none());
    again.conversations().create(Some("x"), "").await.unwrap();
    assert_eq!(std::fs::read(&kept).unwrap(), garbage);
    // A working database is never set aside.
    let refused = again.set_aside_database().await.unwrap_err();
    assert_eq!(refused.kind(), "conflict");
    assert!(paths.database_file().exists());
}

#[tokio::test]
async fn a_database_a_newer_switchboard_wrote_is_never_set_aside() {
    let dir = tempfile::tempdir().unwrap();
    let paths = AppPaths::under_home(dir.path().to_path_buf());
    std::fs::create_dir_all(&paths.data_dir).unwrap();
    {
        let conn = rusqlite::Connection::open(paths.database_file()).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(paths.database_file()).unwrap();
    let core = App::open(config(paths.clone(), Arc::new(MemoryStore::new()))).await;
    assert_eq!(core.database_error().unwrap().reason, "too_new");
    assert!(!core.status("0").fresh_start);
    let refused = core.set_aside_database().await.unwrap_err();
    assert_eq!(refused.kind(), "conflict");
    assert_eq!(std::fs::read(paths.database_file()).unwrap(), before);
}

#[test]
fn setting_aside_twice_in_one_second_keeps_both() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("switchboard.db");
    let now = std::time::SystemTime::now();
    std::fs::write(&file, b"one").unwrap();
    let first = super::home::set_aside(&file, now).unwrap();
    std::fs::write(&file, b"two").unwrap();
    let second = super::home::set_aside(&file, now).unwrap();
    assert_ne!(first, second);
    assert!(second.to_string_lossy().ends_with("-2"));
    assert_eq!(std::fs::read(first).unwrap(), b"one");
    assert_eq!(std::fs::read(second).unwrap(), b"two");
}

#[tokio::test]
async fn an_import_of_a_conversation_already_here_is_told_apart_by_its_title() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    let trip = core
        .conversations()
        .create(Some("Island trip"), "")
        .await
        .unwrap();
    let file =
        serde_json::to_string(&core.conversations().export(&trip.id).await.unwrap()).unwrap();
    let mut titles = Vec::new();
    for _ in 0..3 {
        titles.push(core.conversations().import(&file).await.unwrap().title);
    }
    assert_eq!(
        titles,
        [
            "Island trip (imported)",
            "Island trip (imported 2)",
            "Island trip (imported 3)"
        ]
    );
    // Into a home without it, an import keeps its title.
    let other = tempfile::tempdir().unwrap();
    let elsewhere = core_in(other.path(), Arc::new(MemoryStore::new())).await;
    let kept = elsewhere.conversations().import(&file).await.unwrap();
    assert_eq!(kept.title, "Island trip");
    // A long title is cut to leave room for the mark.
    let long = "x".repeat(MAX_TITLE_CHARS);
    let long_one = core.conversations().create(Some(&long), "").await.unwrap();
    let file =
        serde_json::to_string(&core.conversations().export(&long_one.id).await.unwrap()).unwrap();
    let imported = core.conversations().import(&file).await.unwrap().title;
    assert!(imported.ends_with("x (imported)"), "{imported}");
    assert_eq!(imported.chars().count(), MAX_TITLE_CHARS);
}

/// A loopback server that answers every request with `status` and `body`, and records the
/// request heads it saw.
async fn answer_with(
    status: u16,
    body: &'static str,
) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 16 * 1024];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(reply.as_bytes()).await;
        }
    });
    (base, seen)
}

fn quick() -> crate::providers::HttpOptions {
    crate::providers::HttpOptions {
        connect_timeout: std::time::Duration::from_secs(2),
        read_timeout: std::time::Duration::from_secs(2),
        max_retries: 0,
        retry_base_delay: std::time::Duration::ZERO,
    }
}

#[tokio::test]
async fn test_connection_lists_the_models_with_the_key_read_from_the_keychain() {
    let (base, seen) = answer_with(
        200,
        r#"{"object":"list","data":[{"id":"zeta-1"},{"id":"alpha-2"}]}"#,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let core = quick_core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    core.providers()
        .add(NewProvider {
            base_url: Some(format!("{base}/v1")),
            ..provider("Local", "openai_compatible", Some("sk-local-123"))
        })
        .await
        .unwrap();

    let report = core.providers().test("Local").await.unwrap();
    assert!(report.ok, "{report:?}");
    let ids: Vec<_> = report.models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["alpha-2", "zeta-1"]);
    assert!(
        report.message.starts_with("Connected in "),
        "{}",
        report.message
    );
    assert!(
        report.message.ends_with(": 2 models."),
        "{}",
        report.message
    );
    let head = seen.lock().unwrap()[0].to_ascii_lowercase();
    assert!(head.starts_with("get /v1/models "), "{head}");
    assert!(
        head.contains("authorization: bearer sk-local-123"),
        "{head}"
    );
}

#[tokio::test]
async fn test_connection_says_exactly_what_failed() {
    let (base, _) = answer_with(401, r#"{"error":{"message":"Incorrect API key provided"}}"#).await;
    let dir = tempfile::tempdir().unwrap();
    let core = quick_core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    core.providers()
        .add(NewProvider {
            base_url: Some(base),
            ..provider("Hosted", "openai", Some("sk-wrong"))
        })
        .await
        .unwrap();
    let report = core.providers().test("Hosted").await.unwrap();
    assert!(!report.ok);
    assert_eq!(
        report.error_kind,
        Some(ConnectionFailure::Provider(ProviderFailure::Unauthorized))
    );
    assert_eq!(
        report.message,
        "The provider refused the API key: Incorrect API key provided"
    );

    // A hosted API with no key stored fails before any request, naming the fix.
    core.providers().delete_key("Hosted").await.unwrap();
    let report = core.providers().test("Hosted").await.unwrap();
    assert_eq!(
        report.error_kind,
        Some(ConnectionFailure::Provider(ProviderFailure::NoKey))
    );
    assert!(
        report.message.contains("Providers page"),
        "{}",
        report.message
    );

    // Nothing listening: a network error, not a hang.
    let (_closed, port) = crate::net::refused_port();
    core.providers()
        .update("Hosted", Some(&format!("http://127.0.0.1:{port}/v1")), None)
        .await
        .unwrap();
    core.providers()
        .set_key("Hosted", SecretString::from("sk-x"))
        .await
        .unwrap();
    let report = core.providers().test("Hosted").await.unwrap();
    assert_eq!(
        report.error_kind,
        Some(ConnectionFailure::Provider(ProviderFailure::Network)),
        "{report:?}"
    );

    assert!(matches!(
        core.providers().test("Nobody").await,
        Err(CoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn a_conversation_remembers_its_provider_and_model_and_refuses_an_unknown_provider() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    core.providers()
        .add(provider("Local", "ollama", None))
        .await
        .unwrap();
    let a = core.conversations().create(Some("a"), "").await.unwrap();
    let b = core.conversations().create(Some("b"), "").await.unwrap();
    let picked = core
        .conversations()
        .set_model(&a.id, Some(" Local "), Some(" llama3.2:3b "))
        .await
        .unwrap();
    assert_eq!(picked.provider.as_deref(), Some("Local"));
    assert_eq!(picked.model.as_deref(), Some("llama3.2:3b"));
    // Picking a model is not activity: b stays on top.
    let order: Vec<_> = core
        .conversations()
        .list()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(order, [b.id.clone(), a.id.clone()]);
    assert!(matches!(
        core.conversations()
            .set_model(&a.id, Some("Nobody"), Some("m"))
            .await,
        Err(CoreError::NotFound { .. })
    ));
    let cleared = core
        .conversations()
        .set_model(&a.id, None, None)
        .await
        .unwrap();
    assert_eq!((cleared.provider, cleared.model), (None, None));
}

#[tokio::test]
async fn a_local_server_that_answers_is_offered_and_a_silent_port_is_not() {
    let (ollama, _) = answer_with(
        200,
        r#"{"models":[{"name":"qwen3:4b","model":"qwen3:4b"},{"name":"llama3.2:3b"},{"name":"all-minilm:latest"},{"name":"bge-m3:567m"}]}"#,
    )
    .await;
    let (_closed, port) = crate::net::refused_port();
    let silent = format!("http://127.0.0.1:{port}/v1");
    // A port that answers, but not like the server we asked for, is not offered either.
    let (not_lm_studio, _) = answer_with(200, r#"<html>hello</html>"#).await;
    let found = super::connections::probe_local_servers([
        ("ollama", ollama.clone()),
        ("lm_studio", silent),
        ("lm_studio", format!("{not_lm_studio}/v1")),
    ])
    .await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].preset_id, "ollama");
    assert_eq!(found[0].label, "Ollama");
    assert_eq!(found[0].base_url, ollama);
    let models: Vec<_> = found[0].models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        models,
        [
            "all-minilm:latest",
            "bge-m3:567m",
            "llama3.2:3b",
            "qwen3:4b"
        ]
    );
    // An embedding model cannot chat: the one suggested is the first that can.
    assert_eq!(found[0].suggested_model.as_deref(), Some("llama3.2:3b"));
}

#[test]
fn the_system_prompt_is_the_conversations_then_its_projects_then_each_offered_servers_instructions()
{
    use crate::app::system_prompt;
    assert_eq!(system_prompt("", None, &[]), None);
    assert_eq!(system_prompt(" \n", None, &[]), None);
    assert_eq!(
        system_prompt("Be brief.\n", None, &[]).as_deref(),
        Some("Be brief.")
    );
    let servers = [
        (
            "git".to_owned(),
            "Use the repository path given.\n".to_owned(),
        ),
        ("quiet".to_owned(), "  ".to_owned()),
        ("time".to_owned(), "Times are in UTC.".to_owned()),
    ];
    assert_eq!(
        system_prompt("Be brief.", None, &servers).as_deref(),
        Some(
            "Be brief.\n\n## Instructions from the MCP server “git”\n\nUse the repository path given.\n\n\
             ## Instructions from the MCP server “time”\n\nTimes are in UTC."
        )
    );
    assert_eq!(
        system_prompt("", None, &servers[2..]).as_deref(),
        Some("## Instructions from the MCP server “time”\n\nTimes are in UTC.")
    );
    // A project's instructions come after the profile's prompt, before the servers'.
    assert_eq!(
        system_prompt(
            "Be brief.",
            Some("## Project “Bridge”\n\nSteel.".into()),
            &servers[2..]
        )
        .as_deref(),
        Some(
            "Be brief.\n\n## Project “Bridge”\n\nSteel.\n\n\
             ## Instructions from the MCP server “time”\n\nTimes are in UTC."
        )
    );
}

#[tokio::test]
async fn a_model_list_that_says_which_models_take_images_is_believed_until_the_person_says_otherwise(
) {
    // OpenRouter's list names each model's input kinds.
    let (base, _) = answer_with(
        200,
        r#"{"data": [
            {"id": "acme/seer-1", "architecture": {"input_modalities": ["text", "image"]}},
            {"id": "acme/scribe-1", "architecture": {"input_modalities": ["text"]}},
            {"id": "acme/plain-1"}
        ]}"#,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let core = quick_core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    core.providers()
        .add(NewProvider {
            base_url: Some(base),
            ..provider("Router", "openai_compatible", Some("sk-x"))
        })
        .await
        .unwrap();
    // Unknown families: neither is taken to take images before the list is read.
    for model in ["acme/seer-1", "acme/scribe-1"] {
        let media = core.model_media("Router", model).await.unwrap();
        assert!(media.images.is_none(), "{model}");
    }
    let models = core.providers().models("Router").await.unwrap();
    let said: Vec<Option<bool>> = models.iter().map(|m| m.takes_images).collect();
    assert_eq!(said, [None, Some(false), Some(true)]); // plain, scribe, seer (sorted)
    assert!(core
        .model_media("Router", "acme/seer-1")
        .await
        .unwrap()
        .images
        .is_some());
    assert!(core
        .model_media("Router", "acme/scribe-1")
        .await
        .unwrap()
        .images
        .is_none());
    // The person's word wins over the list's.
    core.set_model_takes_images("Router", "acme/seer-1", Some(false))
        .await
        .unwrap();
    assert!(core
        .model_media("Router", "acme/seer-1")
        .await
        .unwrap()
        .images
        .is_none());
}

#[tokio::test]
async fn a_models_window_comes_from_its_providers_list_and_the_persons_word_wins() {
    // OpenRouter says `context_length`, LM Studio `max_context_length`, Groq `context_window`.
    let (base, _) = answer_with(
        200,
        r#"{"data": [
            {"id": "acme/seer-1", "context_length": 200000},
            {"id": "local/qwen", "max_context_length": 32768},
            {"id": "groq/llama", "context_window": 131072},
            {"id": "acme/plain-1"}
        ]}"#,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let core = quick_core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    core.providers()
        .add(NewProvider {
            base_url: Some(base),
            ..provider("Router", "openai_compatible", Some("sk-x"))
        })
        .await
        .unwrap();
    assert_eq!(
        core.providers()
            .window("Router", "acme/seer-1")
            .await
            .unwrap(),
        None
    );
    core.providers().models("Router").await.unwrap();
    for (model, tokens) in [
        ("acme/seer-1", 200_000),
        ("local/qwen", 32_768),
        ("groq/llama", 131_072),
    ] {
        let window = core
            .providers()
            .window("Router", model)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (window.tokens, window.said_by),
            (tokens, crate::store::WindowSource::Provider),
            "{model}"
        );
    }
    assert_eq!(
        core.providers()
            .window("Router", "acme/plain-1")
            .await
            .unwrap(),
        None
    );
    let set = core
        .providers()
        .set_window("Router", "acme/seer-1", Some(100_000))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (set.tokens, set.said_by),
        (100_000, crate::store::WindowSource::Person)
    );
}

#[tokio::test]
async fn a_price_comes_from_the_provider_list_or_the_person_and_is_never_guessed() {
    // OpenRouter's list gives dollars per token; "-1" is a price it cannot say.
    let (base, _) = answer_with(
        200,
        r#"{"data": [
            {"id": "acme/seer-1", "pricing": {"prompt": "0.0000025", "completion": "0.00001", "input_cache_read": "0.00000125"}},
            {"id": "acme/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
            {"id": "acme/plain-1"}
        ]}"#,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let core = quick_core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    core.providers()
        .add(NewProvider {
            base_url: Some(base),
            ..provider("Router", "openai_compatible", Some("sk-x"))
        })
        .await
        .unwrap();
    assert_eq!(
        core.usage().price("Router", "acme/seer-1").await.unwrap(),
        None
    );
    core.providers().models("Router").await.unwrap();
    let listed = core
        .usage()
        .price("Router", "acme/seer-1")
        .await
        .unwrap()
        .unwrap();
    let from_list = crate::price::Price {
        input: 2_500_000,
        output: 10_000_000,
        cached_input: Some(1_250_000),
    };
    assert_eq!(listed.price, from_list);
    assert_eq!(listed.said_by, crate::store::PriceSource::Provider);
    assert_eq!(
        core.usage().price("Router", "acme/auto").await.unwrap(),
        None
    );
    assert_eq!(
        core.usage().price("Router", "acme/plain-1").await.unwrap(),
        None
    );

    // The person's word wins; forgotten, the list's counts again.
    let mine = crate::price::Price {
        input: 1_000_000,
        output: 2_000_000,
        cached_input: None,
    };
    let said = core
        .usage()
        .set_price("Router", "acme/seer-1", Some(mine))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (said.price, said.said_by),
        (mine, crate::store::PriceSource::Person)
    );
    core.providers().models("Router").await.unwrap();
    assert_eq!(
        core.usage()
            .price("Router", "acme/seer-1")
            .await
            .unwrap()
            .unwrap()
            .price,
        mine,
        "a list read again does not override the person"
    );
    let prices = core.usage().prices().await.unwrap();
    assert_eq!(prices.len(), 1);
    let forgotten = core
        .usage()
        .set_price("Router", "acme/seer-1", None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(forgotten.price, from_list);
    assert!(core
        .usage()
        .set_price("Nowhere", "m", Some(mine))
        .await
        .is_err());
}

#[tokio::test]
async fn a_draft_comes_back_with_its_conversation_until_it_is_emptied() {
    let dir = tempfile::tempdir().unwrap();
    let core = core_in(dir.path(), Arc::new(MemoryStore::new())).await;
    let conv = core
        .conversations()
        .create(Some("Notes"), "")
        .await
        .unwrap();
    assert_eq!(
        core.conversations().get(&conv.id).await.unwrap().draft,
        None
    );
    let draft = Draft {
        text: "Half a thought".into(),
        attachments: vec![],
        comparing: true,
        compared: vec![ComparedModel {
            provider: "Work".into(),
            model: Some("gpt-4o".into()),
        }],
    };
    core.save_draft(&conv.id, &draft).await.unwrap();
    assert_eq!(
        core.conversations().get(&conv.id).await.unwrap().draft,
        Some(draft.clone())
    );
    let listed = core.conversations().list().await.unwrap();
    assert_eq!(
        listed[0].updated_at, conv.updated_at,
        "writing a draft is not a change to the conversation"
    );

    // Too much for a draft: refused beside the box, what was kept stays.
    let long = Draft {
        text: "x".repeat(MAX_DRAFT_CHARS + 1),
        ..Draft::default()
    };
    let refused = core.save_draft(&conv.id, &long).await.unwrap_err();
    assert!(
        matches!(&refused, CoreError::Invalid(e) if e.field == "draft"),
        "{refused:?}"
    );
    let crowd = Draft {
        compared: vec![draft.compared[0].clone(); MAX_COMPARED + 1],
        ..draft.clone()
    };
    let refused = core.save_draft(&conv.id, &crowd).await.unwrap_err();
    assert!(
        matches!(&refused, CoreError::Invalid(e) if e.field == "draft" && e.message.contains("models")),
        "{refused:?}"
    );
    let heavy = Draft {
        attachments: vec![
            core.attachment_files().keep("a.txt", b"a").unwrap();
            crate::attachments::MAX_PER_MESSAGE + 1
        ],
        ..draft.clone()
    };
    let refused = core.save_draft(&conv.id, &heavy).await.unwrap_err();
    assert!(
        matches!(&refused, CoreError::Invalid(e) if e.field == "draft" && e.message.contains("files")),
        "{refused:?}"
    );
    assert_eq!(
        core.conversations().get(&conv.id).await.unwrap().draft,
        Some(draft)
    );

    // Its files' records are not the window's word: judged again from the kept bytes when
    // saved, and one no longer kept left out.
    let kept = core
        .attachment_files()
        .keep("notes.txt", b"plain words")
        .unwrap();
    let claimed = crate::attachments::Attachment {
        mime: "image/png".into(),
        size: 1,
        name: "dir/../notes.txt".into(),
        ..kept.clone()
    };
    let missing = crate::attachments::Attachment {
        sha256: "0".repeat(64),
        ..kept.clone()
    };
    let with_files = Draft {
        attachments: vec![claimed, missing],
        ..Draft::default()
    };
    core.save_draft(&conv.id, &with_files).await.unwrap();
    let read = core.draft(&conv.id).await.unwrap().unwrap();
    assert_eq!(read.attachments, [kept]);

    // Emptied (sent, or cleared by hand): nothing comes back.
    core.save_draft(&conv.id, &Draft::default()).await.unwrap();
    assert_eq!(
        core.conversations().get(&conv.id).await.unwrap().draft,
        None
    );
    assert!(matches!(
        core.save_draft("nowhere", &Draft::default()).await,
        Err(CoreError::Store(StoreError::NotFound { .. }))
    ));
}
