//! What the window needs to know before anything else, and its one way out: the version, the
//! home in use, whether the database opened (`app_status`); whether an OS keychain answers
//! (`keychain_status`, asked separately: it may need a D-Bus round trip, which must not hold up
//! the window); `open_link`, to the person's browser after a native dialog; and the ways out
//! of a database that could not be opened: its folder shown, a fresh start with the damaged
//! file kept, or quitting.

use super::commands;
use crate::{links, AppStatus, KeychainStatus};

commands! {
    async fn app_status(cx) -> AppStatus {
        Ok(cx.app.status(cx.host.version()))
    }

    async fn keychain_status(cx) -> KeychainStatus {
        Ok(cx.app.keychain_status().await)
    }

    /// Opens a link from the conversation in the person's browser (or mail program): `https:`,
    /// `http:` or `mailto:` only, after a native dialog shows the whole address. Resolves with
    /// whether it was opened (`false`: the person said no).
    async fn open_link(cx, url: String) -> bool {
        let host = &cx.host;
        Ok(links::open(&url, &*host.confirm(), &|url| host.open_url(url)).await?)
    }

    /// Opens the folder holding the database file in the person's file manager.
    async fn show_database_folder(cx) -> () {
        let file = cx.app.paths().database_file();
        let folder = file.parent().unwrap_or(&file);
        cx.host
            .show_folder(folder)
            .map_err(|e| crate::error::CoreError::ShowFolder {
                folder: folder.display().to_string(),
                detail: e.to_string(),
            })?;
        Ok(())
    }

    /// Only while the database could not be opened: sets its file aside (kept whole beside
    /// it, under a `.damaged-…` name) and starts the app again with a fresh database. Resolves
    /// with the kept file's path just before the app restarts.
    async fn start_fresh_database(cx) -> String {
        let kept = cx.app.set_aside_database().await?;
        cx.host.restart();
        Ok(kept.display().to_string())
    }

    /// Quits the app.
    async fn quit_app(cx) -> () {
        cx.host.quit();
        Ok(())
    }
}
