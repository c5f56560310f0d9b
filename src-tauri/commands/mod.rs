//! Thin IPC adapters, one file per area: parse the call, hand it to the core, map the error.

pub mod app;
pub mod apps;
pub mod artifacts;
pub mod attachments;
pub mod chat;
pub mod conversations;
pub mod error;
pub mod mcp;
pub mod profiles;
pub mod providers;
pub mod settings;
pub mod shell_command;
pub mod transfer;
pub mod updates;
pub mod usage;
