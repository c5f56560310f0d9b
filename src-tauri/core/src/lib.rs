//! switchboard-core: everything Switchboard does that is not drawing a window.
//!
//! Owns storage (SQLite), secrets (the OS keychain), settings, provider configuration, logging,
//! the single-instance guard and the headless command line. It must never depend on `tauri`:
//! the desktop shell in `src-tauri/` is a thin adapter over [`App`].

pub mod agent;
pub mod app;
pub mod archive;
pub mod attachments;
mod bindings;
pub mod cli;
pub mod error;
pub mod events;
pub mod input;
pub mod instance;
pub mod ipc;
pub mod knowledge;
pub mod links;
pub mod logging;
pub mod mcp;
pub mod net;
pub mod notify;
pub mod paths;
pub mod policy;
pub mod price;
pub mod provider_config;
pub mod providers;
pub mod sandbox;
pub mod schedules;
pub mod secrets;
pub mod settings;
pub mod shell_command;
pub mod skills;
pub mod store;
pub mod text;
pub mod updates;

pub use crate::app::{App, AppConfig};
pub use crate::app::{AppStatus, KeychainStatus};
pub use error::{CoreError, DatabaseUnavailable, ErrorKind, IpcError};
pub use input::InvalidInput;
pub use paths::AppPaths;
