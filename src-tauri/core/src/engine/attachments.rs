//! Files attached to a message (issue 17), on the core's side: keeping a file the person
//! chose (read from disk by the command line and the native picker, or given as bytes by a
//! paste), judging the files a turn names again from their bytes, and what the chosen model
//! can be given — refused before anything is sent when it cannot read them.

use std::path::Path;

use super::Core;
use crate::attachments::{
    Attachment, AttachmentFiles, AttachmentKind, AttachmentRef, KeepError, MAX_FILE_BYTES,
    MAX_PER_MESSAGE,
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

impl Core {
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
    /// As [`Core::keep_attachment`]; the file cannot be read, or is larger than any kind may be.
    pub async fn keep_attachment_file(&self, path: &Path) -> Result<Attachment, CoreError> {
        let files = self.attachment_files();
        let path = path.to_path_buf();
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

    /// What `model` of the provider `provider` can be given besides text.
    ///
    /// # Errors
    /// No such provider; the database.
    pub async fn model_media(&self, provider: &str, model: &str) -> Result<Media, CoreError> {
        let row = self.provider_row(provider).await?;
        let kind = ProviderKind::parse(&row.kind).ok_or_else(|| super::unknown_kind(&row))?;
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
        let row = self.provider_row(provider).await?;
        Ok(self
            .store()?
            .set_takes_images(row.id, model.trim().to_owned(), takes)
            .await?)
    }
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
    for a in attachments {
        let refused = match a.kind {
            AttachmentKind::Image if media.images.is_none() => format!(
                "“{model}” is not known to take images, so “{}” was not sent. If it does, \
                 say so: switchboard provider images PROVIDER {model} on",
                a.name
            ),
            AttachmentKind::Pdf if !media.pdfs => format!(
                "This model's API does not take PDFs, so “{}” was not sent. Attach its text \
                 instead, or choose an Anthropic, Gemini or OpenAI model.",
                a.name
            ),
            _ => continue,
        };
        return Err(InvalidInput::new("attachments", refused).into());
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
