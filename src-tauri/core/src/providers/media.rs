//! What a model can be given besides text (issue 17): images, and how large each API takes
//! them, and PDFs. Whether a model takes images is the person's switch for that model where
//! they set one, else what its name says of its family (below, kept short and checked by
//! tests), else no: a request with an image a model cannot read fails, so an unknown model is
//! not sent one and the person is told how to switch it on.

use super::tool_names::Api;
use crate::attachments::ImageLimits;

/// What one model can be given besides text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Media {
    /// `Some` when the model takes images, with how large.
    pub images: Option<ImageLimits>,
    /// Whether the API takes a PDF as a document.
    pub pdfs: bool,
}

/// The largest image each API takes (the providers' documented limits, Anthropic's
/// recommended size).
pub fn image_limits(api: Api) -> ImageLimits {
    const MB: usize = 1024 * 1024;
    match api {
        // 1568 px on the longer side is what Anthropic scales to; 5 MB of base64 a image.
        Api::Anthropic => ImageLimits {
            max_edge: 1568,
            max_bytes: 3 * MB + 3 * MB / 4,
        },
        Api::OpenAi => ImageLimits {
            max_edge: 2048,
            max_bytes: 15 * MB,
        },
        Api::Gemini => ImageLimits {
            max_edge: 3072,
            max_bytes: 15 * MB,
        },
        Api::Ollama => ImageLimits {
            max_edge: 1568,
            max_bytes: 10 * MB,
        },
    }
}

/// Whether a model of this name is known to take images, from its family.
pub fn known_to_take_images(api: Api, model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    // An OpenRouter id names its maker first: "openai/gpt-4o".
    let name = model.rsplit('/').next().unwrap_or(&model);
    let any = |families: &[&str]| families.iter().any(|f| name.contains(f));
    match api {
        Api::Anthropic => name.starts_with("claude") && !any(&["claude-2", "claude-instant"]),
        Api::Gemini => name.starts_with("gemini") && !any(&["embedding", "aqa"]),
        Api::OpenAi | Api::Ollama => {
            any(&[
                "gpt-4o",
                "gpt-4.1",
                "gpt-4.5",
                "gpt-4-turbo",
                "gpt-5",
                "claude-3",
                "claude-sonnet",
                "claude-opus",
                "claude-haiku",
                "gemini",
                "vision",
                "llava",
                "-vl",
                "vl:",
                "vl-",
                "gemma3",
                "gemma-3",
                "pixtral",
                "minicpm-v",
                "moondream",
                "llama4",
                "llama-4",
                "mistral-small3.1",
                "mistral-small-3.1",
            ]) || o_series(name)
        }
    }
}

/// OpenAI's reasoning models that read images: o1, o3 and o4-mini, not o1-mini or o3-mini.
fn o_series(name: &str) -> bool {
    (name.starts_with("o1") || name.starts_with("o3") || name.starts_with("o4"))
        && !name.starts_with("o1-mini")
        && !name.starts_with("o3-mini")
}

/// What `model` at `base_url` through `api` can be given; `switch` is the person's own setting
/// for this model (takes images or not), which wins.
pub fn media(api: Api, base_url: &str, model: &str, switch: Option<bool>) -> Media {
    let images = switch.unwrap_or_else(|| known_to_take_images(api, model));
    Media {
        images: images.then(|| image_limits(api)),
        pdfs: match api {
            Api::Anthropic | Api::Gemini => true,
            // OpenAI's own chat completions take a PDF as a `file` part; other hosts that
            // speak its format mostly do not.
            Api::OpenAi => url::Url::parse(base_url)
                .ok()
                .and_then(|u| {
                    u.host_str()
                        .map(|h| h.eq_ignore_ascii_case("api.openai.com"))
                })
                .unwrap_or(false),
            Api::Ollama => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_family_says_whether_it_takes_images() {
        for (api, model) in [
            (Api::Anthropic, "claude-sonnet-4-5"),
            (Api::Anthropic, "claude-3-haiku-20240307"),
            (Api::Gemini, "gemini-2.5-flash"),
            (Api::OpenAi, "gpt-4o-mini"),
            (Api::OpenAi, "gpt-5"),
            (Api::OpenAi, "o3"),
            (Api::OpenAi, "openai/gpt-4.1"),
            (Api::OpenAi, "anthropic/claude-3.5-sonnet"),
            (Api::Ollama, "llava:13b"),
            (Api::Ollama, "llama3.2-vision"),
            (Api::Ollama, "qwen2.5vl:7b"),
            (Api::Ollama, "gemma3:4b"),
        ] {
            assert!(known_to_take_images(api, model), "{api:?} {model}");
        }
        for (api, model) in [
            (Api::Anthropic, "claude-2.1"),
            (Api::Gemini, "text-embedding-004"),
            (Api::OpenAi, "gpt-3.5-turbo"),
            (Api::OpenAi, "o1-mini"),
            (Api::OpenAi, "o3-mini"),
            (Api::OpenAi, "deepseek-chat"),
            (Api::Ollama, "llama3.1:8b"),
            (Api::Ollama, "qwen2.5:7b"),
        ] {
            assert!(!known_to_take_images(api, model), "{api:?} {model}");
        }
    }

    #[test]
    fn the_persons_switch_wins_and_pdfs_go_where_the_api_takes_them() {
        let local = media(
            Api::Ollama,
            "http://127.0.0.1:11434",
            "my-model",
            Some(true),
        );
        assert_eq!(local.images, Some(image_limits(Api::Ollama)));
        assert!(!local.pdfs);
        let off = media(
            Api::OpenAi,
            "https://api.openai.com/v1",
            "gpt-4o",
            Some(false),
        );
        assert_eq!(off.images, None);
        assert!(off.pdfs);
        let groq = media(
            Api::OpenAi,
            "https://api.groq.com/openai/v1",
            "gpt-4o",
            None,
        );
        assert!(groq.images.is_some() && !groq.pdfs);
        assert!(
            media(
                Api::Anthropic,
                "https://api.anthropic.com",
                "claude-2.1",
                None
            )
            .pdfs
        );
    }
}
