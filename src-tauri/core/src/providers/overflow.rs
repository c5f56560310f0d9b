//! What a provider's refusal says about a model's window, in each provider's own words: a
//! request over the window (and, where it says, the window's size and how big the request
//! was), or a request with more tools than the provider takes (and how many it takes). The
//! two are different refusals a person acts on differently, and an overflow that names the
//! window teaches Switchboard that model's window.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// A request over the model's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Overflow {
    /// The window, in tokens, when the refusal names it.
    pub window: Option<u64>,
    /// How many tokens the request was, when the refusal says.
    pub sent: Option<u64>,
}

/// `(pattern, group of the window, group of the request's size)`: each provider's words.
static OVERFLOW_WORDS: LazyLock<Vec<(Regex, usize, usize)>> = LazyLock::new(|| {
    [
        // Anthropic: "prompt is too long: 208310 tokens > 200000 maximum".
        (r"(?i)prompt is too long:\s*([\d,]+) tokens\s*>\s*([\d,]+) maximum", 2, 1),
        // OpenAI (newer): "Input tokens exceed the configured limit of 272000 tokens. Your
        // messages resulted in 300012 tokens."
        (
            r"(?i)exceeds? the configured limit of ([\d,]+) tokens\.?\s*your messages resulted in ([\d,]+) tokens",
            1,
            2,
        ),
        // llama.cpp's server (older): "request (9000 tokens) exceeds the available context
        // size (8192 tokens)".
        (
            r"(?i)request \(([\d,]+) tokens\) exceeds the available context size \(([\d,]+) tokens\)",
            2,
            1,
        ),
        // Gemini: "The input token count (1200000) exceeds the maximum number of tokens
        // allowed (1048576)."
        (
            r"(?i)input token count \(([\d,]+)\) exceeds the maximum number of tokens allowed \(([\d,]+)\)",
            2,
            1,
        ),
        // Mistral: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with
        // 32768 maximum context length".
        (
            r"(?i)prompt contains ([\d,]+) tokens.*?too large for model with ([\d,]+) maximum context length",
            2,
            1,
        ),
    ]
    .into_iter()
    .map(|(p, w, s)| (Regex::new(p).expect("overflow pattern compiles"), w, s))
    .collect()
});

/// The window alone, where only it is named.
static WINDOW_WORDS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // OpenAI, vLLM, OpenRouter, DeepSeek, Together…: "This model's maximum context length
        // is 8192 tokens."
        r"(?i)maximum context length is ([\d,]+) tokens",
        // LM Studio: "the model is loaded with context length of only 8192 tokens".
        r"(?i)loaded with context length of only ([\d,]+) tokens",
        // Others: "context window of 32768 tokens", "context size (8192 tokens)".
        r"(?i)context (?:window|size|length) (?:of|is|\()\s*([\d,]+) tokens",
    ]
    .into_iter()
    .map(|p| Regex::new(p).expect("window pattern compiles"))
    .collect()
});

/// The request's size alone: "you requested 9000 tokens", "resulted in 9000 tokens", "keep the
/// first 9000 tokens".
static SENT_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:requested(?: about)?|resulted in|keep the first|your prompt has|prompt has) ([\d,]+) tokens",
    )
    .expect("size pattern compiles")
});

/// Words that say a request is over the window, when no number is given.
const OVERFLOW_HINTS: &[&str] = &[
    "context_length_exceeded",
    "context length",
    "context window",
    "context size",
    "exceed_context_size",
    "prompt is too long",
    "too many tokens",
    "reduce the length of the messages",
    "input is too long",
];

/// A request with too many tools: OpenAI says "Invalid 'tools': array too long. Expected an
/// array with maximum length 128, but got an array with length 2009 instead."; others "at most
/// 128 tools", "too many tools (max 512)", "function_declarations … at most 512".
static TOOLS_WORDS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // The `tools` array itself, not one of its tools (`'tools[0].function.description':
        // string too long … maximum length 1024` is a long description).
        r"(?i)'tools'\s*:\s*array too long.*?maximum length\s*([\d,]+)",
        r"(?i)(?:at most|maximum of|max(?:imum)?)\s*([\d,]+)\s*(?:tools|functions|function declarations)\b",
        r"(?i)too many (?:tools|functions|function declarations)\b(?:\W{0,3}max(?:imum)?\W{0,3}([\d,]+))?",
    ]
    .into_iter()
    .map(|p| Regex::new(p).expect("tools pattern compiles"))
    .collect()
});

fn number(text: &str) -> Option<u64> {
    text.replace(',', "").parse().ok()
}

/// What an error body says of a request over the window: `Some` when it says the request is
/// over it, with the window and the request's size where it names them. `body` is the whole
/// response (llama.cpp's server puts `n_ctx` and `n_prompt_tokens` beside its message),
/// `message` its message whole. Only the message and the error's `code` and `type` are read:
/// a validation error may repeat the request, whose text may say anything.
pub fn read_overflow(body: &str, message: &str) -> Option<Overflow> {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let named = |name: &str| {
        json.as_ref()
            .and_then(|v| v.pointer(&format!("/error/{name}")).or_else(|| v.get(name)))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let message = &format!("{message}\n{} {}", named("code"), named("type"));
    let field = |name: &str| {
        json.as_ref().and_then(|v| {
            v.pointer(&format!("/error/{name}"))
                .or_else(|| v.get(name))
                .and_then(Value::as_u64)
        })
    };
    // llama.cpp's server: {"error": {"type": "exceed_context_size_error", "n_ctx": 8192,
    // "n_prompt_tokens": 9000, …}}
    if let Some(window) = field("n_ctx").filter(|w| *w > 0) {
        return Some(Overflow {
            window: Some(window),
            sent: field("n_prompt_tokens"),
        });
    }
    for (pattern, window, sent) in OVERFLOW_WORDS.iter() {
        if let Some(found) = pattern.captures(message) {
            return Some(Overflow {
                window: found
                    .get(*window)
                    .and_then(|m| number(m.as_str()))
                    .filter(|w| *w > 0),
                sent: found.get(*sent).and_then(|m| number(m.as_str())),
            });
        }
    }
    let window = WINDOW_WORDS
        .iter()
        .find_map(|p| p.captures(message))
        .and_then(|c| number(&c[1]));
    let sent = SENT_WORDS.captures(message).and_then(|c| number(&c[1]));
    let lower = message.to_ascii_lowercase();
    let hinted = OVERFLOW_HINTS.iter().any(|h| lower.contains(h))
        || lower.contains("maximum") && lower.contains("token");
    let window = window.filter(|w| *w > 0);
    (window.is_some() || hinted).then_some(Overflow { window, sent })
}

/// What an error body says of a request with more tools than the provider takes: `Some` when
/// it says so, with the most it takes where it names it.
pub fn read_too_many_tools(message: &str) -> Option<Option<usize>> {
    let lower = message.to_ascii_lowercase();
    let about_tools = lower.contains("tools")
        || lower.contains("functions")
        || lower.contains("function_declarations")
        || lower.contains("function declarations");
    if !about_tools || lower.contains("token") {
        return None;
    }
    TOOLS_WORDS.iter().find_map(|p| {
        p.captures(message).map(|c| {
            c.get(1)
                .and_then(|m| number(m.as_str()))
                .and_then(|n| usize::try_from(n).ok())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each provider's refusal of a request over the window, as it writes it: the body, the
    /// window and the size read from it.
    #[test]
    fn each_providers_overflow_names_its_window() {
        let cases: &[(&str, &str, Option<u64>, Option<u64>)] = &[
            (
                "OpenAI",
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9034 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                Some(8192),
                Some(9034),
            ),
            (
                "OpenAI, newer models",
                r#"{"error":{"message":"Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 300012 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                Some(272_000),
                Some(300_012),
            ),
            (
                "vLLM",
                r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
                Some(4096),
                Some(5000),
            ),
            (
                "OpenRouter",
                r#"{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140211 tokens (140211 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400}}"#,
                Some(131_072),
                Some(140_211),
            ),
            (
                "llama.cpp's server",
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
                Some(8192),
                Some(9000),
            ),
            (
                "llama.cpp's server, older",
                r#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"invalid_request_error"}}"#,
                Some(8192),
                Some(9000),
            ),
            (
                "Anthropic",
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
                Some(200_000),
                Some(208_310),
            ),
            (
                "Gemini",
                r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
                Some(1_048_576),
                Some(1_200_000),
            ),
            (
                "Mistral",
                r#"{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_message_error","param":null,"code":"3051"}"#,
                Some(32768),
                Some(40000),
            ),
            (
                "LM Studio",
                r#"{"error":"Trying to keep the first 9120 tokens when context the overflows. However, the model is loaded with context length of only 8192 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}"#,
                Some(8192),
                Some(9120),
            ),
            (
                "Groq (no numbers)",
                r#"{"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                None,
                None,
            ),
        ];
        for (who, body, window, sent) in cases {
            let message = super::super::error::whole_message(body);
            let read = read_overflow(body, &message)
                .unwrap_or_else(|| panic!("{who}: not read as an overflow: {message}"));
            assert_eq!(read.window, *window, "{who}: {message}");
            assert_eq!(read.sent, *sent, "{who}: {message}");
            assert_eq!(read_too_many_tools(&message), None, "{who}");
        }
    }

    #[test]
    fn too_many_tools_is_its_own_refusal() {
        let cases: &[(&str, &str, Option<usize>)] = &[
            (
                "OpenAI",
                "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 2009 instead.",
                Some(128),
            ),
            ("a server of its own words", "too many tools (max 64)", Some(64)),
            (
                "Gemini",
                "* GenerateContentRequest.tools[0].function_declarations: at most 512 function declarations can be specified",
                Some(512),
            ),
            ("no number", "Too many tools were provided", None),
        ];
        for (who, message, max) in cases {
            assert_eq!(read_too_many_tools(message), Some(*max), "{who}");
        }
        for other in [
            "This model's maximum context length is 8192 tokens",
            "Invalid 'messages': array too long",
            "The tool 'x' is not supported",
            // One tool's description or name too long: not too many tools.
            "Invalid 'tools[0].function.description': string too long. Expected a string with maximum length 1024, but got a string with length 1400 instead.",
            "Invalid 'tools[3].function.name': string too long. Expected a string with maximum length 64, but got a string with length 80 instead.",
        ] {
            assert_eq!(read_too_many_tools(other), None, "{other}");
        }
    }

    #[test]
    fn a_validation_error_repeating_the_request_is_not_read_for_its_words() {
        // A 422 that echoes the conversation, which happens to speak of context lengths.
        let body = r#"{"detail":[{"type":"missing","loc":["body","model"],"msg":"Field required","input":{"messages":[{"role":"user","content":"what is the maximum context length is 4096 tokens of a model?"}]}}]}"#;
        let message = super::super::error::whole_message(body);
        assert_eq!(read_overflow(body, &message), None);
        // A window of 0 is no window.
        let zero = r#"{"error":{"message":"bad","n_ctx":0}}"#;
        assert_eq!(read_overflow(zero, "bad"), None);
    }
}
