//! What a person configures about a model provider: its kind, name, base URL and default
//! model, and the rules those values must follow. The key is not here: it goes straight to
//! [`crate::secrets`]. Talking to providers is a later module's job (`providers/`).

use serde::{Deserialize, Serialize};
use url::Url;

use crate::input::InvalidInput;
use crate::text::one_line;

pub const MAX_NAME_CHARS: usize = 64;
pub const MAX_MODEL_CHARS: usize = 200;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
#[clap(rename_all = "snake_case")]
pub enum ProviderKind {
    #[value(alias = "open-ai")]
    Openai,
    Anthropic,
    Gemini,
    Ollama,
    Openrouter,
    #[value(alias = "openai-compatible")]
    OpenaiCompatible,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ProviderKindInfo {
    pub kind: ProviderKind,
    pub label: &'static str,
    /// Empty when the kind has no usual address and the person must give one.
    pub default_base_url: &'static str,
    pub needs_key: bool,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 6] = [
        ProviderKind::Openai,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
        ProviderKind::Ollama,
        ProviderKind::Openrouter,
        ProviderKind::OpenaiCompatible,
    ];

    pub fn info(self) -> ProviderKindInfo {
        let (label, default_base_url, needs_key) = match self {
            ProviderKind::Openai => ("OpenAI", "https://api.openai.com/v1", true),
            ProviderKind::Anthropic => ("Anthropic", "https://api.anthropic.com", true),
            ProviderKind::Gemini => (
                "Google Gemini",
                "https://generativelanguage.googleapis.com/v1beta",
                true,
            ),
            ProviderKind::Ollama => ("Ollama", "http://127.0.0.1:11434", false),
            ProviderKind::Openrouter => ("OpenRouter", "https://openrouter.ai/api/v1", true),
            // LM Studio, llama.cpp, vLLM, Groq, …: the person gives the address; a key is optional.
            ProviderKind::OpenaiCompatible => ("OpenAI-compatible", "", false),
        };
        ProviderKindInfo {
            kind: self,
            label,
            default_base_url,
            needs_key,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Openrouter => "openrouter",
            ProviderKind::OpenaiCompatible => "openai_compatible",
        }
    }

    pub fn parse(s: &str) -> Option<ProviderKind> {
        ProviderKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A starting point in the "Add a provider" form: which API a host speaks and where it usually
/// listens. Only the kind and base URL are stored; the preset is not remembered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Preset {
    pub id: &'static str,
    pub label: &'static str,
    pub kind: ProviderKind,
    /// Empty only for the custom preset.
    pub base_url: &'static str,
    pub needs_key: bool,
    /// Runs on this computer.
    pub local: bool,
}

const fn preset(
    id: &'static str,
    label: &'static str,
    kind: ProviderKind,
    base_url: &'static str,
    needs_key: bool,
    local: bool,
) -> Preset {
    Preset {
        id,
        label,
        kind,
        base_url,
        needs_key,
        local,
    }
}

/// Every preset, hosted ones first, the custom one last. Addresses are each host's documented
/// default (LM Studio's server tab, `llama-server --port 8080`, `vllm serve` on 8000).
pub const PRESETS: &[Preset] = &[
    preset(
        "openai",
        "OpenAI",
        ProviderKind::Openai,
        "https://api.openai.com/v1",
        true,
        false,
    ),
    preset(
        "anthropic",
        "Anthropic",
        ProviderKind::Anthropic,
        "https://api.anthropic.com",
        true,
        false,
    ),
    preset(
        "gemini",
        "Google Gemini",
        ProviderKind::Gemini,
        "https://generativelanguage.googleapis.com/v1beta",
        true,
        false,
    ),
    preset(
        "openrouter",
        "OpenRouter",
        ProviderKind::Openrouter,
        "https://openrouter.ai/api/v1",
        true,
        false,
    ),
    preset(
        "groq",
        "Groq",
        ProviderKind::OpenaiCompatible,
        "https://api.groq.com/openai/v1",
        true,
        false,
    ),
    preset(
        "deepseek",
        "DeepSeek",
        ProviderKind::OpenaiCompatible,
        "https://api.deepseek.com",
        true,
        false,
    ),
    preset(
        "mistral",
        "Mistral",
        ProviderKind::OpenaiCompatible,
        "https://api.mistral.ai/v1",
        true,
        false,
    ),
    preset(
        "ollama",
        "Ollama",
        ProviderKind::Ollama,
        "http://127.0.0.1:11434",
        false,
        true,
    ),
    preset(
        "ollama_openai",
        "Ollama (OpenAI API)",
        ProviderKind::OpenaiCompatible,
        "http://127.0.0.1:11434/v1",
        false,
        true,
    ),
    preset(
        "lm_studio",
        "LM Studio",
        ProviderKind::OpenaiCompatible,
        "http://127.0.0.1:1234/v1",
        false,
        true,
    ),
    preset(
        "llama_cpp",
        "llama.cpp server",
        ProviderKind::OpenaiCompatible,
        "http://127.0.0.1:8080/v1",
        false,
        true,
    ),
    preset(
        "vllm",
        "vLLM",
        ProviderKind::OpenaiCompatible,
        "http://127.0.0.1:8000/v1",
        false,
        true,
    ),
    preset(
        "custom",
        "Custom (OpenAI-compatible)",
        ProviderKind::OpenaiCompatible,
        "",
        false,
        false,
    ),
];

/// The preset with this id.
pub fn preset_by_id(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// A provider as the UI and the command line see it: never with its key, only whether one is
/// stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Provider {
    pub id: String,
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub default_model: Option<String>,
    pub has_key: bool,
    pub created_at: i64,
}

/// Checks a provider name: required, one line, at most [`MAX_NAME_CHARS`] characters, no `/`
/// (it names the keychain entry) and no [hidden](crate::text::is_hidden) characters (which
/// would make one provider's name look like another's).
///
/// # Errors
/// [`InvalidInput`] on field `name`.
pub fn validate_name(raw: &str) -> Result<String, InvalidInput> {
    let name = one_line(raw, usize::MAX);
    if name.is_empty() {
        return Err(InvalidInput::new("name", "Give the provider a name."));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(InvalidInput::new(
            "name",
            format!("Keep the name to {MAX_NAME_CHARS} characters or fewer."),
        ));
    }
    if name.contains('/') {
        return Err(InvalidInput::new("name", "A name cannot contain “/”."));
    }
    if let Some(hidden) = crate::text::first_hidden(&name) {
        return Err(InvalidInput::new(
            "name",
            format!("A name cannot contain invisible characters ({hidden})."),
        ));
    }
    Ok(name)
}

/// Checks a base URL (empty means the kind's default): https, or http to this computer or a
/// private network address only ([`crate::net::is_local_address`]), a host, no user name or
/// password inside it (a key goes in the key field, where it is kept in the keychain).
///
/// # Errors
/// [`InvalidInput`] on field `base_url`.
pub fn validate_base_url(kind: ProviderKind, raw: Option<&str>) -> Result<String, InvalidInput> {
    let raw = raw.map(str::trim).unwrap_or_default();
    let raw = if raw.is_empty() {
        kind.info().default_base_url
    } else {
        raw
    };
    if raw.is_empty() {
        return Err(InvalidInput::new(
            "base_url",
            "This kind of provider needs a base URL, such as http://127.0.0.1:1234/v1.",
        ));
    }
    let url = Url::parse(raw).map_err(|e| {
        InvalidInput::new(
            "base_url",
            format!("“{}” is not a valid URL ({e}).", one_line(raw, 80)),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(InvalidInput::new(
            "base_url",
            "The base URL must start with http:// or https://.",
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(InvalidInput::new(
            "base_url",
            "The base URL needs a host name.",
        ));
    }
    if url.scheme() == "http" && !crate::net::is_local_address(&url) {
        return Err(InvalidInput::new(
            "base_url",
            "Plain http:// is allowed only for this computer or a private network address \
             (localhost, 127.0.0.1, 10.…, 172.16–31.…, 192.168.…): anywhere else the API key \
             would cross the internet unencrypted. Use https://.",
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(InvalidInput::new(
            "base_url",
            "Don’t put credentials in the URL; use the API key field, which is kept in the OS keychain.",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(InvalidInput::new(
            "base_url",
            "The base URL cannot have a query (?…) or fragment (#…).",
        ));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// Tidies a model name; blank means none.
///
/// # Errors
/// [`InvalidInput`] on field `default_model` when it is too long.
pub fn validate_model(raw: Option<&str>) -> Result<Option<String>, InvalidInput> {
    let model = one_line(raw.unwrap_or_default(), usize::MAX);
    if model.chars().count() > MAX_MODEL_CHARS {
        return Err(InvalidInput::new(
            "default_model",
            format!("Keep the model name to {MAX_MODEL_CHARS} characters or fewer."),
        ));
    }
    Ok((!model.is_empty()).then_some(model))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_name_is_refused_on_the_name_field() {
        assert_eq!(validate_name("   ").unwrap_err().field, "name");
        assert_eq!(validate_name("  My  OpenAI ").unwrap(), "My OpenAI");
    }

    #[test]
    fn malformed_base_urls_are_refused_on_the_base_url_field() {
        for bad in [
            "not a url",
            "ftp://example.com",
            "http://",
            "https://user:pw@example.com/v1",
            "https://example.com/v1?key=abc",
            "javascript:alert(1)",
            "http://api.openai.com/v1",
            "http://203.0.113.7:8080/v1",
        ] {
            let err = validate_base_url(ProviderKind::Openai, Some(bad)).unwrap_err();
            assert_eq!(err.field, "base_url", "{bad}");
        }
    }

    #[test]
    fn a_blank_base_url_means_the_kinds_default() {
        assert_eq!(
            validate_base_url(ProviderKind::Ollama, Some(" ")).unwrap(),
            "http://127.0.0.1:11434"
        );
        assert_eq!(
            validate_base_url(ProviderKind::OpenaiCompatible, None)
                .unwrap_err()
                .field,
            "base_url"
        );
        assert_eq!(
            validate_base_url(
                ProviderKind::OpenaiCompatible,
                Some("http://localhost:1234/v1/")
            )
            .unwrap(),
            "http://localhost:1234/v1"
        );
    }

    #[test]
    fn every_preset_has_a_valid_address_for_its_kind() {
        for p in PRESETS {
            if p.id == "custom" {
                assert!(p.base_url.is_empty());
                continue;
            }
            assert_eq!(
                validate_base_url(p.kind, Some(p.base_url)).unwrap(),
                p.base_url,
                "{}",
                p.id
            );
            assert_eq!(preset_by_id(p.id), Some(p), "ids are unique");
        }
        assert_eq!(
            preset_by_id("lm_studio").unwrap().kind,
            ProviderKind::OpenaiCompatible
        );
    }

    #[test]
    fn kinds_round_trip_through_their_names() {
        for kind in ProviderKind::ALL {
            assert_eq!(ProviderKind::parse(kind.as_str()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.as_str())
            );
        }
    }
}
