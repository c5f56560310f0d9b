//! The files tools produced in a conversation (its artifacts, issue 17), on the core's side:
//! listed for the canvas and the command line from the tool messages that carry them, read
//! back for a preview, and saved where a person says. Only a file one of the conversation's
//! tool messages names can be read or saved through here. A resource link a result carries is
//! read through its server only when the person asks, and only if that call returned it; what
//! it reads becomes more files of that tool message.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::App;
use crate::attachments::Attachment;
use crate::error::CoreError;
use crate::store::Role;

/// The most bytes [`App::artifact_bytes`] gives a window for a preview.
pub const MAX_PREVIEW_BYTES: u64 = 20 * 1024 * 1024;

/// One file a tool produced in a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ConversationArtifact {
    pub file: Attachment,
    /// The tool message that carries it.
    pub message_id: String,
    /// The call that produced it.
    pub call_id: String,
    /// The tool's name as the model called it.
    pub tool: String,
    #[ts(type = "number")]
    pub created_at: i64,
}

/// A resource link a tool's result carries (MCP `resource_link`): read on demand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ToolLink {
    /// The assistant message that asked for the call.
    pub message_id: String,
    pub call_id: String,
    /// The server that ran the call, and reads the link.
    pub server: String,
    pub tool: String,
    pub uri: String,
    pub name: String,
    pub mime_type: Option<String>,
}

impl App {
    /// The resource links the conversation's tool results carry, oldest first.
    ///
    /// # Errors
    /// The conversation does not exist; a failed query.
    pub async fn tool_links(&self, conversation_id: &str) -> Result<Vec<ToolLink>, CoreError> {
        let store = self.store()?;
        store.get_conversation(conversation_id.to_owned()).await?;
        let runs = store.list_tool_runs(conversation_id.to_owned()).await?;
        let mut links = Vec::new();
        for run in runs {
            let Some(result) = run
                .result
                .as_deref()
                .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
            else {
                continue;
            };
            for part in crate::mcp::results::view(&result).parts {
                if let crate::mcp::results::ResultPart::Link {
                    uri,
                    name,
                    mime_type,
                    ..
                } = part
                {
                    links.push(ToolLink {
                        message_id: run.message_id.clone(),
                        call_id: run.call_id.clone(),
                        server: run.server.clone(),
                        tool: run.tool.clone(),
                        uri,
                        name,
                        mime_type,
                    });
                }
            }
        }
        Ok(links)
    }

    /// The link `uri` that call `call_id` of answer `message_id` returned.
    ///
    /// # Errors
    /// That call returned no such link; a failed query.
    pub async fn tool_link(
        &self,
        conversation_id: &str,
        message_id: &str,
        call_id: &str,
        uri: &str,
    ) -> Result<ToolLink, CoreError> {
        self.tool_links(conversation_id)
            .await?
            .into_iter()
            .find(|l| l.message_id == message_id && l.call_id == call_id && l.uri == uri)
            .ok_or_else(|| CoreError::NotFound {
                what: "that link among the call's result".into(),
            })
    }

    /// Reads `link` through `server` (the one that returned it, running) and keeps what it
    /// reads as files of the call's tool message; returns them as the canvas lists them.
    ///
    /// # Errors
    /// The server refused or failed, or took longer than `timeout`; it sent nothing that
    /// could be kept; the database.
    pub async fn read_link_through(
        &self,
        conversation_id: &str,
        link: &ToolLink,
        server: &crate::mcp::server::McpServer,
        timeout: Duration,
    ) -> Result<Vec<ConversationArtifact>, CoreError> {
        let read = server.read_resource(&link.uri, timeout).await?;
        let read = serde_json::to_value(&read).unwrap_or_default();
        let found = crate::mcp::artifacts::from_read(&link.name, link.mime_type.as_deref(), &read);
        let files = self.attachment_files();
        let (kept, mut refused) = tokio::task::spawn_blocking(move || {
            let mut kept = Vec::new();
            let mut refused = found.problems;
            for file in &found.files {
                match files.keep_produced(&file.name, file.mime.as_deref(), &file.bytes) {
                    Ok(record) => kept.push(record),
                    Err(e) => refused.push(e.to_string()),
                }
            }
            (kept, refused)
        })
        .await
        .map_err(|e| CoreError::Io {
            what: format!("“{}”", link.name),
            detail: e.to_string(),
        })?;
        if kept.is_empty() {
            refused.truncate(3);
            return Err(crate::input::InvalidInput::new(
                "link",
                if refused.is_empty() {
                    format!("{} sent nothing for {}.", link.server, link.uri)
                } else {
                    format!(
                        "Nothing of {} could be kept: {}",
                        link.uri,
                        refused.join("; ")
                    )
                },
            )
            .into());
        }
        let store = self.store()?;
        let messages = store.list_messages(conversation_id.to_owned()).await?;
        let tool_message = messages
            .iter()
            .skip_while(|m| m.id != link.message_id)
            .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(&link.call_id))
            .ok_or_else(|| CoreError::NotFound {
                what: "the result of that call in the conversation shown".into(),
            })?;
        store
            .add_attachments(
                conversation_id.to_owned(),
                tool_message.id.clone(),
                kept.clone(),
            )
            .await?;
        Ok(kept
            .into_iter()
            .map(|file| ConversationArtifact {
                file,
                message_id: tool_message.id.clone(),
                call_id: link.call_id.clone(),
                tool: tool_message.name.clone().unwrap_or_default(),
                created_at: tool_message.created_at,
            })
            .collect())
    }

    /// The files tools produced in the conversation's shown messages, oldest first.
    ///
    /// # Errors
    /// The conversation does not exist; a failed query.
    pub async fn artifacts(
        &self,
        conversation_id: &str,
    ) -> Result<Vec<ConversationArtifact>, CoreError> {
        let store = self.store()?;
        store.get_conversation(conversation_id.to_owned()).await?;
        let messages = store.list_messages(conversation_id.to_owned()).await?;
        Ok(messages
            .into_iter()
            .filter(|m| m.role == Role::Tool)
            .flat_map(|m| {
                let (message_id, call_id) = (m.id, m.tool_call_id.unwrap_or_default());
                let tool = m.name.unwrap_or_default();
                m.attachments
                    .into_iter()
                    .map(move |file| ConversationArtifact {
                        file,
                        message_id: message_id.clone(),
                        call_id: call_id.clone(),
                        tool: tool.clone(),
                        created_at: m.created_at,
                    })
            })
            .collect())
    }

    /// The record of one of the conversation's artifacts.
    ///
    /// # Errors
    /// Not one of its artifacts; a failed query.
    pub async fn artifact(
        &self,
        conversation_id: &str,
        sha256: &str,
    ) -> Result<Attachment, CoreError> {
        self.artifacts(conversation_id)
            .await?
            .into_iter()
            .map(|a| a.file)
            .find(|f| f.sha256 == sha256)
            .ok_or_else(|| CoreError::NotFound {
                what: "that file among this conversation's tool results".into(),
            })
    }

    /// The bytes of one of the conversation's artifacts, for a preview.
    ///
    /// # Errors
    /// Not one of its artifacts; larger than [`MAX_PREVIEW_BYTES`]; it cannot be read.
    pub async fn artifact_bytes(
        &self,
        conversation_id: &str,
        sha256: &str,
    ) -> Result<(Attachment, Vec<u8>), CoreError> {
        let file = self.artifact(conversation_id, sha256).await?;
        if file.size > MAX_PREVIEW_BYTES {
            return Err(crate::input::InvalidInput::new(
                "artifact",
                format!(
                    "“{}” is {}: too large to preview; save it instead.",
                    file.name,
                    crate::text::byte_size(file.size)
                ),
            )
            .into());
        }
        let files = self.attachment_files();
        let sha = file.sha256.clone();
        let bytes = on_disk(&file.name, move || files.read(&sha)).await?;
        Ok((file, bytes))
    }

    /// Writes one of the conversation's artifacts, whole, to `path`; returns its record.
    ///
    /// # Errors
    /// Not one of its artifacts; it cannot be read or written.
    pub async fn save_artifact(
        &self,
        conversation_id: &str,
        sha256: &str,
        path: &Path,
    ) -> Result<Attachment, CoreError> {
        let file = self.artifact(conversation_id, sha256).await?;
        self.write_artifact(&file, path).await?;
        Ok(file)
    }

    /// Writes `file` (a record [`App::artifact`] gave) to `path`, whole.
    ///
    /// # Errors
    /// It cannot be read or written.
    pub async fn write_artifact(&self, file: &Attachment, path: &Path) -> Result<(), CoreError> {
        let files = self.attachment_files();
        let (sha, to) = (file.sha256.clone(), path.to_path_buf());
        on_disk(&file.name, move || {
            let bytes = files.read(&sha)?;
            crate::paths::write_whole(&to, &bytes)
        })
        .await
    }
}

/// Runs `work` (reading or writing the file `name`) off the async threads.
async fn on_disk<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, CoreError> {
    let io = |detail: String| CoreError::Io {
        what: format!("“{name}”"),
        detail,
    };
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| io(e.to_string()))?
        .map_err(|e| io(e.to_string()))
}
