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
    assert!(said.contains("It has scripts: the model can read them; nothing runs them."));
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
