//! Where the loop's tools come from, how one is offered to a model ([`spec`]) and how one is
//! called: [`ToolSource`], implemented by the MCP host.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::mcp::catalogue::{CatalogueTool, ListedTool};
use crate::mcp::host::McpHost;
use crate::mcp::server::{CallLimits, McpError, ProgressSink};
use crate::providers::ToolSpec;

/// A tool as a model is offered it: its wire name, description and input schema, without the
/// Unicode tag characters a person cannot see and a model reads.
pub fn spec(tool: &CatalogueTool) -> ToolSpec {
    ToolSpec {
        name: tool.wire_name.clone(),
        description: crate::text::without_tags(&tool.description).into_owned(),
        parameters: crate::text::without_tags_json(&tool.input_schema),
    }
}

pub type CallFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, McpError>> + Send + 'a>>;

/// The running servers' tools, and a way to call one.
pub trait ToolSource: Send + Sync {
    /// Each running server with its tools, as last listed.
    fn tools(&self) -> Vec<(String, Arc<Vec<ListedTool>>)>;

    /// The tools each running server listed that are not offered, and why
    /// ([`crate::mcp::server::HeldBackTool`]).
    fn held_back(&self) -> Vec<(String, crate::mcp::server::HeldBackTool)> {
        Vec::new()
    }

    /// What a running server said at `initialize` on how to use it (added to the system
    /// prompt when its tools are offered).
    fn instructions(&self, server: &str) -> Option<String> {
        let _ = server;
        None
    }

    /// Calls `tool` on `server`; the result is the `tools/call` result's JSON. The server's
    /// progress notifications for the call go to `progress`.
    fn call<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        arguments: Map<String, Value>,
        limits: CallLimits,
        cancel: &'a CancellationToken,
        progress: Option<&'a ProgressSink>,
    ) -> CallFuture<'a>;

    /// The running servers that declared resources (for the built-in `read_resource`).
    fn resource_servers(&self) -> Vec<String> {
        Vec::new()
    }

    /// Reads `uri` from `server`: the `resources/read` result's JSON.
    fn read_resource<'a>(
        &'a self,
        server: &'a str,
        uri: &'a str,
        timeout: std::time::Duration,
    ) -> CallFuture<'a> {
        let _ = (uri, timeout);
        Box::pin(async move { Err(no_resources(server)) })
    }
}

impl ToolSource for McpHost {
    fn tools(&self) -> Vec<(String, Arc<Vec<ListedTool>>)> {
        self.running_tools()
    }

    fn held_back(&self) -> Vec<(String, crate::mcp::server::HeldBackTool)> {
        self.running_tools()
            .into_iter()
            .filter_map(|(name, _)| self.server(&name).map(|s| (name, s.held_back())))
            .flat_map(|(name, held)| held.into_iter().map(move |h| (name.clone(), h)))
            .collect()
    }

    fn instructions(&self, server: &str) -> Option<String> {
        self.server(server)
            .and_then(|s| s.instructions().map(str::to_owned))
    }

    fn resource_servers(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .running_tools()
            .into_iter()
            .map(|(name, _)| name)
            .filter(|name| self.server(name).is_some_and(|s| s.offers_resources()))
            .collect();
        names.sort();
        names
    }

    fn read_resource<'a>(
        &'a self,
        server: &'a str,
        uri: &'a str,
        timeout: std::time::Duration,
    ) -> CallFuture<'a> {
        Box::pin(async move {
            let running = running(self, server)?;
            if !running.offers_resources() {
                return Err(no_resources(server));
            }
            let read = running.read_resource(uri, timeout).await?;
            let read = serde_json::to_value(&read).map_err(|e| McpError::Request {
                server: server.to_owned(),
                detail: format!("what it read cannot be understood: {e}"),
                stderr_tail: String::new(),
            })?;
            Ok(read)
        })
    }

    fn call<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        arguments: Map<String, Value>,
        limits: CallLimits,
        cancel: &'a CancellationToken,
        progress: Option<&'a ProgressSink>,
    ) -> CallFuture<'a> {
        Box::pin(async move {
            let running = running(self, server)?;
            let result = running
                .call_tool_limited(tool, arguments, limits, cancel, progress)
                .await?;
            serde_json::to_value(&result).map_err(|e| McpError::Request {
                server: server.to_owned(),
                detail: format!("its result cannot be read: {e}"),
                stderr_tail: String::new(),
            })
        })
    }
}

fn no_resources(server: &str) -> McpError {
    McpError::Request {
        server: server.to_owned(),
        detail: "it has no resources".to_owned(),
        stderr_tail: String::new(),
    }
}

/// A running server of `host`'s, or why not.
fn running(host: &McpHost, server: &str) -> Result<Arc<crate::mcp::server::McpServer>, McpError> {
    host.server(server).ok_or_else(|| McpError::Request {
        server: server.to_owned(),
        detail: "it is not running right now (see the Servers page)".to_owned(),
        stderr_tail: String::new(),
    })
}
