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
        crate::store::ProjectFields,
        crate::store::Project,
        crate::app::ProjectInput,
        crate::store::ProjectFile,
        crate::app::FilesProgress,
        crate::app::AddedFiles,
        crate::app::ImportedProject,
        crate::store::Memory,
        crate::app::ProfileChoice,
        crate::app::ComparedModel,
        crate::app::Draft,
        crate::store::Role,
        crate::store::MessageStatus,
        crate::store::StoredCall,
        crate::store::Finish,
        crate::attachments::AttachmentKind,
        crate::attachments::Attachment,
        crate::attachments::AttachmentRef,
        crate::attachments::Attached,
        crate::app::DropEvent,
        crate::store::Message,
        crate::store::Summary,
        crate::store::ContextUse,
        crate::store::ToolOffer,
        crate::knowledge::KnowledgeUse,
        crate::store::ModelWindow,
        crate::providers::ToolMode,
        crate::app::ToolModeChoice,
        crate::app::ToolModeSource,
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
        // skills
        crate::skills::SkillOrigin,
        crate::skills::SkillFile,
        crate::skills::Skill,
        crate::skills::scripts::ScriptsAllowed,
        crate::store::SkillUse,
        crate::app::SkillDetail,
        crate::app::ConversationSkill,
        crate::app::ShownScript,
        // schedules
        crate::schedules::TimeRule,
        crate::schedules::Missed,
        crate::schedules::NewSchedule,
        crate::schedules::Schedule,
        crate::store::RunStatus,
        crate::store::ScheduleRun,
        crate::ipc::ScheduleRunStarted,
        // long tasks
        crate::store::TaskState,
        crate::store::CallTask,
        crate::agent::controls::CallControl,
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
        // policies and the audit record
        crate::policy::rules::Outcome,
        crate::policy::rules::Test,
        crate::policy::rules::Rule,
        crate::policy::rules::Target,
        crate::policy::rules::PolicyFile,
        crate::policy::rules::Source,
        crate::policy::rules::RuleHit,
        crate::app::PolicyMark,
        crate::app::PolicyView,
        crate::store::AuditOrigin,
        crate::store::AuditDecision,
        crate::store::AuditEntry,
        crate::store::AuditFilter,
        crate::events::RunEvent,
        crate::agent::Decision,
        crate::agent::ApprovalAnswer,
        crate::agent::approval::ReviewVerdict,
        // providers
        crate::provider_config::ProviderKind,
        crate::provider_config::ProviderKindInfo,
        crate::provider_config::Preset,
        crate::provider_config::Provider,
        crate::app::NewProvider,
        crate::providers::ModelInfo,
        crate::providers::LocalModel,
        crate::app::PullProgress,
        crate::providers::ProviderFailure,
        crate::app::ConnectionFailure,
        crate::app::ConnectionReport,
        crate::app::LocalServer,
        // MCP servers
        crate::mcp::host::ServerState,
        crate::app::Transport,
        crate::app::McpServerView,
        crate::app::ServerSandbox,
        crate::sandbox::SandboxEntry,
        crate::sandbox::Network,
        crate::sandbox::Reach,
        crate::app::CommandParts,
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

/// The window's typed client: one function per command, in the order the areas declare them,
/// with its arguments in Rust's order (those that may be `null` at the end are optional) and a
/// callback for each channel.
fn commands_client() -> String {
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(
        HEADER
            .replace("bindings` test", "bindings` test (crate::ipc)")
            .as_str(),
    );
    let mut named = std::collections::BTreeSet::new();
    let mut body = String::new();
    for command in crate::ipc::all() {
        let args: Vec<(String, String)> = command
            .args
            .iter()
            .map(|(name, ts)| (crate::ipc::camel(name), ts(&cfg)))
            .collect();
        let ret = match (command.ret)(&cfg) {
            unit if unit == "null" => "void".to_owned(),
            other => other,
        };
        for ts in args.iter().map(|(_, ts)| ts).chain([&ret]) {
            named.extend(type_names(ts));
        }
        // The arguments that may be left out: the nullable ones after the last that may not.
        let required = args
            .iter()
            .rposition(|(_, ts)| !ts.ends_with("| null"))
            .map_or(0, |last| last + 1);
        let mut params = Vec::new();
        let mut sent = Vec::new();
        for (i, (name, ts)) in args.iter().enumerate() {
            // `arguments` and `eval` cannot name a parameter in strict mode.
            let param = if matches!(name.as_str(), "arguments" | "eval") {
                format!("{name}_")
            } else {
                name.clone()
            };
            let (decl, value) = if let Some(item) = ts
                .strip_prefix("Channel<")
                .and_then(|t| t.strip_suffix('>'))
            {
                (
                    format!("{param}: (message: {item}) => void"),
                    format!("channel({param})"),
                )
            } else if i >= required {
                (format!("{param}?: {ts}"), format!("{param} ?? null"))
            } else {
                (format!("{param}: {ts}"), param.clone())
            };
            params.push(decl);
            sent.push(if value == *name {
                value
            } else {
                format!("{name}: {value}")
            });
        }
        let doc: Vec<&str> = command.doc.lines().map(str::trim).collect();
        if !doc.iter().all(|l| l.is_empty()) {
            body.push_str("/**\n");
            for line in &doc {
                let _ = writeln!(body, " *{}{line}", if line.is_empty() { "" } else { " " });
            }
            body.push_str(" */\n");
        }
        let function = crate::ipc::camel(command.name);
        let sent = if sent.is_empty() {
            String::new()
        } else {
            format!(", {{ {} }}", sent.join(", "))
        };
        let _ = write!(
            body,
            "export function {function}({}): Promise<{ret}> {{\n  return call(\"{}\"{sent});\n}}\n\n",
            params.join(", "),
            command.name,
        );
    }
    named.retain(|n| !matches!(n.as_str(), "Array" | "Record" | "Partial" | "Channel"));
    let imports: Vec<&str> = named.iter().map(String::as_str).collect();
    let _ = write!(
        out,
        "import {{ call, channel }} from \"./invoke\";\nimport type {{ {} }} from \"./bindings\";\n\n",
        imports.join(", ")
    );
    out.push_str(&body);
    out.trim_end().to_owned() + "\n"
}

/// The type names a TypeScript type expression uses (`Array<Conversation> | null`:
/// `Array`, `Conversation`).
fn type_names(ts: &str) -> Vec<String> {
    ts.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| w.starts_with(|c: char| c.is_ascii_uppercase()))
        .map(str::to_owned)
        .collect()
}

/// The names of the window's commands, one a line: the shell's `build.rs` grants the window
/// these and nothing else.
fn command_names() -> String {
    let mut out = String::from(
        "# Generated from Rust by switchboard-core's `bindings` test (crate::ipc): never edit by hand.\n",
    );
    for command in crate::ipc::all() {
        out.push_str(command.name);
        out.push('\n');
    }
    out
}

#[test]
fn the_typescript_client_and_the_command_names_match_rust() {
    let update = "UPDATE_BINDINGS=1 cargo test -p switchboard-core bindings";
    matches_golden("ui/src/lib/commands.ts", &commands_client(), update);
    matches_golden("src-tauri/core/commands.txt", &command_names(), update);
}
