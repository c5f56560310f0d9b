//! What the shell keeps for the app's lifetime: the core and the settings store.

use std::sync::Arc;

use switchboard_core::Core;
use tauri::Wry;
use tauri_plugin_store::Store;

pub struct AppState {
    pub core: Core,
    pub settings: Arc<Store<Wry>>,
}

impl AppState {
    pub fn new(core: Core, settings: Arc<Store<Wry>>) -> Self {
        Self { core, settings }
    }
}
