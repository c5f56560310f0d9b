//! The one-line status a run shows while it works: "Thinking…", "Using Time · Get Current
//! Time…", "Reading results…", "Writing the answer…" — and, when Settings ask for it, the
//! model's own few words for a call ("Reading the project README…"): the request that asks
//! for them and the tidying of what comes back.

use std::time::Duration;

use crate::mcp::catalogue::CatalogueTool;
use crate::providers::{ChatMessage, ChatRequest, Part, ToolCall};

pub const THINKING: &str = "Thinking…";
pub const WRITING: &str = "Writing the answer…";
/// A local server loads the model into memory before its first answer after a while.
pub const LOADING: &str = "Loading the model…";
pub const READING: &str = "Reading results…";
pub const WAITING_FOR_YOU: &str = "Waiting for your approval…";
/// While a result waits for the person's review before the model reads it.
pub const REVIEWING: &str = "Waiting for you to review a result…";

/// "Using Server · Tool Name…", or a count when several run at once.
pub fn using(display_names: &[&str]) -> String {
    match display_names {
        [] => READING.to_owned(),
        [one] => format!("Using {one}…"),
        [first, rest @ ..] => format!("Using {first} and {} more…", rest.len()),
    }
}

/// The most words a call's description may have.
pub const DESCRIPTION_WORDS: usize = 10;

const DESCRIBE_INSTRUCTIONS: &str = "You write the status line of a chat app while a tool runs. \
In at most 10 words, say what this tool call is doing, as a phrase that starts with a verb \
ending in -ing, for example: Reading the project README. Answer with the phrase only.";

/// The request that asks `model` for a few words on what `call` does: no tools, no history,
/// the tool's description and the arguments cut short.
pub fn describe_request(model: &str, tool: &CatalogueTool, call: &ToolCall) -> ChatRequest {
    let text = format!(
        "Tool: {}\nWhat the tool does: {}\nArguments: {}",
        tool.display_name,
        crate::text::one_line(&tool.description, 300),
        crate::text::one_line(&call.raw_arguments, 500),
    );
    ChatRequest {
        model: model.to_owned(),
        system: Some(DESCRIBE_INSTRUCTIONS.to_owned()),
        messages: vec![ChatMessage::User {
            parts: vec![Part::Text(text)],
        }],
        max_tokens: Some(40),
        ..ChatRequest::default()
    }
}

const QUOTES: [char; 9] = ['"', '\'', '`', '“', '”', '‘', '’', '*', '_'];
const STOPS: [char; 7] = ['.', '!', '?', ',', ';', ':', '…'];

/// What the model answered, as a status line can show it: its first line, without quotes or
/// closing punctuation, at most [`DESCRIPTION_WORDS`] words; `None` when nothing is left.
pub fn tidy_description(answer: &str) -> Option<String> {
    let line = answer.trim().lines().next().unwrap_or_default();
    let words: Vec<&str> = line.split_whitespace().take(DESCRIPTION_WORDS).collect();
    let joined = words.join(" ");
    // Quotes (or Markdown emphasis) around the whole phrase go; quotes inside it stay.
    let quoted = joined.starts_with(QUOTES);
    let mut trimmed = joined.trim_start_matches(QUOTES).trim_end_matches(STOPS);
    if quoted {
        trimmed = trimmed.trim_end_matches(QUOTES).trim_end_matches(STOPS);
    }
    let trimmed = trimmed.trim();
    let tidy = crate::text::one_line(trimmed, 100);
    (!tidy.is_empty()).then_some(tidy)
}

/// "10 minutes", "90 seconds".
pub fn duration_words(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        let m = secs / 60;
        format!("{m} minute{}", if m == 1 { "" } else { "s" })
    } else {
        format!("{secs} second{}", if secs == 1 { "" } else { "s" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_name_the_tool_in_use() {
        assert_eq!(
            using(&["Time · Get Current Time"]),
            "Using Time · Get Current Time…"
        );
        assert_eq!(
            using(&["A · B", "C · D", "E · F"]),
            "Using A · B and 2 more…"
        );
        assert_eq!(duration_words(Duration::from_secs(600)), "10 minutes");
    }

    #[test]
    fn a_description_is_one_short_line_of_at_most_ten_words() {
        assert_eq!(
            tidy_description("\"Reading the project README.\"\nMore text").as_deref(),
            Some("Reading the project README")
        );
        assert_eq!(
            tidy_description("one two three four five six seven eight nine ten eleven twelve")
                .as_deref(),
            Some("one two three four five six seven eight nine ten")
        );
        assert_eq!(
            tidy_description("Opening the \"notes\" folder.").as_deref(),
            Some("Opening the \"notes\" folder")
        );
        assert_eq!(
            tidy_description("*Counting slowly*").as_deref(),
            Some("Counting slowly")
        );
        assert_eq!(tidy_description("  \n "), None);
        assert_eq!(tidy_description("…"), None);
        assert_eq!(duration_words(Duration::from_secs(90)), "90 seconds");
    }
}
