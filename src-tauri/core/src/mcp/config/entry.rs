//! One server as written in mcp.json (a program to run, or an address to reach), checked into
//! a [`ServerSpec`] ready to start, shown as the exact command line a person approves, and
//! fingerprinted so that approval holds only for what was shown.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{entry_error, validate_name, ConfigError};
use crate::text::one_line;

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
    /// Folders the server is given as its roots (absolute paths; `~/` is the home folder).
    /// Not part of the approval: they are chosen by the person, one by one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<String>,
    /// What a local server may read, write and reach ([`crate::sandbox`]); part of the
    /// approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxEntry>,
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
    /// The folders given to it as its roots ([`ServerEntry::roots`], made absolute).
    pub roots: Vec<std::path::PathBuf>,
    /// Its sandbox as mcp.json gives it (`None`: none written).
    pub sandbox: Option<crate::sandbox::SandboxEntry>,
}

impl ServerSpec {
    /// What its sandbox's words are about: its roots, `home`, and its command (none for a
    /// remote server).
    pub fn sandbox_about<'a>(&'a self, home: &'a std::path::Path) -> crate::sandbox::About<'a> {
        let (program, args, cwd): (&str, &[String], _) = match &self.launch {
            Launch::Stdio {
                command, args, cwd, ..
            } => (command, args, cwd.as_deref()),
            Launch::Http { .. } | Launch::Sse { .. } => ("", &[], None),
        };
        crate::sandbox::About {
            roots: &self.roots,
            home,
            program,
            args,
            cwd,
        }
    }
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

impl Launch {
    /// [`Launch::display`] with a remote server's headers, each on a line of its own, every
    /// value as it is (a keychain reference by name), and hidden characters as escapes: what a
    /// consent screen shows of an entry that came from outside (a link, an import).
    pub fn display_whole(&self) -> String {
        crate::text::escaped_lines(&self.lines_whole())
    }

    /// The lines of [`Launch::display_whole`] before their hidden characters are escaped.
    pub fn lines_whole(&self) -> Vec<String> {
        let mut lines = vec![self.display()];
        if let Launch::Http { headers, .. } | Launch::Sse { headers, .. } = self {
            lines.extend(
                headers
                    .iter()
                    .map(|(k, v)| format!("  header {k}: {}", v.display())),
            );
        }
        lines
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

impl ServerEntry {
    /// An entry from what a person typed in the window: a command line (shell quoting, with
    /// leading `KEY=value` words as its environment) or a URL — exactly one of them.
    ///
    /// # Errors
    /// Neither or both given, unbalanced quotes, no program, or a URL that is not http(s).
    pub fn from_typed(
        command_line: Option<&str>,
        url: Option<&str>,
    ) -> Result<ServerEntry, crate::input::InvalidInput> {
        use crate::input::InvalidInput;
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

    /// Every keychain account the entry refers to: in `env`, `headers` and the OAuth client
    /// secret.
    pub fn keychain_references(&self) -> Vec<String> {
        self.env
            .values()
            .chain(self.headers.values())
            .chain(self.oauth.as_ref().and_then(|o| o.client_secret.as_ref()))
            .filter_map(|v| match v {
                ConfigValue::Keychain { keychain } => Some(keychain.clone()),
                ConfigValue::Plain(_) => None,
            })
            .collect()
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
        if let Some(other) = self
            .keychain_references()
            .into_iter()
            .find(|account| !super::secrets::is_own_account(&name, account))
        {
            return Err(entry_error(
                &name,
                format!(
                    "it names the keychain entry “{}”, which is not its own: a server may use \
                     only the secrets stored for it (mcp/{name}/…)",
                    one_line(&other, 80)
                ),
            ));
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
            roots: self.root_folders(),
            sandbox: self.sandbox.clone(),
        })
    }

    /// [`ServerEntry::roots`] as absolute paths (`~/` expanded); any other is left out.
    pub fn root_folders(&self) -> Vec<std::path::PathBuf> {
        self.roots
            .iter()
            .filter_map(|raw| crate::paths::folder_of(raw))
            .collect()
    }

    /// A hash of everything that decides what runs, where it connects and what it may do
    /// unasked: command, args, env, cwd, URL, headers, transport (keychain references by name),
    /// `trust`, `oauth` (client id, secret reference, metadata URL, scopes) and `sandbox`. A
    /// change to any of them needs a new approval; `disabled` and `timeoutSeconds` do not.
    /// `trust`, `oauth` and `sandbox` count only when present, so an entry without them keeps
    /// the fingerprint it had before they counted.
    pub fn fingerprint(&self) -> String {
        let mut canonical = serde_json::json!({
            "command": self.command,
            "args": self.args,
            "env": self.env,
            "cwd": self.cwd,
            "url": self.url,
            "headers": self.headers,
            "transport": self.transport,
        });
        if let Some(trust) = self.trust {
            canonical["trust"] = serde_json::to_value(trust).unwrap_or_default();
        }
        if let Some(oauth) = &self.oauth {
            canonical["oauth"] = serde_json::to_value(oauth).unwrap_or_default();
        }
        if let Some(sandbox) = &self.sandbox {
            canonical["sandbox"] = serde_json::to_value(sandbox).unwrap_or_default();
        }
        let digest = Sha256::digest(canonical.to_string().as_bytes());
        hex::encode(digest)
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
    if url.scheme() == "http" && !crate::net::is_local_network_name(&url) {
        return Err(entry_error(
            name,
            "plain http:// is only for this computer or a private network (a header or token \
             would cross the internet in clear); use https://",
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

/// `KEY=value` with a shell variable name, as `(KEY, value)`.
fn env_assignment(word: &str) -> Option<(String, String)> {
    let (key, value) = word.split_once('=')?;
    let mut chars = key.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then(|| (key.to_owned(), value.to_owned()))
}
