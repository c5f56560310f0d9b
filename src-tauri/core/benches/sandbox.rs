//! `cargo bench -p switchboard-core --bench sandbox`: what a sandbox adds to starting a local
//! server, to ready (its `initialize` answered): the same Python server (the SDK's, from
//! tests/peers) started with and without its sandbox, alternately, and the medians compared.
//! The sandbox's own part — planning the folders and building the Landlock ruleset — is
//! timed alone too, and a start with a list of hosts (its own proxy started, the one TCP port
//! it may reach). Target (issue 60): under 20 ms more to ready. And a skill's script run as
//! the model's call runs it (issue 61), beside the same script spawned bare. A probe of the
//! machine's stalls is printed beside the figures.
#![cfg_attr(not(target_os = "linux"), allow(unused))]

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[cfg(not(target_os = "linux"))]
fn main() {
    println!("sandbox bench: Linux only");
}

#[cfg(target_os = "linux")]
#[tokio::main]
async fn main() {
    use switchboard_core::mcp::stdio;
    use switchboard_core::sandbox::{self, Network, PlanInputs, SandboxEntry};

    if let Err(why) = sandbox::available() {
        println!("sandbox bench skipped: {why}");
        return;
    }
    let python = support::peers().join(".venv/bin/python");
    let script = support::peers().join("hostile_server.py");
    if !python.exists() {
        println!("sandbox bench skipped: tests/peers is not installed");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let roots = vec![home.path().to_path_buf()];
    let (worst_stall, stop) = support::stall_probe();
    let launch = || {
        support::stdio_launch(
            python.to_str().unwrap(),
            &[script.to_str().unwrap()],
            Duration::from_secs(60),
        )
    };
    let entry = SandboxEntry {
        enabled: true,
        network: Network::None,
        ..SandboxEntry::default()
    };
    let listed = SandboxEntry {
        network: Network::Hosts,
        hosts: vec!["registry.npmjs.org".into()],
        ..entry.clone()
    };
    let planned_with = |entry: &SandboxEntry, launch: &stdio::StdioLaunch| {
        sandbox::plan(
            entry,
            &PlanInputs {
                home: &dirs::home_dir().unwrap(),
                roots: &roots,
                program: &launch.program,
                args: &launch.args,
                cwd: None,
                private_dir: home.path().join("private"),
            },
        )
    };
    let planned = |launch: &stdio::StdioLaunch| planned_with(&entry, launch);
    const RUNS: usize = 15;
    let (mut plain, mut boxed, mut planning, mut hosts) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let at = Instant::now();
        let server = stdio::start("plain", launch()).await.unwrap();
        plain.push(at.elapsed());
        server.stop().await;

        let at = Instant::now();
        let mut sandboxed = launch();
        let plan = planned(&sandboxed);
        planning.push(at.elapsed());
        sandboxed.cwd = Some(plan.private_dir.clone());
        sandboxed.sandbox = Some(plan);
        let server = stdio::start("sandboxed", sandboxed).await.unwrap();
        boxed.push(at.elapsed());
        server.stop().await;

        let at = Instant::now();
        let mut with_hosts = launch();
        let plan = planned_with(&listed, &with_hosts);
        with_hosts.cwd = Some(plan.private_dir.clone());
        with_hosts.sandbox = Some(plan);
        let server = stdio::start("listed", with_hosts).await.unwrap();
        hosts.push(at.elapsed());
        server.stop().await;
    }
    // The sandbox's own part without a server's start around it to blur it: a program that
    // exits at once (/bin/true), spawned and waited for, with and without the sandbox (its
    // ruleset built, its network namespace entered, Landlock applied).
    const QUICK: usize = 200;
    let (mut bare, mut confined) = (Vec::new(), Vec::new());
    let plan = planned(&launch());
    for _ in 0..QUICK {
        let at = Instant::now();
        tokio::process::Command::new("/bin/true")
            .status()
            .await
            .unwrap();
        bare.push(at.elapsed());
        let at = Instant::now();
        let mut command = tokio::process::Command::new("/bin/true");
        sandbox::linux::confine(&mut command, &plan, sandbox::linux::Route::None).unwrap();
        assert!(command.status().await.unwrap().success());
        confined.push(at.elapsed());
    }
    // A skill's script run as the model's call runs it (issue 61): its run folder made, its
    // sandbox planned and entered, both streams read, the files it wrote listed. Beside it,
    // the same `sh` script spawned bare: what a script's run costs beyond the script. Twice:
    // with the person's home and data in a folder with few neighbours (as a real home is),
    // and inside the system's temporary folder, crowded here, where every neighbour on the way
    // to a closed folder is opened one by one.
    let plain_place = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let crowded = std::fs::read_dir(std::env::temp_dir()).map_or(0, Iterator::count);
    for (label, base) in [
        ("a home with few neighbours".to_owned(), plain_place.path()),
        (
            format!("a home in a temporary folder of {crowded} entries"),
            home.path(),
        ),
    ] {
        let (sh_bare, script_runs) = script_runs(base).await;
        println!("a skill's sh script, spawned bare (median of {SCRIPTS}): {sh_bare:.2?}");
        println!(
            "the same script run as a skill's script, sandboxed, {label} (median of {SCRIPTS}): \
             {script_runs:.2?}, {:.2?} more",
            script_runs.saturating_sub(sh_bare)
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (bare, confined) = (median(bare), median(confined));
    println!("/bin/true spawned and reaped, bare (median of {QUICK}): {bare:.2?}");
    println!("/bin/true spawned and reaped, sandboxed (median of {QUICK}): {confined:.2?}");
    println!(
        "the sandbox itself adds: {:.2?}",
        confined.saturating_sub(bare)
    );
    let (plain, boxed, planning, hosts) = (
        median(plain),
        median(boxed),
        median(planning),
        median(hosts),
    );
    println!("start to ready, unsandboxed (median of {RUNS}): {plain:.1?}");
    println!("start to ready, sandboxed (median of {RUNS}): {boxed:.1?}");
    println!(
        "the sandbox adds: {:.1?} (its plan made: {planning:.2?})",
        boxed.saturating_sub(plain)
    );
    println!(
        "start to ready, sandboxed with a list of hosts and its proxy (median of {RUNS}): \
         {hosts:.1?}, {:.1?} more than unsandboxed",
        hosts.saturating_sub(plain)
    );
    println!(
        "worst machine stall seen meanwhile: {:.1?}",
        *worst_stall.lock().unwrap()
    );
}

/// How many script runs each median is of.
#[cfg(target_os = "linux")]
const SCRIPTS: usize = 100;

/// The medians of a `sh` script spawned bare and run as a skill's script, with the home, the
/// data folder and the skill under `base`.
#[cfg(target_os = "linux")]
async fn script_runs(base: &std::path::Path) -> (Duration, Duration) {
    let skill = base.join("skill");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: quick\ndescription: d\n---\n",
    )
    .unwrap();
    std::fs::write(skill.join("scripts/quick.sh"), "echo ran\n").unwrap();
    let data = base.join("data");
    let search_path = std::env::var_os("PATH").unwrap();
    let never = tokio_util::sync::CancellationToken::new();
    let (mut sh_bare, mut script_runs) = (Vec::new(), Vec::new());
    for i in 0..SCRIPTS {
        let at = Instant::now();
        let out = tokio::process::Command::new("sh")
            .arg(skill.join("scripts/quick.sh"))
            .output()
            .await
            .unwrap();
        assert!(out.status.success());
        sh_bare.push(at.elapsed());
        let place = switchboard_core::skills::scripts::Place {
            skill_dir: skill.clone(),
            work_dir: data.join(format!("skill-runs/{i}")),
            home: base.join("home"),
            closed: vec![data.clone()],
            search_path: search_path.clone(),
            env: switchboard_core::mcp::environment::server_env(
                std::env::vars_os(),
                &search_path,
                [],
            ),
        };
        let at = Instant::now();
        let ran = switchboard_core::skills::scripts::run(
            &place,
            "scripts/quick.sh",
            &[],
            None,
            Duration::from_secs(30),
            &never,
        )
        .await
        .unwrap();
        script_runs.push(at.elapsed());
        assert_eq!(ran.code, Some(0), "{ran:?}");
    }
    (median(sh_bare), median(script_runs))
}
