//! What the shell keeps for the app's lifetime: the parts the core's [`App`] is built from, and
//! the app itself, opened on first use on the async runtime, so the window's first paint never
//! waits for the database.

use std::sync::Arc;
use std::time::Duration;

use switchboard_core::secrets::SecretStore;
use switchboard_core::settings::SettingsSource;
use switchboard_core::{App, AppConfig, AppPaths, Core};
use tokio::sync::OnceCell;

pub struct AppState {
    paths: AppPaths,
    secrets: Arc<dyn SecretStore>,
    settings: Arc<dyn SettingsSource>,
    app: OnceCell<Arc<App>>,
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
        }
    }

    /// The app, built the first time it is asked for.
    pub async fn app(&self) -> &Arc<App> {
        self.app
            .get_or_init(|| async {
                App::open(AppConfig {
                    paths: self.paths.clone(),
                    secrets: Arc::clone(&self.secrets),
                    settings: Arc::clone(&self.settings),
                    shows_forms: true,
                    pid_file: None,
                    check: switchboard_core::store::OpenCheck::Pages,
                })
                .await
            })
            .await
    }

    pub async fn core(&self) -> &Core {
        self.app().await.core()
    }

    /// Stops every run and server, waiting at most `deadline` (the app is quitting).
    pub async fn shutdown(&self, deadline: Duration) {
        if let Some(app) = self.app.get() {
            app.shutdown(deadline).await;
        }
    }
}
