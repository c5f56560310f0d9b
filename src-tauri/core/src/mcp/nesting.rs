//! How deep a server's JSON may nest. serde_json refuses a message nested past 128 levels, and
//! rmcp drops a line it cannot parse, so a tool schema nested 10 000 levels would make the
//! whole `tools/list` answer vanish and the request wait out its time. Each line a stdio server
//! sends is scanned once, without recursion; a value that begins deeper than [`MAX_DEPTH`] is
//! replaced by the string [`TOO_DEEP`], so the message parses, and the one tool it was part of
//! is held back with a reason while the server's other tools work. The same for every
//! transport: a stdio server's lines, each event of a server-sent event stream (streamable
//! HTTP and legacy SSE), and a list answered as one JSON body ([`super::http_client`]).

/// The deepest a container may begin in a message from a server (the JSON-RPC envelope of a
/// tool list takes four levels before a schema starts).
pub const MAX_DEPTH: usize = 64;

/// What stands in for a value nested too deep, once parsed.
pub const TOO_DEEP: &str = "\u{0}switchboard: nested too deep";

/// [`TOO_DEEP`] as JSON text, as it is written in place of a value and as serde_json writes it
/// back.
const TOO_DEEP_JSON: &str = "\"\\u0000switchboard: nested too deep\"";

/// `line` with every array or object that begins deeper than `max` levels replaced by
/// [`TOO_DEEP`]; `None` when nothing nests that deep (use the line as it is). Strings, with
/// their escapes, are read as strings: a bracket inside one is text.
pub fn flatten_deep(line: &[u8], max: usize) -> Option<Vec<u8>> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut out: Option<Vec<u8>> = None;
    let mut skipping: Option<usize> = None;
    let mut copied_to = 0;
    for (i, &byte) in line.iter().enumerate() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > max && skipping.is_none() {
                    let out = out.get_or_insert_with(|| Vec::with_capacity(line.len() / 2));
                    out.extend_from_slice(&line[copied_to..i]);
                    out.extend_from_slice(TOO_DEEP_JSON.as_bytes());
                    skipping = Some(depth);
                }
            }
            b'}' | b']' => {
                if skipping == Some(depth) {
                    skipping = None;
                    copied_to = i + 1;
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    out.map(|mut out| {
        if skipping.is_none() {
            out.extend_from_slice(&line[copied_to..]);
        }
        out
    })
}

/// One message from `server` as it may be parsed: flattened past [`MAX_DEPTH`] (and said in
/// the log) when it nests deeper, as it is otherwise.
pub fn flatten_message(message: &[u8], server: &str) -> Option<Vec<u8>> {
    let flat = flatten_deep(message, MAX_DEPTH);
    if flat.is_some() {
        tracing::warn!(%server, "a message nested past {MAX_DEPTH} levels was cut there");
    }
    flat
}

/// [`flatten_message`] for a message that is text (an event's data).
pub fn flatten_text(message: String, server: &str) -> String {
    match flatten_message(message.as_bytes(), server) {
        // Only ASCII was put in place of whole values, so the text stays UTF-8.
        Some(flat) => String::from_utf8(flat).unwrap_or(message),
        None => message,
    }
}

/// Whether a value from a server, written as JSON text, had a part nested too deep (see
/// [`flatten_deep`]).
pub fn text_was_too_deep(json: &str) -> bool {
    json.contains(TOO_DEEP_JSON)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_within_the_limit_is_left_alone() {
        let line = br#"{"a": [1, {"b": "[[[{{{"}], "c": "\"]}"}"#;
        assert_eq!(flatten_deep(line, 3), None);
    }

    #[test]
    fn values_too_deep_become_one_string_and_the_rest_is_kept() {
        let line = br#"{"tools": [{"name": "deep", "s": {"a": {"b": [1, "]"]}}}, {"name": "ok"}], "n": 1}"#;
        let flat = flatten_deep(line, 4).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&flat).unwrap();
        assert_eq!(value["tools"][0]["s"]["a"], TOO_DEEP);
        assert_eq!(value["tools"][1]["name"], "ok");
        assert_eq!(value["n"], 1);
        assert!(text_was_too_deep(&value["tools"][0].to_string()));
        assert!(!text_was_too_deep(&value["tools"][1].to_string()));
    }

    #[test]
    fn ten_thousand_levels_parse_after_flattening() {
        let levels = 10_000;
        let line = format!(
            r#"{{"id": 1, "result": {{"schema": {}1{}}}}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        );
        assert!(serde_json::from_str::<serde_json::Value>(&line).is_err());
        let flat = flatten_deep(line.as_bytes(), MAX_DEPTH).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&flat).unwrap();
        assert_eq!(value["id"], 1);
        assert!(text_was_too_deep(&value["result"].to_string()));
    }
}
