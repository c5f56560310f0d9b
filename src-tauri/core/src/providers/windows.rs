//! A dated table of well-known models' windows, in tokens, as their makers publish them: what
//! Switchboard plans for when neither the person, a refusal from the provider, nor the
//! provider's model list has said (`crate::store::ModelWindow` keeps those). Written
//! 2026-12-05; a model's id is matched by its longest known prefix, after a router's
//! `maker/` and Ollama's `:tag` are taken off (`openai/gpt-4o-mini`, `llama3.1:8b`).

/// `(prefix of the model's id, window in tokens)`.
const KNOWN: &[(&str, u64)] = &[
    // OpenAI
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    // Anthropic
    ("claude-", 200_000),
    // Google
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-2", 1_048_576),
    ("gemini-3", 1_048_576),
    // Open-weight families, as Ollama and llama.cpp load them at their full length
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3.3", 131_072),
    ("llama-3.1", 131_072),
    ("llama-3.3", 131_072),
    ("llama3", 8_192),
    ("qwen3", 40_960),
    ("qwen2.5", 32_768),
    ("mistral-nemo", 131_072),
    ("mistral-small", 32_768),
    ("mistral-large", 131_072),
    ("mistral", 32_768),
    ("deepseek-chat", 65_536),
    ("deepseek-reasoner", 65_536),
    ("deepseek-r1", 131_072),
    ("gemma3", 131_072),
    ("gemma2", 8_192),
    ("phi4", 16_384),
];

/// The window of `model` as the table knows it.
pub fn known(model: &str) -> Option<u64> {
    let id = model.trim().to_ascii_lowercase();
    let id = id.rsplit('/').next().unwrap_or(&id);
    let id = id.split(':').next().unwrap_or(id);
    KNOWN
        .iter()
        .filter(|(prefix, _)| id.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, tokens)| *tokens)
}

#[cfg(test)]
mod tests {
    use super::known;

    #[test]
    fn a_model_is_known_by_its_longest_prefix_whoever_serves_it() {
        assert_eq!(known("gpt-4o-mini"), Some(128_000));
        assert_eq!(known("openai/gpt-4o-2024-08-06"), Some(128_000));
        assert_eq!(known("gpt-4"), Some(8_192));
        assert_eq!(known("gpt-4.1-nano"), Some(1_047_576));
        assert_eq!(known("anthropic/claude-sonnet-4"), Some(200_000));
        assert_eq!(known("llama3.1:8b"), Some(131_072));
        assert_eq!(known("llama3:latest"), Some(8_192));
        assert_eq!(known("qwen3:0.6b"), Some(40_960));
        assert_eq!(known("my-own-finetune"), None);
    }
}
