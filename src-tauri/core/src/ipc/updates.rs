//! The app's own updates, when the person asks: the host checks the address this build (or
//! its environment, see [`crate::updates`]) names, downloads and installs the release found
//! once its signature matches, and restarts into it. The window only asks.

use super::{commands, Sink};
use crate::updates::{UpdateProgress, UpdateStatus};

commands! {
    /// Asks the update address whether there is a newer release.
    async fn check_for_update(cx) -> UpdateStatus {
        cx.host.check_for_update().await
    }

    /// Downloads the release the last check found, telling `on_progress` how far it has come,
    /// and installs it once its signature is checked. Returns the version installed.
    async fn install_update(cx, on_progress: Sink<UpdateProgress>) -> String {
        cx.host.install_update(on_progress).await
    }

    /// Quits (stopping every run and server, as at any quit) and starts the app again.
    async fn restart_app(cx) -> () {
        cx.host.restart();
        Ok(())
    }
}
