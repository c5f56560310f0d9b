//! Finding servers in the MCP Registry and installing one, for the window and the command
//! line alike: the search (at the registry Settings names, unless another is given), and an
//! install worked out from the server's `server.json` and the values the person gave, its
//! runtime looked for first, then added unapproved — the person approves it as any new
//! server, seeing the command line it runs.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::App;
use crate::app::McpServerView;
use crate::error::CoreError;
use crate::mcp::environment::resolve_command;
use crate::mcp::install::{self, InstallError};
use crate::mcp::registry::{self, FoundServer, SearchPage};
use crate::policy::confirm::Confirm;

/// What the person asked to install.
#[derive(Debug, Clone, Default, Deserialize, ts_rs::TS)]
pub struct InstallRequest {
    /// The registry's name of the server (`io.github.owner/name`).
    pub server: String,
    /// A published version; `None` for the newest.
    pub version: Option<String>,
    /// Which of its sources (an index into [`FoundServer::sources`]); `None` for the first
    /// one Switchboard can install.
    pub source: Option<usize>,
    /// Its name here; `None` for the last part of its registry name.
    pub name: Option<String>,
    /// The values it needs, by name (several for a repeated argument).
    #[serde(default)]
    pub values: BTreeMap<String, Vec<String>>,
    /// Another registry than the one Settings names (the command line's `--registry`).
    #[serde(skip)]
    #[ts(skip)]
    pub registry: Option<String>,
}

/// A server added from the registry, not yet approved.
#[derive(Debug, Clone)]
pub struct Installed {
    pub view: McpServerView,
    /// The server as the registry described it.
    pub found: FoundServer,
}

impl App {
    fn registry_address(&self, given: Option<&str>) -> String {
        given.map_or_else(|| self.settings().mcp_registry, str::to_owned)
    }

    /// One page of the registry's servers matching `query`.
    ///
    /// # Errors
    /// [`CoreError::Registry`]: not an address, not reached, refused or not a server list.
    pub async fn search_registry(
        &self,
        query: &str,
        cursor: Option<&str>,
        limit: u32,
        registry: Option<&str>,
        icons: registry::Icons,
    ) -> Result<SearchPage, CoreError> {
        let registry = self.registry_address(registry);
        Ok(registry::search(&registry, query, cursor, limit, icons).await?)
    }

    /// Adds the server `ask` names as its registry entry describes it, not approved: the
    /// values the registry marks secret go to the keychain.
    ///
    /// # Errors
    /// [`CoreError::Registry`] (no such server, or no answer); [`CoreError::Install`] (no
    /// source to install, a value missing, its runtime not on the PATH); a taken name; the
    /// keychain or the file.
    pub async fn add_from_registry(&self, ask: &InstallRequest) -> Result<Installed, CoreError> {
        let registry = self.registry_address(ask.registry.as_deref());
        let version = ask.version.as_deref().unwrap_or("latest");
        let published = registry::fetch(&registry, &ask.server, version).await?;
        let plan = install::plan(&published, ask.source, &ask.values)?;
        self.runtime_found(plan.runtime.as_deref()).await?;
        let name = match ask.name.as_deref().map(str::trim) {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => published.found().suggested_name,
        };
        let view = self.mcp_install(&name, plan).await?;
        self.servers_changed();
        Ok(Installed {
            view,
            found: published.found(),
        })
    }

    /// Whether `runtime` (the program a server runs with) is on the PATH servers start with.
    pub(super) async fn runtime_found(&self, runtime: Option<&str>) -> Result<(), InstallError> {
        let Some(runtime) = runtime else {
            return Ok(());
        };
        let path = self.server_search_path().await;
        let home = dirs::home_dir().unwrap_or_else(std::env::temp_dir);
        match resolve_command(runtime, &path, &home) {
            Ok(_) => Ok(()),
            Err(_) => Err(InstallError::RuntimeMissing {
                runtime: runtime.to_owned(),
            }),
        }
    }

    /// [`App::add_from_registry`], then asks `confirm` to approve it as it now is (the full
    /// command line shown); the server as it then is, approved or not.
    ///
    /// # Errors
    /// As [`App::add_from_registry`] and [`App::approve_server`].
    pub async fn install_from_registry(
        &self,
        ask: &InstallRequest,
        confirm: &dyn Confirm,
    ) -> Result<McpServerView, CoreError> {
        let installed = self.add_from_registry(ask).await?;
        self.ask_about_changed(installed.view.name, confirm).await
    }
}
