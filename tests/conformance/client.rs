//! The adapter the official MCP client conformance suite (`@modelcontextprotocol/conformance`)
//! runs: it connects to the scenario's server through Switchboard's own host
//! (`switchboard_core::mcp::remote`, the same code the app uses for a remote server), lists the
//! tools and makes the calls the scenario checks for, then stops.
//!
//! A server's form (elicitation) is answered as a person would who sends it as the window
//! fills it in, with the form's defaults.
//!
//! A server that asks for OAuth is signed in to through the host's own sign-in
//! (`switchboard_core::mcp::oauth`, as `switchboard mcp login` and the Servers page do it),
//! with a headless stand-in for the person's browser: it fetches the authorization page and
//! takes the redirect the suite's authorization server answers with at once. The client ID
//! metadata document URL and a pre-registered client (from `MCP_CONFORMANCE_CONTEXT`) are what
//! a server's `"oauth"` entry in mcp.json would say.
//!
//! The suite appends the server's URL as the last argument and names the scenario in
//! `MCP_CONFORMANCE_SCENARIO`. Built with `cargo build -p switchboard-core --example
//! conformance_client`; run by the test command (see scripts/bootstrap.sh).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use switchboard_core::mcp::elicitation::{
    Elicitation, ElicitationAnswer, ElicitationRequest, Elicitor,
};
use switchboard_core::mcp::oauth::{
    self, AuthorizationVisit, Authorizer, KeychainTokens, OAuthSettings, RemoteAuth,
};
use switchboard_core::mcp::remote::{self, RemoteLaunch, RemoteTransport};
use switchboard_core::mcp::server::{McpError, McpServer};
use switchboard_core::secrets::MemoryStore;
use switchboard_core::store::{PinnedTool, Store};

/// The client ID metadata document the suite expects a client to name (it is never fetched).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Where the suite's authorization server is told to send the browser back.
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// Sign-ins one run may make before giving up: a server that keeps asking for more scope is
/// not asked forever.
const MAX_SIGN_INS: usize = 3;

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
    let auth = RemoteAuth {
        settings: oauth_settings(),
        tokens: KeychainTokens::new(Arc::new(MemoryStore::new()), "conformance", url),
    };
    let launch = RemoteLaunch {
        url: url.to_owned(),
        headers: Vec::new(),
        transport: RemoteTransport::Http,
        startup_timeout: Duration::from_secs(20),
        auth: Some(auth.clone()),
        elicitation: Elicitation(Some(Arc::new(SubmitsAsFilled))),
        roots: Default::default(),
    };
    let mut sign_ins = 0;
    loop {
        match attempt(scenario, &launch).await {
            Err(McpError::SignInRequired { challenge, .. }) if sign_ins < MAX_SIGN_INS => {
                sign_ins += 1;
                eprintln!("sign-in {sign_ins}, challenged with: {challenge}");
                oauth::sign_in("conformance", url, &auth, Some(&challenge), &Headless).await?;
            }
            outcome => return outcome,
        }
    }
}

async fn attempt(scenario: &str, launch: &RemoteLaunch) -> Result<(), McpError> {
    let server = remote::connect("conformance", launch).await?;
    let outcome = exercise(scenario, &server).await;
    server.stop().await;
    outcome
}

/// The `"oauth"` entry this client would have: our metadata document, and the pre-registered
/// client the suite names for the scenario that has one.
fn oauth_settings() -> OAuthSettings {
    let context = conformance_context();
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret").map(Into::into),
        client_metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
        scopes: Vec::new(),
    }
}

/// Each tool's input schema after a trip through the store, where the app pins what it saw.
async fn kept_schemas(tools: &[rmcp::model::Tool]) -> std::collections::HashMap<String, Value> {
    let store = Store::open_in_memory().expect("an in-memory store");
    let pins = tools
        .iter()
        .map(|t| PinnedTool {
            tool: t.name.to_string(),
            hash: String::new(),
            title: t.title.clone(),
            description: t.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: Value::Object((*t.input_schema).clone()),
            annotations: t
                .annotations
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok()),
        })
        .collect();
    store
        .pin_tools("conformance".into(), pins)
        .await
        .expect("pinned");
    store
        .tool_pins("conformance".into())
        .await
        .expect("read back")
        .into_iter()
        .map(|pin| (pin.tool, pin.input_schema))
        .collect()
}

/// What the suite passes a scenario's client in `MCP_CONFORMANCE_CONTEXT` (null if nothing).
fn conformance_context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// A person who sends a server's form as the window fills it in: with its defaults (the
/// answer is checked against the form as the window's is).
struct SubmitsAsFilled;

impl Elicitor for SubmitsAsFilled {
    fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> futures_util::future::BoxFuture<'static, ElicitationAnswer> {
        eprintln!("{} asks: {}", request.server, request.message);
        let answer = match request.check(&request.defaults()) {
            Ok(content) => ElicitationAnswer::Accept { content },
            Err(e) => {
                eprintln!("the form cannot be sent as filled: {e}");
                ElicitationAnswer::Cancel
            }
        };
        Box::pin(async move { answer })
    }
}

/// The person's browser, headless: it asks for the authorization page without following
/// redirects and returns where the server sent it (the suite's server grants at once).
struct Headless;

struct HeadlessVisit;

#[async_trait::async_trait]
impl Authorizer for Headless {
    async fn prepare(&self) -> Result<Box<dyn AuthorizationVisit>, String> {
        Ok(Box::new(HeadlessVisit))
    }
}

#[async_trait::async_trait]
impl AuthorizationVisit for HeadlessVisit {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.to_owned()
    }

    async fn visit(self: Box<Self>, authorization_url: &str) -> Result<String, String> {
        let http = switchboard_core::net::client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        let page = http
            .get(authorization_url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        page.headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| {
                format!(
                    "the authorization page answered {} without a redirect",
                    page.status()
                )
            })
    }
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
    // A scenario may name the calls to make and their arguments (the custom-headers one).
    let named: Vec<(String, Value)> = conformance_context()
        .get("toolCalls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|call| {
                    Some((
                        call.get("name")?.as_str()?.to_owned(),
                        call.get("arguments").cloned().unwrap_or_else(|| json!({})),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let kept = kept_schemas(&tools).await;
    let calls: Vec<(&str, Value)> = match scenario {
        // The schema as Switchboard keeps it (pinned in its store), sent back to be compared.
        "json-schema-2020-12-preservation" => tools
            .iter()
            .filter(|t| t.name != "json_schema_echo")
            .filter_map(|t| kept.get(t.name.as_ref()))
            .map(|schema| ("json_schema_echo", json!({"schema": schema})))
            .take(1)
            .collect(),
        _ if !named.is_empty() => named.iter().map(|(n, a)| (n.as_str(), a.clone())).collect(),
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
