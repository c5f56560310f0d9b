//! `switchboard chat`: one turn of the tool loop from the terminal, the same loop the window
//! runs. The answer streams to stdout; status lines, tool calls and approvals go to stderr.
//! `--json` prints every [`RunEvent`] as one JSON line instead (saved messages in full, so a
//! script needs no stitching of deltas). `--approve ask` asks on the terminal, `all` allows
//! every call, `none` denies every call and tells the model so.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::output::CliError;
use crate::agent::approval::{Answers, ReviewRequest, ReviewVerdict, Reviewing};
use crate::agent::{ApprovalAnswer, ApprovalRequest, Approver, Decision, FixedApprover};
use crate::app::{ProfileChoice, ToolSelection, TurnRequest};
use crate::events::{EventSink, RunEvent, StopReason};
use crate::mcp::host::ServerState;
use crate::store::ToolDecision;
use crate::App;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ApproveMode {
    /// Ask on the terminal about each call the permission rules do not settle.
    Ask,
    /// Allow every call.
    All,
    /// Deny every call (the model is told so).
    None,
}

#[derive(Debug, Args)]
pub(crate) struct ChatArgs {
    /// Continue this conversation (its id); a new one is made otherwise.
    #[arg(long)]
    conversation: Option<String>,
    /// The provider to ask (by name); else the conversation's, else Settings' default.
    #[arg(long)]
    provider: Option<String>,
    #[arg(long)]
    model: Option<String>,
    /// `all`, `none`, or servers and tools by name, comma-separated (`time,everything__echo`).
    #[arg(long, default_value = "all")]
    tools: String,
    #[arg(long, value_enum, default_value = "ask")]
    approve: ApproveMode,
    /// Rounds of tool use before the model must answer (1–100); else Settings' value.
    #[arg(long)]
    max_rounds: Option<u32>,
    /// The model must call a tool in its first answer (for a task that needs one; a small
    /// local model's answer is then held to a call where its server can constrain it).
    #[arg(long)]
    require_tool: bool,
    /// Print every event of the run as a JSON line.
    #[arg(long)]
    json: bool,
    /// How long to wait for MCP servers to start before the turn goes on with those that are
    /// ready (a slow first `npx` download may need more).
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    wait_for_servers: u64,
    /// What the model is told first (the conversation keeps it); else Settings' default
    /// system prompt for a new conversation, or the conversation's own.
    #[arg(long, value_name = "TEXT", conflicts_with = "system_file")]
    system: Option<String>,
    /// `--system`, read from a file.
    #[arg(long, value_name = "FILE")]
    system_file: Option<std::path::PathBuf>,
    /// Start from this profile (its system prompt, model, tools and limits), or `none`; a new
    /// conversation starts from the default profile otherwise. With --conversation, the
    /// conversation follows the profile from this message on.
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Start the conversation in this project: its instructions are added to the system
    /// prompt, and it starts from the project's profile unless --profile says otherwise.
    #[arg(long, value_name = "NAME", conflicts_with = "conversation")]
    project: Option<String>,
    /// Send PROMPT in place of this message of yours (its id) and go on from there; the
    /// conversation keeps what followed it as another branch. The message's files go again
    /// unless --attach names others.
    #[arg(
        long,
        value_name = "MESSAGE",
        requires = "conversation",
        conflicts_with = "regenerate"
    )]
    edit: Option<String>,
    /// Ask again for this answer (its id: the first message after a message of yours); the
    /// conversation keeps the old answer as another branch. Takes no PROMPT.
    #[arg(
        long,
        value_name = "MESSAGE",
        requires = "conversation",
        conflicts_with = "prompt"
    )]
    regenerate: Option<String>,
    /// Attach a file to the message: an image (PNG, JPEG, GIF, WebP), a PDF, or a text or
    /// code file (judged by its content). Repeat for several.
    #[arg(long, value_name = "FILE", conflicts_with = "regenerate")]
    attach: Vec<std::path::PathBuf>,
    /// Ask two to four models at once, each running its own tool loop:
    /// `PROVIDER[:MODEL],PROVIDER[:MODEL]`. Each answer is printed under its model's name
    /// (with --json every event comes tagged with its model); of those that completed, the
    /// first named is shown in the conversation, and `conversations branch` picks another.
    #[arg(
        long,
        value_name = "MODELS",
        value_parser = compared,
        conflicts_with_all = ["provider", "model", "edit", "regenerate"]
    )]
    compare: Option<Compared>,
    /// What to say (may be left out when files are attached).
    #[arg(required_unless_present_any = ["regenerate", "attach"])]
    prompt: Option<String>,
}

impl ChatArgs {
    /// The system prompt given on the command line, if any.
    fn system_prompt(&self) -> Result<Option<String>, CliError> {
        match (&self.system, &self.system_file) {
            (Some(text), _) => Ok(Some(text.clone())),
            (None, Some(path)) => std::fs::read_to_string(path)
                .map(Some)
                .map_err(|e| CliError::Usage(format!("Cannot read {}: {e}", path.display()))),
            (None, None) => Ok(None),
        }
    }
}

/// The models of `--compare`: a provider and its model (`None`: its default), in order.
#[derive(Debug, Clone)]
pub(crate) struct Compared(Vec<(String, Option<String>)>);

/// `PROVIDER[:MODEL],…` as pairs.
fn compared(text: &str) -> Result<Compared, String> {
    let models: Vec<(String, Option<String>)> = text
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| match m.split_once(':') {
            Some((provider, model)) => (
                provider.trim().to_owned(),
                Some(model.trim().to_owned()).filter(|m| !m.is_empty()),
            ),
            None => (m.to_owned(), None),
        })
        .collect();
    if models.len() < 2 || models.len() > crate::app::MAX_COMPARED {
        return Err(format!(
            "name two to {} models, comma-separated",
            crate::app::MAX_COMPARED
        ));
    }
    Ok(Compared(models))
}

fn selection(text: &str) -> ToolSelection {
    match text.trim() {
        "all" | "" => ToolSelection::All,
        "none" => ToolSelection::None,
        list => ToolSelection::Only(
            list.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        ),
    }
}

/// Runs one turn; the exit is an error unless the model answered (or answered at the cap).
pub(crate) async fn run(
    app: &Arc<App>,
    args: ChatArgs,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let tools = selection(&args.tools);
    if tools != ToolSelection::None {
        // Only the servers the selection can take a tool from are started.
        let wait = Duration::from_secs(args.wait_for_servers);
        start_servers(app, &tools, args.json, wait).await?;
    }
    let result = turn(app, args, tools, out).await;
    app.host().shutdown(Duration::from_secs(5)).await;
    result
}

async fn turn(
    app: &Arc<App>,
    args: ChatArgs,
    tools: ToolSelection,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let system = args.system_prompt()?;
    // Files are kept (and judged) first: a refused one leaves no new conversation behind.
    let attachments = attachments(app, &args).await?;
    let prompt = match (args.prompt.clone(), attachments.is_empty()) {
        (None, false) => Some(String::new()),
        (prompt, _) => prompt,
    };
    let conversation = conversation(app, &args, system).await?;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<RunEvent>();
    let sink: Arc<dyn EventSink> = Arc::new(move |event: RunEvent| {
        let _ = tx.send(event);
    });
    let json = args.json;
    let request = TurnRequest {
        conversation_id: conversation.clone(),
        text: prompt,
        attachments,
        provider: args.provider,
        model: args.model,
        tools,
        max_rounds: args.max_rounds,
        retry_call: None,
        branch_from: args.edit.or(args.regenerate),
        require_tool: args.require_tool,
    };
    let approver = approver(args.approve);
    let run = match args.compare {
        Some(Compared(models)) => {
            let request = crate::app::CompareRequest {
                conversation_id: request.conversation_id,
                text: request.text.unwrap_or_default(),
                attachments: request.attachments,
                models,
                tools: request.tools,
                max_rounds: request.max_rounds,
            };
            app.start_comparison_answered_by(request, sink, approver)
                .await?
        }
        None => app.start_turn_answered_by(request, sink, approver).await?,
    };
    let reason = follow(app, run, rx, json, out).await?;
    if !json {
        super::terminal::say!("(conversation {conversation})");
    }
    match reason {
        StopReason::Completed | StopReason::MaxRounds => Ok(()),
        _ => Err(CliError::Failed),
    }
}

/// The files the turn carries: those `--attach` names, kept; or, editing a message without
/// attaching others, the files it had.
async fn attachments(
    app: &App,
    args: &ChatArgs,
) -> Result<Vec<crate::attachments::AttachmentRef>, CliError> {
    let mut attachments = Vec::with_capacity(args.attach.len());
    for path in &args.attach {
        let kept = app.keep_attachment_file(path).await?;
        attachments.push(crate::attachments::AttachmentRef::from(&kept));
    }
    if let (Some(edited), Some(id), true) = (&args.edit, &args.conversation, attachments.is_empty())
    {
        attachments = app
            .message_files(id, edited)
            .await?
            .iter()
            .map(crate::attachments::AttachmentRef::from)
            .collect();
    }
    Ok(attachments)
}

/// The conversation the turn goes to: the one named (its profile and prompt set as asked), or a
/// new one.
async fn conversation(
    app: &App,
    args: &ChatArgs,
    system: Option<String>,
) -> Result<String, CliError> {
    Ok(match &args.conversation {
        Some(id) => {
            if let Some(profile) = &args.profile {
                let key = Some(profile.as_str()).filter(|p| *p != "none");
                app.profiles().set_conversation_profile(id, key).await?;
            }
            match system {
                Some(system) => app.conversations().set_system_prompt(id, &system).await?.id,
                None => id.clone(),
            }
        }
        None => {
            let choice = match args.profile.as_deref() {
                None => ProfileChoice::Default,
                Some("none") => ProfileChoice::None,
                Some(name) => ProfileChoice::Named(name.to_owned()),
            };
            match &args.project {
                Some(project) if args.profile.is_none() => {
                    app.create_conversation_in(None, system.as_deref(), project)
                        .await?
                        .id
                }
                Some(project) => {
                    // Checked first: a project not there leaves no conversation behind.
                    let project = app.projects().get(project).await?;
                    let made = app
                        .create_conversation(None, system.as_deref(), &choice)
                        .await?;
                    app.projects()
                        .move_conversation(&made.id, Some(&project.id))
                        .await?
                        .id
                }
                None => {
                    app.create_conversation(None, system.as_deref(), &choice)
                        .await?
                        .id
                }
            }
        }
    })
}

/// Who answers the run's approvals: `--approve all`, `none`, or the person at the terminal.
pub(super) fn approver(mode: ApproveMode) -> Arc<dyn Approver> {
    match mode {
        ApproveMode::All => Arc::new(FixedApprover(Decision::AllowOnce)),
        ApproveMode::None => Arc::new(FixedApprover(Decision::Deny)),
        ApproveMode::Ask => Arc::new(TerminalApprover::default()),
    }
}

/// Prints the run's events as they come (Ctrl-C stops it) until it ends; why it ended.
pub(super) async fn follow(
    app: &Arc<App>,
    run: crate::app::RunHandle,
    mut events: tokio::sync::mpsc::UnboundedReceiver<RunEvent>,
    json: bool,
    out: &mut impl Write,
) -> Result<StopReason, CliError> {
    let ctrl_c = {
        let (app, run_id) = (Arc::clone(app), run.run_id.clone());
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                app.stop_run(&run_id);
            }
        })
    };
    let finished = run.finished();
    tokio::pin!(finished);
    let mut printer = Printer {
        json,
        mid_line: false,
        lanes: std::collections::BTreeMap::new(),
        prefix: String::new(),
    };
    let reason = loop {
        tokio::select! {
            reason = &mut finished => break reason,
            Some(event) = events.recv() => printer.print(&event, out)?,
        }
    };
    while let Ok(event) = events.try_recv() {
        printer.print(&event, out)?;
    }
    ctrl_c.abort();
    Ok(reason)
}

/// Starts every enabled, approved server and waits until each has started or failed, or
/// `wait` at most (`--wait-for-servers`): the turn then begins with the servers that are
/// ready, and says which are still starting (their tools are not offered in this turn). What
/// did not start is said on stderr, also with `--json` (whose stdout stays the run's events).
pub(super) async fn start_servers(
    app: &App,
    tools: &ToolSelection,
    quiet: bool,
    wait: Duration,
) -> Result<(), CliError> {
    let host = app.host();
    for (name, why) in app.mcp_start_where(|name| tools.takes_from(name)).await? {
        if !quiet {
            super::terminal::say!("switchboard: “{name}” is not used: {why}");
        }
    }
    app.servers_started(wait.min(crate::mcp::launch::STARTUP_TIMEOUT))
        .await;
    for (name, state) in host.states() {
        if let Some(line) = not_started(&name, &state) {
            super::terminal::say!("switchboard: {line}");
        } else if state == ServerState::Starting {
            super::terminal::say!(
                "switchboard: “{name}” is still starting after {} s (it has not answered \
                 `initialize`); this turn goes on without its tools (--wait-for-servers)",
                wait.as_secs()
            );
        }
    }
    Ok(())
}

/// What to say of a server that is not running after start-up: its reason, which names it
/// already ("“srv” did not start: …"), and how to sign in where that is what it needs.
fn not_started(name: &str, state: &ServerState) -> Option<String> {
    match state {
        ServerState::Failed { reason } | ServerState::Restarting { reason, .. } => {
            Some(reason.clone())
        }
        ServerState::NeedsSignIn { reason } => {
            Some(format!("{reason} (switchboard mcp login {name})"))
        }
        _ => None,
    }
}

struct Printer {
    json: bool,
    /// The answer's last line has no newline yet.
    mid_line: bool,
    /// In a comparison: each model's name and what it has said, printed when all are done.
    lanes: std::collections::BTreeMap<u32, (String, String)>,
    /// Put before each line on stderr: the model's name, in a comparison.
    prefix: String,
}

impl Printer {
    fn print(&mut self, event: &RunEvent, out: &mut impl Write) -> Result<(), CliError> {
        if self.json {
            let line = serde_json::to_string(event).map_err(|e| CliError::Output(e.to_string()))?;
            writeln!(out, "{line}")?;
            return Ok(out.flush()?);
        }
        let prefix = &self.prefix;
        match event {
            RunEvent::Lane {
                lane,
                provider,
                model,
                event,
            } => self.lane(*lane, format!("{provider} · {model}"), event, out),
            RunEvent::ComparisonFolded { .. } => {
                for (label, said) in self.lanes.values() {
                    writeln!(out, "── {label} ──")?;
                    writeln!(out, "{}\n", said.trim_end())?;
                }
                Ok(())
            }
            RunEvent::TextDelta { text, .. } => {
                write!(out, "{text}")?;
                out.flush()?;
                self.mid_line = !text.ends_with('\n');
                Ok(())
            }
            RunEvent::MessageSaved { message }
                if self.mid_line && message.role == crate::store::Role::Assistant =>
            {
                writeln!(out)?;
                self.mid_line = false;
                Ok(())
            }
            RunEvent::Error { message, .. }
            | RunEvent::RunFinished {
                message: Some(message),
                ..
            } => {
                super::terminal::say!("switchboard: {prefix}{message}");
                Ok(())
            }
            other => {
                if let Some(text) = note(other) {
                    super::terminal::say!("· {prefix}{text}");
                }
                Ok(())
            }
        }
    }

    /// An event of one model of a comparison: its text is kept for the end, the rest printed
    /// with its model's name.
    fn lane(
        &mut self,
        lane: u32,
        label: String,
        event: &RunEvent,
        out: &mut impl Write,
    ) -> Result<(), CliError> {
        let (label, said) = self
            .lanes
            .entry(lane)
            .or_insert_with(|| (label, String::new()));
        match event {
            RunEvent::TextDelta { text, .. } => {
                said.push_str(text);
                Ok(())
            }
            RunEvent::MessageSaved { .. } | RunEvent::AnswerStarted { .. } => Ok(()),
            other => Printer {
                json: false,
                mid_line: false,
                lanes: std::collections::BTreeMap::new(),
                prefix: format!("[{label}] "),
            }
            .print(other, out),
        }
    }
}

/// What the terminal is told of an event that is not the answer's text, if anything.
fn note(event: &RunEvent) -> Option<String> {
    Some(match event {
        RunEvent::Status { text } => text.clone(),
        RunEvent::ToolCallProposed { call } => format!("{} {}", call.display_name, call.arguments),
        RunEvent::ToolDecided {
            decision: ToolDecision::Denied,
            reason,
            ..
        } => format!("denied: {}", reason.clone().unwrap_or_default()),
        RunEvent::ToolFinished {
            is_error,
            content,
            duration_ms,
            ..
        } => {
            let first = content.lines().next().unwrap_or_default();
            let mark = if *is_error { "failed" } else { "done" };
            format!(
                "{mark} in {duration_ms} ms: {}",
                crate::text::one_line(first, 160)
            )
        }
        RunEvent::ToolProgress {
            progress,
            total,
            message,
            ..
        } => {
            let of = total.map(|t| format!(" of {t}")).unwrap_or_default();
            let says = message
                .as_deref()
                .map(|m| format!(": {}", crate::text::one_line(m, 160)))
                .unwrap_or_default();
            format!("progress {progress}{of}{says}")
        }
        RunEvent::ToolWarning { tool, message } => format!("{tool} left out: {message}"),
        RunEvent::HistoryFitted { message, .. } => message.clone(),
        RunEvent::ToolsOffered {
            offered,
            of,
            found,
            why,
        } => {
            if found.is_empty() {
                format!(
                    "offering {} of {of} tools and a search for the rest: {why}",
                    offered.len().saturating_sub(1)
                )
            } else {
                format!("the model's search found {}", found.join(", "))
            }
        }
        _ => return None,
    })
}

/// Asks on the terminal, one call at a time: the models of a comparison ask in turn, each
/// question and its answer whole, so a line typed never answers another model's call.
/// Without a terminal, every call is denied.
#[derive(Default)]
struct TerminalApprover {
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl Approver for TerminalApprover {
    fn ask(&self, request: ApprovalRequest) -> Answers<'_> {
        Box::pin(async move {
            let _turn = self.one_at_a_time.lock().await;
            tokio::task::spawn_blocking(move || ask_on_terminal(&request))
                .await
                .unwrap_or_default()
        })
    }

    fn review(&self, request: ReviewRequest) -> Reviewing<'_> {
        Box::pin(async move {
            let _turn = self.one_at_a_time.lock().await;
            tokio::task::spawn_blocking(move || review_on_terminal(&request))
                .await
                .unwrap_or_default()
        })
    }
}

/// The most of a result the terminal shows when asking about it.
const REVIEW_SHOWN_CHARS: usize = 4_000;

/// Shows a result and asks whether the model may read it: pass or withhold (cutting parts
/// out is the window's). Without a terminal, withheld.
fn review_on_terminal(request: &ReviewRequest) -> Option<ReviewVerdict> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    let count = request.content.chars().count();
    let shown: String = request.content.chars().take(REVIEW_SHOWN_CHARS).collect();
    super::terminal::say!(
        "\n{} returned (the model has not read it yet):",
        request.display_name
    );
    super::terminal::say!("{shown}");
    if count > REVIEW_SHOWN_CHARS {
        super::terminal::say!("… ({} more characters)", count - REVIEW_SHOWN_CHARS);
    }
    super::terminal::ask!("Let the model read it? [p] pass, [w] withhold: ");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).ok()?;
    Some(match line.trim().to_ascii_lowercase().as_str() {
        "p" | "pass" | "y" | "yes" => ReviewVerdict::Pass,
        _ => ReviewVerdict::Withhold,
    })
}

fn ask_on_terminal(request: &ApprovalRequest) -> Vec<ApprovalAnswer> {
    let interactive = std::io::stdin().is_terminal();
    let mut answers = Vec::new();
    for call in &request.calls {
        let deny = |reason: &str| ApprovalAnswer {
            call_id: call.call_id.clone(),
            decision: Decision::Deny,
            reason: Some(reason.to_owned()),
        };
        if !interactive {
            answers.push(deny(
                "There is no terminal to ask the user on (use --approve all or none).",
            ));
            continue;
        }
        let who = request.asked_by.as_deref().unwrap_or("The model");
        super::terminal::say!("\n{who} wants to run {} with:", call.display_name);
        super::terminal::say!("{}", call.arguments);
        if call.once_only {
            super::terminal::say!("(it runs a skill's script: you are asked before each run)");
            super::terminal::ask!("Allow? [y] this once, [n] deny (n REASON gives a reason): ");
        } else {
            if call.destructive {
                super::terminal::say!("(its server marks it as destructive)");
            }
            super::terminal::ask!("Allow? [y] once, [c] for this conversation, [a] always, [n] deny (n REASON gives a reason): ");
        }
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            answers.push(deny("The user gave no answer."));
            continue;
        }
        let line = line.trim();
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let decision = match word.to_ascii_lowercase().as_str() {
            "y" | "yes" => Decision::AllowOnce,
            "c" if !call.once_only => Decision::AllowConversation,
            "a" if !call.once_only => Decision::AllowAlways,
            _ => Decision::Deny,
        };
        answers.push(ApprovalAnswer {
            call_id: call.call_id.clone(),
            decision,
            reason: (decision == Decision::Deny && !rest.trim().is_empty())
                .then(|| rest.trim().to_owned()),
        });
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::error::McpError;

    #[test]
    fn a_server_that_did_not_start_is_named_once() {
        let reason = McpError::Startup {
            server: "srv".into(),
            detail: "exited with status 1".into(),
            stderr_tail: String::new(),
        }
        .to_string();
        let line = not_started("srv", &ServerState::Failed { reason }).unwrap();
        assert_eq!(line, "“srv” did not start: exited with status 1");
        assert_eq!(line.matches("srv").count(), 1, "{line}");
        let sign_in = ServerState::NeedsSignIn {
            reason: "“srv” asks you to sign in".into(),
        };
        assert_eq!(
            not_started("srv", &sign_in).unwrap(),
            "“srv” asks you to sign in (switchboard mcp login srv)"
        );
        assert_eq!(not_started("srv", &ServerState::Starting), None);
    }
}
