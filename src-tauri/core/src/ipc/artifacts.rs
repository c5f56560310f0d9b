//! The canvas (issue 17): the files tools produced in a conversation, read for a preview and
//! saved through the native save dialog. The window names a file by its conversation and
//! SHA-256 only; the core checks it is one of that conversation's tool results. A resource link
//! a result carries is read into the canvas on the person's click, named by the call that
//! returned it.

use base64::Engine as _;

use super::commands;
use crate::app::ConversationArtifact;

commands! {
    /// The files tools produced in the conversation, oldest first.
    async fn list_artifacts(cx, conversation_id: String) -> Vec<ConversationArtifact> {
        Ok(cx.app.artifacts(&conversation_id).await?)
    }

    /// One of them as base64, for its preview.
    async fn read_artifact(cx, conversation_id: String, sha256: String) -> String {
        let (_, bytes) = cx.app.artifact_bytes(&conversation_id, &sha256).await?;
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// Asks where to save one of them (suggesting its name) and writes it there; the path, or
    /// `null` when the person closed the dialog.
    async fn save_artifact(cx, conversation_id: String, sha256: String) -> Option<String> {
        let found = cx.app.artifact(&conversation_id, &sha256).await?;
        let name = found.name.clone();
        let extension = name.rsplit_once('.').map_or("*", |(_, e)| e).to_owned();
        let filter = ("This kind of file", extension.as_str());
        let Some(path) = cx.host.choose_file("Save As", Some(&name), filter).await else {
            return Ok(None);
        };
        cx.app.write_artifact(&found, &path).await?;
        Ok(Some(path.display().to_string()))
    }

    /// Reads the link `uri` that call `call_id` of answer `message_id` returned, through the
    /// server that returned it, and keeps what it reads among the conversation's files; returns
    /// them.
    async fn read_tool_link(
        cx,
        conversation_id: String,
        message_id: String,
        call_id: String,
        uri: String,
    ) -> Vec<ConversationArtifact> {
        Ok(cx
            .app
            .read_tool_link(&conversation_id, &message_id, &call_id, &uri)
            .await?)
    }
}
