//! The app's own updates through `tauri-plugin-updater`: check the address this build (or its
//! environment, see [`switchboard_core::updates`]) names, then download and install the release
//! found — the plugin refuses one whose signature does not match the build's key or names
//! another version — and restart into it. The commands are the core's (`ipc::updates`); this is
//! what the host answers them with. The address, the key and the release checked stay here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use switchboard_core::ipc::Sink;
use switchboard_core::updates::{UpdateError, UpdateProgress, UpdateStatus};
use switchboard_core::{CoreError, IpcError};
use tauri::{AppHandle, Manager};
use tauri_plugin_updater::{Update, UpdaterExt};

/// The release the last check found, and whether the person asked to restart into it.
pub struct Updates {
    found: Mutex<Option<Update>>,
    restart: Arc<AtomicBool>,
}

impl Updates {
    /// `restart` is set when the person asks to restart into an installed update; whoever
    /// ends the process starts it again once everything is closed.
    pub fn new(restart: Arc<AtomicBool>) -> Self {
        Self {
            found: Mutex::default(),
            restart,
        }
    }

    fn found(&self) -> Option<Update> {
        self.found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn keep(&self, update: Option<Update>) {
        *self.found.lock().unwrap_or_else(PoisonError::into_inner) = update;
    }
}

/// Asks the update address whether there is a newer release.
pub async fn check(app: &AppHandle) -> Result<UpdateStatus, IpcError> {
    let current = app.package_info().version.to_string();
    if !switchboard_core::updates::has_address(app.config().plugins.0.get("updater")) {
        return Ok(UpdateStatus::NotConfigured { current });
    }
    let found = app.updater().map_err(said)?.check().await.map_err(said)?;
    let status = match &found {
        None => UpdateStatus::UpToDate { current },
        Some(update) => UpdateStatus::Available {
            current,
            version: update.version.clone(),
            date: update.date.map(|d| d.date().to_string()),
            notes: update.body.clone(),
            installable: installable(app),
        },
    };
    app.state::<Updates>().keep(found);
    Ok(status)
}

/// Downloads the release the last check found, telling `progress` how far it has come, and
/// installs it once its signature is checked. Returns the version installed.
pub async fn install(app: &AppHandle, progress: Sink<UpdateProgress>) -> Result<String, IpcError> {
    let updates = app.state::<Updates>();
    let update = updates.found().ok_or(core(UpdateError::NothingChecked))?;
    if !installable(app) {
        return Err(core(UpdateError::NotInstallable(update.version)));
    }
    let mut received = 0u64;
    let bytes = update
        .download(
            |chunk, total| {
                received += chunk as u64;
                progress.send(&UpdateProgress { received, total });
            },
            || {},
        )
        .await
        .map_err(said)?;
    tracing::info!(version = %update.version, "installing an update whose signature matched");
    let install = update.clone();
    tauri::async_runtime::spawn_blocking(move || install.install(bytes))
        .await
        .map_err(|e| core(UpdateError::Install(e.to_string())))?
        .map_err(said)?;
    updates.keep(None);
    Ok(update.version)
}

/// Quits (stopping every run and server as at any quit) and starts the app again.
pub fn restart(app: &AppHandle) {
    app.state::<Updates>().restart.store(true, Ordering::SeqCst);
    app.exit(0);
}

/// Whether this copy can replace itself: it was installed from a package the updater knows
/// (deb, rpm, msi, NSIS, a macOS app) or runs as an AppImage.
fn installable(app: &AppHandle) -> bool {
    // Only Linux has AppImages (tauri's `Env` has the field there alone).
    #[cfg(target_os = "linux")]
    let appimage = app.env().appimage.is_some();
    #[cfg(not(target_os = "linux"))]
    let appimage = {
        let _ = app;
        false
    };
    tauri::utils::platform::bundle_type().is_some() || appimage
}

fn core(err: UpdateError) -> IpcError {
    CoreError::from(err).into()
}

/// The updater's failure as the person is told it.
fn said(err: tauri_plugin_updater::Error) -> IpcError {
    use tauri_plugin_updater::Error as E;
    tracing::warn!(error = %err, "update failed");
    core(match err {
        E::Minisign(_) | E::Base64(_) | E::SignatureUtf8(_) | E::MissingSignedVersion => {
            UpdateError::BadSignature
        }
        E::SignedVersionMismatch { signed, announced } => {
            UpdateError::WrongVersion { signed, announced }
        }
        E::EmptyEndpoints => UpdateError::NotConfigured,
        E::Reqwest(e) => UpdateError::Network(e.to_string()),
        E::Network(e) => UpdateError::Network(e),
        E::ReleaseNotFound
        | E::TargetNotFound(_)
        | E::TargetsNotFound(_)
        | E::Serialization(_)
        | E::Semver(_) => UpdateError::BadAnswer(err.to_string()),
        other => UpdateError::Install(other.to_string()),
    })
}
