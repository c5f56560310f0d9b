//! `<app config dir>/mcp.json`: MCP servers in Claude Desktop's shape (`{"mcpServers": {name:
//! {command, args, env, cwd}}}`), plus remote entries (`url`, `headers`, `transport`) and our
//! own keys (`disabled`, `timeoutSeconds`, `trust`, `oauth`). Reading, checking, writing atomically,
//! importing from Claude Desktop / VS Code / pasted JSON with a preview, moving secret values
//! to the keychain (the file keeps a reference), and the fingerprint a start approval is tied
//! to. Starting servers is [`super::launch`]'s business; this module never runs anything.
//!
//! Split by idea: [`entry`] is one server as written and checked (its launch, its
//! fingerprint), [`import`] reads other apps' files into a preview, [`secrets`] moves secret
//! values out of the file; this file is the file itself, its errors and server names.

mod entry;
mod import;
pub mod outside;
mod secrets;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::text::one_line;

pub use entry::{ConfigValue, Launch, OAuthEntry, ServerEntry, ServerSpec, Trust};
pub use import::{claude_desktop_config_path, ImportItem, ImportPreview};
pub use secrets::{is_own_account, looks_secret, move_secrets_to_keychain, secret_account};

pub const FILE_NAME: &str = "mcp.json";
pub const MAX_NAME_CHARS: usize = 64;
/// Used when neither the server nor Settings says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The whole file. Keys we do not know are kept as they were.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpFile {
    #[serde(rename = "mcpServers", default)]
    pub servers: BTreeMap<String, ServerEntry>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Why a file or an entry cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("Cannot read {path}: {detail}")]
    Read { path: String, detail: String },
    #[error("{path} is not valid JSON (line {line}, column {column}): {detail}")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        detail: String,
    },
    #[error("Cannot write {path}: {detail}")]
    Write { path: String, detail: String },
    #[error("Server “{name}”: {problem}")]
    Entry { name: String, problem: String },
    #[error("Nothing to import: {0}")]
    NothingToImport(String),
}

pub(super) fn entry_error(name: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError::Entry {
        name: one_line(name, 80),
        problem: problem.into(),
    }
}

/// Checks a server name: 1 to 64 characters on one line, no `/` (it names keychain accounts),
/// and no [hidden](crate::text::is_hidden) characters (a bidi override or a zero-width space
/// would make one server's name look like another's in an approval).
///
/// # Errors
/// [`ConfigError::Entry`] saying what is wrong.
pub fn validate_name(raw: &str) -> Result<String, ConfigError> {
    let name = one_line(raw, usize::MAX);
    if name.is_empty() {
        return Err(entry_error(raw, "a server needs a name"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(entry_error(
            &name,
            format!("keep the name to {MAX_NAME_CHARS} characters or fewer"),
        ));
    }
    if name.contains('/') {
        return Err(entry_error(&name, "a name cannot contain “/”"));
    }
    if let Some(hidden) = crate::text::first_hidden(&name) {
        return Err(entry_error(
            &crate::text::escape_hidden(&name),
            format!("a name cannot contain invisible characters ({hidden})"),
        ));
    }
    if name != raw {
        return Err(entry_error(
            raw,
            "the name has leading, trailing or repeated spaces or line breaks",
        ));
    }
    Ok(name)
}

impl McpFile {
    /// Reads the file; a missing file is an empty configuration.
    ///
    /// # Errors
    /// The file cannot be read, or is not the JSON shape above (with the line and column).
    pub fn load(path: &Path) -> Result<McpFile, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(McpFile::default()),
            Err(e) => {
                return Err(ConfigError::Read {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                })
            }
        };
        Self::parse(&text, &path.display().to_string())
    }

    /// # Errors
    /// Not the JSON shape above, with the line and column.
    pub fn parse(text: &str, origin: &str) -> Result<McpFile, ConfigError> {
        if text.trim().is_empty() {
            return Ok(McpFile::default());
        }
        serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
            path: origin.to_owned(),
            line: e.line(),
            column: e.column(),
            detail: e.to_string(),
        })
    }

    /// Writes the file whole, through a temporary file in the same folder and a rename, so a
    /// crash never leaves half a file.
    ///
    /// # Errors
    /// The folder or file cannot be written.
    pub fn save(&self, path: &Path) -> Result<(), ConfigError> {
        let err = |e: &dyn std::fmt::Display| ConfigError::Write {
            path: path.display().to_string(),
            detail: e.to_string(),
        };
        let mut text = serde_json::to_string_pretty(self).map_err(|e| err(&e))?;
        text.push('\n');
        crate::paths::write_whole(path, text.as_bytes()).map_err(|e| err(&e))
    }

    /// Every server, checked: a bad entry is reported by itself and does not hide the others.
    pub fn specs(&self) -> Vec<(String, Result<ServerSpec, ConfigError>)> {
        self.servers
            .iter()
            .map(|(name, entry)| (name.clone(), entry.resolve(name)))
            .collect()
    }

    /// The entry named `name`, ignoring case.
    pub fn find(&self, name: &str) -> Option<(&String, &ServerEntry)> {
        self.servers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.trim()))
    }
}

#[cfg(test)]
mod tests;
