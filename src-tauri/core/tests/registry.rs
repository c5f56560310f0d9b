//! Finding servers in the MCP Registry, against a scripted registry
//! (tests/peers/registry_server.py, the registry's v0.1 API over the recorded entries of
//! tests/fixtures/registry), never the network: a search read page by page, what each server
//! needs, a registry that fails, `switchboard mcp search` and `mcp install`, and the window's
//! Browse and Install (the registry Settings names; approval asked as for any new server).

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use switchboard_core::app::InstallRequest;
use switchboard_core::policy::confirm::{Allowance, Confirm, ServerApprovalRequest, ToolChange};
use switchboard_core::CoreError;

use switchboard_core::mcp::registry::{self, RegistryError, SourceKind};
use switchboard_core::secrets::{MemoryStore, SecretStore};

use support::scripted_registry as registry;

#[tokio::test]
async fn a_search_is_read_page_by_page_with_what_each_server_needs() {
    let registry = registry();
    let first = registry::search(&registry.url, "SERVER", None, 2, registry::Icons::Fetched)
        .await
        .unwrap();
    assert_eq!(first.servers.len(), 2);
    let mut names: Vec<String> = first.servers.iter().map(|s| s.name.clone()).collect();
    let mut cursor = first.next_cursor.clone();
    while let Some(next) = cursor {
        let page = registry::search(
            &registry.url,
            "SERVER",
            Some(&next),
            2,
            registry::Icons::Fetched,
        )
        .await
        .unwrap();
        names.extend(page.servers.iter().map(|s| s.name.clone()));
        cursor = page.next_cursor;
    }
    assert_eq!(
        names,
        [
            "io.github.modelcontextprotocol/server-everything",
            "io.github.modelcontextprotocol/server-filesystem",
            "io.github.modelcontextprotocol/server-time",
            "io.github.github/github-mcp-server",
            "ai.adadvisor/mcp-server",
        ]
    );

    // A server that names an icon has it as a data: URL (fetched by Rust from the registry's
    // own origin here; the window loads no remote image); the others have none.
    let adadvisor = registry::search(
        &registry.url,
        "adadvisor",
        None,
        30,
        registry::Icons::Fetched,
    )
    .await
    .unwrap();
    let icon = adadvisor.servers[0].icon.as_deref().expect("its icon");
    assert!(
        icon.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{icon}"
    );

    let time = registry::search(&registry.url, "time", None, 30, registry::Icons::Fetched)
        .await
        .unwrap();
    assert_eq!(time.servers.len(), 1);
    assert!(time.next_cursor.is_none());
    let server = &time.servers[0];
    assert!(server.icon.is_none());
    assert_eq!(server.version, "2026.10.19");
    assert_eq!(
        server.repository.as_deref(),
        Some("https://github.com/modelcontextprotocol/servers")
    );
    assert_eq!(server.sources[0].kind, SourceKind::Pypi);
    assert_eq!(server.sources[0].identifier, "mcp-server-time");
    assert_eq!(server.sources[0].transport, "stdio");

    let none = registry::search(
        &registry.url,
        "no such server",
        None,
        30,
        registry::Icons::Fetched,
    )
    .await
    .unwrap();
    assert!(none.servers.is_empty());
}

#[tokio::test]
async fn a_registry_that_fails_says_how() {
    let registry = registry();
    let refused = registry::search(&registry.url, "broken", None, 30, registry::Icons::Fetched)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, RegistryError::Refused { status: 500, detail, .. } if detail == "the database is down"),
        "{refused:?}"
    );
    let garbled = registry::search(&registry.url, "garbled", None, 30, registry::Icons::Fetched)
        .await
        .unwrap_err();
    assert!(
        matches!(garbled, RegistryError::Malformed { .. }),
        "{garbled:?}"
    );
    let (_held, port) = support::refused_port();
    let away = registry::search(
        &format!("http://127.0.0.1:{port}"),
        "x",
        None,
        30,
        registry::Icons::Fetched,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(away, RegistryError::Unreachable { .. }),
        "{away:?}"
    );
    assert!(matches!(
        registry::search(
            "registry.example.com",
            "x",
            None,
            30,
            registry::Icons::Fetched
        )
        .await,
        Err(RegistryError::BadAddress(_))
    ));
}

#[tokio::test]
async fn mcp_search_on_the_command_line_prints_a_table_or_json() {
    let registry = registry();
    let home = tempfile::tempdir().unwrap();
    let app = support::app_without_a_model(home.path(), Arc::new(MemoryStore::default())).await;
    let run = |args: Vec<String>| support::run_cli(Arc::clone(&app), args);
    let args = |more: &[&str]| registry.verb("search", more);

    let (ran, table) = run(args(&["github"])).await;
    ran.unwrap();
    assert!(
        table.contains("io.github.github/github-mcp-server"),
        "{table}"
    );
    assert!(
        table.contains("OCI image ghcr.io/github/github-mcp-server:1.10.1 [token (secret)]"),
        "{table}"
    );
    assert!(
        table.contains("remote https://api.githubcopilot.com/mcp/"),
        "{table}"
    );

    // The command line shows no icon, so it fetches none: it reaches only the registry.
    let (ran, json) = run(args(&["adadvisor", "--json"])).await;
    ran.unwrap();
    let page: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        page["servers"][0]["icon"],
        serde_json::Value::Null,
        "{json}"
    );

    let (ran, json) = run(args(&["filesystem", "--json"])).await;
    ran.unwrap();
    let page: serde_json::Value = serde_json::from_str(&json).unwrap();
    let need = &page["servers"][0]["sources"][0]["needs"][0];
    assert_eq!(need["name"], "allowed_directory");
    assert_eq!(need["required"], true);
    assert_eq!(page["servers"][0]["sources"][0]["kind"], "npm");

    let (ran, paged) = run(args(&["server", "--limit", "2"])).await;
    ran.unwrap();
    assert!(paged.contains("More: add --cursor '2'"), "{paged}");

    let (ran, _) = run(args(&["broken"])).await;
    let said = ran.unwrap_err();
    assert!(
        said.contains("answered 500: the database is down"),
        "{said}"
    );
}

#[tokio::test]
async fn mcp_install_adds_the_entry_the_registry_describes_with_its_secrets_in_the_keychain() {
    let registry = registry();
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::default());
    let app = support::app_without_a_model(home.path(), store.clone()).await;
    let install =
        |more: &[&str]| support::run_cli(Arc::clone(&app), registry.verb("install", more));

    // A remote server: its required secret header goes to the keychain, not mcp.json.
    let (ran, _) = install(&["ai.adadvisor/mcp-server", "--yes"]).await;
    let said = ran.unwrap_err();
    assert!(
        said.contains("needs a value for Authorization: give each with --value NAME=VALUE"),
        "{said}"
    );
    let (ran, said) = install(&[
        "ai.adadvisor/mcp-server",
        "--value",
        "Authorization=Bearer adv_sk_1",
        "--as",
        "ads",
        "--yes",
    ])
    .await;
    ran.unwrap();
    assert!(
        said.contains("Added “ads” (ai.adadvisor/mcp-server 1.0.1)"),
        "{said}"
    );
    assert!(said.contains("Approved"), "{said}");
    let file = std::fs::read_to_string(app.mcp_file()).unwrap();
    assert!(!file.contains("adv_sk_1"), "{file}");
    let written: serde_json::Value = serde_json::from_str(&file).unwrap();
    let ads = &written["mcpServers"]["ads"];
    assert_eq!(ads["url"], "https://api.adadvisor.ai/mcp");
    let account = ads["headers"]["Authorization"]["keychain"]
        .as_str()
        .unwrap();
    assert_eq!(
        secrecy::ExposeSecret::expose_secret(&store.get(account).unwrap().unwrap()),
        "Bearer adv_sk_1"
    );

    // A package: npx at its version, with every folder given, approved as shown.
    let (ran, said) = install(&[
        "io.github.modelcontextprotocol/server-filesystem@2026.8.31",
        "--value",
        "allowed_directory=/srv/a",
        "--value",
        "allowed_directory=/srv/b",
        "--yes",
    ])
    .await;
    ran.unwrap();
    assert!(said.contains("Added “server-filesystem”"), "{said}");
    let servers = app.mcp_servers().await.unwrap();
    let files = servers
        .iter()
        .find(|s| s.name == "server-filesystem")
        .unwrap();
    assert!(files.approved);
    assert_eq!(
        files.command_line.as_deref().map(|c| c
            .ends_with("npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /srv/a /srv/b")),
        Some(true),
        "{:?}",
        files.command_line
    );

    // A version the registry does not have, and a name already taken.
    let (ran, _) = install(&["io.github.modelcontextprotocol/server-time@0.0.1", "--yes"]).await;
    assert!(ran.unwrap_err().contains("answered 404"));
    let (ran, _) = install(&[
        "ai.adadvisor/mcp-server",
        "--value",
        "Authorization=x",
        "--as",
        "ads",
        "--yes",
    ])
    .await;
    assert!(ran.unwrap_err().contains("already exists"));
}

/// The native dialog: answers `approve`, and keeps what it was shown.
struct Dialog {
    approve: bool,
    shown: Mutex<Vec<ServerApprovalRequest>>,
}

#[async_trait::async_trait]
impl Confirm for Dialog {
    async fn approve_server(&self, request: &ServerApprovalRequest) -> bool {
        self.shown.lock().unwrap().push(request.clone());
        self.approve
    }

    async fn accept_tool(&self, _: &ToolChange) -> bool {
        false
    }

    async fn allow(&self, _: &Allowance) -> bool {
        false
    }
}

#[tokio::test]
async fn the_window_searches_the_registry_settings_name_and_installs_with_approval_asked() {
    let registry = registry();
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::default());
    let app = support::app_without_a_model(home.path(), store.clone()).await;
    let mut settings = app.settings();
    settings.mcp_registry = registry.url.clone();
    app.update_settings(settings, &switchboard_core::policy::confirm::Always(false))
        .await
        .unwrap();

    let page = app
        .search_registry("github-mcp", None, 20, None, registry::Icons::Fetched)
        .await
        .unwrap();
    let names: Vec<&str> = page.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["io.github.github/github-mcp-server"]);
    let Err(CoreError::Registry(RegistryError::Refused { status: 500, .. })) = app
        .search_registry("broken", None, 20, None, registry::Icons::Fetched)
        .await
    else {
        panic!("a registry answering 500 is said so");
    };

    // Declined: the server is added but waits; its secret is in the keychain, never in the
    // file, and the dialog showed the address with the secret as its keychain reference.
    let declined = Dialog {
        approve: false,
        shown: Mutex::default(),
    };
    let mut values = BTreeMap::new();
    values.insert(
        "Authorization".to_owned(),
        vec!["Bearer adv_sk_2".to_owned()],
    );
    let ask = InstallRequest {
        server: "ai.adadvisor/mcp-server".to_owned(),
        version: Some("1.0.1".to_owned()),
        values,
        ..InstallRequest::default()
    };
    let view = app.install_from_registry(&ask, &declined).await.unwrap();
    // Named after its title ("AdAdvisor MCP Server"), as the window and the command line both name it.
    assert_eq!(view.name, "adadvisor-mcp-server");
    assert!(!view.approved);
    let shown = declined.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1);
    assert!(shown[0].remote);
    assert!(
        shown[0]
            .command_line
            .contains("https://api.adadvisor.ai/mcp"),
        "{}",
        shown[0].command_line
    );
    assert!(!shown[0].command_line.contains("adv_sk_2"));
    let file = std::fs::read_to_string(app.mcp_file()).unwrap();
    assert!(!file.contains("adv_sk_2"), "{file}");

    // A value left out is refused before anything is added; approved, it is recorded so.
    let approved = Dialog {
        approve: true,
        shown: Mutex::default(),
    };
    let bare = InstallRequest {
        name: Some("ads".to_owned()),
        ..ask.clone()
    };
    let bare = InstallRequest {
        values: BTreeMap::new(),
        ..bare
    };
    let Err(CoreError::Install(refused)) = app.install_from_registry(&bare, &approved).await else {
        panic!("a required value left out is refused");
    };
    assert_eq!(
        refused.to_string(),
        "“ai.adadvisor/mcp-server” needs a value for Authorization"
    );
    assert!(approved.shown.lock().unwrap().is_empty());
    let ads = InstallRequest {
        name: Some("ads".to_owned()),
        ..ask
    };
    let view = app.install_from_registry(&ads, &approved).await.unwrap();
    assert!(view.approved);
    assert_eq!(approved.shown.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn mcp_install_follows_a_switchboard_link_to_the_registry_or_to_an_entry() {
    let registry = registry();
    let home = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::default());
    let app = support::app_without_a_model(home.path(), store.clone()).await;

    let link = "switchboard://install?registry=ai.adadvisor/mcp-server&version=1.0.1";
    let (ran, said) = support::run_cli(
        Arc::clone(&app),
        registry.verb(
            "install",
            &[link, "--value", "Authorization=Bearer l", "--as", "ads"],
        ),
    )
    .await;
    ran.unwrap();
    assert!(
        said.contains("Added “ads” (ai.adadvisor/mcp-server 1.0.1)"),
        "{said}"
    );

    let config = r#"{"command":"uvx","args":["mcp-server-time"]}"#;
    let encoded: String = url::form_urlencoded::byte_serialize(config.as_bytes()).collect();
    let link = format!("switchboard://install?name=time&config={encoded}");
    let (ran, said) =
        support::run_cli(Arc::clone(&app), vec!["mcp".into(), "install".into(), link]).await;
    ran.unwrap();
    assert!(said.contains("Added “time” from the link."), "{said}");
    // Not approved without --yes on a terminal that is not one: a link only proposes.
    assert!(said.contains("Not approved"), "{said}");
    let servers = app.mcp_servers().await.unwrap();
    let time = servers.iter().find(|s| s.name == "time").unwrap();
    assert!(!time.approved);

    let (ran, _) = support::run_cli(
        Arc::clone(&app),
        vec![
            "mcp".into(),
            "install".into(),
            "switchboard://delete?name=x".into(),
        ],
    )
    .await;
    assert!(ran.unwrap_err().contains("only install servers"));
}
