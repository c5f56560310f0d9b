//! Counting a request's tokens before it is sent (issue 55), and what fills it: the system
//! prompt, the tools' definitions, the history and the attached files. With the model family's
//! own tokenizer where one is published — OpenAI's `o200k_base` and `cl100k_base`, through the
//! tiktoken-rs crate — else an estimate of four bytes a token; either one calibrated by the
//! input tokens the provider reported for an earlier request of the run. Counting is
//! incremental: each text's count is kept by its hash, so a long history is not tokenised
//! again each round (only what is new).

use std::collections::HashMap;
use std::hash::BuildHasher;

use crate::providers::{ChatMessage, ChatRequest, Part};
pub use crate::store::ContextUse;

/// About how many tokens an image or a document takes, and a message's frame besides its text:
/// the estimates [`super::fit`] measures turns with, so that both count a request alike.
const FILE_TOKENS: u64 = super::fit::IMAGE_TOKENS as u64;
const MESSAGE_TOKENS: u64 = super::fit::MESSAGE_TOKENS as u64;
/// The most texts whose counts are kept.
const KEPT_COUNTS: usize = 50_000;

/// The tokenizers this build has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tokenizer {
    O200k,
    Cl100k,
    /// Four bytes a token.
    Estimate,
}

/// The tokenizer of `model`'s family, where one is published.
fn tokenizer_of(model: &str) -> Tokenizer {
    let model = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let starts = |p: &str| model.starts_with(p);
    if starts("gpt-4o")
        || starts("gpt-4.1")
        || starts("gpt-4.5")
        || starts("gpt-5")
        || starts("chatgpt-4o")
        || starts("o1")
        || starts("o3")
        || starts("o4")
        || starts("gpt-oss")
    {
        Tokenizer::O200k
    } else if starts("gpt-4") || starts("gpt-3.5") {
        Tokenizer::Cl100k
    } else {
        Tokenizer::Estimate
    }
}

/// Counts a run's requests; see the module's note.
pub struct Counter {
    tokenizer: Tokenizer,
    /// Counts by the text's hash.
    kept: HashMap<u64, u64>,
    /// The provider's count over ours, from the newest request it reported on; 1 before.
    scale: f64,
    calibrated: bool,
    /// The offered name of Switchboard's `load_skill`, whose definition lists the skills.
    skills_tool: Option<String>,
}

/// A text's hash: foldhash reads a few gigabytes a second, so a long history's lookups cost
/// far less than tokenising it again.
fn hash_of(text: &str) -> u64 {
    foldhash::fast::FixedState::default().hash_one(text)
}

impl Counter {
    /// A counter for `model`'s requests.
    pub fn for_model(model: &str) -> Counter {
        Counter {
            tokenizer: tokenizer_of(model),
            kept: HashMap::new(),
            scale: 1.0,
            calibrated: false,
            skills_tool: None,
        }
    }

    /// Counts the tool offered as `wire_name` (`load_skill`, which lists the skills) as the
    /// skills' part of the tools.
    #[must_use]
    pub fn with_skills_tool(mut self, wire_name: Option<String>) -> Counter {
        self.skills_tool = wire_name;
        self
    }

    /// Loads the tokenizer on a blocking thread (building OpenAI's encodings takes a moment),
    /// so that the first request's count does not hold the runtime's thread; a count asked for
    /// before it is ready waits for it.
    pub fn warm_up(&self) {
        let tokenizer = self.tokenizer;
        if tokenizer == Tokenizer::Estimate || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        // Detached: nothing waits for it but a count that needs it.
        let _loading = tokio::task::spawn_blocking(move || match tokenizer {
            Tokenizer::O200k => {
                let _ = tiktoken_rs::o200k_base_singleton();
            }
            Tokenizer::Cl100k => {
                let _ = tiktoken_rs::cl100k_base_singleton();
            }
            Tokenizer::Estimate => {}
        });
    }

    /// The tokens of `text`, uncalibrated.
    fn text(&mut self, text: &str) -> u64 {
        if text.is_empty() {
            return 0;
        }
        // Short texts are counted again rather than kept: hashing costs about as much.
        if text.len() < 64 {
            return self.count(text);
        }
        let key = hash_of(text);
        if let Some(&n) = self.kept.get(&key) {
            return n;
        }
        let n = self.count(text);
        if self.kept.len() >= KEPT_COUNTS {
            self.kept.clear();
        }
        self.kept.insert(key, n);
        n
    }

    fn count(&self, text: &str) -> u64 {
        let n = match self.tokenizer {
            Tokenizer::O200k => tiktoken_rs::o200k_base_singleton().count_ordinary(text),
            Tokenizer::Cl100k => tiktoken_rs::cl100k_base_singleton().count_ordinary(text),
            Tokenizer::Estimate => super::fit::tokens_of(text.len()),
        };
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// What `request` holds, calibrated; `window` is the model's, when known.
    pub fn measure(&mut self, request: &ChatRequest, window: Option<u64>) -> ContextUse {
        let system = request
            .system
            .as_deref()
            .map_or(0, |s| self.text(s) + MESSAGE_TOKENS);
        let (mut tools, mut skills) = (0, 0);
        for tool in &request.tools {
            let tokens = self.text(&tool.name)
                + self.text(&tool.description)
                + self.text(&tool.parameters.to_string())
                + MESSAGE_TOKENS;
            tools += tokens;
            if self.skills_tool.as_deref() == Some(tool.name.as_str()) {
                skills += tokens;
            }
        }
        let (mut history, mut attachments) = (0, 0);
        for message in &request.messages {
            // Blocks a provider ran itself go only with a request that searches again (see
            // `formats::anthropic`).
            if matches!(message, ChatMessage::ServerBlocks { .. })
                && request.deferred_tools.is_empty()
            {
                continue;
            }
            history += MESSAGE_TOKENS;
            match message {
                ChatMessage::User { parts } => {
                    for part in parts {
                        match part {
                            Part::Text(text) => history += self.text(text),
                            _ => attachments += FILE_TOKENS,
                        }
                    }
                }
                ChatMessage::Assistant { text, tool_calls } => {
                    history += text.as_deref().map_or(0, |t| self.text(t));
                    for call in tool_calls {
                        history += self.text(&call.name) + self.text(&call.raw_arguments) + 3;
                    }
                }
                ChatMessage::Tool {
                    content, images, ..
                } => {
                    history += self.text(content);
                    attachments += FILE_TOKENS * u64::try_from(images.len()).unwrap_or(0);
                }
                ChatMessage::ServerBlocks { blocks } => {
                    for block in blocks {
                        history += self.text(&block.to_string());
                    }
                }
            }
        }
        let scale = |n: u64| {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )]
            let scaled = (n as f64 * self.scale).round() as u64;
            scaled
        };
        let (system, tools, history, attachments, skills) = (
            scale(system),
            scale(tools),
            scale(history),
            scale(attachments),
            scale(skills),
        );
        let name = match self.tokenizer {
            Tokenizer::O200k => "o200k_base",
            Tokenizer::Cl100k => "cl100k_base",
            Tokenizer::Estimate => "estimate",
        };
        ContextUse {
            tokens: system + tools + history + attachments,
            window,
            system,
            tools,
            history,
            attachments,
            skills,
            counted_by: if self.calibrated {
                format!("{name}, calibrated")
            } else {
                name.to_owned()
            },
            needed: None,
            given: None,
        }
    }

    /// The provider said a request this counter measured at `measured` (calibrated then) took
    /// `reported` input tokens: later counts are scaled to match. A report far off is not taken,
    /// nor one much under the count: Ollama counts only the prompt it did not have cached, and
    /// counting too few is what lets a request overflow.
    pub fn calibrate(&mut self, measured: u64, reported: u64) {
        if measured < 100 || reported == 0 {
            return;
        }
        #[allow(clippy::cast_precision_loss)]
        let ratio = reported as f64 / measured as f64 * self.scale;
        if (0.8..=2.0).contains(&ratio) {
            self.scale = ratio;
            self.calibrated = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ToolSpec;
    use serde_json::json;

    fn request(text: &str) -> ChatRequest {
        ChatRequest {
            model: "gpt-4o".into(),
            system: Some("You are helpful.".into()),
            messages: vec![
                ChatMessage::User {
                    parts: vec![Part::Text(text.into())],
                },
                ChatMessage::Assistant {
                    text: Some("Sure.".into()),
                    tool_calls: Vec::new(),
                },
            ],
            tools: vec![ToolSpec {
                name: "time__now".into(),
                description: "The current time.".into(),
                parameters: json!({"type": "object", "properties": {}}),
            }],
            ..ChatRequest::default()
        }
    }

    #[test]
    fn openai_models_are_counted_with_their_own_tokenizer_and_others_estimated() {
        assert_eq!(tokenizer_of("gpt-4o-mini"), Tokenizer::O200k);
        assert_eq!(tokenizer_of("openai/gpt-5"), Tokenizer::O200k);
        assert_eq!(tokenizer_of("gpt-4-turbo"), Tokenizer::Cl100k);
        assert_eq!(tokenizer_of("claude-sonnet-4-5"), Tokenizer::Estimate);
        let mut counter = Counter::for_model("gpt-4o");
        // "hello world" is two tokens in o200k_base.
        assert_eq!(counter.text("hello world"), 2);
        let used = counter.measure(&request("hello world"), Some(128_000));
        assert_eq!(used.counted_by, "o200k_base");
        assert_eq!(
            used.tokens,
            used.system + used.tools + used.history + used.attachments
        );
        assert!(used.tools > 10 && used.history > 8, "{used:?}");
        let estimated = Counter::for_model("llama3.2").measure(&request("hello world"), None);
        assert_eq!(estimated.counted_by, "estimate");
    }

    #[test]
    fn a_long_text_is_counted_once_and_a_report_calibrates_later_counts() {
        let mut counter = Counter::for_model("my-local-model");
        let long = "word ".repeat(10_000);
        let first = counter.measure(&request(&long), None);
        assert_eq!(counter.kept.len(), 1, "the long text is kept");
        let again = counter.measure(&request(&long), None);
        assert_eq!(first, again);
        // The provider counted 20 % more than the estimate.
        counter.calibrate(first.tokens, first.tokens * 12 / 10);
        let calibrated = counter.measure(&request(&long), None);
        assert_eq!(calibrated.counted_by, "estimate, calibrated");
        assert!(
            calibrated.tokens.abs_diff(first.tokens * 12 / 10) <= 4,
            "{calibrated:?}"
        );
        // A report far off is not taken.
        counter.calibrate(calibrated.tokens, 10);
        assert_eq!(counter.measure(&request(&long), None), calibrated);
    }
}
