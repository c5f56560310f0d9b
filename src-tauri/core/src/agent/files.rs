//! The files attached to a conversation's messages, made ready for the model a run talks to:
//! each read once per run from the attachments folder (its bytes checked against its name),
//! images scaled to what the API takes, PDFs given where the API takes them. What cannot be
//! given is said to the model instead (see [`super::history`]).

use base64::Engine as _;

use super::history::{GivenFile, GivenFiles};
use crate::attachments::{fit_image, Attachment, AttachmentFiles, AttachmentKind};
use crate::providers::media::Media;
use crate::providers::Part;
use crate::store::Message;

/// Adds to `ready` every file of `messages` it does not hold yet.
pub(super) async fn prepare(
    messages: &[Message],
    files: &AttachmentFiles,
    media: Media,
    ready: &mut GivenFiles,
) {
    let mut wanted: Vec<Attachment> = messages
        .iter()
        .flat_map(|m| m.attachments.iter())
        .filter(|a| !ready.contains_key(&a.sha256))
        .cloned()
        .collect();
    wanted.sort_by(|a, b| a.sha256.cmp(&b.sha256));
    wanted.dedup_by(|a, b| a.sha256 == b.sha256);
    if wanted.is_empty() {
        return;
    }
    let files = files.clone();
    let given = tokio::task::spawn_blocking(move || {
        wanted
            .into_iter()
            .map(|a| {
                let given = give(&files, &a, media);
                (a.sha256, given)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    ready.extend(given);
}

/// One file as the model is given it, or why not.
fn give(files: &AttachmentFiles, file: &Attachment, media: Media) -> GivenFile {
    let bytes = match files.read(&file.sha256) {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::warn!(file = %file.name, error = %e, "an attached file could not be read");
            return GivenFile::Left(format!("it could not be read ({e})"));
        }
    };
    let base64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    match file.kind {
        AttachmentKind::Text => {
            let text = String::from_utf8_lossy(&bytes);
            GivenFile::Text(text.trim_start_matches('\u{feff}').to_owned())
        }
        AttachmentKind::Image => match media.images {
            None => GivenFile::Left("this model does not take images".into()),
            Some(limits) => match fit_image(&bytes, &file.mime, limits) {
                Ok((media_type, bytes)) => GivenFile::Part(Part::Image {
                    media_type,
                    data: base64(&bytes),
                }),
                Err(why) => GivenFile::Left(format!("the image could not be prepared: {why}")),
            },
        },
        AttachmentKind::Pdf if media.pdfs => GivenFile::Part(Part::Document {
            media_type: file.mime.clone(),
            data: base64(&bytes),
            name: file.name.clone(),
        }),
        // An API that takes no PDFs is given the PDF's text instead.
        AttachmentKind::Pdf => match crate::attachments::pdf_text(&bytes) {
            Ok(text) => GivenFile::Text(text),
            Err(why) => GivenFile::Left(why),
        },
        AttachmentKind::Other => GivenFile::Left(format!(
            "a model cannot be given a file of type {}",
            file.mime
        )),
    }
}
