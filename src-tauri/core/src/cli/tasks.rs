//! `switchboard tasks …` (issue 61): the calls servers ran as long tasks, and following those
//! still open outside their runs to their ends (`follow`: what the window does while it is open,
//! for a task left by a run that stopped or went on without it).

use std::io::Write;
use std::sync::Arc;

use clap::Subcommand;

use super::output::{json_out, list_out, CliError};
use crate::app::ToolSelection;
use crate::store::ToolRun;
use crate::App;

#[derive(Debug, Subcommand)]
pub(crate) enum TasksCommand {
    /// The calls that ran as tasks, newest first, and where each stands.
    List {
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Follow every task still open outside its run to its end; its result is added to its
    /// conversation.
    Follow {
        #[arg(long)]
        json: bool,
        /// How long to wait for MCP servers to start.
        #[arg(long, value_name = "SECONDS", default_value_t = 30)]
        wait_for_servers: u64,
    },
}

pub(super) async fn run(
    app: &Arc<App>,
    command: TasksCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        TasksCommand::List { limit, json } => {
            let tasks = app.tasks(limit).await?;
            list_out(
                out,
                json,
                &tasks,
                "No call has run as a task.",
                ["TOOL", "TASK", "STATE", "CONVERSATION"],
                |run: &ToolRun| {
                    let task = run.task.as_ref();
                    [
                        run.display_name.clone(),
                        task.map(|t| t.id.clone()).unwrap_or_default(),
                        task.map(|t| t.state.as_str().to_owned())
                            .unwrap_or_default(),
                        run.conversation_id.clone(),
                    ]
                },
            )
        }
        TasksCommand::Follow {
            json,
            wait_for_servers,
        } => {
            let mut servers: Vec<String> = app
                .background_tasks()
                .await?
                .into_iter()
                .map(|run| run.server)
                .collect();
            servers.sort();
            servers.dedup();
            if !servers.is_empty() {
                let wait = std::time::Duration::from_secs(wait_for_servers);
                super::chat::start_servers(app, &ToolSelection::Only(servers), json, wait).await?;
            }
            let followed = app.follow_tasks_until_done().await?;
            if json {
                return json_out(out, &followed);
            }
            if followed.is_empty() {
                writeln!(out, "No task is waiting to be followed.")?;
            }
            for task in &followed {
                writeln!(
                    out,
                    "{} (task {}): {} — {}",
                    task.tool,
                    task.task_id,
                    task.state.as_str(),
                    task.said
                )?;
            }
            Ok(())
        }
    }
}
