//! The files a tool's result carries (its artifacts), for the canvas and for the model: MCP
//! `image` and `audio` content, embedded `resource` contents (text or blob), and seed 002's
//! result contract — `{"results": …, "artifacts": [{"name", "b64", "mime"}], "display":
//! {"open_canvas": true, "primary_file": "…"}}` — found in a result's structured content or in
//! a text item that is that JSON. Pure: bytes out, nothing written (the run keeps them with
//! [`crate::attachments::AttachmentFiles::keep_produced`]).

use base64::Engine as _;
use serde_json::Value;

/// The most files one result may carry; the rest are left out, said in `problems`.
pub const MAX_PER_RESULT: usize = 50;

/// One file of a result, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Produced {
    pub name: String,
    /// The media type the server gave, if it gave one.
    pub mime: Option<String>,
    pub bytes: Vec<u8>,
    /// Whether it came as MCP image content (the one kind a model is given back).
    pub is_image_content: bool,
}

/// Everything a result carries as files, and whether it asks for the canvas.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Artifacts {
    pub files: Vec<Produced>,
    /// The contract's `display.open_canvas`.
    pub open_canvas: bool,
    /// The contract's `display.primary_file`, when it names one of `files`.
    pub primary: Option<String>,
    /// What could not be taken (bad base64, too many files), for the log.
    pub problems: Vec<String>,
}

/// The files of a `tools/call` result (its wire JSON).
pub fn from_result(result: &Value) -> Artifacts {
    let mut out = Artifacts::default();
    let mut counts = (0usize, 0usize, 0usize);
    for item in result["content"].as_array().into_iter().flatten() {
        match item["type"].as_str().unwrap_or_default() {
            "image" => {
                counts.0 += 1;
                let mime = item["mimeType"].as_str();
                let name = format!("image-{}.{}", counts.0, extension(mime, "img"));
                out.push_base64(&name, mime, &item["data"], true);
            }
            "audio" => {
                counts.1 += 1;
                let mime = item["mimeType"].as_str();
                let name = format!("audio-{}.{}", counts.1, extension(mime, "audio"));
                out.push_base64(&name, mime, &item["data"], false);
            }
            "resource" => {
                counts.2 += 1;
                let resource = &item["resource"];
                let name = name_from_uri(resource["uri"].as_str().unwrap_or_default())
                    .unwrap_or_else(|| format!("resource-{}", counts.2));
                let mime = resource["mimeType"].as_str();
                if let Some(text) = resource["text"].as_str() {
                    out.push(name, mime, text.as_bytes().to_vec(), false);
                } else {
                    out.push_base64(&name, mime, &resource["blob"], false);
                }
            }
            "text" => {
                let text = item["text"].as_str().unwrap_or_default().trim();
                if text.starts_with('{') && text.contains("\"artifacts\"") {
                    if let Ok(doc) = serde_json::from_str::<Value>(text) {
                        out.contract(&doc);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(structured) = result.get("structuredContent").filter(|v| v.is_object()) {
        out.contract(structured);
    }
    if out
        .primary
        .as_ref()
        .is_some_and(|p| !out.files.iter().any(|f| &f.name == p))
    {
        out.problems
            .push("the primary file it names is not among its artifacts".into());
        out.primary = None;
    }
    out
}

/// The files of a `resources/read` result (its wire JSON) for a resource link a tool returned:
/// one content is named as the link names it, several by their addresses; a content's own
/// media type wins over the link's.
pub fn from_read(link_name: &str, link_mime: Option<&str>, read: &Value) -> Artifacts {
    let mut out = Artifacts::default();
    let contents = read["contents"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, item) in contents.iter().enumerate() {
        let name = if contents.len() == 1 && !link_name.trim().is_empty() {
            link_name.to_owned()
        } else {
            name_from_uri(item["uri"].as_str().unwrap_or_default())
                .unwrap_or_else(|| format!("resource-{}", i + 1))
        };
        let mime = item["mimeType"].as_str().or(link_mime);
        if let Some(text) = item["text"].as_str() {
            out.push(name, mime, text.as_bytes().to_vec(), false);
        } else {
            out.push_base64(&name, mime, &item["blob"], false);
        }
    }
    out
}

impl Artifacts {
    /// Seed 002's contract in `doc`, if `doc` is one; the same file named twice (in text and
    /// in structured content) is taken once.
    fn contract(&mut self, doc: &Value) {
        let Some(list) = doc["artifacts"].as_array() else {
            return;
        };
        for (i, artifact) in list.iter().enumerate() {
            let name = artifact["name"]
                .as_str()
                .filter(|n| !n.trim().is_empty())
                .map_or_else(|| format!("artifact-{}", i + 1), str::to_owned);
            if self.files.iter().any(|f| f.name == name) {
                continue;
            }
            let data = ["b64", "base64", "data"]
                .iter()
                .map(|k| &artifact[*k])
                .find(|v| v.is_string())
                .unwrap_or(&Value::Null);
            self.push_base64(&name, artifact["mime"].as_str(), data, false);
        }
        let display = &doc["display"];
        if display["open_canvas"].as_bool() == Some(true) {
            self.open_canvas = true;
        }
        if let Some(primary) = display["primary_file"].as_str() {
            self.primary = Some(primary.to_owned());
        }
    }

    fn push_base64(&mut self, name: &str, mime: Option<&str>, data: &Value, image: bool) {
        let text: String = data
            .as_str()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        match base64::engine::general_purpose::STANDARD.decode(text.as_bytes()) {
            Ok(bytes) if !bytes.is_empty() => self.push(name.to_owned(), mime, bytes, image),
            Ok(_) => self.problems.push(format!("“{name}” is empty")),
            Err(e) => self
                .problems
                .push(format!("“{name}” is not valid base64 ({e})")),
        }
    }

    fn push(&mut self, name: String, mime: Option<&str>, bytes: Vec<u8>, image: bool) {
        if self.files.len() >= MAX_PER_RESULT {
            self.problems.push(format!(
                "“{name}” was left out: a result keeps at most {MAX_PER_RESULT} files"
            ));
            return;
        }
        self.files.push(Produced {
            name,
            mime: mime.map(str::to_owned),
            bytes,
            is_image_content: image,
        });
    }
}

/// A file extension for a media type, or `fallback`.
fn extension(mime: Option<&str>, fallback: &'static str) -> &'static str {
    match mime.map(str::to_ascii_lowercase).as_deref() {
        Some("image/png") => "png",
        Some("image/jpeg" | "image/jpg") => "jpg",
        Some("image/gif") => "gif",
        Some("image/webp") => "webp",
        Some("image/svg+xml") => "svg",
        Some("audio/wav" | "audio/x-wav" | "audio/wave") => "wav",
        Some("audio/mpeg" | "audio/mp3") => "mp3",
        Some("audio/ogg") => "ogg",
        _ => fallback,
    }
}

/// The last part of a resource's URI, as a file name (`file:///a/notes.md` → `notes.md`).
fn name_from_uri(uri: &str) -> Option<String> {
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let last = path.trim_end_matches('/').rsplit('/').next()?;
    let last = last.rsplit_once(':').map_or(last, |(_, l)| l);
    (!last.is_empty()).then(|| last.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn images_audio_and_embedded_resources_become_named_files() {
        let result = json!({"content": [
            {"type": "text", "text": "done"},
            {"type": "image", "mimeType": "image/png", "data": b64(b"\x89PNG\r\n\x1a\nrest")},
            {"type": "audio", "mimeType": "audio/wav", "data": b64(b"RIFFxxxxWAVE")},
            {"type": "resource", "resource": {"uri": "file:///tmp/notes.md", "mimeType": "text/markdown", "text": "# Notes"}},
            {"type": "resource", "resource": {"uri": "test://static/resource/2", "blob": b64(b"\x00\x01")}},
            {"type": "resource_link", "uri": "file:///big.csv", "name": "big.csv"}
        ]});
        let found = from_result(&result);
        let names: Vec<&str> = found.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["image-1.png", "audio-1.wav", "notes.md", "2"]);
        assert!(found.files[0].is_image_content);
        assert!(!found.files[1].is_image_content);
        assert_eq!(found.files[2].bytes, b"# Notes");
        assert_eq!(found.files[3].bytes, b"\x00\x01");
        assert!(!found.open_canvas);
        assert!(found.problems.is_empty());
    }

    #[test]
    fn seed_002s_contract_is_found_in_text_or_structured_content_and_taken_once() {
        let doc = json!({
            "results": {"rows": 2},
            "artifacts": [
                {"name": "report.html", "b64": b64(b"<h1>Hi</h1>"), "mime": "text/html"},
                {"name": "data.csv", "b64": b64(b"a,b\n1,2\n"), "mime": "text/csv"},
                {"name": "broken.bin", "b64": "%%%", "mime": "application/octet-stream"}
            ],
            "display": {"open_canvas": true, "primary_file": "data.csv"}
        });
        let result = json!({
            "content": [{"type": "text", "text": doc.to_string()}],
            "structuredContent": doc
        });
        let found = from_result(&result);
        let names: Vec<&str> = found.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["report.html", "data.csv"]);
        assert_eq!(found.files[1].mime.as_deref(), Some("text/csv"));
        assert!(found.open_canvas);
        assert_eq!(found.primary.as_deref(), Some("data.csv"));
        assert_eq!(found.problems.len(), 2, "{:?}", found.problems); // bad base64, twice
        let wrong =
            json!({"structuredContent": {"artifacts": [], "display": {"primary_file": "x"}}});
        let found = from_result(&wrong);
        assert_eq!(found.primary, None);
        assert_eq!(found.problems.len(), 1);
    }

    #[test]
    fn a_read_link_is_named_as_the_link_names_it_when_it_is_one_file() {
        let one = from_read(
            "totals.csv",
            Some("text/csv"),
            &json!({"contents": [{"uri": "demo://r/1", "text": "a,b\n1,2\n"}]}),
        );
        assert_eq!(one.files.len(), 1);
        assert_eq!(one.files[0].name, "totals.csv");
        assert_eq!(one.files[0].mime.as_deref(), Some("text/csv"));
        assert_eq!(one.files[0].bytes, b"a,b\n1,2\n");
        let two = from_read(
            "both",
            None,
            &json!({"contents": [
                {"uri": "demo://r/a.txt", "text": "A", "mimeType": "text/plain"},
                {"uri": "demo://r/b.bin", "blob": b64(&[1, 2, 3])},
                {"uri": "demo://r/c.bin", "blob": "not base64!"}
            ]}),
        );
        let names: Vec<&str> = two.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a.txt", "b.bin"]);
        assert_eq!(two.files[1].bytes, [1, 2, 3]);
        assert_eq!(two.problems.len(), 1, "{:?}", two.problems);
    }

    #[test]
    fn text_that_only_mentions_artifacts_is_not_a_contract() {
        let result = json!({"content": [{"type": "text", "text": "{\"artifacts\": \"none\"}"},
            {"type": "text", "text": "the \"artifacts\" word {"}]});
        assert_eq!(from_result(&result), Artifacts::default());
    }
}
