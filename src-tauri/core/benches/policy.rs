//! `cargo bench -p switchboard-core --bench policy`: judging one call against 1,000 rules (of
//! every kind: paths inside folders, URL hosts, patterns, ranges, values, on servers and
//! tools of which the call's are among the last), and what writing its audit record adds to
//! a call (the record written alone, into a file database on disk, WAL, as the app has it).
//! Targets (issue 59): under 1 ms each. Medians of many runs, with a probe of the machine's
//! stalls printed beside them.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_core::mcp::catalogue::CatalogueTool;
use switchboard_core::policy::rules::{PolicyFile, Source};
use switchboard_core::policy::{judge, CallFacts, Policy, Standing};
use switchboard_core::store::{AuditEntry, Store, ToolDecision, ToolRun};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn thousand_rules(folder: &str) -> PolicyFile {
    let mut rules = Vec::new();
    for i in 0..1_000 {
        let server = format!("server{}", i % 50);
        let tool = format!("tool{}", i % 20);
        let when = match i % 5 {
            0 => json!({"path": {"inside": [format!("{folder}/area{i}")]}}),
            1 => json!({"url": {"host": [format!("host{i}.example.com"), "*.example.org"]}}),
            2 => json!({"query": {"matches": format!("(?i)select .* from t{i}")}}),
            3 => json!({"/options/limit": {"range": {"min": 0, "max": i}}}),
            _ => json!({"mode": {"one_of": ["read", format!("mode{i}")]}}),
        };
        let outcome = ["allow", "ask", "block"][i % 3];
        rules.push(json!({"server": server, "tool": tool, "when": when, "outcome": outcome}));
    }
    rules.push(json!({"server": "*", "outcome": "ask"}));
    PolicyFile::parse(&json!({"rules": rules}).to_string()).unwrap()
}

fn tool() -> CatalogueTool {
    CatalogueTool {
        title: None,
        wire_name: "server49__tool9".into(),
        server: "server49".into(),
        tool: "tool9".into(),
        display_name: "server49 · tool9".into(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
        hash: "h".into(),
        annotations: None,
    }
}

fn main() {
    let (worst_stall, stop) = support::stall_probe();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_string_lossy().into_owned();
    let file = thousand_rules(&folder);
    let started = Instant::now();
    let policy = Policy {
        user: file.compile(Source::User).unwrap(),
        managed: PolicyFile::default().compile(Source::Managed).unwrap(),
        protected: Vec::new(),
    };
    let compile = started.elapsed();
    let standing = Standing::default();
    let the_tool = tool();
    let calls: Vec<Value> = vec![
        json!({"path": format!("{folder}/area4/sub/../file.txt")}),
        json!({"url": "https://docs.example.org/a"}),
        json!({"query": "SELECT a FROM t2"}),
        json!({"options": {"limit": 7}}),
        json!({"mode": "read", "path": format!("{folder}/elsewhere")}),
    ];
    let mut times = Vec::new();
    for round in 0..2_000 {
        let arguments = &calls[round % calls.len()];
        let facts = CallFacts {
            tool: &the_tool,
            trust: Default::default(),
            auto_approve: false,
            standing: &standing,
            arguments: Some(arguments),
            policy: &policy,
            roots: &[],
            tainted_by: &[],
        };
        let at = Instant::now();
        let judged = judge(&facts);
        times.push(at.elapsed());
        std::hint::black_box(judged);
    }
    let judging = median(times);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let audit = runtime.block_on(async {
        let store = Store::open(&dir.path().join("bench.db"), Duration::from_secs(5)).unwrap();
        let conversation = store.create_conversation("bench".into()).await.unwrap();
        let result = "x".repeat(4_000);
        let mut times = Vec::new();
        for i in 0..500 {
            let run = ToolRun {
                id: format!("r{i}"),
                conversation_id: conversation.id.clone(),
                server: "fs".into(),
                tool: "read_text_file".into(),
                arguments: json!({"path": format!("/tmp/{i}")}).to_string(),
                decision: Some(ToolDecision::Allowed),
                decided_by: Some("rule 1 of your policy.json: allow fs".into()),
                started_at: Some(switchboard_core::store::now_ms()),
                finished_at: Some(switchboard_core::store::now_ms()),
                result: Some(result.clone()),
                ..ToolRun::default()
            };
            let at = Instant::now();
            store.append_audit(AuditEntry::of_run(&run)).await.unwrap();
            times.push(at.elapsed());
        }
        median(times)
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    println!(
        "policy: 1,001 rules compiled in {:.2} ms",
        compile.as_secs_f64() * 1e3
    );
    println!(
        "policy: judging one call against them, median of 2,000: {:.1} µs (target < 1 ms)",
        judging.as_secs_f64() * 1e6
    );
    println!(
        "audit: writing one call's record (result hashed, one transaction, WAL on disk), median of 500: {:.1} µs (target < 1 ms)",
        audit.as_secs_f64() * 1e6
    );
    println!(
        "machine: worst stall of a 1 ms sleep meanwhile {:.1} ms",
        worst_stall.lock().unwrap().as_secs_f64() * 1e3
    );
}
