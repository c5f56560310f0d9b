//! A skill's scripts, run when the model asks and the person lets it (issue 61). Nothing here
//! runs by itself: a script runs only as a call of Switchboard's own `run_skill_script`, which
//! asks before each run whatever standing grants say, and only for a skill whose scripts the
//! person allowed — an allowance bound to the skill's files as they were shown ([`digest`]):
//! a skill changed since is refused until they allow it again.
//!
//! This module owns how one script runs: its interpreter (by its extension), a sandbox that
//! is never optional (no network; it reads the system, the skill's own folder and its
//! interpreter's install, and writes only a working folder of its own — the rest of the home
//! folder, Switchboard's data and settings folders wherever they are on Linux (on macOS
//! Seatbelt shuts the home only), the keychain's bus and Unix sockets are out of its reach),
//! its environment (the servers' allowlist, no key; its
//! home and caches are its own folder), a time limit and cancellation that end its whole
//! process group (which on Linux it may not leave; on macOS Seatbelt cannot hold it there,
//! and on Windows its job holds what it starts), and what it printed, kept up to
//! [`MAX_OUTPUT_BYTES`] per stream. A system that cannot sandbox it does not run it. Run
//! folders are kept a week, and at most 2 GiB of them together (the oldest go first).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::SkillFile;
use crate::sandbox::{Network, SandboxPlan};

/// The most of each of a script's streams (stdout, stderr) that is kept; the rest is counted.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// The most of the files a script wrote that are listed.
const FILES_LISTED: usize = 100;
/// The folder inside a run's working folder that is its `TMPDIR` (not listed as its output).
const TMP: &str = ".tmp";
/// A file in a run's folder while the run goes on: the run-folder cap leaves that folder alone.
const RUNNING: &str = ".running";

/// Marks a run's folder as in use while it lives ([`RUNNING`]).
struct InUse(PathBuf);

impl Drop for InUse {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0.join(RUNNING));
    }
}

/// Whether the person lets the model ask to run a skill's scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ScriptsAllowed {
    /// It has no scripts (or it is a server's skill, whose files are read, never run).
    None,
    /// They are files the model can read; nothing runs them.
    Off,
    /// The model may ask to run them, one asking call at a time.
    On,
    /// The person allowed them, and they changed since: off until allowed again.
    Changed,
}

/// The digest of a skill's files (their paths and contents, in order): what allowing its
/// scripts approves. Every file, not only the scripts: a script runs what sits beside it (a
/// module it imports, a file it sources, a compiled cache).
///
/// # Errors
/// A file that cannot be read.
pub fn digest(dir: &Path, files: &[SkillFile]) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut sorted: Vec<&SkillFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    for file in sorted {
        let bytes = std::fs::read(dir.join(&file.path))?;
        hasher.update(file.path.as_bytes());
        hasher.update([0]);
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// How a script of this name is run: the programs that may run it (the first found on the
/// `PATH` is used) and the arguments before the script's path. `None`: run as a program
/// itself (a file with no known extension: on Unix, one marked executable).
fn interpreter(path: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    let found: (&[&str], &[&str]) = match ext.as_str() {
        "py" => (&["python3", "python"], &[]),
        "sh" => (&["sh"], &[]),
        "bash" => (&["bash"], &[]),
        "zsh" => (&["zsh"], &[]),
        "fish" => (&["fish"], &[]),
        "js" | "mjs" | "cjs" => (&["node"], &[]),
        "rb" => (&["ruby"], &[]),
        "pl" => (&["perl"], &[]),
        "php" => (&["php"], &[]),
        "lua" => (&["lua"], &[]),
        "r" => (&["Rscript"], &[]),
        "ps1" => (&["pwsh", "powershell"], &["-NoProfile", "-File"]),
        _ => return None,
    };
    Some(found)
}

/// Where one script runs.
#[derive(Debug, Clone)]
pub struct Place {
    /// The skill's folder (read only).
    pub skill_dir: PathBuf,
    /// Its working folder, made for this run: its only place to write, kept afterwards.
    pub work_dir: PathBuf,
    /// The person's home folder: closed to it but for its interpreter's own install.
    pub home: PathBuf,
    /// Other folders closed to it wherever they are (Switchboard's data, settings and logs:
    /// its database, every skill, other runs' folders), but for its skill and its own folder.
    pub closed: Vec<PathBuf>,
    /// The `PATH` its interpreter is found on.
    pub search_path: OsString,
    /// Its whole environment (the servers' allowlist and that `PATH`: no key), to which its
    /// own home and caches are added.
    pub env: Vec<(OsString, OsString)>,
}

/// What one script did.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Its exit code; `None` when it was ended (its time ran out, a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Bytes of stdout and stderr past what was kept.
    pub left_out: (u64, u64),
    pub took: Duration,
    pub timed_out: bool,
    /// The files it wrote in its working folder (path inside it, bytes), at most 100.
    pub files: Vec<(String, u64)>,
    pub work_dir: PathBuf,
}

/// Why a script did not run.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("{0}")]
    Refused(String),
    #[error("it could not be put in its sandbox: {0}")]
    Sandbox(String),
    #[error("it could not be started: {0}")]
    Start(String),
    #[error("it was cancelled")]
    Cancelled,
}

/// How long what a script printed is waited for once it was ended (a pipe held by something
/// that escaped is not waited for longer).
const DRAIN: Duration = Duration::from_secs(2);
/// Run folders older than this are removed as a new run starts.
const RUNS_KEPT_FOR: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The most the run folders may hold together: past it, the oldest go as a new run starts.
const RUNS_MAX_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// Runs the skill's `script` (its path inside the skill, one of its files) with `args` and,
/// when given, `stdin`, in its sandbox at `place`, for at most `limit`; `cancel` ends it.
///
/// # Errors
/// No interpreter for it; no sandbox on this system; it could not start; it was cancelled.
pub async fn run(
    place: &Place,
    script: &str,
    args: &[String],
    stdin: Option<&str>,
    limit: Duration,
    cancel: &CancellationToken,
) -> Result<Ran, ScriptError> {
    let (owned_place, owned_script, owned_args) = (place.clone(), script.to_owned(), args.to_vec());
    // Finding its interpreter, making its folder and building its sandbox read the disk.
    let command =
        tokio::task::spawn_blocking(move || prepare(&owned_place, &owned_script, &owned_args))
            .await
            .map_err(|e| ScriptError::Start(e.to_string()))??;
    let in_use = InUse(place.work_dir.clone());
    let mut wrapped = crate::sandbox::command::in_own_group(command);
    wrapped
        .command_mut()
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = wrapped
        .spawn()
        .map_err(|e| ScriptError::Start(e.to_string()))?;
    // Its whole group is ended however this ends, a dropped call included.
    let _group = crate::sandbox::command::GroupGuard(child.id());
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin().take()) {
        let text = text.to_owned();
        // Written beside the reading: a script that prints before it reads cannot block it.
        tokio::spawn(async move {
            let _ = pipe.write_all(text.as_bytes()).await;
        });
    }
    // Both streams at once (a script that fills one while the other is read cannot block),
    // kept by tasks of their own so that what it printed before it was ended is kept too.
    let stdout = child.stdout().take().map(|s| tokio::spawn(kept(s)));
    let stderr = child.stderr().take().map(|s| tokio::spawn(kept(s)));
    let ended = tokio::select! {
        status = child.wait() => Some(status),
        () = tokio::time::sleep(limit) => None,
        () = cancel.cancelled() => None,
    };
    // Whatever it started is ended with it (its whole process group, or job), whether it
    // exited, ran out of time or was cancelled.
    let _ = child.start_kill();
    if ended.is_none() {
        let _ = child.wait().await;
        if cancel.is_cancelled() {
            return Err(ScriptError::Cancelled);
        }
    }
    let took = started.elapsed();
    let drained = |reading: Option<tokio::task::JoinHandle<(Vec<u8>, u64)>>| async move {
        match reading {
            Some(reading) => tokio::time::timeout(DRAIN, reading)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default(),
            None => (Vec::new(), 0),
        }
    };
    let ((stdout, out_left), (stderr, err_left)) = tokio::join!(drained(stdout), drained(stderr));
    let timed_out = ended.is_none();
    let code = match ended {
        Some(status) => status
            .map_err(|e| ScriptError::Start(e.to_string()))?
            .code(),
        None => None,
    };
    drop(in_use);
    let work_dir = place.work_dir.clone();
    let files = tokio::task::spawn_blocking(move || written(&work_dir))
        .await
        .unwrap_or_default();
    Ok(Ran {
        code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        left_out: (out_left, err_left),
        took,
        timed_out,
        files,
        work_dir: place.work_dir.clone(),
    })
}

/// The command that runs `script` in its sandbox, its working folder made (and run folders
/// past [`RUNS_KEPT_FOR`] removed). Blocks on the disk.
fn prepare(
    place: &Place,
    script: &str,
    args: &[String],
) -> Result<tokio::process::Command, ScriptError> {
    if !cfg!(any(target_os = "linux", target_os = "macos", windows)) {
        return Err(ScriptError::Sandbox(
            "scripts run in a sandbox on Linux, macOS and Windows only".to_owned(),
        ));
    }
    if !place.home.is_absolute() {
        return Err(ScriptError::Sandbox(
            "the home folder is not known, so it cannot be shut".to_owned(),
        ));
    }
    let script_path = place.skill_dir.join(script);
    let (program, mut argv) = match interpreter(script) {
        Some((programs, before)) => {
            let program = programs
                .iter()
                .find_map(|p| which::which_in(p, Some(&place.search_path), &place.skill_dir).ok())
                .ok_or_else(|| {
                    ScriptError::Refused(format!(
                        "“{}” is needed to run it, and it is not installed (not on the PATH)",
                        programs.join("” or “")
                    ))
                })?;
            let mut argv: Vec<String> = before.iter().map(|s| (*s).to_owned()).collect();
            argv.push(script_path.to_string_lossy().into_owned());
            (program, argv)
        }
        None if runs_itself(&script_path) => (script_path.clone(), Vec::new()),
        None => {
            return Err(ScriptError::Refused(
                "Switchboard does not know how to run a file of this kind (known: .py, .sh, \
                 .bash, .js, .rb, .pl, .php, .lua, .r, .ps1, or a file marked executable; \
                 batch files are not run, as their arguments cannot be passed safely)"
                    .to_owned(),
            ))
        }
    };
    // The model's arguments come last and open nothing: the sandbox is made from the skill,
    // the interpreter and the folders alone.
    argv.extend(args.iter().cloned());
    if let Some(runs) = place.work_dir.parent() {
        remove_old_runs(runs);
    }
    let tmp = place.work_dir.join(TMP);
    std::fs::create_dir_all(&tmp)
        .and_then(|()| std::fs::write(place.work_dir.join(RUNNING), b""))
        .map_err(|e| {
            ScriptError::Start(format!(
                "its working folder {} cannot be made ({e})",
                place.work_dir.display()
            ))
        })?;
    let mut closed = vec![place.home.clone()];
    closed.extend(place.closed.iter().cloned());
    let mut read = crate::sandbox::open_beside(&closed);
    read.push(place.skill_dir.clone());
    read.extend(crate::sandbox::program_install(&program, &place.home));
    read.sort();
    read.dedup();
    let plan = SandboxPlan {
        read,
        write: vec![place.work_dir.clone()],
        network: Network::None,
        hosts: Vec::new(),
        loopback: false,
        unix_sockets: false,
        stays_in_group: true,
        private_dir: tmp.clone(),
        home: place.home.clone(),
    };
    let mut command = crate::sandbox::command::new_command(&program, &argv, Some(&plan), None)
        .map_err(|e| ScriptError::Sandbox(e.to_string()))?;
    command
        .env_clear()
        .envs(place.env.iter().cloned())
        // Its home and caches are its own folder: the person's are closed to it.
        .env("HOME", &tmp)
        .env("XDG_CACHE_HOME", tmp.join("cache"))
        .env("XDG_CONFIG_HOME", tmp.join("config"))
        .env("XDG_DATA_HOME", tmp.join("data"))
        .current_dir(&place.work_dir);
    crate::sandbox::command::confine(&mut command, &plan, None, false)
        .map_err(|e| ScriptError::Sandbox(e.to_string()))?;
    Ok(command)
}

/// Removes the run folders in `runs` older than [`RUNS_KEPT_FOR`], then the oldest of the
/// rest while together they hold more than [`RUNS_MAX_BYTES`].
fn remove_old_runs(runs: &Path) {
    remove_runs_past(runs, RUNS_KEPT_FOR, RUNS_MAX_BYTES);
}

fn remove_runs_past(runs: &Path, kept_for: Duration, max_bytes: u64) {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return;
    };
    let mut kept: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let changed = entry.metadata().and_then(|m| m.modified()).ok();
        let old = changed
            .and_then(|at| at.elapsed().ok())
            .is_some_and(|age| age > kept_for);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        } else {
            kept.push((changed.unwrap_or(std::time::UNIX_EPOCH), entry.path()));
        }
    }
    // Newest first: the oldest are removed until the rest fit; a run still going on is counted
    // but left alone.
    kept.sort_by_key(|(changed, _)| std::cmp::Reverse(*changed));
    let mut total = 0u64;
    for (_, dir) in kept {
        total = total.saturating_add(bytes_under(&dir));
        if total > max_bytes && !dir.join(RUNNING).exists() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// What the files under `dir` hold, links not followed.
fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() => {
                    total = total.saturating_add(entry.metadata().map_or(0, |m| m.len()));
                }
                _ => {}
            }
        }
    }
    total
}

/// Whether a file with no known extension runs as a program itself.
fn runs_itself(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("exe") || e.eq_ignore_ascii_case("com"))
    }
}

/// Reads a stream to its end, keeping its first [`MAX_OUTPUT_BYTES`] and counting the rest.
async fn kept(mut stream: impl tokio::io::AsyncRead + Unpin + Send + 'static) -> (Vec<u8>, u64) {
    let mut kept = Vec::new();
    let mut left_out = 0u64;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&buffer[..room]);
                left_out += (n - room) as u64;
            }
        }
    }
    (kept, left_out)
}

/// The files under `dir` (but its `TMPDIR`), by path inside it, at most [`FILES_LISTED`].
fn written(dir: &Path) -> Vec<(String, u64)> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let inside = path
                .strip_prefix(dir)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            if kind.is_dir() && inside != TMP {
                folders.push(path);
            } else if kind.is_file() && files.len() < FILES_LISTED {
                files.push((inside, entry.metadata().map(|m| m.len()).unwrap_or(0)));
            }
        }
    }
    files.sort();
    files
}

/// What the model is told of a run: how it ended, what it printed, the files it wrote.
#[must_use]
pub fn said(skill: &str, script: &str, ran: &Ran) -> String {
    let ended = match (ran.timed_out, ran.code) {
        (true, _) => format!(
            "was ended after {:.0} s, its time limit (what it printed until then follows)",
            ran.took.as_secs_f64()
        ),
        (false, Some(code)) => format!(
            "exited with code {code} after {:.1} s",
            ran.took.as_secs_f64()
        ),
        (false, None) => format!(
            "was ended by a signal after {:.1} s",
            ran.took.as_secs_f64()
        ),
    };
    let mut text = format!(
        "The script “{script}” of the skill “{skill}” ran in its sandbox (no network; it could \
         read the skill's folder and write only its working folder) and {ended}.\n"
    );
    for (name, out, left) in [
        ("Its output (stdout)", &ran.stdout, ran.left_out.0),
        ("Its errors (stderr)", &ran.stderr, ran.left_out.1),
    ] {
        if out.is_empty() && left == 0 {
            continue;
        }
        text.push_str(&format!("\n{name}:\n{out}"));
        if !out.ends_with('\n') {
            text.push('\n');
        }
        if left > 0 {
            text.push_str(&format!("[{left} more bytes were left out]\n"));
        }
    }
    if ran.files.is_empty() {
        text.push_str("\nIt wrote no file.\n");
    } else {
        text.push_str(&format!(
            "\nFiles it wrote (kept in {}):\n",
            ran.work_dir.display()
        ));
        for (path, bytes) in &ran.files {
            text.push_str(&format!("- {path} ({bytes} bytes)\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_folders_past_a_week_or_past_the_cap_go_oldest_first() {
        let runs = tempfile::tempdir().unwrap();
        let now = std::time::SystemTime::now();
        let made = |name: &str, bytes: usize, ago: u64| {
            let dir = runs.path().join(name);
            std::fs::create_dir_all(dir.join("deep")).unwrap();
            std::fs::write(dir.join("deep").join("out.bin"), vec![0u8; bytes]).unwrap();
            std::fs::File::open(&dir)
                .unwrap()
                .set_modified(now - Duration::from_secs(ago))
                .unwrap();
        };
        made("newest", 10, 0);
        made("middle", 10, 60);
        made("oldest", 10, 120);
        made("ancient", 1, 8 * 24 * 60 * 60);
        made("going-on", 10, 180);
        std::fs::write(runs.path().join("going-on").join(RUNNING), b"").unwrap();
        std::fs::File::open(runs.path().join("going-on"))
            .unwrap()
            .set_modified(now - Duration::from_secs(180))
            .unwrap();
        remove_runs_past(runs.path(), RUNS_KEPT_FOR, 25);
        let mut left: Vec<String> = std::fs::read_dir(runs.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["going-on", "middle", "newest"]);
    }

    #[test]
    fn interpreters_by_extension_and_none_for_the_unknown() {
        assert_eq!(
            interpreter("scripts/a.py").unwrap().0,
            &["python3", "python"]
        );
        assert_eq!(interpreter("run.SH").unwrap().0, &["sh"]);
        assert_eq!(interpreter("x.ps1").unwrap().1, &["-NoProfile", "-File"]);
        assert!(interpreter("scripts/tool").is_none());
        assert!(interpreter("data.csv").is_none());
    }

    #[test]
    fn the_digest_changes_with_any_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/a.py"), "print(1)").unwrap();
        std::fs::write(dir.path().join("notes.md"), "one").unwrap();
        let files = |n: u64| {
            vec![
                SkillFile::new("notes.md".into(), n),
                SkillFile::new("scripts/a.py".into(), 8),
            ]
        };
        let before = digest(dir.path(), &files(3)).unwrap();
        assert_eq!(digest(dir.path(), &files(3)).unwrap(), before);
        std::fs::write(dir.path().join("notes.md"), "other").unwrap();
        let other = digest(dir.path(), &files(5)).unwrap();
        assert_ne!(other, before, "a file beside the scripts counts too");
        std::fs::write(dir.path().join("scripts/a.py"), "print(2)").unwrap();
        assert_ne!(digest(dir.path(), &files(5)).unwrap(), other);
    }

    #[test]
    fn what_the_model_is_told() {
        let ran = Ran {
            code: Some(0),
            stdout: "42".into(),
            stderr: String::new(),
            left_out: (0, 0),
            took: Duration::from_millis(300),
            timed_out: false,
            files: vec![("out/report.txt".into(), 12)],
            work_dir: PathBuf::from("/w"),
        };
        let text = said("stats", "scripts/sum.py", &ran);
        assert!(text.contains("exited with code 0 after 0.3 s"), "{text}");
        assert!(text.contains("Its output (stdout):\n42\n"), "{text}");
        assert!(!text.contains("stderr"), "{text}");
        assert!(text.contains("- out/report.txt (12 bytes)"), "{text}");
    }
}
