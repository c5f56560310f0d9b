//! The desktop shell: builds the Tauri app around [`switchboard_core::App`]. Plugins, managed
//! state, the one invoke handler, the single-instance hand-off and the shutdown at
//! exit live here; every decision lives in the core.

mod app_pages;
mod bridge;
#[cfg(target_os = "linux")]
mod gtk_dialog;
mod host;
mod state;
mod tray;
mod updates;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use switchboard_core::instance::{self, Instance};
use switchboard_core::mcp::proposal;
use switchboard_core::secrets::KeyringStore;
use switchboard_core::{logging, AppPaths};
use tauri::{AppHandle, Manager};
use tauri_plugin_store::StoreExt;

use crate::state::AppState;

/// Runs the window until it is closed; returns the process exit code.
pub fn run() -> i32 {
    let paths = AppPaths::from_env();
    if let Err(e) = paths.create_all() {
        eprintln!(
            "switchboard: cannot create its folders under {}: {e}",
            paths.display_home()
        );
        return 1;
    }
    let logs = logging::init(Some(&paths.log_dir), "info", "info");
    let masks = logs.masks();

    // One app per home: a second start shows the first window instead of opening the same
    // database twice.
    // A `switchboard://` link the app was opened with (Linux and Windows pass it as the
    // argument): shown to the window as a proposal, by this instance or the one running.
    let link = std::env::args().skip(1).find(|a| proposal::is_link(a));
    let handle: Arc<OnceLock<AppHandle>> = Arc::default();
    let for_listener = Arc::clone(&handle);
    let instance_guard = match instance::acquire(&paths.data_dir, link.as_deref(), move |link| {
        let Some(app) = for_listener.get() else {
            return false;
        };
        if let Some(link) = link {
            propose(app, link);
        }
        show_main_window(app)
    }) {
        Ok(Instance::Primary(guard)) => guard,
        Ok(Instance::Secondary { shown, detail }) => {
            tracing::info!(shown, "{detail}");
            eprintln!("switchboard: {detail}");
            return if shown { 0 } else { 1 };
        }
        Err(e) => {
            eprintln!("switchboard: {e}");
            return 1;
        }
    };

    tracing::info!(home = %paths.display_home(), version = env!("CARGO_PKG_VERSION"), "starting");
    let mut context = tauri::generate_context!();
    if let Err(e) = updates_from_env(context.config_mut()) {
        eprintln!("switchboard: {e}");
        return 1;
    }
    let restart = Arc::new(AtomicBool::new(false));
    let updates = updates::Updates::new(Arc::clone(&restart));
    let built = tauri::Builder::default()
        .plugin(tauri_plugin_store::Builder::new().build())
        // `switchboard://` links: the scheme is declared in tauri.conf.json, so the packages
        // register it (the .desktop entry's MimeType, the Windows installers, the macOS
        // Info.plist). The window is granted none of this plugin's commands.
        .plugin(tauri_plugin_deep_link::init())
        // Updates of the app itself, when the person asks (Settings); the window is granted
        // none of this plugin's commands, only the app's own `check_for_update`/`install_update`.
        .plugin(tauri_plugin_updater::Builder::new().build())
        .manage(updates)
        // Native dialogs, used from Rust only (the approval of an MCP server): the window is
        // granted none of this plugin's commands.
        .plugin(tauri_plugin_dialog::init())
        .plugin(navigation_guard())
        // MCP Apps' pages, by token, each under its own Content-Security-Policy (loaded only in
        // a sandboxed frame of a tool card).
        .register_uri_scheme_protocol(app_pages::SCHEME, |ctx, request| {
            app_pages::serve(ctx.app_handle(), &request)
        })
        // Files dropped on the window are read by Rust (see `bridge::on_drag_drop`).
        .on_window_event(|window, event| match event {
            tauri::WindowEvent::DragDrop(drop) => bridge::on_drag_drop(window.app_handle(), drop),
            // Settings' "keep running in the tray": the window hides, the app (and its
            // schedules) goes on.
            tauri::WindowEvent::CloseRequested { api, .. }
                if window.label() == "main" && tray::keeps_running(window.app_handle()) =>
            {
                if let Some(main) = window.app_handle().get_webview_window("main") {
                    if tray::hide_to_tray(&main) {
                        api.prevent_close();
                    }
                }
            }
            _ => {}
        })
        .setup(move |app| {
            let _ = handle.set(app.handle().clone());
            main_window(app.handle())?;
            // The store plugin would drop an unparsable file and overwrite it at the next save.
            switchboard_core::settings::set_aside_if_unreadable(&paths.settings_file());
            let settings = app.store(paths.settings_file())?;
            let secrets = Arc::new(switchboard_core::secrets::Masking::new(
                KeyringStore::new(paths.keychain_service()),
                masks.clone(),
            ));
            let settings = Arc::new(bridge::StoreSettings(settings));
            app.manage(AppState::new(paths.clone(), secrets, settings));
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                handle.state::<AppState>().app().await.start_servers().await;
            });
            if let Some(link) = link.clone() {
                propose(app.handle(), link);
            }
            follow_links_from_the_os(app.handle());
            // TERM (logout, shutdown, a process manager) and Ctrl-C end the app the normal way,
            // so its MCP servers are stopped too.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                switchboard_core::app::quit_signal().await;
                tracing::info!("asked to quit by a signal");
                handle.exit(0);
            });
            Ok(())
        })
        // The core's commands, each declared once (`switchboard_core::ipc`): Tauri checks the
        // capability (build.rs grants exactly those names), then `host::handle` runs the one
        // called.
        .invoke_handler(host::handle)
        .build(context);
    let app = match built {
        Ok(app) => app,
        Err(e) => {
            tracing::error!(error = %e, "the window could not start");
            eprintln!("switchboard: the window could not start: {e}");
            return 1;
        }
    };
    // `run_return`, not `run`: on Linux `run` ends the process from inside the event loop, so
    // nothing after it (the instance guard, the log flush) would ever run.
    let code = app.run_return(|handle, event| {
        if let tauri::RunEvent::Exit = event {
            // Every run is stopped (saving what it had) and every MCP server before the
            // process ends, within a few seconds.
            let state = handle.state::<AppState>();
            tauri::async_runtime::block_on(state.shutdown(std::time::Duration::from_secs(5)));
        }
    });
    tracing::info!(code, "window closed; exiting");
    drop(instance_guard);
    if restart.load(Ordering::SeqCst) {
        tracing::info!("starting again, as asked after an update");
        drop(logs);
        // Started only now, with the instance lock released, so it becomes the one running.
        tauri::process::restart(&tauri::Env::default());
    }
    drop(logs);
    code
}

/// The update address and key from the environment (an organisation's own, or a test's) in
/// place of the build's, checked by the core ([`switchboard_core::updates::configured`]).
fn updates_from_env(
    config: &mut tauri::Config,
) -> Result<(), switchboard_core::updates::UpdateError> {
    use switchboard_core::updates::{configured, PUBKEY_VAR, URL_VAR};
    let url = std::env::var(URL_VAR).ok();
    let pubkey = std::env::var(PUBKEY_VAR).ok();
    let plugins = &mut config.plugins.0;
    if let Some(updater) = configured(plugins.get("updater"), url.as_deref(), pubkey.as_deref())? {
        tracing::info!(address = %url.unwrap_or_default(), "updates from the address the environment names");
        plugins.insert("updater".into(), updater);
    }
    Ok(())
}

/// Links the OS hands over while the app runs. On Linux and Windows a link starts a second
/// copy with the link as its argument, which hands it to this one (see [`instance`]); an
/// AppImage, which no package installed, registers the scheme itself. On macOS links arrive as
/// events.
fn follow_links_from_the_os(app: &AppHandle) {
    #[cfg(target_os = "macos")]
    {
        use tauri_plugin_deep_link::DeepLinkExt;
        let handle = app.clone();
        app.deep_link().on_open_url(move |event| {
            for url in event.urls() {
                if proposal::is_link(url.as_str()) {
                    propose(&handle, url.to_string());
                }
            }
        });
    }
    #[cfg(target_os = "linux")]
    if app.env().appimage.is_some() {
        use tauri_plugin_deep_link::DeepLinkExt;
        if let Err(e) = app.deep_link().register_all() {
            tracing::warn!(error = %e, "switchboard:// links could not be registered");
        }
    }
    #[cfg(not(any(target_os = "macos", target_os = "linux")))]
    let _ = app;
}

/// Keeps every webview on the app's own pages: a script's `location.assign`, a form, a clicked
/// or right-click-opened link, a redirect all stay put (logged). The way out is `open_link`.
fn navigation_guard<R: tauri::Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("navigation-guard")
        .on_navigation(|_, url| {
            let own = is_app_page(url);
            if !own {
                tracing::warn!(scheme = url.scheme(), host = ?url.host_str(), "the window tried to leave the app; it stays");
            }
            own
        })
        .build()
}

/// Builds the main window as tauri.conf.json describes it (`create: false` there, so it is
/// built here): a request for another window (`window.open`, a link's `target`, WebKit's
/// "Open Link in New Window") opens none, and is logged like a navigation the guard refused.
fn main_window(app: &tauri::AppHandle) -> tauri::Result<()> {
    let config = app
        .config()
        .app
        .windows
        .iter()
        .find(|w| w.label == "main")
        .cloned()
        .unwrap_or_default();
    tauri::WebviewWindowBuilder::from_config(app, &config)?
        .on_new_window(|url, _| {
            tracing::warn!(scheme = url.scheme(), host = ?url.host_str(), "the window tried to leave the app for a new window; none opens");
            tauri::webview::NewWindowResponse::Deny
        })
        .build()?;
    Ok(())
}

/// The app's own pages: its embedded assets (`tauri://localhost` on Linux and macOS,
/// `http(s)://tauri.localhost` on Windows), or the dev server in a development build; and
/// `about:srcdoc`, the document of the canvas's sandboxed frame for an HTML file (no scripts,
/// no origin, no network: it cannot reach the app's commands).
fn is_app_page(url: &tauri::Url) -> bool {
    let host = url.host_str();
    match url.scheme() {
        "about" => url.path() == "srcdoc",
        // An MCP App's page in its sandboxed frame (scripts only, an opaque origin, its own
        // policy; see app_pages).
        "mcp-app" => host == Some("localhost"),
        "http" | "https" if host == Some("mcp-app.localhost") => true,
        "tauri" => host == Some("localhost"),
        "http" | "https" if host == Some("tauri.localhost") => true,
        "http" if tauri::is_dev() => host == Some("localhost") && url.port() == Some(1420),
        _ => false,
    }
}

/// Shows the window what `link` proposes (it keeps it until the window listens); a link that
/// proposes nothing is only logged, without what it said (it may carry a key).
fn propose(app: &AppHandle, link: String) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if app.state::<AppState>().app().await.propose(&link).is_err() {
            tracing::warn!("a switchboard:// link was not followed: it proposes no server");
        }
    });
}

/// Brings the main window to the front; `false` when there is no window to show yet.
pub(crate) fn show_main_window(app: &AppHandle) -> bool {
    let Some(window) = app.get_webview_window("main") else {
        return false;
    };
    let _ = window.unminimize();
    let _ = window.show();
    window.set_focus().is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_window_stays_on_the_apps_pages_and_only_the_canvas_frame_is_about_srcdoc() {
        let page = |url: &str| super::is_app_page(&tauri::Url::parse(url).unwrap());
        assert!(page("tauri://localhost/index.html"));
        assert!(page("about:srcdoc"));
        assert!(page("mcp-app://localhost/0123abcd"));
        assert!(page("http://mcp-app.localhost/0123abcd"));
        for away in [
            "mcp-app://elsewhere/0123abcd",
            "about:blank",
            "https://example.com/",
            "tauri://elsewhere/",
            "file:///etc/passwd",
            "data:text/html,<h1>hi</h1>",
        ] {
            assert!(!page(away), "{away}");
        }
    }
}
