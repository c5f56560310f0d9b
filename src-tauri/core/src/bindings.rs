//! The TypeScript side of the IPC edge, generated from Rust: `ui/src/lib/bindings.ts` declares
//! every type a command takes or returns and every event it streams. The test here fails when
//! that file and these types disagree; `UPDATE_BINDINGS=1 cargo test -p switchboard-core
//! bindings` writes it anew. Owns the list of types only: each type's shape is its own module's;
//! and the check that a file written from Rust for the window's side (`matches_golden`) is up
//! to date.

#![cfg(test)]

use std::fmt::Write;

use ts_rs::{Config, TS};

const HEADER: &str =
    "// Generated from Rust by switchboard-core's `bindings` test: never edit by hand.\n\
// After changing a type that crosses the IPC edge, run\n\
//   UPDATE_BINDINGS=1 cargo test -p switchboard-core bindings\n\
// and commit the result; the test command fails while this file and Rust disagree.\n\n";

fn declare<T: TS + ?Sized + 'static>(out: &mut String, cfg: &Config) {
    if let Some(docs) = T::docs() {
        out.push_str(&docs);
    }
    let _ = write!(out, "export {}\n\n", T::decl(cfg));
}

/// The whole file, in a fixed order.
fn bindings() -> String {
    // JSON numbers arrive as JavaScript numbers, whatever their Rust width.
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(HEADER);
    macro_rules! declare_all {
        ($($t:ty),* $(,)?) => { $( declare::<$t>(&mut out, &cfg); )* };
    }
    declare_all!(
        serde_json::Value,
        // errors and the app
        crate::error::ErrorKind,
        crate::error::IpcError,
        crate::app::AppStatus,
        crate::app::KeychainStatus,
        crate::error::DatabaseUnavailable,
        crate::settings::Theme,
        crate::settings::Settings,
        // conversations
        crate::store::Conversation,
        crate::store::ToolToggle,
        crate::store::ProfileFields,
        crate::store::Profile,
        crate::app::ImportedProfile,
        crate::app::ProfileChoice,
        crate::app::ComparedModel,
        crate::app::Draft,
        crate::store::Role,
        crate::store::MessageStatus,
        crate::attachments::AttachmentKind,
        crate::attachments::Attachment,
        crate::attachments::AttachmentRef,
        crate::attachments::Attached,
        crate::app::DropEvent,
        crate::store::Message,
        crate::store::Summary,
        crate::store::ContextUse,
        crate::store::ToolOffer,
        crate::store::ModelWindow,
        crate::store::WindowSource,
        crate::store::ToolDecision,
        crate::store::ApprovalScope,
        crate::store::ToolRun,
        crate::mcp::results::ResultPart,
        crate::mcp::results::ResultView,
        crate::store::StandingApproval,
        crate::store::SnippetPart,
        crate::store::SearchHit,
        crate::store::ExportFormat,
        crate::app::ConversationDetail,
        crate::store::BranchPoint,
        crate::store::SwitchedBranch,
        crate::store::MessagePage,
        crate::app::ConversationTool,
        crate::app::ToolSuggestion,
        crate::app::ConversationArtifact,
        crate::app::ToolLink,
        // what models cost
        crate::price::Price,
        crate::store::PriceSource,
        crate::store::ModelPrice,
        crate::store::UsageTotal,
        crate::store::UsageDay,
        crate::app::UsageReport,
        // a run's events and approvals
        crate::events::CallRef,
        crate::events::StopReason,
        crate::events::ProposedCall,
        crate::events::ApprovalItem,
        crate::events::RunEvent,
        crate::agent::Decision,
        crate::agent::ApprovalAnswer,
        // providers
        crate::provider_config::ProviderKind,
        crate::provider_config::ProviderKindInfo,
        crate::provider_config::Preset,
        crate::provider_config::Provider,
        crate::app::NewProvider,
        crate::providers::ModelInfo,
        crate::app::ConnectionReport,
        crate::app::LocalServer,
        // MCP servers
        crate::mcp::host::ServerState,
        crate::app::McpServerView,
        crate::app::McpServerStatus,
        // the MCP Registry
        crate::mcp::registry::SearchPage,
        crate::mcp::registry::FoundServer,
        crate::mcp::registry::Source,
        crate::mcp::registry::SourceKind,
        crate::mcp::registry::Need,
        crate::mcp::registry::NeedKind,
        crate::app::InstallRequest,
        crate::mcp::bundle::BundleInfo,
        crate::mcp::bundle::BundleTool,
        crate::mcp::bundle::BundleOption,
        crate::app::OfferedBundle,
        crate::app::BundleInstallRequest,
        crate::updates::UpdateStatus,
        crate::updates::UpdateProgress,
        crate::shell_command::ShellCommandStatus,
        crate::mcp::proposal::ShownProposal,
        crate::policy::pins::ToolStatus,
        crate::app::ToolReview,
        crate::mcp::server::HeldBackTool,
        crate::mcp::features::OfferedResource,
        crate::mcp::features::OfferedTemplate,
        crate::mcp::features::OfferedArgument,
        crate::mcp::features::OfferedPrompt,
        crate::mcp::features::ServerOffers,
        crate::app::OffersOf,
        crate::app::PromptUse,
        crate::mcp::config::ImportItem,
        crate::mcp::config::ImportPreview,
        crate::mcp::elicitation::ChoiceOption,
        crate::mcp::elicitation::FieldKind,
        crate::mcp::elicitation::ElicitField,
        crate::mcp::elicitation::UrlVisit,
        crate::mcp::elicitation::ElicitationRequest,
        crate::mcp::apps::McpAppView,
        crate::mcp::elicitation::ElicitationAnswer,
    );
    out.trim_end().to_owned() + "\n"
}

#[test]
fn the_typescript_bindings_match_rust() {
    matches_golden(
        "ui/src/lib/bindings.ts",
        &bindings(),
        "UPDATE_BINDINGS=1 cargo test -p switchboard-core bindings",
    );
}

/// Asserts that the file at `path` (from the repository's root), written from Rust for the
/// window's side, holds `now`; with `UPDATE_BINDINGS` set, writes `now` there instead.
/// `update` is the command that writes it, for the failure to say.
pub(crate) fn matches_golden(path: &str, now: &str, update: &str) {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&file, now).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == now,
        "{path} does not match Rust: run\n  {update}\nand commit it"
    );
}
