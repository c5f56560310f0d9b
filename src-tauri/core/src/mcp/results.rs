//! A tool's result for the model: every content kind MCP defines (text, image, audio, embedded
//! resource, resource link, structured content) turned into text a model can read, capped with
//! a visible marker. The full result is kept for the record by the caller; only what goes to
//! the model is cut.

use serde_json::Value;

/// What goes to the model at most, unless Settings say otherwise.
pub const DEFAULT_MODEL_CHARS: usize = 100_000;

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
        parts.push(match item["type"].as_str().unwrap_or_default() {
            "text" => item["text"].as_str().unwrap_or_default().to_owned(),
            kind @ ("image" | "audio") => format!(
                "[{kind}: {}, {} of base64 data]",
                item["mimeType"].as_str().unwrap_or("unknown type"),
                size(item["data"].as_str().map_or(0, str::len))
            ),
            "resource" => {
                let resource = &item["resource"];
                let uri = resource["uri"].as_str().unwrap_or("?");
                match resource["text"].as_str() {
                    Some(text) => format!("[resource {uri}]\n{text}"),
                    None => format!(
                        "[resource {uri}: {}, {} of binary data]",
                        resource["mimeType"].as_str().unwrap_or("unknown type"),
                        size(resource["blob"].as_str().map_or(0, str::len))
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
        });
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        // Servers that send structured content usually repeat it as text; add it only if not.
        let json = structured.to_string();
        if !parts.iter().any(|p| p.contains(&json)) {
            parts.push(json);
        }
    }
    let text = parts.join("\n");
    let total = text.chars().count();
    let (text, cut_chars) = if total > max_chars {
        let kept: String = text.chars().take(max_chars).collect();
        let cut = total - max_chars;
        (
            format!("{kept}\n…[cut: {cut} more characters of this result were not shown to you]"),
            cut,
        )
    } else {
        (text, 0)
    };
    ModelText {
        text,
        is_error: result["isError"].as_bool().unwrap_or(false),
        cut_chars,
    }
}

fn size(base64_len: usize) -> String {
    let bytes = base64_len / 4 * 3;
    if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
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
    fn a_huge_result_is_cut_with_a_marker_the_model_can_see() {
        let result =
            json!({"content": [{"type": "text", "text": "é".repeat(250_000)}], "isError": true});
        let out = for_model(&result, DEFAULT_MODEL_CHARS);
        assert_eq!(out.cut_chars, 150_000);
        assert!(out.is_error);
        assert!(out
            .text
            .ends_with("…[cut: 150000 more characters of this result were not shown to you]"));
        assert_eq!(out.text.chars().filter(|c| *c == 'é').count(), 100_000);
    }
}
