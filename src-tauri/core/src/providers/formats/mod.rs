//! Pure wire mappings, one folder per API family: build the request body, turn each streamed
//! event into [`super::ProviderEvent`]s. No I/O here, so every quirk is tested offline.

pub mod anthropic;
pub mod gemini;
pub mod ollama;
pub mod openai;

/// A streamed payload that cannot be turned into events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The host reported an error inside a 200 stream (OpenRouter, Anthropic and others do).
    #[error("The provider reported an error: {message}")]
    Api { message: String },
    #[error("The provider sent a chunk that is not valid JSON: {detail}")]
    BadChunk { detail: String },
}
