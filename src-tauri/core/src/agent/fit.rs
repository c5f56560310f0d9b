//! Fitting a request into the model's window (issue 55): each tool result cut to its share of
//! the window ([`crate::mcp::results::share_of_window`]), its start and its end kept; a
//! request's size in tokens, estimated ([`request_tokens`]); where a history that does not fit
//! may begin ([`keep_from`]); and what the model is asked when the turns before that are
//! summarised ([`summary_request`]).

use crate::mcp::results;
use crate::providers::{ChatMessage, ChatRequest, Part};
use crate::store::{Message, Role};

/// About how many tokens an image takes (providers count 85–1,600 by its size).
pub const IMAGE_TOKENS: usize = 1_000;
/// What a message's frame costs besides its text.
pub const MESSAGE_TOKENS: usize = 4;

/// About how many tokens `chars` characters are: four to a token.
pub fn tokens_of(chars: usize) -> usize {
    chars.div_ceil(4)
}

/// About how many tokens a message takes.
pub fn message_tokens(message: &ChatMessage) -> usize {
    let chars = match message {
        ChatMessage::User { parts } => {
            return MESSAGE_TOKENS
                + parts
                    .iter()
                    .map(|p| match p {
                        Part::Text(text) => tokens_of(text.len()),
                        _ => IMAGE_TOKENS,
                    })
                    .sum::<usize>();
        }
        ChatMessage::Assistant { text, tool_calls } => {
            text.as_ref().map_or(0, String::len)
                + tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.raw_arguments.len() + c.id.len())
                    .sum::<usize>()
        }
        ChatMessage::Tool {
            content, images, ..
        } => return MESSAGE_TOKENS + tokens_of(content.len()) + images.len() * IMAGE_TOKENS,
        ChatMessage::ServerBlocks { blocks } => blocks.iter().map(|b| b.to_string().len()).sum(),
    };
    MESSAGE_TOKENS + tokens_of(chars)
}

/// About how many tokens `request` holds: its system prompt, messages and tools. Bytes are
/// counted, not characters: text in most scripts other than Latin takes more tokens a
/// character, and over-counting leaves room where under-counting is refused.
pub fn request_tokens(request: &ChatRequest) -> usize {
    let system = request.system.as_ref().map_or(0, |s| tokens_of(s.len()));
    let tools: usize = request
        .tools
        .iter()
        .map(|t| tokens_of(t.name.len() + t.description.len() + t.parameters.to_string().len()))
        .sum();
    system + tools + request.messages.iter().map(message_tokens).sum::<usize>()
}

/// The tenths of a request's room for messages that a history fitted by summarising fills: the
/// rest is left for the turns after it, so they do not each summarise again.
pub const KEEP_TENTHS: usize = 6;

/// The tokens a request may hold in a window of `window`: the rest is room for the answer.
pub fn budget(window: u64) -> usize {
    let window = usize::try_from(window).unwrap_or(usize::MAX);
    window - (window / 4).min(4_096)
}

/// Where the model's messages may begin so that they fit `room` tokens: the index in `messages`
/// (the model's, in order) of the earliest person's message from which the rest fits, and
/// never later than the newest person's message (the newest question and what followed it —
/// a call is never without its result — are always kept). `None` when they all fit.
pub fn keep_from(messages: &[ChatMessage], room: usize) -> Option<usize> {
    let mut total = 0usize;
    let mut keep = None;
    let mut newest_question = None;
    for (i, message) in messages.iter().enumerate().rev() {
        total += message_tokens(message);
        if matches!(message, ChatMessage::User { .. }) {
            if newest_question.is_none() {
                newest_question = Some(i);
                keep = Some(i);
            } else if total <= room {
                keep = Some(i);
            }
        }
    }
    if total <= room {
        return None;
    }
    // No person's message at all: nothing can be left out safely.
    keep.filter(|&i| i > 0)
}

/// About how many words a summary asked for in a request of `room` tokens may have.
pub fn summary_words(room: usize) -> usize {
    (room / 10).clamp(150, 1_000)
}

/// The most characters of one message a summary's transcript carries.
const TRANSCRIPT_MESSAGE_CHARS: usize = 4_000;

/// The request that asks `model` to summarise `messages` (the stored ones, oldest first) after
/// `previous` (the summary of what came before them), in at most `room` tokens: the newest of
/// the messages that fit, each cut to [`TRANSCRIPT_MESSAGE_CHARS`]. Returns the request and
/// how many of the messages are summarised; the rest (the oldest) are left out.
pub fn summary_request(
    model: &str,
    previous: Option<&str>,
    messages: &[Message],
    room: usize,
) -> (ChatRequest, usize) {
    let words = summary_words(room);
    let system = format!(
        "You summarise the earlier part of a conversation between a person and an assistant that \
         uses tools, so that the conversation can go on without it. Keep what later messages may \
         need: the person's goals and questions, what was decided, facts, numbers, names, ids, \
         files and the results of tools, and what is still open. Write short plain paragraphs or \
         bullet points, at most about {words} words, in the conversation's language. Add nothing \
         that is not in it."
    );
    let previous_text = previous
        .map(|p| format!("A summary of what came before these messages:\n{p}\n\n"))
        .unwrap_or_default();
    let mut room_chars = room
        .saturating_sub(tokens_of(system.len() + previous_text.len()) + words * 2)
        .saturating_mul(4);
    let mut lines: Vec<String> = Vec::new();
    // How many of the messages, from the newest, the transcript covers.
    let mut summarised = 0;
    for m in messages.iter().rev() {
        let who = match m.role {
            Role::User => "Person".to_owned(),
            Role::Assistant => "Assistant".to_owned(),
            Role::Tool => format!("Result of {}", m.name.as_deref().unwrap_or("a tool")),
            Role::System => {
                summarised += 1;
                continue;
            }
        };
        let mut text = m.content.clone().unwrap_or_default();
        if m.role == Role::Assistant {
            for call in super::history::calls_of(m.tool_calls.as_deref()) {
                text.push_str(&format!("\n[calls {}({})]", call.name, call.raw_arguments));
            }
        }
        let (text, _) = results::cut_to(text.trim(), TRANSCRIPT_MESSAGE_CHARS);
        let line = format!("{who}: {text}");
        if line.len() > room_chars {
            break;
        }
        room_chars -= line.len();
        lines.push(line);
        summarised += 1;
    }
    lines.reverse();
    let request = ChatRequest {
        model: model.to_owned(),
        system: Some(system),
        messages: vec![ChatMessage::User {
            parts: vec![Part::Text(format!(
                "{previous_text}The messages to summarise:\n\n{}",
                lines.join("\n\n")
            ))],
        }],
        max_tokens: Some(u32::try_from(words * 3).unwrap_or(u32::MAX)),
        ..ChatRequest::default()
    };
    (request, summarised)
}

/// `request` with every tool result over `share` characters cut to it; `None` when none is
/// over (fitting would not change what is sent).
pub fn results_to_share(request: &ChatRequest, share: usize) -> Option<ChatRequest> {
    // A result cut already holds its marker beside its share.
    let over = |content: &str| {
        content
            .chars()
            .nth(share + results::CUT_MARKER_ROOM)
            .is_some()
    };
    let any_over = request
        .messages
        .iter()
        .any(|m| matches!(m, ChatMessage::Tool { content, .. } if over(content)));
    if !any_over {
        return None;
    }
    let mut fitted = request.clone();
    for message in &mut fitted.messages {
        if let ChatMessage::Tool {
            content,
            tool_call_id,
            ..
        } = message
        {
            if over(content) {
                *content = results::naming_call(results::cut_to(content, share).0, tool_call_id);
            }
        }
    }
    Some(fitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(content: &str) -> ChatMessage {
        ChatMessage::Tool {
            tool_call_id: "c1".into(),
            name: "big".into(),
            content: content.into(),
            is_error: false,
            images: Vec::new(),
        }
    }

    #[test]
    fn only_results_over_their_share_are_cut_and_nothing_else_changes() {
        let request = ChatRequest {
            messages: vec![tool(&"x".repeat(50_000)), tool("small")],
            ..ChatRequest::default()
        };
        let fitted = results_to_share(&request, 6_144).expect("one result is over its share");
        let ChatMessage::Tool { content, .. } = &fitted.messages[0] else {
            panic!("a tool result")
        };
        assert!(content.contains("43856 of this result's 50000 characters were left out"));
        assert_eq!(fitted.messages[1], tool("small"));
        assert_eq!(results_to_share(&fitted, 6_144), None, "fitted already");
        assert_eq!(results_to_share(&request, 60_000), None);
    }
}
