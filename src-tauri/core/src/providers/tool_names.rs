//! Checks tools against each API's rules before a request is sent, so a name or schema a
//! provider would refuse is reported as a warning naming the tool — not as a failed request
//! later. (The MCP catalogue sanitises names to `^[a-zA-Z0-9_-]{1,64}$`; this is the last
//! line of defence, and the place that knows each provider's own rules.)

use serde::Serialize;

use super::ToolSpec;

/// The API families whose rules differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
    Gemini,
    Ollama,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolWarning {
    pub tool: String,
    pub message: String,
}

const MAX_NAME: usize = 64;

/// Every problem found, one warning per tool and rule.
pub fn check_tools(api: Api, tools: &[ToolSpec]) -> Vec<ToolWarning> {
    problems(api, tools)
        .into_iter()
        .map(|(i, message)| ToolWarning {
            tool: tools[i].name.clone(),
            message,
        })
        .collect()
}

/// Splits off the tools `api` would refuse, so the request goes out without them and each is
/// reported by name instead of failing the whole request. Of two tools with one name, the
/// first is kept.
pub fn without_refused(api: Api, tools: Vec<ToolSpec>) -> (Vec<ToolSpec>, Vec<ToolWarning>) {
    let problems = problems(api, &tools);
    let warnings = problems
        .iter()
        .map(|(i, message)| ToolWarning {
            tool: tools[*i].name.clone(),
            message: format!("{message}; it was not offered to the model"),
        })
        .collect();
    let kept = tools
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !problems.iter().any(|(p, _)| p == i))
        .map(|(_, t)| t)
        .collect();
    (kept, warnings)
}

/// `(index of the tool, what is wrong)`, in the tools' order.
fn problems(api: Api, tools: &[ToolSpec]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        if let Some(problem) = name_problem(api, &tool.name) {
            found.push((i, problem));
        }
        if !seen.insert(tool.name.as_str()) {
            found.push((i, "another tool has the same name".into()));
        }
        let is_object = tool.parameters.get("type").and_then(|t| t.as_str()) == Some("object")
            || (api == Api::Gemini && tool.parameters.get("properties").is_some());
        if !tool.parameters.is_object() || !is_object {
            found.push((
                i,
                "its input schema is not an object schema (`\"type\": \"object\"`), which this provider requires".into(),
            ));
        }
    }
    found
}

fn name_problem(api: Api, name: &str) -> Option<String> {
    let len = name.chars().count();
    if len == 0 || len > MAX_NAME {
        return Some(format!("its name must be 1 to {MAX_NAME} characters long"));
    }
    let allowed = |c: char| match api {
        Api::Gemini => c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'),
        Api::OpenAi | Api::Anthropic | Api::Ollama => {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
        }
    };
    if let Some(bad) = name.chars().find(|c| !allowed(*c)) {
        return Some(format!(
            "its name contains “{bad}”, which this provider does not accept"
        ));
    }
    if api == Api::Gemini && !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return Some("Gemini needs a name that starts with a letter or an underscore".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, parameters: serde_json::Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters,
        }
    }

    #[test]
    fn names_each_provider_refuses_are_reported_with_the_tool() {
        let object = json!({"type": "object"});
        let tools = vec![
            tool("filesystem__read_file", object.clone()),
            tool("git.status", object.clone()),
            tool("9lives", object.clone()),
            tool(&"x".repeat(65), object.clone()),
        ];
        let openai: Vec<_> = check_tools(Api::OpenAi, &tools)
            .into_iter()
            .map(|w| w.tool)
            .collect();
        assert_eq!(openai, vec!["git.status".to_owned(), "x".repeat(65)]);
        let gemini: Vec<_> = check_tools(Api::Gemini, &tools)
            .into_iter()
            .map(|w| w.tool)
            .collect();
        assert_eq!(gemini, vec!["9lives".to_owned(), "x".repeat(65)]);
    }

    #[test]
    fn a_schema_that_is_not_an_object_and_a_duplicate_name_are_reported() {
        let tools = vec![
            tool("a", json!({"type": "string"})),
            tool("b", json!({"type": "object"})),
            tool("b", json!({"type": "object"})),
        ];
        let warnings = check_tools(Api::Anthropic, &tools);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].message.contains("not an object schema"));
        assert_eq!(warnings[1].tool, "b");
        assert!(warnings[1].message.contains("same name"));
    }

    #[test]
    fn refused_tools_are_left_out_of_the_request_and_named_in_a_warning() {
        let tools = vec![
            tool("ok", json!({"type": "object"})),
            tool("has space", json!({"type": "object"})),
            tool("ok", json!({"type": "object", "properties": {"x": {}}})),
        ];
        let (kept, warnings) = without_refused(Api::OpenAi, tools);
        assert_eq!(kept.len(), 1);
        assert_eq!(
            kept[0].parameters,
            json!({"type": "object"}),
            "the first of two is kept"
        );
        let named: Vec<_> = warnings.iter().map(|w| w.tool.as_str()).collect();
        assert_eq!(named, ["has space", "ok"]);
        assert!(warnings[0]
            .message
            .ends_with("it was not offered to the model"));
    }
}
