//! Where Switchboard keeps its files: config, data and logs, either in the OS's usual places or
//! all under `SWITCHBOARD_HOME`. Owns nothing on disk itself; it only names the paths, and
//! says how a file is written whole ([`write_whole`]).

use std::path::{Path, PathBuf};

/// The app's bundle identifier, the same as `identifier` in tauri.conf.json, so the desktop app
/// and the command line agree on the OS's per-app folders.
pub const APP_IDENTIFIER: &str = "org.switchboard.desktop";

/// The environment variable that relocates every file of the app (and namespaces its keychain
/// entries) for tests, CI and people who keep several profiles.
pub const HOME_ENV: &str = "SWITCHBOARD_HOME";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppPaths {
    pub config_dir: PathBuf,
    pub data_dir: PathBuf,
    pub log_dir: PathBuf,
    /// `Some(dir)` when the app runs under `SWITCHBOARD_HOME=dir`.
    pub home: Option<PathBuf>,
}

impl AppPaths {
    /// Reads `SWITCHBOARD_HOME`; without it, the OS's per-user folders for [`APP_IDENTIFIER`].
    pub fn from_env() -> Self {
        match std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            Some(home) => Self::under_home(absolute(Path::new(&home))),
            None => Self::os_default(),
        }
    }

    /// Every file under one folder: `DIR/config`, `DIR/data`, `DIR/logs`.
    pub fn under_home(home: PathBuf) -> Self {
        Self {
            config_dir: home.join("config"),
            data_dir: home.join("data"),
            log_dir: home.join("logs"),
            home: Some(home),
        }
    }

    /// The folders Tauri's path resolver uses for the same identifier.
    pub fn os_default() -> Self {
        let fallback = || std::env::temp_dir().join("switchboard");
        let config_dir = dirs::config_dir()
            .map(|d| d.join(APP_IDENTIFIER))
            .unwrap_or_else(fallback);
        let data_dir = dirs::data_dir()
            .map(|d| d.join(APP_IDENTIFIER))
            .unwrap_or_else(fallback);
        let log_dir = if cfg!(target_os = "macos") {
            dirs::home_dir()
                .map(|h| h.join("Library/Logs").join(APP_IDENTIFIER))
                .unwrap_or_else(fallback)
        } else {
            dirs::data_local_dir()
                .map(|d| d.join(APP_IDENTIFIER).join("logs"))
                .unwrap_or_else(fallback)
        };
        Self {
            config_dir,
            data_dir,
            log_dir,
            home: None,
        }
    }

    /// The folder an organisation's managed policy is read from: the system's place for it
    /// (Linux `/etc/switchboard`, macOS `/Library/Application Support/Switchboard`, Windows
    /// `%ProgramData%\\Switchboard`) when a policy file is there — a home set by
    /// `SWITCHBOARD_HOME` does not escape it, nor add to it; else, under such a home, its
    /// `managed` folder (tests; a home without an organisation).
    pub fn managed_dirs(&self) -> Vec<PathBuf> {
        let system = if cfg!(target_os = "macos") {
            Some(PathBuf::from("/Library/Application Support/Switchboard"))
        } else if cfg!(windows) {
            std::env::var_os("ProgramData").map(|d| PathBuf::from(d).join("Switchboard"))
        } else {
            Some(PathBuf::from("/etc/switchboard"))
        };
        match (system, &self.home) {
            (Some(system), _) if system.join("policy.json").exists() => vec![system],
            (_, Some(home)) => vec![home.join("managed")],
            (system, None) => system.into_iter().collect(),
        }
    }

    pub fn database_file(&self) -> PathBuf {
        self.data_dir.join("switchboard.db")
    }

    /// The folder MCP bundles are unpacked in, one folder each.
    pub fn bundles_dir(&self) -> PathBuf {
        self.data_dir.join("bundles")
    }

    /// Whether `dir` is one bundle's own folder: a folder right inside [`Self::bundles_dir`].
    pub fn is_bundle_dir(&self, dir: &Path) -> bool {
        let mut parts = dir.components();
        matches!(parts.next_back(), Some(std::path::Component::Normal(_)))
            && parts.as_path() == self.bundles_dir()
    }

    /// The person's Agent Skills, one folder each (issue 61).
    pub fn skills_dir(&self) -> PathBuf {
        self.config_dir.join("skills")
    }

    pub fn settings_file(&self) -> PathBuf {
        self.config_dir.join("settings.json")
    }

    /// What to call the folder in messages: the home when relocated, else the data folder.
    pub fn display_home(&self) -> String {
        self.home
            .as_deref()
            .unwrap_or(&self.data_dir)
            .display()
            .to_string()
    }

    /// The keychain service name. Relocated homes get their own namespace so two profiles
    /// never share or overwrite each other's keys.
    pub fn keychain_service(&self) -> String {
        match &self.home {
            None => "switchboard".to_owned(),
            Some(home) => format!("switchboard:{}", home.display()),
        }
    }

    /// Creates the config, data and log folders.
    ///
    /// # Errors
    /// When a folder cannot be created (permissions, a file in the way).
    pub fn create_all(&self) -> std::io::Result<()> {
        for dir in [&self.config_dir, &self.data_dir, &self.log_dir] {
            create_private_dirs(dir)?;
            private_dir(dir)?;
        }
        if let Some(home) = &self.home {
            private_dir(home)?;
        }
        Ok(())
    }
}

/// A folder as a list of folders writes it (mcp.json's `roots`, a project's folders): a leading
/// "~/" is the home folder. The path it names, or `None` when it names none here (a relative
/// path, or "~/" on a computer with no home folder).
#[must_use]
pub fn folder_of(raw: &str) -> Option<PathBuf> {
    let path = match raw.strip_prefix("~/") {
        Some(rest) => dirs::home_dir()?.join(rest),
        None => PathBuf::from(raw),
    };
    path.is_absolute().then_some(path)
}

/// Makes `dir` the person's alone (0700 on Unix): nothing the app keeps under it — the
/// database, mcp.json, logs, servers' stderr, bundles — can be read by another account.
///
/// # Errors
/// The folder's mode cannot be set.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if std::fs::metadata(dir)?.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Creates `dir` and the folders above it that are missing, each new one the person's alone
/// (0700 on Unix); folders that exist keep their mode.
///
/// # Errors
/// A folder cannot be created.
pub fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Writes `bytes` to a new file at `path` that only the person can read (0600 on Unix),
/// replacing what is there.
///
/// # Errors
/// The file cannot be created or written.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    std::io::Write::write_all(&mut file, bytes)
}

/// The one spelling of a home folder (`DIR`, `DIR/` and a symlink to it are the same home,
/// with the same keychain namespace): created if missing, then resolved.
fn absolute(path: &Path) -> PathBuf {
    let _ = std::fs::create_dir_all(path);
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Writes `bytes` to `path` through a file beside it, renamed over it once whole: a reader (or
/// a crash) never sees half a file. The file is the person's alone (0600 on Unix), as is the
/// folder when it is made.
///
/// # Errors
/// The folder or file cannot be written.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    create_private_dirs(dir)?;
    let mut aside = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut aside, bytes)?;
    aside.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relocated_home_holds_every_folder_and_has_its_own_keychain_namespace() {
        let paths = AppPaths::under_home(PathBuf::from("/tmp/profile-a"));
        assert!(paths.config_dir.starts_with("/tmp/profile-a"));
        assert!(paths.data_dir.starts_with("/tmp/profile-a"));
        assert!(paths.log_dir.starts_with("/tmp/profile-a"));
        assert_eq!(paths.keychain_service(), "switchboard:/tmp/profile-a");
        assert_ne!(
            paths.keychain_service(),
            AppPaths::under_home(PathBuf::from("/tmp/profile-b")).keychain_service()
        );
    }

    #[test]
    fn the_default_home_uses_the_plain_keychain_service() {
        assert_eq!(AppPaths::os_default().keychain_service(), "switchboard");
    }
}
