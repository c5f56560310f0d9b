//! From a checked server entry to everything needed to start or reach it: keychain references
//! read; for a program, the command resolved on the login shell's `PATH`, the environment built
//! from the allowlist, the working folder and the stderr log file; for a remote server, its URL,
//! headers and transport.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};

use super::config::{ConfigValue, Launch, ServerSpec};
use super::elicitation::Elicitation;
use super::environment::{resolve_command, server_env};
use super::oauth::{KeychainTokens, OAuthSettings, RemoteAuth};
use super::remote::{self, RemoteLaunch, RemoteTransport};
use super::server::{McpError, McpServer};
use super::stdio::{self, StdioLaunch};
use crate::secrets::SecretStore;

/// How long a server has to answer `initialize` (an `npx -y` first run downloads packages).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How to start or reach one server.
#[derive(Debug, Clone)]
pub enum ServerLaunch {
    Stdio(StdioLaunch),
    Remote(RemoteLaunch),
}

impl ServerLaunch {
    /// The resolved path of the program (a local server) or the address (a remote one).
    pub fn resolved(&self) -> String {
        match self {
            ServerLaunch::Stdio(launch) => launch.program.display().to_string(),
            ServerLaunch::Remote(launch) => launch.url.clone(),
        }
    }

    /// The same launch, with forms shown by `elicitation`.
    #[must_use]
    pub fn with_elicitation(mut self, elicitation: Elicitation) -> ServerLaunch {
        match &mut self {
            ServerLaunch::Stdio(launch) => launch.elicitation = elicitation,
            ServerLaunch::Remote(launch) => launch.elicitation = elicitation,
        }
        self
    }

    /// The same launch, giving the server `roots` as its folders.
    #[must_use]
    pub fn with_roots(mut self, roots: Vec<std::path::PathBuf>) -> ServerLaunch {
        let roots = super::client::Roots::new(roots);
        match &mut self {
            ServerLaunch::Stdio(launch) => launch.roots = roots,
            ServerLaunch::Remote(launch) => launch.roots = roots,
        }
        self
    }

    /// Starts or connects to the server and completes the MCP handshake; `spawned` is called
    /// with a local server's process id as soon as it exists.
    ///
    /// # Errors
    /// As [`stdio::start_with`] and [`remote::connect`].
    pub async fn connect(
        &self,
        name: &str,
        spawned: impl Fn(Option<u32>) + Send + Sync,
    ) -> Result<McpServer, McpError> {
        match self {
            ServerLaunch::Stdio(launch) => stdio::start_with(name, launch.clone(), spawned).await,
            ServerLaunch::Remote(launch) => remote::connect(name, launch).await,
        }
    }
}

impl From<StdioLaunch> for ServerLaunch {
    fn from(launch: StdioLaunch) -> Self {
        ServerLaunch::Stdio(launch)
    }
}

impl From<RemoteLaunch> for ServerLaunch {
    fn from(launch: RemoteLaunch) -> Self {
        ServerLaunch::Remote(launch)
    }
}

/// Everything needed to reach a remote server: its headers' keychain references read.
///
/// # Errors
/// Not a remote server, or a secret that cannot be read.
pub fn remote_launch(
    spec: &ServerSpec,
    secrets: &Arc<dyn SecretStore>,
) -> Result<RemoteLaunch, McpError> {
    let (url, headers, transport) = match &spec.launch {
        Launch::Http {
            url,
            headers,
            fallback_to_sse,
        } => (
            url,
            headers,
            if *fallback_to_sse {
                RemoteTransport::HttpThenSse
            } else {
                RemoteTransport::Http
            },
        ),
        Launch::Sse { url, headers } => (url, headers, RemoteTransport::Sse),
        Launch::Stdio { .. } => {
            return Err(McpError::Spawn {
                server: spec.name.clone(),
                detail: "this server is started as a program, not reached over HTTP".into(),
            })
        }
    };
    let oauth = &spec.oauth;
    let client_secret = match &oauth.client_secret {
        None => None,
        Some(value) => {
            let values = BTreeMap::from([("oauth.clientSecret".to_owned(), value.clone())]);
            let mut read = resolve_values(&spec.name, &values, &**secrets)?;
            read.pop().map(|(_, v)| SecretString::from(v))
        }
    };
    Ok(RemoteLaunch {
        url: url.clone(),
        headers: resolve_values(&spec.name, headers, &**secrets)?,
        transport,
        startup_timeout: STARTUP_TIMEOUT,
        auth: Some(RemoteAuth {
            settings: OAuthSettings {
                client_id: oauth.client_id.clone(),
                client_secret,
                client_metadata_url: oauth.client_metadata_url.clone(),
                scopes: oauth.scopes.clone(),
            },
            tokens: KeychainTokens::new(Arc::clone(secrets), &spec.name, url),
        }),
        elicitation: Elicitation::default(),
        roots: super::client::Roots::default(),
    })
}

/// Reads every keychain reference in `values`.
///
/// # Errors
/// A reference the keychain has no value for, or a keychain that cannot be asked.
pub fn resolve_values(
    server: &str,
    values: &BTreeMap<String, ConfigValue>,
    secrets: &dyn SecretStore,
) -> Result<Vec<(String, String)>, McpError> {
    values
        .iter()
        .map(|(key, value)| match value {
            ConfigValue::Plain(v) => Ok((key.clone(), v.clone())),
            ConfigValue::Keychain { keychain } => match secrets.get(keychain) {
                Ok(Some(secret)) => Ok((key.clone(), secret.expose_secret().to_owned())),
                Ok(None) => Err(McpError::Spawn {
                    server: server.to_owned(),
                    detail: format!("the OS keychain has no value for {key} (account “{keychain}”); set it again"),
                }),
                Err(e) => Err(McpError::Spawn {
                    server: server.to_owned(),
                    detail: format!("cannot read {key} from the OS keychain: {e}"),
                }),
            },
        })
        .collect()
}

/// Everything needed to start a stdio server. `search_path` is the login shell's `PATH`
/// merged with the app's; `own_env` is the app's environment (only the allowlist passes).
///
/// # Errors
/// Not a stdio server, a secret that cannot be read, or a command that cannot be found.
pub fn stdio_launch(
    spec: &ServerSpec,
    secrets: &dyn SecretStore,
    search_path: &OsStr,
    own_env: impl IntoIterator<Item = (OsString, OsString)>,
    home: &Path,
    log_dir: &Path,
) -> Result<StdioLaunch, McpError> {
    let Launch::Stdio {
        command,
        args,
        env,
        cwd,
    } = &spec.launch
    else {
        return Err(McpError::Spawn {
            server: spec.name.clone(),
            detail: "this server is reached over HTTP, not started as a program".into(),
        });
    };
    let declared = resolve_values(&spec.name, env, secrets)?;
    let stderr_masks = crate::logging::Masks::default();
    // `declared` is `env` read, in its order: the values read from the keychain are masked.
    for (value, (_, read)) in env.values().zip(&declared) {
        if matches!(value, ConfigValue::Keychain { .. }) {
            stderr_masks.add(read);
        }
    }
    let cwd = match cwd {
        Some(dir) if dir.is_absolute() => dir.clone(),
        Some(dir) => home.join(dir),
        None => home.to_path_buf(),
    };
    let program =
        resolve_command(command, search_path, &cwd).map_err(|detail| McpError::Spawn {
            server: spec.name.clone(),
            detail,
        })?;
    Ok(StdioLaunch {
        program,
        args: args.clone(),
        env: server_env(
            own_env,
            search_path,
            declared.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ),
        cwd: Some(cwd),
        stderr_log: Some(stderr_log_path(log_dir, &spec.name)),
        stderr_masks,
        startup_timeout: STARTUP_TIMEOUT,
        elicitation: Elicitation::default(),
        roots: super::client::Roots::default(),
        sandbox: None,
    })
}

/// `<log dir>/mcp/<server>.log`, with characters a file name cannot hold replaced.
pub fn stderr_log_path(log_dir: &Path, server: &str) -> PathBuf {
    let safe: String = server
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_. ".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    log_dir.join("mcp").join(format!("{safe}.log"))
}
