//! The MCP host: servers configured in `mcp.json` ([`config`]), started as supervised child
//! processes or reached over HTTP, and their tools (issue 4).
//!
//! Must not know about providers, the UI or the tool loop: the loop asks this module for the
//! catalogue and to run a call.

pub mod apps;
pub mod artifacts;
pub mod bundle;
pub mod catalogue;
pub mod client;
pub mod config;
pub mod elicitation;
pub mod environment;
pub mod error;
pub mod features;
pub mod host;
mod http_client;
pub mod install;
pub mod launch;
mod listen;
pub mod nesting;
pub mod oauth;
pub mod pages;
pub mod process;
pub mod proposal;
pub mod registry;
pub mod remote;
pub mod results;
pub mod server;
pub mod skills;
pub mod sse;
pub mod stdio;
pub mod tasks;
