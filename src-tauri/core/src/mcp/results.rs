//! A tool's result for the model: every content kind MCP defines (text, image, audio, embedded
//! resource, resource link, structured content) turned into text a model can read, capped with
//! a visible marker. The full result is kept for the record by the caller; only what goes to
//! the model is cut. Also what a person sees of a result beyond its text ([`view`]): images,
//! audio, resources, links and structured content, for the tool card.

use serde::Serialize;
use serde_json::Value;

/// What goes to the model at most, unless Settings say otherwise or the model's window is
/// smaller ([`share_of_window`]).
pub const DEFAULT_MODEL_CHARS: usize = 100_000;

/// Characters of one tool result a model whose window is `tokens` gets at most: a quarter of
/// the window, counted at three characters a token (cautious: English prose runs near four,
/// JSON, code and most other languages fewer), and never under 1 000.
pub fn share_of_window(tokens: u64) -> usize {
    usize::try_from(tokens / 4 * 3)
        .unwrap_or(usize::MAX)
        .max(1_000)
}

/// The text a model gets for a `tools/call` result (its wire JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelText {
    pub text: String,
    pub is_error: bool,
    /// Characters left out by the cap.
    pub cut_chars: usize,
}

/// Turns a result into text for the model, at most `max_chars` characters plus the marker.
pub fn for_model(result: &Value, max_chars: usize) -> ModelText {
    let mut parts: Vec<String> = Vec::new();
    for item in result["content"].as_array().into_iter().flatten() {
        parts.push(content_text(item));
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        // Servers that send structured content usually repeat it as text; add it only if not.
        // The Python SDK wraps a tool's string as `{"result": "…"}` beside the same text: the
        // model is not given it twice.
        let wraps_the_text = structured.as_object().is_some_and(|fields| {
            fields.len() == 1
                && fields
                    .get("result")
                    .and_then(Value::as_str)
                    .is_some_and(|text| parts.iter().any(|p| p == text))
        });
        let json = structured.to_string();
        if !wraps_the_text && !parts.iter().any(|p| p.contains(&json)) {
            parts.push(json);
        }
    }
    let (text, cut_chars) = cut_to(&parts.join("\n"), max_chars);
    ModelText {
        text,
        is_error: result["isError"].as_bool().unwrap_or(false),
        cut_chars,
    }
}

/// Room the marker of a cut takes beyond the characters kept: a text no longer than its cap and
/// this is whole, or cut already.
pub const CUT_MARKER_ROOM: usize = 200;

/// What begins the note in a result that was cut ([`cut_to`]).
pub const CUT_NOTE: &str = "\n…[cut: ";

/// `text` (a result cut by [`cut_to`]) with its note naming the call whose result it is, so that
/// a model that does not see call ids (Gemini's, Ollama's requests carry none) can still ask
/// `read_result` for the rest.
pub fn naming_call(text: String, call_id: &str) -> String {
    if !was_cut(&text) {
        return text;
    }
    let id = serde_json::to_string(call_id).unwrap_or_default();
    text.replacen(
        "; read_result reads them from offset ",
        &format!("; read_result with call_id {id} reads them from offset "),
        1,
    )
}

/// Whether `text` is a result the model got cut.
pub fn was_cut(text: &str) -> bool {
    text.contains(CUT_NOTE)
}

/// `text` as a model gets it in at most `max_chars` characters (and the marker): whole, or its
/// start and its end with what was left out between them said; and how many characters were
/// left out. A log's last lines, a listing's total, an error at the bottom are often what
/// matters most after the first lines.
pub fn cut_to(text: &str, max_chars: usize) -> (String, usize) {
    let total = text.chars().count();
    if total <= max_chars {
        return (text.to_owned(), 0);
    }
    let head_chars = max_chars - max_chars / 3;
    let tail_chars = max_chars - head_chars;
    let cut = total - max_chars;
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text.chars().skip(total - tail_chars).collect();
    (
        format!(
            "{head}\n…[cut: {cut} of this result's {total} characters were left out here, \
             between its start and its end; read_result reads them from offset {head_chars}]…\n{tail}"
        ),
        cut,
    )
}

/// One content item of MCP's (a tool result's, a prompt message's) as text a model can read:
/// text as it is, anything else named with its type and size.
pub fn content_text(item: &Value) -> String {
    match item["type"].as_str().unwrap_or_default() {
        "text" => item["text"].as_str().unwrap_or_default().to_owned(),
        kind @ ("image" | "audio") => format!(
            "[{kind}: {}, {} of base64 data]",
            item["mimeType"].as_str().unwrap_or("unknown type"),
            base64_size(item["data"].as_str().map_or(0, str::len))
        ),
        "resource" => {
            let resource = &item["resource"];
            let uri = resource["uri"].as_str().unwrap_or("?");
            match resource["text"].as_str() {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!(
                    "[resource {uri}: {}, {} of binary data]",
                    resource["mimeType"].as_str().unwrap_or("unknown type"),
                    base64_size(resource["blob"].as_str().map_or(0, str::len))
                ),
            }
        }
        "resource_link" => format!(
            "[link: {} {}]",
            item["name"].as_str().unwrap_or_default(),
            item["uri"].as_str().unwrap_or_default()
        )
        .replace("  ", " "),
        other => format!("[{other} content]"),
    }
}

/// Whether a result has something for a person to see beyond the text the model reads: any
/// content that is not text, or structured content. The card asks for [`view`] only then.
pub fn is_rich(result: &Value) -> bool {
    result
        .get("structuredContent")
        .is_some_and(|v| !v.is_null())
        || result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|item| item["type"].as_str() != Some("text"))
}

/// The image types a card shows; an image of any other type is named, not shown.
pub const SHOWN_IMAGE_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/svg+xml",
];

/// One piece of a result that is not plain text, as a tool card shows it. Base64 data is passed
/// on as the server sent it; the window decodes it into a blob of the named type.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResultPart {
    /// An image of one of [`SHOWN_IMAGE_TYPES`].
    Image { mime_type: String, data: String },
    /// Audio, for a player.
    Audio { mime_type: String, data: String },
    /// Something that is not shown (an image of another type, binary resource contents, a kind
    /// this app does not know), named with its size.
    Unshown { label: String },
    /// An embedded resource with text.
    Resource {
        uri: String,
        mime_type: Option<String>,
        text: String,
    },
    /// A link to a resource the server can give.
    Link {
        uri: String,
        name: String,
        title: Option<String>,
        description: Option<String>,
        mime_type: Option<String>,
    },
}

/// What a tool card shows of a result beyond its text.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ResultView {
    /// The result's non-text content, in its order.
    pub parts: Vec<ResultPart>,
    /// The result's `structuredContent`, as sent.
    pub structured: Option<Value>,
}

fn text_of(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

/// The non-text parts and structured content of a result (its wire JSON).
pub fn view(result: &Value) -> ResultView {
    let mut parts = Vec::new();
    for item in result["content"].as_array().into_iter().flatten() {
        let mime_type = text_of(&item["mimeType"]);
        let data = || item["data"].as_str().unwrap_or_default().to_owned();
        let unshown = |what: &str, data: &Value| ResultPart::Unshown {
            label: format!(
                "{what}: {}, {}",
                mime_type.as_deref().unwrap_or("unknown type"),
                base64_size(data.as_str().map_or(0, str::len))
            ),
        };
        parts.push(match item["type"].as_str().unwrap_or_default() {
            "text" => continue,
            "image" => match &mime_type {
                Some(t) if SHOWN_IMAGE_TYPES.contains(&t.to_ascii_lowercase().as_str()) => {
                    ResultPart::Image {
                        mime_type: t.to_ascii_lowercase(),
                        data: data(),
                    }
                }
                _ => unshown("Image", &item["data"]),
            },
            "audio"
                if mime_type
                    .as_deref()
                    .is_some_and(|t| t.to_ascii_lowercase().starts_with("audio/")) =>
            {
                ResultPart::Audio {
                    mime_type: mime_type.clone().unwrap_or_default().to_ascii_lowercase(),
                    data: data(),
                }
            }
            "audio" => unshown("Audio", &item["data"]),
            "resource" => {
                let resource = &item["resource"];
                let uri = text_of(&resource["uri"]).unwrap_or_default();
                match text_of(&resource["text"]) {
                    Some(text) => ResultPart::Resource {
                        uri,
                        mime_type: text_of(&resource["mimeType"]),
                        text,
                    },
                    None => ResultPart::Unshown {
                        label: format!(
                            "Resource {uri}: {}, {}",
                            resource["mimeType"].as_str().unwrap_or("unknown type"),
                            base64_size(resource["blob"].as_str().map_or(0, str::len))
                        ),
                    },
                }
            }
            "resource_link" => ResultPart::Link {
                uri: text_of(&item["uri"]).unwrap_or_default(),
                name: text_of(&item["name"]).unwrap_or_default(),
                title: text_of(&item["title"]),
                description: text_of(&item["description"]),
                mime_type,
            },
            other => ResultPart::Unshown {
                label: format!("Content of a kind this app does not show ({other})"),
            },
        });
    }
    ResultView {
        parts,
        structured: result
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .cloned(),
    }
}

/// The size of what `base64_len` characters of base64 decode to, for a person.
pub fn base64_size(base64_len: usize) -> String {
    crate::text::byte_size((base64_len / 4 * 3) as u64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_content_kind_becomes_readable_text() {
        let result = json!({
            "content": [
                {"type": "text", "text": "Here you go"},
                {"type": "image", "data": "A".repeat(4096), "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///notes.md", "mimeType": "text/markdown", "text": "# Notes"}},
                {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAAA"}},
                {"type": "resource_link", "uri": "file:///big.csv", "name": "big.csv"}
            ],
            "structuredContent": {"rows": 3}
        });
        let out = for_model(&result, DEFAULT_MODEL_CHARS);
        assert_eq!(
            out.text,
            "Here you go\n[image: image/png, 3 KB of base64 data]\n[audio: audio/wav, 3 bytes of base64 data]\n\
             [resource file:///notes.md]\n# Notes\n[resource file:///a.bin: unknown type, 3 bytes of binary data]\n\
             [link: big.csv file:///big.csv]\n{\"rows\":3}"
        );
        assert!(!out.is_error);
        assert_eq!(out.cut_chars, 0);
    }

    #[test]
    fn a_card_sees_images_audio_resources_links_and_structured_content_but_not_svg_markup_inline() {
        let result = json!({
            "content": [
                {"type": "text", "text": "Here you go"},
                {"type": "image", "data": "iVBORw0K", "mimeType": "IMAGE/PNG"},
                {"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"},
                {"type": "image", "data": "AAAA", "mimeType": "image/x-icon"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///notes.md", "mimeType": "text/markdown", "text": "# Notes"}},
                {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAAA"}},
                {"type": "resource_link", "uri": "https://example.com/big.csv", "name": "big.csv", "description": "All rows"},
                {"type": "hologram"}
            ],
            "structuredContent": {"rows": 3}
        });
        assert!(is_rich(&result));
        let shown = view(&result);
        assert_eq!(
            shown.parts,
            vec![
                ResultPart::Image {
                    mime_type: "image/png".into(),
                    data: "iVBORw0K".into()
                },
                ResultPart::Image {
                    mime_type: "image/svg+xml".into(),
                    data: "PHN2Zz4=".into()
                },
                ResultPart::Unshown {
                    label: "Image: image/x-icon, 3 bytes".into()
                },
                ResultPart::Audio {
                    mime_type: "audio/wav".into(),
                    data: "UklGRg==".into()
                },
                ResultPart::Resource {
                    uri: "file:///notes.md".into(),
                    mime_type: Some("text/markdown".into()),
                    text: "# Notes".into()
                },
                ResultPart::Unshown {
                    label: "Resource file:///a.bin: unknown type, 3 bytes".into()
                },
                ResultPart::Link {
                    uri: "https://example.com/big.csv".into(),
                    name: "big.csv".into(),
                    title: None,
                    description: Some("All rows".into()),
                    mime_type: None
                },
                ResultPart::Unshown {
                    label: "Content of a kind this app does not show (hologram)".into()
                },
            ]
        );
        assert_eq!(shown.structured, Some(json!({"rows": 3})));
        let plain =
            json!({"content": [{"type": "text", "text": "only words"}], "structuredContent": null});
        assert!(!is_rich(&plain));
        assert!(view(&plain).parts.is_empty());
    }

    #[test]
    fn a_huge_result_is_cut_to_its_start_and_end_with_a_marker_the_model_can_see() {
        let text = format!("BEGIN{}END", "é".repeat(250_000));
        let result = json!({"content": [{"type": "text", "text": text}], "isError": true});
        let out = for_model(&result, DEFAULT_MODEL_CHARS);
        assert_eq!(out.cut_chars, 150_008);
        assert!(out.is_error);
        assert!(out.text.starts_with("BEGINééé"), "its start");
        assert!(out.text.ends_with("éééEND"), "its end");
        assert!(out.text.contains(
            "\n…[cut: 150008 of this result's 250008 characters were left out here, between its \
             start and its end; read_result reads them from offset 66667]…\n"
        ));
        let kept = out.text.chars().filter(|c| *c == 'é').count();
        assert_eq!(kept, 100_000 - "BEGIN".len() - "END".len());
    }

    #[test]
    fn a_string_wrapped_as_structured_content_is_not_given_twice() {
        let result = json!({
            "content": [{"type": "text", "text": "the answer"}],
            "structuredContent": {"result": "the answer"}
        });
        assert_eq!(for_model(&result, DEFAULT_MODEL_CHARS).text, "the answer");
        // Another field's name says something: kept.
        let named = json!({
            "content": [{"type": "text", "text": "ok"}],
            "structuredContent": {"status": "ok"}
        });
        assert_eq!(
            for_model(&named, DEFAULT_MODEL_CHARS).text,
            "ok\n{\"status\":\"ok\"}"
        );
        let other = json!({
            "content": [{"type": "text", "text": "the answer"}],
            "structuredContent": {"result": "another"}
        });
        assert_eq!(
            for_model(&other, DEFAULT_MODEL_CHARS).text,
            "the answer\n{\"result\":\"another\"}"
        );
    }

    #[test]
    fn a_models_share_of_its_window_is_a_quarter_of_it_in_characters() {
        assert_eq!(share_of_window(8_192), 6_144);
        assert_eq!(share_of_window(128_000), 96_000);
        assert_eq!(share_of_window(1_000), 1_000, "never under 1 000");
    }
}
