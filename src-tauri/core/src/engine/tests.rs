//! What a person notices when using conversations and providers through the core.

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};

use super::*;
use crate::secrets::MemoryStore;

async fn core_in(dir: &std::path::Path, secrets: Arc<dyn SecretStore>) -> Core {
    Core::open(AppPaths::under_home(dir.to_path_buf()), secrets).await
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
        .create_conversation(Some(&"t".repeat(100_000)))
        .await
        .unwrap();
    assert_eq!(conv.title.chars().count(), MAX_TITLE_CHARS);
    let renamed = core
        .rename_conversation(&conv.id, &"r".repeat(100_000))
        .await
        .unwrap();
    assert_eq!(renamed.title.chars().count(), MAX_TITLE_CHARS);
    assert!(std::fs::metadata(core.database_path()).unwrap().len() < 100_000);
}

#[tokio::test]
async fn a_blank_title_is_refused_on_rename_and_defaulted_on_create() {
    let core = Core::with_store(
        AppPaths::under_home("/nonexistent".into()),
        Store::open_in_memory().unwrap(),
        Arc::new(MemoryStore::new()),
    );
    let conv = core.create_conversation(Some("   ")).await.unwrap();
    assert_eq!(conv.title, DEFAULT_TITLE);
    let err = core
        .rename_conversation(&conv.id, " \n ")
        .await
        .unwrap_err();
    assert_eq!((err.kind(), err.field()), ("invalid_input", Some("title")));
}

#[tokio::test]
async fn a_hundred_concurrent_creates_and_deletes_leave_a_consistent_list() {
    let core = Arc::new(Core::with_store(
        AppPaths::under_home("/nonexistent".into()),
        Store::open_in_memory().unwrap(),
        Arc::new(MemoryStore::new()),
    ));
    let mut tasks = Vec::new();
    for i in 0..100 {
        let core = Arc::clone(&core);
        tasks.push(tokio::spawn(async move {
            let c = core
                .create_conversation(Some(&format!("c{i}")))
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
    let listed = core.list_conversations().await.unwrap();
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
        .add_provider(provider("OpenAI", "openai", Some("sk-test-SECRET-4242")))
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
        .add_provider(provider("OpenAI", "openai", Some("sk-test-nothere")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "keychain");
    assert!(err.to_string().contains("nothing was saved"));
    assert!(core.list_providers().await.unwrap().is_empty());
    assert!(!core.keychain_status().await.available);
    assert!(files_containing(dir.path(), "sk-test-nothere").is_empty());
}

#[tokio::test]
async fn bad_provider_input_is_refused_naming_the_field() {
    let core = Core::with_store(
        AppPaths::under_home("/nonexistent".into()),
        Store::open_in_memory().unwrap(),
        Arc::new(MemoryStore::new()),
    );
    let err = core
        .add_provider(provider("  ", "openai", None))
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("name"));
    let mut bad_url = provider("X", "openai", None);
    bad_url.base_url = Some("htp:/nope".into());
    assert_eq!(
        core.add_provider(bad_url).await.unwrap_err().field(),
        Some("base_url")
    );
    let err = core
        .add_provider(provider("X", "gopher", None))
        .await
        .unwrap_err();
    assert_eq!(err.field(), Some("kind"));

    core.add_provider(provider("Local", "ollama", None))
        .await
        .unwrap();
    let err = core
        .add_provider(provider("local", "ollama", None))
        .await
        .unwrap_err();
    assert_eq!((err.kind(), err.field()), ("conflict", Some("name")));
}

#[tokio::test]
async fn a_key_can_be_replaced_and_deleted_and_goes_with_its_provider() {
    let secrets = Arc::new(MemoryStore::new());
    let core = Core::with_store(
        AppPaths::under_home("/nonexistent".into()),
        Store::open_in_memory().unwrap(),
        secrets.clone(),
    );
    core.add_provider(provider("Claude", "anthropic", None))
        .await
        .unwrap();
    assert!(!core.list_providers().await.unwrap()[0].has_key);

    core.set_provider_key("claude", SecretString::from("sk-ant-1"))
        .await
        .unwrap();
    core.set_provider_key("Claude", SecretString::from("sk-ant-2"))
        .await
        .unwrap();
    assert!(core.list_providers().await.unwrap()[0].has_key);
    assert_eq!(
        core.provider_key("Claude")
            .await
            .unwrap()
            .unwrap()
            .expose_secret(),
        "sk-ant-2"
    );

    assert!(!core.delete_provider_key("Claude").await.unwrap().has_key);
    core.set_provider_key("Claude", SecretString::from("sk-ant-3"))
        .await
        .unwrap();
    core.remove_provider("Claude").await.unwrap();
    assert!(core.list_providers().await.unwrap().is_empty());
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

    let core = Core::open(paths.clone(), Arc::new(MemoryStore::new())).await;
    let problem = core.database_error().expect("must report");
    assert_eq!(problem.reason, "corrupt");
    let err = core.create_conversation(Some("x")).await.unwrap_err();
    assert_eq!(err.kind(), "database");
    assert_eq!(std::fs::read(paths.database_file()).unwrap(), before);
}
