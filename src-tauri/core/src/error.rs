//! The error a caller of [`crate::App`] sees: one enum over the layers below it.
//!
//! Each layer keeps its own typed error (`StoreError`, `SecretError`, `SettingsError`); this
//! module only composes them (with [`InvalidInput`], the error for a bad value a person typed,
//! which is [`crate::input`]'s) and adds [`DatabaseUnavailable`], why the database could not be
//! opened. It imports nothing above the layers it composes.

pub use crate::input::InvalidInput;
use crate::mcp::bundle::BundleError;
use crate::mcp::config::ConfigError;
use crate::mcp::install::InstallError;
use crate::mcp::registry::RegistryError;
use crate::mcp::server::McpError;
use crate::providers::ProviderError;
use crate::secrets::SecretError;
use crate::settings::SettingsError;
use crate::shell_command::ShellCommandError;
use crate::store::StoreError;
use crate::updates::UpdateError;

/// Why the database is not available, kept for the app's lifetime so every caller can say so.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize, ts_rs::TS)]
#[error("{message}")]
pub struct DatabaseUnavailable {
    /// `locked`, `corrupt`, `too_new` or `open`.
    pub reason: &'static str,
    pub message: String,
}

impl From<&StoreError> for DatabaseUnavailable {
    fn from(err: &StoreError) -> Self {
        let reason = match err {
            StoreError::Locked { .. } => "locked",
            StoreError::Corrupt { .. } => "corrupt",
            StoreError::TooNew { .. } => "too_new",
            _ => "open",
        };
        Self {
            reason,
            message: err.to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    #[error(transparent)]
    Invalid(#[from] InvalidInput),
    #[error("Not found: {what}")]
    NotFound { what: String },
    #[error("{message}")]
    Conflict {
        field: &'static str,
        message: String,
    },
    /// A conversation answers one message at a time.
    #[error("This conversation is already answering; stop it or wait.")]
    RunUnderWay,
    /// The app is quitting: nothing new starts.
    #[error("Switchboard is quitting; nothing new can start.")]
    Quitting,
    #[error(transparent)]
    DatabaseUnavailable(#[from] DatabaseUnavailable),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    /// Storing a key failed; said so that nobody wonders where else it went.
    #[error("{0}; the key was not saved, and nothing was saved anywhere else")]
    KeyNotSaved(SecretError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    McpConfig(#[from] ConfigError),
    #[error(transparent)]
    Mcp(#[from] McpError),
    /// An MCP Registry gave no answer to use.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A server the registry describes cannot be installed as asked.
    #[error(transparent)]
    Install(#[from] InstallError),
    /// An MCP bundle (`.mcpb`) that cannot be installed as asked.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// The app's own update was not checked for or installed.
    #[error(transparent)]
    Update(#[from] UpdateError),
    /// The `switchboard` command was not put on the PATH, or not taken off it.
    #[error(transparent)]
    ShellCommand(#[from] ShellCommandError),
    #[error("Cannot read {what}: {detail}")]
    Io { what: String, detail: String },
    /// The person's file manager could not be opened on a folder.
    #[error("Cannot open {folder} in the file manager: {detail}.")]
    ShowFolder { folder: String, detail: String },
    /// A damaged database could not be set aside ([`crate::app::App::set_aside_database`]).
    #[error("Cannot set {file} aside: {detail}. Nothing was moved.")]
    SetAside { file: String, detail: String },
    /// The server is new or changed since the person approved it: it does not start until
    /// they approve `command_line` as it is now.
    #[error("“{server}” needs your approval before it starts, because it is new or changed since you last approved it. It would run:\n{command_line}")]
    NeedsApproval {
        server: String,
        command_line: String,
    },
    /// The person said no (or closed the dialog) when asked outside the webview; nothing
    /// changed.
    #[error("Not done: you did not confirm {what}.")]
    NotConfirmed { what: String },
}

/// What kind of error it is, for code to tell apart ([`CoreError::kind`]); the words are
/// the message's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A value the person gave does not fit (see `field`).
    InvalidInput,
    NotFound,
    /// It clashes with what is there, or a run is under way, or the app is quitting.
    Conflict,
    Database,
    Keychain,
    Settings,
    Provider,
    McpConfig,
    Mcp,
    Registry,
    Install,
    Update,
    NeedsApproval,
    Io,
    /// The person did not confirm in the native dialog.
    NotConfirmed,
    /// Stopped at the person's word (a model's download cancelled).
    Cancelled,
}

impl ErrorKind {
    /// Its name on the wire (`invalid_input`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Database => "database",
            ErrorKind::Keychain => "keychain",
            ErrorKind::Settings => "settings",
            ErrorKind::Provider => "provider",
            ErrorKind::McpConfig => "mcp_config",
            ErrorKind::Mcp => "mcp",
            ErrorKind::Registry => "registry",
            ErrorKind::Install => "install",
            ErrorKind::Update => "update",
            ErrorKind::NeedsApproval => "needs_approval",
            ErrorKind::Io => "io",
            ErrorKind::NotConfirmed => "not_confirmed",
            ErrorKind::Cancelled => "cancelled",
        }
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The one error shape the window sees: every command rejects with `{ kind, message, field }`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct IpcError {
    pub kind: ErrorKind,
    pub message: String,
    /// For `invalid_input` and `conflict`: the form field at fault.
    pub field: Option<&'static str>,
}

impl From<crate::skills::SkillError> for CoreError {
    fn from(err: crate::skills::SkillError) -> Self {
        use crate::skills::SkillError as E;
        match err {
            E::NotFound(name) => CoreError::NotFound {
                what: format!("the skill “{name}”"),
            },
            E::Exists(_) => CoreError::Conflict {
                field: "skill",
                message: err.to_string(),
            },
            E::Io { path, detail } => CoreError::Io { what: path, detail },
            E::Invalid(_) | E::Archive(_) => InvalidInput::new("skill", err.to_string()).into(),
        }
    }
}

impl From<CoreError> for IpcError {
    fn from(err: CoreError) -> Self {
        Self {
            kind: err.kind(),
            field: err.field(),
            message: err.to_string(),
        }
    }
}

impl From<SettingsError> for IpcError {
    fn from(err: SettingsError) -> Self {
        CoreError::from(err).into()
    }
}

impl CoreError {
    /// Marks a keychain failure as one that happened while storing a key.
    pub fn key_not_saved(err: CoreError) -> CoreError {
        match err {
            CoreError::Secret(e) => CoreError::KeyNotSaved(e),
            other => other,
        }
    }

    /// A short machine-readable name for the IPC edge and `--json` output.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CoreError::Invalid(_) | CoreError::Settings(SettingsError::Invalid(_)) => {
                ErrorKind::InvalidInput
            }
            CoreError::NotFound { .. } | CoreError::Store(StoreError::NotFound { .. }) => {
                ErrorKind::NotFound
            }
            CoreError::Conflict { .. }
            | CoreError::RunUnderWay
            | CoreError::Quitting
            | CoreError::Store(StoreError::Conflict { .. }) => ErrorKind::Conflict,
            CoreError::DatabaseUnavailable(_) | CoreError::Store(_) => ErrorKind::Database,
            CoreError::Secret(_) | CoreError::KeyNotSaved(_) => ErrorKind::Keychain,
            CoreError::Settings(_) => ErrorKind::Settings,
            CoreError::Provider(crate::providers::ProviderError::Cancelled) => ErrorKind::Cancelled,
            CoreError::Provider(_) => ErrorKind::Provider,
            CoreError::McpConfig(_) => ErrorKind::McpConfig,
            CoreError::Mcp(_) => ErrorKind::Mcp,
            CoreError::Registry(_) => ErrorKind::Registry,
            CoreError::Install(_) | CoreError::Bundle(_) | CoreError::ShellCommand(_) => {
                ErrorKind::Install
            }
            CoreError::NeedsApproval { .. } => ErrorKind::NeedsApproval,
            CoreError::Update(_) => ErrorKind::Update,
            CoreError::Io { .. } | CoreError::SetAside { .. } | CoreError::ShowFolder { .. } => {
                ErrorKind::Io
            }
            CoreError::NotConfirmed { .. } => ErrorKind::NotConfirmed,
        }
    }

    /// The form field at fault, when there is one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            CoreError::Invalid(e) | CoreError::Settings(SettingsError::Invalid(e)) => Some(e.field),
            CoreError::Conflict { field, .. } => Some(field),
            CoreError::KeyNotSaved(_) => Some("api_key"),
            _ => None,
        }
    }
}
