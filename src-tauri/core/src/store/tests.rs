//! Behaviour of the database a person would notice: nothing lost, nothing overwritten.

use std::time::Duration;

use super::*;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data").join("switchboard.db");
    (dir, path)
}

#[tokio::test]
async fn conversations_persist_across_reopening_in_wal_mode() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let created = store
        .create_conversation("Trip plans".into())
        .await
        .unwrap();
    drop(store);

    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let list = store.list_conversations().await.unwrap();
    assert_eq!(list, vec![created]);
    let mode: String = store
        .call(|c| Ok(c.pragma_query_value(None, "journal_mode", |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn conversations_are_listed_newest_activity_first() {
    let store = Store::open_in_memory().unwrap();
    let a = store.create_conversation("a".into()).await.unwrap();
    let b = store.create_conversation("b".into()).await.unwrap();
    let c = store.create_conversation("c".into()).await.unwrap();
    let ids: Vec<_> = store
        .list_conversations()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, vec![c.id.clone(), b.id.clone(), a.id.clone()]);

    // Renaming the oldest one is activity: it moves to the top.
    store
        .rename_conversation(a.id.clone(), "a2".into())
        .await
        .unwrap();
    let first = store.list_conversations().await.unwrap().remove(0);
    assert_eq!((first.id, first.title), (a.id, "a2".to_owned()));
}

#[tokio::test]
async fn deleting_a_conversation_removes_its_messages_tool_runs_and_toggles() {
    let store = Store::open_in_memory().unwrap();
    let conv = store.create_conversation("x".into()).await.unwrap();
    let msg = store
        .append_message(conv.id.clone(), NewMessage::text(Role::User, "hello"))
        .await
        .unwrap();
    let (cid, mid) = (conv.id.clone(), msg.id.clone());
    store
        .call(move |c| {
            c.execute(
                "INSERT INTO tool_runs (id, conversation_id, message_id, call_id, server, tool, arguments) \
                 VALUES ('r1', ?1, ?2, 'call_1', 'fs', 'read', '{}')",
                [&cid, &mid],
            )?;
            c.execute(
                "INSERT INTO conversation_tools (conversation_id, server, tool, enabled) VALUES (?1, 'fs', '', 1)",
                [&cid],
            )?;
            Ok(())
        })
        .await
        .unwrap();

    store.delete_conversation(conv.id.clone()).await.unwrap();
    let counts: (i64, i64, i64) = store
        .call(|c| {
            Ok(c.query_row(
                "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM tool_runs), \
                 (SELECT count(*) FROM conversation_tools)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?)
        })
        .await
        .unwrap();
    assert_eq!(counts, (0, 0, 0));
    assert!(matches!(
        store.delete_conversation(conv.id).await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn messages_keep_the_tool_calling_fields_in_order() {
    let store = Store::open_in_memory().unwrap();
    let conv = store.create_conversation("tools".into()).await.unwrap();
    let calls = serde_json::json!([{"id": "call_123", "type": "function",
        "function": {"name": "fs__list_directory", "arguments": "{\"path\":\"/docs\"}"}}]);
    let mut assistant = NewMessage::text(Role::Assistant, "");
    assistant.content = None;
    assistant.tool_calls = Some(calls.clone());
    assistant.finish_reason = Some("tool_calls".into());
    let mut tool = NewMessage::text(Role::Tool, "{\"files\":[\"README.md\"]}");
    tool.tool_call_id = Some("call_123".into());
    tool.name = Some("fs__list_directory".into());

    store
        .append_message(conv.id.clone(), NewMessage::text(Role::User, "ls /docs"))
        .await
        .unwrap();
    store
        .append_message(conv.id.clone(), assistant)
        .await
        .unwrap();
    store.append_message(conv.id.clone(), tool).await.unwrap();

    let messages = store.list_messages(conv.id).await.unwrap();
    let roles: Vec<_> = messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::Tool]);
    assert_eq!(messages[1].content, None);
    assert_eq!(messages[1].tool_calls.as_ref(), Some(&calls));
    assert_eq!(messages[2].tool_call_id.as_deref(), Some("call_123"));
    assert_eq!(messages[2].name.as_deref(), Some("fs__list_directory"));
}

#[tokio::test]
async fn opening_the_database_alone_leaves_a_streaming_answer_alone() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = store.create_conversation("c".into()).await.unwrap();
    let mut live = NewMessage::text(Role::Assistant, "still stream");
    live.status = MessageStatus::Streaming;
    store.append_message(conv.id.clone(), live).await.unwrap();
    // A second process (the command line) opens the same file while the window streams.
    let other = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let messages = other.list_messages(conv.id).await.unwrap();
    assert_eq!(messages[0].status, MessageStatus::Streaming);
}

#[tokio::test]
async fn an_answer_left_streaming_by_a_crash_is_marked_interrupted_at_next_open() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = store.create_conversation("c".into()).await.unwrap();
    let mut partial = NewMessage::text(Role::Assistant, "half an ans");
    partial.status = MessageStatus::Streaming;
    store
        .append_message(conv.id.clone(), partial)
        .await
        .unwrap();
    drop(store);

    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    assert_eq!(store.mark_unfinished_as_interrupted().await.unwrap(), 1);
    let messages = store.list_messages(conv.id).await.unwrap();
    assert_eq!(messages[0].status, MessageStatus::Interrupted);
    assert_eq!(messages[0].content.as_deref(), Some("half an ans"));
}

#[test]
fn a_file_that_is_not_a_database_is_reported_and_left_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let junk = b"this is not sqlite, it is somebody's notes\n".repeat(200);
    std::fs::write(&path, &junk).unwrap();

    let err = Store::open(&path, DEFAULT_BUSY_TIMEOUT)
        .err()
        .expect("must refuse");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("left untouched"));
    assert_eq!(std::fs::read(&path).unwrap(), junk);
}

#[test]
fn a_database_from_a_newer_version_is_refused_and_left_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path, DEFAULT_BUSY_TIMEOUT)
        .err()
        .expect("must refuse");
    assert!(
        matches!(err, StoreError::TooNew { found: 99, .. }),
        "{err:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_database_locked_by_another_program_is_reported_as_locked() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let holder = Connection::open(&path).unwrap();
    holder
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
        .unwrap();

    let err = Store::open(&path, Duration::from_millis(200))
        .err()
        .expect("must fail");
    assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
    holder.execute_batch("COMMIT").unwrap();
}

#[tokio::test]
async fn a_provider_name_is_unique_ignoring_case() {
    let store = Store::open_in_memory().unwrap();
    let first = store
        .insert_provider(
            "OpenAI".into(),
            "openai".into(),
            "https://x.test/v1".into(),
            None,
        )
        .await
        .unwrap();
    assert!(first.is_some());
    let second = store
        .insert_provider(
            "openai".into(),
            "openai".into(),
            "https://x.test/v1".into(),
            None,
        )
        .await
        .unwrap();
    assert!(second.is_none());
    assert!(store
        .find_provider("OPENAI".into())
        .await
        .unwrap()
        .is_some());
}

#[tokio::test]
async fn a_servers_switch_sets_all_its_tools_and_new_conversations_start_with_the_default_set() {
    let store = Store::open_in_memory().unwrap();
    let conv = store.create_conversation("x".into()).await.unwrap();
    let set = |server: &str, tool: Option<&str>, enabled: bool| ToolToggle {
        server: server.into(),
        tool: tool.map(Into::into),
        enabled,
    };
    for toggle in [
        set("fs", Some("write"), false),
        set("fs", Some("read"), true),
        set("git", Some("commit"), false),
    ] {
        store
            .set_tool_toggle(conv.id.clone(), toggle)
            .await
            .unwrap();
    }
    store
        .set_tool_toggle(conv.id.clone(), set("fs", None, false))
        .await
        .unwrap();
    let mut toggles = store.tool_toggles(conv.id.clone()).await.unwrap();
    toggles.sort_by(|a, b| (&a.server, &a.tool).cmp(&(&b.server, &b.tool)));
    assert_eq!(
        toggles,
        vec![set("fs", None, false), set("git", Some("commit"), false)],
        "the server's switch replaced its tools' own; another server's stayed"
    );

    let before = store.create_conversation("before".into()).await.unwrap();
    assert!(store.tool_toggles(before.id).await.unwrap().is_empty());
    store.set_default_tools_from(conv.id.clone()).await.unwrap();
    assert_eq!(store.default_tools().await.unwrap(), toggles);
    let after = store.create_conversation("after".into()).await.unwrap();
    let mut inherited = store.tool_toggles(after.id.clone()).await.unwrap();
    inherited.sort_by(|a, b| (&a.server, &a.tool).cmp(&(&b.server, &b.tool)));
    assert_eq!(inherited, toggles);
    // Its switches are its own from then on.
    store
        .set_tool_toggle(after.id.clone(), set("fs", None, true))
        .await
        .unwrap();
    assert_eq!(store.default_tools().await.unwrap(), toggles);
    assert!(matches!(
        store.set_default_tools_from("nope".into()).await,
        Err(StoreError::NotFound { .. })
    ));
}
