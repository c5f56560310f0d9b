//! Files attached to a message (issue 17), on the core's side: keeping a file the person
//! chose (read from disk by the command line and the native picker, or given as bytes by a
//! paste), judging the files a turn names again from their bytes, and what the chosen model
//! can be given — refused before anything is sent when it cannot read them.

use std::path::Path;

use super::App;
use super::ConversationTool;
use crate::attachments::{
    Attached, Attachment, AttachmentFiles, AttachmentKind, AttachmentRef, KeepError,
    MAX_FILE_BYTES, MAX_PER_MESSAGE,
};
use crate::error::CoreError;
use crate::input::InvalidInput;
use crate::provider_config::ProviderKind;
use crate::providers::media::{self, Media};

impl From<KeepError> for CoreError {
    fn from(e: KeepError) -> Self {
        match e {
            KeepError::Refused(invalid) => CoreError::Invalid(invalid),
            KeepError::Io(e) => CoreError::Io {
                what: "an attached file".into(),
                detail: e.to_string(),
            },
        }
    }
}

impl App {
    /// The folder of attached files, under the data folder.
    pub fn attachment_files(&self) -> AttachmentFiles {
        AttachmentFiles::new(self.paths.data_dir.join("attachments"))
    }

    /// Keeps a file given as bytes (a pasted image) under `name`.
    ///
    /// # Errors
    /// Refused (what it is, its size: [`CoreError::Invalid`] on `attachments`); not written.
    pub async fn keep_attachment(
        &self,
        name: String,
        bytes: Vec<u8>,
    ) -> Result<Attachment, CoreError> {
        let files = self.attachment_files();
        blocking(move || files.keep(&name, &bytes)).await
    }

    /// Reads the file at `path` and keeps it.
    ///
    /// # Errors
    /// As [`App::keep_attachment`]; the file cannot be read, or is larger than any kind may be.
    pub async fn keep_attachment_file(&self, path: &Path) -> Result<Attachment, CoreError> {
        let files = self.attachment_files();
        let path = path.to_path_buf();
        let shown = crate::attachments::shown_name(&path.to_string_lossy());
        let named = |e: CoreError| match e {
            CoreError::Io { detail, .. } => CoreError::Io {
                what: format!("“{shown}”"),
                detail,
            },
            other => other,
        };
        blocking(move || {
            let name = path
                .file_name()
                .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
            let size = std::fs::metadata(&path)?.len();
            if size > MAX_FILE_BYTES {
                return Err(KeepError::Refused(InvalidInput::new(
                    "attachments",
                    format!(
                        "“{}” is {}; a file can be at most {}.",
                        crate::attachments::shown_name(&name),
                        crate::text::byte_size(size),
                        crate::text::byte_size(MAX_FILE_BYTES)
                    ),
                )));
            }
            files.keep(&name, &std::fs::read(&path)?)
        })
        .await
        .map_err(named)
    }

    /// [`App::keep_attachment_file`] for each of `paths` (chosen in the picker, or dropped on
    /// the window): one refused does not stop the others.
    pub async fn keep_attachment_files(&self, paths: Vec<std::path::PathBuf>) -> Attached {
        let mut attached = Attached::default();
        for path in paths {
            match self.keep_attachment_file(&path).await {
                Ok(kept) => attached.kept.push(kept),
                Err(e) => attached.refused.push(e.to_string()),
            }
        }
        attached
    }

    /// The files a turn names, each judged again from its kept bytes.
    ///
    /// # Errors
    /// Too many; one is not kept (any more) or is refused.
    pub(super) async fn judge_attachments(
        &self,
        refs: Vec<AttachmentRef>,
    ) -> Result<Vec<Attachment>, CoreError> {
        if refs.len() > MAX_PER_MESSAGE {
            return Err(InvalidInput::new(
                "attachments",
                format!("A message can carry at most {MAX_PER_MESSAGE} files."),
            )
            .into());
        }
        let files = self.attachment_files();
        blocking(move || {
            refs.iter()
                .map(|r| {
                    files.record(&r.sha256, &r.name).map_err(|e| match e {
                        KeepError::Io(io) => KeepError::Refused(InvalidInput::new(
                            "attachments",
                            format!(
                                "“{}” is no longer there to send ({io}); attach it again.",
                                crate::attachments::shown_name(&r.name)
                            ),
                        )),
                        refused => refused,
                    })
                })
                .collect()
        })
        .await
    }

    /// The files message `message_id` of a conversation carries (an edit keeps them).
    ///
    /// # Errors
    /// No such message in the conversation shown; the database.
    pub async fn message_files(
        &self,
        conversation_id: &str,
        message_id: &str,
    ) -> Result<Vec<Attachment>, CoreError> {
        self.store()?
            .list_messages(conversation_id.to_owned())
            .await?
            .into_iter()
            .find(|m| m.id == message_id)
            .map(|m| m.attachments)
            .ok_or_else(|| CoreError::NotFound {
                what: format!("message {}", crate::text::one_line(message_id, 40)),
            })
    }

    /// The tools switched off in a conversation that fit `files` (kept files, judged again).
    ///
    /// # Errors
    /// A file not kept; the database.
    pub async fn suggest_tools_for(
        &self,
        conversation_id: &str,
        files: Vec<AttachmentRef>,
    ) -> Result<Vec<ToolSuggestion>, CoreError> {
        let files = self.judge_attachments(files).await?;
        let (_, listed) = self.conversation_catalogue(conversation_id).await?;
        Ok(suggest_tools(&files, &listed))
    }

    /// What `model` of the provider `provider` can be given besides text.
    ///
    /// # Errors
    /// No such provider; the database.
    pub async fn model_media(&self, provider: &str, model: &str) -> Result<Media, CoreError> {
        let row = self.db.provider_row(provider).await?;
        let kind =
            ProviderKind::parse(&row.kind).ok_or_else(|| super::providers::unknown_kind(&row))?;
        let switch = self
            .store()?
            .takes_images(row.id.clone(), model.to_owned())
            .await?;
        Ok(media::media(
            crate::providers::connect::api(kind),
            &row.base_url,
            model,
            switch,
        ))
    }

    /// Records that the model a conversation would use now takes images (the person said so
    /// when a send with an image was refused); returns that model's name.
    ///
    /// # Errors
    /// No such conversation; no model to choose; the database.
    pub async fn allow_images_in(
        &self,
        conversation_id: &str,
        settings: &crate::settings::Settings,
    ) -> Result<String, CoreError> {
        let conversation = self
            .store()?
            .get_conversation(conversation_id.to_owned())
            .await?;
        let request = super::TurnRequest {
            conversation_id: conversation.id.clone(),
            ..super::TurnRequest::default()
        };
        let (provider, model) = self.choose_model(&conversation, &request, settings).await?;
        self.set_model_takes_images(&provider, &model, Some(true))
            .await?;
        Ok(model)
    }

    /// Records whether `model` of `provider` takes images (`None`: as its family says).
    ///
    /// # Errors
    /// No such provider; the database.
    pub async fn set_model_takes_images(
        &self,
        provider: &str,
        model: &str,
        takes: Option<bool>,
    ) -> Result<(), CoreError> {
        let row = self.db.provider_row(provider).await?;
        Ok(self
            .store()?
            .set_takes_images(row.id, model.trim().to_owned(), takes)
            .await?)
    }
}

/// A tool switched off in a conversation that fits a file attached to it (seed 002), and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct ToolSuggestion {
    pub server: String,
    pub tool: String,
    pub display_name: String,
    /// Which file it fits and why: "scores.csv: its name says “csv”".
    pub why: String,
}

/// The words that say a tool works on a file like `file`: its kind's, then its extension's.
fn words_for(file: &Attachment) -> Vec<&'static str> {
    let extension = file
        .name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let mut words: Vec<&'static str> = match file.kind {
        AttachmentKind::Image => vec!["image", "vision", "ocr", "photo", "picture"],
        AttachmentKind::Pdf => vec!["pdf", "document", "extract"],
        AttachmentKind::Text | AttachmentKind::Other => Vec::new(),
    };
    words.extend_from_slice(match extension.as_str() {
        "csv" | "tsv" => &["csv", "spreadsheet", "table", "data"],
        "json" | "jsonl" => &["json"],
        "md" | "markdown" => &["markdown"],
        "html" | "htm" => &["html"],
        "xml" => &["xml"],
        "yaml" | "yml" => &["yaml"],
        "sql" => &["sql", "database", "query"],
        "py" => &["python", "code"],
        "rs" | "js" | "ts" | "go" | "java" | "c" | "cpp" | "h" | "rb" | "sh" => &["code"],
        _ => &[],
    });
    words
}

/// Whether `text` holds `word` as a word of its own (not inside another: "data" is not in
/// "metadata"; names split at `_`, `-` and `.` too).
fn mentions(text: &str, word: &str) -> bool {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == word)
}

/// The tools switched off in a conversation that fit its newly attached `files`: by each
/// file's kind and extension matched against each tool's name, title and description.
pub fn suggest_tools(files: &[Attachment], tools: &[ConversationTool]) -> Vec<ToolSuggestion> {
    let mut out: Vec<ToolSuggestion> = Vec::new();
    for tool in tools.iter().filter(|t| !t.enabled && !t.held_back) {
        let fit = files.iter().find_map(|file| {
            words_for(file).into_iter().find_map(|word| {
                let place = if mentions(&tool.tool, word) || mentions(&tool.display_name, word) {
                    "its name says"
                } else if mentions(&tool.description, word) {
                    "its description says"
                } else {
                    return None;
                };
                Some(format!("{}: {place} “{word}”", file.name))
            })
        });
        if let Some(why) = fit {
            out.push(ToolSuggestion {
                server: tool.server.clone(),
                tool: tool.tool.clone(),
                display_name: tool.display_name.clone(),
                why,
            });
        }
    }
    out
}

/// Refuses `attachments` that `model` cannot be given, saying why and how to change it.
///
/// # Errors
/// [`CoreError::Invalid`] on `attachments`.
pub(super) fn check_media(
    attachments: &[Attachment],
    media: &Media,
    model: &str,
) -> Result<(), CoreError> {
    // A PDF always goes: as a document where the API takes one, else as its text.
    if let Some(a) = attachments
        .iter()
        .find(|a| a.kind == AttachmentKind::Image && media.images.is_none())
    {
        return Err(InvalidInput::new(
            "attachments",
            format!(
                "“{model}” is not known to take images, so “{}” was not sent. If it does, \
                 say so: switchboard provider images PROVIDER {model} on",
                a.name
            ),
        )
        .into());
    }
    Ok(())
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, KeepError> + Send + 'static,
) -> Result<T, CoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| CoreError::Io {
            what: "an attached file".into(),
            detail: e.to_string(),
        })?
        .map_err(CoreError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str, enabled: bool) -> ConversationTool {
        ConversationTool {
            server: "s".into(),
            tool: name.into(),
            wire_name: format!("s__{name}"),
            display_name: crate::text::tool_display_name("s", name, None),
            description: description.into(),
            enabled,
            held_back: false,
            held_reason: None,
            estimated_tokens: 10,
            rule: None,
        }
    }

    fn file(name: &str, kind: AttachmentKind) -> Attachment {
        Attachment {
            sha256: "0".repeat(64),
            name: name.into(),
            mime: "x".into(),
            size: 1,
            kind,
        }
    }

    #[test]
    fn a_file_suggests_the_switched_off_tools_that_fit_it_and_says_why() {
        let tools = [
            tool("query_csv", "Runs SQL over a table.", false),
            tool("describe", "Describes an image with a vision model.", false),
            tool("read_pdf", "Reads a document.", false),
            tool("get_metadata", "Reads file metadata.", false),
            tool("plot_csv", "Plots a table.", true),
        ];
        let suggested = suggest_tools(
            &[
                file("scores.csv", AttachmentKind::Text),
                file("cat.png", AttachmentKind::Image),
            ],
            &tools,
        );
        let said: Vec<(&str, &str)> = suggested
            .iter()
            .map(|s| (s.tool.as_str(), s.why.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                ("query_csv", "scores.csv: its name says “csv”"),
                ("describe", "cat.png: its description says “image”"),
            ]
        );
        // Already on, or fitting no file: not suggested ("data" is not in "metadata").
        assert!(suggest_tools(&[file("notes.txt", AttachmentKind::Text)], &tools).is_empty());
        let pdf = suggest_tools(&[file("paper.pdf", AttachmentKind::Pdf)], &tools);
        assert_eq!(pdf[0].tool, "read_pdf");
    }
}
