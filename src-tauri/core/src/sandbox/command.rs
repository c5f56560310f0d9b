//! How a child is put in its sandbox, on every system: the command that starts it (under
//! `sandbox-exec` on macOS, under Switchboard's AppContainer launcher on Windows) and what is
//! done to that command before it is spawned (its own `TMPDIR`, the proxy's variables, and on
//! Linux Landlock, seccomp and a network namespace). A sandboxed server and a skill's script
//! are started through here alike, and a guard ends a child's whole process group however
//! its owner ends ([`GroupGuard`]).

use std::path::Path;

use super::{Handoff, SandboxPlan};

/// Kills the group led by its pid when dropped, unless disarmed (set to `None`).
pub struct GroupGuard(pub Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.0.take().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// `command` wrapped to start in a process group of its own (Unix) or a job object with no
/// console window (Windows), killed if dropped: ending the group (or job) ends everything it
/// started.
pub fn in_own_group(command: tokio::process::Command) -> process_wrap::tokio::CommandWrap {
    let mut wrapped = process_wrap::tokio::CommandWrap::from(command);
    #[cfg(unix)]
    wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    {
        // A console program started from a windowed app gets a console window of its own:
        // one flashing up for each server is what people complain of in other clients.
        // (A `.cmd`/`.bat` server, found by PATHEXT as `npx.cmd` is, runs through `cmd.exe`
        // with its arguments quoted by the standard library's batch-file rules.)
        wrapped.wrap(process_wrap::tokio::CreationFlags(
            windows::Win32::System::Threading::CREATE_NO_WINDOW,
        ));
        wrapped.wrap(process_wrap::tokio::JobObject);
    }
    wrapped.wrap(process_wrap::tokio::KillOnDrop);
    wrapped
}

/// Puts the child `command` starts in the sandbox `plan` describes: its own folder (its
/// `TMPDIR`), the variables that send it through its proxy (with a list of hosts: at
/// `proxy`, a port of this computer, or `inside` a network of its own), and the system's
/// enforcement ([`enforce`]). With `inside`, the hand-over of its proxy's socket.
pub fn confine(
    command: &mut tokio::process::Command,
    plan: &SandboxPlan,
    proxy: Option<u16>,
    inside: bool,
) -> std::io::Result<Option<Handoff>> {
    std::fs::create_dir_all(&plan.private_dir)?;
    command
        .env("TMPDIR", &plan.private_dir)
        .env("TMP", &plan.private_dir)
        .env("TEMP", &plan.private_dir);
    let port = if inside {
        Some(super::INSIDE_PORT)
    } else {
        proxy
    };
    if let Some(port) = port {
        command.envs(super::proxy::environment(port));
    }
    enforce(command, plan, proxy, inside)
}

/// Linux: Landlock, seccomp and a network namespace put on the child before it runs its
/// program.
#[cfg(target_os = "linux")]
fn enforce(
    command: &mut tokio::process::Command,
    plan: &SandboxPlan,
    proxy: Option<u16>,
    inside: bool,
) -> std::io::Result<Option<Handoff>> {
    use super::linux::Route;
    let route = match (inside, proxy) {
        (true, _) => Route::Inside,
        (false, Some(port)) => Route::Port(port),
        (false, None) => Route::None,
    };
    super::linux::confine(command, plan, route)
}

/// macOS and Windows: the program already runs under `sandbox-exec` or Switchboard's
/// launcher (see [`new_command`]).
#[cfg(any(target_os = "macos", windows))]
#[allow(clippy::unnecessary_wraps)]
fn enforce(
    _: &mut tokio::process::Command,
    _: &SandboxPlan,
    _: Option<u16>,
    _: bool,
) -> std::io::Result<Option<Handoff>> {
    Ok(None)
}

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
fn enforce(
    _: &mut tokio::process::Command,
    _: &SandboxPlan,
    _: Option<u16>,
    _: bool,
) -> std::io::Result<Option<Handoff>> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "sandboxed servers run on Linux, macOS and Windows",
    ))
}

/// The command that starts `program` with `args`: on macOS, a sandboxed one (with a `plan`)
/// runs under `sandbox-exec` with the profile its plan makes (and `proxy`'s port); on
/// Windows, under Switchboard's own program as the launcher of its AppContainer.
///
/// # Errors
/// On Windows: a sandbox it cannot have there (a list of hosts), or no launcher.
#[allow(unused_variables, clippy::unnecessary_wraps)]
pub fn new_command(
    program: &Path,
    args: &[String],
    plan: Option<&SandboxPlan>,
    proxy: Option<u16>,
) -> std::io::Result<tokio::process::Command> {
    #[cfg(target_os = "macos")]
    if let Some(plan) = plan {
        let (program, args) = super::seatbelt::command_line(plan, proxy, program, args);
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        return Ok(command);
    }
    #[cfg(windows)]
    if let Some(plan) = plan {
        use super::appcontainer;
        let unsupported = |why: String| std::io::Error::new(std::io::ErrorKind::Unsupported, why);
        let container = appcontainer::container(plan).map_err(unsupported)?;
        let launcher = appcontainer::launcher().ok_or_else(|| {
            unsupported("this is not Switchboard's own program, which starts it".to_owned())
        })?;
        let (program, args) = appcontainer::command_line(&container, &launcher, program, args);
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        return Ok(command);
    }
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    Ok(command)
}
