//! Zip files brought from outside (an MCP bundle, a skill): a private copy read and its table
//! of contents checked before anything is unpacked — every path inside the archive, no links,
//! only stored or deflated entries, no more files or bytes than the caller's [`Limits`], no
//! entry compressed as zip bombs are — and the unpacking itself, into a staging folder renamed
//! into place at the end, counting every byte it writes (an entry larger than it said stops
//! it). Owns nothing on disk but the staging folder while it unpacks.

use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Component, Path, PathBuf};

/// How much an archive may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_files: usize,
    /// The largest one file may unpack to.
    pub max_file_bytes: u64,
    /// The most the whole archive may unpack to (and the largest archive read).
    pub max_total_bytes: u64,
}

/// The most a file above [`RATIO_FROM_BYTES`] may grow by unpacking (a zip bomb grows by
/// thousands; real files seldom by more than 20).
pub const MAX_RATIO: u64 = 200;
const RATIO_FROM_BYTES: u64 = 1024 * 1024;

/// Why an archive is refused or cannot be unpacked.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("Cannot read {path}: {detail}")]
    Io { path: String, detail: String },
    #[error("It is not a zip file: {0}")]
    NotZip(String),
    #[error("Its “{0}” is encrypted or compressed in a way Switchboard does not read (it reads stored and deflated files)")]
    Unreadable(String),
    #[error("It holds “{0}”, a path that leads outside it or is a link; it is refused")]
    UnsafePath(String),
    #[error("It holds more than {0} files; it is refused")]
    TooManyFiles(usize),
    #[error("Its “{path}” would unpack to {bytes} bytes, more than allowed; it is refused")]
    TooLarge { path: String, bytes: u64 },
    #[error("Its “{path}” grows {ratio} times when unpacked, as zip bombs do; it is refused")]
    Bomb { path: String, ratio: u64 },
}

pub(crate) fn io(path: &Path) -> impl Fn(std::io::Error) -> ArchiveError + '_ {
    move |e| ArchiveError::Io {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

fn not_zip(e: impl std::fmt::Display) -> ArchiveError {
    ArchiveError::NotZip(e.to_string())
}

/// An archive read into a private copy and checked, not unpacked: what is unpacked is what was
/// checked, whatever happens to the original file meanwhile.
#[derive(Debug)]
pub struct Archive {
    copy: tempfile::NamedTempFile,
    limits: Limits,
    /// How many entries it holds.
    pub files: usize,
    /// What its entries say they unpack to, in all.
    pub unpacked_bytes: u64,
}

impl Archive {
    /// Copies the archive at `path` and checks every entry of its table of contents.
    ///
    /// # Errors
    /// The file cannot be read, or is larger than the limits; not a zip; an entry outside it,
    /// a link, encrypted or of another compression; too many files, too large, too compressed.
    pub fn open(path: &Path, limits: Limits) -> Result<Self, ArchiveError> {
        let mut source = File::open(path).map_err(io(path))?;
        let size = source.metadata().map_err(io(path))?.len();
        if size > limits.max_total_bytes {
            return Err(ArchiveError::TooLarge {
                path: path.display().to_string(),
                bytes: size,
            });
        }
        let mut copy = tempfile::NamedTempFile::new().map_err(io(path))?;
        std::io::copy(
            &mut (&mut source).take(limits.max_total_bytes),
            copy.as_file_mut(),
        )
        .map_err(io(path))?;
        let mut archive = Self {
            copy,
            limits,
            files: 0,
            unpacked_bytes: 0,
        };
        let (files, bytes) = check_contents(&mut archive.zip()?, limits)?;
        archive.files = files;
        archive.unpacked_bytes = bytes;
        Ok(archive)
    }

    /// The checked copy, to read entries from.
    ///
    /// # Errors
    /// The copy cannot be reopened, or is not a zip.
    pub fn zip(&self) -> Result<zip::ZipArchive<File>, ArchiveError> {
        let reopened = self.copy.reopen().map_err(io(self.copy.path()))?;
        zip::ZipArchive::new(reopened).map_err(not_zip)
    }

    /// Unpacks every entry into a new folder `dir` (private to the person), through a staging
    /// folder beside it that is renamed into place at the end, so `dir` is never half made.
    ///
    /// # Errors
    /// `dir` exists; the file system; an entry larger than it said.
    pub fn unpack(&self, dir: &Path) -> Result<(), ArchiveError> {
        if dir.exists() {
            return Err(ArchiveError::Io {
                path: dir.display().to_string(),
                detail: "a folder of that name is already there".to_owned(),
            });
        }
        let parent = dir.parent().unwrap_or(dir);
        crate::paths::create_private_dirs(parent).map_err(io(parent))?;
        let staging = tempfile::Builder::new()
            .prefix(".unpacking-")
            .tempdir_in(parent)
            .map_err(io(parent))?;
        crate::paths::private_dir(staging.path()).map_err(io(parent))?;
        let mut zip = self.zip()?;
        let mut total: u64 = 0;
        for index in 0..zip.len() {
            let mut file = zip.by_index(index).map_err(not_zip)?;
            let name = file.name().map_err(not_zip)?.into_owned();
            let relative = file
                .enclosed_name()
                .filter(|_| !file.is_symlink())
                .ok_or_else(|| ArchiveError::UnsafePath(name.clone()))?;
            let target = staging.path().join(&relative);
            if file.is_dir() {
                crate::paths::create_private_dirs(&target).map_err(io(&target))?;
                continue;
            }
            if let Some(folder) = target.parent() {
                crate::paths::create_private_dirs(folder).map_err(io(folder))?;
            }
            let declared = file.size();
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut out = options.open(&target).map_err(io(&target))?;
            let written = std::io::copy(&mut (&mut file).take(declared + 1), &mut out)
                .map_err(io(&target))?;
            total = total.saturating_add(written);
            if written > declared || total > self.limits.max_total_bytes {
                return Err(ArchiveError::TooLarge {
                    path: name,
                    bytes: written,
                });
            }
            #[cfg(unix)]
            if let Some(mode) = file.unix_mode() {
                use std::os::unix::fs::PermissionsExt;
                // Keep only the person's permission bits (an executable stays one; no setuid,
                // nothing for other accounts).
                let perms = std::fs::Permissions::from_mode((mode & 0o700) | 0o600);
                std::fs::set_permissions(&target, perms).map_err(io(&target))?;
            }
        }
        let staged = staging.keep();
        std::fs::rename(&staged, dir).map_err(|e| {
            let _ = std::fs::remove_dir_all(&staged);
            io(dir)(e)
        })
    }
}

/// Checks every entry of the table of contents; the number of files and what they unpack to.
fn check_contents<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    limits: Limits,
) -> Result<(usize, u64), ArchiveError> {
    if zip.len() > limits.max_files {
        return Err(ArchiveError::TooManyFiles(limits.max_files));
    }
    let mut total: u64 = 0;
    for index in 0..zip.len() {
        let file = zip.by_index_raw(index).map_err(not_zip)?;
        let name = file.name().map_err(not_zip)?.into_owned();
        if file.enclosed_name().is_none()
            || inside(name.trim_end_matches('/')).is_none()
            || file.is_symlink()
        {
            return Err(ArchiveError::UnsafePath(name));
        }
        if file.encrypted()
            || !matches!(
                file.compression(),
                zip::CompressionMethod::Stored | zip::CompressionMethod::Deflated
            )
        {
            return Err(ArchiveError::Unreadable(name));
        }
        let size = file.size();
        total = total.saturating_add(size);
        if size > limits.max_file_bytes || total > limits.max_total_bytes {
            return Err(ArchiveError::TooLarge {
                path: name,
                bytes: size,
            });
        }
        let ratio = size / file.compressed_size().max(1);
        if size > RATIO_FROM_BYTES && ratio > MAX_RATIO {
            return Err(ArchiveError::Bomb { path: name, ratio });
        }
    }
    Ok((zip.len(), total))
}

/// `path` (with `/` between its parts) as a relative path that stays inside the archive.
#[must_use]
pub fn inside(path: &str) -> Option<PathBuf> {
    let path = path.strip_prefix("./").unwrap_or(path);
    if path.is_empty() || path.contains('\\') || path.contains(':') {
        return None;
    }
    let relative = Path::new(path);
    relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| relative.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_archive_are_not_inside_it() {
        assert_eq!(
            inside("server/main.py"),
            Some(PathBuf::from("server/main.py"))
        );
        assert_eq!(
            inside("./server/main.py"),
            Some(PathBuf::from("server/main.py"))
        );
        for bad in [
            "",
            "../x",
            "a/../../x",
            "/etc/passwd",
            "C:\\x",
            "c:x",
            "a\\..\\x",
        ] {
            assert_eq!(inside(bad), None, "{bad}");
        }
    }
}
