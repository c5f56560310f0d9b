//! Secrets never reach a file: a secret planted through every way a server is added — the
//! command line, the window's form, an edit, an import, the MCP Registry, a bundle, a link —
//! and read back to start a server that prints it, is then looked for in every file under
//! the app's home (the database, mcp.json, the app's log, servers' stderr logs, bundles).
//! None holds it. The keychain is a store in memory that tells the log what it keeps, as the
//! real one does in the app; everything else is as the app has it on disk. Unix only: its
//! servers are shell scripts (the Windows job of the CI workflow skips it).
#![cfg(unix)]

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use switchboard_core::mcp::config::ServerEntry;
use switchboard_core::policy::confirm::Always;
use switchboard_core::secrets::{Masking, MemoryStore, SecretStore};
use switchboard_core::store::Store;
use switchboard_core::{App, AppPaths};

/// Every file under `dir`, with its bytes.
fn files(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                found.push((path, bytes));
            }
        }
    }
    found
}

fn holds(bytes: &[u8], secret: &str) -> bool {
    bytes.windows(secret.len()).any(|w| w == secret.as_bytes())
}

/// A bundle whose sensitive `api_key` goes to its server's `ECHO_KEY`.
fn bundle(dir: &Path) -> std::path::PathBuf {
    use std::io::Write;
    let manifest = serde_json::json!({
        "manifest_version": "0.3",
        "name": "Echo",
        "version": "1.0.0",
        "description": "Says back what it is given.",
        "author": { "name": "Someone" },
        "server": {
            "type": "python",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "python3",
                "args": ["${__dirname}/server/main.py"],
                "env": { "ECHO_KEY": "${user_config.api_key}" }
            }
        },
        "user_config": {
            "api_key": { "type": "string", "title": "API key", "sensitive": true, "required": true }
        }
    });
    let path = dir.join("echo.mcpb");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("manifest.json", options).unwrap();
    zip.write_all(manifest.to_string().as_bytes()).unwrap();
    zip.start_file("server/main.py", options).unwrap();
    zip.write_all(b"import sys\n").unwrap();
    zip.finish().unwrap();
    path
}

#[tokio::test]
async fn a_secret_added_by_any_path_is_in_no_file_under_the_home() {
    let home = tempfile::tempdir().unwrap();
    let paths = AppPaths::under_home(home.path().to_path_buf());
    paths.create_all().unwrap();
    // The app's own log, at its most talkative, through the same scrubber the app uses.
    let logs = switchboard_core::logging::init(Some(&paths.log_dir), "off", "debug");
    let keychain = Arc::new(MemoryStore::default());
    let secrets: Arc<dyn SecretStore> = Arc::new(Masking::new(Arc::clone(&keychain), logs.masks()));
    let store = Store::open(&paths.database_file(), std::time::Duration::from_secs(5)).unwrap();
    let app: Arc<App> = App::with_store(
        store,
        support::headless_config(paths.clone(), Arc::clone(&secrets)),
    )
    .await;
    let cli = |args: &[&str]| {
        support::run_cli(
            Arc::clone(&app),
            args.iter().map(|s| (*s).to_owned()).collect(),
        )
    };
    let mut planted = Vec::new();

    // The command line: a variable and a header.
    planted.push("cli-env-0123456789");
    let (ran, said) = cli(&[
        "mcp",
        "add",
        "typed",
        "--env",
        "GITHUB_TOKEN=cli-env-0123456789",
        "--",
        "python3",
        "-c",
        "import os, sys; sys.stderr.write('token is ' + os.environ['GITHUB_TOKEN'] + '\\n')",
    ])
    .await;
    ran.unwrap();
    assert!(!said.contains("cli-env-0123456789"), "{said}");
    planted.push("cli-header-0123456789");
    let (ran, _) = cli(&[
        "mcp",
        "add",
        "remote",
        "--url",
        "https://mcp.example.com/mcp",
        "--header",
        "X-Api-Key=cli-header-0123456789",
    ])
    .await;
    ran.unwrap();

    // The window's form, then an edit of it.
    planted.push("form-value-0123456789");
    app.add_typed_server(
        "form",
        Some("SERVICE_API_KEY=form-value-0123456789 uvx some-server"),
        None,
        &Always(false),
    )
    .await
    .unwrap();
    planted.push("edit-value-0123456789");
    app.mcp_edit(
        "form",
        ServerEntry::from_typed(
            Some("DB_PASSWORD=edit-value-0123456789 uvx some-server"),
            None,
        )
        .unwrap(),
    )
    .await
    .unwrap();

    // An import.
    planted.push("import-value-0123456789");
    let preview = app
        .mcp_import_preview(
            r#"{"mcpServers":{"imported":{"command":"uvx","args":["x"],"env":{"SLACK_BOT_TOKEN":"import-value-0123456789"}}}}"#,
            "a pasted file",
        )
        .unwrap();
    app.mcp_import(&preview).await.unwrap();

    // A bundle's sensitive value.
    planted.push("bundle-value-0123456789");
    let dir = tempfile::tempdir().unwrap();
    let bundle = app.open_bundle(&bundle(dir.path())).await.unwrap();
    let mut values = BTreeMap::new();
    values.insert(
        "api_key".to_owned(),
        vec!["bundle-value-0123456789".to_owned()],
    );
    if let Err(e) = app.add_bundle(bundle, Some("echo"), &values).await {
        // Only when python3 is missing, which the test command never allows.
        panic!("the bundle was not added: {e}");
    }

    // A link cannot bring one: refused, and nothing of it kept.
    planted.push("link-value-0123456789");
    let config = r#"{"command":"uvx","args":["x"],"env":{"API_TOKEN":"link-value-0123456789"}}"#;
    let encoded: String = url::form_urlencoded::byte_serialize(config.as_bytes()).collect();
    let refused = app
        .propose(&format!(
            "switchboard://install?name=linked&config={encoded}"
        ))
        .unwrap_err()
        .to_string();
    assert!(refused.contains("cannot bring a secret"), "{refused}");
    assert!(!refused.contains("link-value-0123456789"), "{refused}");

    // The registry: the person's secret header.
    let registry = support::scripted_registry();
    planted.push("registry-value-0123456789");
    let (ran, said) = cli(&[
        "mcp",
        "install",
        "ai.adadvisor/mcp-server",
        "--value",
        "Authorization=Bearer registry-value-0123456789",
        "--as",
        "ads",
        "--registry",
        &registry.url,
    ])
    .await;
    ran.unwrap();
    assert!(!said.contains("registry-value-0123456789"), "{said}");

    // The typed server approved and started: it prints its token to stderr and exits; the
    // keychain's value is read to start it, and its stderr is kept in its log.
    let (ran, said) = cli(&["mcp", "approve", "typed", "--yes"]).await;
    ran.unwrap();
    assert!(!said.contains("cli-env-0123456789"), "{said}");
    let (ran, said) = cli(&["mcp", "tools", "typed"]).await;
    let said = format!("{said}{}", ran.err().unwrap_or_default());
    assert!(
        said.contains("token is [redacted]"),
        "the server's stderr, masked: {said}"
    );
    assert!(!said.contains("cli-env-0123456789"), "{said}");

    app.shutdown(std::time::Duration::from_secs(5)).await;
    drop(app);
    drop(logs); // flushes the log file

    let every = files(home.path());
    let log = every
        .iter()
        .find(|(p, _)| p.starts_with(&paths.log_dir) && p.extension().is_some_and(|e| e == "log"))
        .expect("the app wrote its log");
    assert!(holds(&log.1, "MCP server added"), "the log was written");
    let stderr_log = every
        .iter()
        .find(|(p, _)| p.ends_with("mcp/typed.log"))
        .expect("the typed server's stderr log");
    assert!(
        holds(&stderr_log.1, "token is [redacted]"),
        "{}",
        String::from_utf8_lossy(&stderr_log.1)
    );
    for (path, bytes) in &every {
        for secret in &planted {
            assert!(!holds(bytes, secret), "{} holds {secret}", path.display());
        }
    }
    // Each went to the keychain (or, from the link, nowhere).
    for secret in planted.iter().filter(|s| !s.starts_with("link")) {
        assert!(keychain.holds_value(secret), "{secret} is in the keychain");
    }

    // Every folder the app made is the person's alone.
    use std::os::unix::fs::PermissionsExt;
    for dir in [
        home.path(),
        &paths.config_dir,
        &paths.data_dir,
        &paths.log_dir,
    ] {
        let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "{} is {mode:o}", dir.display());
    }
    for file in [
        paths.database_file(),
        app_file(&paths, "mcp.json"),
        stderr_log.0.clone(),
        log.0.clone(),
    ] {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is {mode:o}", file.display());
    }
    // And everything else under the home: settings, the bundle's files, the locks, the
    // record of servers' processes, the folders they are in.
    let mut open_to_others = Vec::new();
    for (path, _) in &every {
        for p in path.ancestors().take_while(|p| p.starts_with(home.path())) {
            let mode = std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                open_to_others.push(format!("{} is {mode:o}", p.display()));
            }
        }
    }
    open_to_others.dedup();
    assert!(open_to_others.is_empty(), "{open_to_others:#?}");
}

fn app_file(paths: &AppPaths, name: &str) -> std::path::PathBuf {
    paths.config_dir.join(name)
}
