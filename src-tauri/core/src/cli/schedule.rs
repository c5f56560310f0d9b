//! `switchboard schedule …` (issue 61): keep a prompt that runs on a time rule, list and
//! remove schedules, run one now, read the record of runs, run what is due (`run-due`, which
//! the system's scheduler calls when the window is closed), and install that scheduler's
//! entry (`install-timer`).

use std::io::Write;
use std::sync::Arc;

use clap::{ArgGroup, Subcommand};

use super::chat::ApproveMode;
use super::output::{json_out, list_out, CliError};
use crate::app::Asker;
use crate::schedules::{self, Missed, NewSchedule, Schedule, TimeRule};
use crate::store::ScheduleRun;
use crate::App;

#[derive(Debug, Subcommand)]
pub(crate) enum ScheduleCommand {
    /// Keep a prompt that runs on a time rule, each run in a conversation of its own.
    #[command(group(ArgGroup::new("when").required(true).args(["every", "once"])))]
    Add {
        name: String,
        /// What to send each time.
        #[arg(long)]
        prompt: String,
        /// How often: 30m, 6h, 1d (with --at: every N days at that time).
        #[arg(long, value_name = "PERIOD")]
        every: Option<String>,
        /// The time of day (HH:MM, local time) of a period in days.
        #[arg(long, value_name = "HH:MM", requires = "every")]
        at: Option<String>,
        /// Only Monday to Friday (a period in days).
        #[arg(long, requires = "every")]
        weekdays: bool,
        /// Once, at "YYYY-MM-DD HH:MM" (local time).
        #[arg(long, value_name = "WHEN")]
        once: Option<String>,
        /// The profile its conversations start from (model, tools, system prompt, skills);
        /// else the default profile.
        #[arg(long, value_name = "NAME", conflicts_with = "provider")]
        profile: Option<String>,
        /// The provider to ask, in place of the profile's.
        #[arg(long, value_name = "NAME")]
        provider: Option<String>,
        #[arg(long, requires = "provider")]
        model: Option<String>,
        /// A run missed while the computer was off is skipped (by default it runs once at
        /// the next start).
        #[arg(long)]
        skip_missed: bool,
        /// How long a call that needs approval waits for you before it is denied (minutes).
        #[arg(long, value_name = "MINUTES", default_value_t = schedules::DEFAULT_APPROVAL_WAIT_MINUTES)]
        approval_wait: u32,
        #[arg(long)]
        json: bool,
    },
    /// List the schedules and when each runs next.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a schedule (its runs' conversations stay).
    Remove {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Switch a schedule on again.
    Enable {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Switch a schedule off (it keeps its record).
    Disable {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Run a schedule now, here: its answer is printed as `chat` prints one.
    Run {
        name: String,
        #[arg(long, value_enum, default_value = "ask")]
        approve: ApproveMode,
        #[arg(long)]
        json: bool,
        /// How long to wait for MCP servers to start.
        #[arg(long, value_name = "SECONDS", default_value_t = 30)]
        wait_for_servers: u64,
    },
    /// The record of runs: when, what became of each, its conversation.
    Logs {
        /// Only this schedule's runs.
        name: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Run every schedule that is due, and wait for them (what the system's scheduler calls
    /// every minute while the window is closed). A call that needs approval is denied, there
    /// being no one to ask. Does nothing while the window runs this home's schedules.
    RunDue {
        #[arg(long)]
        json: bool,
        /// How long to wait for MCP servers to start.
        #[arg(long, value_name = "SECONDS", default_value_t = 30)]
        wait_for_servers: u64,
    },
    /// Have the system's scheduler run `schedule run-due` every minute (a systemd user timer,
    /// a launchd agent, a Task Scheduler task), so schedules run while the window is closed.
    InstallTimer {
        /// Take it away again.
        #[arg(long)]
        remove: bool,
        /// Only write the files; do not switch the timer on (or off).
        #[arg(long)]
        no_switch: bool,
        #[arg(long)]
        json: bool,
    },
}

fn when(ms: Option<i64>) -> String {
    let Some(ms) = ms else {
        return "—".into();
    };
    schedules::moment_text(ms, &schedules::local_zone()).unwrap_or_default()
}

fn run_row(r: &ScheduleRun) -> [String; 5] {
    let mut status = format!("{:?}", r.status).to_lowercase();
    if r.late {
        status.push_str(" (late)");
    }
    if r.manual {
        status.push_str(" (by hand)");
    }
    [
        when(Some(r.started_at)),
        r.schedule_name.clone(),
        status,
        r.conversation_id.clone().unwrap_or_else(|| "—".into()),
        r.message.clone().unwrap_or_default(),
    ]
}

pub(crate) async fn run(
    app: &Arc<App>,
    command: ScheduleCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        ScheduleCommand::Add {
            name,
            prompt,
            every,
            at,
            weekdays,
            once,
            profile,
            provider,
            model,
            skip_missed,
            approval_wait,
            json,
        } => {
            let rule = match (every, once) {
                (Some(every), _) => TimeRule::from_every(&every, at.as_deref(), weekdays)
                    .map_err(crate::CoreError::from)?,
                (None, Some(once)) => TimeRule::Once {
                    at: schedules::moment(&once, &schedules::local_zone())
                        .map_err(crate::CoreError::from)?,
                },
                (None, None) => return Err(CliError::Usage("give --every or --once".into())),
            };
            let made = app
                .add_schedule(NewSchedule {
                    name,
                    prompt,
                    rule,
                    profile,
                    provider,
                    model,
                    missed: if skip_missed {
                        Missed::Skip
                    } else {
                        Missed::RunOnce
                    },
                    approval_wait_minutes: approval_wait,
                })
                .await?;
            if json {
                return json_out(out, &made);
            }
            writeln!(
                out,
                "Kept “{}”: {}; next run {}.",
                made.fields.name,
                made.rule_text,
                when(made.next_at)
            )?;
            writeln!(
                out,
                "(It runs while the window is open, or from the system's scheduler: `switchboard schedule install-timer`.)"
            )?;
            Ok(())
        }
        ScheduleCommand::List { json } => {
            let listed = app.schedules().await?;
            let profiles = app.profiles().list().await?;
            let profile_name = |key: &str| {
                profiles
                    .iter()
                    .find(|p| p.id == key)
                    .map_or_else(|| key.to_owned(), |p| p.name.clone())
            };
            list_out(
                out,
                json,
                &listed,
                "No schedules yet: add one with `switchboard schedule add NAME --prompt TEXT --every 1d --at 08:00`.",
                ["NAME", "WHEN", "NEXT", "ON", "PROFILE"],
                |s: &Schedule| {
                    [
                        s.fields.name.clone(),
                        s.rule_text.clone(),
                        when(s.next_at),
                        if s.enabled { "yes" } else { "no" }.into(),
                        s.fields
                            .profile
                            .as_deref()
                            .map_or_else(|| "(default)".into(), profile_name),
                    ]
                },
            )
        }
        ScheduleCommand::Remove { name, json } => {
            app.remove_schedule(&name).await?;
            if json {
                return json_out(out, &serde_json::json!({ "removed": name }));
            }
            writeln!(out, "Removed “{name}” (its conversations stay).")?;
            Ok(())
        }
        ScheduleCommand::Enable { name, json } => switch(app, &name, true, json, out).await,
        ScheduleCommand::Disable { name, json } => switch(app, &name, false, json, out).await,
        ScheduleCommand::Run {
            name,
            approve,
            json,
            wait_for_servers,
        } => {
            let wait = std::time::Duration::from_secs(wait_for_servers);
            super::chat::start_servers(app, &crate::app::ToolSelection::All, json, wait).await?;
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<crate::events::RunEvent>();
            let sink: Arc<dyn crate::events::EventSink> =
                Arc::new(move |event: crate::events::RunEvent| {
                    let _ = tx.send(event);
                });
            let started = app
                .run_schedule_now(&name, sink, Some(super::chat::approver(approve)))
                .await?;
            let conversation = started.handle.conversation_id.clone();
            super::chat::follow(app, started.handle, rx, json, out).await?;
            let outcome = started
                .settled
                .await
                .map_err(|e| CliError::Output(e.to_string()))?;
            if !json {
                super::terminal::say!("(conversation {conversation})");
            }
            match outcome.status {
                crate::store::RunStatus::Completed => Ok(()),
                _ => Err(CliError::Failed),
            }
        }
        ScheduleCommand::Logs { name, limit, json } => {
            let runs = app.schedule_runs(name.as_deref(), limit).await?;
            list_out(
                out,
                json,
                &runs,
                "No runs yet.",
                ["STARTED", "SCHEDULE", "STATUS", "CONVERSATION", "MESSAGE"],
                run_row,
            )
        }
        ScheduleCommand::RunDue {
            json,
            wait_for_servers,
        } => run_due(app, json, wait_for_servers, out).await,
        ScheduleCommand::InstallTimer {
            remove,
            no_switch,
            json,
        } => {
            // An AppImage runs from a mount that is gone later: the image is what to call.
            let exe = match std::env::var_os("APPIMAGE") {
                Some(image) => std::path::PathBuf::from(image),
                None => std::env::current_exe().map_err(|e| {
                    CliError::Usage(format!("Cannot tell where this program is: {e}"))
                })?,
            };
            let home = app.paths().home.clone();
            let report = schedules::timer::install(&exe, home.as_deref(), remove, !no_switch)
                .map_err(|e| CliError::Usage(e.to_string()))?;
            if json {
                return json_out(out, &report);
            }
            for file in &report.files {
                writeln!(
                    out,
                    "{} {}",
                    if remove { "Removed" } else { "Wrote" },
                    file.display()
                )?;
            }
            if let Some(switched) = &report.switched {
                writeln!(out, "Ran: {switched}")?;
            }
            if let Some(then) = &report.then {
                writeln!(out, "Then: {then}")?;
            }
            Ok(())
        }
    }
}

async fn switch(
    app: &App,
    name: &str,
    on: bool,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let schedule = app.set_schedule_enabled(name, on).await?;
    if json {
        return json_out(out, &schedule);
    }
    if on {
        writeln!(
            out,
            "“{}” is on; next run {}.",
            schedule.fields.name,
            when(schedule.next_at)
        )?;
    } else {
        writeln!(out, "“{}” is off.", schedule.fields.name)?;
    }
    Ok(())
}

/// `schedule run-due`: takes the home's runner lock (or leaves it to the window that holds
/// it), starts the servers if anything is due, runs what is due and waits for it.
async fn run_due(
    app: &Arc<App>,
    json: bool,
    wait_for_servers: u64,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let lock = schedules::RunnerLock::try_take(&app.paths().data_dir)
        .map_err(|e| CliError::Usage(format!("Cannot take the schedules' lock: {e}")))?;
    let Some(_lock) = lock else {
        if json {
            return json_out(out, &serde_json::json!({ "runner": "another", "ran": [] }));
        }
        writeln!(
            out,
            "Another Switchboard (the window, or another run-due) runs this home's schedules now; nothing to do."
        )?;
        return Ok(());
    };
    let now = crate::store::now_ms();
    let due = app
        .schedules()
        .await?
        .iter()
        .any(|s| s.enabled && s.next_at.is_some_and(|at| at <= now));
    if due {
        let wait = std::time::Duration::from_secs(wait_for_servers);
        super::chat::start_servers(app, &crate::app::ToolSelection::All, true, wait).await?;
    }
    let outcomes = app.run_due_until_done(&Asker::NoOne).await?;
    if json {
        return json_out(
            out,
            &serde_json::json!({ "runner": "this", "ran": outcomes }),
        );
    }
    if outcomes.is_empty() {
        writeln!(out, "Nothing is due.")?;
    }
    for o in &outcomes {
        writeln!(
            out,
            "{}: {}{}{}",
            o.schedule,
            format!("{:?}", o.status).to_lowercase(),
            o.message
                .as_deref()
                .map(|m| format!(" — {m}"))
                .unwrap_or_default(),
            o.conversation_id
                .as_deref()
                .map(|c| format!(" (conversation {c})"))
                .unwrap_or_default()
        )?;
    }
    Ok(())
}
