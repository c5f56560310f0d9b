//! A tool call a server answers with a task (the MCP Tasks extension,
//! `io.modelcontextprotocol/tasks`, issue 61): the call is followed to its end by polling
//! `tasks/get` at the interval the server suggests (within [`MIN_POLL`, `MAX_POLL`]), each
//! status message passed on as the call's progress (so the card shows it), a task that needs
//! input answered with the same forms as elicitation (`tasks/update`), and Stop, or the call's
//! time limit, sent to the server as `tasks/cancel` (as is a task left by a failed answer). A
//! poll answered counts as the call being alive: the idle limit is for a server that stops
//! answering, not for a long task; the time a form is open does not count at all. Each of the
//! server's questions is asked once, however often a poll repeats it.

use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, GetTaskParams, Task, TaskPayload, UpdateTaskParams,
};
use tokio_util::sync::CancellationToken;

use super::client::{CallProgress, ProgressSink};
use super::server::{CallLimits, McpError, McpServer};

/// The shortest time between two polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(100);
/// The longest time between two polls.
const MAX_POLL: Duration = Duration::from_secs(30);
/// Between polls when the server suggests nothing.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// How long `tasks/cancel` is waited for.
const CANCEL_WAIT: Duration = Duration::from_secs(5);

/// What following a task again came to.
#[derive(Debug)]
pub enum Resumed {
    /// It ended: with its result, failed, or cancelled (by the person, or by its server).
    Ended(Result<CallToolResult, McpError>),
    /// The server does not know the task (its words).
    Unknown(String),
    /// The server could not be asked now, or the task outlived the time it was followed for:
    /// it is followed again later.
    Later(McpError),
    /// The server answered the first poll with an error that is not "unknown task": it may
    /// pass (the follower counts these, and a task refused again and again is lost).
    Refused(McpError),
}

fn poll_interval(task: &Task) -> Duration {
    task.poll_interval_ms
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

/// How following a task stopped short of a result.
enum Short {
    /// The person (or the run) cancelled it: the server was told.
    Cancelled,
    /// The task itself ended without a result (it failed, the server cancelled it, or its
    /// result was not a tool result): final.
    Task(McpError),
    /// The server did not answer in time, or the call's time ran out: a run gives up on it
    /// (and tells the server); a task followed again is tried again later.
    Link(McpError),
    /// The server answered a poll with an error, or its connection failed: the same, but there
    /// is no one to tell.
    Unreachable(McpError),
}

impl McpServer {
    /// Follows the task `task` a tool call was answered with until it ends; its result is the
    /// call's. `spent` is the time the call took already.
    ///
    /// # Errors
    /// [`McpError::Cancelled`] (the task is cancelled on the server too), [`McpError::Timeout`]
    /// (likewise), the task failed or was cancelled by the server, or the server went away.
    pub(super) async fn follow_task(
        &self,
        task: Task,
        limits: CallLimits,
        spent: Duration,
        cancel: &CancellationToken,
        progress: Option<&ProgressSink>,
    ) -> Result<CallToolResult, McpError> {
        tracing::info!(server = %self.name(), task = %task.task_id, "the tool call runs as a task");
        let interval = poll_interval(&task);
        let id = task.task_id;
        let followed = self
            .follow(
                &id,
                interval,
                task.status_message,
                limits,
                spent,
                cancel,
                progress,
            )
            .await;
        match followed {
            Ok(result) => Ok(result),
            Err(Short::Cancelled) => Err(McpError::Cancelled {
                server: self.name().to_owned(),
            }),
            Err(Short::Task(e) | Short::Unreachable(e)) => Err(e),
            // A call gives up on its task: the server is told, so it does not work on for
            // nobody.
            Err(Short::Link(e)) => {
                self.cancel_task(&id).await;
                Err(e)
            }
        }
    }

    /// Follows the task `id` this server answered a call with before (the call's run went on
    /// without it, or Switchboard stopped while it ran) until it ends, as [`follow_task`] does;
    /// only `cancel` cancels it on the server. A server that answers the first `tasks/get`
    /// with "invalid params" (the Tasks extension's answer for an unknown task) no longer knows
    /// it (a local server started again has none of its old tasks): [`Resumed::Unknown`]. A
    /// server that cannot be asked now, or keeps the task past `limits`, leaves it to be
    /// followed later: [`Resumed::Later`]; one that answers it with another error may be
    /// passing through a bad moment: [`Resumed::Refused`]. `first_poll` (a place among the
    /// tasks a follower asks about at once) is held until the first poll is answered.
    ///
    /// [`follow_task`]: McpServer::follow_task
    pub async fn resume_task(
        &self,
        id: &str,
        limits: CallLimits,
        cancel: &CancellationToken,
        progress: Option<&ProgressSink>,
        first_poll: Option<tokio::sync::OwnedSemaphorePermit>,
    ) -> Resumed {
        tracing::info!(server = %self.name(), task = %id, "following a task again");
        let first = tokio::select! {
            got = tokio::time::timeout(limits.idle, self.peer().get_task(GetTaskParams::new(id.to_owned()))) => got,
            () = cancel.cancelled() => {
                self.cancel_task(id).await;
                return Resumed::Ended(Err(McpError::Cancelled { server: self.name().to_owned() }));
            }
        };
        match first {
            // No such task, or a server that no longer has tasks at all.
            Ok(Err(rmcp::ServiceError::McpError(e)))
                if e.code == rmcp::model::ErrorCode::INVALID_PARAMS
                    || e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
            {
                return Resumed::Unknown(e.message.into_owned())
            }
            Ok(Err(e @ rmcp::ServiceError::McpError(_))) => {
                return Resumed::Refused(self.service_error(&e))
            }
            Ok(Err(e)) => return Resumed::Later(self.service_error(&e)),
            Err(_) => {
                return Resumed::Later(McpError::Timeout {
                    server: self.name().to_owned(),
                    after: limits.idle,
                })
            }
            Ok(Ok(_)) => {}
        }
        // The server answered: the rest of the follow is its own pace, not the follower's.
        drop(first_poll);
        let followed = self
            .follow(id, MIN_POLL, None, limits, Duration::ZERO, cancel, progress)
            .await;
        match followed {
            Ok(result) => Resumed::Ended(Ok(result)),
            Err(Short::Cancelled) => Resumed::Ended(Err(McpError::Cancelled {
                server: self.name().to_owned(),
            })),
            Err(Short::Task(e)) => Resumed::Ended(Err(e)),
            Err(Short::Link(e) | Short::Unreachable(e)) => Resumed::Later(e),
        }
    }

    /// The polling of a task from its first wait. `cancel` sends `tasks/cancel` here, and so
    /// does an input Switchboard can never give (sampling, a kind it does not know): the task
    /// could never go on, so it ends, and the server is told.
    #[allow(clippy::too_many_arguments)] // the call's own state, passed once
    async fn follow(
        &self,
        id: &str,
        mut interval: Duration,
        mut said: Option<String>,
        limits: CallLimits,
        spent: Duration,
        cancel: &CancellationToken,
        progress: Option<&ProgressSink>,
    ) -> Result<CallToolResult, Short> {
        let began = tokio::time::Instant::now();
        let mut hard_end = began + limits.hard_max.saturating_sub(spent);
        // The questions answered, by the server's keys (unique for the task's life).
        let mut answered = std::collections::HashSet::new();
        let mut polls = 0u32;
        let report = |message: Option<&String>, polls: u32| {
            if let Some(sink) = progress {
                let _ = sink.send(CallProgress {
                    progress: f64::from(polls),
                    total: None,
                    message: message.cloned(),
                    task: Some(id.to_owned()),
                });
            }
        };
        let timeout = |after: Duration| {
            Short::Link(McpError::Timeout {
                server: self.name().to_owned(),
                after,
            })
        };
        report(said.as_ref(), polls);
        loop {
            let wake = (tokio::time::Instant::now() + interval).min(hard_end);
            tokio::select! {
                () = tokio::time::sleep_until(wake) => {}
                () = cancel.cancelled() => {
                    self.cancel_task(id).await;
                    return Err(Short::Cancelled);
                }
            }
            if tokio::time::Instant::now() >= hard_end {
                return Err(timeout(limits.hard_max));
            }
            let got = tokio::select! {
                got = tokio::time::timeout(limits.idle, self.peer().get_task(GetTaskParams::new(id.to_owned()))) => got,
                () = cancel.cancelled() => {
                    self.cancel_task(id).await;
                    return Err(Short::Cancelled);
                }
            };
            let got = match got {
                Err(_) => return Err(timeout(limits.idle)),
                Ok(got) => got.map_err(|e| Short::Unreachable(self.service_error(&e)))?,
            };
            polls += 1;
            let detailed = got.task;
            interval = poll_interval(&detailed.task);
            if detailed.task.status_message != said {
                said.clone_from(&detailed.task.status_message);
            }
            report(said.as_ref(), polls);
            match detailed.payload {
                TaskPayload::Working => {}
                TaskPayload::InputRequired { mut input_requests } => {
                    // A poll before the server took the answers asks the same again.
                    input_requests.retain(|key, _| !answered.contains(key));
                    if input_requests.is_empty() {
                        continue;
                    }
                    answered.extend(input_requests.keys().cloned());
                    let asking = tokio::time::Instant::now();
                    let answers = tokio::select! {
                        answers = self.answer_inputs(input_requests) => answers,
                        () = cancel.cancelled() => {
                            self.cancel_task(id).await;
                            return Err(Short::Cancelled);
                        }
                    };
                    // The person's time with the form is not the call's.
                    hard_end += asking.elapsed();
                    let answers = match answers {
                        Ok(answers) => answers,
                        Err(e) => {
                            self.cancel_task(id).await;
                            return Err(Short::Task(e));
                        }
                    };
                    let params = UpdateTaskParams::new(id.to_owned(), answers);
                    let sent = tokio::select! {
                        sent = tokio::time::timeout(limits.idle, self.peer().update_task(params)) => sent,
                        () = cancel.cancelled() => {
                            self.cancel_task(id).await;
                            return Err(Short::Cancelled);
                        }
                    };
                    match sent {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => return Err(Short::Link(self.service_error(&e))),
                        Err(_) => return Err(timeout(limits.idle)),
                    }
                }
                TaskPayload::Completed { result } => {
                    return serde_json::from_value(serde_json::Value::Object(result)).map_err(
                        |e| {
                            Short::Task(self.request_error(&format!(
                                "its task ended with a result that is not a tool result: {e}"
                            )))
                        },
                    );
                }
                TaskPayload::Failed { error } => {
                    let message = error
                        .get("message")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("no reason given");
                    return Err(Short::Task(
                        self.request_error(&format!("its task failed: {message}")),
                    ));
                }
                TaskPayload::Cancelled => {
                    return Err(Short::Task(
                        self.request_error(&"it cancelled the task itself"),
                    ));
                }
                _ => {
                    return Err(Short::Task(self.request_error(
                        &"its task is in a state Switchboard does not know",
                    )))
                }
            }
        }
    }

    /// Tells the server to cancel the task (cooperative: its answer is waited for a moment,
    /// and a failure is only logged).
    pub async fn cancel_task(&self, id: &str) {
        let sent = tokio::time::timeout(
            CANCEL_WAIT,
            self.peer()
                .cancel_task(CancelTaskParams::new(id.to_owned())),
        )
        .await;
        match sent {
            Ok(Ok(())) => tracing::info!(server = %self.name(), task = %id, "task cancelled"),
            Ok(Err(e)) => {
                tracing::warn!(server = %self.name(), task = %id, error = %e, "task not cancelled")
            }
            Err(_) => {
                tracing::warn!(server = %self.name(), task = %id, "no answer to tasks/cancel")
            }
        }
    }
}
