//! A server's config says everything it will do and takes nothing that is not its own: an entry
//! cannot name a provider's key, removing a server deletes its own secrets and sign-in tokens
//! and nothing else, and a new server of the same name inherits no standing approval.

use secrecy::{ExposeSecret, SecretString};
use switchboard_core::mcp::config::{ConfigValue, ServerEntry};
use switchboard_core::mcp::oauth::token_account;
use switchboard_core::secrets::{provider_account, SecretStore};

use super::scripted::memory_app;

#[tokio::test]
async fn removing_a_server_deletes_its_own_secrets_and_tokens_and_nothing_else() {
    let home = tempfile::tempdir().unwrap();
    let (app, secrets) = memory_app(home.path()).await;
    secrets
        .set(
            &provider_account("OpenAI"),
            &SecretString::from("sk-provider"),
        )
        .unwrap();
    let mut entry = ServerEntry::from_typed(Some("docs-server --stdio"), None).unwrap();
    entry.env.insert(
        "DOCS_TOKEN".into(),
        ConfigValue::Plain("docs-secret".into()),
    );
    app.mcp_add("docs", entry).await.unwrap();
    // The token went to the keychain under the server's own name; a sign-in left tokens too.
    let own = "mcp/docs/env/DOCS_TOKEN";
    assert_eq!(
        secrets.get(own).unwrap().unwrap().expose_secret(),
        "docs-secret"
    );
    secrets
        .set(
            &token_account("docs"),
            &SecretString::from("{\"access_token\":\"t\"}"),
        )
        .unwrap();
    // mcp.json edited by hand to name the provider's key as well.
    let file = app.mcp_file();
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    config["mcpServers"]["docs"]["env"]["STOLEN"] =
        serde_json::json!({"keychain": provider_account("OpenAI")});
    std::fs::write(&file, config.to_string()).unwrap();

    app.mcp_remove("docs").await.unwrap();
    assert!(
        secrets.get(own).unwrap().is_none(),
        "its own secret is deleted"
    );
    assert!(
        secrets.get(&token_account("docs")).unwrap().is_none(),
        "its sign-in tokens are deleted"
    );
    assert_eq!(
        secrets
            .get(&provider_account("OpenAI"))
            .unwrap()
            .unwrap()
            .expose_secret(),
        "sk-provider",
        "another account named in its entry is left alone"
    );
}

#[tokio::test]
async fn a_server_naming_a_provider_key_in_its_entry_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let (app, _secrets) = memory_app(home.path()).await;
    let mut entry = ServerEntry::from_typed(Some("docs-server --stdio"), None).unwrap();
    entry.env.insert(
        "OPENAI_API_KEY".into(),
        ConfigValue::Keychain {
            keychain: provider_account("OpenAI"),
        },
    );
    let refused = app.mcp_add("docs", entry).await.unwrap_err().to_string();
    assert!(
        refused.contains("provider/OpenAI") && refused.contains("not its own"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_new_server_with_a_removed_servers_name_inherits_no_standing_approval() {
    let home = tempfile::tempdir().unwrap();
    let (app, _secrets) = memory_app(home.path()).await;
    let store = app.store().unwrap().clone();
    app.mcp_add(
        "files",
        ServerEntry::from_typed(Some("files-server"), None).unwrap(),
    )
    .await
    .unwrap();
    store
        .add_tool_approval("files".into(), "delete_everything".into(), None)
        .await
        .unwrap();
    store
        .add_tool_approval("Files".into(), "write".into(), Some("c1".into()))
        .await
        .unwrap();
    app.mcp_remove("files").await.unwrap();
    app.mcp_add(
        "files",
        ServerEntry::from_typed(Some("evil-files-server"), None).unwrap(),
    )
    .await
    .unwrap();
    let standing = store.list_tool_approvals().await.unwrap();
    assert!(standing.is_empty(), "{standing:?}");
}

#[tokio::test]
async fn adding_trust_to_an_approved_server_needs_approval_again() {
    let home = tempfile::tempdir().unwrap();
    let (app, _secrets) = memory_app(home.path()).await;
    app.mcp_add(
        "files",
        ServerEntry::from_typed(Some("files-server"), None).unwrap(),
    )
    .await
    .unwrap();
    let approved = |servers: Vec<switchboard_core::app::McpServerView>| {
        servers.iter().find(|s| s.name == "files").unwrap().approved
    };
    assert!(approved(app.mcp_servers().await.unwrap()));
    let file = app.mcp_file();
    let edit = |key: &str, value: serde_json::Value| {
        let mut config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        config["mcpServers"]["files"][key] = value;
        std::fs::write(&file, config.to_string()).unwrap();
    };
    // "trusted" runs every call without asking: not what was approved.
    edit("trust", "trusted".into());
    assert!(
        !approved(app.mcp_servers().await.unwrap()),
        "trust added by hand is not approved"
    );
    edit("trust", serde_json::Value::Null);
    assert!(
        approved(app.mcp_servers().await.unwrap()),
        "back as approved"
    );
    // Its timeout changes nothing it may do.
    edit("timeoutSeconds", 5.into());
    assert!(approved(app.mcp_servers().await.unwrap()));
}
