//! `<app config dir>/mcp.json`: MCP servers in Claude Desktop's shape (`{"mcpServers": {name:
//! {command, args, env, cwd}}}`), plus remote entries (`url`, `headers`, `transport`) and our
//! own keys (`disabled`, `timeoutSeconds`, `trust`, `oauth`). Reading, checking, writing atomically,
//! importing from Claude Desktop / VS Code / pasted JSON with a preview, moving secret values
//! to the keychain (the file keeps a reference), and the fingerprint a start approval is tied
//! to. Starting servers is [`super::launch`]'s business; this module never runs anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::secrets::{SecretError, SecretStore};
use crate::text::one_line;

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

/// One server as written in the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, ConfigValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, ConfigValue>,
    /// `stdio`, `http` or `sse`; VS Code writes it as `type`.
    #[serde(default, alias = "type", skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
    /// How to sign in to a remote server that asks for OAuth, when the defaults will not do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthEntry>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A remote server's `"oauth"` settings, all optional: a client registered beforehand
/// (`clientId`, and `clientSecret`, which goes to the keychain), an https client ID metadata
/// document that describes Switchboard (`clientMetadataUrl`), and the scopes to ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<ConfigValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

/// An `env` or `headers` value: written in the file, or kept in the OS keychain under an
/// account the file names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConfigValue {
    Plain(String),
    Keychain { keychain: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// Every call is asked about (the default).
    #[default]
    Ask,
    /// The person trusts this server: its `readOnlyHint` is believed.
    Trusted,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum Launch {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, ConfigValue>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP; `fallback_to_sse` when the transport was not named, so a server that
    /// answers like a legacy HTTP+SSE one is retried as that.
    Http {
        url: String,
        headers: BTreeMap<String, ConfigValue>,
        fallback_to_sse: bool,
    },
    Sse {
        url: String,
        headers: BTreeMap<String, ConfigValue>,
    },
}

/// A server entry checked and ready to start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerSpec {
    pub name: String,
    pub launch: Launch,
    pub disabled: bool,
    pub timeout_secs: Option<u64>,
    pub trust: Trust,
    pub oauth: OAuthEntry,
    /// What a start approval is tied to; see [`ServerEntry::fingerprint`].
    pub fingerprint: String,
}

impl Launch {
    /// The command line or address exactly as it will run, for the approval dialog and lists.
    /// Secret values are shown as their keychain reference, never read.
    pub fn display(&self) -> String {
        match self {
            Launch::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut parts: Vec<String> = env
                    .iter()
                    .map(|(k, v)| format!("{k}={}", shell_quote(&v.display())))
                    .collect();
                parts.push(shell_quote(command));
                parts.extend(args.iter().map(|a| shell_quote(a)));
                let line = parts.join(" ");
                match cwd {
                    Some(dir) => format!("(in {}) {line}", dir.display()),
                    None => line,
                }
            }
            Launch::Http { url, .. } => format!("streamable HTTP {url}"),
            Launch::Sse { url, .. } => format!("HTTP+SSE {url}"),
        }
    }
}

impl ConfigValue {
    pub fn display(&self) -> String {
        match self {
            ConfigValue::Plain(v) => v.clone(),
            ConfigValue::Keychain { keychain } => format!("<keychain:{keychain}>"),
        }
    }
}

/// Quotes an argument for a POSIX shell when it needs it, so what is shown can be pasted.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
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

fn entry_error(name: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError::Entry {
        name: one_line(name, 80),
        problem: problem.into(),
    }
}

/// Checks a server name: 1 to 64 characters on one line, no `/` (it names keychain accounts).
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
    if name != raw {
        return Err(entry_error(
            raw,
            "the name has leading, trailing or repeated spaces or line breaks",
        ));
    }
    Ok(name)
}

impl ServerEntry {
    /// An entry from what a person typed in the window: a command line (shell quoting, with
    /// leading `KEY=value` words as its environment) or a URL — exactly one of them.
    ///
    /// # Errors
    /// Neither or both given, unbalanced quotes, no program, or a URL that is not http(s).
    pub fn from_typed(
        command_line: Option<&str>,
        url: Option<&str>,
    ) -> Result<ServerEntry, crate::InvalidInput> {
        use crate::InvalidInput;
        let command_line = command_line.map(str::trim).filter(|s| !s.is_empty());
        let url = url.map(str::trim).filter(|s| !s.is_empty());
        match (command_line, url) {
            (Some(line), None) => {
                let words = shell_words::split(line).map_err(|_| {
                    InvalidInput::new("command_line", "A quote in the command line is not closed.")
                })?;
                let mut env = BTreeMap::new();
                let mut words = words.into_iter().peekable();
                while let Some((key, value)) = words.peek().and_then(|w| env_assignment(w)) {
                    env.insert(key, ConfigValue::Plain(value));
                    words.next();
                }
                let command = words.next().ok_or_else(|| {
                    InvalidInput::new(
                        "command_line",
                        "Give the program to run, not only variables.",
                    )
                })?;
                Ok(ServerEntry {
                    command: Some(command),
                    args: words.collect(),
                    env,
                    ..ServerEntry::default()
                })
            }
            (None, Some(url)) => {
                let parsed = url::Url::parse(url).map_err(|_| {
                    InvalidInput::new("url", "Give a full address, like https://example.com/mcp.")
                })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(InvalidInput::new(
                        "url",
                        "The address must start with http:// or https://.",
                    ));
                }
                Ok(ServerEntry {
                    url: Some(url.to_owned()),
                    ..ServerEntry::default()
                })
            }
            (None, None) => Err(InvalidInput::new(
                "command_line",
                "Give the command that starts the server, or its address.",
            )),
            (Some(_), Some(_)) => Err(InvalidInput::new(
                "url",
                "Give a command line or an address, not both.",
            )),
        }
    }

    /// Checks the entry and works out its transport: the explicit `transport`, else `command`
    /// → stdio, else `url` → streamable HTTP with a fallback to legacy SSE.
    ///
    /// # Errors
    /// [`ConfigError::Entry`] naming the server and the problem.
    pub fn resolve(&self, name: &str) -> Result<ServerSpec, ConfigError> {
        let name = validate_name(name)?;
        let explicit = match self.transport.as_deref().map(str::trim) {
            None | Some("") => None,
            Some("stdio") => Some(Kind::Stdio),
            Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => {
                Some(Kind::Http)
            }
            Some("sse") => Some(Kind::Sse),
            Some(other) => {
                return Err(entry_error(
                    &name,
                    format!(
                        "unknown transport “{}” (use stdio, http or sse)",
                        one_line(other, 40)
                    ),
                ))
            }
        };
        let command = self
            .command
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty());
        let kind = match (explicit, command, &self.url) {
            (Some(k), _, _) => k,
            (None, Some(_), _) => Kind::Stdio,
            (None, None, Some(_)) => Kind::Auto,
            (None, None, None) => {
                return Err(entry_error(
                    &name,
                    "give either a `command` to run or a `url` to connect to",
                ))
            }
        };
        if let Some(0) = self.timeout_seconds {
            return Err(entry_error(&name, "`timeoutSeconds` must be at least 1"));
        }
        let launch = match kind {
            Kind::Stdio => {
                let command = command
                    .ok_or_else(|| entry_error(&name, "a stdio server needs a `command`"))?;
                if self.url.is_some() {
                    return Err(entry_error(
                        &name,
                        "give either `command` or `url`, not both",
                    ));
                }
                for key in self.env.keys() {
                    if key.is_empty() || key.contains('=') || key.contains('\0') {
                        return Err(entry_error(
                            &name,
                            format!(
                                "“{}” is not a valid environment variable name",
                                one_line(key, 40)
                            ),
                        ));
                    }
                }
                Launch::Stdio {
                    command: command.to_owned(),
                    args: self.args.clone(),
                    env: self.env.clone(),
                    cwd: self
                        .cwd
                        .as_deref()
                        .filter(|c| !c.trim().is_empty())
                        .map(PathBuf::from),
                }
            }
            Kind::Http | Kind::Sse | Kind::Auto => {
                if command.is_some() {
                    return Err(entry_error(
                        &name,
                        "give either `command` or `url`, not both",
                    ));
                }
                let url = self
                    .url
                    .as_deref()
                    .ok_or_else(|| entry_error(&name, "a remote server needs a `url`"))?;
                let url = check_url(&name, url)?;
                let headers = self.headers.clone();
                match kind {
                    Kind::Sse => Launch::Sse { url, headers },
                    _ => Launch::Http {
                        url,
                        headers,
                        fallback_to_sse: kind == Kind::Auto,
                    },
                }
            }
        };
        Ok(ServerSpec {
            fingerprint: self.fingerprint(),
            name,
            launch,
            disabled: self.disabled,
            timeout_secs: self.timeout_seconds,
            trust: self.trust.unwrap_or_default(),
            oauth: self.oauth.clone().unwrap_or_default(),
        })
    }

    /// A hash of everything that decides what runs or where it connects: command, args, env,
    /// cwd, URL, headers and transport (keychain references by name). A change to any of them
    /// needs a new approval; `disabled`, `timeoutSeconds` and `trust` do not.
    pub fn fingerprint(&self) -> String {
        let canonical = serde_json::json!({
            "command": self.command,
            "args": self.args,
            "env": self.env,
            "cwd": self.cwd,
            "url": self.url,
            "headers": self.headers,
            "transport": self.transport,
        });
        let digest = Sha256::digest(canonical.to_string().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    Http,
    Sse,
    Auto,
}

fn check_url(name: &str, raw: &str) -> Result<String, ConfigError> {
    let url = url::Url::parse(raw.trim()).map_err(|e| {
        entry_error(
            name,
            format!("“{}” is not a valid URL ({e})", one_line(raw, 80)),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(entry_error(
            name,
            "the URL must start with http:// or https://",
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(entry_error(
            name,
            "don’t put credentials in the URL; use `headers` (kept in the OS keychain)",
        ));
    }
    Ok(url.to_string())
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
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| err(&e))?;
        let mut text = serde_json::to_string_pretty(self).map_err(|e| err(&e))?;
        text.push('\n');
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| err(&e))?;
        std::io::Write::write_all(&mut tmp, text.as_bytes()).map_err(|e| err(&e))?;
        tmp.persist(path).map_err(|e| err(&e.error))?;
        Ok(())
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
            preview.added.push(ImportItem {
                name: name.clone(),
                detail: spec.launch.display(),
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

/// Whether an env or header name usually holds a secret (a token, key or password).
pub fn looks_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "authorization"
        || [
            "token",
            "secret",
            "password",
            "passwd",
            "api_key",
            "apikey",
            "api-key",
            "_key",
            "-key",
            "credential",
            "_pat",
            "auth",
        ]
        .iter()
        .any(|w| lower.contains(w))
}

/// The keychain account a server's secret value is kept under.
pub fn secret_account(server: &str, place: &str, key: &str) -> String {
    format!("mcp/{server}/{place}/{key}")
}

/// Moves every plain `env` / `headers` value whose name looks secret into the keychain and
/// leaves a reference in the entry. Returns the names moved.
///
/// # Errors
/// The keychain refused a value; values already moved stay moved (the entry is not changed).
pub fn move_secrets_to_keychain(
    server: &str,
    entry: &mut ServerEntry,
    secrets: &dyn SecretStore,
) -> Result<Vec<String>, SecretError> {
    let mut moved = Vec::new();
    let mut updated = entry.clone();
    // A plain, non-empty value goes to the keychain and the entry keeps its reference.
    let mut keep = |place: &str, key: &str, value: &mut ConfigValue| -> Result<(), SecretError> {
        let ConfigValue::Plain(plain) = value else {
            return Ok(());
        };
        if plain.is_empty() {
            return Ok(());
        }
        let account = secret_account(server, place, key);
        secrets.set(&account, &secrecy::SecretString::from(plain.clone()))?;
        *value = ConfigValue::Keychain { keychain: account };
        moved.push(format!("{place}.{key}"));
        Ok(())
    };
    for (place, values) in [("env", &mut updated.env), ("headers", &mut updated.headers)] {
        for (key, value) in values.iter_mut().filter(|(key, _)| looks_secret(key)) {
            keep(place, key, value)?;
        }
    }
    // An OAuth client secret is a secret whatever it is called.
    if let Some(value) = updated
        .oauth
        .as_mut()
        .and_then(|o| o.client_secret.as_mut())
    {
        keep("oauth", "clientSecret", value)?;
    }
    *entry = updated;
    Ok(moved)
}

/// `KEY=value` with a shell variable name, as `(KEY, value)`.
fn env_assignment(word: &str) -> Option<(String, String)> {
    let (key, value) = word.split_once('=')?;
    let mut chars = key.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then(|| (key.to_owned(), value.to_owned()))
}

#[cfg(test)]
mod tests;
