//! The run's answer to Switchboard's own `load_skill` (issue 61): a skill's instructions, marked
//! with where the skill comes from and followed by the list of its files, or one of its files.
//! Only the skills switched on for the conversation when the run began are loaded; a file only
//! when the skill lists it. What a skill says is guidance the model reads, never a permission:
//! nothing here runs anything, and a call a skill asks for goes through the same approvals.

use serde_json::{json, Map, Value};

use super::Ctx;
use crate::agent::builtin;
use crate::mcp::server::McpError;
use crate::skills::{is_script, SkillOrigin};

fn refuse(detail: String) -> McpError {
    McpError::Request {
        server: builtin::SERVER.to_owned(),
        detail,
        stderr_tail: String::new(),
    }
}

fn text_argument<'m>(arguments: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// What a call loaded.
enum Loaded {
    Instructions(crate::skills::Skill, String),
    File(String, Vec<u8>),
}

/// A size in words a model reads easily.
fn size(bytes: u64) -> String {
    match bytes {
        0..=1023 => format!("{bytes} B"),
        1024..=1_048_575 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

impl Ctx<'_> {
    /// `load_skill(name, file?)`.
    pub(super) async fn load_skill(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<Value, McpError> {
        let name = text_argument(arguments, "name").ok_or_else(|| {
            refuse("load_skill needs “name” (a skill's name, as listed)".to_owned())
        })?;
        let skills = &self.setup.skills;
        let (Some(skill), Some(library)) = (
            skills.skills.iter().find(|s| s.name == name),
            skills.library.clone(),
        ) else {
            let names: Vec<&str> = skills
                .skills
                .iter()
                .take(50)
                .map(|s| s.name.as_str())
                .collect();
            return Err(refuse(format!(
                "there is no skill “{}” in this conversation; its skills are: {}",
                crate::text::one_line(name, 80),
                names.join(", ")
            )));
        };
        let origin = match &skill.origin {
            SkillOrigin::Folder { .. } => "the person's skills folder",
        };
        let owned = name.to_owned();
        let file = text_argument(arguments, "file").map(str::to_owned);
        let read = tokio::task::spawn_blocking(move || match file {
            None => library
                .get(&owned)
                .map(|(skill, parsed)| Loaded::Instructions(skill, parsed.body)),
            Some(file) => library
                .read_file(&owned, &file)
                .map(|bytes| Loaded::File(file, bytes)),
        })
        .await
        .map_err(|e| refuse(e.to_string()))?
        .map_err(|e| refuse(e.to_string()))?;
        let text = match read {
            Loaded::Instructions(skill, body) => {
                let mut text = format!(
                    "Skill “{name}”, from {origin}. Its instructions follow; they are guidance \
                     for this task, not permissions.\n\n<skill name=\"{name}\">\n{}\n</skill>\n",
                    body.trim_end()
                );
                let files: Vec<String> = skill
                    .files
                    .iter()
                    .skip(1)
                    .map(|f| {
                        let script = if is_script(&f.path) {
                            " (a script: a file to read; nothing runs it)"
                        } else {
                            ""
                        };
                        format!("- {} ({}){script}", f.path, size(f.bytes))
                    })
                    .collect();
                if !files.is_empty() {
                    text.push_str(&format!(
                        "\nIts files (read one with load_skill, giving its path as “file”):\n{}\n",
                        files.join("\n")
                    ));
                }
                text
            }
            Loaded::File(file, bytes) => match String::from_utf8(bytes) {
                Ok(content) => {
                    format!("File “{file}” of the skill “{name}” (from {origin}):\n\n{content}")
                }
                Err(e) => format!(
                    "File “{file}” of the skill “{name}” is not text ({}); it cannot be shown.",
                    size(e.as_bytes().len() as u64)
                ),
            },
        };
        Ok(json!({"content": [{"type": "text", "text": text}]}))
    }
}
