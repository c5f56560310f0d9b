//! The `switchboard` binary: with a subcommand it is the headless command line (no display
//! needed); without one it opens the window.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if switchboard_core::cli::is_cli_invocation(&args) {
        attach_parent_console();
        std::process::exit(switchboard_core::cli::main(args));
    }
    std::process::exit(switchboard_app::run());
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
