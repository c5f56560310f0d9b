//! mcp.json as people write it: Claude Desktop's and VS Code's shapes, mistakes, secrets.

use serde_json::json;

use super::*;
use crate::secrets::{MemoryStore, SecretStore};

const CLAUDE: &str = r#"{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/My Files"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret123", "LOG_LEVEL": "info"},
      "someFutureKey": {"kept": true}
    },
    "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer abc.def"}},
    "legacy": {"url": "http://127.0.0.1:3001/sse", "transport": "sse", "disabled": true, "timeoutSeconds": 5, "trust": "trusted"}
  }
}"#;

fn spec(file: &McpFile, name: &str) -> ServerSpec {
    file.servers[name].resolve(name).unwrap()
}

#[test]
fn claude_desktops_file_is_read_as_it_is_and_transports_are_worked_out() {
    let file = McpFile::parse(CLAUDE, "claude").unwrap();
    assert_eq!(file.servers.len(), 4);
    assert!(matches!(
        spec(&file, "filesystem").launch,
        Launch::Stdio { .. }
    ));
    assert_eq!(
        spec(&file, "remote").launch,
        Launch::Http {
            url: "https://mcp.example.com/mcp".into(),
            headers: BTreeMap::from([(
                "Authorization".into(),
                ConfigValue::Plain("Bearer abc.def".into())
            )]),
            fallback_to_sse: true,
        }
    );
    let legacy = spec(&file, "legacy");
    assert!(matches!(legacy.launch, Launch::Sse { .. }));
    assert!(legacy.disabled);
    assert_eq!(legacy.timeout_secs, Some(5));
    assert_eq!(legacy.trust, Trust::Trusted);
    assert_eq!(spec(&file, "github").trust, Trust::Ask);
}

#[test]
fn vs_codes_type_field_names_the_transport() {
    let entry: ServerEntry =
        serde_json::from_value(json!({"type": "http", "url": "http://127.0.0.1:8931/mcp"}))
            .unwrap();
    assert!(matches!(
        entry.resolve("playwright").unwrap().launch,
        Launch::Http {
            fallback_to_sse: false,
            ..
        }
    ));
}

#[test]
fn a_mistake_in_one_entry_names_the_server_and_hides_no_other() {
    let file = McpFile::parse(
        r#"{"mcpServers": {
            "empty": {},
            "both": {"command": "x", "url": "http://a"},
            "weird": {"command": "x", "transport": "carrier-pigeon"},
            "ftp": {"url": "ftp://example.com"},
            "creds": {"url": "https://user:pw@example.com/mcp"},
            "zero": {"command": "x", "timeoutSeconds": 0},
            "good": {"command": "uvx", "args": ["mcp-server-time"]}
        }}"#,
        "t",
    )
    .unwrap();
    let results = file.specs();
    let bad: Vec<String> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().err().map(ToString::to_string))
        .collect();
    assert_eq!(bad.len(), 6, "{bad:#?}");
    assert!(bad
        .iter()
        .any(|e| e.contains("“empty”") && e.contains("command")));
    assert!(bad.iter().any(|e| e.contains("not both")));
    assert!(bad.iter().any(|e| e.contains("carrier-pigeon")));
    assert!(bad.iter().any(|e| e.contains("http:// or https://")));
    assert!(bad.iter().any(|e| e.contains("credentials")));
    assert!(results.iter().any(|(n, r)| n == "good" && r.is_ok()));
    assert!(validate_name("a/b").is_err());
    assert!(validate_name(&"n".repeat(65)).is_err());
}

#[test]
fn a_syntax_error_says_where() {
    let err = McpFile::parse("{\n  \"mcpServers\": {,}\n}", "mcp.json").unwrap_err();
    match err {
        ConfigError::Syntax { line, column, .. } => assert_eq!((line, column), (2, 18)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn keys_switchboard_does_not_know_survive_a_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config").join(FILE_NAME);
    let mut file = McpFile::parse(CLAUDE, "claude").unwrap();
    file.servers.remove("remote");
    file.save(&path).unwrap();
    let again = McpFile::load(&path).unwrap();
    assert_eq!(again, file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("globalShortcut") && text.contains("someFutureKey"),
        "{text}"
    );
    assert!(!text.contains("\"remote\""));
    assert_eq!(
        McpFile::load(&dir.path().join("missing.json")).unwrap(),
        McpFile::default()
    );
}

#[test]
fn the_fingerprint_follows_what_runs_and_nothing_else() {
    let file = McpFile::parse(CLAUDE, "claude").unwrap();
    let base = file.servers["github"].clone();
    let print = base.fingerprint();
    assert_eq!(print.len(), 64);
    let mut same = base.clone();
    same.disabled = true;
    same.timeout_seconds = Some(9);
    assert_eq!(same.fingerprint(), print, "switches that run nothing new");
    for change in [
        // Calls run without asking: that is what the approval was not given for.
        |e: &mut ServerEntry| e.trust = Some(Trust::Trusted),
        |e: &mut ServerEntry| {
            e.oauth = Some(OAuthEntry {
                scopes: vec!["repo".into(), "admin:org".into()],
                ..OAuthEntry::default()
            });
        },
        |e: &mut ServerEntry| {
            e.headers.insert(
                "X-Forward-To".into(),
                ConfigValue::Plain("https://evil.example".into()),
            );
        },
        |e: &mut ServerEntry| e.transport = Some("sse".into()),
        |e: &mut ServerEntry| e.args.push("--privileged".into()),
        |e: &mut ServerEntry| e.command = Some("podman".into()),
        |e: &mut ServerEntry| {
            e.env
                .insert("LD_PRELOAD".into(), ConfigValue::Plain("/tmp/x.so".into()));
        },
        |e: &mut ServerEntry| e.cwd = Some("/tmp".into()),
    ] {
        let mut changed = base.clone();
        change(&mut changed);
        assert_ne!(changed.fingerprint(), print);
    }
}

#[test]
fn the_command_line_shown_is_exact_and_pasteable() {
    let file = McpFile::parse(CLAUDE, "claude").unwrap();
    assert_eq!(
        spec(&file, "filesystem").launch.display(),
        "npx -y @modelcontextprotocol/server-filesystem /Users/me/Desktop '/Users/me/My Files'"
    );
    let entry: ServerEntry = serde_json::from_value(json!({
        "command": "sh", "args": ["-c", "echo 'hi'; rm -rf ~"],
        "env": {"T": {"keychain": "mcp/x/env/T"}}
    }))
    .unwrap();
    assert_eq!(
        entry.resolve("x").unwrap().launch.display(),
        r#"T='<keychain:mcp/x/env/T>' sh -c 'echo '\''hi'\''; rm -rf ~'"#
    );
}

#[test]
fn secret_values_move_to_the_keychain_and_the_file_keeps_a_reference() {
    let store = MemoryStore::new();
    let mut file = McpFile::parse(CLAUDE, "claude").unwrap();
    let mut github = file.servers["github"].clone();
    let moved = move_secrets_to_keychain("github", &mut github, &store).unwrap();
    assert_eq!(moved, ["env.GITHUB_PERSONAL_ACCESS_TOKEN"]);
    assert_eq!(
        github.env["GITHUB_PERSONAL_ACCESS_TOKEN"],
        ConfigValue::Keychain {
            keychain: "mcp/github/env/GITHUB_PERSONAL_ACCESS_TOKEN".into()
        }
    );
    assert_eq!(github.env["LOG_LEVEL"], ConfigValue::Plain("info".into()));
    let mut remote = file.servers["remote"].clone();
    assert_eq!(
        move_secrets_to_keychain("remote", &mut remote, &store).unwrap(),
        ["headers.Authorization"]
    );
    file.servers.insert("github".into(), github);
    file.servers.insert("remote".into(), remote);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    file.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains("ghp_secret123") && !text.contains("abc.def"),
        "{text}"
    );
    use secrecy::ExposeSecret;
    assert_eq!(
        store
            .get("mcp/github/env/GITHUB_PERSONAL_ACCESS_TOKEN")
            .unwrap()
            .unwrap()
            .expose_secret(),
        "ghp_secret123"
    );
}

#[test]
fn an_import_from_vs_code_previews_additions_conflicts_and_mistakes() {
    let current = McpFile::parse(CLAUDE, "claude").unwrap();
    let vscode = r#"{
      "inputs": [{"type": "promptString", "id": "token", "password": true}],
      "servers": {
        "GitHub": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:token}"}},
        "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
        "broken": {"type": "stdio"}
      }
    }"#;
    let preview = ImportPreview::from_text(vscode, "mcp.json", &current).unwrap();
    let added: Vec<_> = preview.added.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(added, ["time"]);
    assert_eq!(preview.added[0].detail, "uvx mcp-server-time");
    assert_eq!(
        preview.conflicts[0].name, "GitHub",
        "names compare without case"
    );
    assert_eq!(preview.invalid[0].name, "broken");
    assert!(preview.entries().contains_key("time"));

    let fresh = ImportPreview::from_text(vscode, "mcp.json", &McpFile::default()).unwrap();
    assert_eq!(fresh.added.len(), 2);
    assert!(fresh.warnings[0].contains("GitHub") && fresh.warnings[0].contains("${input:"));
    assert!(matches!(
        ImportPreview::from_text(r#"{"theme": "dark"}"#, "x.json", &current),
        Err(ConfigError::NothingToImport(_))
    ));
    let bare = ImportPreview::from_text(
        r#"{"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}"#,
        "pasted",
        &current,
    )
    .unwrap();
    assert_eq!(bare.added[0].name, "memory");
}

#[test]
fn a_typed_command_line_becomes_an_entry_with_its_variables() {
    let entry = ServerEntry::from_typed(
        Some(r#"GITHUB_TOKEN=abc DEBUG= npx -y "@scope/server x" --dir '/my files'"#),
        None,
    )
    .unwrap();
    assert_eq!(entry.command.as_deref(), Some("npx"));
    assert_eq!(entry.args, ["-y", "@scope/server x", "--dir", "/my files"]);
    assert_eq!(entry.env["GITHUB_TOKEN"], ConfigValue::Plain("abc".into()));
    assert_eq!(entry.env["DEBUG"], ConfigValue::Plain(String::new()));
    // `a=b` after the program is an argument.
    let entry = ServerEntry::from_typed(Some("server a=b"), None).unwrap();
    assert_eq!(entry.args, ["a=b"]);
}

#[test]
fn a_typed_entry_needs_exactly_one_of_command_line_and_url() {
    let field = |c: Option<&str>, u: Option<&str>| ServerEntry::from_typed(c, u).unwrap_err().field;
    assert_eq!(field(None, Some("  ")), "command_line");
    assert_eq!(field(Some("x"), Some("http://h/mcp")), "url");
    assert_eq!(field(Some("echo 'open"), None), "command_line");
    assert_eq!(field(Some("A=1 B=2"), None), "command_line");
    assert_eq!(field(None, Some("ftp://h/mcp")), "url");
    let entry = ServerEntry::from_typed(None, Some("https://h.example/mcp")).unwrap();
    assert_eq!(entry.url.as_deref(), Some("https://h.example/mcp"));
    assert!(entry.command.is_none());
}

#[test]
fn an_oauth_client_secret_moves_to_the_keychain_whatever_it_is_called() {
    let store = MemoryStore::new();
    let file = McpFile::parse(
        r#"{"mcpServers": {"docs": {"url": "https://docs.example.com/mcp",
            "oauth": {"clientId": "switchboard", "clientSecret": "s3cret", "scopes": ["read"]}}}}"#,
        "test",
    )
    .unwrap();
    let mut docs = file.servers["docs"].clone();
    let moved = move_secrets_to_keychain("docs", &mut docs, &store).unwrap();
    assert_eq!(moved, ["oauth.clientSecret"]);
    let oauth = docs.oauth.as_ref().unwrap();
    assert_eq!(
        oauth.client_secret,
        Some(ConfigValue::Keychain {
            keychain: "mcp/docs/oauth/clientSecret".into()
        })
    );
    assert_eq!(oauth.client_id.as_deref(), Some("switchboard"));
    use secrecy::ExposeSecret;
    let kept = store.get("mcp/docs/oauth/clientSecret").unwrap().unwrap();
    assert_eq!(kept.expose_secret(), "s3cret");
}

#[test]
fn a_server_entry_cannot_name_a_provider_key_or_another_servers_secret() {
    for account in [
        "provider/OpenAI",
        "mcp/other/env/TOKEN",
        "mcp/docsx/env/TOKEN",
        "mcp/docs",
    ] {
        let mut entry = ServerEntry::from_typed(Some("docs-server --stdio"), None).unwrap();
        entry.env.insert(
            "TOKEN".into(),
            ConfigValue::Keychain {
                keychain: account.into(),
            },
        );
        let refused = entry.resolve("docs").unwrap_err().to_string();
        assert!(
            refused.contains("not its own") && refused.contains(account),
            "{refused}"
        );
    }
    let mut own = ServerEntry::from_typed(Some("docs-server --stdio"), None).unwrap();
    own.env.insert(
        "TOKEN".into(),
        ConfigValue::Keychain {
            keychain: secret_account("docs", "env", "TOKEN"),
        },
    );
    assert!(own.resolve("docs").is_ok());
    // The OAuth client secret too.
    let mut remote = ServerEntry::from_typed(None, Some("https://docs.example/mcp")).unwrap();
    remote.oauth = Some(OAuthEntry {
        client_secret: Some(ConfigValue::Keychain {
            keychain: "provider/Anthropic".into(),
        }),
        ..OAuthEntry::default()
    });
    assert!(remote.resolve("docs").is_err());
}

#[test]
fn an_import_preview_shows_every_value_whole_and_flags_what_changes_the_runtime() {
    let text = r#"{"mcpServers": {
        "notes": {"command": "npx", "args": ["-y", "notes"], "env": {"NODE_OPTIONS": "--require /tmp/x.js", "MODE": "ro"}},
        "boxed": {"command": "docker", "args": ["run", "-i", "--rm", "--privileged", "img"]},
        "docs": {"url": "https://docs.example/mcp", "headers": {"X-Region": "eu", "Authorization": "Bearer tok-123"}}
    }}"#;
    let preview = ImportPreview::from_text(text, "a file", &McpFile::default()).unwrap();
    let detail = |name: &str| {
        preview
            .added
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.detail.clone())
            .unwrap()
    };
    assert_eq!(
        detail("notes"),
        "MODE=ro NODE_OPTIONS='--require /tmp/x.js' npx -y notes"
    );
    let docs = detail("docs");
    assert!(docs.contains("header X-Region: eu"), "{docs}");
    assert!(
        docs.contains("header Authorization: Bearer tok-123"),
        "{docs}"
    );
    let warned = preview.warnings.join("\n");
    assert!(
        warned.contains("“notes” sets NODE_OPTIONS, which changes how Node.js finds or loads code"),
        "{warned}"
    );
    assert!(
        warned.contains("“boxed” runs a container with --privileged"),
        "{warned}"
    );
    assert!(!warned.contains("“docs”"), "{warned}");
}
