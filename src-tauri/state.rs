//! What the shell keeps for the app's lifetime: the core (opened on first use, on the async
//! runtime, so the window's first paint never waits for the database) and the settings store.

use std::sync::Arc;

use switchboard_core::secrets::SecretStore;
use switchboard_core::{AppPaths, Core};
use tauri::Wry;
use tauri_plugin_store::Store;
use tokio::sync::OnceCell;

pub struct AppState {
    paths: AppPaths,
    secrets: Arc<dyn SecretStore>,
    core: OnceCell<Core>,
    pub settings: Arc<Store<Wry>>,
}

impl AppState {
    pub fn new(paths: AppPaths, secrets: Arc<dyn SecretStore>, settings: Arc<Store<Wry>>) -> Self {
        Self {
            paths,
            secrets,
            core: OnceCell::new(),
            settings,
        }
    }

    /// The core, opening the database the first time it is asked for.
    pub async fn core(&self) -> &Core {
        self.core
            .get_or_init(|| async {
                let core = Core::open(self.paths.clone(), Arc::clone(&self.secrets)).await;
                // This process holds the home's instance lock, so it alone may do this.
                core.recover_after_crash().await;
                core
            })
            .await
    }
}
