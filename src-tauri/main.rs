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
    software_rendering_without_compositing();
    std::process::exit(switchboard_app::run());
}

/// On Linux, a machine with no GPU render node (a VM, a remote desktop, CI under Xvfb) draws
/// OpenGL in software (Mesa's llvmpipe), and WebKitGTK's accelerated compositing then costs more
/// than it saves: measured on such a machine, a scroll that grows the chat took ~400 ms a frame
/// composited and ~80 ms without, and the web process used 201 MiB PSS instead of 117
/// (BENCHMARKS.md, "The conversation view"). So without a render node compositing is turned
/// off, unless the person set `WEBKIT_DISABLE_COMPOSITING_MODE` themselves. Runs first in
/// `main`, before any thread exists, because it sets an environment variable the web process
/// inherits.
#[cfg(target_os = "linux")]
fn software_rendering_without_compositing() {
    const VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    if std::env::var_os(VAR).is_some() {
        return;
    }
    let has_render_node = std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    });
    if !has_render_node {
        std::env::set_var(VAR, "1");
    }
}

#[cfg(not(target_os = "linux"))]
fn software_rendering_without_compositing() {}

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
