//! Switchboard's own tools beside the servers', recorded under [`SERVER`], a name no configured
//! server can have (server names cannot contain "/"):
//! - `read_resource(server, uri)` (issue 17), so a model can read a server's resources itself —
//!   a resource link a tool returned, or a URI it was told. It is offered only when a server
//!   whose tools the conversation offers declared resources, and it is called through the same
//!   approvals as any other tool.
//! - `search_tools(query)` and `read_result(call_id, …)` (issue 55): finding the conversation's
//!   tools when there are too many to offer at once, and reading the part of a kept result the
//!   model was not given. Both read only what the conversation already allowed, so neither asks
//!   the person ([`needs_no_approval`]); the run answers them ([`crate::agent::offer`]).
//! - `load_skill(name, file?)` (issue 61): a skill's instructions and the list of its files, or
//!   one of its files. Offered when the conversation has skills switched on; its description
//!   lists them ([`crate::skills::catalogue`]). It reads only skills the person switched on
//!   for the conversation, so it does not ask either.
//! - `search_project_files(query)` (issue 62): the passages of the project's files that match
//!   a query. Offered in a conversation of a project that has files; it reads only those files,
//!   which the person added to the project, so it does not ask.
//! - `remember(fact)` (issue 62): keeps a short fact in the memory the conversation uses (its
//!   project's, or the person's own). Offered only while that memory is on; it writes, so it
//!   asks like any other call (the first time, then as grants and policies say), and a
//!   conversation's auto-approval does not cover it ([`not_auto_approved`]).
//! - `run_skill_script(name, script, args?, stdin?)` (issue 61): runs a script of one of the
//!   person's skills whose scripts they allowed, in a sandbox ([`crate::skills::scripts`]).
//!   Offered only when such a skill is on for the conversation; it asks before every run,
//!   whatever standing grants or auto-approval say ([`asks_every_time`]).

use serde_json::{json, Value};

use super::tools::{CallFuture, ToolSource};
use crate::mcp::catalogue::CatalogueTool;
use crate::mcp::server::{CallLimits, McpError};

/// The server name Switchboard's own tools are recorded under.
pub const SERVER: &str = "switchboard/built-in";
/// The tool that reads a resource.
pub const READ_RESOURCE: &str = "read_resource";
/// The tool that finds the conversation's tools by what they do.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The tool that reads a kept result by range or pattern.
pub const READ_RESULT: &str = "read_result";
/// The tool that loads a skill's instructions or one of its files.
pub const LOAD_SKILL: &str = "load_skill";
/// The tool that runs a skill's script (where the person allowed it).
pub const RUN_SCRIPT: &str = "run_skill_script";
/// The tool that searches the files of the conversation's project.
pub const SEARCH_FILES: &str = "search_project_files";
/// The tool that keeps a fact in the conversation's memory.
pub const REMEMBER: &str = "remember";

/// Whether a call of Switchboard's own `tool` runs without an approval: it reads only what the
/// conversation already allowed (its tools' list, its own results).
pub fn needs_no_approval(server: &str, tool: &str) -> bool {
    server == SERVER
        && (tool == SEARCH_TOOLS
            || tool == READ_RESULT
            || tool == LOAD_SKILL
            || tool == SEARCH_FILES)
}

/// Whether a call of Switchboard's own `tool` asks the person every time, whatever grants,
/// rules or auto-approval say (only a rule that blocks it stands): a skill's script.
pub fn asks_every_time(server: &str, tool: &str) -> bool {
    server == SERVER && tool == RUN_SCRIPT
}

/// Whether a call of Switchboard's own `tool` is left out of a conversation's auto-approval
/// (grants and rules still count): `remember`, whose fact is told to every later conversation
/// of its memory, so text a tool returned cannot plant one unseen.
pub fn not_auto_approved(server: &str, tool: &str) -> bool {
    server == SERVER && tool == REMEMBER
}

/// One of Switchboard's own tools, described and hashed like a server's.
fn own_tool(tool: &str, title: &str, description: String, input_schema: Value) -> CatalogueTool {
    let hash = {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("{description}{input_schema}").as_bytes());
        hex::encode(digest)
    };
    CatalogueTool {
        wire_name: format!("switchboard__{tool}"),
        server: SERVER.to_owned(),
        tool: tool.to_owned(),
        display_name: format!("Switchboard · {title}"),
        title: Some(title.to_owned()),
        description,
        input_schema,
        hash,
        annotations: Some(json!({"readOnlyHint": true, "openWorldHint": false})),
    }
}

/// `search_tools`, offered when the conversation has more tools than a request carries.
pub fn search_tools_tool() -> CatalogueTool {
    own_tool(
        SEARCH_TOOLS,
        "Search Tools",
        "Finds more of the tools you can use in this conversation: there are more than can be \
         offered at once. Describe what you want to do in a few words (\"weather forecast\", \
         \"create invoice\"); the tools found are offered to you from your next step on, and you \
         call them by the names this returns."
            .to_owned(),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, in a few words."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

/// `search_project_files`, offered in a conversation of project `project` that has files.
pub fn search_files_tool(project: &str) -> CatalogueTool {
    own_tool(
        SEARCH_FILES,
        "Search Project Files",
        format!(
            "Searches the files the person keeps in the project “{}” and returns the passages \
             that match, best first, each with its file's name and its place in the file. Use \
             a few distinctive words of what you are looking for.",
            crate::text::one_line(project, 80)
        ),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The words to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many passages at most (8 when not said)."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

/// `remember`, offered while the memory the conversation uses is on.
pub fn remember_tool() -> CatalogueTool {
    let mut tool = own_tool(
        REMEMBER,
        "Remember",
        "Keeps a short fact for later conversations: what the person prefers, decided or told \
         you that will matter again (\"Prefers metric units.\", \"The staging server is \
         staging.internal.\"). One fact per call, in a sentence of its own. Never keep \
         passwords, keys or other secrets. The person sees every fact kept and can change or \
         delete it."
            .to_owned(),
        json!({
            "type": "object",
            "properties": {
                "fact": {"type": "string", "maxLength": 500, "description": "The fact, in one sentence."}
            },
            "required": ["fact"],
            "additionalProperties": false
        }),
    );
    // It writes: not read-only, so nothing lets it run unasked on that account.
    tool.annotations = Some(json!({
        "readOnlyHint": false,
        "destructiveHint": false,
        "idempotentHint": false,
        "openWorldHint": false
    }));
    tool
}

/// `read_result`, offered when a result in the conversation reached the model cut.
pub fn read_result_tool() -> CatalogueTool {
    own_tool(
        READ_RESULT,
        "Read Result",
        "Reads the part of an earlier tool result that was left out where it says \"[cut: …]\": \
         by character range (offset, length), or the lines that match a pattern (a regular \
         expression). Give the call id of the tool call whose result it was."
            .to_owned(),
        json!({
            "type": "object",
            "properties": {
                "call_id": {"type": "string", "description": "The id of the tool call whose result to read."},
                "offset": {"type": "integer", "minimum": 0, "description": "The first character to read (0 is the result's start)."},
                "length": {"type": "integer", "minimum": 1, "description": "How many characters to read."},
                "pattern": {"type": "string", "description": "A regular expression: the result's lines that match it, with their line numbers, instead of a range."}
            },
            "required": ["call_id"],
            "additionalProperties": false
        }),
    )
}

/// `load_skill`, offered when `skills` (switched on for the conversation) are not empty; its
/// description lists them in at most `max_chars` characters.
pub fn load_skill_tool(
    skills: &[&crate::skills::Skill],
    max_chars: usize,
) -> Option<CatalogueTool> {
    if skills.is_empty() {
        return None;
    }
    Some(own_tool(
        LOAD_SKILL,
        "Load Skill",
        crate::skills::catalogue(skills, max_chars),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill's name, as listed."},
                "file": {"type": "string", "description": "A file of the skill to read, by its path in the skill (as the skill's list of files gives it); leave out to load the skill's instructions."}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    ))
}

/// `run_skill_script`, offered when `skills` (on for the conversation, their scripts allowed)
/// are not empty; its description names their scripts in at most `max_chars` characters.
pub fn run_script_tool(
    skills: &[&crate::skills::Skill],
    max_chars: usize,
) -> Option<CatalogueTool> {
    if skills.is_empty() {
        return None;
    }
    let mut description = String::from(
        "Runs a script a skill ships, in a sandbox: it has no network, can read the system and \
         the skill's own folder, and writes only a new working folder of its own (the person's \
         files are out of its reach). The person is asked before each run. Give the skill's \
         name, the script's path in the skill (as load_skill lists its files), its arguments, \
         and text for its standard input if it reads one. Load the skill first and follow its \
         instructions.\n\nScripts you may run:\n",
    );
    let room = max_chars.saturating_sub(200);
    let mut left_out = 0usize;
    for skill in skills {
        let scripts: Vec<&str> = skill
            .files
            .iter()
            .filter(|f| f.script)
            .map(|f| f.path.as_str())
            .collect();
        let line = format!("- {}: {}\n", skill.name, scripts.join(", "));
        if description.len() + line.len() > room {
            left_out += 1;
        } else {
            description.push_str(&line);
        }
    }
    if left_out > 0 {
        description.push_str(&format!(
            "({left_out} more skills' scripts: load the skill to see them.)\n"
        ));
    }
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    let mut tool = own_tool(
        RUN_SCRIPT,
        "Run Skill Script",
        description,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names, "description": "The skill's name."},
                "script": {"type": "string", "description": "The script's path in the skill, as its list of files gives it."},
                "args": {"type": "array", "items": {"type": "string"}, "description": "Its arguments, one string each."},
                "stdin": {"type": "string", "description": "Text given to its standard input."}
            },
            "required": ["name", "script"],
            "additionalProperties": false
        }),
    );
    // It runs a program: never read-only, and it asks every time ([`asks_every_time`]).
    tool.annotations = Some(json!({
        "readOnlyHint": false,
        "destructiveHint": true,
        "openWorldHint": false
    }));
    Some(tool)
}

/// Adds `tool` to `tools`, renamed `…_2`, `…_3` when a server's tool has its wire name (a
/// server called "switchboard"); returns its index.
pub fn add(tools: &mut Vec<CatalogueTool>, mut tool: CatalogueTool) -> usize {
    let base = tool.wire_name.clone();
    let mut n = 1;
    while tools.iter().any(|t| t.wire_name == tool.wire_name) {
        n += 1;
        tool.wire_name = format!("{base}_{n}");
    }
    tools.push(tool);
    tools.len() - 1
}

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
    Some(own_tool(
        READ_RESOURCE,
        "Read Resource",
        description,
        input_schema,
    ))
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
