//! An answer that has ended outlives its process: a process killed right after it ended an
//! answer leaves files that, copied as they are, open with every ended answer whole. What this
//! proves is a crash of the app, not a power cut: the copy reads what the operating system
//! holds, synced or not. Against a power cut the database commits with `synchronous=FULL` (in
//! WAL mode the log is flushed to the disk at every commit), which is checked here to be in
//! force; cutting the power itself would need a file system layer that drops unsynced writes.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use switchboard_core::store::{MessageStatus, NewMessage, Role, Store};

/// The child's side: set in the environment of the test binary run again as the writer.
const WRITER: &str = "SWITCHBOARD_POWER_PULL_WRITER";
const ANSWERS: usize = 40;

/// Run as a child: ends `ANSWERS` answers (each written streaming, then ended), says so on
/// its output and waits to be killed.
#[tokio::test]
async fn power_pull_writer() {
    let Ok(path) = std::env::var(WRITER) else {
        return;
    };
    let store = Store::open(std::path::Path::new(&path), Duration::from_secs(5)).unwrap();
    let sync: i64 = store
        .call(|c| Ok(c.pragma_query_value(None, "synchronous", |r| r.get(0))?))
        .await
        .unwrap();
    let conversation = store.create_conversation("Power".into()).await.unwrap().id;
    for i in 0..ANSWERS {
        let mut streaming = NewMessage::text(Role::Assistant, "");
        streaming.status = MessageStatus::Streaming;
        let id = store
            .append_message(conversation.clone(), streaming)
            .await
            .unwrap()
            .id;
        let ended = switchboard_core::store::MessageUpdate {
            content: Some(format!("answer {i}: {}", "words ".repeat(200))),
            status: Some(MessageStatus::Complete),
            ..Default::default()
        };
        store.update_message(id, ended).await.unwrap();
    }
    println!("ENDED {ANSWERS} synchronous={sync}");
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn power_pull_after_an_answer_ended_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "power_pull::power_pull_writer",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(WRITER, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    // The harness prints the test's name on the same line, before what the test prints.
    while !said.contains("ENDED") {
        said.clear();
        assert!(
            out.read_line(&mut said).unwrap() > 0,
            "the writer ended early"
        );
    }
    let said = &said[said.find("ENDED").unwrap()..];
    assert_eq!(
        said.trim(),
        format!("ENDED {ANSWERS} synchronous=2"),
        "FULL is 2"
    );
    // The power goes: the process dies at once, and what is on the disk is what is left.
    child.kill().unwrap();
    child.wait().unwrap();
    let copy = tempfile::tempdir().unwrap();
    for suffix in ["", "-wal"] {
        let from = dir.path().join(format!("switchboard.db{suffix}"));
        if from.exists() {
            std::fs::copy(&from, copy.path().join(format!("switchboard.db{suffix}"))).unwrap();
        }
    }
    let reopened = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store =
            Store::open(&copy.path().join("switchboard.db"), Duration::from_secs(5)).unwrap();
        let conversation = store.list_conversations().await.unwrap().remove(0).id;
        store.list_messages(conversation).await.unwrap()
    });
    assert_eq!(reopened.len(), ANSWERS);
    for (i, message) in reopened.iter().enumerate() {
        assert_eq!(message.status, MessageStatus::Complete, "answer {i}");
        assert!(
            message
                .content
                .as_deref()
                .is_some_and(|c| c.starts_with(&format!("answer {i}: "))),
            "answer {i}"
        );
    }
}
