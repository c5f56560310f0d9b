//! `switchboard policy …` and `switchboard audit`: the rules of `policy.json` (allow, ask or
//! block per server, per tool and by tests on arguments; untrusted sources; reviewed results)
//! read, checked and changed through the same flows as the window's, and the record of every
//! tool call read back or exported as JSON lines.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use clap::{Args, Subcommand};
use serde_json::Value;

use super::mcp::TerminalConfirm;
use super::output::{json_out, write_table, CliError};
use crate::app::{PolicyMark, PolicyView};
use crate::policy::rules::{self, Outcome, Rule, Target, Test};
use crate::store::{AuditDecision, AuditFilter};
use crate::App;

const RULE_KINDS: &str = "\
A rule names a server (or * for every server), optionally one tool, and an outcome:
  allow  the call runs without asking
  ask    you are asked every time, whatever standing approvals say
  block  the tool is not offered to the model; a call that names it is refused
A rule may test the call's arguments (`--when ARG=KIND:VALUE`, all must hold). ARG is an
argument's name or a JSON pointer (/options/path). The kinds:
  inside:DIR[,DIR…]       a path inside one of the folders (~, .. and symlinks resolved)
  not-inside:DIR[,DIR…]   a path outside all of them
  host:HOST[,HOST…]       a URL whose host is one of these (*.example.com: any under it)
  not-host:HOST[,HOST…]   a URL on any other host
  matches:REGEX           a string the regular expression matches whole
  range:MIN..MAX          a number within the bounds (either may be left out)
  one-of:V[,V…]           one of these values (each read as JSON, else as text)
The most specific rule wins (a named tool over a whole server over every server, then more
tests over fewer); at equal specificity block beats ask beats allow. Your organisation's
policy file, when there is one, is judged apart and the stricter word stands.
Without a rule: read-only tools of trusted servers run, standing approvals and auto-approve
hold, destructive tools ask, and a path argument outside the server's roots asks.
Rules live in policy.json beside mcp.json.";

#[derive(Debug, Subcommand)]
#[command(about = "Rules on tool calls: allow, ask or block, by server, tool and arguments", long_about = RULE_KINDS)]
pub(crate) enum PolicyCommand {
    /// Every rule and mark, yours and your organisation's.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Let a server's tools (or one tool) run without asking, whatever the arguments.
    Allow(Naming),
    /// Ask before every call of a server's tools (or one tool).
    Ask(Naming),
    /// Never offer a server's tools (or one tool) to the model.
    Block(Naming),
    /// Take away the rule without tests on a server (or one tool) that allow, ask or block set.
    Clear {
        server: String,
        tool: Option<String>,
        /// Take away a rule that blocked or asked without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Add a rule that tests the call's arguments (see `policy --help` for the kinds).
    Add {
        server: String,
        tool: Option<String>,
        /// allow, ask or block.
        #[arg(long, value_parser = outcome)]
        outcome: Outcome,
        /// ARG=KIND:VALUE; repeat for more tests (all must hold).
        #[arg(long = "when", value_name = "ARG=KIND:VALUE")]
        when: Vec<String>,
        /// Why the rule exists: shown with each decision it makes.
        #[arg(long)]
        note: Option<String>,
        /// Add an allowing rule without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Take away rule N (as `policy list` numbers them).
    Remove {
        number: usize,
        /// Take away a rule that blocked or asked without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Mark a server (or tool) as a source of untrusted content, or take the mark away.
    Untrusted {
        server: String,
        tool: Option<String>,
        #[arg(long)]
        off: bool,
        /// Take the mark away without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Show a server's (or tool's) results to you before the model reads them, or stop.
    Review {
        server: String,
        tool: Option<String>,
        #[arg(long)]
        off: bool,
        /// Take the mark away without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Which rule decides a call of TOOL with ARGUMENTS (a JSON object).
    Check {
        server: String,
        tool: String,
        #[arg(default_value = "{}")]
        arguments: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub(crate) struct Naming {
    server: String,
    tool: Option<String>,
    /// Add an allowing rule without asking.
    #[arg(long)]
    yes: bool,
}

fn outcome(text: &str) -> Result<Outcome, String> {
    match text.trim() {
        "allow" => Ok(Outcome::Allow),
        "ask" => Ok(Outcome::Ask),
        "block" => Ok(Outcome::Block),
        other => Err(format!("“{other}” is not allow, ask or block")),
    }
}

/// One `--when ARG=KIND:VALUE` as the argument and its test.
fn test_of(text: &str) -> Result<(String, Test), CliError> {
    let usage = |why: &str| {
        CliError::Usage(format!(
            "--when {text}: {why} (see `switchboard policy --help`)"
        ))
    };
    let (argument, rest) = text
        .split_once('=')
        .ok_or_else(|| usage("write ARG=KIND:VALUE"))?;
    let (kind, value) = rest
        .split_once(':')
        .ok_or_else(|| usage("write KIND:VALUE after ="))?;
    let list = || -> Vec<String> {
        value
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let test = match kind.trim() {
        "inside" => Test::Inside(list()),
        "not-inside" => Test::Not(Box::new(Test::Inside(list()))),
        "host" => Test::Host(list()),
        "not-host" => Test::Not(Box::new(Test::Host(list()))),
        "matches" => Test::Matches(value.to_owned()),
        "range" => {
            let (lo, hi) = value
                .split_once("..")
                .ok_or_else(|| usage("write range:MIN..MAX"))?;
            let bound = |b: &str| -> Result<Option<f64>, CliError> {
                let b = b.trim();
                if b.is_empty() {
                    return Ok(None);
                }
                b.parse()
                    .map(Some)
                    .map_err(|_| usage("a bound is not a number"))
            };
            Test::Range {
                min: bound(lo)?,
                max: bound(hi)?,
            }
        }
        "one-of" => Test::OneOf(
            list()
                .into_iter()
                .map(|v| serde_json::from_str(&v).unwrap_or(Value::String(v)))
                .collect(),
        ),
        other => return Err(usage(&format!("“{other}” is not a kind of test"))),
    };
    Ok((argument.trim().to_owned(), test))
}

pub(crate) async fn run(
    app: &Arc<App>,
    command: PolicyCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let view = match command {
        PolicyCommand::List { json } => {
            let view = app.policy_view()?;
            if json {
                return json_out(out, &view);
            }
            return list(&view, out);
        }
        PolicyCommand::Allow(n) => set(app, n, Some(Outcome::Allow)).await?,
        PolicyCommand::Ask(n) => set(app, n, Some(Outcome::Ask)).await?,
        PolicyCommand::Block(n) => set(app, n, Some(Outcome::Block)).await?,
        PolicyCommand::Clear { server, tool, yes } => {
            app.set_tool_policy(&server, tool.as_deref(), None, &TerminalConfirm { yes })
                .await?
        }
        PolicyCommand::Add {
            server,
            tool,
            outcome,
            when,
            note,
            yes,
        } => {
            let when: BTreeMap<String, Test> =
                when.iter().map(|w| test_of(w)).collect::<Result<_, _>>()?;
            let rule = Rule {
                server: server.trim().to_owned(),
                tool: tool.map(|t| t.trim().to_owned()),
                when,
                outcome,
                note,
            };
            app.add_policy_rule(rule, &TerminalConfirm { yes }).await?
        }
        PolicyCommand::Remove { number, yes } => {
            if number == 0 {
                return Err(CliError::Usage("rules are numbered from 1".into()));
            }
            app.remove_policy_rule(number - 1, &TerminalConfirm { yes })
                .await?
        }
        PolicyCommand::Untrusted {
            server,
            tool,
            off,
            yes,
        } => {
            let target = Target { server, tool };
            app.set_policy_mark(
                PolicyMark::Untrusted,
                target,
                !off,
                &TerminalConfirm { yes },
            )
            .await?
        }
        PolicyCommand::Review {
            server,
            tool,
            off,
            yes,
        } => {
            let target = Target { server, tool };
            app.set_policy_mark(PolicyMark::Review, target, !off, &TerminalConfirm { yes })
                .await?
        }
        PolicyCommand::Check {
            server,
            tool,
            arguments,
            json,
        } => return check(app, &server, &tool, &arguments, json, out),
    };
    writeln!(out, "Saved in {}.", view.path)?;
    list(&view, out)
}

async fn set(app: &App, n: Naming, outcome: Option<Outcome>) -> Result<PolicyView, CliError> {
    Ok(app
        .set_tool_policy(
            &n.server,
            n.tool.as_deref(),
            outcome,
            &TerminalConfirm { yes: n.yes },
        )
        .await?)
}

fn list(view: &PolicyView, out: &mut impl Write) -> Result<(), CliError> {
    if view.file.rules.is_empty() {
        writeln!(out, "No rules of yours ({}).", view.path)?;
    } else {
        let rows: Vec<[String; 2]> = view
            .said
            .iter()
            .enumerate()
            .map(|(i, said)| [(i + 1).to_string(), said.clone()])
            .collect();
        write_table(out, ["#", "YOUR RULE"], &rows)?;
    }
    marks(out, "", &view.file)?;
    if !view.managed_paths.is_empty() {
        writeln!(
            out,
            "Your organisation's policy ({}), which you can tighten but not loosen:",
            view.managed_paths.join(", ")
        )?;
        for said in &view.managed_said {
            writeln!(out, "  {said}")?;
        }
        if let Some(allowed) = &view.managed.allowed_servers {
            writeln!(
                out,
                "  Only these servers may be added: {}",
                allowed.join(", ")
            )?;
        }
        marks(out, "  ", &view.managed)?;
    }
    Ok(())
}

/// A file's untrusted and reviewed lists, a line each (none when empty).
fn marks(out: &mut impl Write, indent: &str, file: &rules::PolicyFile) -> Result<(), CliError> {
    for (words, list) in [
        ("Untrusted content", &file.untrusted),
        ("Results reviewed first", &file.review),
    ] {
        if list.is_empty() {
            continue;
        }
        let named: Vec<String> = list
            .iter()
            .map(|t| match &t.tool {
                Some(tool) => format!("{} · {tool}", t.server),
                None => t.server.clone(),
            })
            .collect();
        writeln!(out, "{indent}{words}: {}", named.join(", "))?;
    }
    Ok(())
}

fn check(
    app: &App,
    server: &str,
    tool: &str,
    arguments: &str,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let arguments: Value = serde_json::from_str(arguments)
        .map_err(|e| CliError::Usage(format!("the arguments must be a JSON object: {e}")))?;
    let policy = app.policy()?;
    let hit = policy
        .blocked(server, tool)
        .or_else(|| policy.rule_for(server, tool, Some(&arguments), None));
    if json {
        return json_out(
            out,
            &serde_json::json!({
                "rule": hit,
                "untrusted": policy.is_untrusted(server, tool),
                "review": policy.is_reviewed(server, tool),
            }),
        );
    }
    match hit {
        Some(hit) => writeln!(out, "{}: {}", hit.outcome.as_str(), hit.said)?,
        None => writeln!(
            out,
            "No rule decides this call: your standing approvals, the server's trust and \
             auto-approve do (a destructive tool, or a path outside the server's roots, asks)."
        )?,
    }
    Ok(())
}

#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    /// The first day shown, YYYY-MM-DD (UTC).
    #[arg(long, value_name = "DATE", value_parser = super::usage::since_day)]
    since: Option<i64>,
    #[arg(long)]
    server: Option<String>,
    /// One conversation's calls (its id).
    #[arg(long)]
    conversation: Option<String>,
    /// Only calls allowed, denied or not run.
    #[arg(long, value_parser = decision)]
    decision: Option<AuditDecision>,
    /// The most entries, newest first (default 200, at most 10000).
    #[arg(long)]
    limit: Option<u32>,
    #[arg(long)]
    json: bool,
    /// One JSON object per line, oldest first: the export format.
    #[arg(long, conflicts_with = "json")]
    jsonl: bool,
}

fn decision(text: &str) -> Result<AuditDecision, String> {
    match text.trim() {
        "allowed" => Ok(AuditDecision::Allowed),
        "denied" => Ok(AuditDecision::Denied),
        "not_run" | "not-run" => Ok(AuditDecision::NotRun),
        other => Err(format!("“{other}” is not allowed, denied or not-run")),
    }
}

pub(crate) async fn audit(
    app: &Arc<App>,
    args: AuditArgs,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let mut entries = app
        .audit(AuditFilter {
            since: args.since,
            before: None,
            server: args.server,
            conversation_id: args.conversation,
            decision: args.decision,
            limit: args.limit,
        })
        .await?;
    if args.json {
        return json_out(out, &entries);
    }
    if args.jsonl {
        entries.reverse();
        for e in &entries {
            serde_json::to_writer(&mut *out, e).map_err(|e| CliError::Output(e.to_string()))?;
            writeln!(out)?;
        }
        return Ok(());
    }
    if entries.is_empty() {
        writeln!(out, "No tool call is on record for that.")?;
        return Ok(());
    }
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|e| {
            [
                chrono::DateTime::from_timestamp_millis(e.at)
                    .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
                    .unwrap_or_default(),
                e.origin.as_str().to_owned(),
                format!("{} · {}", e.server, e.tool),
                e.decision.as_str().replace('_', " "),
                crate::text::one_line(&e.decided_by, 80),
                e.duration_ms.map(|d| format!("{d} ms")).unwrap_or_default(),
            ]
        })
        .collect();
    write_table(
        out,
        [
            "WHEN (UTC)",
            "FROM",
            "TOOL",
            "DECISION",
            "DECIDED BY",
            "TOOK",
        ],
        &rows,
    )?;
    Ok(())
}
