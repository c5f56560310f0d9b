//! Fitting a request into the model's window (issue 55), as far as it is built: each tool
//! result cut to its share of the window ([`crate::mcp::results::share_of_window`]), its start
//! and its end kept. Used when a provider refuses a request and names a window smaller than
//! the one planned for: the request is fitted and asked again, once.

use crate::mcp::results;
use crate::providers::{ChatMessage, ChatRequest};

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
        if let ChatMessage::Tool { content, .. } = message {
            if over(content) {
                *content = results::cut_to(content, share).0;
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
