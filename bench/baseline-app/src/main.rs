//! The smallest Tauri 2 app: one window, one static page, no commands. Built with the same
//! profile as Switchboard so the two can be compared in BENCHMARKS.md.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!())
        .expect("the baseline app runs");
}
