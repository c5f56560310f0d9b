//! Files into a message (issue 17): the native picker, a pasted image, files dropped on the
//! window, and what the composer's "/" and "@" pickers take from running servers (prompts,
//! resources, the completion of their arguments). The window never names a path: the picker
//! and the drop are Rust's, and a paste hands over bytes the page already has. The core keeps
//! and judges every file.

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::{commands, Sink};
use crate::app::{DropEvent, OffersOf, PromptUse, ToolSuggestion};
use crate::attachments::{Attached, Attachment, AttachmentRef};
use crate::mcp::features::Completing;
use crate::{CoreError, InvalidInput};

commands! {
    /// Opens the native picker (several files at once) and keeps what the person chose;
    /// nothing when they closed it.
    async fn choose_attachments(cx) -> Attached {
        let paths = cx.host.choose_files("Attach files").await;
        Ok(cx.app.keep_attachment_files(paths).await)
    }

    /// The person says the model the conversation uses takes images (after a send with an
    /// image was refused for it); returns the model's name.
    async fn allow_model_images(cx, conversation_id: String) -> String {
        Ok(cx.app.allow_images_in(&conversation_id, &cx.app.settings()).await?)
    }

    /// Whether `model` of `provider` is given images: the person's word, else what the
    /// provider's model list says, else what its family is known to take.
    async fn model_images(cx, provider: String, model: String) -> bool {
        Ok(cx.app.model_media(&provider, &model).await?.images.is_some())
    }

    /// The person says whether `model` of `provider` takes images (the composer's switch).
    async fn set_model_images(cx, provider: String, model: String, takes: bool) -> () {
        Ok(cx.app.set_model_takes_images(&provider, &model, Some(takes)).await?)
    }

    /// Keeps a pasted file, given as base64.
    async fn attach_pasted(cx, name: String, data: String) -> Attachment {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|_| InvalidInput::new("attachments", "The pasted data could not be read."))
            .map_err(CoreError::from)?;
        Ok(cx.app.keep_attachment(name, bytes).await?)
    }

    /// The tools switched off in the conversation that fit the files `files` names (seed 002):
    /// the composer offers to switch them on.
    async fn suggest_tools(cx, conversation_id: String, files: Vec<AttachmentRef>) -> Vec<ToolSuggestion> {
        Ok(cx.app.suggest_tools_for(&conversation_id, files).await?)
    }

    /// The window listens for files dragged over it and dropped on it; a later call replaces
    /// the listener (a reloaded window).
    async fn watch_dropped_files(cx, on_drop: Sink<DropEvent>) -> () {
        cx.host.listen_for_drops(on_drop);
        Ok(())
    }

    /// Every running server's resources, resource templates and prompts, for the pickers.
    async fn list_running_offers(cx) -> Vec<OffersOf> {
        Ok(cx.app.running_offers().await)
    }

    /// Reads a resource of a running server and keeps its contents as files (named `name`, the
    /// resource's listed name, when it is one).
    async fn attach_resource(cx, server: String, uri: String, name: Option<String>) -> Attached {
        Ok(cx.app.attach_resource(&server, &uri, name.as_deref()).await?)
    }

    /// A prompt of a running server, got with `arguments`, made ready for the composer.
    async fn use_prompt(cx, server: String, prompt: String, arguments: Map<String, Value>) -> PromptUse {
        Ok(cx.app.use_prompt(&server, &prompt, arguments).await?)
    }

    /// What a running server suggests for an argument of a prompt (`prompt`) or of a resource
    /// template (`template`), given what is typed of it and the arguments already chosen.
    async fn complete_argument(
        cx,
        server: String,
        prompt: Option<String>,
        template: Option<String>,
        argument: String,
        value: String,
        context: HashMap<String, String>,
    ) -> Vec<String> {
        let completing = match (prompt, template) {
            (Some(prompt), _) => Completing::Prompt(prompt),
            (None, Some(template)) => Completing::Template(template),
            (None, None) => return Ok(Vec::new()),
        };
        Ok(cx.app.complete_argument(&server, completing, &argument, &value, context).await?)
    }
}
