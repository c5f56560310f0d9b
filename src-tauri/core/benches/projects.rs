//! `cargo bench -p switchboard-core --bench projects`: a project's knowledge files at the size
//! issue 62 names — 1,000 text files of 100 KB (100 MB), words drawn from a 6,000-word
//! vocabulary with a Zipf-like skew (some words in most passages, most words in few), in a
//! SQLite file on disk in WAL as the app keeps it.
//!
//! Measured: adding them all through `app.projects().add_files` (each read, split and indexed
//! off the runtime), with the worst wait of a task on the runtime meanwhile (what a window's
//! commands would wait) and the longest gap between two progress reports; then retrieving the
//! passages for a question, as a turn does (`prompt_for`, for a model with an 8k window), for
//! questions of common words, rare words, both, and words in no file: median and p95 of 30 each.
//! Target (issue 62): retrieval under 50 ms. A probe of the machine's stalls is printed beside.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use switchboard_core::app::{FilesProgress, ProjectInput};
use switchboard_core::secrets::MemoryStore;
use switchboard_core::store::Store;
use switchboard_core::AppPaths;

use support::{word, Rng};

const FILES: usize = 1_000;
const FILE_BYTES: usize = 100 * 1024;
const VOCABULARY: usize = 6_000;
const RUNS: usize = 30;

/// A file of about [`FILE_BYTES`]: sentences of 8–20 words in paragraphs of 4–8 sentences.
fn file_text(rng: &mut Rng) -> String {
    let mut text = String::with_capacity(FILE_BYTES + 200);
    while text.len() < FILE_BYTES {
        for _ in 0..4 + rng.next() % 5 {
            let words = 8 + (rng.next() % 13) as usize;
            let sentence: Vec<String> = (0..words).map(|_| word(rng.skewed(VOCABULARY))).collect();
            text.push_str(&sentence.join(" "));
            text.push_str(". ");
        }
        text.push_str("\n\n");
    }
    text
}

fn percentile(times: &mut [Duration], p: f64) -> Duration {
    times.sort();
    let at = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[at]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (worst_stall, stop) = support::stall_probe();
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::under_home(home.path().to_path_buf());
    paths.create_all().unwrap();
    let store = Store::open(&paths.database_file(), Duration::from_secs(5)).unwrap();
    let app = support::headless_app(store, paths.clone(), Arc::new(MemoryStore::default())).await;
    let project = app
        .projects()
        .create(&ProjectInput {
            name: "Manuals".into(),
            ..ProjectInput::default()
        })
        .await
        .unwrap();

    let files = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_1234_abcd_9876);
    let written: Vec<std::path::PathBuf> = (0..FILES)
        .map(|i| {
            let path = files.path().join(format!("manual-{i:04}.txt"));
            std::fs::write(&path, file_text(&mut rng)).unwrap();
            path
        })
        .collect();
    let total_bytes: u64 = written
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();

    // The runtime's responsiveness while the files are added: a task that wakes every 10 ms.
    let worst_wait = Arc::new(Mutex::new(Duration::ZERO));
    let ticking = {
        let worst_wait = Arc::clone(&worst_wait);
        tokio::spawn(async move {
            loop {
                let at = Instant::now();
                tokio::time::sleep(Duration::from_millis(10)).await;
                let late = at.elapsed().saturating_sub(Duration::from_millis(10));
                let mut worst = worst_wait.lock().unwrap();
                *worst = (*worst).max(late);
            }
        })
    };
    let last_report = Arc::new(Mutex::new((Instant::now(), Duration::ZERO)));
    let reports = Arc::clone(&last_report);
    let progress = move |_: FilesProgress| {
        let mut at = reports.lock().unwrap();
        let gap = at.0.elapsed();
        *at = (Instant::now(), at.1.max(gap));
    };
    let started = Instant::now();
    let added = app
        .projects()
        .add_files(&project.id, written, &progress)
        .await
        .unwrap();
    let indexing = started.elapsed();
    ticking.abort();
    assert_eq!(added.added.len(), FILES, "{:?}", added.refused);
    let passages: u32 = added.added.iter().map(|f| f.passages).sum();
    let db_size = std::fs::metadata(paths.database_file()).map_or(0, |m| m.len())
        + std::fs::metadata(paths.database_file().with_extension("db-wal")).map_or(0, |m| m.len());
    let longest_gap = last_report.lock().unwrap().1;
    let runtime_wait = *worst_wait.lock().unwrap();

    let project = app.projects().get(&project.id).await.unwrap();
    let common = format!("{} {} {}", word(0), word(1), word(2));
    let rare = format!("{} {}", word(5_900), word(5_950));
    let both = format!(
        "What does {} say about {} and {}?",
        word(3),
        word(4_000),
        word(4_500)
    );
    let none = "quokka zebrafish";
    println!("## Session 52: a project's knowledge files (issue 62)\n");
    println!(
        "{FILES} files, {:.0} MB of text, {passages} passages; the database and its WAL {:.0} MB \
         after adding them.\n",
        total_bytes as f64 / 1e6,
        db_size as f64 / 1e6
    );
    println!("| measure | value |\n|---|---|");
    println!(
        "| adding all {FILES} files (read, split, indexed) | {:.1} s ({:.1} MB/s) |",
        indexing.as_secs_f64(),
        total_bytes as f64 / 1e6 / indexing.as_secs_f64()
    );
    println!(
        "| longest gap between two progress reports | {} |",
        ms(longest_gap)
    );
    println!(
        "| worst wait of a task on the runtime meanwhile | {} |",
        ms(runtime_wait)
    );
    for (label, question) in [
        ("common words", common.as_str()),
        ("rare words", rare.as_str()),
        ("a question of both", both.as_str()),
        ("words in no file", none),
    ] {
        let mut times = Vec::with_capacity(RUNS);
        let mut given = 0;
        for _ in 0..RUNS {
            let at = Instant::now();
            let prompt = app
                .projects()
                .prompt_for(&project, Some(question), Some(8_192))
                .await
                .unwrap();
            times.push(at.elapsed());
            given = prompt.used.passages.len();
        }
        println!(
            "| retrieval, {label} ({given} passages given) | median {}, p95 {} |",
            ms(percentile(&mut times, 0.5)),
            ms(percentile(&mut times, 0.95))
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    println!(
        "\nmachine: worst stall of a 1 ms sleep meanwhile {}",
        ms(*worst_stall.lock().unwrap())
    );
}
