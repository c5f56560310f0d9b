//! The adapter the official MCP client conformance suite (`@modelcontextprotocol/conformance`)
//! runs: it connects to the scenario's server through Switchboard's own host
//! (`switchboard_core::mcp::remote`, the same code the app uses for a remote server), lists the
//! tools and makes the calls the scenario checks for, then stops.
//!
//! The suite appends the server's URL as the last argument and names the scenario in
//! `MCP_CONFORMANCE_SCENARIO`. Built with `cargo build -p switchboard-core --example
//! conformance_client`; run by the test command (see scripts/bootstrap.sh).

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::mcp::remote::{self, RemoteLaunch, RemoteTransport};
use switchboard_core::mcp::server::{McpError, McpServer};

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!(
            "usage: conformance_client SERVER_URL (MCP_CONFORMANCE_SCENARIO names the scenario)"
        );
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance_client ({scenario}): {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(scenario: &str, url: &str) -> Result<(), McpError> {
    let launch = RemoteLaunch {
        url: url.to_owned(),
        headers: Vec::new(),
        transport: RemoteTransport::Http,
        startup_timeout: Duration::from_secs(20),
    };
    let server = remote::connect("conformance", &launch).await?;
    let outcome = exercise(scenario, &server).await;
    server.stop().await;
    outcome
}

/// What each scenario checks beyond the handshake.
async fn exercise(scenario: &str, server: &McpServer) -> Result<(), McpError> {
    let tools = server.list_tools().await?;
    eprintln!(
        "{} tools: {}",
        tools.len(),
        tools
            .iter()
            .map(|t| t.name.as_ref())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let calls: Vec<(&str, Value)> = match scenario {
        "tools_call" | "tools-call" => vec![("add_numbers", json!({"a": 5, "b": 3}))],
        // Every other scenario's tools take no arguments (the SSE reconnection test, the
        // elicitation test): call each one.
        _ => tools.iter().map(|t| (t.name.as_ref(), json!({}))).collect(),
    };
    for (name, arguments) in calls {
        let arguments: Map<String, Value> = arguments.as_object().cloned().unwrap_or_default();
        let result = server
            .call_tool(name, arguments, Duration::from_secs(20))
            .await?;
        eprintln!(
            "{name} → {}",
            serde_json::to_string(&result.content).unwrap_or_default()
        );
    }
    Ok(())
}
