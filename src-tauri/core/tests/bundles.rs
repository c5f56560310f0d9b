//! MCP bundles (`.mcpb`), built here as zip files around a tiny stdlib-only Python server
//! (tests/peers/raw_server.py): installed with `switchboard mcp install FILE.mcpb` (its values
//! asked for, a sensitive one to the keychain), run, and removed with its folder; and hostile
//! ones refused before anything is unpacked — a `../` path, a link, a 2 GB declared entry, a
//! zip bomb, an unknown manifest version, a missing entry point, another platform's bundle.

mod support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use switchboard_core::mcp::bundle::{Bundle, BundleError};
use switchboard_core::secrets::MemoryStore;
#[cfg(unix)]
use switchboard_core::secrets::SecretStore;
use zip::write::SimpleFileOptions;

fn manifest(version: &str) -> serde_json::Value {
    json!({
        "manifest_version": version,
        "name": "Echo Bundle",
        "display_name": "Echo <b>Bundle</b>",
        "version": "1.2.0",
        "description": "Says back what it is given.",
        "author": { "name": "Someone", "url": "https://example.com" },
        "server": {
            "type": "python",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "python3",
                "args": ["${__dirname}/server/main.py", "${user_config.folders}"],
                "env": { "ECHO_KEY": "${user_config.api_key}", "ECHO_MODE": "${user_config.mode}" }
            }
        },
        "tools": [{ "name": "echo", "description": "Says it back" }],
        "user_config": {
            "api_key": { "type": "string", "title": "API key", "sensitive": true, "required": true },
            "folders": { "type": "directory", "title": "Folders", "multiple": true, "default": ["/srv/a"] },
            "mode": { "type": "string", "title": "Mode", "default": "plain" }
        }
    })
}

/// A bundle at `dir/name` holding `manifest` and `files` (name, bytes).
fn bundle(
    dir: &Path,
    name: &str,
    manifest: &serde_json::Value,
    files: &[(&str, Vec<u8>)],
) -> PathBuf {
    let path = dir.join(name);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = SimpleFileOptions::default();
    zip.start_file("manifest.json", options).unwrap();
    zip.write_all(manifest.to_string().as_bytes()).unwrap();
    for (file, bytes) in files {
        zip.start_file(*file, options.unix_permissions(0o755))
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    path
}

fn server() -> Vec<u8> {
    std::fs::read(support::peers().join("raw_server.py")).unwrap()
}

fn refused(path: &Path) -> BundleError {
    Bundle::open(path).expect_err("the bundle is refused")
}

// Unix paths and `python3`: the Windows job of the CI workflow skips it.
#[cfg(unix)]
#[tokio::test]
async fn a_bundle_is_installed_from_the_command_line_runs_and_goes_with_its_server() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::default());
    let app = support::app_without_a_model(home.path(), store.clone()).await;
    let file = bundle(
        dir.path(),
        "echo.mcpb",
        &manifest("0.3"),
        &[("server/main.py", server())],
    );
    let file = file.display().to_string();
    let install = |more: &[&str]| {
        let mut args = vec!["mcp".to_owned(), "install".to_owned(), file.clone()];
        args.extend(more.iter().map(|s| (*s).to_owned()));
        support::run_cli(Arc::clone(&app), args)
    };

    // What it is, shown first; a required value left out is asked for, nothing unpacked.
    let (ran, said) = install(&["--yes"]).await;
    assert!(
        said.contains("Echo <b>Bundle</b> 1.2.0 by Someone"),
        "{said}"
    );
    assert!(said.contains("tools: echo"), "{said}");
    assert!(
        said.contains("asks for api_key (string, required, kept in the keychain)"),
        "{said}"
    );
    assert!(
        said.contains(
            "runs: ECHO_KEY=${user_config.api_key} ECHO_MODE=${user_config.mode} python3 <bundle>/server/main.py ${user_config.folders}"
        ),
        "{said}"
    );
    let err = ran.unwrap_err();
    assert!(
        err.contains("needs a value for api_key: give each with --value"),
        "{err}"
    );
    let bundles = app.paths().bundles_dir();
    assert!(!bundles.exists() || std::fs::read_dir(&bundles).unwrap().next().is_none());

    let (ran, said) = install(&[
        "--value",
        "api_key=sk-bundle-secret",
        "--value",
        "folders=/srv/one",
        "--value",
        "folders=/srv/two",
        "--yes",
    ])
    .await;
    ran.unwrap();
    assert!(
        said.contains("Added “echo-bundle” from the bundle."),
        "{said}"
    );
    assert!(said.contains("Approved"), "{said}");
    let written = std::fs::read_to_string(app.mcp_file()).unwrap();
    assert!(!written.contains("sk-bundle-secret"), "{written}");
    let config: serde_json::Value = serde_json::from_str(&written).unwrap();
    let entry = &config["mcpServers"]["echo-bundle"];
    let folder = bundles.join("echo-bundle");
    assert_eq!(entry["cwd"], folder.display().to_string());
    assert_eq!(entry["command"], "python3");
    assert_eq!(
        entry["args"],
        json!([
            folder.join("server/main.py").display().to_string(),
            "/srv/one",
            "/srv/two"
        ])
    );
    assert_eq!(entry["env"]["ECHO_MODE"], "plain");
    let account = entry["env"]["ECHO_KEY"]["keychain"].as_str().unwrap();
    assert_eq!(
        secrecy::ExposeSecret::expose_secret(&store.get(account).unwrap().unwrap()),
        "sk-bundle-secret"
    );
    assert!(folder.join("server/main.py").is_file());
    assert_eq!(
        std::fs::read_to_string(folder.join(".switchboard-server")).unwrap(),
        "echo-bundle"
    );

    // It runs.
    let (ran, said) = support::run_cli(
        Arc::clone(&app),
        [
            "mcp",
            "call",
            "echo-bundle",
            "echo",
            r#"{"text":"from the bundle"}"#,
        ]
        .map(str::to_owned)
        .to_vec(),
    )
    .await;
    ran.unwrap();
    assert!(said.contains("from the bundle"), "{said}");

    // Installed again it needs another name; removed, its folder goes with it.
    let (ran, _) = install(&["--value", "api_key=x", "--yes"]).await;
    assert!(ran.unwrap_err().contains("already exists"));
    // An entry that names another server's bundle folder does not take it when removed.
    let (ran, said) = support::run_cli(
        Arc::clone(&app),
        ["mcp", "add", "squatter", "--", "python3", "x.py"]
            .map(str::to_owned)
            .to_vec(),
    )
    .await;
    ran.unwrap_or_else(|e| panic!("{e}: {said}"));
    let file = app.mcp_file();
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    config["mcpServers"]["squatter"]["cwd"] = json!(folder.display().to_string());
    std::fs::write(&file, config.to_string()).unwrap();
    let (ran, _) = support::run_cli(
        Arc::clone(&app),
        ["mcp", "remove", "squatter"].map(str::to_owned).to_vec(),
    )
    .await;
    ran.unwrap();
    assert!(
        folder.join("server/main.py").is_file(),
        "not the squatter's to remove"
    );
    let (ran, _) = support::run_cli(
        Arc::clone(&app),
        ["mcp", "remove", "echo-bundle"].map(str::to_owned).to_vec(),
    )
    .await;
    ran.unwrap();
    assert!(!folder.exists());
}

#[test]
fn hostile_bundles_are_refused_before_anything_is_unpacked() {
    let dir = tempfile::tempdir().unwrap();
    let ok = manifest("0.3");
    let main = ("server/main.py", server());

    let escape = bundle(
        dir.path(),
        "escape.mcpb",
        &ok,
        &[main.clone(), ("../evil.txt", b"x".to_vec())],
    );
    assert!(matches!(refused(&escape), BundleError::UnsafePath(p) if p == "../evil.txt"));

    let unknown = bundle(
        dir.path(),
        "unknown.mcpb",
        &manifest("9.0"),
        std::slice::from_ref(&main),
    );
    let err = refused(&unknown);
    assert!(matches!(&err, BundleError::UnknownVersion(v) if v == "9.0"));
    assert!(err.to_string().contains("0.1, 0.2, 0.3"), "{err}");

    let mut elsewhere = ok.clone();
    elsewhere["server"]["entry_point"] = json!("server/missing.py");
    let missing = bundle(
        dir.path(),
        "missing.mcpb",
        &elsewhere,
        std::slice::from_ref(&main),
    );
    assert!(matches!(refused(&missing), BundleError::NoEntryPoint(_)));

    let mut other = ok.clone();
    other["compatibility"] = json!({ "platforms": ["plan9"] });
    let platform = bundle(
        dir.path(),
        "platform.mcpb",
        &other,
        std::slice::from_ref(&main),
    );
    assert!(matches!(refused(&platform), BundleError::Platform { .. }));

    // 8 MiB of zeros deflate to a few KiB: a bomb's ratio.
    let bomb = bundle(
        dir.path(),
        "bomb.mcpb",
        &ok,
        &[main.clone(), ("data.bin", vec![0; 8 << 20])],
    );
    assert!(matches!(refused(&bomb), BundleError::Bomb { ratio, .. } if ratio > 200));

    // A link in a bundle could point anywhere.
    let linked = dir.path().join("link.mcpb");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&linked).unwrap());
    let options = SimpleFileOptions::default();
    zip.start_file("manifest.json", options).unwrap();
    zip.write_all(ok.to_string().as_bytes()).unwrap();
    zip.start_file("server/main.py", options).unwrap();
    zip.write_all(&main.1).unwrap();
    zip.add_symlink("server/home", "/home", options).unwrap();
    zip.finish().unwrap();
    assert!(matches!(refused(&linked), BundleError::UnsafePath(p) if p == "server/home"));

    // An entry that says it unpacks to 2 GB (its size in the central directory rewritten).
    let huge = bundle(
        dir.path(),
        "huge.mcpb",
        &ok,
        &[main.clone(), ("big.bin", b"small".to_vec())],
    );
    let mut bytes = std::fs::read(&huge).unwrap();
    let name = b"big.bin";
    let central = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == [0x50, 0x4b, 0x01, 0x02])
        .map(|(i, _)| i)
        .find(|&i| bytes[i + 46..].starts_with(name))
        .expect("the central directory names big.bin");
    bytes[central + 24..central + 28].copy_from_slice(&0x8000_0000u32.to_le_bytes());
    std::fs::write(&huge, bytes).unwrap();
    assert!(matches!(refused(&huge), BundleError::TooLarge { bytes, .. } if bytes == 0x8000_0000));

    let garbage = dir.path().join("garbage.mcpb");
    std::fs::write(&garbage, b"not a zip").unwrap();
    assert!(matches!(refused(&garbage), BundleError::NotZip(_)));
}

#[test]
fn a_bundle_without_mcp_config_runs_as_its_type_says_and_keeps_secrets_off_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut node = manifest("0.2");
    node["server"] = json!({ "type": "node", "entry_point": "index.js" });
    node["user_config"] = json!({});
    let file = bundle(
        dir.path(),
        "node.mcpb",
        &node,
        &[("index.js", b"//".to_vec())],
    );
    let opened = Bundle::open(&file).unwrap();
    assert_eq!(opened.info().command_line, "node <bundle>/index.js");
    let target = dir.path().join("unpacked");
    let plan = opened.plan(&target, &Default::default()).unwrap();
    assert_eq!(plan.entry.command.as_deref(), Some("node"));
    assert_eq!(
        plan.entry.args,
        [target.join("index.js").display().to_string()]
    );
    assert_eq!(plan.runtime.as_deref(), Some("node"));
    opened.unpack(&target).unwrap();
    assert!(target.join("index.js").is_file());
    assert!(
        opened.unpack(&target).is_err(),
        "never unpacked over a folder"
    );

    let mut leaky = manifest("0.3");
    leaky["server"]["mcp_config"]["args"] = json!(["--key=${user_config.api_key}"]);
    let file = bundle(
        dir.path(),
        "leaky.mcpb",
        &leaky,
        &[("server/main.py", server())],
    );
    let mut values = std::collections::BTreeMap::new();
    values.insert("api_key".to_owned(), vec!["sk".to_owned()]);
    let err = Bundle::open(&file)
        .unwrap()
        .plan(&target, &values)
        .unwrap_err();
    assert!(matches!(err, BundleError::SecretOnCommandLine(k) if k == "api_key"));
}

#[test]
fn a_bundle_may_point_its_runtime_at_its_own_folder_and_nowhere_else() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("unpacked");
    let mut values = std::collections::BTreeMap::new();
    values.insert("api_key".to_owned(), vec!["typed".to_owned()]);
    let with_env = |name: &str, env: serde_json::Value| {
        let mut m = manifest("0.3");
        m["server"]["mcp_config"]["env"] = env;
        let file = bundle(dir.path(), name, &m, &[("server/main.py", server())]);
        Bundle::open(&file).unwrap().plan(&target, &values)
    };
    // Its own lib folder: what Python bundles do.
    let plan = with_env(
        "own.mcpb",
        json!({ "PYTHONPATH": "${__dirname}/server/lib" }),
    )
    .unwrap();
    assert_eq!(
        plan.entry.env["PYTHONPATH"],
        switchboard_core::mcp::config::ConfigValue::Plain(
            target.join("server/lib").display().to_string()
        )
    );
    // Anything else that changes what the runtime loads is refused, with its reason.
    for (name, env) in [
        ("preload.mcpb", json!({ "LD_PRELOAD": "/tmp/x.so" })),
        (
            "options.mcpb",
            json!({ "NODE_OPTIONS": "--require /tmp/x.js" }),
        ),
        (
            "escape.mcpb",
            json!({ "PYTHONPATH": "${__dirname}/../../elsewhere" }),
        ),
        (
            "index.mcpb",
            json!({ "PIP_INDEX_URL": "https://evil.example" }),
        ),
    ] {
        let err = with_env(name, env).unwrap_err();
        assert!(
            matches!(&err, BundleError::Refused(why) if why.contains("finds or loads code")),
            "{name}: {err}"
        );
    }
}

/// Files dropped on the window: each bundle offered for consent (nothing unpacked, nothing
/// added) or refused with its reason; the other files attached together.
#[tokio::test]
async fn dropped_bundles_are_offered_for_consent_and_other_files_attached() {
    use switchboard_core::app::DropEvent;
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let app = support::app_without_a_model(home.path(), Arc::new(MemoryStore::default())).await;
    let good = bundle(
        dir.path(),
        "Echo.MCPB",
        &manifest("0.3"),
        &[("server/main.py", server())],
    );
    let broken = dir.path().join("broken.mcpb");
    std::fs::write(&broken, "not a zip").unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "plain words").unwrap();

    let told = app.take_dropped(vec![notes.clone(), good, broken]).await;
    assert_eq!(told.len(), 3, "{told:?}");
    let DropEvent::Bundle { offered } = &told[0] else {
        panic!("{told:?}")
    };
    assert_eq!(offered.file_name, "Echo.MCPB");
    assert_eq!(offered.info.name, "Echo Bundle");
    let DropEvent::BundleRefused { file_name, reason } = &told[1] else {
        panic!("{told:?}")
    };
    assert_eq!(file_name, "broken.mcpb");
    assert!(!reason.is_empty());
    let DropEvent::Dropped { attached } = &told[2] else {
        panic!("{told:?}")
    };
    assert_eq!(attached.kept.len(), 1);
    assert_eq!(attached.kept[0].name, "notes.txt");
    // Offered, not installed: nothing unpacked, no server added.
    let bundles = app.paths().bundles_dir();
    assert!(!bundles.exists() || std::fs::read_dir(&bundles).unwrap().next().is_none());
    assert!(app.mcp_servers().await.unwrap().is_empty());

    // Only bundles dropped: no empty attachment news.
    let again = bundle(
        dir.path(),
        "again.mcpb",
        &manifest("0.3"),
        &[("server/main.py", server())],
    );
    let told = app.take_dropped(vec![again]).await;
    assert!(
        matches!(told.as_slice(), [DropEvent::Bundle { .. }]),
        "{told:?}"
    );
}
