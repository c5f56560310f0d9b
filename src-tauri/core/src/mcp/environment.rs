//! What a server process sees: the `PATH` of the person's login shell (an app started from a
//! desktop launcher or the macOS Dock does not inherit it, so `npx` and `uvx` are "not found"
//! there), the command resolved on that `PATH`, and a small allowlist of the app's own
//! environment plus what the server's config declares. Provider keys and everything else in
//! the app's environment never reach a server.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Variables a server inherits from the app; everything else it gets only by declaring it.
pub const INHERITED: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "TERM",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    // Windows: programs fail in odd ways without these.
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "CommonProgramFiles",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
];

/// How long the login shell may take to print its `PATH` (slow rc files exist).
pub const LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(5);

const START: &str = "__SWITCHBOARD_PATH_START__";
const END: &str = "__SWITCHBOARD_PATH_END__";

/// The `PATH` a login shell (`$SHELL -ilc`) sets, or `None` when there is no shell, it fails,
/// or it takes longer than `timeout`. Whatever the shell's rc files print around it is ignored.
pub async fn login_shell_path(shell: &Path, timeout: Duration) -> Option<OsString> {
    let script = format!("printf '%s%s%s' '{START}' \"$PATH\" '{END}'");
    let mut command = tokio::process::Command::new(shell);
    command
        .args(["-i", "-l", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(timeout, command.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => {
            tracing::warn!(shell = %shell.display(), error = %e, "cannot run the login shell to read PATH");
            return None;
        }
        Err(_) => {
            tracing::warn!(shell = %shell.display(), ?timeout, "the login shell took too long to print PATH");
            return None;
        }
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let start = text.find(START)? + START.len();
    let len = text[start..].find(END)?;
    let path = text[start..start + len].trim();
    (!path.is_empty()).then(|| OsString::from(path))
}

/// The login shell's `PATH` first, then the app's own, without repeats.
pub fn search_path(login: Option<&OsStr>, own: Option<&OsStr>) -> OsString {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for list in [login, own].into_iter().flatten() {
        for dir in std::env::split_paths(list) {
            if !dir.as_os_str().is_empty() && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

/// Finds `command` the way the server will be started: a path with a separator is taken
/// relative to `cwd`; a bare name is looked up on `path` (with `PATHEXT` on Windows, so `npx`
/// finds `npx.cmd`).
///
/// # Errors
/// A sentence saying what was not found where.
pub fn resolve_command(command: &str, path: &OsStr, cwd: &Path) -> Result<PathBuf, String> {
    which::which_in(command, Some(path), cwd).map_err(|_| {
        if command.contains(std::path::MAIN_SEPARATOR) || command.contains('/') {
            format!("“{command}” does not exist or is not executable")
        } else {
            format!(
                "“{command}” was not found on the PATH of your login shell or of Switchboard \
                 (searched: {})",
                path.to_string_lossy()
            )
        }
    })
}

/// The whole environment of a server: the allowlist taken from `own` (the app's environment),
/// `PATH` set to `path`, then every variable the server's config declares (which wins).
pub fn server_env<'a>(
    own: impl IntoIterator<Item = (OsString, OsString)>,
    path: &OsStr,
    declared: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = own
        .into_iter()
        .filter(|(k, _)| {
            INHERITED
                .iter()
                .any(|allowed| OsStr::new(allowed).eq_ignore_ascii_case(k))
        })
        .collect();
    env.push(("PATH".into(), path.to_owned()));
    for (key, value) in declared {
        env.retain(|(k, _)| !k.eq_ignore_ascii_case(key));
        env.push((key.into(), value.into()));
    }
    env.sort();
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_login_shells_path_is_read_past_whatever_its_rc_files_print() {
        let dir = tempfile::tempdir().unwrap();
        let shell = dir.path().join("fake-shell");
        // A "shell" that greets, then runs the script with a PATH of its own.
        std::fs::write(
            &shell,
            "#!/bin/sh\necho 'Welcome to your shell!'\nPATH=/opt/homebrew/bin:/usr/bin\nexport PATH\nshift 3\n/bin/sh -c \"$1\"\necho bye\n",
        )
        .unwrap();
        make_executable(&shell);
        let path = login_shell_path(&shell, LOGIN_SHELL_TIMEOUT).await;
        assert_eq!(
            path.as_deref(),
            Some(OsStr::new("/opt/homebrew/bin:/usr/bin"))
        );
    }

    #[tokio::test]
    async fn a_login_shell_that_hangs_or_is_missing_gives_up_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let shell = dir.path().join("slow-shell");
        std::fs::write(&shell, "#!/bin/sh\nexec sleep 30\n").unwrap();
        make_executable(&shell);
        let started = std::time::Instant::now();
        assert_eq!(
            login_shell_path(&shell, Duration::from_millis(300)).await,
            None
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            login_shell_path(&dir.path().join("nope"), LOGIN_SHELL_TIMEOUT).await,
            None
        );
    }

    #[test]
    fn the_search_path_puts_the_login_shell_first_without_repeats() {
        let joined = search_path(
            Some(OsStr::new("/opt/homebrew/bin:/usr/bin")),
            Some(OsStr::new("/usr/bin:/bin")),
        );
        assert_eq!(joined, OsString::from("/opt/homebrew/bin:/usr/bin:/bin"));
    }

    #[test]
    fn a_command_is_resolved_on_the_given_path_or_the_error_says_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("my-mcp-server");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        make_executable(&tool);
        let path = search_path(Some(dir.path().as_os_str()), None);
        assert_eq!(
            resolve_command("my-mcp-server", &path, dir.path()).unwrap(),
            tool
        );
        let err = resolve_command("no-such-server", &path, dir.path()).unwrap_err();
        assert!(
            err.contains("not found") && err.contains(&*dir.path().to_string_lossy()),
            "{err}"
        );
    }

    #[test]
    fn a_server_gets_the_allowlist_and_its_own_variables_and_never_a_provider_key() {
        let own = [
            ("HOME", "/home/me"),
            ("LANG", "en_GB.UTF-8"),
            ("OPENAI_API_KEY", "sk-must-not-leak"),
            ("AWS_SECRET_ACCESS_KEY", "nope"),
            ("PATH", "/usr/bin"),
            ("LOG_LEVEL", "debug"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = server_env(
            own,
            OsStr::new("/opt/bin:/usr/bin"),
            [("LOG_LEVEL", "info"), ("GITHUB_TOKEN", "ghp_declared")],
        );
        let as_text: Vec<String> = env
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        assert_eq!(
            as_text,
            [
                "GITHUB_TOKEN=ghp_declared",
                "HOME=/home/me",
                "LANG=en_GB.UTF-8",
                "LOG_LEVEL=info",
                "PATH=/opt/bin:/usr/bin",
            ]
        );
    }

    /// Windows: a bare `npx` is the `npx.cmd` Node.js installs (by PATHEXT), which the
    /// standard library then runs through `cmd.exe` with its arguments quoted for it.
    #[cfg(windows)]
    #[test]
    fn a_bare_name_finds_its_cmd_file_on_windows() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("npx.cmd"), "@echo off\r\n").unwrap();
        let found = resolve_command("npx", dir.path().as_os_str(), dir.path()).unwrap();
        assert!(found
            .to_string_lossy()
            .to_ascii_lowercase()
            .ends_with("npx.cmd"));
    }

    fn make_executable(path: &Path) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        #[cfg(not(unix))]
        let _ = path;
    }
}
