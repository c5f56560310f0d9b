//! From a configured provider (its kind and base URL) and the key read from the keychain at
//! request time to a client behind the [`Provider`] trait. Nothing here is stored: the caller
//! builds a client per use, so a replaced key or address takes effect at once.

use std::sync::Arc;

use secrecy::SecretString;

use super::anthropic::Anthropic;
use super::gemini::Gemini;
use super::ollama::Ollama;
use super::openai::OpenAiCompatible;
use super::{HttpOptions, Provider, ProviderError};
use crate::provider_config::ProviderKind;

/// The name OpenRouter shows for requests from this app
/// (<https://openrouter.ai/docs/app-attribution>). `HTTP-Referer` is left out until the project
/// has a public home page: OpenRouter keys an app page on that URL, and inventing one would
/// credit someone else.
pub const OPENROUTER_TITLE: &str = "Switchboard";

/// Builds the client for a provider of `kind` at `base_url`.
///
/// # Errors
/// [`ProviderError::MissingKey`] when the kind cannot work without a key and none is stored;
/// otherwise what the client's constructor reports (a header that cannot be sent).
/// The wire format a kind of provider speaks.
pub fn api(kind: ProviderKind) -> super::tool_names::Api {
    use super::tool_names::Api;
    match kind {
        ProviderKind::Openai | ProviderKind::Openrouter | ProviderKind::OpenaiCompatible => {
            Api::OpenAi
        }
        ProviderKind::Anthropic => Api::Anthropic,
        ProviderKind::Gemini => Api::Gemini,
        ProviderKind::Ollama => Api::Ollama,
    }
}

pub fn client(
    kind: ProviderKind,
    base_url: &str,
    key: Option<SecretString>,
    options: HttpOptions,
) -> Result<Arc<dyn Provider>, ProviderError> {
    let required = |key: Option<SecretString>| key.ok_or(ProviderError::MissingKey);
    Ok(match kind {
        ProviderKind::Openai | ProviderKind::OpenaiCompatible => Arc::new(OpenAiCompatible::new(
            base_url,
            if kind == ProviderKind::Openai {
                Some(required(key)?)
            } else {
                key
            },
            Vec::new(),
            options,
        )?),
        ProviderKind::Openrouter => Arc::new(OpenAiCompatible::new(
            base_url,
            Some(required(key)?),
            vec![
                ("X-OpenRouter-Title".to_owned(), OPENROUTER_TITLE.to_owned()),
                // The older name, still read (same page).
                ("X-Title".to_owned(), OPENROUTER_TITLE.to_owned()),
            ],
            options,
        )?),
        ProviderKind::Anthropic => Arc::new(Anthropic::new(base_url, required(key)?, options)?),
        ProviderKind::Gemini => Arc::new(Gemini::new(base_url, required(key)?, options)?),
        ProviderKind::Ollama => Arc::new(Ollama::new(base_url, key, options)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosted_apis_without_a_key_say_so_before_any_request() {
        for kind in [
            ProviderKind::Openai,
            ProviderKind::Anthropic,
            ProviderKind::Gemini,
            ProviderKind::Openrouter,
        ] {
            let err = client(
                kind,
                "https://example.invalid",
                None,
                HttpOptions::default(),
            )
            .err()
            .expect("no client without a key");
            assert_eq!(err, ProviderError::MissingKey, "{kind:?}");
        }
        for kind in [ProviderKind::Ollama, ProviderKind::OpenaiCompatible] {
            assert!(client(kind, "http://127.0.0.1:1", None, HttpOptions::default()).is_ok());
        }
    }
}
