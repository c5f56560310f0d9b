//! Changing which servers there are and how each runs: add (typed on the command line, which
//! approves it, or in the window, which does not), edit, remove (its secrets and approval too),
//! import with a preview, and switching one off or on. Every change is written to mcp.json.

use super::{find_server, McpServerView};
use crate::app::App;
use crate::error::{CoreError, InvalidInput};

use crate::mcp::config::{
    move_secrets_to_keychain, secret_account, validate_name, ConfigValue, ImportPreview,
    ServerEntry,
};
use crate::mcp::install::InstallPlan;
use crate::secrets::{SecretError, SecretStore};

/// Moves the `secret` values of `entry` (`("env" | "headers", key)`) to the keychain, the
/// entry keeping their references.
fn keep_declared_secrets(
    server: &str,
    entry: &mut ServerEntry,
    secret: &[(&'static str, String)],
    store: &dyn SecretStore,
) -> Result<(), SecretError> {
    for (place, key) in secret {
        let values = if *place == "headers" {
            &mut entry.headers
        } else {
            &mut entry.env
        };
        if let Some(ConfigValue::Plain(plain)) = values.get(key).cloned() {
            let account = secret_account(server, place, key);
            store.set(&account, &secrecy::SecretString::from(plain))?;
            values.insert(key.clone(), ConfigValue::Keychain { keychain: account });
        }
    }
    Ok(())
}

/// The most folders a server is given as its own roots.
pub const MAX_SERVER_ROOTS: usize = 100;

impl App {
    /// Adds a server typed on the command line (or confirmed there), which counts as approving
    /// it. Secret `env` / `headers` values move to the keychain first.
    ///
    /// # Errors
    /// An invalid entry, a taken name, the keychain, the file or the database.
    pub async fn mcp_add(
        &self,
        name: &str,
        entry: ServerEntry,
    ) -> Result<McpServerView, CoreError> {
        self.mcp_add_entry(name, entry, true).await
    }

    /// Adds a server without approving it: what the window adds. The webview renders hostile
    /// text, so nothing it sends may start a program; the server waits for the native dialog.
    ///
    /// # Errors
    /// As [`App::mcp_add`].
    pub async fn mcp_add_unapproved(
        &self,
        name: &str,
        entry: ServerEntry,
    ) -> Result<McpServerView, CoreError> {
        self.mcp_add_entry(name, entry, false).await
    }

    /// Adds the server an install worked out (the MCP Registry, a bundle, a link), not
    /// approved (the person approves it as any new server, seeing its command line and its
    /// sandbox, on by default where the system has one): the
    /// values the person typed for a secret go to the keychain whatever they are called, and
    /// nothing else does — what the registry, the bundle or the link wrote stays in the entry,
    /// shown whole.
    ///
    /// # Errors
    /// As [`App::mcp_add`].
    pub async fn mcp_install(
        &self,
        name: &str,
        plan: InstallPlan,
    ) -> Result<McpServerView, CoreError> {
        let mut entry = plan.entry;
        // What an install brings runs in a sandbox from the start, where this system has one:
        // a package turned hostile in its next version reaches only what it was given.
        if let (Some(command), None, Ok(())) = (
            entry.command.as_deref(),
            &entry.sandbox,
            crate::sandbox::available(),
        ) {
            let mut sandbox = crate::sandbox::SandboxEntry {
                enabled: true,
                ..crate::sandbox::SandboxEntry::default()
            };
            sandbox.set_reach(crate::sandbox::default_reach_here(std::path::Path::new(
                command,
            )));
            entry.sandbox = Some(sandbox);
        }
        self.add_entry_keeping(name, entry, false, Some(plan.secrets))
            .await
    }

    pub(super) async fn mcp_add_entry(
        &self,
        name: &str,
        entry: ServerEntry,
        approved: bool,
    ) -> Result<McpServerView, CoreError> {
        self.add_entry_keeping(name, entry, approved, None).await
    }

    /// Adds `entry`, its `declared` secret values (`("env" | "headers", key)`) moved to the
    /// keychain first; without a declaration (the person typed the entry), those whose name
    /// looks secret. It is logged only after: no value that went to the keychain is written.
    async fn add_entry_keeping(
        &self,
        name: &str,
        mut entry: ServerEntry,
        approved: bool,
        declared: Option<Vec<(&'static str, String)>>,
    ) -> Result<McpServerView, CoreError> {
        let name = validate_name(name)?;
        self.check_server_allowed(&name)?;
        entry.resolve(&name)?;
        let mut file = self.load_mcp()?;
        if file.find(&name).is_some() {
            return Err(CoreError::Conflict {
                field: "name",
                message: format!("A server named “{name}” already exists."),
            });
        }
        let server = name.clone();
        entry = self
            .secrets(move |s| match declared {
                Some(secret) => {
                    keep_declared_secrets(&server, &mut entry, &secret, s).map(|()| entry)
                }
                None => move_secrets_to_keychain(&server, &mut entry, s).map(|_| entry),
            })
            .await
            .map_err(CoreError::key_not_saved)?;
        let fingerprint = entry.fingerprint();
        let spec = entry.resolve(&name)?;
        file.servers.insert(name.clone(), entry);
        file.save(&self.mcp_file())?;
        if approved {
            self.store()?
                .approve_mcp_server(name.clone(), fingerprint)
                .await?;
        }
        tracing::info!(server = %name, command = %spec.launch.display(), approved, "MCP server added");
        self.mcp_server_view(name).await
    }

    /// Changes how a server runs to what the person typed — a program's command line (its
    /// `KEY=value` words replace those variables; others are kept) or a remote server's
    /// address — keeping everything else in its entry. The edited server needs approval again.
    ///
    /// # Errors
    /// Not found; a program turned into an address or back (remove and add instead); an
    /// invalid result; the keychain or the file.
    pub async fn mcp_edit(
        &self,
        name: &str,
        typed: ServerEntry,
    ) -> Result<McpServerView, CoreError> {
        let mut file = self.load_mcp()?;
        let (key, current) = find_server(&file, name).map(|(k, e)| (k.clone(), e.clone()))?;
        let mut entry = current.clone();
        match (current.command.is_some(), typed.command) {
            (true, Some(command)) => {
                entry.command = Some(command);
                entry.args = typed.args;
                entry.env.extend(typed.env);
            }
            (false, None) if current.url.is_some() => entry.url = typed.url,
            (true, None) => {
                return Err(InvalidInput::new(
                    "url",
                    "This server runs a program: give its command line. To reach a remote server instead, remove this one and add that.",
                )
                .into())
            }
            _ => {
                return Err(InvalidInput::new(
                    "command_line",
                    "This is a remote server: give its address. To run a program instead, remove this one and add that.",
                )
                .into())
            }
        }
        entry.resolve(&key)?;
        let server = key.clone();
        entry = self
            .secrets(move |s| move_secrets_to_keychain(&server, &mut entry, s).map(|_| entry))
            .await
            .map_err(CoreError::key_not_saved)?;
        file.servers.insert(key.clone(), entry);
        file.save(&self.mcp_file())?;
        tracing::info!(server = %key, "MCP server edited; it needs approval again");
        self.mcp_server_view(key).await
    }

    /// Removes a server, its keychain values and its approval.
    ///
    /// # Errors
    /// Not found, the keychain, the file or the database.
    pub async fn mcp_remove(&self, name: &str) -> Result<(), CoreError> {
        let mut file = self.load_mcp()?;
        let (key, entry) = find_server(&file, name).map(|(k, e)| (k.clone(), e.clone()))?;
        // Its own secrets and its sign-in tokens, and nothing else (an entry edited by hand to
        // name another account is not allowed to take that account with it).
        let accounts: Vec<String> = entry
            .keychain_references()
            .into_iter()
            .filter(|account| crate::mcp::config::is_own_account(&key, account))
            .chain(std::iter::once(crate::mcp::oauth::token_account(&key)))
            .collect();
        self.secrets(move |s| accounts.iter().try_for_each(|a| s.delete(a)))
            .await?;
        file.servers.remove(&key);
        file.save(&self.mcp_file())?;
        self.store()?.forget_mcp_approval(key.clone()).await?;
        // A bundle it was installed from goes with it (only its own folder, as mcp.json names it).
        // Only a folder that says it is this server's: an entry naming another's is not enough.
        let folder = entry.cwd.as_deref().map(std::path::Path::new);
        let owned = |dir: &&std::path::Path| {
            self.paths().is_bundle_dir(dir)
                && std::fs::read_to_string(dir.join(crate::mcp::bundle::OWNER_FILE))
                    .is_ok_and(|owner| owner == key)
        };
        if let Some(bundle) = folder.filter(owned) {
            if let Err(e) = std::fs::remove_dir_all(bundle) {
                tracing::warn!(server = %key, error = %e, "the server's bundle folder was not removed");
            }
        }
        tracing::info!(server = %key, "MCP server removed");
        Ok(())
    }

    /// What importing `text` would add, change nothing yet.
    ///
    /// # Errors
    /// mcp.json or `text` cannot be read.
    pub fn mcp_import_preview(&self, text: &str, origin: &str) -> Result<ImportPreview, CoreError> {
        let current = self.load_mcp()?;
        Ok(ImportPreview::from_text(text, origin, &current)?)
    }

    /// What importing from `source` would add (the window's paste or Claude Desktop's file,
    /// the command line's file), changing nothing yet; read again for the import itself, so
    /// what is imported is what is there then.
    ///
    /// # Errors
    /// [`CoreError::NotFound`]: this system has no place for Claude Desktop's settings, or no
    /// such file; [`CoreError::Io`]: it cannot be read; as [`App::mcp_import_preview`].
    pub async fn mcp_import_preview_of(
        &self,
        source: ImportSource,
    ) -> Result<ImportPreview, CoreError> {
        let (path, claude) = match source {
            ImportSource::Text(text) => return self.mcp_import_preview(&text, "the pasted text"),
            ImportSource::File(path) => (path, false),
            ImportSource::ClaudeDesktop(path) => {
                let path = path.ok_or_else(|| CoreError::NotFound {
                    what: "Claude Desktop's configuration folder".into(),
                })?;
                (path, true)
            }
        };
        let text = match tokio::fs::read_to_string(&path).await {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(CoreError::NotFound {
                    what: if claude {
                        format!("Claude Desktop's settings ({})", path.display())
                    } else {
                        path.display().to_string()
                    },
                })
            }
            Err(e) => {
                return Err(CoreError::Io {
                    what: path.display().to_string(),
                    detail: e.to_string(),
                })
            }
        };
        self.mcp_import_preview(&text, &path.display().to_string())
    }

    /// Adds every server the preview lists as added (approved: the person confirmed the
    /// preview, which shows each command line). Returns the names added.
    ///
    /// # Errors
    /// As [`App::mcp_add`]; servers added before a failure stay added.
    pub async fn mcp_import(&self, preview: &ImportPreview) -> Result<Vec<String>, CoreError> {
        self.mcp_import_entries(preview, true).await
    }

    /// Imports what `preview` shows without approving it: what the window imports (each
    /// server then waits for the native dialog; see [`App::mcp_add_unapproved`]).
    ///
    /// # Errors
    /// As [`App::mcp_import`].
    pub async fn mcp_import_unapproved(
        &self,
        preview: &ImportPreview,
    ) -> Result<Vec<String>, CoreError> {
        self.mcp_import_entries(preview, false).await
    }

    pub(super) async fn mcp_import_entries(
        &self,
        preview: &ImportPreview,
        approved: bool,
    ) -> Result<Vec<String>, CoreError> {
        let mut added = Vec::new();
        for (name, entry) in preview.entries() {
            self.mcp_add_entry(name, entry.clone(), approved).await?;
            added.push(name.clone());
        }
        Ok(added)
    }

    /// Sets the folders a server is given as its roots in mcp.json (its approval is
    /// untouched), checked as a project's are (each once, written one way, at most
    /// [`MAX_SERVER_ROOTS`]; one it had is kept unchecked, so a gone folder never blocks
    /// taking another away); returns its name and the folders.
    ///
    /// # Errors
    /// A folder that is not an absolute path to a folder; too many; not found; the file.
    pub async fn mcp_set_roots(
        &self,
        name: &str,
        folders: &[std::path::PathBuf],
    ) -> Result<(String, Vec<std::path::PathBuf>), CoreError> {
        let given = folders
            .iter()
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        let had = {
            let file = self.load_mcp()?;
            find_server(&file, name)?.1.roots.clone()
        };
        let had_again = had.clone();
        let shown =
            crate::app::roots::checked_folders(given, had, "roots", MAX_SERVER_ROOTS).await?;
        // Read again after the check (which waits on the disk): a change made meanwhile to
        // anything else stays, and one to this server's folders is not written over.
        let mut file = self.load_mcp()?;
        let key = find_server(&file, name)?.0.clone();
        let entry = file.servers.get_mut(&key).expect("found above");
        if entry.roots != had_again {
            return Err(InvalidInput::new(
                "roots",
                "The server's folders were changed meanwhile (mcp.json); try again.",
            )
            .into());
        }
        entry.roots = shown;
        let folders = entry.root_folders();
        file.save(&self.mcp_file())?;
        tracing::info!(server = %key, roots = folders.len(), "MCP server's folders changed");
        Ok((key, folders))
    }

    /// Turns a server on or off in mcp.json (its approval is untouched).
    ///
    /// # Errors
    /// Not found; the file cannot be written.
    pub async fn mcp_set_disabled(
        &self,
        name: &str,
        disabled: bool,
    ) -> Result<McpServerView, CoreError> {
        let mut file = self.load_mcp()?;
        let key = find_server(&file, name)?.0.clone();
        if let Some(entry) = file.servers.get_mut(&key) {
            entry.disabled = disabled;
        }
        file.save(&self.mcp_file())?;
        tracing::info!(server = %key, disabled, "MCP server switched");
        self.mcp_server_view(key).await
    }
}

/// Where servers to import come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSource {
    /// JSON pasted into the window: Claude Desktop's or VS Code's shape, or a bare map.
    Text(String),
    /// A file the person named.
    File(std::path::PathBuf),
    /// Claude Desktop's own settings, at their usual place on this system
    /// ([`crate::mcp::config::claude_desktop_config_path`]; `None`: no such place is known).
    ClaudeDesktop(Option<std::path::PathBuf>),
}
