//! Behaviour of the database a person would notice: nothing lost, nothing overwritten.

use std::time::Duration;

use super::*;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data").join("switchboard.db");
    (dir, path)
}

/// The ids of the conversations listed, in the list's order.
async fn listed_ids(store: &Store) -> Vec<String> {
    let listed = store.list_conversations().await.unwrap();
    listed.into_iter().map(|c| c.id).collect()
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
    let ids = listed_ids(&store).await;
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
async fn a_conversation_nobody_used_is_not_kept_and_one_with_anything_of_the_persons_is() {
    let store = Store::open_in_memory().unwrap();
    let mut made = Vec::new();
    for _ in 0..6 {
        let new = store
            .create_conversation_with("New conversation".into(), String::new(), false)
            .await;
        made.push(new.unwrap().id);
    }
    let [empty, asked, drafted, named, prompted, left] = made.try_into().unwrap();
    store
        .append_message(asked.clone(), NewMessage::text(Role::User, "hello"))
        .await
        .unwrap();
    store
        .save_draft(drafted.clone(), Some(r#"{"text":"half a que"}"#.into()))
        .await
        .unwrap();
    store
        .rename_conversation(named.clone(), "Mine".into())
        .await
        .unwrap();
    store
        .set_system_prompt(prompted.clone(), "Answer in French.".into())
        .await
        .unwrap();

    assert!(store.discard_if_unused(empty.clone()).await.unwrap());
    assert!(
        !store.discard_if_unused(empty).await.unwrap(),
        "gone already: not an error"
    );
    for kept in [&asked, &drafted, &named, &prompted] {
        assert!(
            !store.discard_if_unused(kept.clone()).await.unwrap(),
            "{kept} was used"
        );
    }
    // A window that closed left `left` open and unused: the next window's start removes it.
    assert_eq!(store.discard_unused().await.unwrap(), 1);
    let ids = listed_ids(&store).await;
    assert!(!ids.contains(&left));
    assert_eq!(ids.len(), 4);

    // One given its name when it was made is the person's from the start.
    let named = store.create_conversation("Trip".into()).await.unwrap().id;
    assert!(!store.discard_if_unused(named).await.unwrap());
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
    let calls = vec![StoredCall {
        id: "call_123".into(),
        name: "fs__list_directory".into(),
        arguments: "{\"path\":\"/docs\"}".into(),
    }];
    let mut assistant = NewMessage::text(Role::Assistant, "");
    assistant.content = None;
    assistant.tool_calls = Some(calls.clone());
    assistant.finish_reason = Some(Finish::ToolCalls);
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
    assert_eq!(store.recover_unfinished().await.unwrap(), 1);
    let messages = store.list_messages(conv.id).await.unwrap();
    assert_eq!(messages[0].status, MessageStatus::Interrupted);
    assert_eq!(messages[0].content.as_deref(), Some("half an ans"));
}

/// Lets `store`'s process die as kill -9 does: its writer lock goes, its file stays.
fn kill(store: &mut Store) {
    let writer = std::mem::replace(&mut store.writer, Arc::new(writers::Writer::private()));
    Arc::try_unwrap(writer).unwrap().die();
}

#[tokio::test]
async fn an_answer_cut_off_by_a_killed_process_is_interrupted_by_whoever_opens_next_and_a_live_one_is_not(
) {
    let (_dir, path) = temp_db();
    // The command line streams an answer; the window streams another.
    let mut cli = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let window = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = cli.create_conversation("c".into()).await.unwrap();
    let streaming = |text: &str| {
        let mut m = NewMessage::text(Role::Assistant, text);
        m.status = MessageStatus::Streaming;
        m
    };
    let cut = cli
        .append_message(conv.id.clone(), streaming("the CLI's hal"))
        .await
        .unwrap();
    let live = window
        .append_message(conv.id.clone(), streaming("the window's"))
        .await
        .unwrap();
    // A third process opens the home while both live: nothing is touched.
    let next = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    assert_eq!(next.recover_unfinished().await.unwrap(), 0);
    // kill -9 of the command line: the next to open marks its answer, not the window's.
    kill(&mut cli);
    assert_eq!(next.recover_unfinished().await.unwrap(), 1);
    let status = |id: &str, all: &[Message]| all.iter().find(|m| m.id == id).unwrap().status;
    let all = next.list_messages(conv.id.clone()).await.unwrap();
    assert_eq!(status(&cut.id, &all), MessageStatus::Interrupted);
    assert_eq!(status(&live.id, &all), MessageStatus::Streaming);
    // The writer's file went with it; the live ones stay.
    let files = std::fs::read_dir(path.parent().unwrap().join("writers"))
        .unwrap()
        .count();
    assert_eq!(files, 2, "the window's and the third process's");
    // A process killed while it wrote nothing leaves a file, swept by the next recovery.
    let mut idle = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    kill(&mut idle);
    next.recover_unfinished().await.unwrap();
    drop(window);
    drop(next);
    let files = std::fs::read_dir(path.parent().unwrap().join("writers"))
        .unwrap()
        .count();
    assert_eq!(files, 0, "a process that ends well removes its file");
}

#[tokio::test]
async fn a_call_whose_task_ran_when_its_process_was_killed_is_followed_again_and_its_late_result_kept_once(
) {
    let (_dir, path) = temp_db();
    let mut cli = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = cli.create_conversation("c".into()).await.unwrap();
    let mut answer = NewMessage::text(Role::Assistant, "");
    answer.status = MessageStatus::Streaming;
    answer.tool_calls = Some(vec![
        StoredCall {
            id: "call_task".into(),
            name: "tasks__report".into(),
            arguments: "{}".into(),
        },
        StoredCall {
            id: "call_plain".into(),
            name: "tasks__other".into(),
            arguments: "{}".into(),
        },
    ]);
    let answer = cli.append_message(conv.id.clone(), answer).await.unwrap();
    for call in ["call_task", "call_plain"] {
        let mut run = a_call(&conv.id, &answer.id, call);
        run.id = ToolRun::id_for(&answer.id, call);
        run.finished_at = None;
        run.result = None;
        cli.record_tool_started(run).await.unwrap();
    }
    let task_run = ToolRun::id_for(&answer.id, "call_task");
    cli.record_call_task(task_run.clone(), "task-7".into())
        .await
        .unwrap();
    // Nothing to follow while its run follows it.
    assert!(cli.background_tasks().await.unwrap().is_empty());
    kill(&mut cli);

    let next = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    next.recover_unfinished().await.unwrap();
    let open = next.background_tasks().await.unwrap();
    assert_eq!(open.len(), 1, "only the call that ran as a task");
    assert_eq!(
        open[0].task,
        Some(CallTask {
            id: "task-7".into(),
            state: TaskState::Background
        })
    );
    let all = next.list_messages(conv.id.clone()).await.unwrap();
    let result_of = |call: &str| {
        all.iter()
            .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(call))
            .unwrap()
            .clone()
    };
    assert_eq!(
        result_of("call_task").content.as_deref(),
        Some(TASK_CUT_OFF)
    );
    assert!(!result_of("call_task").is_error);
    assert_eq!(
        result_of("call_plain").content.as_deref(),
        Some(MAY_HAVE_RUN)
    );

    let end = TaskEnd {
        state: TaskState::Completed,
        result: r#"{"content":[{"type":"text","text":"report on tides"}]}"#.into(),
        for_model: "report on tides".into(),
        is_error: false,
        rich: false,
    };
    let late = next
        .end_background_task(task_run.clone(), end.clone())
        .await
        .unwrap()
        .expect("a late result");
    assert_eq!(late.role, Role::System);
    assert_eq!(late.name.as_deref(), Some(LATE_RESULT));
    assert_eq!(
        late_result_call(&late),
        Some((answer.id.as_str(), "call_task"))
    );
    // A page that ends before the late result (its call's page, scrolled back to) brings it.
    let newest = next.message_page(conv.id.clone(), None, 1).await.unwrap();
    assert_eq!(newest.messages.len(), 1);
    let page = next
        .message_page(conv.id.clone(), newest.older, 10)
        .await
        .unwrap();
    assert_eq!(page.messages.first().unwrap().id, answer.id);
    assert_eq!(page.messages.last().unwrap().id, late.id);
    assert_eq!(page.messages.iter().filter(|m| m.id == late.id).count(), 1);
    // Imported, the late result names its call by the answer's new id.
    let exported = next.export_conversation(conv.id.clone()).await.unwrap();
    let imported = next.import_conversation(exported).await.unwrap();
    let copy = next.list_messages(imported.id.clone()).await.unwrap();
    let new_answer = copy.iter().find(|m| m.role == Role::Assistant).unwrap();
    let new_late = copy
        .iter()
        .find(|m| m.name.as_deref() == Some(LATE_RESULT))
        .unwrap();
    assert_ne!(new_answer.id, answer.id);
    assert_eq!(
        late_result_call(new_late),
        Some((new_answer.id.as_str(), "call_task"))
    );
    // A second follower (the window and `tasks follow` both) keeps nothing more.
    assert!(next
        .end_background_task(task_run.clone(), end)
        .await
        .unwrap()
        .is_none());
    assert!(next.background_tasks().await.unwrap().is_empty());
    let listed = next.recent_tasks(10).await.unwrap();
    assert_eq!(listed[0].task.as_ref().unwrap().state, TaskState::Completed);
    // The call's record, written again as a run's would be, keeps its task.
    let mut again = a_call(&conv.id, &answer.id, "call_task");
    again.id = task_run.clone();
    next.record_tool_call(again, NewMessage::text(Role::Tool, "x"))
        .await
        .unwrap();
    let kept = next.recent_tasks(10).await.unwrap();
    assert_eq!(kept[0].task.as_ref().unwrap().id, "task-7");

    // A late result larger than the database keeps goes to a file, as a run's does.
    let mut big = a_call(&conv.id, &answer.id, "call_plain");
    big.id = ToolRun::id_for(&answer.id, "call_plain");
    next.record_tool_started(big.clone()).await.unwrap();
    next.record_call_task(big.id.clone(), "task-8".into())
        .await
        .unwrap();
    next.send_task_to_background(big.id.clone()).await.unwrap();
    let whole = "z".repeat(tool_loop::MAX_STORED_RESULT + 1);
    next.end_background_task(
        big.id.clone(),
        TaskEnd {
            state: TaskState::Completed,
            result: whole.clone(),
            for_model: "z".repeat(100),
            is_error: false,
            rich: false,
        },
    )
    .await
    .unwrap()
    .expect("a late result");
    let file = path
        .parent()
        .unwrap()
        .join(format!("results/{}.json", big.id));
    assert_eq!(std::fs::read_to_string(file).unwrap().len(), whole.len());
}

/// A task's late result belongs with its call: deleting a later turn it landed in leaves it in
/// the conversation; deleting its call's turn deletes it wherever it landed.
/// The window hears only of late results another process kept: not its own, not an imported
/// one (no writer), and none dated ahead of now (which would move it past all to come).
#[tokio::test]
async fn others_late_results_leave_out_own_imported_and_future_ones() {
    let store = Store::open_in_memory().unwrap();
    let conv = store.create_conversation("c".into()).await.unwrap();
    let own = store.writer.id().to_owned();
    let now = now_ms();
    let mut ids = Vec::new();
    for (writer, at) in [
        (Some("another".to_owned()), now),
        (None, now),
        (Some("another".to_owned()), now + 3_600_000),
        (Some(own), now),
    ] {
        let kept = store
            .append_message(conv.id.clone(), NewMessage::text(Role::User, "late"))
            .await
            .unwrap();
        let id = kept.id.clone();
        store
            .call(move |conn| {
                conn.execute(
                    "UPDATE messages SET name = ?1, role = 'system', writer = ?2, created_at = ?3 \
                     WHERE id = ?4",
                    rusqlite::params![LATE_RESULT, writer, at, id],
                )?;
                Ok(())
            })
            .await
            .unwrap();
        ids.push(kept.id);
    }
    let found = store.late_results_of_others(now - 1_000).await.unwrap();
    assert_eq!(found, [(ids[0].clone(), conv.id.clone(), now)]);
}

#[tokio::test]
async fn a_late_result_stays_with_its_call_when_a_later_turn_goes() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = store.create_conversation("c".into()).await.unwrap();
    let say = |role: Role, text: &str| {
        let (store, id, text) = (&store, conv.id.clone(), text.to_owned());
        async move {
            store
                .append_message(id, NewMessage::text(role, &text))
                .await
                .unwrap()
        }
    };
    say(Role::User, "first").await;
    let mut asked = NewMessage::text(Role::Assistant, "");
    asked.tool_calls = Some(vec![StoredCall {
        id: "call_task".into(),
        name: "tasks__report".into(),
        arguments: "{}".into(),
    }]);
    let answer = store.append_message(conv.id.clone(), asked).await.unwrap();
    let mut run = a_call(&conv.id, &answer.id, "call_task");
    run.id = ToolRun::id_for(&answer.id, "call_task");
    store.record_tool_started(run.clone()).await.unwrap();
    store
        .record_call_task(run.id.clone(), "task-1".into())
        .await
        .unwrap();
    store.send_task_to_background(run.id.clone()).await.unwrap();
    let second = say(Role::User, "second").await;
    say(Role::Assistant, "second answer").await;
    // A message with no name and no call (NULL in both) goes with the tail like any other.
    let note = say(Role::System, "a note").await;
    let late = store
        .end_background_task(
            run.id.clone(),
            TaskEnd::words(TaskState::Completed, "report on tides".into()),
        )
        .await
        .unwrap()
        .expect("a late result");
    let ids = |all: Vec<Message>| all.into_iter().map(|m| m.id).collect::<Vec<_>>();

    // In a copy (import remaps the late result's call), the first turn deleted: its call's late
    // result goes with it, though it landed in the second turn.
    let exported = store.export_conversation(conv.id.clone()).await.unwrap();
    let copy = store.import_conversation(exported).await.unwrap();
    let copied = store.list_messages(copy.id.clone()).await.unwrap();
    let copied_late = copied
        .iter()
        .find(|m| m.name.as_deref() == Some(LATE_RESULT))
        .unwrap()
        .id
        .clone();
    let deleted = store
        .delete_turn(copy.id.clone(), copied[0].id.clone())
        .await
        .unwrap();
    assert!(deleted.contains(&copied_late), "{deleted:?}");
    let left: Vec<Option<String>> = store
        .list_messages(copy.id.clone())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(
        left,
        [
            Some("second".into()),
            Some("second answer".into()),
            Some("a note".into())
        ]
    );

    // The second turn deleted: the late result of the first turn's call stays.
    store
        .delete_turn(conv.id.clone(), second.id.clone())
        .await
        .unwrap();
    let shown = ids(store.list_messages(conv.id.clone()).await.unwrap());
    assert!(shown.contains(&late.id), "{shown:?}");
    assert!(
        !shown.contains(&second.id) && !shown.contains(&note.id),
        "{shown:?}"
    );
    let third = say(Role::User, "third").await;
    say(Role::Assistant, "third answer").await;

    // Asked again, an answer's tail is set aside whole, a late result in it too (a branch keeps
    // its messages' numbers).
    let all = store.list_messages(conv.id.clone()).await.unwrap();
    assert_eq!(
        all.last().map(|m| m.content.as_deref()),
        Some(Some("third answer"))
    );
    assert!(all.iter().any(|m| m.id == third.id));
    store
        .branch_off(conv.id.clone(), all[1].id.clone())
        .await
        .unwrap();
    assert_eq!(
        ids(store.list_messages(conv.id.clone()).await.unwrap()),
        vec![all[0].id.clone()]
    );
}

#[tokio::test]
async fn a_result_larger_than_the_database_keeps_goes_to_a_file_and_goes_with_its_conversation() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = store.create_conversation("c".into()).await.unwrap();
    let answer = store
        .append_message(conv.id.clone(), NewMessage::text(Role::Assistant, ""))
        .await
        .unwrap();
    let whole = format!(
        "{{\"content\": [{{\"type\": \"text\", \"text\": \"{}\"}}]}}",
        "y".repeat(tool_loop::MAX_STORED_RESULT + 1)
    );
    let mut run = a_call(&conv.id, &answer.id, "call_1");
    run.result = Some(whole.clone());
    let mut message = NewMessage::text(Role::Tool, "y".repeat(100));
    message.tool_call_id = Some("call_1".into());
    store.record_tool_call(run.clone(), message).await.unwrap();

    let kept = store.list_tool_runs(conv.id.clone()).await.unwrap()[0]
        .result
        .clone()
        .unwrap();
    assert!(
        kept.len() < 1_000,
        "the database keeps a note, not the result"
    );
    let note: serde_json::Value = serde_json::from_str(&kept).unwrap();
    assert_eq!(note["bytes"], whole.len());
    let file = path.parent().unwrap().join(note["file"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), whole);

    store.delete_conversation(conv.id.clone()).await.unwrap();
    assert!(!file.exists(), "the file went with its conversation");
}

#[tokio::test]
async fn a_draft_is_kept_until_emptied_keeps_its_files_and_goes_with_its_conversation() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let files =
        crate::attachments::AttachmentFiles::new(path.parent().unwrap().join("attachments"));
    let drafted = files.keep("notes.txt", b"half done").unwrap();
    // Kept long ago: only a name keeps it.
    std::fs::File::options()
        .write(true)
        .open(files.dir().join(&drafted.sha256))
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(7200))
        .unwrap();
    let one = store.create_conversation("one".into()).await.unwrap();
    let other = store.create_conversation("other".into()).await.unwrap();
    assert_eq!(store.draft(one.id.clone()).await.unwrap(), None);
    let draft = serde_json::json!({
        "text": "half", "attachments": [drafted], "comparing": false, "compared": []
    })
    .to_string();
    store
        .save_draft(one.id.clone(), Some("{\"text\": \"first\"}".into()))
        .await
        .unwrap();
    store
        .save_draft(one.id.clone(), Some(draft.clone()))
        .await
        .unwrap();
    assert_eq!(
        store.draft(one.id.clone()).await.unwrap(),
        Some(draft.clone())
    );

    // Files are swept when a conversation goes: the draft's file stays.
    store.delete_conversation(other.id).await.unwrap();
    assert!(files.read(&drafted.sha256).is_ok(), "named by a draft");

    // Emptied: forgotten. Kept again, then its conversation deleted: the draft and its file go.
    store.save_draft(one.id.clone(), None).await.unwrap();
    assert_eq!(store.draft(one.id.clone()).await.unwrap(), None);
    store.save_draft(one.id.clone(), Some(draft)).await.unwrap();
    store.delete_conversation(one.id.clone()).await.unwrap();
    assert!(files.read(&drafted.sha256).is_err(), "named by nothing now");
    let rows: i64 = store
        .call(|c| Ok(c.query_row("SELECT COUNT(*) FROM drafts", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(rows, 0);
    assert!(matches!(
        store.save_draft(one.id, Some("{}".into())).await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn an_attached_file_goes_when_no_message_names_it_any_more() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let files =
        crate::attachments::AttachmentFiles::new(path.parent().unwrap().join("attachments"));
    let shared = files.keep("shared.txt", b"in both").unwrap();
    let own = files.keep("own.txt", b"in one").unwrap();
    let waiting = files.keep("waiting.txt", b"in a composer").unwrap();
    // A file a tool produced, of a kind a person cannot attach.
    let sound = files
        .keep_produced(
            "beep.wav",
            Some("audio/wav; rate=8000"),
            b"RIFF\x24\0\0\0WAVEfmt ",
        )
        .unwrap();
    assert_eq!(
        (sound.kind, sound.mime.as_str()),
        (crate::attachments::AttachmentKind::Other, "audio/wav")
    );
    // Kept long ago, except the one waiting in a composer.
    for a in [&shared, &own, &sound] {
        std::fs::File::options()
            .write(true)
            .open(files.dir().join(&a.sha256))
            .unwrap()
            .set_modified(std::time::SystemTime::now() - Duration::from_secs(7200))
            .unwrap();
    }
    let with = |files: Vec<crate::attachments::Attachment>| NewMessage {
        attachments: files,
        ..NewMessage::text(Role::User, "see attached")
    };
    let one = store.create_conversation("one".into()).await.unwrap();
    let two = store.create_conversation("two".into()).await.unwrap();
    let saved = store
        .append_message(
            one.id.clone(),
            with(vec![shared.clone(), own.clone(), sound.clone()]),
        )
        .await
        .unwrap();
    assert_eq!(
        saved.attachments,
        [shared.clone(), own.clone(), sound.clone()]
    );
    store
        .append_message(two.id.clone(), with(vec![shared.clone()]))
        .await
        .unwrap();

    // Exported with its bytes, imported as what they are (the name kept, the kind judged again).
    let exported = store.export_conversation(one.id.clone()).await.unwrap();
    let json = serde_json::to_string(&exported).unwrap();
    assert!(
        json.contains(r#""name":"own.txt","mime":"text/plain","size":6,"data":"aW4gb25l""#),
        "{json}"
    );
    assert!(super::transfer::to_markdown(&exported)
        .contains("- Attached: own.txt (text/plain, 6 bytes)"));
    let back: super::transfer::ConversationExport = serde_json::from_str(&json).unwrap();
    let imported = store.import_conversation(back).await.unwrap();
    let copy = store.list_messages(imported.id.clone()).await.unwrap();
    assert_eq!(
        copy[0].attachments,
        [shared.clone(), own.clone(), sound.clone()]
    );
    store.delete_conversation(imported.id).await.unwrap();

    store.delete_conversation(one.id).await.unwrap();
    assert!(files.read(&own.sha256).is_err(), "named by no message");
    assert!(files.read(&sound.sha256).is_err(), "named by no message");
    assert!(files.read(&shared.sha256).is_ok(), "still named by “two”");
    assert!(files.read(&waiting.sha256).is_ok(), "kept a moment ago");
    let question = store.list_messages(two.id.clone()).await.unwrap()[0]
        .id
        .clone();
    store.delete_turn(two.id, question).await.unwrap();
    assert!(files.read(&shared.sha256).is_err());
}

#[tokio::test]
async fn a_call_started_by_a_killed_process_is_answered_that_it_may_have_run() {
    let (_dir, path) = temp_db();
    let mut cli = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = cli.create_conversation("c".into()).await.unwrap();
    let mut answer = NewMessage::text(Role::Assistant, "");
    answer.tool_calls = Some(StoredCall::read_all(&serde_json::json!([
        {"id": "call_1", "name": "files__delete", "arguments": "{\"path\": \"/tmp/a\"}"}
    ])));
    answer.finish_reason = Some(Finish::ToolCalls);
    let answer = cli.append_message(conv.id.clone(), answer).await.unwrap();
    let mut started = a_call(&conv.id, &answer.id, "call_1");
    started.id = ToolRun::id_for(&answer.id, "call_1");
    started.finished_at = None;
    started.result = None;
    cli.record_tool_started(started).await.unwrap();

    // While the command line lives, the call is its own.
    let next = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    assert_eq!(next.recover_unfinished().await.unwrap(), 0);
    // kill -9 mid-call: the next to open answers the call for the model.
    kill(&mut cli);
    assert_eq!(next.recover_unfinished().await.unwrap(), 1);
    let all = next.list_messages(conv.id.clone()).await.unwrap();
    let result = all.last().unwrap();
    assert_eq!(
        (result.role, result.tool_call_id.as_deref(), result.is_error),
        (Role::Tool, Some("call_1"), true)
    );
    assert_eq!(result.content.as_deref(), Some(MAY_HAVE_RUN));
    let runs = next.list_tool_runs(conv.id.clone()).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert!(runs[0].finished_at.is_some() && runs[0].is_error);
    assert_eq!(next.recover_unfinished().await.unwrap(), 0, "answered once");
    // The audit record has the call, as cut off: no duration, no result.
    let audit = next.audit(audit::AuditFilter::default()).await.unwrap();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].arguments, runs[0].arguments);
    assert!(audit[0].decided_by.ends_with(audit::CUT_OFF), "{audit:?}");
    assert!(
        audit[0].is_error && audit[0].duration_ms.is_none() && audit[0].result_sha256.is_none()
    );
}

#[tokio::test]
async fn an_apps_call_cut_off_is_recorded_without_a_message_for_the_model() {
    let (_dir, path) = temp_db();
    let mut window = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = window.create_conversation("c".into()).await.unwrap();
    let answer = window
        .append_message(conv.id.clone(), NewMessage::text(Role::Assistant, "done"))
        .await
        .unwrap();
    let mut started = a_call(&conv.id, &answer.id, "app-1");
    started.id = ToolRun::id_for(&answer.id, "app-1");
    started.asked_by = Some(crate::store::asked_by_app("Shop", "call_1"));
    started.finished_at = None;
    started.result = None;
    window.record_tool_started(started).await.unwrap();
    kill(&mut window);

    let next = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    assert_eq!(next.recover_unfinished().await.unwrap(), 1);
    let all = next.list_messages(conv.id.clone()).await.unwrap();
    assert_eq!(
        all.len(),
        1,
        "no tool message for a call the model never made"
    );
    let audit = next.audit(audit::AuditFilter::default()).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].origin, audit::AuditOrigin::App);
    assert!(audit[0].decided_by.ends_with(audit::CUT_OFF));
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

fn a_call(conversation_id: &str, message_id: &str, call_id: &str) -> ToolRun {
    ToolRun {
        id: new_id(),
        conversation_id: conversation_id.to_owned(),
        message_id: message_id.to_owned(),
        call_id: call_id.to_owned(),
        server: "everything".into(),
        tool: "echo".into(),
        display_name: "everything · Echo".into(),
        arguments: "{}".into(),
        decision: Some(ToolDecision::Allowed),
        decision_scope: Some(ApprovalScope::Once),
        deny_reason: None,
        started_at: Some(now_ms()),
        finished_at: Some(now_ms()),
        is_error: false,
        result: Some("{\"content\":[]}".into()),
        retry_of: None,
        description: None,
        can_retry: false,
        answered: false,
        rich: false,
        asked_by: None,
        decided_by: None,
        original: None,
        task: None,
    }
}

#[test]
fn a_call_can_be_retried_when_it_failed_was_allowed_names_a_real_tool_and_has_object_arguments() {
    let failed = |change: fn(&mut ToolRun)| {
        let mut run = a_call("c", "m", "x");
        run.is_error = true;
        change(&mut run);
        run.with_retry_rule()
    };
    assert!(failed(|_| {}).can_retry);
    assert!(
        failed(|r| r.arguments = "  ".into()).can_retry,
        "no text is no arguments"
    );
    let refused = [
        (failed(|r| r.is_error = false), "did not fail"),
        (
            failed(|r| r.decision = Some(ToolDecision::Denied)),
            "was not allowed",
        ),
        (failed(|r| r.server = String::new()), "does not exist"),
        (failed(|r| r.arguments = "[1]".into()), "not a JSON object"),
        (
            failed(|r| r.arguments = "{oops".into()),
            "not a JSON object",
        ),
    ];
    for (run, why) in refused {
        assert!(!run.can_retry, "{why}");
        let said = run.retry_refusal().expect("a reason");
        assert!(
            said.contains(why) && said.contains("everything · Echo"),
            "{said}"
        );
    }
}

/// user, then an answer with two calls and their two results, then a closing answer; `turns`
/// times. Returns each message's id in order.
async fn turns_with_calls(
    store: &Store,
    conversation_id: &str,
    turns: usize,
    result: &str,
) -> Vec<String> {
    let mut ids = Vec::new();
    for t in 0..turns {
        let user = store
            .append_message(
                conversation_id.into(),
                NewMessage::text(Role::User, format!("q{t}")),
            )
            .await
            .unwrap();
        let mut answer = NewMessage::text(Role::Assistant, "");
        answer.tool_calls = Some(StoredCall::read_all(&serde_json::json!([
            {"id": "c1", "name": "echo", "arguments": "{}"},
            {"id": "c2", "name": "echo", "arguments": "{}"}
        ])));
        let answer = store
            .append_message(conversation_id.into(), answer)
            .await
            .unwrap();
        ids.extend([user.id, answer.id.clone()]);
        for call in ["c1", "c2"] {
            let mut message = NewMessage::text(Role::Tool, result);
            message.tool_call_id = Some(call.into());
            let saved = store
                .record_tool_call(a_call(conversation_id, &answer.id, call), message)
                .await
                .unwrap();
            ids.push(saved.id);
        }
        let closing = store
            .append_message(
                conversation_id.into(),
                NewMessage::text(Role::Assistant, format!("a{t}")),
            )
            .await
            .unwrap();
        ids.push(closing.id);
    }
    ids
}

#[tokio::test]
async fn pages_of_messages_go_back_to_the_first_without_splitting_an_answer_from_its_results() {
    let store = Store::open_in_memory().unwrap();
    let conv = store.create_conversation("long".into()).await.unwrap();
    let ids = turns_with_calls(&store, &conv.id, 40, "ok").await;
    assert_eq!(ids.len(), 200);

    let mut seen: Vec<String> = Vec::new();
    let mut before = None;
    let mut pages = 0;
    loop {
        // 3 back from the newest lands on a tool result: the page reaches back to its answer.
        let page = store
            .message_page(conv.id.clone(), before, 3)
            .await
            .unwrap();
        pages += 1;
        assert_ne!(
            page.messages[0].role,
            Role::Tool,
            "page {pages} starts with a result"
        );
        for m in page
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant && m.tool_calls.is_some())
        {
            let calls: Vec<_> = page
                .tool_runs
                .iter()
                .filter(|r| r.message_id == m.id)
                .collect();
            assert_eq!(calls.len(), 2, "an answer's calls come with its page");
            assert!(
                calls.iter().all(|r| r.result.is_none()),
                "results are not sent twice"
            );
        }
        assert_eq!(
            page.tool_runs.len(),
            2 * page
                .messages
                .iter()
                .filter(|m| m.tool_calls.is_some())
                .count()
        );
        let mut ids_here: Vec<String> = page.messages.iter().map(|m| m.id.clone()).collect();
        ids_here.append(&mut seen);
        seen = ids_here;
        match page.older {
            Some(older) => before = Some(older),
            None => break,
        }
    }
    assert_eq!(seen, ids, "every message once, in order");
    assert!(pages >= 40, "{pages} pages");

    let empty = store.create_conversation("empty".into()).await.unwrap();
    let page = store.message_page(empty.id, None, 50).await.unwrap();
    assert!(page.messages.is_empty() && page.older.is_none());
    assert!(matches!(
        store.message_page("nope".into(), None, 50).await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn a_long_tool_result_reaches_a_page_as_a_preview_and_is_read_whole_on_demand() {
    let store = Store::open_in_memory().unwrap();
    let conv = store.create_conversation("big".into()).await.unwrap();
    // Multi-byte characters: the cut is counted in characters, never inside one.
    let whole = "é".repeat(TOOL_PREVIEW_CHARS + 1_000);
    let ids = turns_with_calls(&store, &conv.id, 1, &whole).await;
    let page = store.message_page(conv.id.clone(), None, 50).await.unwrap();
    let result = page.messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert_eq!(
        result.content.as_deref().unwrap().chars().count(),
        TOOL_PREVIEW_CHARS
    );
    assert_eq!(
        result.full_length,
        Some(i64::try_from(TOOL_PREVIEW_CHARS + 1_000).unwrap())
    );
    let short = page.messages.iter().find(|m| m.role == Role::User).unwrap();
    assert_eq!(short.full_length, None);
    assert_eq!(
        store
            .message_content(conv.id.clone(), result.id.clone())
            .await
            .unwrap()
            .as_deref(),
        Some(whole.as_str())
    );
    // The same cut for a message sent live.
    let full = store.list_messages(conv.id.clone()).await.unwrap();
    let live = full.into_iter().find(|m| m.id == ids[2]).unwrap().preview();
    assert_eq!(live.content, result.content);
    assert_eq!(live.full_length, result.full_length);
    assert!(matches!(
        store.message_content(conv.id, "nope".into()).await,
        Err(StoreError::NotFound { .. })
    ));
}

/// The message ids and roles `query` finds, in the order found (titles give no id).
async fn found(store: &Store, query: &str) -> Vec<(Option<String>, String)> {
    store
        .search(query.into(), 50)
        .await
        .unwrap()
        .into_iter()
        .map(|h| (h.message_id, h.conversation_title))
        .collect()
}

#[tokio::test]
async fn search_finds_questions_answers_and_tool_results_and_follows_every_change() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let trip = store
        .create_conversation("Trip to Lisbon".into())
        .await
        .unwrap();
    let other = store.create_conversation("Recipes".into()).await.unwrap();
    let question = store
        .append_message(
            trip.id.clone(),
            NewMessage::text(Role::User, "What is the weather in Lisbon?"),
        )
        .await
        .unwrap();
    let mut streaming = NewMessage::text(Role::Assistant, "Let me look at the forecast");
    streaming.status = MessageStatus::Streaming;
    let answer = store
        .append_message(trip.id.clone(), streaming)
        .await
        .unwrap();
    let mut result = NewMessage::text(Role::Tool, "Lisbon: 21 °C, sunny, light breeze");
    result.tool_call_id = Some("call_1".into());
    let mut run = a_call(&trip.id, &answer.id, "call_1");
    run.result = Some("{\"content\": []}".into());
    let result = store.record_tool_call(run, result).await.unwrap();
    let recipe = store
        .append_message(
            other.id.clone(),
            NewMessage::text(Role::User, "A café au lait recipe"),
        )
        .await
        .unwrap();

    // Every word must be there; the last one is a prefix while it is typed; newest first.
    assert_eq!(
        found(&store, "lisbon").await,
        vec![
            (None, "Trip to Lisbon".to_owned()),
            (Some(result.id.clone()), "Trip to Lisbon".to_owned()),
            (Some(question.id.clone()), "Trip to Lisbon".to_owned()),
        ]
    );
    assert_eq!(
        found(&store, "weather lisb").await,
        vec![(Some(question.id.clone()), "Trip to Lisbon".into())]
    );
    assert_eq!(
        found(&store, "sunny breeze").await,
        vec![(Some(result.id.clone()), "Trip to Lisbon".into())]
    );
    // Accents do not matter.
    assert_eq!(
        found(&store, "cafe").await,
        vec![(Some(recipe.id.clone()), "Recipes".into())]
    );
    // Query syntax typed by a person is only words.
    assert!(found(&store, "\"lisbon OR NEAR(").await.is_empty());
    assert!(found(&store, "* - :").await.is_empty());
    assert_eq!(found(&store, "lisbon AND").await, Vec::new());

    // An answer is not found while it streams (its checkpoints would cost the index a
    // rewrite each), and is found by what it says once it ends, not by what it said.
    assert!(found(&store, "forecast").await.is_empty());
    store
        .update_message(
            answer.id.clone(),
            MessageUpdate {
                content: Some("Let me look at the forecast for Lisbon".into()),
                ..MessageUpdate::default()
            },
        )
        .await
        .unwrap();
    assert!(found(&store, "forecast").await.is_empty());
    store
        .update_message(
            answer.id.clone(),
            MessageUpdate {
                content: Some("It is sunny and warm in Lisbon today.".into()),
                status: Some(MessageStatus::Complete),
                ..MessageUpdate::default()
            },
        )
        .await
        .unwrap();
    assert!(found(&store, "forecast").await.is_empty());
    assert!(found(&store, "warm")
        .await
        .iter()
        .any(|(id, _)| id.as_deref() == Some(answer.id.as_str())));

    // The matched words are marked in the snippet.
    let hit = store.search("warm".into(), 50).await.unwrap().remove(0);
    assert!(
        hit.snippet.iter().any(|p| p.hit && p.text == "warm"),
        "{:?}",
        hit.snippet
    );
    assert_eq!(hit.role, Some(Role::Assistant));

    // A deleted conversation leaves nothing behind in the index, after a reopen too.
    store.delete_conversation(trip.id.clone()).await.unwrap();
    drop(store);
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    assert!(found(&store, "lisbon").await.is_empty());
    assert_eq!(found(&store, "recipe").await.len(), 2);
    let check: String = store
        .call(|c| {
            c.execute(
                "INSERT INTO message_search(message_search, rank) VALUES('integrity-check', 1)",
                [],
            )?;
            Ok("ok".to_owned())
        })
        .await
        .unwrap();
    assert_eq!(check, "ok");
}

#[tokio::test]
async fn a_conversation_exported_and_imported_comes_back_whole_under_new_ids() {
    let store = Store::open_in_memory().unwrap();
    let conv = store
        .create_conversation_with("Weather".into(), "Be brief.".into(), true)
        .await
        .unwrap();
    store
        .append_message(
            conv.id.clone(),
            NewMessage::text(Role::User, "Weather in Paris?"),
        )
        .await
        .unwrap();
    let mut answer = NewMessage::text(Role::Assistant, "Checking.");
    answer.tool_calls = Some(StoredCall::read_all(
        &serde_json::json!([{"id": "call_1", "name": "weather__now", "arguments": "{\"city\":\"Paris\"}"}]),
    ));
    answer.model = Some("gpt-4o".into());
    answer.input_tokens = Some(120);
    answer.output_tokens = Some(30);
    let answer = store.append_message(conv.id.clone(), answer).await.unwrap();
    store
        .update_message(
            answer.id.clone(),
            MessageUpdate {
                cost_pico: Some(600_000_000),
                ..MessageUpdate::default()
            },
        )
        .await
        .unwrap();
    let mut result = NewMessage::text(Role::Tool, "Paris: 18 °C ```not a fence``` <b>bold</b>");
    result.tool_call_id = Some("call_1".into());
    let mut run = a_call(&conv.id, &answer.id, "call_1");
    run.arguments = "{\"city\":\"Paris\"}".into();
    run.result = Some("{\"content\": [{\"type\": \"text\", \"text\": \"Paris: 18 °C\"}]}".into());
    store.record_tool_call(run, result).await.unwrap();
    // A record that points at a result file of this home is never taken from a file.
    let mut pointer = a_call(&conv.id, &answer.id, "call_2");
    pointer.result = Some("{\"switchboard\": 1, \"file\": \"results/0000.json\"}".into());
    let mut second = NewMessage::text(Role::Tool, "big");
    second.tool_call_id = Some("call_2".into());
    store.record_tool_call(pointer, second).await.unwrap();
    store
        .append_message(
            conv.id.clone(),
            NewMessage::text(Role::Assistant, "18 °C and sunny."),
        )
        .await
        .unwrap();

    let exported = store.export_conversation(conv.id.clone()).await.unwrap();
    assert_eq!(exported.format, "switchboard.conversation");
    assert_eq!(exported.version, super::transfer::VERSION);
    exported.check().unwrap();
    let json = serde_json::to_string(&exported).unwrap();
    let read: ConversationExport = serde_json::from_str(&json).unwrap();
    assert_eq!(read, exported);

    let imported = store.import_conversation(read).await.unwrap();
    assert_ne!(imported.id, conv.id);
    assert_eq!(imported.title, "Weather");
    assert_eq!(imported.system_prompt, "Be brief.");
    assert!(!imported.auto_approve);
    assert_eq!(
        store.list_conversations().await.unwrap()[0].id,
        imported.id,
        "newest in the list"
    );

    let again = store
        .export_conversation(imported.id.clone())
        .await
        .unwrap();
    let strip = |file: &ConversationExport| {
        let ids: std::collections::HashMap<&str, usize> = file
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.as_str(), i))
            .collect();
        let messages: Vec<_> = file
            .messages
            .iter()
            .map(|m| ExportedMessage {
                id: String::new(),
                ..m.clone()
            })
            .collect();
        let runs: Vec<_> = file
            .tool_runs
            .iter()
            .map(|r| ExportedToolRun {
                message_id: ids[r.message_id.as_str()].to_string(),
                ..r.clone()
            })
            .collect();
        (file.conversation.clone(), messages, runs)
    };
    let (before, after) = (strip(&exported), strip(&again));
    assert_eq!(after.1, before.1, "the messages, times included");
    assert_eq!(after.0.title, before.0.title);
    assert_eq!(after.0.created_at, before.0.created_at);
    assert_eq!(after.2.len(), 2);
    assert_eq!(after.2[0], before.2[0], "the first call and its record");
    assert_eq!(before.2[1].result, None, "a file pointer is not exported");
    assert!(again
        .messages
        .iter()
        .all(|m| !exported.messages.iter().any(|e| e.id == m.id)));

    // The Markdown reads as a conversation, with the call collapsible and nothing unescaped.
    let markdown = to_markdown(&exported);
    assert!(markdown.starts_with("# Weather\n"), "{markdown}");
    assert!(markdown.contains("> Be brief."));
    assert!(markdown.contains("## You\n\nWeather in Paris?"));
    assert!(
        markdown
            .contains("## Assistant (gpt-4o)\n\nChecking.\n\n*120 tokens in · 30 out · $0.0006*"),
        "{markdown}"
    );
    assert_eq!(exported.messages[1].cost_pico, Some(600_000_000));
    assert!(
        markdown.contains("<details>\n<summary>Tool call: everything · Echo</summary>"),
        "{markdown}"
    );
    assert!(markdown.contains("\"city\": \"Paris\""));
    assert!(
        markdown.contains("````\nParis: 18 °C ```not a fence``` <b>bold</b>\n````"),
        "{markdown}"
    );
}

#[tokio::test]
async fn deleting_a_turn_takes_the_question_its_answers_and_their_calls_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite3"), DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = store.create_conversation("turns".into()).await.unwrap();
    let say = |role, text: &str| NewMessage::text(role, text);
    let q1 = store
        .append_message(conv.id.clone(), say(Role::User, "first question"))
        .await
        .unwrap();
    store
        .append_message(conv.id.clone(), say(Role::Assistant, "first answer"))
        .await
        .unwrap();
    let q2 = store
        .append_message(conv.id.clone(), say(Role::User, "second question pelican"))
        .await
        .unwrap();
    let mut asking = say(Role::Assistant, "");
    asking.tool_calls = Some(StoredCall::read_all(
        &serde_json::json!([{"id": "c1", "name": "everything__echo", "arguments": "{}"}]),
    ));
    let asking = store.append_message(conv.id.clone(), asking).await.unwrap();
    // A result too large for the database, kept in a file of its own.
    let mut run = a_call(&conv.id, &asking.id, "c1");
    run.result = Some("x".repeat(super::tool_loop::MAX_STORED_RESULT + 1));
    let run_id = run.id.clone();
    let mut result = say(Role::Tool, "pelican result");
    result.tool_call_id = Some("c1".into());
    store.record_tool_call(run, result).await.unwrap();
    let file = dir.path().join(format!("results/{run_id}.json"));
    assert!(file.exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A tool's result is the person's alone, as the database is.
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().unwrap()), 0o700);
    }
    store
        .append_message(
            conv.id.clone(),
            say(Role::Assistant, "second answer pelican"),
        )
        .await
        .unwrap();
    let q3 = store
        .append_message(conv.id.clone(), say(Role::User, "third question"))
        .await
        .unwrap();

    // Only a question starts a turn.
    assert!(matches!(
        store.delete_turn(conv.id.clone(), asking.id.clone()).await,
        Err(StoreError::NotFound { .. })
    ));
    let deleted = store
        .delete_turn(conv.id.clone(), q2.id.clone())
        .await
        .unwrap();
    assert_eq!(deleted.len(), 4);
    assert_eq!(deleted[0], q2.id);
    let left: Vec<String> = store
        .list_messages(conv.id.clone())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.content.unwrap_or_default())
        .collect();
    assert_eq!(left, ["first question", "first answer", "third question"]);
    assert!(store
        .list_tool_runs(conv.id.clone())
        .await
        .unwrap()
        .is_empty());
    assert!(!file.exists(), "the result file went with its record");
    assert!(store.search("pelican".into(), 50).await.unwrap().is_empty());

    // The last turn, a question with no answer yet, goes alone; then the first.
    assert_eq!(
        store
            .delete_turn(conv.id.clone(), q3.id)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .delete_turn(conv.id.clone(), q1.id)
            .await
            .unwrap()
            .len(),
        2
    );
    assert!(store.list_messages(conv.id).await.unwrap().is_empty());
}

/// The contents of a conversation's messages, in order.
async fn texts(store: &Store, conversation_id: &str) -> Vec<String> {
    store
        .list_messages(conversation_id.to_owned())
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.content.unwrap_or_default())
        .collect()
}

/// A conversation "branches" of a greeting and a question answered after a tool call with its
/// record: "hi", "hello", "capital of France?", a call, its result "Paris is the capital",
/// "Paris.". Returns its id and the question.
async fn two_turns_with_a_call(store: &Store) -> (String, Message) {
    let id = store
        .create_conversation("branches".into())
        .await
        .unwrap()
        .id;
    let say = |role, text: &str| NewMessage::text(role, text);
    for (role, text) in [(Role::User, "hi"), (Role::Assistant, "hello")] {
        store
            .append_message(id.clone(), say(role, text))
            .await
            .unwrap();
    }
    let q = store
        .append_message(id.clone(), say(Role::User, "capital of France?"))
        .await
        .unwrap();
    let mut asking = say(Role::Assistant, "");
    asking.tool_calls = Some(StoredCall::read_all(
        &serde_json::json!([{"id": "c1", "name": "web__search", "arguments": "{}"}]),
    ));
    let asking = store.append_message(id.clone(), asking).await.unwrap();
    let mut result = say(Role::Tool, "Paris is the capital");
    result.tool_call_id = Some("c1".into());
    let mut run = a_call(&id, &asking.id, "c1");
    run.result =
        Some("{\"content\": [{\"type\": \"text\", \"text\": \"Paris is the capital\"}]}".into());
    store.record_tool_call(run, result).await.unwrap();
    store
        .append_message(id.clone(), say(Role::Assistant, "Paris."))
        .await
        .unwrap();
    (id, q)
}

/// Adds a message of plain text to conversation `id`.
async fn append_text(store: &Store, id: &str, role: Role, text: &str) -> Message {
    store
        .append_message(id.to_owned(), NewMessage::text(role, text))
        .await
        .unwrap()
}

/// What `query` finds as (message id, whether it is in a branch not shown), newest first.
async fn found_versions(store: &Store, query: &str) -> Vec<(String, bool)> {
    store
        .search(query.into(), 50)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|h| Some((h.message_id?, h.other_version)))
        .collect()
}

#[tokio::test]
async fn search_finds_words_in_branches_not_shown_and_reveal_shows_them_however_deep() {
    let store = Store::open_in_memory().unwrap();
    let (id, q) = two_turns_with_a_call(&store).await;
    // The second question edited; the new branch's answer asked for again (a point nested in
    // it); then back to the first branch: the edit's branch, with both its answers, is kept.
    store.branch_off(id.clone(), q.id.clone()).await.unwrap();
    let q2 = append_text(&store, &id, Role::User, "capital of Italy?").await;
    let a2 = append_text(&store, &id, Role::Assistant, "Rome, said first.").await;
    store.branch_off(id.clone(), a2.id.clone()).await.unwrap();
    let a3 = append_text(&store, &id, Role::Assistant, "Rome, said again.").await;
    store
        .switch_branch(id.clone(), q2.id.clone(), 0)
        .await
        .unwrap();
    assert_eq!(texts(&store, &id).await.last().unwrap(), "Paris.");

    assert_eq!(
        found_versions(&store, "rome said").await,
        [(a3.id.clone(), true), (a2.id.clone(), true)],
        "both answers of the branch not shown, the nested one too, newest first"
    );
    assert_eq!(
        found_versions(&store, "italy").await,
        [(q2.id.clone(), true)]
    );
    let paris = found_versions(&store, "paris").await;
    assert!(
        !paris.is_empty() && paris.iter().all(|(_, other)| !other),
        "{paris:?}"
    );
    let hit_seq = store.search("first".into(), 50).await.unwrap()[0].seq;

    // The first answer of the edited question, two points deep: both switched in one go.
    let (seq, switched) = store
        .reveal_message(id.clone(), a2.id.clone())
        .await
        .unwrap();
    assert_eq!(
        texts(&store, &id).await,
        ["hi", "hello", "capital of Italy?", "Rome, said first."]
    );
    assert_eq!(
        Some(seq),
        hit_seq,
        "the message keeps the number its hit gave"
    );
    let switched = switched.expect("a branch was switched");
    assert_eq!(switched.point.message_id, a2.id);
    assert_eq!((switched.point.position, switched.point.count), (0, 2));

    // Search follows what is shown now.
    assert_eq!(
        found_versions(&store, "rome said").await,
        [(a3.id.clone(), true), (a2.id.clone(), false)]
    );
    assert!(found_versions(&store, "paris")
        .await
        .iter()
        .all(|(_, other)| *other));

    // A message shown already switches nothing; one that is nowhere is not found.
    let (again, none) = store
        .reveal_message(id.clone(), q2.id.clone())
        .await
        .unwrap();
    assert!(none.is_none());
    assert!(again < seq);
    assert!(matches!(
        store.reveal_message(id.clone(), "nope".into()).await,
        Err(StoreError::NotFound { .. })
    ));

    // The kept branches' words go with their conversation.
    store.delete_conversation(id.clone()).await.unwrap();
    assert!(found_versions(&store, "rome").await.is_empty());
    assert!(found_versions(&store, "paris").await.is_empty());
}

#[tokio::test]
async fn a_search_by_a_reader_finds_kept_branches_yet_leaves_the_file_as_it_was() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let (id, q) = two_turns_with_a_call(&store).await;
    store.branch_off(id.clone(), q.id.clone()).await.unwrap();
    let q2 = append_text(&store, &id, Role::User, "capital of Italy?").await;
    store.switch_branch(id.clone(), q2.id, 0).await.unwrap();
    drop(store);
    // (stale conversations, rows of the branch index) as the file holds them.
    let on_disk = || {
        let conn = Connection::open(&path).unwrap();
        let count = |table: &str| -> i64 {
            conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                .unwrap()
        };
        (count("branch_search_stale"), count("branch_search"))
    };
    assert_eq!(
        on_disk(),
        (1, 0),
        "the switch left the branch index to the next search"
    );

    // A verb that only reads (checked at the header) finds the kept question, twice, and
    // keeps nothing in the file.
    let reader = Store::open_checking(&path, DEFAULT_BUSY_TIMEOUT, OpenCheck::Header).unwrap();
    for _ in 0..2 {
        let hits = reader.search("italy".into(), 10).await.unwrap();
        assert_eq!(hits.len(), 1);
        assert!(hits[0].other_version);
    }
    drop(reader);
    assert_eq!(on_disk(), (1, 0));

    // The window (every page checked) keeps the index it brought up to date.
    let writer = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    assert_eq!(found_versions(&writer, "italy").await.len(), 1);
    drop(writer);
    let (stale, rows) = on_disk();
    assert_eq!(stale, 0);
    assert!(rows > 0);
}

#[tokio::test]
async fn an_edit_and_a_regenerated_answer_start_branches_that_nest_and_switch_back_whole() {
    let store = Store::open_in_memory().unwrap();
    let (id, q) = two_turns_with_a_call(&store).await;
    let append = |role, text: &'static str| append_text(&store, &id, role, text);

    // Edit the second question: what followed it is kept, the shown conversation ends before it.
    store.branch_off(id.clone(), q.id.clone()).await.unwrap();
    assert_eq!(texts(&store, &id).await, ["hi", "hello"]);
    assert!(store.list_tool_runs(id.clone()).await.unwrap().is_empty());
    let q2 = append(Role::User, "capital of Italy?").await;
    let a2 = append(Role::Assistant, "Rome.").await;
    let page = store.message_page(id.clone(), None, 60).await.unwrap();
    assert_eq!(
        page.branches,
        [BranchPoint {
            message_id: q2.id.clone(),
            position: 1,
            count: 2,
            models: Vec::new(),
        }]
    );

    // Regenerate the answer in the new branch: a point nested in it.
    store.branch_off(id.clone(), a2.id.clone()).await.unwrap();
    let a3 = append(Role::Assistant, "Rome, of course.").await;
    let page = store.message_page(id.clone(), None, 60).await.unwrap();
    assert_eq!(
        page.branches,
        [
            BranchPoint {
                message_id: q2.id.clone(),
                position: 1,
                count: 2,
                models: Vec::new(),
            },
            BranchPoint {
                message_id: a3.id.clone(),
                position: 1,
                count: 2,
                models: Vec::new(),
            },
        ]
    );

    // Back to the first branch: the old question, its call and record, and its answer, whole.
    let switched = store
        .switch_branch(id.clone(), q2.id.clone(), 0)
        .await
        .unwrap();
    assert_eq!(
        switched.point,
        BranchPoint {
            message_id: q.id.clone(),
            position: 0,
            count: 2,
            models: Vec::new(),
        }
    );
    assert_eq!(switched.seq, 3, "the old question is the third message");
    assert_eq!(
        texts(&store, &id).await,
        [
            "hi",
            "hello",
            "capital of France?",
            "",
            "Paris is the capital",
            "Paris."
        ]
    );
    assert_eq!(store.list_tool_runs(id.clone()).await.unwrap().len(), 1);
    let page = store.message_page(id.clone(), None, 60).await.unwrap();
    assert_eq!(
        page.branches.len(),
        1,
        "the nested point went with its branch"
    );
    // Search tells what is shown from what is kept.
    let versions = |query: &'static str| {
        let store = &store;
        async move {
            let hits = store.search(query.into(), 50).await.unwrap();
            let other = hits.iter().filter(|h| h.other_version).count();
            (hits.len() - other, other)
        }
    };
    assert_eq!(
        versions("rome").await,
        (0, 2),
        "Rome. and Rome, of course., both kept"
    );
    assert_eq!(versions("paris").await, (2, 0));

    // And forward again: the second branch with its own nested point as it was left.
    store
        .switch_branch(id.clone(), q.id.clone(), 1)
        .await
        .unwrap();
    assert_eq!(
        texts(&store, &id).await,
        ["hi", "hello", "capital of Italy?", "Rome, of course."]
    );
    let page = store.message_page(id.clone(), None, 60).await.unwrap();
    assert_eq!(
        page.branches[1],
        BranchPoint {
            message_id: a3.id.clone(),
            position: 1,
            count: 2,
            models: Vec::new(),
        }
    );
    store
        .switch_branch(id.clone(), a3.id.clone(), 0)
        .await
        .unwrap();
    assert_eq!(
        texts(&store, &id).await,
        ["hi", "hello", "capital of Italy?", "Rome."]
    );

    // A branch that does not exist, and the branch already shown.
    assert!(matches!(
        store.switch_branch(id.clone(), q2.id.clone(), 5).await,
        Err(StoreError::NotFound { .. })
    ));
    let same = store
        .switch_branch(id.clone(), q2.id.clone(), 1)
        .await
        .unwrap();
    assert_eq!(same.point.position, 1);
    assert_eq!(
        texts(&store, &id).await,
        ["hi", "hello", "capital of Italy?", "Rome."]
    );

    // Deleting the turn where the branches part takes its point (and the branches) along.
    store.delete_turn(id.clone(), q2.id.clone()).await.unwrap();
    assert_eq!(texts(&store, &id).await, ["hi", "hello"]);
    let page = store.message_page(id.clone(), None, 60).await.unwrap();
    assert!(page.branches.is_empty());
    let count: i64 = store
        .call(|c| Ok(c.query_row("SELECT COUNT(*) FROM message_branches", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(count, 0);
}

/// An export as JSON with its messages' ids replaced by their order in the file and the times
/// an import sets left out, so two exports of one conversation compare equal.
fn canonical(file: &ConversationExport) -> serde_json::Value {
    use serde_json::Value;
    fn ids(value: &Value, found: &mut std::collections::HashMap<String, usize>) {
        match value {
            Value::Object(map) => {
                if let (Some(Value::String(id)), Some(_)) = (map.get("id"), map.get("role")) {
                    let next = found.len();
                    found.entry(id.clone()).or_insert(next);
                }
                map.values().for_each(|v| ids(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| ids(v, found)),
            _ => {}
        }
    }
    fn rename(value: &mut Value, found: &std::collections::HashMap<String, usize>) {
        match value {
            Value::String(text) => {
                if let Some(i) = found.get(text.as_str()) {
                    *text = format!("message {i}");
                }
            }
            Value::Object(map) => map.values_mut().for_each(|v| rename(v, found)),
            Value::Array(items) => items.iter_mut().for_each(|v| rename(v, found)),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(file).unwrap();
    let mut found = std::collections::HashMap::new();
    ids(&value, &mut found);
    rename(&mut value, &found);
    value.as_object_mut().unwrap().remove("exported_at");
    value["conversation"]
        .as_object_mut()
        .unwrap()
        .remove("updated_at");
    value
}

#[tokio::test]
async fn branches_are_exported_whole_and_an_import_keeps_them_to_switch_to() {
    let store = Store::open_in_memory().unwrap();
    let (id, q) = two_turns_with_a_call(&store).await;
    let append = |role, text: &'static str| append_text(&store, &id, role, text);
    // The question edited (a branch at it), then the new answer asked for again (a point
    // further down the new branch).
    store.branch_off(id.clone(), q.id.clone()).await.unwrap();
    append(Role::User, "capital of Italy?").await;
    let a2 = append(Role::Assistant, "Rome.").await;
    store.branch_off(id.clone(), a2.id.clone()).await.unwrap();
    append(Role::Assistant, "Rome, of course.").await;

    let exported = store.export_conversation(id.clone()).await.unwrap();
    exported.check().unwrap();
    let contents = |messages: &[ExportedMessage]| -> Vec<String> {
        messages
            .iter()
            .map(|m| m.content.clone().unwrap_or_default())
            .collect()
    };
    assert_eq!(
        contents(&exported.messages),
        ["hi", "hello", "capital of Italy?", "Rome, of course."]
    );
    assert!(exported.tool_runs.is_empty());
    assert_eq!(exported.branches.len(), 2, "{:#?}", exported.branches);
    let edit = &exported.branches[0];
    assert_eq!(
        edit.after.as_deref(),
        Some(exported.messages[1].id.as_str())
    );
    assert_eq!((edit.shown, edit.others.len()), (1, 1));
    let old = &edit.others[0];
    assert_eq!(old.position, 0);
    assert_eq!(
        contents(&old.messages),
        ["capital of France?", "", "Paris is the capital", "Paris."]
    );
    assert_eq!(
        old.tool_runs.len(),
        1,
        "the old branch's call and its record"
    );
    assert_eq!(old.tool_runs[0].message_id, old.messages[1].id);
    assert!(old.tool_runs[0]
        .result
        .as_deref()
        .unwrap()
        .contains("Paris"));
    let again = &exported.branches[1];
    assert_eq!(
        again.after.as_deref(),
        Some(exported.messages[2].id.as_str())
    );
    assert_eq!(contents(&again.others[0].messages), ["Rome."]);
    // Reading the branches changed nothing.
    assert_eq!(
        texts(&store, &id).await,
        ["hi", "hello", "capital of Italy?", "Rome, of course."]
    );
    assert_eq!(
        store
            .message_page(id.clone(), None, 60)
            .await
            .unwrap()
            .branches
            .len(),
        2
    );

    let markdown = to_markdown(&exported);
    assert!(
        markdown.contains("<summary>Another version of this question (1 of 2)</summary>\n\n**You:** capital of France?\n\nParis."),
        "{markdown}"
    );
    assert!(
        markdown.contains("<summary>Another answer (1 of 2)</summary>\n\nRome.\n\n</details>"),
        "{markdown}"
    );

    // Through a file and back: the same conversation, its branches there to switch to.
    let json = serde_json::to_string(&exported).unwrap();
    let imported = store
        .import_conversation(serde_json::from_str(&json).unwrap())
        .await
        .unwrap();
    let copy = imported.id.clone();
    let round = store.export_conversation(copy.clone()).await.unwrap();
    assert_eq!(canonical(&round), canonical(&exported));
    let page = store.message_page(copy.clone(), None, 60).await.unwrap();
    assert_eq!(
        page.branches
            .iter()
            .map(|p| (p.position, p.count))
            .collect::<Vec<_>>(),
        [(1, 2), (1, 2)]
    );
    let question = page.branches[0].message_id.clone();
    store
        .switch_branch(copy.clone(), question.clone(), 0)
        .await
        .unwrap();
    assert_eq!(
        texts(&store, &copy).await,
        [
            "hi",
            "hello",
            "capital of France?",
            "",
            "Paris is the capital",
            "Paris."
        ]
    );
    let runs = store.list_tool_runs(copy.clone()).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert!(runs[0].result.as_deref().unwrap().contains("Paris"));
    assert_eq!(
        store
            .search("paris".into(), 50)
            .await
            .unwrap()
            .iter()
            .filter(|h| !h.other_version)
            .count(),
        2,
        "the rows the copy shows now; the original keeps them in a branch"
    );
    // Back to the new question, whose point names the old question while it is shown.
    let shown = store.message_page(copy.clone(), None, 60).await.unwrap();
    assert_ne!(shown.branches[0].message_id, question);
    store
        .switch_branch(copy.clone(), shown.branches[0].message_id.clone(), 1)
        .await
        .unwrap();
    let page = store.message_page(copy.clone(), None, 60).await.unwrap();
    store
        .switch_branch(copy.clone(), page.branches[1].message_id.clone(), 0)
        .await
        .unwrap();
    assert_eq!(
        texts(&store, &copy).await,
        ["hi", "hello", "capital of Italy?", "Rome."]
    );
    // The original is untouched by all this.
    assert_eq!(
        texts(&store, &id).await,
        ["hi", "hello", "capital of Italy?", "Rome, of course."]
    );

    // The first message edited: a point at the very start, the whole conversation above kept
    // as its other branch with both its points nested in it, and back again through a file.
    let first = store.list_messages(id.clone()).await.unwrap()[0].id.clone();
    store.branch_off(id.clone(), first).await.unwrap();
    append(Role::User, "hey").await;
    let exported = store.export_conversation(id.clone()).await.unwrap();
    exported.check().unwrap();
    assert_eq!(contents(&exported.messages), ["hey"]);
    assert_eq!(exported.branches.len(), 1);
    let start = &exported.branches[0];
    assert_eq!((start.after.as_deref(), start.shown), (None, 1));
    let whole = &start.others[0];
    assert_eq!(
        contents(&whole.messages),
        ["hi", "hello", "capital of Italy?", "Rome, of course."]
    );
    assert_eq!(whole.branches.len(), 2, "both points went with it");
    assert_eq!(whole.branches[0].others[0].tool_runs.len(), 1);
    let imported = store.import_conversation(exported.clone()).await.unwrap();
    let round = store
        .export_conversation(imported.id.clone())
        .await
        .unwrap();
    assert_eq!(canonical(&round), canonical(&exported));
    let page = store
        .message_page(imported.id.clone(), None, 60)
        .await
        .unwrap();
    store
        .switch_branch(imported.id.clone(), page.branches[0].message_id.clone(), 0)
        .await
        .unwrap();
    assert_eq!(
        texts(&store, &imported.id).await,
        ["hi", "hello", "capital of Italy?", "Rome, of course."]
    );
}

#[tokio::test]
async fn recovery_finds_what_a_crash_left_through_indexes_not_by_reading_every_message() {
    let store = Store::open_in_memory().unwrap();
    let plans: Vec<String> = store
        .call(|c| {
            let mut plans = Vec::new();
            for (query, parameters) in [
                (
                    "SELECT DISTINCT writer FROM messages WHERE status = 'streaming'",
                    0,
                ),
                (
                    "UPDATE messages SET status = 'interrupted' \
                     WHERE status = 'streaming' AND writer IS ?1",
                    1,
                ),
                (
                    "SELECT r.id, r.conversation_id, r.call_id, m.writer \
                     FROM tool_runs r JOIN messages m ON m.id = r.message_id \
                     WHERE r.finished_at IS NULL AND r.started_at IS NOT NULL",
                    0,
                ),
            ] {
                let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {query}"))?;
                let nulls = vec![rusqlite::types::Null; parameters];
                let details: Vec<String> = stmt
                    .query_map(rusqlite::params_from_iter(nulls), |row| row.get(3))?
                    .collect::<Result<_, _>>()?;
                plans.push(details.join(" | "));
            }
            Ok(plans)
        })
        .await
        .unwrap();
    // A scan, if any, is of an index that holds only the rows recovery wants.
    for plan in &plans {
        for step in plan.split(" | ") {
            assert!(
                !step.starts_with("SCAN") || step.contains("INDEX"),
                "{plan}"
            );
        }
    }
    assert!(plans[0].contains("messages_streaming"), "{}", plans[0]);
    assert!(plans[2].contains("tool_runs_unfinished"), "{}", plans[2]);
}

#[tokio::test]
async fn result_files_of_branches_kept_aside_go_with_their_turn_or_their_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite3"), DEFAULT_BUSY_TIMEOUT).unwrap();
    let say = |role, text: &str| NewMessage::text(role, text);
    // A turn whose answer called a tool with a result too large for the database, then that
    // answer asked for again: the call and its file are in the branch kept aside.
    let turn_with_a_hidden_file = |title: &'static str| {
        let store = store.clone();
        async move {
            let conv = store.create_conversation(title.into()).await.unwrap();
            let question = store
                .append_message(conv.id.clone(), say(Role::User, "question"))
                .await
                .unwrap();
            let mut asking = say(Role::Assistant, "");
            asking.tool_calls = Some(StoredCall::read_all(
                &serde_json::json!([{"id": "c1", "name": "everything__echo", "arguments": "{}"}]),
            ));
            let asking = store.append_message(conv.id.clone(), asking).await.unwrap();
            let mut run = a_call(&conv.id, &asking.id, "c1");
            run.result = Some("x".repeat(super::tool_loop::MAX_STORED_RESULT + 1));
            let run_id = run.id.clone();
            let mut result = say(Role::Tool, "big result");
            result.tool_call_id = Some("c1".into());
            store.record_tool_call(run, result).await.unwrap();
            store
                .branch_off(conv.id.clone(), asking.id.clone())
                .await
                .unwrap();
            store
                .append_message(conv.id.clone(), say(Role::Assistant, "another answer"))
                .await
                .unwrap();
            (conv.id, question.id, run_id)
        }
    };
    let file = |run_id: &str| dir.path().join(format!("results/{run_id}.json"));

    let (conv, question, run_id) = turn_with_a_hidden_file("delete the turn").await;
    assert!(store.list_tool_runs(conv.clone()).await.unwrap().is_empty());
    assert!(file(&run_id).exists(), "kept with the branch set aside");
    store.delete_turn(conv, question).await.unwrap();
    assert!(
        !file(&run_id).exists(),
        "the hidden branch's file went with its turn"
    );

    let (conv, _, run_id) = turn_with_a_hidden_file("delete the conversation").await;
    assert!(file(&run_id).exists());
    store.delete_conversation(conv).await.unwrap();
    assert!(
        !file(&run_id).exists(),
        "the hidden branch's file went with its conversation"
    );
}

#[tokio::test]
async fn usage_adds_up_by_conversation_and_by_day_and_outlives_its_conversation() {
    use super::{NewUsage, UsagePurpose};
    let store = Store::open_in_memory().unwrap();
    let conv = store.create_conversation("x".into()).await.unwrap();
    let row =
        |conversation: Option<&str>, model: &str, tokens: (i64, i64), cost: Option<i64>| NewUsage {
            conversation_id: conversation.map(str::to_owned),
            message_id: None,
            provider: "P".into(),
            model: model.into(),
            purpose: UsagePurpose::Answer,
            input_tokens: tokens.0,
            output_tokens: tokens.1,
            cached_input_tokens: tokens.0 / 10,
            cost_pico: cost,
        };
    store
        .record_usage(row(Some(&conv.id), "a", (100, 10), Some(7)))
        .await
        .unwrap();
    store
        .record_usage(row(Some(&conv.id), "a", (200, 20), Some(11)))
        .await
        .unwrap();
    store
        .record_usage(row(Some(&conv.id), "b", (5, 5), None))
        .await
        .unwrap();
    store
        .record_usage(row(None, "a", (1, 1), Some(1)))
        .await
        .unwrap();

    let total = store.conversation_usage(conv.id.clone()).await.unwrap();
    assert_eq!(
        (
            total.requests,
            total.input_tokens,
            total.output_tokens,
            total.cost_pico,
            total.unpriced
        ),
        (3, 305, 35, 18, 1)
    );
    assert_eq!(
        total.cached_input_tokens,
        10 + 20,
        "of the input, the cached"
    );
    store.delete_conversation(conv.id.clone()).await.unwrap();
    let days = store.usage_by_day(0).await.unwrap();
    let by_model: Vec<(&str, i64, i64, i64)> = days
        .iter()
        .map(|d| {
            (
                d.model.as_str(),
                d.total.requests,
                d.total.cost_pico,
                d.total.unpriced,
            )
        })
        .collect();
    assert_eq!(by_model, [("a", 3, 19, 0), ("b", 1, 0, 1)]);
    assert_eq!(days[0].day.len(), "2026-11-26".len());
    assert!(store.usage_by_day(i64::MAX).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_profile_put_on_a_conversation_replaces_its_prompt_and_switches_and_keeps_a_model_it_does_not_name(
) {
    let store = Store::open_in_memory().unwrap();
    let toggle = |server: &str, tool: Option<&str>, enabled| ToolToggle {
        server: server.into(),
        tool: tool.map(Into::into),
        enabled,
    };
    let research = store
        .create_profile(
            "Research".into(),
            ProfileFields {
                system_prompt: "Cite sources.".into(),
                max_rounds: Some(4),
                tools: vec![toggle("fetch", None, true), toggle("git", None, false)],
                ..ProfileFields::default()
            },
        )
        .await
        .unwrap();
    assert!(matches!(
        store
            .create_profile("RESEARCH".into(), ProfileFields::default())
            .await,
        Err(StoreError::Conflict { .. })
    ));

    // New conversations start with "secret" off (Settings' default switches).
    let defaults = store.create_conversation("d".into()).await.unwrap();
    store
        .set_tool_toggle(defaults.id.clone(), toggle("secret", None, false))
        .await
        .unwrap();
    store.set_default_tools_from(defaults.id).await.unwrap();
    let conv = store.create_conversation("c".into()).await.unwrap();
    store
        .set_conversation_model(conv.id.clone(), Some("Mock".into()), Some("m1".into()))
        .await
        .unwrap();
    store
        .set_tool_toggle(conv.id.clone(), toggle("time", Some("now"), false))
        .await
        .unwrap();
    let applied = store
        .set_conversation_profile(conv.id.clone(), Some(research.id.clone()))
        .await
        .unwrap();
    assert_eq!(applied.profile_id.as_deref(), Some(research.id.as_str()));
    assert_eq!(applied.system_prompt, "Cite sources.");
    assert_eq!(
        (applied.provider.as_deref(), applied.model.as_deref()),
        (Some("Mock"), Some("m1")),
        "a profile naming no model leaves the conversation's"
    );
    let mut switches = store.tool_toggles(conv.id.clone()).await.unwrap();
    switches.sort_by(|a, b| a.server.cmp(&b.server));
    assert_eq!(
        switches,
        [
            toggle("fetch", None, true),
            toggle("git", None, false),
            toggle("secret", None, false)
        ],
        "the profile's switches over the defaults: a server it does not name stays off"
    );

    // One default at a time; a deleted profile leaves its conversations as they are.
    let other = store
        .create_profile("Other".into(), ProfileFields::default())
        .await
        .unwrap();
    store
        .set_default_profile(Some(research.id.clone()))
        .await
        .unwrap();
    store
        .set_default_profile(Some(other.id.clone()))
        .await
        .unwrap();
    let defaults: Vec<String> = store
        .list_profiles()
        .await
        .unwrap()
        .into_iter()
        .filter(|p| p.is_default)
        .map(|p| p.name)
        .collect();
    assert_eq!(defaults, ["Other"]);
    let fresh = store
        .create_conversation_from_profile("d".into(), research.id.clone(), true)
        .await
        .unwrap();
    assert_eq!(fresh.system_prompt, "Cite sources.");
    store.delete_profile(research.id.clone()).await.unwrap();
    for id in [conv.id, fresh.id] {
        let kept = store.get_conversation(id).await.unwrap();
        assert_eq!(kept.profile_id, None);
        assert_eq!(kept.system_prompt, "Cite sources.");
    }
    assert!(store.get_profile(research.id).await.is_err());
}

#[tokio::test]
async fn lanes_fold_back_as_branches_numbered_after_the_question_even_after_a_crash() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    let conv = store.create_conversation("c".into()).await.unwrap();
    store
        .append_message(
            conv.id.clone(),
            NewMessage::text(Role::User, "Which is best?"),
        )
        .await
        .unwrap();
    let lanes = store.open_lanes(conv.id.clone(), 3).await.unwrap();
    assert_eq!(
        store.list_conversations().await.unwrap().len(),
        1,
        "lanes are hidden"
    );
    assert!(
        store
            .list_messages(lanes[0].clone())
            .await
            .unwrap()
            .is_empty(),
        "a lane holds only what its model writes"
    );
    assert_eq!(
        store.tool_toggles(lanes[0].clone()).await.unwrap(),
        store.tool_toggles(conv.id.clone()).await.unwrap()
    );
    // Lane 0 wrote nothing (a crash came first); lanes 1 and 2 answered.
    for (lane, says) in [(&lanes[1], "B"), (&lanes[2], "C")] {
        store
            .append_message(lane.clone(), NewMessage::text(Role::Assistant, says))
            .await
            .unwrap();
    }
    // Another process opening the home leaves a live comparison alone…
    let other = Store::open(&path, DEFAULT_BUSY_TIMEOUT).unwrap();
    assert_eq!(other.fold_left_lanes().await.unwrap(), 0);
    assert_eq!(store.fold_left_lanes().await.unwrap(), 0, "its own too");
    // …and folds it once its process is gone.
    drop(store);
    let store = other;
    assert_eq!(store.fold_left_lanes().await.unwrap(), 1);
    let shown: Vec<String> = store
        .list_messages(conv.id.clone())
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| m.content)
        .collect();
    assert_eq!(shown, ["Which is best?", "B"]);
    for lane in &lanes {
        assert!(
            store.get_conversation(lane.clone()).await.is_err(),
            "no lane is left"
        );
    }
    let page = store.message_page(conv.id.clone(), None, 10).await.unwrap();
    assert_eq!(page.branches.len(), 1);
    assert_eq!(
        page.branches[0].count, 2,
        "a lane that wrote nothing leaves no branch"
    );
    let first = page.branches[0].message_id.clone();
    store
        .switch_branch(conv.id.clone(), first, 1)
        .await
        .unwrap();
    let last = store
        .list_messages(conv.id.clone())
        .await
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(last.content.as_deref(), Some("C"));
    // Numbered on after the question, whatever the lane numbered them.
    let numbers: Vec<i64> = store
        .call(move |c| {
            let mut stmt =
                c.prepare("SELECT seq FROM messages WHERE conversation_id = ?1 ORDER BY seq")?;
            let rows = stmt.query_map([&conv.id], |r| r.get(0))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
        .unwrap();
    assert_eq!(numbers, [1, 2]);
}

#[tokio::test]
async fn an_answers_record_of_the_tools_offered_outlives_its_branch_set_aside_and_shown_again() {
    let store = Store::open_in_memory().unwrap();
    let id = store.create_conversation("t".into()).await.unwrap().id;
    let q = append_text(&store, &id, Role::User, "weather?").await;
    let a = append_text(&store, &id, Role::Assistant, "Sunny.").await;
    let offer = super::ToolOffer {
        message_id: a.id.clone(),
        offered: vec!["Switchboard · Search Tools".into()],
        of: 2000,
        why: "2000 tools".into(),
    };
    store.record_offer(id.clone(), offer.clone()).await.unwrap();
    // The question edited: the first branch set aside; then shown again.
    store.branch_off(id.clone(), q.id.clone()).await.unwrap();
    let q2 = append_text(&store, &id, Role::User, "weather in Rome?").await;
    assert!(store
        .message_page(id.clone(), None, 50)
        .await
        .unwrap()
        .offers
        .is_empty());
    store.switch_branch(id.clone(), q2.id, 0).await.unwrap();
    let page = store.message_page(id.clone(), None, 50).await.unwrap();
    assert_eq!(page.offers, [offer]);
}

#[tokio::test]
async fn a_project_holds_conversations_keeps_them_when_deleted_and_answers_for_its_lanes() {
    let store = Store::open_in_memory().unwrap();
    let profile = store
        .create_profile("Coding".into(), ProfileFields::default())
        .await
        .unwrap();
    let fields = ProjectFields {
        instructions: "We are building a bridge.".into(),
        profile_id: Some(profile.id.clone()),
        memory: true,
        tools: Vec::new(),
        roots: vec!["/work/bridge".into()],
    };
    let bridge = store
        .create_project("Bridge".into(), fields.clone())
        .await
        .unwrap();
    assert_eq!(bridge.fields, fields);
    assert!(matches!(
        store
            .create_project("BRIDGE".into(), ProjectFields::default())
            .await,
        Err(StoreError::Conflict { .. })
    ));
    assert!(matches!(
        store
            .create_project(
                "Ghost".into(),
                ProjectFields {
                    profile_id: Some("no-such".into()),
                    ..ProjectFields::default()
                }
            )
            .await,
        Err(StoreError::NotFound { .. })
    ));
    let other = store
        .create_project("Garden".into(), ProjectFields::default())
        .await
        .unwrap();
    // Found by id, or by name in any case.
    let found = |key: &str| {
        let store = store.clone();
        let key = key.to_owned();
        async move { store.find_project(key).await.unwrap().map(|p| p.name) }
    };
    assert_eq!(found(&bridge.id).await.as_deref(), Some("Bridge"));
    assert_eq!(found("gARDEN").await.as_deref(), Some("Garden"));
    assert_eq!(found("Orchard").await, None);
    let names: Vec<String> = store
        .list_projects()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["Bridge", "Garden"]);

    // Moved in: counted, its place in the list kept, kept though nobody wrote in it yet.
    let conv = store.create_conversation("Loads".into()).await.unwrap();
    let later = store.create_conversation("Later".into()).await.unwrap();
    let moved = store
        .move_conversation(conv.id.clone(), Some(bridge.id.clone()))
        .await
        .unwrap();
    assert_eq!(moved.project_id.as_deref(), Some(bridge.id.as_str()));
    assert_eq!(moved.updated_at, conv.updated_at);
    assert_eq!(
        listed_ids(&store).await,
        [later.id.clone(), conv.id.clone()]
    );
    assert!(!store.discard_if_unused(conv.id.clone()).await.unwrap());
    assert_eq!(
        store
            .get_project(bridge.id.clone())
            .await
            .unwrap()
            .conversations,
        1
    );
    assert_eq!(
        store
            .project_of(conv.id.clone())
            .await
            .unwrap()
            .map(|p| p.id),
        Some(bridge.id.clone())
    );
    assert_eq!(store.project_of(later.id.clone()).await.unwrap(), None);
    assert!(matches!(
        store
            .move_conversation(conv.id.clone(), Some("no-such".into()))
            .await,
        Err(StoreError::NotFound { .. })
    ));

    // Renamed, its instructions changed; its profile deleted leaves it with none.
    let renamed = store
        .update_project(
            bridge.id.clone(),
            "Bridge works".into(),
            ProjectFields {
                instructions: "Steel, not wood.".into(),
                ..fields
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.name, "Bridge works");
    assert!(matches!(
        store
            .update_project(
                other.id.clone(),
                "bridge WORKS".into(),
                ProjectFields::default()
            )
            .await,
        Err(StoreError::Conflict { .. })
    ));
    store.delete_profile(profile.id).await.unwrap();
    assert_eq!(
        store
            .get_project(bridge.id.clone())
            .await
            .unwrap()
            .fields
            .profile_id,
        None
    );

    // Deleted: its conversation stays, in no project.
    assert_eq!(store.delete_project(bridge.id.clone()).await.unwrap(), 1);
    let kept = store.get_conversation(conv.id.clone()).await.unwrap();
    assert_eq!(kept.project_id, None);
    assert!(matches!(
        store.get_project(bridge.id).await,
        Err(StoreError::NotFound { .. })
    ));
    let out = store.move_conversation(later.id, None).await.unwrap();
    assert_eq!(out.project_id, None);

    // Made in a project and left unused, it goes as any other.
    let garden = store
        .create_conversation_with("New".into(), String::new(), false)
        .await
        .unwrap();
    store
        .start_in_project(garden.id.clone(), other.id.clone())
        .await
        .unwrap();
    assert!(store.discard_if_unused(garden.id).await.unwrap());
}

#[tokio::test]
async fn a_projects_files_are_kept_as_passages_searched_by_word_read_whole_and_replaced_by_name() {
    let store = Store::open_in_memory().unwrap();
    let bridge = store
        .create_project("Bridge".into(), ProjectFields::default())
        .await
        .unwrap();
    let garden = store
        .create_project("Garden".into(), ProjectFields::default())
        .await
        .unwrap();
    let file = |name: &str, passages: &[&str]| NewProjectFile {
        name: name.into(),
        sha256: "0".repeat(64),
        mime: "text/plain".into(),
        size: 10,
        passages: passages.iter().map(|p| (*p).to_owned()).collect(),
    };
    let spec = store
        .add_project_file(
            bridge.id.clone(),
            file(
                "spec.md",
                &[
                    "Steel beams. ",
                    "Rivets are checked each spring. ",
                    "Paint is grey.",
                ],
            ),
            10,
        )
        .await
        .unwrap();
    assert_eq!((spec.passages, spec.chars), (3, 59));
    store
        .add_project_file(
            garden.id.clone(),
            file("plants.md", &["Rivets of roses."]),
            10,
        )
        .await
        .unwrap();

    // Found in its own project only, with where it is.
    let found = store
        .search_passages(bridge.id.clone(), vec!["rivets".into(), "zzz".into()], 5)
        .await
        .unwrap();
    assert_eq!(
        found,
        [crate::knowledge::FoundPassage {
            file: "spec.md".into(),
            number: 2,
            of: 3,
            text: "Rivets are checked each spring. ".into()
        }]
    );
    // Whole while they fit.
    assert_eq!(
        store
            .project_texts_within(bridge.id.clone(), 100)
            .await
            .unwrap(),
        Some(vec![(
            "spec.md".to_owned(),
            "Steel beams. Rivets are checked each spring. Paint is grey.".to_owned()
        )])
    );
    assert_eq!(
        store
            .project_texts_within(bridge.id.clone(), 58)
            .await
            .unwrap(),
        None
    );

    // The same name replaces it; the index follows; the limit on files holds.
    store
        .add_project_file(bridge.id.clone(), file("spec.md", &["Wood after all."]), 10)
        .await
        .unwrap();
    assert!(store
        .search_passages(bridge.id.clone(), vec!["rivets".into()], 5)
        .await
        .unwrap()
        .is_empty());
    assert!(matches!(
        store
            .add_project_file(bridge.id.clone(), file("other.md", &["x"]), 1)
            .await,
        Err(StoreError::Conflict { .. })
    ));
    assert!(matches!(
        store
            .add_project_file("no-such".into(), file("a.md", &["x"]), 10)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(store
        .remove_project_file(bridge.id.clone(), "spec.md".into())
        .await
        .unwrap());
    assert!(!store
        .remove_project_file(bridge.id.clone(), "spec.md".into())
        .await
        .unwrap());
    // A project deleted takes its files and their passages with it, out of the index too.
    store.delete_project(garden.id.clone()).await.unwrap();
    let left: i64 = store
        .call(|c| {
            c.execute(
                "INSERT INTO passage_search(passage_search, rank) VALUES('integrity-check', 1)",
                [],
            )?;
            Ok(c.query_row("SELECT COUNT(*) FROM project_passages", [], |r| r.get(0))?)
        })
        .await
        .unwrap();
    assert_eq!(left, 0);
    assert_eq!(store.project_files(bridge.id).await.unwrap(), []);
}

#[tokio::test]
async fn among_many_passages_a_word_in_most_of_them_gives_way_to_rarer_ones_or_must_come_with_the_others(
) {
    let store = Store::open_in_memory().unwrap();
    let project = store
        .create_project("Manuals".into(), ProjectFields::default())
        .await
        .unwrap();
    let mut passages: Vec<String> = (0..2_100)
        .map(|i| {
            let grey = if i % 3 == 0 { " painted grey" } else { "" };
            format!("Deck section {i}{grey}. ")
        })
        .collect();
    passages[1_500] = "Deck rivets are torqued to 420 newton metres. ".into();
    store
        .add_project_file(
            project.id.clone(),
            NewProjectFile {
                name: "manual.txt".into(),
                sha256: "0".repeat(64),
                mime: "text/plain".into(),
                size: 1,
                passages,
            },
            10,
        )
        .await
        .unwrap();
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    // "deck" is in every passage: the rare word decides.
    let found = store
        .search_passages(project.id.clone(), words(&["deck", "rivets"]), 5)
        .await
        .unwrap();
    assert_eq!(found.iter().map(|p| p.number).collect::<Vec<_>>(), [1_501]);
    // Both common: a passage holds both.
    let found = store
        .search_passages(project.id.clone(), words(&["deck", "grey"]), 3)
        .await
        .unwrap();
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|p| p.text.contains("grey")), "{found:?}");
    assert!(store
        .search_passages(project.id, words(&["quokka"]), 3)
        .await
        .unwrap()
        .is_empty());
}
