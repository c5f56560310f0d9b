//! The `switchboard` binary: with a subcommand it is the headless command line (no display
//! needed); without one it opens the window. On Windows it is also the launcher that starts a
//! sandboxed MCP server in its AppContainer (`--sandbox-launch`).

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // On Windows this program also starts a sandboxed MCP server in its AppContainer.
    #[cfg(windows)]
    if args
        .get(1)
        .is_some_and(|a| a == switchboard_core::sandbox::appcontainer::LAUNCH_FLAG)
    {
        std::process::exit(switchboard_core::sandbox::appcontainer::launch_main(
            &args[2..],
        ));
    }
    if switchboard_core::cli::is_cli_invocation(&args) {
        attach_parent_console();
        std::process::exit(switchboard_core::cli::main(args));
    }
    webkit_defaults();
    std::process::exit(switchboard_app::run());
}

/// WebKitGTK's settings that are environment variables, set on Linux before anything else runs
/// (before any thread exists: the web process inherits them), each only if the person has not
/// set it themselves (`webkit_environment`).
#[cfg(target_os = "linux")]
fn webkit_defaults() {
    let has_render_node = std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    });
    for (var, value) in webkit_environment(has_render_node, |var| std::env::var_os(var).is_some()) {
        std::env::set_var(var, value);
    }
}

#[cfg(not(target_os = "linux"))]
fn webkit_defaults() {}

/// The WebKit variables to set, given whether the machine has a GPU render node and which
/// variables the person set already (`is_set`, never overridden):
/// - `WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR`: WebKit's memory monitor reads the web process's
///   `/proc/self/smaps` every 30 s on the window's main thread, which took 30–40 ms here, so a
///   streamed answer missed a frame (a 51–56 ms gap) every 30 s, and nothing else in a 100 s
///   stream came near (its longest gap was 28–32 ms without it; BENCHMARKS.md, session 27).
///   Switched off, WebKit no longer frees its caches when the system runs low on memory; the
///   window's own memory is bounded by design (a long chat is virtualised).
/// - `WEBKIT_DISABLE_COMPOSITING_MODE`, without a render node only: a machine with none (a VM, a
///   remote desktop, CI under Xvfb) draws OpenGL in software (Mesa's llvmpipe), and WebKitGTK's
///   accelerated compositing then costs more than it saves: measured on such a machine, a
///   scroll that grows the chat took ~400 ms a frame composited and ~80 ms without, and the web
///   process used 201 MiB PSS instead of 117 (BENCHMARKS.md, "The conversation view").
#[cfg(any(target_os = "linux", test))]
fn webkit_environment(
    has_render_node: bool,
    is_set: impl Fn(&str) -> bool,
) -> Vec<(&'static str, &'static str)> {
    let mut vars = vec![("WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR", "1")];
    if !has_render_node {
        vars.push(("WEBKIT_DISABLE_COMPOSITING_MODE", "1"));
    }
    vars.retain(|(var, _)| !is_set(var));
    vars
}

/// A Windows release build is a GUI-subsystem program with no console of its own: the command
/// line borrows the console of the terminal that started it, so its output is seen.
#[cfg(windows)]
fn attach_parent_console() {
    use windows_sys::Win32::System::Console::{AttachConsole, ATTACH_PARENT_PROCESS};
    // SAFETY: AttachConsole takes a process id and has no other preconditions; when there is no
    // parent console it fails harmlessly and the output goes nowhere, as before.
    unsafe {
        AttachConsole(ATTACH_PARENT_PROCESS);
    }
}

#[cfg(not(windows))]
fn attach_parent_console() {}

#[cfg(test)]
mod tests {
    use super::webkit_environment;

    #[test]
    fn the_memory_monitor_is_off_everywhere_and_compositing_only_without_a_render_node() {
        let none_set = |_: &str| false;
        assert_eq!(
            webkit_environment(true, none_set),
            [("WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR", "1")]
        );
        assert_eq!(
            webkit_environment(false, none_set),
            [
                ("WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR", "1"),
                ("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
            ]
        );
    }

    #[test]
    fn a_variable_the_person_set_is_left_as_they_set_it() {
        let monitor_set = |var: &str| var == "WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR";
        assert_eq!(
            webkit_environment(false, monitor_set),
            [("WEBKIT_DISABLE_COMPOSITING_MODE", "1")]
        );
        assert!(webkit_environment(false, |_| true).is_empty());
    }
}
