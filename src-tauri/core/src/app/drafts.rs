//! What the composer holds for a conversation until it is sent, kept in the database so that a
//! message half written outlives the window: its text, the files attached (kept files named by
//! their SHA-256, which the sweep of unused files leaves alone while a draft names them, and
//! whose records are judged again from their bytes when first saved) and the models a
//! comparison would ask. Only something is kept: an empty draft is no row, and a message sent
//! from the composer takes its draft with it ([`crate::App::send_composed`]).

use serde::{Deserialize, Serialize};

use super::App;
use crate::attachments::{Attachment, MAX_PER_MESSAGE};
use crate::error::{CoreError, InvalidInput};
use crate::store::StoreError;

/// The most characters a draft's text keeps.
pub const MAX_DRAFT_CHARS: usize = 1_000_000;

/// The most bytes a draft takes as kept (its text, file records and models together).
const MAX_DRAFT_BYTES: usize = 5 * 1024 * 1024;

/// The most models one comparison asks.
pub const MAX_COMPARED: usize = 4;

/// One model of a comparison, as the window names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ComparedModel {
    pub provider: String,
    /// `None`: the provider's default model.
    pub model: Option<String>,
}

/// What the composer of one conversation holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Draft {
    pub text: String,
    /// Files kept already that the message is to carry.
    #[serde(default)]
    pub attachments: Vec<Attachment>,
    /// Compare is on: the message is to go to the models in `compared`.
    #[serde(default)]
    pub comparing: bool,
    #[serde(default)]
    pub compared: Vec<ComparedModel>,
}

impl Draft {
    /// Nothing written, attached or picked: nothing to keep.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
            && self.attachments.is_empty()
            && !self.comparing
            && self.compared.is_empty()
    }
}

impl App {
    /// What the composer of conversation `id` holds, if anything.
    ///
    /// # Errors
    /// Not found; the database.
    pub async fn draft(&self, id: &str) -> Result<Option<Draft>, CoreError> {
        let store = self.store()?;
        store.get_conversation(id.to_owned()).await?;
        Ok(read_draft(store.draft(id.to_owned()).await?))
    }

    /// The records of the files a draft names, judged again from their kept bytes (the
    /// window's word on a file's kind or size is not taken), those no longer kept left out. A
    /// file the draft kept already (the same SHA-256 and name) keeps the record it was given
    /// then: a file is read once when attached, not again at every pause in typing.
    async fn judged_files(
        &self,
        before: Option<Draft>,
        named: Vec<Attachment>,
    ) -> Result<Vec<Attachment>, CoreError> {
        if named.is_empty() {
            return Ok(named);
        }
        let before = before.map(|d| d.attachments).unwrap_or_default();
        let files = self.attachment_files();
        Ok(tokio::task::spawn_blocking(move || {
            named
                .iter()
                .filter_map(|a| {
                    before
                        .iter()
                        .find(|b| b.sha256 == a.sha256 && b.name == a.name)
                        .cloned()
                        .or_else(|| files.record(&a.sha256, &a.name).ok())
                })
                .collect()
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?)
    }

    /// Forgets what the composer of conversation `id` held (its message was sent). A failure
    /// is only logged: the message has gone either way.
    pub async fn forget_draft(&self, id: &str) {
        if let Err(e) = self.save_draft(id, &Draft::default()).await {
            tracing::warn!(conversation = id, error = %e, "a sent message's draft was not forgotten");
        }
    }

    /// Keeps what the composer of conversation `id` holds, in place of what it held; an empty
    /// draft is forgotten.
    ///
    /// # Errors
    /// [`CoreError::Invalid`] (field `draft`): text over [`MAX_DRAFT_CHARS`], more files than a
    /// message carries, more models than a comparison asks. Not found; the database.
    pub async fn save_draft(&self, id: &str, draft: &Draft) -> Result<(), CoreError> {
        let too_many = |what: String| CoreError::from(InvalidInput::new("draft", what));
        if draft.text.chars().count() > MAX_DRAFT_CHARS {
            return Err(too_many(format!(
                "A message being written keeps at most {MAX_DRAFT_CHARS} characters."
            )));
        }
        if draft.attachments.len() > MAX_PER_MESSAGE {
            return Err(too_many(format!(
                "A message carries at most {MAX_PER_MESSAGE} files."
            )));
        }
        if draft.compared.len() > MAX_COMPARED {
            return Err(too_many(format!(
                "A comparison asks at most {MAX_COMPARED} models."
            )));
        }
        let store = self.store()?;
        let kept = if draft.is_empty() {
            None
        } else {
            let before = read_draft(store.draft(id.to_owned()).await?);
            let draft = Draft {
                attachments: self.judged_files(before, draft.attachments.clone()).await?,
                ..draft.clone()
            };
            let json = serde_json::to_string(&draft).map_err(|e| StoreError::InvalidRow {
                detail: e.to_string(),
            })?;
            if json.len() > MAX_DRAFT_BYTES {
                return Err(too_many(format!(
                    "A message being written, with its files' names and its models, keeps at most {}.",
                    crate::text::byte_size(MAX_DRAFT_BYTES as u64)
                )));
            }
            Some(json)
        };
        Ok(store.save_draft(id.to_owned(), kept).await?)
    }
}

/// A kept draft as read back; `None` for one that no longer reads (written by a build whose
/// draft had another shape), which is dropped rather than shown wrong.
pub(super) fn read_draft(kept: Option<String>) -> Option<Draft> {
    serde_json::from_str(&kept?)
        .map_err(|e| tracing::warn!(error = %e, "a kept draft does not read; it is left out"))
        .ok()
}
