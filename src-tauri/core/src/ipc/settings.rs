//! Settings commands: read them, and save them after the core checks every value. Where they
//! live is the host's business (the shell's tauri-plugin-store `settings.json`).

use super::commands;
use crate::settings::Settings;

commands! {
    async fn get_settings(cx) -> Settings {
        Ok(cx.app.settings())
    }

    async fn update_settings(cx, settings: Settings) -> Settings {
        let confirm = cx.host.confirm();
        Ok(cx.app.update_settings(settings, &*confirm).await?)
    }
}
