//! Which process is writing which answer, so that any process opening a home can tell an
//! answer cut off by a crash from one still streaming elsewhere. Every process that opens the
//! database (the window, each command line) holds an OS lock on its own file,
//! `<data dir>/writers/<id>.lock`, for as long as it lives; each answer it streams names that
//! id. The OS lets go of a dead process's locks, so an answer left `streaming` whose writer's
//! file is missing or can be locked was cut off, and the next process to open the home marks
//! it interrupted. Owns `<data dir>/writers/`.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// Whether the writer `writer` is gone, seen from the process `own` with writers registered
/// in `dir` (none: a database in memory, which has no other writers). A row written before rows
/// named their writer was written by a process long gone.
pub(crate) fn gone(own: &str, dir: Option<&Path>, writer: Option<&str>) -> bool {
    match (writer, dir) {
        (Some(id), _) if id == own => false,
        (Some(id), Some(dir)) => is_gone(dir, id),
        (Some(_), None) => false,
        (None, _) => true,
    }
}

/// This process's writer id and the lock that says it is alive; the file is removed on drop.
#[derive(Debug)]
pub(crate) struct Writer {
    id: String,
    lock: Option<(File, PathBuf)>,
}

impl Writer {
    /// Registers this process as a writer of the database in `data_dir`. Without a lock (the
    /// folder cannot be written), the id still marks its answers; others then take them for
    /// cut off, which is the safe mistake.
    pub(crate) fn register(data_dir: &Path) -> Writer {
        let id = uuid::Uuid::now_v7().simple().to_string();
        let path = lock_path(data_dir, &id);
        let locked = crate::paths::create_private_dirs(path.parent().unwrap_or(data_dir))
            .and_then(|()| {
                let mut options = OpenOptions::new();
                options.create(true).truncate(false).write(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                options.open(&path)
            })
            .and_then(|file| {
                file.try_lock().map_err(|e| match e {
                    TryLockError::Error(e) => e,
                    TryLockError::WouldBlock => std::io::Error::other("locked already"),
                })?;
                Ok(file)
            });
        match locked {
            Ok(file) => Writer {
                id,
                lock: Some((file, path)),
            },
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot register as a writer");
                Writer { id, lock: None }
            }
        }
    }

    /// A writer with no file, for a database no other process can open (in memory).
    pub(crate) fn private() -> Writer {
        Writer {
            id: uuid::Uuid::now_v7().simple().to_string(),
            lock: None,
        }
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Lets go of the lock as a killed process does (the OS releases it; the file stays).
    #[cfg(test)]
    pub(crate) fn die(mut self) {
        self.lock = None;
        std::mem::forget(self);
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Some((file, path)) = self.lock.take() {
            drop(file);
            let _ = std::fs::remove_file(path);
        }
    }
}

fn lock_path(data_dir: &Path, id: &str) -> PathBuf {
    data_dir.join("writers").join(format!("{id}.lock"))
}

/// Whether the writer `id` of the database in `data_dir` is gone (its process ended): its file
/// is missing or nobody holds its lock. A gone writer's file is removed.
pub(crate) fn is_gone(data_dir: &Path, id: &str) -> bool {
    // An id is ours to make a file name of only when it looks like one we made.
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return true;
    }
    let path = lock_path(data_dir, id);
    let Ok(file) = OpenOptions::new().write(true).open(&path) else {
        return true;
    };
    match file.try_lock() {
        Ok(()) => {
            drop(file);
            let _ = std::fs::remove_file(&path);
            true
        }
        Err(_) => false,
    }
}

/// Removes the files of writers that are gone (a process killed while it wrote nothing leaves
/// one too); `own` is this process's id.
pub(crate) fn sweep(data_dir: &Path, own: &str) {
    let Ok(entries) = std::fs::read_dir(data_dir.join("writers")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".lock")) {
            if id != own {
                is_gone(data_dir, id);
            }
        }
    }
}
