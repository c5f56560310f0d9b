//! Switchboard's own tool beside the servers' (issue 17): `read_resource(server, uri)`, so a
//! model can read a server's resources itself — a resource link a tool returned, or a URI it
//! was told. It is offered only when a server whose tools the conversation offers declared
//! resources, and it is called through the same approvals as any other tool: its record names
//! [`SERVER`], a name no configured server can have (server names cannot contain "/").

use serde_json::{json, Value};

use super::tools::{CallFuture, ToolSource};
use crate::mcp::catalogue::CatalogueTool;
use crate::mcp::server::{CallLimits, McpError};

/// The server name Switchboard's own tools are recorded under.
pub const SERVER: &str = "switchboard/built-in";
/// The tool that reads a resource.
pub const READ_RESOURCE: &str = "read_resource";

/// `read_resource` as offered when `servers` (running, offered, with resources) are not empty.
pub fn read_resource_tool(servers: &[String]) -> Option<CatalogueTool> {
    if servers.is_empty() {
        return None;
    }
    let description = format!(
        "Reads a resource (a file or data an MCP server makes available) by its URI, such as a \
         resource link a tool returned. Servers with resources: {}.",
        servers.join(", ")
    );
    let input_schema = json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "enum": servers, "description": "The server that has the resource."},
            "uri": {"type": "string", "description": "The resource's URI, exactly as the server gave it."}
        },
        "required": ["server", "uri"],
        "additionalProperties": false
    });
    let hash = {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("{description}{input_schema}").as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    };
    Some(CatalogueTool {
        wire_name: "switchboard__read_resource".to_owned(),
        server: SERVER.to_owned(),
        tool: READ_RESOURCE.to_owned(),
        display_name: "Switchboard · Read Resource".to_owned(),
        title: Some("Read Resource".to_owned()),
        description,
        input_schema,
        hash,
        annotations: Some(json!({"readOnlyHint": true, "openWorldHint": false})),
    })
}

/// Runs one of Switchboard's own tools; the result has the shape of a `tools/call` result.
pub fn call<'a>(
    source: &'a dyn ToolSource,
    tool: &'a str,
    arguments: &'a serde_json::Map<String, Value>,
    limits: CallLimits,
) -> CallFuture<'a> {
    Box::pin(async move {
        let refuse = |detail: String| McpError::Request {
            server: SERVER.to_owned(),
            detail,
            stderr_tail: String::new(),
        };
        if tool != READ_RESOURCE {
            return Err(refuse(format!("it has no tool “{tool}”")));
        }
        let text = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| refuse(format!("read_resource needs “{key}” (a string)")))
        };
        let (server, uri) = (text("server")?, text("uri")?);
        let read = source.read_resource(server, uri, limits.hard_max).await?;
        Ok(as_call_result(&read))
    })
}

/// A `resources/read` result as a `tools/call` result: each content an embedded resource.
pub fn as_call_result(contents: &Value) -> Value {
    let content: Vec<Value> = contents["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| json!({"type": "resource", "resource": c}))
        .collect();
    if content.is_empty() {
        return json!({"content": [{"type": "text", "text": "The resource is empty."}]});
    }
    json!({ "content": content })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_only_with_servers_that_have_resources_and_named_so_no_server_can_collide() {
        assert!(read_resource_tool(&[]).is_none());
        let tool = read_resource_tool(&["everything".into(), "notes".into()]).unwrap();
        assert_eq!(
            tool.input_schema["properties"]["server"]["enum"],
            json!(["everything", "notes"])
        );
        assert!(tool
            .description
            .ends_with("Servers with resources: everything, notes."));
        assert!(crate::mcp::config::validate_name(SERVER).is_err());
        assert!(crate::providers::tool_names::without_refused(
            crate::providers::tool_names::Api::OpenAi,
            vec![super::super::tools::spec(&tool)]
        )
        .1
        .is_empty());
    }

    #[test]
    fn a_read_becomes_embedded_resources() {
        let read = json!({"contents": [
            {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "# A"},
            {"uri": "file:///b.png", "mimeType": "image/png", "blob": "iVBORw0K"}
        ]});
        let result = as_call_result(&read);
        assert_eq!(result["content"][0]["resource"]["text"], "# A");
        assert_eq!(result["content"][1]["type"], "resource");
        assert_eq!(
            as_call_result(&json!({"contents": []}))["content"][0]["text"],
            "The resource is empty."
        );
    }
}
