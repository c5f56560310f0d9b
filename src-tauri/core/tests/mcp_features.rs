//! A server's resources, resource templates, prompts and completions (issue 17) through
//! `switchboard_core::mcp::features`, against servers written by others: server-everything over
//! stdio and streamable HTTP, and mcp-server-time, which offers neither resources nor prompts.
//!
//! Without the peers installed these tests fail, unless `SWITCHBOARD_SKIP_PEERS=1` says to skip
//! them (each then says SKIPPED); the test command never sets it.

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::ResourceContents;
use serde_json::{json, Map, Value};
use switchboard_core::mcp::features::Completing;
use switchboard_core::mcp::remote::{self, RemoteLaunch, RemoteTransport};
use switchboard_core::mcp::server::{McpError, McpServer};
use switchboard_core::mcp::stdio;

mod support;
use support::{mcp_peers_installed, peers, stdio_launch, Everything};

const WAIT: Duration = Duration::from_secs(10);

async fn everything_over_stdio() -> McpServer {
    let bin = peers().join("node_modules/.bin/mcp-server-everything");
    let launch = stdio_launch(&bin.to_string_lossy(), &["stdio"], Duration::from_secs(20));
    stdio::start("everything", launch).await.unwrap()
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

/// The text of a resource read that gave one text item.
fn only_text(contents: &[ResourceContents]) -> &str {
    match contents {
        [ResourceContents::TextResourceContents { text, .. }] => text,
        other => panic!("not one text item: {other:?}"),
    }
}

/// What both transports must do: list the resources and templates, read a listed resource, a
/// resource made from a template (text and blob), and refuse an unknown one with its words.
async fn lists_and_reads_resources(server: &McpServer) {
    assert!(server.offers_resources());
    let resources = server.list_resources().await.unwrap();
    let document = resources
        .iter()
        .find(|r| r.uri.starts_with("demo://resource/static/document/"))
        .unwrap_or_else(|| panic!("no static document in {resources:?}"));
    let templates = server.list_resource_templates().await.unwrap();
    let uri_templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(
        uri_templates.contains(&"demo://resource/dynamic/text/{resourceId}")
            && uri_templates.contains(&"demo://resource/dynamic/blob/{resourceId}"),
        "{uri_templates:?}"
    );

    let read = server.read_resource(&document.uri, WAIT).await.unwrap();
    assert!(!only_text(&read.contents).is_empty());

    let text = server
        .read_resource("demo://resource/dynamic/text/7", WAIT)
        .await
        .unwrap();
    assert!(
        only_text(&text.contents).starts_with("Resource 7: This is a plaintext resource"),
        "{text:?}"
    );
    let blob = server
        .read_resource("demo://resource/dynamic/blob/3", WAIT)
        .await
        .unwrap();
    let [ResourceContents::BlobResourceContents { blob, .. }] = blob.contents.as_slice() else {
        panic!("not one blob: {blob:?}");
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .unwrap();
    assert!(String::from_utf8(bytes)
        .unwrap()
        .starts_with("Resource 3: This is a base64 blob"));

    let unknown = server
        .read_resource("demo://resource/nowhere/1", WAIT)
        .await
        .unwrap_err();
    assert!(
        matches!(&unknown, McpError::Request { server, .. } if server == "everything"),
        "{unknown:?}"
    );
}

#[tokio::test]
async fn resources_and_templates_are_listed_and_read_over_stdio() {
    if !mcp_peers_installed("resources over stdio") {
        return;
    }
    let server = everything_over_stdio().await;
    lists_and_reads_resources(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn resources_are_listed_and_read_over_streamable_http() {
    let Some(everything) = Everything::start("resources over HTTP", "streamableHttp") else {
        return;
    };
    let launch = RemoteLaunch {
        url: everything.url("/mcp"),
        headers: Vec::new(),
        transport: RemoteTransport::Http,
        startup_timeout: Duration::from_secs(20),
        auth: None,
        elicitation: Default::default(),
        roots: Default::default(),
    };
    let server = remote::connect("everything", &launch).await.unwrap();
    lists_and_reads_resources(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn prompts_are_listed_and_got_with_their_arguments_and_completed() {
    if !mcp_peers_installed("prompts") {
        return;
    }
    let server = everything_over_stdio().await;
    assert!(server.offers_prompts() && server.offers_completions());
    let prompts = server.list_prompts().await.unwrap();
    let with_args = prompts
        .iter()
        .find(|p| p.name == "args-prompt")
        .unwrap_or_else(|| panic!("no args-prompt in {prompts:?}"));
    let arguments: Vec<(&str, bool)> = with_args
        .arguments
        .iter()
        .flatten()
        .map(|a| (a.name.as_str(), a.required == Some(true)))
        .collect();
    assert_eq!(arguments, [("city", true), ("state", false)]);

    let got = server
        .get_prompt(
            "args-prompt",
            args(json!({"city": "Lyon", "state": "Rhône"})),
            WAIT,
        )
        .await
        .unwrap();
    let messages = serde_json::to_value(&got.messages).unwrap();
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(
        messages[0]["content"]["text"],
        "What's weather in Lyon, Rhône?"
    );

    // A prompt whose message embeds a resource: the resource arrives whole.
    let embedded = server
        .get_prompt(
            "resource-prompt",
            args(json!({"resourceType": "Text", "resourceId": "2"})),
            WAIT,
        )
        .await
        .unwrap();
    let embedded = serde_json::to_value(&embedded.messages)
        .unwrap()
        .to_string();
    assert!(
        embedded.contains("demo://resource/dynamic/text/2") && embedded.contains("Resource 2:"),
        "{embedded}"
    );

    // A required argument left out is the server's refusal, not a prompt.
    let missing = server
        .get_prompt("args-prompt", Map::new(), WAIT)
        .await
        .unwrap_err();
    assert!(matches!(missing, McpError::Request { .. }), "{missing:?}");

    let departments = server
        .complete(
            Completing::Prompt("completable-prompt".into()),
            "department",
            "S",
            HashMap::new(),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(departments, ["Sales", "Support"]);
    // The arguments already chosen narrow the next one.
    let people = server
        .complete(
            Completing::Prompt("completable-prompt".into()),
            "name",
            "",
            HashMap::from([("department".to_owned(), "Sales".to_owned())]),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(people, ["David", "Eve", "Frank"]);
    let ids = server
        .complete(
            Completing::Template("demo://resource/dynamic/text/{resourceId}".into()),
            "resourceId",
            "12",
            HashMap::new(),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(ids, ["12"]);
    server.stop().await;
}

#[tokio::test]
async fn a_server_with_no_resources_or_prompts_lists_none_and_keeps_working() {
    let bin = peers().join(".venv/bin/mcp-server-time");
    if !bin.exists() {
        assert!(
            std::env::var_os("SWITCHBOARD_SKIP_PEERS").is_some_and(|v| v == "1"),
            "mcp-server-time is not installed (scripts/bootstrap.sh test installs it)"
        );
        eprintln!("SKIPPED no resources: mcp-server-time is not installed");
        return;
    }
    let launch = stdio_launch(&bin.to_string_lossy(), &[], Duration::from_secs(20));
    let server = stdio::start("time", launch).await.unwrap();
    assert!(server.list_resources().await.unwrap().is_empty());
    assert!(server.list_resource_templates().await.unwrap().is_empty());
    assert!(server.list_prompts().await.unwrap().is_empty());
    let completed = server
        .complete(
            Completing::Prompt("any".into()),
            "x",
            "",
            HashMap::new(),
            WAIT,
        )
        .await
        .unwrap();
    assert!(completed.is_empty());
    // Its tools are still there: nothing above disturbed the connection.
    assert!(!server.list_tools().await.unwrap().is_empty());
    server.stop().await;
}
