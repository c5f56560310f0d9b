//! Installing an MCP bundle (`.mcpb`) for the window and the command line alike: the bundle
//! read and checked (what the consent screen shows), then — with the person's values — its
//! runtime looked for, unpacked into its own folder under the data folder, and added
//! unapproved: the person approves it as any new server, seeing the command line it runs.
//! A bundle that cannot be added leaves no folder behind. The window names a bundle only by
//! the token it was given when the person chose the file in a native dialog.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::App;
use crate::app::McpServerView;
use crate::attachments::Attached;
use crate::error::CoreError;
use crate::mcp::bundle::{is_bundle_file, Bundle, BundleError, BundleInfo, OWNER_FILE};
use crate::policy::confirm::Confirm;

/// Files dragged over the window, as the window is told: something is over it, it left, or it
/// was dropped. Dropped files are attached (kept, or refused with the reason), except MCP
/// bundles, each offered for install as if chosen with the button (or refused with the reason).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DropEvent {
    Over,
    Left,
    Dropped { attached: Attached },
    Bundle { offered: Box<OfferedBundle> },
    BundleRefused { file_name: String, reason: String },
}

/// A bundle the person chose in the window, shown for consent.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct OfferedBundle {
    /// What the window names it by when installing it.
    pub token: String,
    /// The file's name (not its folder).
    pub file_name: String,
    /// The name its server gets here unless the person gives one.
    pub suggested_name: String,
    pub info: BundleInfo,
}

/// Installing a bundle offered to the window, with the person's values.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct BundleInstallRequest {
    pub token: String,
    /// Its name here; `None` for one made from its manifest name.
    pub name: Option<String>,
    /// By `user_config` key (several for a `multiple` one).
    #[serde(default)]
    pub values: BTreeMap<String, Vec<String>>,
}

/// How many chosen bundles are remembered at once (the oldest forgotten first).
pub(super) const OFFERED_KEPT: usize = 16;

/// A bundle opened in a blocking task (zip reading is blocking file work).
async fn open(path: PathBuf) -> Result<Arc<Bundle>, CoreError> {
    tokio::task::spawn_blocking(move || Bundle::open(&path))
        .await
        .map_err(|e| CoreError::Io {
            what: "the bundle".to_owned(),
            detail: e.to_string(),
        })?
        .map(Arc::new)
        .map_err(CoreError::from)
}

/// The name a bundle's server gets here unless the person gives one: its manifest name,
/// as a name and a folder name both take it (letters, digits, `-`, `_`, `.`).
fn local_name(manifest_name: &str) -> String {
    let name: String = manifest_name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let name = name.trim_matches(|c| c == '-' || c == '.').to_owned();
    if name.is_empty() {
        "bundle".to_owned()
    } else {
        name
    }
}

/// A folder under `root` for `name` that is not there yet (`name`, `name-2`, …).
fn free_folder(root: &Path, name: &str) -> PathBuf {
    let base = local_name(name);
    (1..)
        .map(|n| {
            if n == 1 {
                root.join(&base)
            } else {
                root.join(format!("{base}-{n}"))
            }
        })
        .find(|dir| !dir.exists())
        .unwrap_or_else(|| root.join(base))
}

impl App {
    /// The bundle at `path`, read and checked (from a private copy: what is later unpacked is
    /// what was read), nothing unpacked: [`Bundle::info`] is what the consent screen shows.
    ///
    /// # Errors
    /// [`CoreError::Bundle`]: not a bundle, or one refused (see [`Bundle::open`]).
    pub async fn open_bundle(&self, path: &Path) -> Result<Arc<Bundle>, CoreError> {
        open(path.to_owned()).await
    }

    /// Reads the bundle the person chose at `path` (in a native dialog, never named by the
    /// webview) and remembers it under a token for [`App::install_offered_bundle`].
    ///
    /// # Errors
    /// As [`App::open_bundle`].
    pub async fn offer_bundle(&self, path: &Path) -> Result<OfferedBundle, CoreError> {
        let bundle = self.open_bundle(path).await?;
        let info = bundle.info().clone();
        Ok(OfferedBundle {
            token: self.offered_bundles.keep(bundle),
            file_name: file_name(path),
            suggested_name: local_name(&info.name),
            info,
        })
    }

    /// What the window is told of files dropped on it: the `.mcpb` files among them offered for
    /// install, each on its own, and the others attached, together.
    pub async fn take_dropped(&self, paths: Vec<PathBuf>) -> Vec<DropEvent> {
        let (bundles, files): (Vec<_>, Vec<_>) = paths.into_iter().partition(|p| is_bundle_file(p));
        let mut told = Vec::new();
        for path in bundles {
            told.push(match self.offer_bundle(&path).await {
                Ok(offered) => DropEvent::Bundle {
                    offered: Box::new(offered),
                },
                Err(e) => DropEvent::BundleRefused {
                    file_name: file_name(&path),
                    reason: e.to_string(),
                },
            });
        }
        if !files.is_empty() || told.is_empty() {
            let attached = self.keep_attachment_files(files).await;
            told.push(DropEvent::Dropped { attached });
        }
        told
    }

    /// Installs the bundle offered under `ask.token`: [`App::add_bundle`] (the token is then
    /// spent), then asks `confirm` to approve it as it now is (the full command line shown);
    /// the server as it then is, approved or not.
    ///
    /// # Errors
    /// [`CoreError::NotFound`] for a token not offered; as [`App::add_bundle`] and
    /// [`App::approve_server`].
    pub async fn install_offered_bundle(
        &self,
        ask: &BundleInstallRequest,
        confirm: &dyn Confirm,
    ) -> Result<McpServerView, CoreError> {
        let bundle = self
            .offered_bundles
            .get(&ask.token)
            .ok_or_else(|| CoreError::NotFound {
                what: "that bundle (choose its file again)".to_owned(),
            })?;
        let view = self
            .add_bundle(bundle, ask.name.as_deref(), &ask.values)
            .await?;
        self.offered_bundles.take_if(&ask.token, |_| true);
        self.ask_about_changed(view.name, confirm).await
    }

    /// Unpacks `bundle` (as it was read) and adds its server as `name` (else a name made from
    /// its manifest), not approved, with `values` for what it asks (sensitive ones to the
    /// keychain).
    ///
    /// # Errors
    /// The bundle refused; a value missing or wrong; its runtime not on the PATH; a taken
    /// name; the file system, the keychain or mcp.json.
    pub async fn add_bundle(
        &self,
        bundle: Arc<Bundle>,
        name: Option<&str>,
        values: &BTreeMap<String, Vec<String>>,
    ) -> Result<McpServerView, CoreError> {
        let name = match name.map(str::trim) {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => local_name(&bundle.info().name),
        };
        if self.mcp_servers().await?.iter().any(|s| s.name == name) {
            return Err(CoreError::Conflict {
                field: "name",
                message: format!("A server named “{name}” already exists."),
            });
        }
        let dir = free_folder(&self.paths().bundles_dir(), &name);
        let plan = bundle.plan(&dir, values)?;
        self.runtime_found(plan.runtime.as_deref()).await?;
        let target = dir.clone();
        let owner = name.clone();
        tokio::task::spawn_blocking(move || {
            bundle.unpack(&target)?;
            crate::paths::write_private(&target.join(OWNER_FILE), owner.as_bytes()).map_err(|e| {
                BundleError::Io {
                    path: target.display().to_string(),
                    detail: e.to_string(),
                }
            })
        })
        .await
        .map_err(|e| BundleError::Io {
            path: dir.display().to_string(),
            detail: e.to_string(),
        })?
        .inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&dir);
        })?;
        match self.mcp_install(&name, plan).await {
            Ok(view) => {
                self.servers_changed();
                Ok(view)
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }
}

/// A file's name without its folder.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_is_named_and_foldered_safely() {
        assert_eq!(local_name("My MCP Extension"), "my-mcp-extension");
        assert_eq!(local_name(".."), "bundle");
        assert_eq!(local_name("../../etc"), "etc");
        assert_eq!(local_name("a/b\\c"), "a-b-c");
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("x")).unwrap();
        assert_eq!(free_folder(root.path(), "x"), root.path().join("x-2"));
        assert_eq!(free_folder(root.path(), "y"), root.path().join("y"));
    }
}
