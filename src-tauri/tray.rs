//! The tray icon, shown once the window is closed while Settings' "keep running in the tray" is
//! on: the app goes on (its schedules run), "Show Switchboard" brings the window back, "Quit"
//! ends the app the normal way. Starting Switchboard again also shows the window.

use tauri::menu::{Menu, MenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, WebviewWindow};

const ID: &str = "switchboard";
const SHOW: &str = "show";
const QUIT: &str = "quit";

/// Whether closing the main window keeps the app running (Settings say so), read from the
/// settings themselves: also right while the app is still being built.
pub fn keeps_running(app: &AppHandle) -> bool {
    app.try_state::<crate::state::AppState>()
        .is_some_and(|state| state.settings_now().keep_running_in_background)
}

/// Shows the tray icon (made the first time) and hides `window`; `false` when there can be no
/// tray icon, and then the window closes and the app ends as it would without the setting.
pub fn hide_to_tray(window: &WebviewWindow) -> bool {
    let app = window.app_handle();
    if let Err(e) = icon(app) {
        tracing::warn!(error = %e, "no tray icon to come back from; the app ends");
        return false;
    }
    let _ = window.hide();
    tracing::info!("the window is closed; running in the tray");
    true
}

fn icon(app: &AppHandle) -> tauri::Result<()> {
    if app.tray_by_id(ID).is_some() {
        return Ok(());
    }
    let show = MenuItem::with_id(app, SHOW, "Show Switchboard", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, QUIT, "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&show, &quit])?;
    let mut tray = TrayIconBuilder::with_id(ID)
        .menu(&menu)
        .tooltip("Switchboard: schedules keep running")
        .on_menu_event(|app, event| match event.id().as_ref() {
            SHOW => {
                crate::show_main_window(app);
            }
            QUIT => app.exit(0),
            _ => {}
        });
    if let Some(image) = app.default_window_icon() {
        tray = tray.icon(image.clone());
    }
    tray.build(app)?;
    Ok(())
}
