//! The `switchboard` binary: with a subcommand it is the headless command line (no display
//! needed); without one it opens the window.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if switchboard_core::cli::is_cli_invocation(&args) {
        std::process::exit(switchboard_core::cli::main(args));
    }
    std::process::exit(switchboard_app::run());
}
