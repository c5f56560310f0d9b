//! What a comparison costs before and after its models answer (issue 18): opening its lanes
//! (each a hidden copy of the conversation: messages, call records, switches — indexed for
//! search as any message is) and folding them back (each lane's answer a branch), for
//! conversations of 100, 1 000 and 5 000 messages and 2 and 4 models, in a SQLite file in WAL
//! as the app keeps it. Each lane answers with 3 messages (a call, its result, the answer).
//!
//! Run: `cargo bench -p switchboard-core --bench compare` (prints Markdown).

use std::time::{Duration, Instant};

use switchboard_core::store::{NewMessage, Role, Store};

const RUNS: usize = 5;

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("| messages | models | open the lanes | fold them back |");
    println!("| ---: | ---: | ---: | ---: |");
    for messages in [100usize, 1_000, 5_000] {
        for models in [2usize, 4] {
            let (mut opened, mut folded) = (Vec::new(), Vec::new());
            for _ in 0..RUNS {
                let home = tempfile::tempdir().unwrap();
                let store =
                    Store::open(&home.path().join("db.sqlite3"), Duration::from_secs(5)).unwrap();
                let conv = store.create_conversation("long".into()).await.unwrap().id;
                store
                    .call({
                        let conv = conv.clone();
                        move |conn| {
                            let tx = conn.transaction()?;
                            for m in 0..messages {
                                let role = ["user", "assistant"][m % 2];
                                tx.execute(
                                    "INSERT INTO messages (id, conversation_id, seq, role, content, created_at) \
                                     VALUES (?1, ?2, ?3, ?4, ?5, ?3)",
                                    rusqlite::params![
                                        format!("{conv}-{m}"),
                                        conv,
                                        m as i64 + 1,
                                        role,
                                        "A message of some sixty words about the weather and the tools. ".repeat(6)
                                    ],
                                )?;
                            }
                            tx.commit()?;
                            Ok(())
                        }
                    })
                    .await
                    .unwrap();
                store
                    .append_message(conv.clone(), NewMessage::text(Role::User, "Compare"))
                    .await
                    .unwrap();
                let started = Instant::now();
                let lanes = store.open_lanes(conv.clone(), models).await.unwrap();
                opened.push(started.elapsed());
                for lane in &lanes {
                    for text in ["calling", "result", "the answer"] {
                        store
                            .append_message(lane.clone(), NewMessage::text(Role::Assistant, text))
                            .await
                            .unwrap();
                    }
                }
                let started = Instant::now();
                store.fold_lanes(conv.clone(), lanes, 0).await.unwrap();
                folded.push(started.elapsed());
            }
            println!(
                "| {messages} | {models} | {} | {} |",
                ms(median(opened)),
                ms(median(folded))
            );
        }
    }
}
