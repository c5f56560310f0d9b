//! Importing servers from Claude Desktop's, VS Code's or pasted JSON: a preview of what would
//! be added (and what is skipped, and why) for the person to confirm before anything changes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::{ConfigError, McpFile, ServerEntry};

/// Where Claude Desktop keeps its configuration on this OS.
pub fn claude_desktop_config_path() -> Option<PathBuf> {
    // Linux: ~/.config/Claude; macOS: ~/Library/Application Support/Claude; Windows:
    // %APPDATA%\Claude — each OS's config dir, as Claude Desktop's documentation gives them.
    Some(
        dirs::config_dir()?
            .join("Claude")
            .join("claude_desktop_config.json"),
    )
}

/// What an import would do, for the person to confirm before anything changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct ImportPreview {
    /// New servers, with the command line or address each would run.
    pub added: Vec<ImportItem>,
    /// Servers whose name is already taken; not imported.
    pub conflicts: Vec<ImportItem>,
    /// Entries that cannot be used, with why.
    pub invalid: Vec<ImportItem>,
    /// Things to know about servers that are added (VS Code `${input:…}` values, …).
    pub warnings: Vec<String>,
    #[serde(skip)]
    entries: BTreeMap<String, ServerEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ImportItem {
    pub name: String,
    pub detail: String,
}

impl ImportPreview {
    /// Reads Claude Desktop's file (`mcpServers`), VS Code's (`servers`), or a bare map of
    /// servers, and compares it with `current`.
    ///
    /// # Errors
    /// Not JSON, or no servers in it.
    pub fn from_text(text: &str, origin: &str, current: &McpFile) -> Result<Self, ConfigError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
            path: origin.to_owned(),
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        })?;
        let servers = doc
            .get("mcpServers")
            .or_else(|| doc.get("servers"))
            .or_else(|| doc.get("mcp").and_then(|m| m.get("servers")))
            .cloned()
            .or_else(|| {
                // A bare map: every value looks like a server entry.
                let map = doc.as_object()?;
                let all_entries = !map.is_empty()
                    && map
                        .values()
                        .all(|v| v.get("command").is_some() || v.get("url").is_some());
                all_entries.then(|| doc.clone())
            })
            .and_then(|v| v.as_object().cloned())
            .ok_or_else(|| {
                ConfigError::NothingToImport(format!(
                    "{origin} has no `mcpServers` (Claude Desktop) or `servers` (VS Code) object"
                ))
            })?;
        if servers.is_empty() {
            return Err(ConfigError::NothingToImport(format!(
                "{origin} lists no servers"
            )));
        }
        let mut preview = ImportPreview::default();
        for (name, raw) in servers {
            let entry: ServerEntry = match serde_json::from_value(raw.clone()) {
                Ok(entry) => entry,
                Err(e) => {
                    preview.invalid.push(ImportItem {
                        name,
                        detail: e.to_string(),
                    });
                    continue;
                }
            };
            let spec = match entry.resolve(&name) {
                Ok(spec) => spec,
                Err(e) => {
                    preview.invalid.push(ImportItem {
                        name,
                        detail: e.to_string(),
                    });
                    continue;
                }
            };
            if current.find(&name).is_some()
                || preview
                    .entries
                    .keys()
                    .any(|n| n.eq_ignore_ascii_case(&name))
            {
                preview.conflicts.push(ImportItem {
                    name,
                    detail: "a server with this name already exists".into(),
                });
                continue;
            }
            if raw.to_string().contains("${input:") {
                preview.warnings.push(format!(
                    "“{name}” uses VS Code `${{input:…}}` values, which only VS Code can fill in: set them after importing"
                ));
            }
            // The person's own file: what would change how the runtime loads code is flagged,
            // not refused (a link, a registry entry or a bundle may not set it at all).
            if let Err(flag) = super::outside::check_entry(&entry, "this file") {
                preview.warnings.push(format!(
                    "“{name}” {}: check that you mean it before importing",
                    flag.what
                ));
            }
            preview.added.push(ImportItem {
                name: name.clone(),
                detail: spec.launch.display_whole(),
            });
            preview.entries.insert(name, entry);
        }
        Ok(preview)
    }

    /// The entries that would be added, by name.
    pub fn entries(&self) -> &BTreeMap<String, ServerEntry> {
        &self.entries
    }
}
