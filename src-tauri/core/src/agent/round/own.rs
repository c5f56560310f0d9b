//! The run's answers to Switchboard's own `search_tools` and `read_result` (issue 55): a search
//! of the run's tools that offers what it finds from the next request on, and a read of a kept
//! result of this conversation by character range or by pattern, at most a result's share of
//! the model's window at a time. Neither reaches outside the conversation.

use serde_json::{json, Map, Value};

use super::Ctx;
use crate::agent::builtin;
use crate::mcp::results;
use crate::mcp::server::McpError;

/// The most characters of one matching line a pattern's read shows: the part around the match.
const LINE_CHARS: usize = 400;
/// What a read's own lines take beside the text it read (its header, where to read on).
const ANSWER_ROOM: usize = 200;

/// The most of a tool's description a search shows: its first sentence, at most this long. The
/// tools found are offered whole from the next request on; what the search says stays in the
/// history of every later request, so it says little.
const DESCRIPTION_CHARS: usize = 80;

/// A call of Switchboard's own tool refused, saying why (the model reads it).
pub(super) fn refuse(detail: String) -> McpError {
    McpError::Request {
        server: builtin::SERVER.to_owned(),
        detail,
        stderr_tail: String::new(),
    }
}

/// A `tools/call` result of one text.
pub(super) fn text_result(text: String) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// A text argument, trimmed; `None` when missing or blank.
pub(super) fn text_argument<'m>(arguments: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn count_argument(arguments: &Map<String, Value>, key: &str) -> Option<usize> {
    arguments
        .get(key)
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

impl Ctx<'_> {
    /// `search_tools(query)`: the tools that match, each with its name to call and what it
    /// does; those not offered yet are offered from the next request on.
    pub(super) fn search_tools(&self, arguments: &Map<String, Value>) -> Result<Value, McpError> {
        let query = text_argument(arguments, "query")
            .ok_or_else(|| refuse("search_tools needs “query” (a few words)".to_owned()))?;
        let (found, new) = self.offer().search(&self.setup.tools, self.own, query);
        if found.is_empty() {
            return Ok(text_result(format!(
                "No tool matches “{query}”. Try other words: what the tool does, or the service \
                 it works with."
            )));
        }
        let lines: Vec<String> = found
            .iter()
            .map(|&i| {
                let tool = &self.setup.tools[i];
                let description = crate::text::without_tags(&tool.description);
                format!("- {}: {}", tool.wire_name, first_sentence(&description))
            })
            .collect();
        if !new.is_empty() {
            self.say_offered(&new);
        }
        Ok(text_result(format!(
            "{} tools found; you can call them from your next step on:\n{}",
            found.len(),
            lines.join("\n")
        )))
    }

    /// `read_result(call_id, offset?, length?, pattern?)`: a range of the whole result of the
    /// call `call_id` of this conversation, or its lines that match `pattern`.
    pub(super) async fn read_result(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<Value, McpError> {
        let call_id = text_argument(arguments, "call_id")
            .ok_or_else(|| refuse("read_result needs “call_id” (a tool call's id)".to_owned()))?;
        let whole = self
            .services
            .store
            .whole_result(self.setup.conversation_id.clone(), call_id.to_owned())
            .await
            .map_err(|e| refuse(format!("its results cannot be read: {e}")))?
            .ok_or_else(|| {
                refuse(format!(
                    "no result of a call “{call_id}” is kept in this conversation"
                ))
            })?;
        // The text the model would have been given whole.
        let text = match serde_json::from_str::<Value>(&whole) {
            Ok(value @ Value::Object(_)) => results::for_model(&value, usize::MAX).text,
            _ => whole,
        };
        // What it says is a result the model gets, whole: under the cap with its own lines.
        let cap = self.result_cap().saturating_sub(ANSWER_ROOM).max(100);
        let answer = match text_argument(arguments, "pattern") {
            Some(pattern) => matching_lines(&text, pattern, cap)?,
            None => {
                let offset = count_argument(arguments, "offset").unwrap_or(0);
                let length = count_argument(arguments, "length").unwrap_or(cap).min(cap);
                range(&text, offset, length)
            }
        };
        Ok(text_result(answer))
    }
}

/// The first sentence of a description on one line, at most [`DESCRIPTION_CHARS`] long.
fn first_sentence(description: &str) -> String {
    let line = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let sentence = line
        .find(". ")
        .map_or(line.as_str(), |end| &line[..=end])
        .trim_end_matches('.');
    if sentence.chars().count() <= DESCRIPTION_CHARS {
        return sentence.to_owned();
    }
    let cut: String = sentence.chars().take(DESCRIPTION_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// Characters `offset..offset + length` of `text`, said as such, with where to read on.
fn range(text: &str, offset: usize, length: usize) -> String {
    let total = text.chars().count();
    if offset >= total {
        return format!("The result has {total} characters; offset {offset} is past its end.");
    }
    let part: String = text.chars().skip(offset).take(length.max(1)).collect();
    let end = offset + part.chars().count();
    let mut out = format!("Characters {offset} to {end} of the result's {total}:\n{part}");
    if end < total {
        out.push_str(&format!(
            "\n[{} more characters after this; read on from offset {end}]",
            total - end
        ));
    }
    out
}

/// The lines of `text` that match `pattern` (case-insensitive), numbered, in at most `cap`
/// characters; a long line shown around its match.
fn matching_lines(text: &str, pattern: &str, cap: usize) -> Result<String, McpError> {
    let regex = regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| refuse(format!("the pattern is not a regular expression: {e}")))?;
    let (mut shown, mut matched, mut lines, mut used) = (String::new(), 0usize, 0usize, 0usize);
    let mut all_shown = true;
    for (n, line) in text.lines().enumerate() {
        lines += 1;
        let Some(found) = regex.find(line) else {
            continue;
        };
        matched += 1;
        let line = format!("{}: {}\n", n + 1, around(line, found.start(), found.end()));
        let chars = line.chars().count();
        if used + chars <= cap {
            shown.push_str(&line);
            used += chars;
        } else {
            all_shown = false;
        }
    }
    Ok(match (matched, all_shown) {
        (0, _) => format!("None of the result's {lines} lines matches “{pattern}”."),
        (_, true) => format!("{matched} of the result's {lines} lines match:\n{shown}"),
        (_, false) => format!(
            "{matched} of the result's {lines} lines match; the first that fit are shown (a \
             narrower pattern, or a range, reads the rest):\n{shown}"
        ),
    })
}

/// `line` whole when it is short, else the part around the match at `start..end` (bytes).
fn around(line: &str, start: usize, end: usize) -> String {
    if line.chars().count() <= LINE_CHARS {
        return line.to_owned();
    }
    let before: String = {
        let head: Vec<char> = line[..start].chars().rev().take(LINE_CHARS / 4).collect();
        head.into_iter().rev().collect()
    };
    let matched: String = line[start..end].chars().take(LINE_CHARS / 2).collect();
    let after: String = line[end..].chars().take(LINE_CHARS / 4).collect();
    let open = if before.len() < start { "…" } else { "" };
    let close = if end + after.len() < line.len() {
        "…"
    } else {
        ""
    };
    format!("{open}{before}{matched}{after}{close}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_says_a_tools_first_sentence_only() {
        assert_eq!(
            first_sentence("Reads a file.  Give its path;\nit must be inside a root."),
            "Reads a file"
        );
        let long = first_sentence(&"word ".repeat(40));
        assert_eq!(long.chars().count(), DESCRIPTION_CHARS);
        assert!(long.ends_with("word…"));
    }

    #[test]
    fn a_range_says_where_it_is_and_where_to_read_on() {
        let text = "0123456789".repeat(3);
        assert_eq!(
            range(&text, 25, 100),
            "Characters 25 to 30 of the result's 30:\n56789"
        );
        let first = range(&text, 0, 10);
        assert!(first.starts_with("Characters 0 to 10 of the result's 30:\n0123456789\n"));
        assert!(first.ends_with("[20 more characters after this; read on from offset 10]"));
        assert!(range(&text, 30, 5).contains("past its end"));
    }

    #[test]
    fn a_pattern_finds_numbered_lines_and_a_long_line_around_its_match() {
        let mut text = String::new();
        for n in 0..1000 {
            text.push_str(&format!("line {n} ok\n"));
        }
        text.push_str(&format!(
            "{}ERROR: disk full{}\n",
            "a".repeat(5000),
            "b".repeat(5000)
        ));
        let found = matching_lines(&text, "error", 10_000).unwrap();
        assert!(
            found.starts_with("1 of the result's 1001 lines match:\n1001: …"),
            "{found}"
        );
        assert!(found.contains("ERROR: disk full"));
        assert!(
            found.chars().count() < 600,
            "the long line around its match"
        );
        let many = matching_lines(&text, r"line \d+", 200).unwrap();
        assert!(many.starts_with("1000 of the result's 1001 lines match; the first that fit"));
        assert!(matching_lines(&text, "zebra", 100)
            .unwrap()
            .starts_with("None of the result's 1001 lines"));
        assert!(matching_lines(&text, "(", 100).is_err());
    }
}
