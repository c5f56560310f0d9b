//! Tool calling by prompt, for a model without tool calling of its own: the tools are described
//! in the system prompt ([`tools_prompt`]), the model writes each call as
//! `<tool_call>{"name": "…", "arguments": {…}}</tool_call>`, and [`CallParser`] takes the calls
//! out of the streamed text, so the rest of the loop (approvals, parallel calls, results, round
//! caps, cost) sees ordinary [`ProviderEvent::ToolCall`]s and the markup never shows as answer
//! text. Earlier calls and their results go back to the model as text in the same format
//! ([`as_text_history`]). [`Prompted`] wraps any [`Provider`] so.
//!
//! Why this format: it is the one the chat templates of most small open-weight models were
//! trained on (Qwen 2.5 and 3, Hermes, SmolLM2, which writes a JSON array in the same tag), so
//! they follow it from a short description; JSON between two fixed tags is easy to constrain
//! with a grammar or a JSON schema; and a tag that never occurs in prose is easy to find in a
//! stream without holding the answer back (at most the few characters that could begin a tag).
//! A tag inside a code block or an inline code span is an example, shown as written, not a
//! call. A call whose JSON cannot be read is still a call: it fails with a correction the
//! model can act on, and counts like any failed call.
//!
//! Where the server can hold the answer to a grammar (llama.cpp's `grammar`), it is
//! ([`call_grammar`]): an answer is then prose, calls, or prose and then calls, each call
//! well-formed JSON naming one of the offered tools with arguments that follow its schema,
//! nothing after the calls and no call inside the prose; when a call is required, calls only.
//! A server that refuses the grammar is asked again without it. Ollama takes no grammar, only
//! a JSON schema for the whole answer (`format`): a required call is held to one
//! ([`call_schema`]) and read as the call it is; an answer that may be prose is not held, as
//! prose could not be written in JSON.

use std::collections::VecDeque;
use std::sync::Arc;

use futures_util::StreamExt as _;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{
    ChatMessage, ChatRequest, EventStream, FinishReason, ModelsFuture, Part, Provider,
    ProviderError, ProviderEvent, ToolCall, ToolChoice, ToolSpec,
};

/// What opens a call in the model's text.
pub const OPEN: &str = "<tool_call>";
/// What closes it.
pub const CLOSE: &str = "</tool_call>";

/// The part of the system prompt that offers `tools` and says how to call them.
#[must_use]
pub fn tools_prompt(tools: &[ToolSpec], choice: ToolChoice) -> String {
    let mut out = String::from(
        "# Tools\n\n\
         You can call the tools listed below. To call one, write this on a line of its own:\n\
         <tool_call>{\"name\": \"TOOL_NAME\", \"arguments\": {…}}</tool_call>\n\
         The arguments are one JSON object that matches the tool's parameters. To call several \
         tools, write one such line for each. After your calls, stop: the results come back in \
         the next message, inside <tool_result> tags, and then you go on. Call a tool only when \
         it helps with the task, and write <tool_call> for nothing but a call.\n",
    );
    if choice == ToolChoice::Required {
        out.push_str("In this answer, you must call at least one tool.\n");
    }
    out.push_str("\nThe tools, one JSON object per line:\n");
    for tool in tools {
        let described = json!({
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        });
        out.push_str(&described.to_string());
        out.push('\n');
    }
    out
}

/// The GBNF grammar (llama.cpp's) an answer offering `tools` is held to: prose in which no
/// call tag can be written, then (or only) one or more calls, one per line, each naming one of `tools` with
/// arguments that follow its input schema (its properties by name and type, required ones
/// first; what the schema says too little or too much about is any JSON object or value);
/// calls only when `choice` requires one. Past [`MAX_SCHEMA_GRAMMAR`] bytes of schemas (a
/// heavy day's hundreds of tools), the arguments are any JSON object.
#[must_use]
pub fn call_grammar(tools: &[ToolSpec], choice: ToolChoice) -> String {
    let root = if choice == ToolChoice::Required {
        "calls"
    } else {
        "calls | prose ( \"\\n\" calls )?"
    };
    let open = gbnf_literal(&format!("{OPEN}{{\"name\": "));
    let middle = gbnf_literal(", \"arguments\": ");
    let close = gbnf_literal(&format!("}}{CLOSE}"));
    let mut rules = Rules::default();
    let mut alternatives = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let name = gbnf_literal(&Value::String(tool.name.clone()).to_string());
        let arguments = if rules.text.len() < MAX_SCHEMA_GRAMMAR {
            rules.object_of(&format!("a{i}"), &tool.parameters, 0)
        } else {
            "object".to_owned()
        };
        alternatives.push(format!("{name} {middle} {arguments}"));
    }
    format!(
        "root ::= {root}\n\
         call ::= {open} ( {} ) {close}\n\
         {}{GRAMMAR_RULES}",
        alternatives.join(" | "),
        rules.text,
    )
}

/// The most bytes of rules generated from tools' schemas; past it, arguments are any object.
pub const MAX_SCHEMA_GRAMMAR: usize = 64 * 1024;

/// How deep a schema is followed; deeper, any value.
const MAX_SCHEMA_DEPTH: usize = 6;

/// A GBNF string literal of `text`.
fn gbnf_literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Rules made from tools' input schemas, one per object.
#[derive(Default)]
struct Rules {
    text: String,
}

impl Rules {
    /// The grammar of a value `schema` allows (an expression, adding rules as it needs).
    fn value_of(&mut self, name: &str, schema: &Value, depth: usize) -> String {
        if depth > MAX_SCHEMA_DEPTH {
            return "value".into();
        }
        if let Some(constant) = schema.get("const") {
            return format!("{} ws", gbnf_literal(&constant.to_string()));
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            if !options.is_empty() {
                let each: Vec<String> = options
                    .iter()
                    .map(|o| gbnf_literal(&o.to_string()))
                    .collect();
                return format!("( {} ) ws", each.join(" | "));
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = schema.get(key).and_then(Value::as_array) {
                if !options.is_empty() {
                    let each: Vec<String> = options
                        .iter()
                        .enumerate()
                        .map(|(i, o)| self.value_of(&format!("{name}-{i}"), o, depth + 1))
                        .collect();
                    return format!("( {} )", each.join(" | "));
                }
            }
        }
        let kinds: Vec<&str> = match schema.get("type") {
            Some(Value::String(kind)) => vec![kind.as_str()],
            Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if kinds.is_empty() {
            return if schema.get("properties").is_some() {
                self.object_of(name, schema, depth)
            } else {
                "value".into()
            };
        }
        let each: Vec<String> = kinds
            .iter()
            .map(|kind| match *kind {
                "string" => "string".to_owned(),
                "integer" => "integer".to_owned(),
                "number" => "number".to_owned(),
                "boolean" => "( \"true\" | \"false\" ) ws".to_owned(),
                "null" => "\"null\" ws".to_owned(),
                "array" => match schema.get("items") {
                    Some(items) if items.is_object() => {
                        let item = self.value_of(&format!("{name}-i"), items, depth + 1);
                        let rule = format!("{name}-item");
                        self.text.push_str(&format!("{rule} ::= {item}\n"));
                        format!("\"[\" ws ( {rule} ( \",\" ws {rule} )* )? \"]\" ws")
                    }
                    _ => "array".to_owned(),
                },
                "object" => self.object_of(name, schema, depth),
                _ => "value".to_owned(),
            })
            .collect();
        if each.len() == 1 {
            each.into_iter().next().unwrap_or_default()
        } else {
            format!("( {} )", each.join(" | "))
        }
    }

    /// A rule for an object `schema` allows, by name: its required properties first, then
    /// any of the others, each at most once, in the order the schema's keys sort (the order the
    /// tools' descriptions show them); any object when it names no properties, requires one
    /// it does not describe, or takes properties it does not name (`additionalProperties`).
    /// Linear in the properties: each pair and each tail of the optional ones is a rule.
    fn object_of(&mut self, name: &str, schema: &Value, depth: usize) -> String {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return "object".into();
        };
        let open = schema
            .get("additionalProperties")
            .is_some_and(|more| more.as_bool() != Some(false));
        if properties.is_empty()
            || open
            || depth > MAX_SCHEMA_DEPTH
            || self.text.len() > MAX_SCHEMA_GRAMMAR
        {
            return "object".into();
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if required.iter().any(|key| !properties.contains_key(*key)) {
            return "object".into();
        }
        let mut first: Vec<String> = Vec::new();
        let mut others: Vec<String> = Vec::new();
        for (i, (key, value)) in properties.iter().enumerate() {
            let value = self.value_of(&format!("{name}-{i}"), value, depth + 1);
            let pair = format!("{name}-p{i}");
            self.text.push_str(&format!(
                "{pair} ::= {} \":\" ws {value}\n",
                gbnf_literal(&Value::String(key.clone()).to_string())
            ));
            if required.contains(&key.as_str()) {
                first.push(pair);
            } else {
                others.push(pair);
            }
        }
        // The tails of the optional pairs: `{name}-sJ` is any of pairs J.. in order, each after
        // a comma (a small model repeats a key until its tokens run out otherwise).
        for (j, pair) in others.iter().enumerate() {
            let next = if j + 1 < others.len() {
                format!(" {name}-s{}", j + 1)
            } else {
                String::new()
            };
            self.text
                .push_str(&format!("{name}-s{j} ::= ( \",\" ws {pair} )?{next}\n"));
        }
        let tail = |j: usize| {
            if j < others.len() {
                format!(" {name}-s{j}")
            } else {
                String::new()
            }
        };
        let body = if first.is_empty() {
            let starts: Vec<String> = others
                .iter()
                .enumerate()
                .map(|(i, pair)| format!("{pair}{}", tail(i + 1)))
                .collect();
            format!("( {} )?", starts.join(" | "))
        } else {
            format!("{}{}", first.join(" \",\" ws "), tail(0))
        };
        self.text
            .push_str(&format!("{name} ::= \"{{\" ws {body} \"}}\" ws\n"));
        name.to_owned()
    }
}

/// The rules of [`call_grammar`] that do not depend on the tools: calls one per line, prose
/// in which no `<tool_call>` tag can be written (a `<` is followed by anything but the rest
/// of the tag), and JSON (after llama.cpp's own `json.gbnf`).
const GRAMMAR_RULES: &str = r#"calls ::= call ("\n" call)*
prose ::= ( [^<\x00] | lt )+
lt ::= "<"+ ( [^t<\x00] | "t" ( [^o<\x00] | "o" ( [^o<\x00] | "o" ( [^l<\x00] | "l" ( [^_<\x00] | "_" ( [^c<\x00] | "c" ( [^a<\x00] | "a" ( [^l<\x00] | "l" ( [^l<\x00] | "l" [^><\x00] ) ) ) ) ) ) ) ) )
integer ::= "-"? ( [0-9] | [1-9] [0-9]{0,15} ) ws
object ::= "{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}" ws
value ::= object | array | string | number | ( "true" | "false" | "null" ) ws
array ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\"" ws
number ::= "-"? ( [0-9] | [1-9] [0-9]{0,15} ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]{1,4} )? ws
ws ::= | " " | "\n" [ \t]{0,20}
"#;

/// A history with tool calls and results written as text, for a model that reads them so:
/// each answer's calls follow its text as `<tool_call>` lines, and the results of a round
/// become one user message of `<tool_result>` blocks (with any images they brought).
#[must_use]
pub fn as_text_history(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            ChatMessage::Assistant { text, tool_calls } if !tool_calls.is_empty() => {
                let mut written = text.unwrap_or_default();
                for call in &tool_calls {
                    if !written.is_empty() && !written.ends_with('\n') {
                        written.push('\n');
                    }
                    let arguments = call
                        .arguments
                        .clone()
                        .unwrap_or_else(|_| Value::String(call.raw_arguments.clone()));
                    written.push_str(OPEN);
                    written
                        .push_str(&json!({"name": call.name, "arguments": arguments}).to_string());
                    written.push_str(CLOSE);
                }
                out.push(ChatMessage::Assistant {
                    text: Some(written),
                    tool_calls: Vec::new(),
                });
            }
            ChatMessage::Tool {
                name,
                content,
                is_error,
                images,
                ..
            } => {
                let error = if is_error { " error=\"true\"" } else { "" };
                let block =
                    format!("<tool_result name=\"{name}\"{error}>\n{content}\n</tool_result>");
                let mut parts = vec![Part::Text(block)];
                parts.extend(images.into_iter().map(|i| Part::Image {
                    media_type: i.media_type,
                    data: i.data,
                }));
                // The results of one round go in one message, as they came.
                after_results(&mut out, parts);
            }
            // Blocks a provider ran itself are its own: a prompted model has none to read.
            ChatMessage::ServerBlocks { .. } => {}
            // A question right after a round's results (the round ended without an answer: it
            // was stopped, failed or hit its cap) joins them: many chat templates refuse two
            // user messages in a row.
            ChatMessage::User { parts } => after_results(&mut out, parts),
            other => out.push(other),
        }
    }
    out
}

/// Adds `parts` to the round's results when the written history ends with them, else as a
/// user message of their own.
fn after_results(out: &mut Vec<ChatMessage>, parts: Vec<Part>) {
    match out.last_mut() {
        Some(ChatMessage::User { parts: results }) if is_results(results) => results.extend(parts),
        _ => out.push(ChatMessage::User { parts }),
    }
}

/// Whether a user message of a written history is a round's results.
fn is_results(parts: &[Part]) -> bool {
    parts
        .first()
        .is_some_and(|p| matches!(p, Part::Text(t) if t.starts_with("<tool_result")))
}

/// A piece of the model's text: answer text to show, or a call to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Call(ToolCall),
}

/// Takes the calls out of a model's streamed text, chunk by chunk. Text is given out as soon
/// as it cannot be the start of a call; a call once its closing tag came (or the answer ended).
#[derive(Debug, Default)]
pub struct CallParser {
    /// Text not given out yet: the end of the last chunk that may begin a tag or a fence (out
    /// of a call), or the call's text so far (in one).
    pending: String,
    in_call: bool,
    /// In a fenced code block (a line that starts with three backticks or tildes opened it).
    in_fence: bool,
    /// In an inline code span of the current line.
    in_code: bool,
    /// Something other than spaces came on the current line (a fence opens only at its start).
    line_started: bool,
    /// Calls given out so far, for their ids.
    calls: usize,
    /// What this answer's call ids start with: a conversation's calls need ids of their own
    /// (a later `read_result` names one), and a model writes none.
    prefix: String,
}

impl CallParser {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The pieces `chunk` completes, in order.
    pub fn push(&mut self, chunk: &str) -> Vec<Piece> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.push_str(chunk);
        let mut out = Vec::new();
        self.scan(&buf, false, &mut out);
        out
    }

    /// What is left once the answer ended: held-back text, or a call whose closing tag never
    /// came (small models often stop right after the JSON).
    pub fn finish(&mut self) -> Vec<Piece> {
        let buf = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        self.scan(&buf, true, &mut out);
        if self.in_call {
            self.in_call = false;
            let raw = std::mem::take(&mut self.pending);
            self.calls_in(&raw, &mut out);
        }
        out
    }

    /// Whether any call was given out.
    #[must_use]
    pub fn called(&self) -> bool {
        self.calls > 0
    }

    fn scan(&mut self, buf: &str, last: bool, out: &mut Vec<Piece>) {
        let mut text = String::new();
        let mut i = 0;
        while i < buf.len() {
            let rest = &buf[i..];
            if self.in_call {
                if let Some(end) = rest.find(CLOSE) {
                    let raw = &rest[..end];
                    flush(&mut text, out);
                    self.calls_in(raw, out);
                    self.in_call = false;
                    i += end + CLOSE.len();
                    continue;
                }
                self.pending = rest.to_owned();
                break;
            }
            let Some(at) = rest.find(['<', '`', '~', '\n']) else {
                self.note_text(rest);
                text.push_str(rest);
                break;
            };
            self.note_text(&rest[..at]);
            text.push_str(&rest[..at]);
            let rest = &rest[at..];
            i += at;
            let ch = rest.as_bytes()[0];
            match ch {
                b'\n' => {
                    text.push('\n');
                    self.line_started = false;
                    self.in_code = false;
                    i += 1;
                }
                b'`' | b'~' => {
                    let run = rest.bytes().take_while(|&b| b == ch).count();
                    if run == rest.len() && !last && !self.line_started {
                        // The run may go on in the next chunk: a fence or not is not known yet.
                        self.pending = rest.to_owned();
                        break;
                    }
                    if !self.line_started && run >= 3 {
                        self.in_fence = !self.in_fence;
                    } else if ch == b'`' && !self.in_fence {
                        self.in_code = !self.in_code;
                    }
                    self.line_started = true;
                    text.push_str(&rest[..run]);
                    i += run;
                }
                _ => {
                    // '<'
                    self.line_started = true;
                    if !self.in_fence && !self.in_code {
                        if rest.starts_with(OPEN) {
                            flush(&mut text, out);
                            self.in_call = true;
                            i += OPEN.len();
                            continue;
                        }
                        if !last && OPEN.starts_with(rest) {
                            self.pending = rest.to_owned();
                            break;
                        }
                    }
                    text.push('<');
                    i += 1;
                }
            }
        }
        flush(&mut text, out);
    }

    /// Notes what plain text does to the line: anything but spaces starts it.
    fn note_text(&mut self, text: &str) {
        if text.chars().any(|c| !c.is_whitespace()) {
            self.line_started = true;
        }
    }

    /// The calls written between one pair of tags: one JSON object, or an array of them.
    fn calls_in(&mut self, raw: &str, out: &mut Vec<Piece>) {
        let body = unfenced(raw.trim());
        if body.is_empty() {
            return;
        }
        match serde_json::from_str::<Value>(body) {
            Ok(Value::Array(items)) => {
                for item in &items {
                    let call = self.call_of(item);
                    out.push(Piece::Call(call));
                }
            }
            Ok(item @ Value::Object(_)) => {
                let call = self.call_of(&item);
                out.push(Piece::Call(call));
            }
            Ok(other) => {
                let why = format!(
                    "a call must be a JSON object, not {}",
                    super::json_kind(&other)
                );
                let call = self.malformed(String::new(), body, &why);
                out.push(Piece::Call(call));
            }
            Err(e) => {
                let why = format!("the call is not valid JSON ({e})");
                let call = self.malformed(name_in(body).unwrap_or_default(), body, &why);
                out.push(Piece::Call(call));
            }
        }
    }

    fn call_of(&mut self, item: &Value) -> ToolCall {
        let Some(name) = item.get("name").and_then(Value::as_str) else {
            return self.malformed(
                String::new(),
                &item.to_string(),
                "the call names no tool (\"name\")",
            );
        };
        let arguments = match item.get("arguments").or_else(|| item.get("parameters")) {
            None | Some(Value::Null) => String::new(),
            // Some models write the arguments as a string of JSON, as the OpenAI API sends them.
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let id = self.next_id();
        ToolCall::new(id, name.to_owned(), arguments)
    }

    /// A call that cannot run as written, answered with how to write it.
    fn malformed(&mut self, name: String, raw: &str, why: &str) -> ToolCall {
        ToolCall {
            id: self.next_id(),
            name,
            raw_arguments: raw.to_owned(),
            arguments: Err(format!(
                "{why}; write each call as {OPEN}{{\"name\": \"TOOL_NAME\", \"arguments\": {{…}}}}{CLOSE}"
            )),
        }
    }

    fn next_id(&mut self) -> String {
        if self.prefix.is_empty() {
            let unique = uuid::Uuid::new_v4().simple().to_string();
            self.prefix = format!("call_{}", &unique[..12]);
        }
        self.calls += 1;
        format!("{}_{}", self.prefix, self.calls)
    }
}

fn flush(text: &mut String, out: &mut Vec<Piece>) {
    if !text.is_empty() {
        out.push(Piece::Text(std::mem::take(text)));
    }
}

/// The JSON of a call that a model put in a code fence of its own inside the tags.
fn unfenced(body: &str) -> &str {
    let Some(inner) = body.strip_prefix("```") else {
        return body;
    };
    let inner = inner.split_once('\n').map_or("", |(_, after)| after);
    inner.trim_end().strip_suffix("```").unwrap_or(inner).trim()
}

/// The tool a call that is not valid JSON names, if it can be read: the correction then says
/// which call failed.
fn name_in(body: &str) -> Option<String> {
    let at = body.find("\"name\"")?;
    let after = body[at + 6..].trim_start().strip_prefix(':')?.trim_start();
    let after = after.strip_prefix('"')?;
    let end = after.find('"')?;
    Some(after[..end].to_owned())
}

/// How a server can hold a prompted model's answer to the call format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Constraint {
    /// It cannot (or is not known to).
    #[default]
    None,
    /// To a grammar (llama.cpp's `grammar`; an OpenAI-compatible server may take it).
    Grammar,
    /// The whole answer to a JSON schema (Ollama's `format`): used only when a call is
    /// required, since an answer in prose could not be written so.
    JsonFormat,
}

/// The JSON schema a required call is held to where the server takes one for the whole
/// answer (Ollama's `format`): one of `tools` by name with arguments that follow its schema;
/// past [`MAX_SCHEMA_GRAMMAR`] bytes of schemas, its name with any object.
#[must_use]
pub fn call_schema(tools: &[ToolSpec]) -> Value {
    let size: usize = tools.iter().map(|t| t.parameters.to_string().len()).sum();
    if size > MAX_SCHEMA_GRAMMAR {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return json!({
            "type": "object",
            "properties": {"name": {"type": "string", "enum": names}, "arguments": {"type": "object"}},
            "required": ["name", "arguments"]
        });
    }
    let each: Vec<Value> = tools
        .iter()
        .map(|t| {
            let arguments = if t.parameters.is_object() {
                t.parameters.clone()
            } else {
                json!({"type": "object"})
            };
            json!({
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": arguments},
                "required": ["name", "arguments"]
            })
        })
        .collect();
    if each.len() == 1 {
        return each.into_iter().next().unwrap_or_default();
    }
    json!({ "anyOf": each })
}

/// A whole answer that is one call as JSON (held so by [`call_schema`]), written as the call
/// it is: its text between the call tags, for [`calls_from_text`] to take out.
fn answer_as_call(inner: EventStream) -> EventStream {
    let mut opened = false;
    Box::pin(inner.flat_map(move |event| {
        let out = match event {
            Ok(ProviderEvent::TextDelta(text)) if !opened => {
                opened = true;
                vec![Ok(ProviderEvent::TextDelta(format!("{OPEN}{text}")))]
            }
            Ok(ProviderEvent::Finish(reason)) if opened => vec![
                Ok(ProviderEvent::TextDelta(CLOSE.to_owned())),
                Ok(ProviderEvent::Finish(reason)),
            ],
            other => vec![other],
        };
        futures_util::stream::iter(out)
    }))
}

/// A provider whose model calls tools by prompt: the tools go into the system prompt, the
/// history's calls and results into text, and the calls come back out of the answer's text.
/// Or, [`Prompted::without_tools`], a model given no tools at all: whatever a run offers
/// (Switchboard's own tools included) is left out, and the history is written as text.
pub struct Prompted {
    inner: Arc<dyn Provider>,
    describe: bool,
    /// How the server can hold the answer to the call format.
    constraint: Constraint,
    /// Set once the server refused the grammar: later requests go without it.
    grammar_refused: Arc<std::sync::atomic::AtomicBool>,
}

impl Prompted {
    #[must_use]
    pub fn new(inner: Arc<dyn Provider>) -> Self {
        Self {
            inner,
            describe: true,
            constraint: Constraint::None,
            grammar_refused: Arc::default(),
        }
    }

    /// A prompted model whose server can hold its answers as `constraint` says: to
    /// [`call_grammar`] (asked again without it when the server refuses it), or, when a call is
    /// required, to a call as JSON ([`call_schema`]).
    #[must_use]
    pub fn held_to(inner: Arc<dyn Provider>, constraint: Constraint) -> Self {
        Self {
            constraint,
            ..Self::new(inner)
        }
    }

    /// A model set to use no tools: none reaches it, in its API or in its prompt.
    #[must_use]
    pub fn without_tools(inner: Arc<dyn Provider>) -> Self {
        Self {
            describe: false,
            ..Self::new(inner)
        }
    }
}

impl Provider for Prompted {
    fn stream(&self, mut request: ChatRequest, cancel: CancellationToken) -> EventStream {
        let tools = std::mem::take(&mut request.tools);
        request.deferred_tools.clear();
        let offered = self.describe && !tools.is_empty() && request.tool_choice != ToolChoice::None;
        if offered {
            let prompt = tools_prompt(&tools, request.tool_choice);
            request.system = Some(match request.system.take() {
                Some(system) if !system.trim().is_empty() => format!("{system}\n\n{prompt}"),
                _ => prompt,
            });
        }
        // A required call, where the whole answer can be held to a schema: JSON, then read
        // as the call it is.
        let as_call = offered
            && self.constraint == Constraint::JsonFormat
            && request.tool_choice == ToolChoice::Required;
        if as_call {
            request.format = Some(call_schema(&tools));
        }
        let grammar = (offered
            && self.constraint == Constraint::Grammar
            && !self
                .grammar_refused
                .load(std::sync::atomic::Ordering::Relaxed))
        .then(|| call_grammar(&tools, request.tool_choice));
        request.tool_choice = ToolChoice::Auto;
        request.messages = as_text_history(std::mem::take(&mut request.messages));
        let inner = match grammar {
            None if as_call => answer_as_call(self.inner.stream(request, cancel)),
            None => self.inner.stream(request, cancel),
            Some(grammar) => {
                let held = ChatRequest {
                    grammar: Some(grammar),
                    ..request.clone()
                };
                without_grammar_if_refused(
                    Arc::clone(&self.inner),
                    held,
                    request,
                    cancel,
                    Arc::clone(&self.grammar_refused),
                )
            }
        };
        // A model that calls in text may write a call when none is offered (its last answer
        // at the round cap, whose history is full of them): the markup is taken out all the
        // same, and the loop drops the call.
        if self.describe {
            calls_from_text(inner)
        } else {
            inner
        }
    }

    fn list_models(&self) -> ModelsFuture<'_> {
        self.inner.list_models()
    }
}

/// Whether a refusal is of the grammar field: llama.cpp's own ("failed to parse grammar"),
/// or a server that takes no field it does not know (OpenAI's "Unrecognized request argument
/// supplied: grammar", pydantic's "Extra inputs are not permitted").
fn refuses_grammar(message: &str) -> bool {
    let message = message.to_lowercase();
    [
        "grammar",
        "extra inputs are not permitted",
        "unrecognized request argument",
        "unknown field",
    ]
    .iter()
    .any(|words| message.contains(words))
}

/// `held`'s answer; when the server refuses it for its grammar before anything else came,
/// `plain`'s (and `refused` is set, so later requests go without one).
fn without_grammar_if_refused(
    inner: Arc<dyn Provider>,
    held: ChatRequest,
    plain: ChatRequest,
    cancel: CancellationToken,
    refused: Arc<std::sync::atomic::AtomicBool>,
) -> EventStream {
    let first = async move {
        let mut answer = inner.stream(held, cancel.clone());
        match answer.next().await {
            Some(Err(ProviderError::Server { status, message }))
                if (400..500).contains(&status) && refuses_grammar(&message) =>
            {
                tracing::info!(%message, "the server refused the grammar: asking without it");
                refused.store(true, std::sync::atomic::Ordering::Relaxed);
                inner.stream(plain, cancel)
            }
            Some(first) => Box::pin(futures_util::stream::iter([first]).chain(answer)),
            None => Box::pin(futures_util::stream::empty()) as EventStream,
        }
    };
    Box::pin(futures_util::stream::once(first).flatten())
}

/// `inner`'s events with the calls in its text taken out as [`ProviderEvent::ToolCall`]s; an
/// answer that called a tool finishes as [`FinishReason::ToolCalls`].
#[must_use]
pub fn calls_from_text(inner: EventStream) -> EventStream {
    struct State {
        inner: EventStream,
        parser: CallParser,
        queue: VecDeque<Result<ProviderEvent, ProviderError>>,
        finish: Option<FinishReason>,
        ended: bool,
    }
    fn queue_pieces(
        queue: &mut VecDeque<Result<ProviderEvent, ProviderError>>,
        pieces: Vec<Piece>,
    ) {
        queue.extend(pieces.into_iter().map(|piece| {
            Ok(match piece {
                Piece::Text(t) => ProviderEvent::TextDelta(t),
                Piece::Call(c) => ProviderEvent::ToolCall(c),
            })
        }));
    }
    let state = State {
        inner,
        parser: CallParser::new(),
        queue: VecDeque::new(),
        finish: None,
        ended: false,
    };
    Box::pin(futures_util::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(event) = s.queue.pop_front() {
                return Some((event, s));
            }
            if s.ended {
                return None;
            }
            match s.inner.next().await {
                Some(Ok(ProviderEvent::TextDelta(text))) => {
                    let pieces = s.parser.push(&text);
                    queue_pieces(&mut s.queue, pieces);
                }
                // Said once the text is through: whether it called a tool is known only then.
                Some(Ok(ProviderEvent::Finish(reason))) => s.finish = Some(reason),
                Some(Ok(other)) => s.queue.push_back(Ok(other)),
                Some(Err(e)) => {
                    // A call cut off by the failure does not run.
                    s.queue.push_back(Err(e));
                    s.ended = true;
                }
                None => {
                    let pieces = s.parser.finish();
                    queue_pieces(&mut s.queue, pieces);
                    let finish = match s.finish {
                        _ if s.parser.called() => Some(FinishReason::ToolCalls),
                        other => other,
                    };
                    if let Some(reason) = finish {
                        s.queue.push_back(Ok(ProviderEvent::Finish(reason)));
                    }
                    s.ended = true;
                }
            }
        }
    }))
}

#[cfg(test)]
mod tests;
