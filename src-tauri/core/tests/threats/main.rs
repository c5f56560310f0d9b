//! The threat suite: one test per way around Switchboard's trust boundary, each named as the
//! attack it stops. A file per boundary; see the README for the count.

mod damaged_database;
mod forms;
mod hostile_servers;
mod links;
mod notification_flood;
mod oauth_pages;
mod plain_http;
mod power_pull;
mod provider_redirects;
mod repeated_call_ids;
mod scripted;
mod server_approval;
mod server_removal;
mod terminal;
mod unwritable_database;
mod webview_grants;

#[path = "../support/mod.rs"]
mod support;
