//! What the shell keeps for the app's lifetime: the parts the core's [`App`] is built from, and
//! the app itself, opened on first use on the async runtime, so the window's first paint never
//! waits for the database.

use std::sync::{Arc, PoisonError};
use std::time::Duration;

use switchboard_core::app::DropEvent;
use switchboard_core::ipc::Sink;
use switchboard_core::secrets::SecretStore;
use switchboard_core::settings::SettingsSource;
use switchboard_core::{App, AppConfig, AppPaths};
use tokio::sync::OnceCell;

pub struct AppState {
    paths: AppPaths,
    secrets: Arc<dyn SecretStore>,
    settings: Arc<dyn SettingsSource>,
    app: OnceCell<Arc<App>>,
    /// Where files dragged over the window are told of (the window's latest listener).
    drops: std::sync::Mutex<Option<Sink<DropEvent>>>,
}

impl AppState {
    pub fn new(
        paths: AppPaths,
        secrets: Arc<dyn SecretStore>,
        settings: Arc<dyn SettingsSource>,
    ) -> Self {
        Self {
            paths,
            secrets,
            settings,
            app: OnceCell::new(),
            drops: std::sync::Mutex::new(None),
        }
    }

    /// Files dragged over the window are told to `channel` from now on.
    pub fn listen_for_drops(&self, sink: Sink<DropEvent>) {
        *self.drops.lock().unwrap_or_else(PoisonError::into_inner) = Some(sink);
    }

    /// Tells the window's listener of `event`, if it has one.
    pub fn tell_drop(&self, event: DropEvent) {
        if let Some(channel) = self
            .drops
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            channel.send(&event);
        }
    }

    /// The app, built the first time it is asked for.
    pub async fn app(&self) -> &Arc<App> {
        self.app
            .get_or_init(|| async {
                let app = App::open(AppConfig {
                    paths: self.paths.clone(),
                    secrets: Arc::clone(&self.secrets),
                    settings: Arc::clone(&self.settings),
                    shows_forms: true,
                    pid_file: None,
                    check: switchboard_core::store::OpenCheck::Pages,
                    http: switchboard_core::providers::HttpOptions::default(),
                    local_servers: None,
                    search_path: None,
                })
                .await;
                // What the last window left unused goes before this one lists anything.
                app.discard_unused_conversations().await;
                // The window runs this home's schedules while it is open, and follows the
                // tasks calls left running (issue 61).
                app.start_scheduler();
                app.start_task_follower();
                app
            })
            .await
    }

    /// The settings as they are now, also before the app is built (the window may be closed
    /// in its first moment).
    pub fn settings_now(&self) -> switchboard_core::settings::Settings {
        self.settings.load()
    }

    /// The app if it has been built (an app page can only exist once it has).
    pub fn app_now(&self) -> Option<&Arc<App>> {
        self.app.get()
    }

    /// Stops every run and server, waiting at most `deadline` (the app is quitting).
    pub async fn shutdown(&self, deadline: Duration) {
        if let Some(app) = self.app.get() {
            app.shutdown(deadline).await;
        }
    }
}
