//! The system's scheduler calling `switchboard schedule run-due` every minute, so schedules run
//! while the window is closed (`schedule install-timer`): a systemd user timer on Linux, a
//! launchd agent on macOS, a Task Scheduler task on Windows. Owns those files (and the task);
//! each names the home it runs for, so two homes each get their own.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

/// What was installed (or removed), for the person.
#[derive(Debug, Clone, Serialize)]
pub struct TimerReport {
    /// The files written or removed.
    pub files: Vec<PathBuf>,
    /// What was run to switch it on or off, and what it said; `None`: nothing was run.
    pub switched: Option<String>,
    /// What the person still has to do, if anything.
    pub then: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TimerError {
    #[error("Cannot write {path}: {detail}")]
    Write { path: PathBuf, detail: String },
    #[error("{0}")]
    Unsupported(String),
}

/// The unit's (or agent's, or task's) name: one per home.
fn unit_name(home: Option<&Path>) -> String {
    match home {
        None => "switchboard-schedules".into(),
        Some(home) => {
            use sha2::Digest;
            let digest = sha2::Sha256::digest(home.to_string_lossy().as_bytes());
            let short = hex::encode(&digest[..4]);
            format!("switchboard-schedules-{short}")
        }
    }
}

/// A value on a systemd line, quoted: `%` and `$` doubled, `\` and `"` escaped.
fn systemd_quoted(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%")
        .replace('$', "$$");
    format!("\"{escaped}\"")
}

/// The systemd user service and timer for `exe` on `home`, as (file name, text).
pub fn systemd_units(exe: &Path, home: Option<&Path>) -> [(String, String); 2] {
    let name = unit_name(home);
    let environment = home
        .map(|h| {
            format!(
                "Environment={}\n",
                systemd_quoted(&format!("{}={}", crate::paths::HOME_ENV, h.display()))
            )
        })
        .unwrap_or_default();
    let service = format!(
        "[Unit]\nDescription=Switchboard: scheduled runs that are due\n\n[Service]\nType=oneshot\n\
         {environment}ExecStart={} schedule run-due\n",
        systemd_quoted(&exe.to_string_lossy())
    );
    let timer = "[Unit]\nDescription=Switchboard: look for scheduled runs every minute\n\n\
         [Timer]\nOnCalendar=*-*-* *:*:00\nAccuracySec=5s\nPersistent=true\n\n\
         [Install]\nWantedBy=timers.target\n"
        .to_owned();
    [
        (format!("{name}.service"), service),
        (format!("{name}.timer"), timer),
    ]
}

/// The launchd agent for `exe` on `home`, as (file name, text).
pub fn launchd_agent(exe: &Path, home: Option<&Path>) -> (String, String) {
    let xml = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let label = format!("app.switchboard.{}", unit_name(home));
    let environment = home
        .map(|h| {
            format!(
                "  <key>EnvironmentVariables</key>\n  <dict><key>{}</key><string>{}</string></dict>\n",
                crate::paths::HOME_ENV,
                xml(&h.to_string_lossy())
            )
        })
        .unwrap_or_default();
    let text = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <plist version=\"1.0\">\n<dict>\n  <key>Label</key><string>{label}</string>\n\
         \x20 <key>ProgramArguments</key>\n  <array><string>{}</string><string>schedule</string><string>run-due</string></array>\n\
         {environment}  <key>StartInterval</key><integer>60</integer>\n  <key>RunAtLoad</key><true/>\n</dict>\n</plist>\n",
        xml(&exe.to_string_lossy())
    );
    (format!("{label}.plist"), text)
}

fn write(path: &Path, text: &str) -> Result<(), TimerError> {
    let failed = |e: std::io::Error| TimerError::Write {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    std::fs::write(path, text).map_err(failed)
}

/// Runs `program args`, saying what it said.
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let shown = format!("{program} {}", args.join(" "));
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Ok(shown),
        Ok(out) => Err(format!(
            "`{shown}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("`{shown}` could not run: {e}")),
    }
}

/// Where systemd reads the person's units.
fn systemd_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("systemd").join("user"))
}

/// Installs (or, with `remove`, removes) the timer that runs `exe schedule run-due` every
/// minute on `home`; with `switch`, also switches it on (or off) with the system's tool.
///
/// # Errors
/// A file cannot be written; the system is not one of the three.
pub fn install(
    exe: &Path,
    home: Option<&Path>,
    remove: bool,
    switch: bool,
) -> Result<TimerReport, TimerError> {
    if cfg!(target_os = "macos") {
        let dir = dirs::home_dir()
            .map(|h| h.join("Library").join("LaunchAgents"))
            .ok_or_else(|| TimerError::Unsupported("No home folder.".into()))?;
        let (file, text) = launchd_agent(exe, home);
        let path = dir.join(&file);
        let path_text = path.to_string_lossy().into_owned();
        let (args, then): (Vec<&str>, _) = if remove {
            (vec!["unload", "-w", &path_text], None)
        } else {
            write(&path, &text)?;
            (vec!["load", "-w", &path_text], None)
        };
        let switched = switch.then(|| run("launchctl", &args).unwrap_or_else(|e| e));
        if remove {
            // Unloaded first: launchctl reads the file it unloads.
            let _ = std::fs::remove_file(&path);
        }
        return Ok(TimerReport {
            files: vec![path],
            switched,
            then,
        });
    }
    if cfg!(windows) {
        if home.is_some() {
            return Err(TimerError::Unsupported(
                "On Windows the task runs for the default home only; unset SWITCHBOARD_HOME."
                    .into(),
            ));
        }
        let task = format!("Switchboard\\{}", unit_name(home));
        let action = format!("\"{}\" schedule run-due", exe.display());
        let args: Vec<&str> = if remove {
            vec!["/Delete", "/F", "/TN", &task]
        } else {
            vec![
                "/Create", "/F", "/SC", "MINUTE", "/MO", "1", "/TN", &task, "/TR", &action,
            ]
        };
        let switched = run("schtasks", &args).map_err(TimerError::Unsupported)?;
        return Ok(TimerReport {
            files: Vec::new(),
            switched: Some(switched),
            then: None,
        });
    }
    let dir = systemd_dir().ok_or_else(|| TimerError::Unsupported("No config folder.".into()))?;
    install_systemd(&dir, exe, home, remove, switch)
}

/// [`install`] on Linux, its units in `dir`.
fn install_systemd(
    dir: &Path,
    exe: &Path,
    home: Option<&Path>,
    remove: bool,
    switch: bool,
) -> Result<TimerReport, TimerError> {
    let units = systemd_units(exe, home);
    let timer = units[1].0.clone();
    let files: Vec<PathBuf> = units.iter().map(|(f, _)| dir.join(f)).collect();
    let switched = if remove {
        let off = switch.then(|| run("systemctl", &["--user", "disable", "--now", &timer]));
        for file in &files {
            let _ = std::fs::remove_file(file);
        }
        off
    } else {
        for ((_, text), path) in units.iter().zip(&files) {
            write(path, text)?;
        }
        switch.then(|| {
            run("systemctl", &["--user", "daemon-reload"])
                .and_then(|_| run("systemctl", &["--user", "enable", "--now", &timer]))
        })
    };
    let (switched, then) = match switched {
        None if remove => (None, None),
        None => (
            None,
            Some(format!("systemctl --user daemon-reload && systemctl --user enable --now {timer}")),
        ),
        Some(Ok(done)) => (Some(done), None),
        Some(Err(why)) => (
            Some(why),
            Some(format!(
                "run `systemctl --user daemon-reload && systemctl --user {} --now {timer}` in your session",
                if remove { "disable" } else { "enable" }
            )),
        ),
    };
    Ok(TimerReport {
        files,
        switched,
        then,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_units_name_the_program_and_the_home_quoted() {
        let exe = Path::new("/opt/Switch board/switchboard");
        let home = Path::new("/home/ana/50% \"work\" $HOME");
        let [(service_name, service), (timer_name, timer)] = systemd_units(exe, Some(home));
        assert!(
            service_name.starts_with("switchboard-schedules-")
                && service_name.ends_with(".service")
        );
        assert_eq!(
            timer_name.trim_end_matches(".timer"),
            service_name.trim_end_matches(".service")
        );
        assert!(
            service.contains("ExecStart=\"/opt/Switch board/switchboard\" schedule run-due"),
            "{service}"
        );
        assert!(
            service.contains("Environment=\"SWITCHBOARD_HOME=/home/ana/50%% \\\"work\\\" $$HOME\""),
            "{service}"
        );
        assert!(timer.contains("OnCalendar=*-*-* *:*:00") && timer.contains("Persistent=true"));
        let [(default, _), _] = systemd_units(exe, None);
        assert_eq!(default, "switchboard-schedules.service");
    }

    #[test]
    fn the_units_are_written_and_taken_away_again() {
        let dir = tempfile::tempdir().unwrap();
        let exe = Path::new("/usr/bin/switchboard");
        let home = Path::new("/home/ana/sb");
        let made = install_systemd(dir.path(), exe, Some(home), false, false).unwrap();
        assert_eq!(made.files.len(), 2);
        assert!(made.switched.is_none());
        let then = made.then.unwrap();
        assert!(
            then.contains("systemctl --user enable --now switchboard-schedules-"),
            "{then}"
        );
        let service = std::fs::read_to_string(&made.files[0]).unwrap();
        assert!(service.contains("Environment=\"SWITCHBOARD_HOME=/home/ana/sb\""));
        let gone = install_systemd(dir.path(), exe, Some(home), true, false).unwrap();
        assert!(gone.files.iter().all(|f| !f.exists()));
    }

    #[test]
    fn the_agent_escapes_what_it_names() {
        let (name, text) = launchd_agent(Path::new("/Apps/S&B.app/x"), Some(Path::new("/h/<x>")));
        assert!(name.starts_with("app.switchboard.switchboard-schedules-"));
        assert!(text.contains("<string>/Apps/S&amp;B.app/x</string>"));
        assert!(text.contains("<string>/h/&lt;x&gt;</string>"));
        assert!(text.contains("<integer>60</integer>"));
    }
}
