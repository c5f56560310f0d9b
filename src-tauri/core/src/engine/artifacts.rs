//! The files tools produced in a conversation (its artifacts, issue 17), on the core's side:
//! listed for the canvas and the command line from the tool messages that carry them, read
//! back for a preview, and saved where a person says. Only a file one of the conversation's
//! tool messages names can be read or saved through here.

use std::path::Path;

use serde::Serialize;

use super::Core;
use crate::attachments::Attachment;
use crate::error::CoreError;
use crate::store::Role;

/// The most bytes [`Core::artifact_bytes`] gives a window for a preview.
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

impl Core {
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
    async fn artifact(&self, conversation_id: &str, sha256: &str) -> Result<Attachment, CoreError> {
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
        let files = self.attachment_files();
        let (sha, to) = (file.sha256.clone(), path.to_path_buf());
        on_disk(&file.name, move || {
            let bytes = files.read(&sha)?;
            crate::paths::write_whole(&to, &bytes)
        })
        .await?;
        Ok(file)
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
