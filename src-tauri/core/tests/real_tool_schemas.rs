//! The tool schemas real MCP servers publish (server-everything, server-filesystem,
//! server-memory, mcp-server-time, mcp-server-git; recorded by
//! `tests/peers/capture-tool-schemas.mjs` into `tests/fixtures/mcp/tool-schemas.json`) go to
//! every API without a warning, and Gemini's rewrite keeps their meaning in the subset it
//! accepts.

use std::collections::BTreeSet;

use serde_json::Value;
use switchboard_core::providers::formats::gemini::schema::{for_gemini, GEMINI_KEYWORDS};
use switchboard_core::providers::tool_names::{check_tools, Api};
use switchboard_core::providers::ToolSpec;

fn recorded() -> Vec<(String, ToolSpec)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/mcp/tool-schemas.json"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut tools = Vec::new();
    for (server, entry) in doc.as_object().unwrap() {
        for tool in entry["tools"].as_array().unwrap() {
            tools.push((
                server.clone(),
                ToolSpec {
                    // As the catalogue offers them: `<server>__<tool>`.
                    name: format!("{server}__{}", tool["name"].as_str().unwrap()),
                    description: tool["description"].as_str().unwrap_or_default().to_owned(),
                    parameters: tool["inputSchema"].clone(),
                },
            ));
        }
    }
    tools
}

/// Every keyword used at a schema position (not inside `properties` names or `enum` values).
fn keywords(schema: &Value, found: &mut BTreeSet<String>) {
    let Some(map) = schema.as_object() else {
        return;
    };
    for (key, value) in map {
        found.insert(key.clone());
        match key.as_str() {
            "properties" => value
                .as_object()
                .into_iter()
                .flat_map(|p| p.values())
                .for_each(|v| keywords(v, found)),
            "items" => keywords(value, found),
            "anyOf" => value
                .as_array()
                .into_iter()
                .flatten()
                .for_each(|v| keywords(v, found)),
            _ => {}
        }
    }
}

#[test]
fn all_five_servers_were_recorded() {
    let tools = recorded();
    let servers: BTreeSet<&str> = tools.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        servers,
        BTreeSet::from(["everything", "filesystem", "git", "memory", "time"])
    );
    assert!(tools.len() >= 50, "{} tools", tools.len());
}

#[test]
fn real_server_tools_raise_no_warning_for_any_api() {
    let tools: Vec<ToolSpec> = recorded().into_iter().map(|(_, t)| t).collect();
    for api in [Api::OpenAi, Api::Anthropic, Api::Gemini, Api::Ollama] {
        assert_eq!(check_tools(api, &tools), [], "{api:?}");
    }
}

#[test]
fn gemini_gets_only_keywords_it_accepts_and_every_property_and_requirement_survives() {
    for (server, tool) in recorded() {
        let converted = for_gemini(&tool.parameters);
        let mut found = BTreeSet::new();
        keywords(&converted, &mut found);
        let refused: Vec<_> = found
            .iter()
            .filter(|k| !GEMINI_KEYWORDS.contains(&k.as_str()))
            .collect();
        assert!(
            refused.is_empty(),
            "{server} {}: {refused:?} in {converted}",
            tool.name
        );

        let names = |schema: &Value| -> BTreeSet<String> {
            schema["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        };
        let original = names(&tool.parameters);
        if original.is_empty() {
            continue; // a parameterless tool is declared without parameters
        }
        assert_eq!(names(&converted), original, "{server} {}", tool.name);
        assert_eq!(
            converted["required"], tool.parameters["required"],
            "{server} {}",
            tool.name
        );
        assert_eq!(converted["type"], "object", "{server} {}", tool.name);
    }
}
