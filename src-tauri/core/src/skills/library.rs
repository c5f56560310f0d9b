//! The person's skills folder (`skills` in the config folder, one folder per skill, named by
//! the skill): reading what is there, adding a skill from a folder or a `.zip` (copied in
//! through a staging folder, with the same checks as a bundle's zip and the skill limits: no
//! link, no path outside, at most 512 files and 16 MiB), removing one, writing one to a `.zip`,
//! and reading a skill's file for the model — only a file listed inside the skill's folder,
//! never through a link. Every call here blocks on the file system: callers run it off the
//! async runtime.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{io_error, parse, Parsed, Skill, SkillError, SkillFile, SkillOrigin, SKILL_FILE};
use crate::archive::{Archive, Limits};

/// What a skill's zip may hold.
const ZIP_LIMITS: Limits = Limits {
    max_files: super::MAX_FILES + 64,
    max_file_bytes: super::MAX_BYTES,
    max_total_bytes: super::MAX_BYTES,
};
/// The largest `SKILL.md` read.
const MAX_SKILL_FILE_BYTES: u64 = 1024 * 1024;

/// How a skill's files looked when their digest was kept: each one's path, size and time of
/// change, in the order listed.
type Looks = Vec<(String, u64, Option<std::time::SystemTime>)>;

/// The digests of skills' files ([`super::scripts::digest`]) read before, by the skill's
/// folder, kept while its files look the same: listing the skills at each turn reads none that
/// did not change. A script's run reads its skill's files again whatever this says.
#[derive(Debug, Clone, Default)]
pub struct DigestCache(
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<PathBuf, (Looks, String)>>>,
);

impl DigestCache {
    /// The digest of `files` in `dir`: `compute`d when they look changed (or were never seen).
    ///
    /// # Errors
    /// A file that cannot be looked at, or what `compute` says.
    pub fn digest(
        &self,
        dir: &Path,
        files: &[SkillFile],
        compute: impl FnOnce() -> std::io::Result<String>,
    ) -> std::io::Result<String> {
        let mut looks: Looks = Vec::with_capacity(files.len());
        for file in files {
            let meta = fs::symlink_metadata(dir.join(&file.path))?;
            looks.push((file.path.clone(), meta.len(), meta.modified().ok()));
        }
        let lock = || {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some((seen, digest)) = lock().get(dir) {
            if *seen == looks {
                return Ok(digest.clone());
            }
        }
        let digest = compute()?;
        lock().insert(dir.to_path_buf(), (looks, digest.clone()));
        Ok(digest)
    }
}

/// The person's skills folder.
#[derive(Debug, Clone)]
pub struct Library {
    dir: PathBuf,
}

impl Library {
    #[must_use]
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every folder in the skills folder, by name: a good skill, or one with its problem said.
    #[must_use]
    pub fn list(&self) -> Vec<Skill> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut skills: Vec<Skill> = entries
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                !name.starts_with('.') && e.file_type().is_ok_and(|t| t.is_dir())
            })
            .map(|e| {
                let mut skill = read_skill_as(&e.path(), Reading::FrontMatter).0;
                let folder = e.file_name().to_string_lossy().into_owned();
                if skill.problem.is_none() && skill.name != folder {
                    skill.problem = Some(format!(
                        "Its SKILL.md names it “{}”, but its folder is “{folder}”: a skill's \
                         folder has its name",
                        skill.name
                    ));
                }
                // Listed by its folder: two folders never show as one name.
                skill.name = folder;
                skill
            })
            .collect();
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        skills
    }

    fn folder(&self, name: &str) -> Result<PathBuf, SkillError> {
        super::check_name(name).map_err(|_| SkillError::NotFound(name.to_owned()))?;
        let dir = self.dir.join(name);
        if fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            Ok(dir)
        } else {
            Err(SkillError::NotFound(name.to_owned()))
        }
    }

    /// A skill's folder, and the digest of its files as they are now
    /// ([`super::scripts::digest`]), which allowing its scripts binds to.
    ///
    /// # Errors
    /// No such skill; it is not a valid skill; a file cannot be read.
    pub fn scripts_digest(&self, name: &str) -> Result<(PathBuf, String), SkillError> {
        let (skill, _) = self.get(name)?;
        self.digest_of(&skill)
    }

    /// [`Library::scripts_digest`] of a skill already read (its files as listed then).
    ///
    /// # Errors
    /// No such skill; a file cannot be read.
    pub fn digest_of(&self, skill: &Skill) -> Result<(PathBuf, String), SkillError> {
        let dir = self.folder(&skill.name)?;
        let digest = super::scripts::digest(&dir, &skill.files).map_err(io_error(&dir))?;
        Ok((dir, digest))
    }

    /// [`Library::digest_of`], read again only when a file of the skill looks changed since
    /// `cache` kept its digest (its size or its time of change, or the list of files).
    ///
    /// # Errors
    /// No such skill; a file cannot be read.
    pub fn cached_digest_of(
        &self,
        skill: &Skill,
        cache: &DigestCache,
    ) -> Result<String, SkillError> {
        let dir = self.folder(&skill.name)?;
        cache
            .digest(&dir, &skill.files, || {
                super::scripts::digest(&dir, &skill.files)
            })
            .map_err(io_error(&dir))
    }

    /// One skill, and its `SKILL.md` read.
    ///
    /// # Errors
    /// No such skill; the folder is not a valid skill.
    pub fn get(&self, name: &str) -> Result<(Skill, Parsed), SkillError> {
        let (skill, parsed) = read_skill(&self.folder(name)?);
        match (parsed, &skill.problem) {
            (Some(parsed), None) if parsed.name == name => Ok((skill, parsed)),
            (Some(parsed), None) => Err(SkillError::Invalid(format!(
                "Its SKILL.md names it “{}”, but its folder is “{name}”",
                parsed.name
            ))),
            (_, problem) => Err(SkillError::Invalid(
                problem
                    .clone()
                    .unwrap_or_else(|| "It cannot be read".to_owned()),
            )),
        }
    }

    /// A file of a skill, by its path inside the skill: only one of the files it lists.
    ///
    /// # Errors
    /// No such skill or file.
    pub fn read_file(&self, name: &str, path: &str) -> Result<Vec<u8>, SkillError> {
        let (skill, _) = self.get(name)?;
        let wanted = path.trim().trim_start_matches("./");
        if !skill.files.iter().any(|f| f.path == wanted) {
            return Err(SkillError::Invalid(format!(
                "The skill “{name}” has no file “{}”; its files are: {}",
                crate::text::one_line(path, 200),
                skill
                    .files
                    .iter()
                    .map(|f| f.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let file = self.folder(name)?.join(wanted);
        // Listed files are plain files (a walk never follows a link), and it is checked again
        // as it is opened.
        let meta = fs::symlink_metadata(&file).map_err(io_error(&file))?;
        if !meta.is_file() {
            return Err(SkillError::NotFound(format!("{name}/{wanted}")));
        }
        let mut bytes = Vec::new();
        fs::File::open(&file)
            .and_then(|f| f.take(super::MAX_BYTES).read_to_end(&mut bytes))
            .map_err(io_error(&file))?;
        Ok(bytes)
    }

    /// Keeps a skill from a folder or a `.zip` (its `SKILL.md` at the top, or in its one
    /// folder), under its name.
    ///
    /// # Errors
    /// Not a skill; a link, a path outside it, too many files or bytes; a skill of that name
    /// already there; the file system.
    pub fn add(&self, source: &Path) -> Result<Skill, SkillError> {
        crate::paths::create_private_dirs(&self.dir).map_err(io_error(&self.dir))?;
        let staging = tempfile::Builder::new()
            .prefix(".adding-")
            .tempdir_in(&self.dir)
            .map_err(io_error(&self.dir))?;
        let unpacked = staging.path().join("skill");
        let meta = fs::metadata(source).map_err(io_error(source))?;
        let root = if meta.is_dir() {
            copy_folder(source, &unpacked)?;
            unpacked
        } else {
            Archive::open(source, ZIP_LIMITS)?.unpack(&unpacked)?;
            skill_root(&unpacked)?
        };
        let (skill, parsed) = read_skill(&root);
        if let Some(problem) = skill.problem {
            return Err(SkillError::Invalid(problem));
        }
        let name = parsed.map(|p| p.name).unwrap_or_default();
        let target = self.dir.join(&name);
        if fs::symlink_metadata(&target).is_ok() {
            return Err(SkillError::Exists(name));
        }
        fs::rename(&root, &target).map_err(io_error(&target))?;
        Ok(read_skill(&target).0)
    }

    /// Removes a skill's folder.
    ///
    /// # Errors
    /// No such skill; the file system.
    pub fn remove(&self, name: &str) -> Result<(), SkillError> {
        let dir = self.folder(name)?;
        fs::remove_dir_all(&dir).map_err(io_error(&dir))
    }

    /// Writes a skill to `out` as a `.zip` holding its folder.
    ///
    /// # Errors
    /// No such skill; the file system.
    pub fn export(&self, name: &str, out: &Path) -> Result<(), SkillError> {
        let (skill, _) = self.get(name)?;
        let dir = self.folder(name)?;
        let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
        let mut file = tempfile::NamedTempFile::new_in(parent.unwrap_or(Path::new(".")))
            .map_err(io_error(out))?;
        {
            let mut zip = zip::ZipWriter::new(file.as_file_mut());
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            for entry in &skill.files {
                let bytes = fs::read(dir.join(&entry.path)).map_err(io_error(&dir))?;
                zip.start_file(format!("{name}/{}", entry.path), options)
                    .map_err(|e| SkillError::Io {
                        path: out.display().to_string(),
                        detail: e.to_string(),
                    })?;
                zip.write_all(&bytes).map_err(io_error(out))?;
            }
            zip.finish().map_err(|e| SkillError::Io {
                path: out.display().to_string(),
                detail: e.to_string(),
            })?;
        }
        file.persist(out).map_err(|e| io_error(out)(e.error))?;
        Ok(())
    }
}

/// Where an unpacked zip's skill is: its top, or its one folder.
fn skill_root(unpacked: &Path) -> Result<PathBuf, SkillError> {
    if unpacked.join(SKILL_FILE).is_file() {
        return Ok(unpacked.to_owned());
    }
    // What macOS's Finder adds to a zip (`__MACOSX/`, `.DS_Store`) is not the skill.
    let entries: Vec<_> = fs::read_dir(unpacked)
        .map_err(io_error(unpacked))?
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name != "__MACOSX" && !name.starts_with('.')
        })
        .collect();
    match entries.as_slice() {
        [one] if one.path().join(SKILL_FILE).is_file() => Ok(one.path()),
        _ => Err(SkillError::Invalid(format!(
            "The zip has no {SKILL_FILE} at its top or in its one folder"
        ))),
    }
}

/// Copies a folder's files (never through a link), within the skill limits.
fn copy_folder(from: &Path, to: &Path) -> Result<(), SkillError> {
    let files = walk(from)?;
    for file in &files {
        let target = to.join(&file.path);
        if let Some(folder) = target.parent() {
            crate::paths::create_private_dirs(folder).map_err(io_error(folder))?;
        }
        fs::copy(from.join(&file.path), &target).map_err(io_error(&target))?;
    }
    crate::paths::create_private_dirs(to).map_err(io_error(to))
}

/// Every file under `dir`, `SKILL.md` first then by path.
///
/// # Errors
/// A link (a skill holds none), too many files or bytes, a folder that cannot be read.
fn walk(dir: &Path) -> Result<Vec<SkillFile>, SkillError> {
    let mut files = Vec::new();
    let mut total: u64 = 0;
    let mut folders = vec![(dir.to_owned(), String::new())];
    while let Some((folder, prefix)) = folders.pop() {
        for entry in fs::read_dir(&folder).map_err(io_error(&folder))? {
            let entry = entry.map_err(io_error(&folder))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = format!("{prefix}{name}");
            let meta = fs::symlink_metadata(entry.path()).map_err(io_error(&entry.path()))?;
            if meta.file_type().is_symlink() {
                return Err(SkillError::Invalid(format!(
                    "It holds “{path}”, a link; a skill holds only its own files"
                )));
            }
            if meta.is_dir() {
                folders.push((entry.path(), format!("{path}/")));
                continue;
            }
            if !meta.is_file() {
                return Err(SkillError::Invalid(format!(
                    "It holds “{path}”, which is not a plain file (a device, a pipe or a socket)"
                )));
            }
            total = total.saturating_add(meta.len());
            files.push(SkillFile::new(path, meta.len()));
            if files.len() > super::MAX_FILES {
                return Err(SkillError::Invalid(format!(
                    "It holds more than {} files",
                    super::MAX_FILES
                )));
            }
            if total > super::MAX_BYTES {
                return Err(SkillError::Invalid(format!(
                    "Its files hold more than {} MiB",
                    super::MAX_BYTES / 1024 / 1024
                )));
            }
        }
    }
    files.sort_by(|a, b| {
        (a.path != SKILL_FILE)
            .cmp(&(b.path != SKILL_FILE))
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(files)
}

/// How much of a `SKILL.md` is read to list its skill: its front matter is at the top.
const FRONT_MATTER_BYTES: u64 = 64 * 1024;

/// How much of a skill's `SKILL.md` to read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Its front matter (listing: its body is not kept).
    FrontMatter,
    /// All of it.
    Whole,
}

/// A skill's folder read: the skill (with its problem, if any) and its `SKILL.md`.
fn read_skill(dir: &Path) -> (Skill, Option<Parsed>) {
    read_skill_as(dir, Reading::Whole)
}

fn read_skill_as(dir: &Path, how: Reading) -> (Skill, Option<Parsed>) {
    let folder_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut skill = Skill {
        name: folder_name.clone(),
        description: String::new(),
        origin: SkillOrigin::Folder {
            path: dir.display().to_string(),
        },
        files: Vec::new(),
        bytes: 0,
        enabled: true,
        fields: serde_json::Map::new(),
        ignored: Vec::new(),
        has_scripts: false,
        scripts: super::scripts::ScriptsAllowed::None,
        changed: false,
        approval: None,
        problem: None,
    };
    let read = walk(dir).and_then(|files| {
        let path = dir.join(SKILL_FILE);
        let meta = fs::symlink_metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .ok_or_else(|| SkillError::Invalid(format!("It has no {SKILL_FILE}")))?;
        if meta.len() > MAX_SKILL_FILE_BYTES {
            return Err(SkillError::Invalid(format!(
                "Its {SKILL_FILE} is larger than {} KiB",
                MAX_SKILL_FILE_BYTES / 1024
            )));
        }
        let limit = match how {
            Reading::FrontMatter => FRONT_MATTER_BYTES,
            Reading::Whole => MAX_SKILL_FILE_BYTES,
        };
        let mut bytes = Vec::new();
        fs::File::open(&path)
            .and_then(|f| f.take(limit).read_to_end(&mut bytes))
            .map_err(io_error(&path))?;
        let text = match how {
            // Cut at the limit, perhaps inside a character of the body.
            Reading::FrontMatter => String::from_utf8_lossy(&bytes).into_owned(),
            Reading::Whole => String::from_utf8(bytes)
                .map_err(|_| SkillError::Invalid(format!("Its {SKILL_FILE} is not UTF-8 text")))?,
        };
        Ok((files, parse(&text)?))
    });
    match read {
        Ok((files, parsed)) => {
            skill.bytes = files.iter().map(|f| f.bytes).sum();
            skill.has_scripts = files.iter().any(|f| f.script);
            if skill.has_scripts {
                skill.scripts = super::scripts::ScriptsAllowed::Off;
            }
            skill.files = files;
            skill.name.clone_from(&parsed.name);
            skill.description.clone_from(&parsed.description);
            skill.ignored = parsed.ignored();
            skill.fields = parsed.fields.clone();
            (skill, Some(parsed))
        }
        Err(e) => {
            skill.problem = Some(e.to_string());
            (skill, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, path: &str, text: &str) {
        let file = dir.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }

    const GOOD: &str = "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nUse FORMS.md.\n";

    #[test]
    fn a_folder_is_added_listed_read_exported_and_removed() {
        let home = tempfile::tempdir().unwrap();
        let source = home.path().join("anything");
        write(&source, SKILL_FILE, GOOD);
        write(&source, "reference/FORMS.md", "# Forms");
        write(&source, "scripts/fill.py", "print('x')");
        let library = Library::new(home.path().join("skills"));
        let skill = library.add(&source).unwrap();
        assert_eq!(skill.name, "pdf-forms");
        assert!(skill.has_scripts);
        let paths: Vec<&str> = skill.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [SKILL_FILE, "reference/FORMS.md", "scripts/fill.py"]);
        assert!(matches!(library.add(&source), Err(SkillError::Exists(_))));
        assert_eq!(library.list().len(), 1);
        assert_eq!(
            library
                .read_file("pdf-forms", "reference/FORMS.md")
                .unwrap(),
            b"# Forms"
        );
        for bad in ["../../anything/SKILL.md", "/etc/passwd", "nope.md"] {
            assert!(library.read_file("pdf-forms", bad).is_err(), "{bad}");
        }
        let zip = home.path().join("out.zip");
        library.export("pdf-forms", &zip).unwrap();
        library.remove("pdf-forms").unwrap();
        assert!(library.list().is_empty());
        // What was exported comes back whole.
        let again = library.add(&zip).unwrap();
        assert_eq!(again.files, skill.files);
        assert!(library.remove("../skills").is_err());
    }

    #[test]
    fn a_broken_folder_is_listed_with_its_problem() {
        let home = tempfile::tempdir().unwrap();
        write(&home.path().join("broken"), SKILL_FILE, "no front matter");
        write(&home.path().join("bare"), "notes.md", "x");
        let skills = Library::new(home.path().to_owned()).list();
        assert_eq!(skills.len(), 2);
        assert!(skills[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("no SKILL.md"));
        assert!(skills[1]
            .problem
            .as_deref()
            .unwrap()
            .contains("front matter"));
    }

    #[test]
    fn a_folder_named_otherwise_than_its_skill_is_listed_by_its_folder_with_the_problem() {
        let home = tempfile::tempdir().unwrap();
        write(&home.path().join("other"), SKILL_FILE, GOOD);
        let library = Library::new(home.path().to_owned());
        let skills = library.list();
        assert_eq!(skills[0].name, "other");
        assert!(skills[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("names it “pdf-forms”"));
        assert!(library.get("other").is_err() && library.get("pdf-forms").is_err());
    }

    #[test]
    fn a_zip_made_by_finder_is_read() {
        let home = tempfile::tempdir().unwrap();
        let zip_path = home.path().join("finder.zip");
        let mut zip = zip::ZipWriter::new(fs::File::create(&zip_path).unwrap());
        let options = zip::write::SimpleFileOptions::default();
        for (name, text) in [
            ("pdf-forms/SKILL.md", GOOD),
            ("__MACOSX/pdf-forms/._SKILL.md", "x"),
            (".DS_Store", "x"),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(text.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
        let library = Library::new(home.path().join("skills"));
        assert_eq!(library.add(&zip_path).unwrap().files.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_in_a_folder_is_refused_not_read() {
        let home = tempfile::tempdir().unwrap();
        let source = home.path().join("s");
        write(&source, SKILL_FILE, GOOD);
        nix::unistd::mkfifo(&source.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let error = Library::new(home.path().join("skills"))
            .add(&source)
            .unwrap_err();
        assert!(error.to_string().contains("not a plain file"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_with_a_link_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let source = home.path().join("s");
        write(&source, SKILL_FILE, GOOD);
        std::os::unix::fs::symlink("/etc/passwd", source.join("passwd")).unwrap();
        let library = Library::new(home.path().join("skills"));
        let error = library.add(&source).unwrap_err().to_string();
        assert!(error.contains("a link"), "{error}");
        assert!(library.list().is_empty(), "nothing is left behind");
    }
}
