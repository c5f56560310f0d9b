//! The `switchboard` command in a terminal: whether a new terminal finds this app's binary as
//! `switchboard`, and putting it there or taking it away (`switchboard shell-command`, and the
//! Windows installers' hooks). The `.deb` and `.rpm` install `/usr/bin/switchboard` themselves;
//! the macOS app, the AppImage and the Windows installers have this.
//!
//! On Linux and macOS the command is a symbolic link named `switchboard`, in the first of
//! `~/.local/bin`, `~/bin` and `/usr/local/bin` that is on the PATH and can be written (else in
//! `~/.local/bin`, with the line that puts it on the PATH). It points at the AppImage itself when
//! run from one, never at the AppImage's mount, which goes when the app quits; a binary run from
//! the disk image or a translocated copy is refused for the same reason. A file of someone
//! else's at that place is never replaced. On Windows the binary's folder is added to the
//! user's PATH in the registry (kept as `REG_EXPAND_SZ`, so its `%VARS%` stay), and running
//! programs are told.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The command's name.
pub const NAME: &str = "switchboard";

/// What a new terminal finds, and where `install` puts (or has put) the command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ShellCommandStatus {
    /// The program `switchboard` should run: this app's binary (the AppImage when run from one).
    pub binary: String,
    /// What `switchboard` runs in a terminal now, if anything.
    pub found: Option<String>,
    /// Whether that is this app's binary.
    pub current: bool,
    /// Where the command is put: the link (Linux, macOS), or the folder added to the user's
    /// PATH (Windows).
    pub place: String,
    /// Whether the command is there (the link points at `binary`; on Windows, the folder is on
    /// the user's PATH).
    pub installed: bool,
    /// Whether a new terminal looks in the place's folder.
    pub on_path: bool,
    /// How to put the place's folder on the PATH, when it is not.
    pub hint: Option<String>,
    /// What the last `install` or `remove` changed (`None` from `status`).
    pub changed: Option<bool>,
}

/// Why the command could not be put on the PATH or taken off it.
#[derive(Debug, thiserror::Error)]
pub enum ShellCommandError {
    #[error(
        "Switchboard is running from {0}, which goes away when it quits; move it to Applications (or a folder of yours) and run it from there first."
    )]
    Temporary(String),
    #[error("{0} is someone else's (a file, or a link to another program); it was left alone. Remove it yourself if it should run this app.")]
    Occupied(String),
    #[error("No home folder is known (HOME is not set).")]
    NoHome,
    #[error("Cannot find this program's own file: {0}")]
    NoBinary(std::io::Error),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("The user's PATH in the registry: {0}")]
    Registry(String),
}

#[cfg_attr(windows, allow(dead_code))]
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ShellCommandError + '_ {
    move |source| ShellCommandError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What the answers depend on: read from the process by [`Surroundings::of_process`], given
/// whole by tests.
#[derive(Debug, Clone)]
pub struct Surroundings {
    /// This program's file (`current_exe`).
    pub exe: PathBuf,
    /// `APPIMAGE` and `APPDIR`: the AppImage this program was started from and where it is
    /// mounted, if it was. Taken only when `exe` is inside that mount: a program started from
    /// an AppImage'd terminal inherits both and is not that AppImage.
    pub appimage: Option<(PathBuf, PathBuf)>,
    pub home: Option<PathBuf>,
    /// The PATH a new terminal starts with (this process's).
    pub path: OsString,
    /// The login shell (`SHELL`), for the hint.
    pub shell: Option<String>,
}

impl Surroundings {
    /// # Errors
    /// When this program's own file cannot be found.
    pub fn of_process() -> Result<Self, ShellCommandError> {
        Ok(Self {
            exe: std::env::current_exe().map_err(ShellCommandError::NoBinary)?,
            appimage: std::env::var_os("APPIMAGE")
                .zip(std::env::var_os("APPDIR"))
                .map(|(image, dir)| (PathBuf::from(image), PathBuf::from(dir))),
            home: dirs::home_dir(),
            path: std::env::var_os("PATH").unwrap_or_default(),
            shell: std::env::var("SHELL").ok(),
        })
    }

    /// The program the command should run.
    ///
    /// # Errors
    /// [`ShellCommandError::Temporary`] when it lives somewhere that goes away.
    pub fn binary(&self) -> Result<PathBuf, ShellCommandError> {
        let binary = match &self.appimage {
            Some((image, mount)) if image.is_file() && self.exe.starts_with(mount) => image.clone(),
            _ => self.exe.clone(),
        };
        if is_temporary(&binary) {
            return Err(ShellCommandError::Temporary(binary.display().to_string()));
        }
        Ok(binary)
    }

    /// What `switchboard` runs in a terminal with this PATH.
    fn found(&self) -> Option<PathBuf> {
        let cwd = self.home.clone().unwrap_or_else(|| PathBuf::from("/"));
        which::which_in(NAME, Some(&self.path), cwd).ok()
    }

    fn on_path(&self, dir: &Path) -> bool {
        std::env::split_paths(&self.path).any(|entry| same_dir(&entry, dir))
    }
}

/// A place a program is run from only while it runs: an AppImage's mount, the disk image, a
/// copy macOS translocated.
fn is_temporary(binary: &Path) -> bool {
    let text = binary.to_string_lossy();
    text.starts_with("/tmp/.mount_")
        || text.starts_with("/Volumes/")
        || text.contains("/AppTranslocation/")
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    if cfg!(windows) {
        same_windows_dir(&a.to_string_lossy(), &b.to_string_lossy())
    } else {
        a.components().eq(b.components())
    }
}

/// Where the command goes.
struct Place {
    path: PathBuf,
    installed: bool,
    on_path: bool,
    hint: Option<String>,
}

/// What a new terminal finds, and where `install` would put the command.
///
/// # Errors
/// When this program's file is temporary, or (Windows) the registry cannot be read.
pub fn status(around: &Surroundings) -> Result<ShellCommandStatus, ShellCommandError> {
    let binary = around.binary()?;
    let found = around.found();
    let current = found.as_deref().is_some_and(|f| same_file(f, &binary));
    let place = imp::place(around, &binary)?;
    Ok(ShellCommandStatus {
        binary: binary.display().to_string(),
        found: found.map(|f| f.display().to_string()),
        current,
        place: place.path.display().to_string(),
        installed: place.installed,
        on_path: place.on_path,
        hint: place.hint,
        changed: None,
    })
}

/// Makes `switchboard` in a new terminal run this app's binary. Nothing is changed when it
/// already does.
///
/// # Errors
/// See [`ShellCommandError`].
pub fn install(around: &Surroundings) -> Result<ShellCommandStatus, ShellCommandError> {
    let before = status(around)?;
    if before.current && !is_temporary(Path::new(before.found.as_deref().unwrap_or_default())) {
        return Ok(ShellCommandStatus {
            changed: Some(false),
            ..before
        });
    }
    let changed = imp::install(around, Path::new(&before.binary), Path::new(&before.place))?;
    Ok(ShellCommandStatus {
        changed: Some(changed),
        ..status(around)?
    })
}

/// What the window asks the person, outside the webview, before [`install`] changes anything
/// (the binary, and where it is put); `None` when nothing would change.
#[must_use]
pub fn install_question(before: &ShellCommandStatus) -> Option<crate::policy::confirm::Allowance> {
    let unchanged =
        before.current && !is_temporary(Path::new(before.found.as_deref().unwrap_or_default()));
    (!unchanged).then(|| crate::policy::confirm::Allowance::ShellCommand {
        binary: before.binary.clone(),
        place: before.place.clone(),
    })
}

/// Takes away what [`install`] put; a `switchboard` a package installed is left alone.
///
/// # Errors
/// See [`ShellCommandError`].
pub fn remove(around: &Surroundings) -> Result<ShellCommandStatus, ShellCommandError> {
    let binary = around.binary()?;
    let changed = imp::remove(around, &binary)?;
    Ok(ShellCommandStatus {
        changed: Some(changed),
        ..status(around)?
    })
}

/// The line that puts `dir` on the PATH of `shell`'s new terminals, and the file it goes in.
#[cfg_attr(windows, allow(dead_code))]
fn path_hint(shell: Option<&str>, dir: &Path, home: &Path) -> String {
    let shown = match dir.strip_prefix(home) {
        Ok(rest) => format!("$HOME/{}", rest.display()),
        Err(_) => dir.display().to_string(),
    };
    let shell = shell
        .and_then(|s| Path::new(s).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match shell.as_str() {
        "fish" => format!(
            "{} is not on your PATH; run: fish_add_path \"{shown}\"",
            dir.display()
        ),
        "zsh" => format!(
            "{} is not on your PATH; add this line to ~/.zprofile and open a new terminal: export PATH=\"{shown}:$PATH\"",
            dir.display()
        ),
        "bash" => format!(
            "{} is not on your PATH; add this line to ~/.bashrc (and ~/.bash_profile on macOS) and open a new terminal: export PATH=\"{shown}:$PATH\"",
            dir.display()
        ),
        _ => format!(
            "{} is not on your PATH; add this line to ~/.profile and open a new terminal: export PATH=\"{shown}:$PATH\"",
            dir.display()
        ),
    }
}

/// The folders the link may go in, best first: the user's own, then the system's local one.
#[cfg_attr(windows, allow(dead_code))]
fn link_dirs(home: &Path) -> [PathBuf; 3] {
    [
        home.join(".local/bin"),
        home.join("bin"),
        PathBuf::from("/usr/local/bin"),
    ]
}

/// The folder the link goes in: the first of [`link_dirs`] on the PATH that can be written (a
/// folder of the user's that does not exist yet can be), else `~/.local/bin`. The flag says
/// whether it is on the PATH.
#[cfg_attr(windows, allow(dead_code))]
fn link_dir(
    around: &Surroundings,
    home: &Path,
    writable: impl Fn(&Path) -> bool,
) -> (PathBuf, bool) {
    let dirs = link_dirs(home);
    for dir in &dirs {
        if around.on_path(dir) && writable(dir) {
            return (dir.clone(), true);
        }
    }
    let [first, ..] = dirs;
    let on_path = around.on_path(&first);
    (first, on_path)
}

/// Whether this user can add a file to `dir` (or, for a folder under `home` that does not
/// exist yet, make it).
#[cfg(unix)]
fn can_write(dir: &Path, home: &Path) -> bool {
    use nix::unistd::{access, AccessFlags};
    let mut probe = dir;
    loop {
        if probe.is_dir() {
            return access(probe, AccessFlags::W_OK).is_ok();
        }
        if probe.exists() || !probe.starts_with(home) || probe == home {
            return false;
        }
        match probe.parent() {
            Some(parent) => probe = parent,
            None => return false,
        }
    }
}

#[cfg(unix)]
mod imp {
    //! Linux and macOS: a symbolic link.
    use super::{
        can_write, io, link_dir, link_dirs, path_hint, same_file, Place, ShellCommandError,
        Surroundings, NAME,
    };
    use std::path::{Path, PathBuf};

    pub(super) fn place(around: &Surroundings, binary: &Path) -> Result<Place, ShellCommandError> {
        let home = around.home.as_deref().ok_or(ShellCommandError::NoHome)?;
        // A link already made stays the place, wherever it was made.
        let made = ours(home, binary).into_iter().next();
        let (path, dir) = match &made {
            Some(link) => (
                link.clone(),
                link.parent().map(Path::to_path_buf).unwrap_or_default(),
            ),
            None => {
                let (dir, _) = link_dir(around, home, |d| can_write(d, home));
                (dir.join(NAME), dir)
            }
        };
        let on_path = around.on_path(&dir);
        Ok(Place {
            installed: std::fs::read_link(&path).is_ok_and(|target| same_file(&target, binary)),
            hint: (!on_path).then(|| path_hint(around.shell.as_deref(), &dir, home)),
            on_path,
            path,
        })
    }

    /// The links named `switchboard` in [`link_dirs`] that point at `binary`, or at nothing
    /// any more (a Switchboard moved or deleted).
    fn ours(home: &Path, binary: &Path) -> Vec<PathBuf> {
        link_dirs(home)
            .into_iter()
            .map(|dir| dir.join(NAME))
            .filter(|link| {
                let Ok(target) = std::fs::read_link(link) else {
                    return false;
                };
                let target = link.parent().unwrap_or(Path::new("/")).join(target);
                same_file(&target, binary)
                    || (!target.exists()
                        && target
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().to_lowercase().contains(NAME)))
            })
            .collect()
    }

    pub(super) fn install(
        around: &Surroundings,
        binary: &Path,
        link: &Path,
    ) -> Result<bool, ShellCommandError> {
        if std::fs::symlink_metadata(link).is_ok() {
            if std::fs::read_link(link).is_ok_and(|t| t == binary) {
                return Ok(false);
            }
            // Only a link of this app's (to this binary, or to a copy no longer there) is
            // replaced: a file, or a link to another program, is someone else's.
            let home = around.home.as_deref().ok_or(ShellCommandError::NoHome)?;
            if !ours(home, binary).iter().any(|mine| mine == link) {
                return Err(ShellCommandError::Occupied(link.display().to_string()));
            }
        }
        let dir = link.parent().unwrap_or(Path::new("/"));
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        // Made beside it and renamed over it: a terminal never finds no `switchboard` between.
        let fresh = dir.join(format!(".{NAME}.{}.new", std::process::id()));
        let _ = std::fs::remove_file(&fresh);
        std::os::unix::fs::symlink(binary, &fresh).map_err(io(&fresh))?;
        std::fs::rename(&fresh, link).map_err(|e| {
            let _ = std::fs::remove_file(&fresh);
            io(link)(e)
        })?;
        Ok(true)
    }

    pub(super) fn remove(around: &Surroundings, binary: &Path) -> Result<bool, ShellCommandError> {
        let home = around.home.as_deref().ok_or(ShellCommandError::NoHome)?;
        let links = ours(home, binary);
        for link in &links {
            std::fs::remove_file(link).map_err(io(link))?;
        }
        Ok(!links.is_empty())
    }
}

#[cfg(windows)]
mod imp {
    //! Windows: the binary's folder on the user's PATH (`HKCU\Environment`).
    use super::{path_with, path_without, Place, ShellCommandError, Surroundings};
    use std::path::{Path, PathBuf};

    fn folder(binary: &Path) -> PathBuf {
        binary.parent().map(Path::to_path_buf).unwrap_or_default()
    }

    fn registry(e: &windows::core::Error) -> ShellCommandError {
        ShellCommandError::Registry(e.message())
    }

    fn environment() -> Result<windows_registry::Key, ShellCommandError> {
        windows_registry::CURRENT_USER
            .create("Environment")
            .map_err(|e| registry(&e))
    }

    /// The user's PATH as kept, its `%VARS%` not expanded; empty when there is none.
    fn user_path(key: &windows_registry::Key) -> Result<String, ShellCommandError> {
        match key.get_hstring("Path") {
            Ok(value) => Ok(value.to_string_lossy()),
            Err(e) if e.code() == windows::core::HRESULT::from_win32(2) => Ok(String::new()),
            Err(e) => Err(registry(&e)),
        }
    }

    pub(super) fn place(around: &Surroundings, binary: &Path) -> Result<Place, ShellCommandError> {
        let dir = folder(binary);
        let kept = user_path(&environment()?)?;
        let installed = path_with(&kept, &dir.to_string_lossy()).is_none();
        Ok(Place {
            on_path: installed || around.on_path(&dir),
            installed,
            hint: None,
            path: dir,
        })
    }

    pub(super) fn install(
        _around: &Surroundings,
        _binary: &Path,
        dir: &Path,
    ) -> Result<bool, ShellCommandError> {
        let key = environment()?;
        let Some(path) = path_with(&user_path(&key)?, &dir.to_string_lossy()) else {
            return Ok(false);
        };
        key.set_expand_string("Path", path)
            .map_err(|e| registry(&e))?;
        announce();
        Ok(true)
    }

    pub(super) fn remove(_around: &Surroundings, binary: &Path) -> Result<bool, ShellCommandError> {
        let key = environment()?;
        let Some(path) = path_without(&user_path(&key)?, &folder(binary).to_string_lossy()) else {
            return Ok(false);
        };
        key.set_expand_string("Path", path)
            .map_err(|e| registry(&e))?;
        announce();
        Ok(true)
    }

    /// Tells running programs (Explorer first: the terminals it starts) that the environment
    /// changed, waiting at most a second on any that does not answer.
    fn announce() {
        use windows::Win32::Foundation::{LPARAM, WPARAM};
        use windows::Win32::UI::WindowsAndMessaging::{
            SendMessageTimeoutW, HWND_BROADCAST, SMTO_ABORTIFHUNG, WM_SETTINGCHANGE,
        };
        let what: Vec<u16> = "Environment\0".encode_utf16().collect();
        // SAFETY: `what` is a NUL-terminated UTF-16 string that outlives the call, which
        // returns by the timeout at the latest; the result pointer may be null.
        unsafe {
            SendMessageTimeoutW(
                HWND_BROADCAST,
                WM_SETTINGCHANGE,
                WPARAM(0),
                LPARAM(what.as_ptr() as isize),
                SMTO_ABORTIFHUNG,
                1000,
                None,
            );
        }
    }
}

/// Whether two Windows folders are the same: case aside, quotes and a trailing separator aside.
fn same_windows_dir(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.trim()
            .trim_matches('"')
            .trim_end_matches(['\\', '/'])
            .replace('/', "\\")
            .to_lowercase()
    };
    !a.trim().is_empty() && norm(a) == norm(b)
}

/// A Windows PATH (`;`-separated) with `dir` added at its end; `None` when it is there already.
#[cfg_attr(not(windows), allow(dead_code))]
fn path_with(path: &str, dir: &str) -> Option<String> {
    if path.split(';').any(|entry| same_windows_dir(entry, dir)) {
        return None;
    }
    let kept = path.trim_end_matches(';');
    Some(if kept.is_empty() {
        dir.to_owned()
    } else {
        format!("{kept};{dir}")
    })
}

/// A Windows PATH without `dir` (every copy of it); `None` when it was not there.
#[cfg_attr(not(windows), allow(dead_code))]
fn path_without(path: &str, dir: &str) -> Option<String> {
    let entries: Vec<&str> = path.split(';').collect();
    let kept: Vec<&str> = entries
        .iter()
        .copied()
        .filter(|entry| !same_windows_dir(entry, dir))
        .collect();
    (kept.len() != entries.len()).then(|| kept.join(";"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_added_to_a_windows_path_once_whatever_its_case_or_trailing_backslash() {
        let dir = r"C:\Users\Ann\AppData\Local\Switchboard";
        assert_eq!(path_with("", dir).as_deref(), Some(dir));
        assert_eq!(
            path_with(r"%USERPROFILE%\bin;C:\Tools;", dir).as_deref(),
            Some(r"%USERPROFILE%\bin;C:\Tools;C:\Users\Ann\AppData\Local\Switchboard"),
            "kept entries keep their %VARS%; no empty entry is left between"
        );
        assert_eq!(
            path_with(r"C:\Tools;c:\users\ann\appdata\local\switchboard\", dir),
            None
        );
        assert_eq!(
            path_with(r#"C:\Tools;"C:\Users\Ann\AppData\Local\Switchboard""#, dir),
            None
        );
    }

    #[test]
    fn a_folder_is_taken_out_of_a_windows_path_with_every_copy_and_nothing_else() {
        let dir = r"C:\Program Files\Switchboard";
        assert_eq!(
            path_without(
                r"C:\Tools;C:\Program Files\Switchboard\;%LOCALAPPDATA%\x;c:\program files\switchboard",
                dir
            )
            .as_deref(),
            Some(r"C:\Tools;%LOCALAPPDATA%\x")
        );
        assert_eq!(path_without(r"C:\Tools;C:\Program Files", dir), None);
        assert_eq!(path_without("", dir), None);
        assert!(!same_windows_dir("", ""), "an empty entry is no folder");
    }

    #[test]
    fn a_binary_that_goes_away_when_it_quits_is_not_linked() {
        for temporary in [
            "/tmp/.mount_SwitchXYZ/usr/bin/switchboard",
            "/Volumes/Switchboard/Switchboard.app/Contents/MacOS/switchboard",
            "/private/var/folders/x/AppTranslocation/1234/d/Switchboard.app/Contents/MacOS/switchboard",
        ] {
            assert!(is_temporary(Path::new(temporary)), "{temporary}");
        }
        assert!(!is_temporary(Path::new(
            "/Applications/Switchboard.app/Contents/MacOS/switchboard"
        )));
    }

    #[test]
    fn the_hint_names_the_file_of_the_shell_that_reads_it() {
        let home = Path::new("/home/ann");
        let dir = Path::new("/home/ann/.local/bin");
        assert!(path_hint(Some("/bin/zsh"), dir, home).ends_with(
            "~/.zprofile and open a new terminal: export PATH=\"$HOME/.local/bin:$PATH\""
        ));
        assert!(path_hint(Some("/usr/bin/fish"), dir, home)
            .ends_with("fish_add_path \"$HOME/.local/bin\""));
        assert!(path_hint(None, dir, home).contains("~/.profile"));
        assert!(path_hint(Some("/bin/bash"), dir, home).contains("~/.bashrc"));
    }

    #[cfg(unix)]
    mod links {
        use super::super::*;
        use std::os::unix::fs::PermissionsExt;

        struct Home {
            _dir: tempfile::TempDir,
            root: PathBuf,
        }

        impl Home {
            fn new() -> Self {
                let dir = tempfile::tempdir().unwrap();
                let root = dir.path().canonicalize().unwrap();
                std::fs::create_dir_all(root.join("home")).unwrap();
                Self { _dir: dir, root }
            }
            fn home(&self) -> PathBuf {
                self.root.join("home")
            }
            /// An executable file at `rel`.
            fn program(&self, rel: &str) -> PathBuf {
                let path = self.root.join(rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, "#!/bin/sh\n").unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
                path
            }
            fn around(&self, exe: &Path, path: &[PathBuf]) -> Surroundings {
                Surroundings {
                    exe: exe.to_path_buf(),
                    appimage: None,
                    home: Some(self.home()),
                    path: std::env::join_paths(path).unwrap(),
                    shell: Some("/bin/bash".into()),
                }
            }
        }

        #[test]
        fn the_command_is_linked_into_the_users_bin_on_the_path_and_taken_away_again() {
            let t = Home::new();
            let exe = t.program("Switchboard.app/Contents/MacOS/switchboard");
            let local = t.home().join(".local/bin");
            let around = t.around(&exe, &[local.clone(), PathBuf::from("/usr/bin")]);

            let before = status(&around).unwrap();
            assert_eq!(before.found, None);
            assert!(!before.current);
            assert_eq!(before.place, local.join(NAME).display().to_string());
            assert!(before.on_path && before.hint.is_none() && !before.installed);
            // The window asks first, naming what would run and where it goes.
            let Some(asked) = install_question(&before) else {
                panic!("installing changes the PATH: the person is asked")
            };
            let text = asked.message();
            assert!(text.contains(&exe.display().to_string()), "{text}");
            assert!(text.contains(&before.place), "{text}");

            let done = install(&around).unwrap();
            assert_eq!(done.changed, Some(true));
            assert!(done.current && done.installed, "{done:?}");
            assert_eq!(std::fs::read_link(local.join(NAME)).unwrap(), exe);
            assert_eq!(install(&around).unwrap().changed, Some(false));
            assert!(
                install_question(&status(&around).unwrap()).is_none(),
                "nothing to ask when nothing would change"
            );

            let gone = remove(&around).unwrap();
            assert_eq!(gone.changed, Some(true));
            assert!(!gone.current && gone.found.is_none() && !gone.installed);
            assert!(!local.join(NAME).exists());
            assert_eq!(remove(&around).unwrap().changed, Some(false));
        }

        #[test]
        fn off_the_path_the_link_goes_to_local_bin_with_the_line_that_puts_it_there() {
            let t = Home::new();
            let exe = t.program("opt/Switchboard/switchboard");
            let around = t.around(&exe, &[PathBuf::from("/usr/bin")]);
            let done = install(&around).unwrap();
            assert_eq!(done.changed, Some(true));
            assert!(!done.on_path && !done.current && done.installed);
            let link = t.home().join(".local/bin").join(NAME);
            assert_eq!(done.place, link.display().to_string());
            assert!(
                done.hint
                    .as_deref()
                    .unwrap()
                    .contains("export PATH=\"$HOME/.local/bin:$PATH\""),
                "{done:?}"
            );
            assert_eq!(std::fs::read_link(&link).unwrap(), exe);
            // The next status finds the link where it was made.
            assert_eq!(status(&around).unwrap().place, done.place);
        }

        #[test]
        fn a_switchboard_the_package_installed_is_enough_and_is_never_touched() {
            let t = Home::new();
            let exe = t.program("usr/bin/switchboard");
            let around = t.around(&exe, &[t.home().join("bin"), t.root.join("usr/bin")]);
            let done = install(&around).unwrap();
            assert_eq!(done.changed, Some(false));
            assert!(done.current);
            assert!(!t.home().join("bin").join(NAME).exists());
            assert_eq!(remove(&around).unwrap().changed, Some(false));
            assert!(exe.exists());
        }

        #[test]
        fn someone_elses_switchboard_file_is_not_replaced() {
            let t = Home::new();
            let exe = t.program("opt/sb/switchboard");
            let theirs = t.program("home/.local/bin/switchboard");
            let around = t.around(&exe, &[theirs.parent().unwrap().to_path_buf()]);
            let err = install(&around).unwrap_err();
            assert!(matches!(err, ShellCommandError::Occupied(_)), "{err}");
            assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "#!/bin/sh\n");
            assert_eq!(remove(&around).unwrap().changed, Some(false));
            assert!(theirs.exists());
        }

        #[test]
        fn a_link_to_another_program_is_not_replaced_but_one_to_a_copy_gone_is() {
            let t = Home::new();
            let exe = t.program("opt/sb/switchboard");
            let other = t.program("Cellar/switchboard/1.0/bin/switchboard");
            let bin = t.home().join(".local/bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::os::unix::fs::symlink(&other, bin.join(NAME)).unwrap();
            let around = t.around(&exe, std::slice::from_ref(&bin));
            let err = install(&around).unwrap_err();
            assert!(matches!(err, ShellCommandError::Occupied(_)), "{err}");
            assert_eq!(std::fs::read_link(bin.join(NAME)).unwrap(), other);
            assert_eq!(remove(&around).unwrap().changed, Some(false));
            assert!(bin.join(NAME).exists());
        }

        #[test]
        fn an_appimage_is_linked_itself_and_a_link_left_by_a_moved_copy_is_replaced() {
            let t = Home::new();
            let mount = t.program("tmp-mount/usr/bin/switchboard");
            let image = t.program("Apps/Switchboard-1.0.AppImage");
            let bin = t.home().join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::os::unix::fs::symlink(t.root.join("Old/Switchboard-0.9.AppImage"), bin.join(NAME))
                .unwrap();
            // Started from another AppImage (a terminal, say): this program is not that one.
            let mut around = t.around(&t.program("opt/sb/switchboard"), std::slice::from_ref(&bin));
            around.appimage = Some((image.clone(), t.root.join("tmp-mount")));
            assert_eq!(around.binary().unwrap(), t.root.join("opt/sb/switchboard"));

            let mut around = t.around(&mount, std::slice::from_ref(&bin));
            around.appimage = Some((image.clone(), t.root.join("tmp-mount")));
            let done = install(&around).unwrap();
            assert_eq!(done.binary, image.display().to_string());
            assert_eq!(
                done.place,
                bin.join(NAME).display().to_string(),
                "the old link's place"
            );
            assert!(done.current);
            assert_eq!(std::fs::read_link(bin.join(NAME)).unwrap(), image);
        }
    }
}
