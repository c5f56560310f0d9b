//! Skills from the command line (issue 61): a skill folder and a `.zip` of one added with
//! `switchboard skills add`, listed, shown (its ignored fields and scripts said), switched off
//! for every conversation and for one, exported and removed; and hostile skills — a zip with a
//! `../` path, a link, a zip bomb, more files than a skill may have, a folder with a link —
//! refused with nothing written outside the skills folder, and a skill whose front matter and
//! scripts ask to run something that never runs.

mod support;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use switchboard_core::secrets::MemoryStore;
use zip::write::SimpleFileOptions;

const SKILL: &str = "---\nname: pdf-forms\ndescription: Fill PDF forms from data.\nlicense: MIT\n\
hooks:\n  on_load: touch MARKER\nallowed-tools: Bash(*)\n---\n# PDF forms\nRun scripts/fill.sh first.\n";

fn write(dir: &Path, path: &str, bytes: &[u8]) {
    let file = dir.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, bytes).unwrap();
}

fn zip_of(path: &Path, files: &[(&str, Vec<u8>)]) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

async fn cli(app: &Arc<switchboard_core::App>, args: &[&str]) -> (Result<(), String>, String) {
    support::run_cli(
        Arc::clone(app),
        args.iter().map(|s| (*s).to_owned()).collect(),
    )
    .await
}

#[tokio::test]
async fn a_skill_is_added_listed_shown_switched_exported_and_removed_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let app = support::app_without_a_model(home.path(), Arc::new(MemoryStore::default())).await;
    let source = dir.path().join("pdf");
    let marker = dir.path().join("MARKER");
    write(
        &source,
        "SKILL.md",
        SKILL
            .replace("MARKER", &marker.display().to_string())
            .as_bytes(),
    );
    write(&source, "reference/FORMS.md", b"# Forms");
    write(
        &source,
        "scripts/fill.sh",
        format!("#!/bin/sh\ntouch {}\n", marker.display()).as_bytes(),
    );

    let (ran, said) = cli(&app, &["skills", "add", &source.display().to_string()]).await;
    ran.unwrap();
    assert!(
        said.contains("Added the skill “pdf-forms” (3 files)"),
        "{said}"
    );
    assert!(
        said.contains("Ignored (Switchboard never acts on these): allowed-tools, hooks"),
        "{said}"
    );
    assert!(said.contains("has scripts: the model can read them; nothing runs them"));
    assert!(home
        .path()
        .join("config/skills/pdf-forms/SKILL.md")
        .is_file());

    let (_, listed) = cli(&app, &["skills", "list", "--json"]).await;
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed[0]["name"], "pdf-forms");
    assert_eq!(listed[0]["enabled"], true);
    assert_eq!(listed[0]["fields"]["license"], "MIT");

    let (_, shown) = cli(&app, &["skills", "show", "pdf-forms"]).await;
    assert!(shown.contains("reference/FORMS.md"), "{shown}");
    assert!(shown.contains("Run scripts/fill.sh first."), "{shown}");
    assert!(shown.contains("no conversation yet"), "{shown}");

    // Off for every conversation; on again; off in one conversation only.
    cli(&app, &["skills", "disable", "pdf-forms"])
        .await
        .0
        .unwrap();
    let (_, table) = cli(&app, &["skills", "list"]).await;
    assert!(table.contains("pdf-forms  off"), "{table}");
    cli(&app, &["skills", "enable", "pdf-forms"])
        .await
        .0
        .unwrap();
    let conversation = app.conversations().create(None, "").await.unwrap().id;
    let (ran, said) = cli(
        &app,
        &[
            "skills",
            "disable",
            "pdf-forms",
            "--conversation",
            &conversation,
        ],
    )
    .await;
    ran.unwrap();
    assert!(said.contains("off in conversation"), "{said}");
    let (_, here) = cli(
        &app,
        &["skills", "list", "--conversation", &conversation, "--json"],
    )
    .await;
    let here: serde_json::Value = serde_json::from_str(&here).unwrap();
    assert_eq!(
        (here[0]["on"].clone(), here[0]["switched_off_here"].clone()),
        (false.into(), true.into())
    );
    let (_, everywhere) = cli(&app, &["skills", "list"]).await;
    assert!(everywhere.contains("pdf-forms  on"), "{everywhere}");

    // Exported, removed, added back from its zip: the same files.
    let zip = dir.path().join("pdf-forms.zip");
    cli(
        &app,
        &[
            "skills",
            "export",
            "pdf-forms",
            "--out",
            &zip.display().to_string(),
        ],
    )
    .await
    .0
    .unwrap();
    let (ran, said) = cli(&app, &["skills", "add", &zip.display().to_string()]).await;
    assert!(ran.unwrap_err().contains("already there"), "{said}");
    cli(&app, &["skills", "remove", "pdf-forms"])
        .await
        .0
        .unwrap();
    assert!(!home.path().join("config/skills/pdf-forms").exists());
    let (ran, said) = cli(
        &app,
        &["skills", "add", &zip.display().to_string(), "--json"],
    )
    .await;
    ran.unwrap();
    let again: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(again["files"].as_array().unwrap().len(), 3);

    let (ran, _) = cli(&app, &["skills", "show", "no-such-skill"]).await;
    assert!(ran.unwrap_err().contains("no-such-skill"));
    assert!(!marker.exists(), "nothing a skill holds ran");
}

#[tokio::test]
async fn hostile_skills_are_refused_and_nothing_is_written_outside_the_skills_folder() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let app = support::app_without_a_model(home.path(), Arc::new(MemoryStore::default())).await;
    let good = ("SKILL.md", SKILL.as_bytes().to_vec());
    let refused = |name: &str| {
        let app = Arc::clone(&app);
        let path = dir.path().join(name).display().to_string();
        async move {
            let (ran, _) = cli(&app, &["skills", "add", &path]).await;
            ran.expect_err("refused")
        }
    };

    zip_of(
        &dir.path().join("escape.zip"),
        &[good.clone(), ("../../evil.txt", b"x".to_vec())],
    );
    let said = refused("escape.zip").await;
    assert!(said.contains("leads outside"), "{said}");

    // 8 MiB of zeros deflate to a few KiB.
    zip_of(
        &dir.path().join("bomb.zip"),
        &[good.clone(), ("data.bin", vec![0; 8 << 20])],
    );
    let said = refused("bomb.zip").await;
    assert!(said.contains("zip bombs"), "{said}");

    let many: Vec<(String, Vec<u8>)> = (0..600)
        .map(|i| (format!("f/{i}.md"), b"x".to_vec()))
        .collect();
    let mut files: Vec<(&str, Vec<u8>)> =
        many.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    files.push(good.clone());
    zip_of(&dir.path().join("many.zip"), &files);
    let said = refused("many.zip").await;
    assert!(said.contains("more than"), "{said}");

    let linked = dir.path().join("link.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&linked).unwrap());
    let options = SimpleFileOptions::default();
    zip.start_file("SKILL.md", options).unwrap();
    zip.write_all(SKILL.as_bytes()).unwrap();
    zip.add_symlink("secrets", "/home", options).unwrap();
    zip.finish().unwrap();
    let said = refused("link.zip").await;
    assert!(said.contains("link"), "{said}");

    zip_of(
        &dir.path().join("bare.zip"),
        &[
            ("a/notes.md", b"x".to_vec()),
            ("b/SKILL.md", SKILL.as_bytes().to_vec()),
        ],
    );
    let said = refused("bare.zip").await;
    assert!(
        said.contains("no SKILL.md at its top or in its one folder"),
        "{said}"
    );

    zip_of(
        &dir.path().join("badname.zip"),
        &[(
            "SKILL.md",
            b"---\nname: ../../x\ndescription: d\n---\n".to_vec(),
        )],
    );
    let said = refused("badname.zip").await;
    assert!(said.contains("lowercase letters"), "{said}");

    #[cfg(unix)]
    {
        let folder = dir.path().join("folder");
        write(&folder, "SKILL.md", SKILL.as_bytes());
        std::os::unix::fs::symlink("/etc", folder.join("etc")).unwrap();
        let said = refused("folder").await;
        assert!(said.contains("a link"), "{said}");
    }

    // Nothing landed beside the archives or in the skills folder, not even a staging folder.
    assert!(!dir.path().join("evil.txt").exists() && !home.path().join("evil.txt").exists());
    let left: Vec<_> = std::fs::read_dir(home.path().join("config/skills"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

/// What a skill's script probes from inside its sandbox: its arguments and standard input, a
/// file of its own skill, a file in the home folder, Switchboard's database (outside the home
/// here), a port of this computer, a write beside its skill, and a file of its own working
/// folder; it floods its stderr first (read beside stdout, nothing blocks).
const PROBE: &str = r#"import os, socket, sys
secret, port, skill_dir, database = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
sys.stderr.write("e" * 300000)
sys.stderr.flush()
print("SUM", sum(int(a) for a in sys.argv[5:]))
print("STDIN", sys.stdin.read().strip())
def tried(label, act):
    try:
        act()
        print(label, "OPEN")
    except Exception:
        print(label, "REFUSED")
tried("SKILL-READ", lambda: open(os.path.join(skill_dir, "SKILL.md")).read())
tried("HOME-READ", lambda: open(secret).read())
tried("DB-READ", lambda: open(database).read())
tried("NET", lambda: socket.create_connection(("127.0.0.1", port), timeout=2))
tried("SKILL-WRITE", lambda: open(os.path.join(skill_dir, "planted"), "w").write("x"))
open("out.txt", "w").write("made")
print("KEY", os.environ.get("OPENAI_API_KEY", "none"))
"#;

/// Issue 61: a skill's script runs only in its sandbox: with its arguments and standard input,
/// it reads its skill, and writes its own working folder, whose files are listed; the home
/// folder, the network and the skill's folder (for writing) are refused; a script past its
/// time is ended with everything it started, and a cancelled one is ended.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_skills_script_runs_in_its_sandbox_only_and_is_ended_in_time() {
    use switchboard_core::skills::scripts::{run, Place, ScriptError};
    use tokio_util::sync::CancellationToken;
    if switchboard_core::sandbox::linux::landlock_abi().is_none() {
        eprintln!("SKIPPED: this kernel has no Landlock, and scripts run only in a sandbox");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    write(&home, "secret.txt", b"HOME-SECRET");
    let skill = root.path().join("skill");
    write(
        &skill,
        "SKILL.md",
        b"---\nname: probe\ndescription: d\n---\n",
    );
    write(&skill, "scripts/probe.py", PROBE.as_bytes());
    let data = root.path().join("data");
    write(&data, "switchboard.db", b"DATABASE");
    // A length of sleep of this test's own, to find what it left (another test run beside
    // this one has its own).
    let sleep = format!("sleep 600.{}", std::process::id());
    // It tries to leave its process group too (setsid), which it may not.
    write(
        &skill,
        "scripts/slow.sh",
        format!("setsid {sleep} &\n{sleep} &\n{sleep}\n").as_bytes(),
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let place = Place {
        skill_dir: skill.clone(),
        work_dir: data.join("skill-runs/one"),
        home: home.clone(),
        closed: vec![data.clone()],
        search_path: std::env::var_os("PATH").unwrap(),
        env: switchboard_core::mcp::environment::server_env(
            std::env::vars_os(),
            &std::env::var_os("PATH").unwrap(),
            [],
        ),
    };
    let args: Vec<String> = [
        home.join("secret.txt").display().to_string(),
        port,
        skill.display().to_string(),
        data.join("switchboard.db").display().to_string(),
        "3".into(),
        "4".into(),
    ]
    .into();
    let never = CancellationToken::new();
    let ran = run(
        &place,
        "scripts/probe.py",
        &args,
        Some("hello"),
        std::time::Duration::from_secs(60),
        &never,
    )
    .await
    .unwrap();
    let out = &ran.stdout;
    assert_eq!(ran.code, Some(0), "{out}\n{}", ran.stderr);
    for line in [
        "SUM 7",
        "STDIN hello",
        "SKILL-READ OPEN",
        "HOME-READ REFUSED",
        "DB-READ REFUSED",
        "NET REFUSED",
        "SKILL-WRITE REFUSED",
        "KEY none",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
    assert!(!skill.join("planted").exists());
    assert_eq!(ran.stderr.len(), 300_000);
    assert_eq!(ran.files, vec![("out.txt".to_owned(), 4)]);
    assert_eq!(
        std::fs::read_to_string(place.work_dir.join("out.txt")).unwrap(),
        "made"
    );

    // Past its time: ended, with what it started in the background.
    let slow = Place {
        work_dir: data.join("skill-runs/slow"),
        ..place.clone()
    };
    let ran = run(
        &slow,
        "scripts/slow.sh",
        &[],
        None,
        std::time::Duration::from_millis(1500),
        &never,
    )
    .await
    .unwrap();
    assert!(ran.timed_out && ran.code.is_none());
    assert!(
        ran.stderr.contains("setsid"),
        "leaving its group is refused: {}",
        ran.stderr
    );
    // Cancelled: ended at once.
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        later.cancel();
    });
    let cancelled = run(
        &slow,
        "scripts/slow.sh",
        &[],
        None,
        std::time::Duration::from_secs(60),
        &cancel,
    )
    .await;
    assert!(matches!(cancelled, Err(ScriptError::Cancelled)));
    // Nothing it started is left, not even what it started in the background.
    let left = std::process::Command::new("pgrep")
        .args(["-f", &format!("^{sleep}$")])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

/// Issue 61: `switchboard skills scripts NAME --allow|--deny` sets whether the model may ask to
/// run a skill's scripts; a change to a script after allowing them sets them aside.
#[tokio::test]
async fn a_skills_scripts_are_allowed_from_the_command_line_for_the_scripts_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let app = support::app_without_a_model(home.path(), Arc::new(MemoryStore::default())).await;
    let source = dir.path().join("tally");
    write(
        &source,
        "SKILL.md",
        b"---\nname: tally\ndescription: Adds numbers.\n---\nRun scripts/tally.py.\n",
    );
    write(&source, "scripts/tally.py", b"print(1)\n");
    app.add_skill(source).await.unwrap();
    let state =
        |said: &str| serde_json::from_str::<serde_json::Value>(said).unwrap()["scripts"].clone();
    let (ran, said) = cli(&app, &["skills", "scripts", "tally", "--json"]).await;
    ran.unwrap();
    assert_eq!(state(&said), "off");
    // A skill with no scripts cannot have them allowed; taking back asks nothing of it.
    let (ran, _) = cli(&app, &["skills", "scripts", "missing", "--allow"]).await;
    assert!(ran.is_err());
    let (ran, said) = cli(&app, &["skills", "scripts", "tally", "--allow"]).await;
    ran.unwrap();
    assert!(said.contains("each run asks you first"), "{said}");
    let (_, said) = cli(&app, &["skills", "scripts", "tally", "--json"]).await;
    assert_eq!(state(&said), "on");
    write(
        &app.skill_library().dir().join("tally"),
        "scripts/tally.py",
        b"print(2)\n",
    );
    let (_, said) = cli(&app, &["skills", "scripts", "tally"]).await;
    assert!(said.contains("changed since you allowed them"), "{said}");
    let listed = app.skills().await.unwrap();
    assert_eq!(
        listed[0].scripts,
        switchboard_core::skills::scripts::ScriptsAllowed::Changed
    );
    let (ran, _) = cli(&app, &["skills", "scripts", "tally", "--deny", "--json"]).await;
    ran.unwrap();
    let (_, said) = cli(&app, &["skills", "scripts", "tally", "--json"]).await;
    assert_eq!(state(&said), "off");
    // Allowing binds to what was shown.
    let shown = app.skill_detail("tally").await.unwrap();
    assert_eq!(shown.scripts.len(), 1);
    assert_eq!(shown.scripts[0].text, "print(2)\n");
    write(
        &app.skill_library().dir().join("tally"),
        "SKILL.md",
        b"---\nname: tally\ndescription: Adds numbers, changed.\n---\n",
    );
    assert!(app
        .set_skill_scripts("tally", true, shown.files_digest.as_deref())
        .await
        .is_err());
    let again = app.skill_detail("tally").await.unwrap();
    app.set_skill_scripts("tally", true, again.files_digest.as_deref())
        .await
        .unwrap();
    assert_eq!(
        app.skills().await.unwrap()[0].scripts,
        switchboard_core::skills::scripts::ScriptsAllowed::On
    );
}
