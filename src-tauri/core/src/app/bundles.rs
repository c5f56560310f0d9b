//! Installing an MCP bundle (`.mcpb`) for the window and the command line alike: the bundle
//! read and checked (what the consent screen shows), then — with the person's values — its
//! runtime looked for, unpacked into its own folder under the data folder, and added
//! unapproved: the person approves it as any new server, seeing the command line it runs.
//! A bundle that cannot be added leaves no folder behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::App;
use crate::engine::McpServerView;
use crate::error::CoreError;
use crate::mcp::bundle::{Bundle, BundleError, BundleInfo};
use crate::policy::confirm::Confirm;

/// A bundle opened in a blocking task (zip reading is blocking file work).
async fn open(path: PathBuf) -> Result<Bundle, CoreError> {
    tokio::task::spawn_blocking(move || Bundle::open(&path))
        .await
        .map_err(|e| CoreError::Io {
            what: "the bundle".to_owned(),
            detail: e.to_string(),
        })?
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
    /// What the bundle at `path` is, read and checked, nothing unpacked: for the consent
    /// screen.
    ///
    /// # Errors
    /// [`CoreError::Bundle`]: not a bundle, or one refused (see [`Bundle::open`]).
    pub async fn inspect_bundle(&self, path: &Path) -> Result<BundleInfo, CoreError> {
        Ok(open(path.to_owned()).await?.info().clone())
    }

    /// Unpacks the bundle at `path` and adds its server as `name` (else a name made from its
    /// manifest), not approved, with `values` for what it asks (sensitive ones to the
    /// keychain).
    ///
    /// # Errors
    /// The bundle refused; a value missing or wrong; its runtime not on the PATH; a taken
    /// name; the file system, the keychain or mcp.json.
    pub async fn add_bundle(
        &self,
        path: &Path,
        name: Option<&str>,
        values: &BTreeMap<String, Vec<String>>,
    ) -> Result<(McpServerView, BundleInfo), CoreError> {
        let bundle = open(path.to_owned()).await?;
        let name = match name.map(str::trim) {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => local_name(&bundle.info().name),
        };
        if self
            .core
            .mcp_servers()
            .await?
            .iter()
            .any(|s| s.name == name)
        {
            return Err(CoreError::Conflict {
                field: "name",
                message: format!("A server named “{name}” already exists."),
            });
        }
        let dir = free_folder(&self.core.paths().bundles_dir(), &name);
        let plan = bundle.plan(&dir, values)?;
        self.runtime_found(plan.runtime.as_deref()).await?;
        let info = bundle.info().clone();
        let target = dir.clone();
        tokio::task::spawn_blocking(move || bundle.unpack(&target))
            .await
            .map_err(|e| BundleError::Io {
                path: dir.display().to_string(),
                detail: e.to_string(),
            })??;
        match self.core.mcp_install(&name, plan).await {
            Ok(view) => {
                self.servers_changed();
                Ok((view, info))
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    /// [`App::add_bundle`], then asks `confirm` to approve it as it now is (the full command
    /// line shown); the server as it then is, approved or not.
    ///
    /// # Errors
    /// As [`App::add_bundle`] and [`App::approve_server`].
    pub async fn install_bundle(
        &self,
        path: &Path,
        name: Option<&str>,
        values: &BTreeMap<String, Vec<String>>,
        confirm: &dyn Confirm,
    ) -> Result<McpServerView, CoreError> {
        let (view, _) = self.add_bundle(path, name, values).await?;
        self.ask_about_changed(view.name, confirm).await
    }
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
