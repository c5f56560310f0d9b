//! Full-text search at the size issue 16 names: 100 000 messages (1 000 conversations of 100:
//! questions, answers and tool results of 20–120 words drawn from a 6 000-word vocabulary with
//! a Zipf-like skew, so some words are in most messages and most words in few), in a SQLite file
//! in WAL as the app keeps it. Every tenth conversation's last ten messages are then a branch
//! not shown (its last question edited), so 1 000 of the messages are searched in snapshots.
//!
//! Measured: writing them (the index is kept by triggers as the app writes), the first search
//! after the branches were made (which indexes those conversations' kept branches), then each kind of
//! query (a common word, a rare one, two words, a prefix being typed, a word in no message)
//! through `app.conversations().search`, 30 times each: median and p95. With `SWITCHBOARD_BIN`
//! set to a built binary, also the whole `switchboard conversations search … --json` process
//! on that home, 15 times each.
//!
//! Run: `cargo bench -p switchboard-core --bench search` (prints Markdown).

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use switchboard_core::secrets::MemoryStore;
use switchboard_core::settings::MemorySettings;
use switchboard_core::store::Store;
use switchboard_core::{App, AppConfig, AppPaths};

use support::{word, Rng};

const CONVERSATIONS: usize = 1_000;
const PER_CONVERSATION: usize = 100;
const VOCABULARY: usize = 6_000;
const RUNS: usize = 30;
/// Every this many conversations, the last [`KEPT`] messages become a branch not shown.
const BRANCHED_EVERY: usize = 10;
const KEPT: usize = 10;
const PROCESS_RUNS: usize = 15;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::under_home(home.path().to_path_buf());
    paths.create_all().unwrap();
    let store = Store::open(&paths.database_file(), Duration::from_secs(5)).unwrap();

    let started = Instant::now();
    store
        .call(|conn| {
            let tx = conn.transaction()?;
            let mut rng = Rng(0x5eed_1234_abcd_9876);
            for c in 0..CONVERSATIONS {
                let id = format!("conv-{c:05}");
                tx.execute(
                    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
                    rusqlite::params![id, format!("{} {}", word(rng.skewed(VOCABULARY)), word(c)), c as i64],
                )?;
                for m in 0..PER_CONVERSATION {
                    let role = ["user", "assistant", "tool"][m % 3];
                    let words = 20 + (rng.next() % 100) as usize;
                    let text: Vec<String> = (0..words).map(|_| word(rng.skewed(VOCABULARY))).collect();
                    tx.execute(
                        "INSERT INTO messages (id, conversation_id, seq, role, content, created_at) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        rusqlite::params![
                            format!("{id}-{m:03}"),
                            id,
                            m as i64,
                            role,
                            text.join(" "),
                            (c * PER_CONVERSATION + m) as i64
                        ],
                    )?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await
        .unwrap();
    let seeded = started.elapsed();
    let started = Instant::now();
    for c in (0..CONVERSATIONS).step_by(BRANCHED_EVERY) {
        let id = format!("conv-{c:05}");
        store
            .branch_off(id.clone(), format!("{id}-{:03}", PER_CONVERSATION - KEPT))
            .await
            .unwrap();
    }
    let branched = started.elapsed();
    let size = std::fs::metadata(paths.database_file())
        .map(|m| m.len())
        .unwrap_or(0)
        + std::fs::metadata(paths.database_file().with_extension("db-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    let app = App::with_store(
        store.clone(),
        AppConfig::headless(
            paths.clone(),
            Arc::new(MemoryStore::default()),
            Arc::new(MemorySettings::default()),
        ),
    )
    .await;

    let started = Instant::now();
    app.conversations().search("zzzzqq", None).await.unwrap();
    let indexed = started.elapsed();

    let queries = [
        ("a common word", word(0)),
        ("a rare word", word(VOCABULARY - 7)),
        ("two words", format!("{} {}", word(3), word(400))),
        ("a prefix being typed", word(1)[..3].to_owned()),
        ("a word in no message", "zzzzqq".to_owned()),
    ];
    println!(
        "Search over {} messages in {CONVERSATIONS} conversations (written in {:.1} s, with the index: {:.0} MB), {} of them in branches not shown ({} branches made in {:.1} s; the first search after, which indexes them: {})\n",
        CONVERSATIONS * PER_CONVERSATION,
        seeded.as_secs_f64(),
        size as f64 / 1e6,
        CONVERSATIONS / BRANCHED_EVERY * KEPT,
        CONVERSATIONS / BRANCHED_EVERY,
        branched.as_secs_f64(),
        ms(indexed)
    );
    println!("| query | hits | median | p95 |");
    println!("| --- | ---: | ---: | ---: |");
    for (what, query) in &queries {
        let mut times = Vec::with_capacity(RUNS);
        let mut hits = 0;
        for _ in 0..RUNS {
            let t = Instant::now();
            hits = app.conversations().search(query, None).await.unwrap().len();
            times.push(t.elapsed());
        }
        times.sort();
        println!(
            "| {what} (`{query}`) | {hits} | {} | {} |",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.95))
        );
    }

    let Some(bin) = std::env::var_os("SWITCHBOARD_BIN") else {
        println!("\n(the whole process: set SWITCHBOARD_BIN to a built switchboard to measure it)");
        return;
    };
    drop(app);
    drop(store);
    println!("\nThe whole `switchboard conversations search QUERY --json` process:\n");
    println!("| query | median | p95 |");
    println!("| --- | ---: | ---: |");
    for (what, query) in &queries {
        let mut times = Vec::with_capacity(PROCESS_RUNS);
        for _ in 0..PROCESS_RUNS {
            let t = Instant::now();
            let out = std::process::Command::new(&bin)
                .args(["conversations", "search", query, "--json"])
                .env("SWITCHBOARD_HOME", home.path())
                .output()
                .unwrap();
            times.push(t.elapsed());
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        times.sort();
        println!(
            "| {what} | {} | {} |",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.95))
        );
    }
}
