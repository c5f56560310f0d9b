//! Files a person attaches to a message (issue 17): what each one is, judged by its content and
//! not its name (an image, a PDF, or text), the limits on each, and the folder that keeps them,
//! named by the SHA-256 of their bytes so the same file attached twice is kept once. A message
//! keeps only each file's [`Attachment`] record; the bytes stay in the folder until no message
//! (shown or in a branch kept aside) names them.
//!
//! A leaf beside `store`: it knows files and bytes, nothing of messages or providers.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::input::InvalidInput;

/// The largest image or PDF that can be attached.
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// The largest text file that can be attached (it goes to the model whole, inline).
pub const MAX_TEXT_BYTES: u64 = 512 * 1024;
/// The most files one message may carry.
pub const MAX_PER_MESSAGE: usize = 20;

/// What kind of file an attachment is, which decides how a model is given it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum AttachmentKind {
    /// PNG, JPEG, GIF or WebP: an image part, for models that take images.
    Image,
    /// A PDF: a document part where the API takes one.
    Pdf,
    /// UTF-8 text (code, CSV, Markdown, …): inline, in a fenced block under its name.
    Text,
    /// Anything else a tool produced (audio, an archive, …): kept and shown, never given to a
    /// model. A person cannot attach one ([`judge`] refuses it).
    Other,
}

/// A file attached to a message, as the message keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Attachment {
    /// The SHA-256 of its bytes, in hex: its name in the folder.
    pub sha256: String,
    /// Its file name as the person had it (shown, and given to the model with text files).
    pub name: String,
    /// Its media type, from its content.
    pub mime: String,
    #[ts(type = "number")]
    pub size: u64,
    pub kind: AttachmentKind,
}

/// A kept file a message is to carry, as the window or the command line names it: only its
/// SHA-256 and name are taken; what it is comes from its bytes again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct AttachmentRef {
    pub sha256: String,
    pub name: String,
}

impl From<&Attachment> for AttachmentRef {
    fn from(a: &Attachment) -> Self {
        Self {
            sha256: a.sha256.clone(),
            name: a.name.clone(),
        }
    }
}

/// What became of files a person chose or dropped: those kept, and why each other one was not.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, ts_rs::TS)]
pub struct Attached {
    pub kept: Vec<Attachment>,
    pub refused: Vec<String>,
}

/// What a file is, from its first bytes and its whole: `None` when it is none of the kinds a
/// model can be given (binary data that is not an image or a PDF).
pub fn sniff(bytes: &[u8]) -> Option<(AttachmentKind, &'static str)> {
    const IMAGES: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
    ];
    if let Some((_, mime)) = IMAGES.iter().find(|(magic, _)| bytes.starts_with(magic)) {
        return Some((AttachmentKind::Image, mime));
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some((AttachmentKind::Image, "image/webp"));
    }
    if bytes.starts_with(b"%PDF-") {
        return Some((AttachmentKind::Pdf, "application/pdf"));
    }
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    if !text.contains(&0) && std::str::from_utf8(text).is_ok() {
        return Some((AttachmentKind::Text, "text/plain"));
    }
    None
}

/// Checks that `bytes`, named `name`, can be attached, and says what it is.
///
/// # Errors
/// [`InvalidInput`] on `attachments` saying why not: not an image, a PDF or text; too large
/// for its kind; empty.
pub fn judge(name: &str, bytes: &[u8]) -> Result<(AttachmentKind, &'static str), InvalidInput> {
    let refuse = |why: String| InvalidInput::new("attachments", why);
    let shown = shown_name(name);
    if bytes.is_empty() {
        return Err(refuse(format!("“{shown}” is empty.")));
    }
    let Some((kind, mime)) = sniff(bytes) else {
        return Err(refuse(format!(
            "“{shown}” cannot be attached: it is not an image (PNG, JPEG, GIF, WebP), a PDF or \
             text — it looks like binary data."
        )));
    };
    let size = bytes.len() as u64;
    let limit = match kind {
        AttachmentKind::Text => MAX_TEXT_BYTES,
        AttachmentKind::Image | AttachmentKind::Pdf | AttachmentKind::Other => MAX_FILE_BYTES,
    };
    if size > limit {
        return Err(refuse(format!(
            "“{shown}” is {}; a {} file can be at most {}.",
            crate::text::byte_size(size),
            match kind {
                AttachmentKind::Text => "text",
                AttachmentKind::Image => "image",
                AttachmentKind::Pdf => "PDF",
                AttachmentKind::Other => "binary",
            },
            crate::text::byte_size(limit)
        )));
    }
    Ok((kind, mime))
}

/// A file name as it may be shown and kept: its last path part, hidden characters written
/// out, at most 200 characters.
pub fn shown_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let shown = crate::text::escape_hidden(&crate::text::one_line(last, 200)).into_owned();
    if shown.is_empty() {
        "file".to_owned()
    } else {
        shown
    }
}

/// The folder of attached files: `<data>/attachments/<sha256>`.
#[derive(Debug, Clone)]
pub struct AttachmentFiles {
    dir: PathBuf,
}

impl AttachmentFiles {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// Keeps `bytes` (after [`judge`]) and returns the record a message keeps. The same bytes
    /// kept before are not written again.
    ///
    /// # Errors
    /// As [`judge`]; the file could not be written.
    pub fn keep(&self, name: &str, bytes: &[u8]) -> Result<Attachment, KeepError> {
        let (kind, mime) = judge(name, bytes)?;
        let sha256 = self.write(bytes)?;
        Ok(Attachment {
            sha256,
            name: shown_name(name),
            mime: mime.to_owned(),
            size: bytes.len() as u64,
            kind,
        })
    }

    /// Keeps a file a tool produced (an artifact): any kind, at most [`MAX_FILE_BYTES`]. Its
    /// kind comes from its bytes; its media type from them where they say (images, PDFs), else
    /// the one the server gave when it is well formed, else one from its name.
    ///
    /// # Errors
    /// Empty or too large; the file could not be written.
    pub fn keep_produced(
        &self,
        name: &str,
        given_mime: Option<&str>,
        bytes: &[u8],
    ) -> Result<Attachment, KeepError> {
        let shown = shown_name(name);
        let refuse = |why: String| KeepError::Refused(InvalidInput::new("artifacts", why));
        if bytes.is_empty() {
            return Err(refuse(format!("“{shown}” is empty.")));
        }
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(refuse(format!(
                "“{shown}” is {}; a file from a tool can be at most {}.",
                crate::text::byte_size(bytes.len() as u64),
                crate::text::byte_size(MAX_FILE_BYTES)
            )));
        }
        let given = given_mime
            .map(|m| {
                m.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            })
            .filter(|m| is_media_type(m));
        let (kind, mime) = match sniff(bytes) {
            Some((kind @ (AttachmentKind::Image | AttachmentKind::Pdf), mime)) => {
                (kind, mime.to_owned())
            }
            Some((AttachmentKind::Text, plain)) => (
                AttachmentKind::Text,
                given
                    .filter(|m| !m.starts_with("image/") && !m.starts_with("audio/"))
                    .or_else(|| mime_from_name(&shown).map(str::to_owned))
                    .unwrap_or_else(|| plain.to_owned()),
            ),
            _ => (
                AttachmentKind::Other,
                given
                    .or_else(|| mime_from_name(&shown).map(str::to_owned))
                    .unwrap_or_else(|| "application/octet-stream".to_owned()),
            ),
        };
        let sha256 = self.write(bytes)?;
        Ok(Attachment {
            sha256,
            name: shown,
            mime,
            size: bytes.len() as u64,
            kind,
        })
    }

    /// Writes `bytes` under their SHA-256 unless they are kept already; returns the name.
    fn write(&self, bytes: &[u8]) -> std::io::Result<String> {
        let sha256 = hex::encode(Sha256::digest(bytes));
        let path = self.path(&sha256);
        if !path.exists() {
            crate::paths::write_whole(&path, bytes)?;
        }
        Ok(sha256)
    }

    /// The bytes of a kept file.
    ///
    /// # Errors
    /// Not kept here (or unreadable); a file whose bytes no longer match its name.
    pub fn read(&self, sha256: &str) -> std::io::Result<Vec<u8>> {
        if !is_sha256(sha256) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not the name of an attached file",
            ));
        }
        let bytes = std::fs::read(self.path(sha256))?;
        if hex::encode(Sha256::digest(&bytes)) != sha256 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the attached file was changed on disk",
            ));
        }
        Ok(bytes)
    }

    /// The record of a kept file, judged again from its bytes (a record from elsewhere, such
    /// as the window, is not trusted for its kind or size), under `name`.
    ///
    /// # Errors
    /// As [`AttachmentFiles::read`] and [`judge`].
    pub fn record(&self, sha256: &str, name: &str) -> Result<Attachment, KeepError> {
        let bytes = self.read(sha256)?;
        let (kind, mime) = judge(name, &bytes)?;
        Ok(Attachment {
            sha256: sha256.to_owned(),
            name: shown_name(name),
            mime: mime.to_owned(),
            size: bytes.len() as u64,
            kind,
        })
    }

    /// Removes every kept file that `referenced` does not name and that was kept longer than
    /// `grace` ago; returns how many went.
    pub fn remove_unreferenced(
        &self,
        referenced: &HashSet<String>,
        grace: std::time::Duration,
    ) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= grace);
            if is_sha256(&name) && !referenced.contains(&name) && old {
                match std::fs::remove_file(entry.path()) {
                    Ok(()) => removed += 1,
                    Err(e) => {
                        tracing::warn!(file = %name, error = %e, "an attached file could not be removed")
                    }
                }
            }
        }
        removed
    }

    fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(sha256)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Why a file could not be kept.
#[derive(Debug, thiserror::Error)]
pub enum KeepError {
    #[error(transparent)]
    Refused(#[from] InvalidInput),
    #[error("the attached file could not be kept: {0}")]
    Io(#[from] std::io::Error),
}

/// The largest image an API takes: its longer side in pixels and its size in bytes (before
/// base64).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    pub max_edge: u32,
    pub max_bytes: usize,
}

/// An image as a model is given it: as it is when it is within `limits`, else scaled down to
/// fit them and written again (PNG when it has transparency, else JPEG). Returns its media
/// type and bytes.
///
/// # Errors
/// The image cannot be read (a damaged file), or cannot be brought within `limits`.
pub fn fit_image(
    bytes: &[u8],
    mime: &str,
    limits: ImageLimits,
) -> Result<(String, Vec<u8>), String> {
    use image::{GenericImageView, ImageFormat, ImageReader};
    let reader = ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let (width, height) = reader.into_dimensions().map_err(|e| e.to_string())?;
    if width.max(height) <= limits.max_edge && bytes.len() <= limits.max_bytes {
        return Ok((mime.to_owned(), bytes.to_vec()));
    }
    let image = image::load_from_memory(bytes).map_err(|e| e.to_string())?;
    let alpha = image.color().has_alpha();
    let mut edge = limits.max_edge.min(width.max(height));
    for _ in 0..8 {
        let scaled = image.resize(edge, edge, image::imageops::FilterType::Triangle);
        let mut out = std::io::Cursor::new(Vec::new());
        let (format, mime) = if alpha {
            (ImageFormat::Png, "image/png")
        } else {
            (ImageFormat::Jpeg, "image/jpeg")
        };
        let written = if alpha {
            scaled.write_to(&mut out, format)
        } else {
            // JPEG has no alpha channel: the image as RGB.
            image::DynamicImage::ImageRgb8(scaled.to_rgb8()).write_to(&mut out, format)
        };
        written.map_err(|e| e.to_string())?;
        let out = out.into_inner();
        if out.len() <= limits.max_bytes {
            tracing::debug!(from = ?image.dimensions(), to = ?scaled.dimensions(), bytes = out.len(), "image scaled down for the model");
            return Ok((mime.to_owned(), out));
        }
        edge = edge * 3 / 4;
    }
    Err(format!(
        "it could not be made smaller than {}",
        crate::text::byte_size(limits.max_bytes as u64)
    ))
}

/// The text of a PDF, for a model whose API takes no PDFs: at most [`MAX_TEXT_BYTES`] of it,
/// with a marker where it was cut.
///
/// # Errors
/// The PDF cannot be read (damaged, encrypted, or something the extractor does not know), or
/// it has no text (a scan).
pub fn pdf_text(bytes: &[u8]) -> Result<String, String> {
    pdf_text_within(bytes, usize::try_from(MAX_TEXT_BYTES).unwrap_or(usize::MAX))
}

/// [`pdf_text`], cut at `limit` bytes (a project's knowledge file keeps more of it).
///
/// # Errors
/// As [`pdf_text`].
pub fn pdf_text_within(bytes: &[u8], limit: usize) -> Result<String, String> {
    // The extractor panics on some damaged files: a panic is a failure like any other.
    let extracted = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(bytes))
        .map_err(|_| "the PDF could not be read".to_owned())?
        .map_err(|e| format!("the PDF could not be read ({e})"))?;
    let text = extracted.trim();
    if text.is_empty() {
        return Err("it has no text to extract (a scanned PDF?)".into());
    }
    if text.len() <= limit {
        return Ok(text.to_owned());
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Ok(format!(
        "{}\n…[cut: the rest of the PDF's text ({}) was not given]",
        &text[..end],
        crate::text::byte_size((text.len() - end) as u64)
    ))
}

/// Whether `mime` is a plain `type/subtype` (no parameters, nothing a window could misread).
fn is_media_type(mime: &str) -> bool {
    let mut halves = mime.splitn(2, '/');
    let ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 100
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    matches!((halves.next(), halves.next()), (Some(t), Some(s)) if ok(t) && ok(s))
}

/// The media type a file's extension names, for the kinds a canvas shows.
pub fn mime_from_name(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "html" | "htm" => "text/html",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "txt" | "log" => "text/plain",
        "xml" => "application/xml",
        "js" | "mjs" => "text/javascript",
        "css" => "text/css",
        "py" => "text/x-python",
        "rs" => "text/x-rust",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => return None,
    })
}

/// Whether `name` is 64 lowercase hex digits (nothing else is ever read or removed).
fn is_sha256(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn a_file_is_judged_by_its_content_not_its_name() {
        assert_eq!(sniff(PNG), Some((AttachmentKind::Image, "image/png")));
        assert_eq!(
            sniff(b"\xff\xd8\xff\xe0rest"),
            Some((AttachmentKind::Image, "image/jpeg"))
        );
        assert_eq!(
            sniff(b"RIFF\x10\0\0\0WEBPVP8 "),
            Some((AttachmentKind::Image, "image/webp"))
        );
        assert_eq!(
            sniff(b"%PDF-1.7\n"),
            Some((AttachmentKind::Pdf, "application/pdf"))
        );
        assert_eq!(
            sniff("a,b\n1,2\n".as_bytes()),
            Some((AttachmentKind::Text, "text/plain"))
        );
        assert_eq!(
            sniff("\u{feff}fn main() {}".as_bytes()),
            Some((AttachmentKind::Text, "text/plain"))
        );
        // A PNG named .txt is an image; binary named .txt is refused.
        assert_eq!(judge("notes.txt", PNG).unwrap().0, AttachmentKind::Image);
        let refused = judge("notes.txt", b"\x00\x01\x02binary").unwrap_err();
        assert!(refused.message.contains("binary data"), "{refused}");
        assert_eq!(refused.field, "attachments");
    }

    #[test]
    fn a_pdfs_text_is_extracted_and_a_damaged_one_says_so() {
        let pdf = std::fs::read(
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/files/itinerary.pdf"),
        )
        .unwrap();
        let text = pdf_text(&pdf).unwrap();
        assert!(
            text.contains("Itinerary: Paris on Monday, Tokyo on Friday."),
            "{text:?}"
        );
        let damaged = pdf_text(b"%PDF-1.7\n1 0 obj << /Type /Catalog").unwrap_err();
        assert!(damaged.contains("could not be read"), "{damaged}");
    }

    #[test]
    fn each_kind_has_its_size_limit_and_an_empty_file_is_refused() {
        let text = vec![b'a'; usize::try_from(MAX_TEXT_BYTES).unwrap() + 1];
        let refused = judge("big.log", &text).unwrap_err();
        assert!(refused.message.contains("at most 512 KB"), "{refused}");
        assert!(judge("empty.txt", b"")
            .unwrap_err()
            .message
            .contains("empty"));
    }

    /// A PNG of `width` × `height` pixels of noise (which compresses badly), with or without
    /// an alpha channel.
    fn noisy_png(width: u32, height: u32, alpha: bool) -> Vec<u8> {
        let mut seed = 7u32;
        let mut next = move || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) as u8
        };
        let image = if alpha {
            image::DynamicImage::ImageRgba8(image::RgbaImage::from_fn(width, height, |_, _| {
                image::Rgba([next(), next(), next(), 128])
            }))
        } else {
            image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |_, _| {
                image::Rgb([next(), next(), next()])
            }))
        };
        let mut out = std::io::Cursor::new(Vec::new());
        image.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn an_image_within_the_limits_goes_as_it_is_and_a_larger_one_is_scaled_to_fit() {
        let limits = ImageLimits {
            max_edge: 1568,
            max_bytes: 3 * 1024 * 1024,
        };
        let small = noisy_png(64, 32, false);
        assert_eq!(
            fit_image(&small, "image/png", limits).unwrap(),
            ("image/png".to_owned(), small.clone())
        );
        // Too wide: scaled to 1568 on its longer side, as JPEG (no transparency).
        let wide = noisy_png(3000, 1000, false);
        let (mime, bytes) = fit_image(&wide, "image/png", limits).unwrap();
        assert_eq!(mime, "image/jpeg");
        let scaled = image::load_from_memory(&bytes).unwrap();
        assert_eq!((scaled.width(), scaled.height()), (1568, 523));
        // Transparency is kept (PNG), and a byte limit is met by scaling further.
        let tight = ImageLimits {
            max_edge: 1568,
            max_bytes: 200 * 1024,
        };
        let (mime, bytes) = fit_image(&noisy_png(800, 800, true), "image/png", tight).unwrap();
        assert_eq!(mime, "image/png");
        assert!(bytes.len() <= 200 * 1024, "{} bytes", bytes.len());
        assert!(fit_image(b"\x89PNG\r\n\x1a\nbroken", "image/png", limits).is_err());
    }

    #[test]
    fn kept_files_are_named_by_their_bytes_and_checked_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let files = AttachmentFiles::new(dir.path().join("attachments"));
        let a = files.keep("C:\\photos\\cat.png", PNG).unwrap();
        assert_eq!(a.name, "cat.png");
        assert_eq!(a.size, PNG.len() as u64);
        assert_eq!(a.sha256.len(), 64);
        let again = files.keep("other.png", PNG).unwrap();
        assert_eq!(again.sha256, a.sha256);
        assert_eq!(files.read(&a.sha256).unwrap(), PNG);
        assert!(files.read("../../etc/passwd").is_err());
        // A record sent back (by the window) is judged again from the bytes.
        let record = files.record(&a.sha256, "renamed\u{202e}gnp.exe").unwrap();
        assert_eq!(record.kind, AttachmentKind::Image);
        assert!(!record.name.contains('\u{202e}'), "{}", record.name);
        // A file changed on disk is not given to anyone.
        std::fs::write(dir.path().join("attachments").join(&a.sha256), b"changed").unwrap();
        assert!(files.read(&a.sha256).is_err());

        let b = files.keep("b.txt", b"hello").unwrap();
        let keep: HashSet<String> = [b.sha256.clone()].into();
        let c = files.keep("c.txt", b"just kept").unwrap();
        // Within the grace, nothing goes: a file may be waiting in a composer.
        let hour = std::time::Duration::from_secs(3600);
        assert_eq!(files.remove_unreferenced(&HashSet::new(), hour), 0);
        assert_eq!(
            files.remove_unreferenced(&keep, std::time::Duration::ZERO),
            2
        );
        assert!(files.read(&c.sha256).is_err());
        assert!(files.read(&b.sha256).is_ok());
    }
}
