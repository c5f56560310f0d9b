//! A resource link a tool returned, read into the canvas when the person asks (issue 17):
//! only a link that call's result carries, through the running server that returned it.

use super::App;
use crate::app::ConversationArtifact;
use crate::error::CoreError;

impl App {
    /// Reads the link `uri` that call `call_id` of answer `message_id` returned, through its
    /// running server, and keeps what it reads as files of that call's result.
    ///
    /// # Errors
    /// The call returned no such link; its server is not running, refused or failed; nothing
    /// it sent could be kept.
    pub async fn read_tool_link(
        &self,
        conversation_id: &str,
        message_id: &str,
        call_id: &str,
        uri: &str,
    ) -> Result<Vec<ConversationArtifact>, CoreError> {
        let link = self
            .tool_link(conversation_id, message_id, call_id, uri)
            .await?;
        let server = self.running(&link.server)?;
        self.read_link_through(conversation_id, &link, &server, self.answer_within())
            .await
    }
}
