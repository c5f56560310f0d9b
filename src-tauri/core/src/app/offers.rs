//! What the composer's pickers take from running servers (issue 17): "/" lists every running
//! server's prompts and "@" its resources; a prompt chosen (with its arguments, completed by
//! the server as they are typed) becomes the composer's text and files, and a resource chosen
//! becomes a file attached to the message. Everything a server sends is kept as files are: by
//! content, judged again, never trusted for what it says it is.

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::ResourceContents;
use serde::Serialize;
use serde_json::{Map, Value};

use super::App;
use crate::attachments::{shown_name, Attached};
use crate::error::CoreError;
use crate::mcp::features::{Completing, ServerOffers};
use crate::mcp::server::McpServer;

/// One running server's offers, for the pickers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct OffersOf {
    pub server: String,
    pub offers: ServerOffers,
}

/// A prompt made ready for the composer: its messages' text, and its images and embedded
/// resources as files.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, ts_rs::TS)]
pub struct PromptUse {
    pub text: String,
    pub attached: Attached,
}

impl App {
    /// Every running server's resources, templates and prompts (a server that fails to list
    /// is left out, and logged).
    pub async fn running_offers(&self) -> Vec<OffersOf> {
        let mut out = Vec::new();
        for name in self.host.states().into_keys() {
            let Some(server) = self.host.server(&name) else {
                continue;
            };
            match server.offers().await {
                Ok(offers) => out.push(OffersOf {
                    server: name,
                    offers,
                }),
                Err(e) => {
                    tracing::warn!(server = %name, error = %e, "its resources and prompts could not be listed")
                }
            }
        }
        out
    }

    /// Reads resource `uri` of a running server and keeps its contents as files, named `name`
    /// (the resource's name as listed) when it is one file, else by their addresses.
    ///
    /// # Errors
    /// Not running; the server refused or failed.
    pub async fn attach_resource(
        &self,
        server: &str,
        uri: &str,
        name: Option<&str>,
    ) -> Result<Attached, CoreError> {
        let running = self.running(server)?;
        let read = running.read_resource(uri, self.answer_within()).await?;
        let mut attached = Attached::default();
        let one = read.contents.len() == 1;
        for contents in read.contents {
            self.keep_contents(&contents, name.filter(|_| one), &mut attached)
                .await;
        }
        Ok(attached)
    }

    /// Gets prompt `prompt` of a running server with `arguments`: its messages' text for the
    /// composer (an assistant's marked as such), its images and resources kept as files.
    ///
    /// # Errors
    /// Not running; the server refused (a required argument missing) or failed.
    pub async fn use_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: Map<String, Value>,
    ) -> Result<PromptUse, CoreError> {
        let running = self.running(server)?;
        let got = running
            .get_prompt(prompt, arguments, self.answer_within())
            .await?;
        let mut used = PromptUse::default();
        let mut texts: Vec<String> = Vec::new();
        for message in got.messages {
            let content = serde_json::to_value(&message.content).unwrap_or_default();
            let assistant =
                serde_json::to_value(&message.role).ok() == Some(Value::from("assistant"));
            match content["type"].as_str() {
                Some("text") => {
                    let text = content["text"].as_str().unwrap_or_default();
                    texts.push(if assistant {
                        format!("(The assistant, in the prompt:) {text}")
                    } else {
                        text.to_owned()
                    });
                }
                Some("image" | "audio") => {
                    let name = format!("{prompt}.{}", extension(content["mimeType"].as_str()));
                    self.keep_base64(&name, content["data"].as_str(), &mut used.attached)
                        .await;
                }
                Some("resource") => {
                    if let Ok(contents) =
                        serde_json::from_value::<ResourceContents>(content["resource"].clone())
                    {
                        self.keep_contents(&contents, None, &mut used.attached)
                            .await;
                    }
                }
                _ => texts.push(crate::mcp::results::content_text(&content)),
            }
        }
        used.text = texts.join("\n\n");
        Ok(used)
    }

    /// What a running server suggests for an argument, given what is typed and chosen.
    ///
    /// # Errors
    /// Not running; the server failed.
    pub async fn complete_argument(
        &self,
        server: &str,
        completing: Completing,
        argument: &str,
        value: &str,
        context: HashMap<String, String>,
    ) -> Result<Vec<String>, CoreError> {
        let running = self.running(server)?;
        Ok(running
            .complete(completing, argument, value, context, Duration::from_secs(5))
            .await?)
    }

    pub(super) fn running(&self, server: &str) -> Result<std::sync::Arc<McpServer>, CoreError> {
        self.running_server(server, "server", None)
    }

    /// How long a server may take to answer a read or a prompt: Settings' tool timeout.
    pub(super) fn answer_within(&self) -> Duration {
        Duration::from_secs(u64::from(self.settings().tool_timeout_secs))
    }

    /// Keeps one resource's contents as a file named `name`, else by its address.
    async fn keep_contents(
        &self,
        contents: &ResourceContents,
        name: Option<&str>,
        attached: &mut Attached,
    ) {
        let named = |uri: &str| name.map_or_else(|| name_of(uri), str::to_owned);
        match contents {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                self.keep_bytes(&named(uri), text.clone().into_bytes(), attached)
                    .await;
            }
            ResourceContents::BlobResourceContents { uri, blob, .. } => {
                self.keep_base64(&named(uri), Some(blob), attached).await;
            }
            _ => attached
                .refused
                .push("The server sent a kind of resource this Switchboard does not know.".into()),
        }
    }

    async fn keep_base64(&self, name: &str, data: Option<&str>, attached: &mut Attached) {
        match data.map(|d| base64::engine::general_purpose::STANDARD.decode(d.trim())) {
            Some(Ok(bytes)) => self.keep_bytes(name, bytes, attached).await,
            _ => attached.refused.push(format!(
                "“{}” could not be read: its data is not base64.",
                shown_name(name)
            )),
        }
    }

    async fn keep_bytes(&self, name: &str, bytes: Vec<u8>, attached: &mut Attached) {
        match self.keep_attachment(name.to_owned(), bytes).await {
            Ok(kept) => attached.kept.push(kept),
            Err(e) => attached.refused.push(e.to_string()),
        }
    }
}

/// A file name for a resource: the last part of its address.
fn name_of(uri: &str) -> String {
    let last = uri
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()
        .unwrap_or_default();
    if last.is_empty() {
        "resource".to_owned()
    } else {
        last.to_owned()
    }
}

fn extension(mime: Option<&str>) -> &str {
    match mime.unwrap_or_default() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "bin",
    }
}
