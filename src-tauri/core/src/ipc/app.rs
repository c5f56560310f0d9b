//! What the window needs to know before anything else, and its one way out: the version, the
//! home in use, whether the database opened (`app_status`); whether an OS keychain answers
//! (`keychain_status`, asked separately: it may need a D-Bus round trip, which must not hold up
//! the window); `open_link`, to the person's browser after a native dialog.

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
}
