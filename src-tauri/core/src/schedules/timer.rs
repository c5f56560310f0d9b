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
    let xml = xml_text;
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

/// Text for an XML element or attribute.
fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The Task Scheduler task for `exe`, as the XML `schtasks /Create /XML` reads, not its
/// defaults: every minute for ever; on batteries too (the defaults neither start on batteries
/// nor keep running when unplugged); started as soon as it can after a time it missed (asleep,
/// off); one at a time (a minute's start while a run goes on is dropped: `run-due` looks again
/// itself); ended after 12 hours at most; as the person, with no more rights than theirs.
pub fn windows_task_xml(exe: &Path) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n\
         <Task version=\"1.2\" xmlns=\"http://schemas.microsoft.com/windows/2004/02/mit/task\">\n\
         \x20 <RegistrationInfo>\n\
         \x20   <Description>Switchboard: look for scheduled runs that are due, every minute</Description>\n\
         \x20 </RegistrationInfo>\n\
         \x20 <Triggers>\n\
         \x20   <TimeTrigger>\n\
         \x20     <Enabled>true</Enabled>\n\
         \x20     <StartBoundary>2000-01-01T00:00:00</StartBoundary>\n\
         \x20     <Repetition>\n\
         \x20       <Interval>PT1M</Interval>\n\
         \x20       <StopAtDurationEnd>false</StopAtDurationEnd>\n\
         \x20     </Repetition>\n\
         \x20   </TimeTrigger>\n\
         \x20 </Triggers>\n\
         \x20 <Principals>\n\
         \x20   <Principal id=\"Author\">\n\
         \x20     <LogonType>InteractiveToken</LogonType>\n\
         \x20     <RunLevel>LeastPrivilege</RunLevel>\n\
         \x20   </Principal>\n\
         \x20 </Principals>\n\
         \x20 <Settings>\n\
         \x20   <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>\n\
         \x20   <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>\n\
         \x20   <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>\n\
         \x20   <StartWhenAvailable>true</StartWhenAvailable>\n\
         \x20   <RunOnlyIfNetworkAvailable>false</RunOnlyIfNetworkAvailable>\n\
         \x20   <IdleSettings>\n\
         \x20     <StopOnIdleEnd>false</StopOnIdleEnd>\n\
         \x20     <RestartOnIdle>false</RestartOnIdle>\n\
         \x20   </IdleSettings>\n\
         \x20   <AllowStartOnDemand>true</AllowStartOnDemand>\n\
         \x20   <Enabled>true</Enabled>\n\
         \x20   <Hidden>false</Hidden>\n\
         \x20   <RunOnlyIfIdle>false</RunOnlyIfIdle>\n\
         \x20   <WakeToRun>false</WakeToRun>\n\
         \x20   <ExecutionTimeLimit>PT12H</ExecutionTimeLimit>\n\
         \x20   <Priority>7</Priority>\n\
         \x20 </Settings>\n\
         \x20 <Actions Context=\"Author\">\n\
         \x20   <Exec>\n\
         \x20     <Command>{}</Command>\n\
         \x20     <Arguments>schedule run-due</Arguments>\n\
         \x20   </Exec>\n\
         \x20 </Actions>\n\
         </Task>\n",
        xml_text(&exe.to_string_lossy())
    )
}

/// `text` as UTF-16 little-endian with its byte-order mark: how `schtasks` reads a task's XML.
fn utf16_file(text: &str) -> Vec<u8> {
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    bytes
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
        let kept = dirs::config_dir()
            .map(|d| d.join("Switchboard"))
            .ok_or_else(|| TimerError::Unsupported("No config folder.".into()))?;
        return install_windows(&kept, &std::env::temp_dir(), exe, remove, switch);
    }
    let dir = systemd_dir().ok_or_else(|| TimerError::Unsupported("No config folder.".into()))?;
    install_systemd(&dir, exe, home, remove, switch)
}

/// [`install`] on Windows. Switched on with `schtasks`, from a new file of its own in
/// `scratch` (never one already there), removed after: the task keeps what it read. Not
/// switched, the task's file is kept in `kept_dir` and the person is told the command. Removing
/// takes away that kept file too, if there is one.
fn install_windows(
    kept_dir: &Path,
    scratch: &Path,
    exe: &Path,
    remove: bool,
    switch: bool,
) -> Result<TimerReport, TimerError> {
    let name = unit_name(None);
    let task = format!("Switchboard\\{name}");
    if remove {
        let kept = kept_dir.join(format!("{name}.xml"));
        let existed = kept.exists();
        let _ = std::fs::remove_file(&kept);
        let command = format!("schtasks /Delete /F /TN \"{task}\"");
        return Ok(TimerReport {
            files: if existed { vec![kept] } else { Vec::new() },
            switched: switch
                .then(|| run("schtasks", &["/Delete", "/F", "/TN", &task]))
                .transpose()
                .map_err(TimerError::Unsupported)?,
            then: (!switch).then(|| format!("Run `{command}` to switch it off.")),
        });
    }
    let (dir, file) = if switch {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let file = scratch.join(format!("{name}-{}-{nanos}.xml", std::process::id()));
        (scratch, file)
    } else {
        (kept_dir, kept_dir.join(format!("{name}.xml")))
    };
    let failed = |e: std::io::Error| TimerError::Write {
        path: file.clone(),
        detail: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    let bytes = utf16_file(&windows_task_xml(exe));
    if switch {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &bytes))
            .map_err(failed)?;
        let made = run(
            "schtasks",
            &[
                "/Create",
                "/F",
                "/TN",
                &task,
                "/XML",
                &file.to_string_lossy(),
            ],
        );
        let _ = std::fs::remove_file(&file);
        return Ok(TimerReport {
            files: Vec::new(),
            switched: Some(made.map_err(TimerError::Unsupported)?),
            then: None,
        });
    }
    std::fs::write(&file, &bytes).map_err(failed)?;
    let command = format!(
        "schtasks /Create /F /TN \"{task}\" /XML \"{}\"",
        file.display()
    );
    Ok(TimerReport {
        files: vec![file],
        switched: None,
        then: Some(format!("Run `{command}` to switch it on.")),
    })
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

    #[test]
    fn the_windows_task_is_well_formed_escapes_its_program_and_is_not_the_defaults() {
        let text = windows_task_xml(Path::new(r"C:\Program Files\S&B <x>\switchboard.exe"));
        assert!(
            text.contains(r"<Command>C:\Program Files\S&amp;B &lt;x&gt;\switchboard.exe</Command>")
        );
        for setting in [
            "<Interval>PT1M</Interval>",
            "<DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>",
            "<StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>",
            "<StartWhenAvailable>true</StartWhenAvailable>",
            "<MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>",
            "<ExecutionTimeLimit>PT12H</ExecutionTimeLimit>",
            "<RunLevel>LeastPrivilege</RunLevel>",
            "<Arguments>schedule run-due</Arguments>",
        ] {
            assert!(text.contains(setting), "{setting} missing from {text}");
        }
        // Every element closed, in order.
        let tags = regex::Regex::new(r"<(/?)([A-Za-z]+)[^>]*?(/?)>").unwrap();
        let mut open: Vec<String> = Vec::new();
        for tag in tags.captures_iter(&text) {
            let name = tag[2].to_owned();
            if &tag[1] == "/" {
                assert_eq!(open.pop().as_deref(), Some(name.as_str()), "{text}");
            } else if &tag[3] != "/" {
                open.push(name);
            }
        }
        assert!(open.is_empty(), "left open: {open:?}");
        // The file schtasks reads: UTF-16 with its mark, the text whole.
        let bytes = utf16_file(&text);
        assert_eq!(&bytes[..2], &[0xFF, 0xFE]);
        let units: Vec<u16> = bytes[2..]
            .chunks(2)
            .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
            .collect();
        assert_eq!(String::from_utf16(&units).unwrap(), text);
    }

    #[test]
    fn the_windows_task_not_switched_is_kept_as_a_file_and_the_command_said() {
        let dir = tempfile::tempdir().unwrap();
        let exe = Path::new(r"C:\Apps\switchboard.exe");
        let scratch = tempfile::tempdir().unwrap();
        let made = install_windows(dir.path(), scratch.path(), exe, false, false).unwrap();
        assert!(made.switched.is_none());
        let [file] = made.files.as_slice() else {
            panic!("{made:?}")
        };
        let bytes = std::fs::read(file).unwrap();
        assert_eq!(bytes, utf16_file(&windows_task_xml(exe)));
        let then = made.then.unwrap();
        assert!(
            then.contains("schtasks /Create /F /TN \"Switchboard\\switchboard-schedules\" /XML"),
            "{then}"
        );
        let gone = install_windows(dir.path(), scratch.path(), exe, true, false).unwrap();
        assert_eq!(gone.files, made.files);
        assert!(!file.exists());
        assert!(gone.then.unwrap().contains("schtasks /Delete /F /TN"));
    }
}
