//! Long tasks followed outside their runs (issue 61): a task the person went on without, and
//! one Switchboard stopped while it ran (a crash, a kill, a quit), are followed by the open app
//! ([`App::start_task_follower`]) or by `switchboard tasks follow` until they end; the result is
//! kept as the call's late result, which the window shows on the call's card and the model
//! reads with the next question. A task whose server no longer knows it (a local server was
//! started again) is said to be lost. A running call's card reaches it here too
//! ([`App::control_call`]): Cancel, and Go on for a task.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::App;
use crate::agent::controls::CallControl;
use crate::error::CoreError;
use crate::mcp::results;
use crate::mcp::server::{CallLimits, McpError};
use crate::mcp::tasks::Resumed;
use crate::store::{TaskEnd, TaskState, ToolRun};

/// How long a task's server is waited for between two polls, when it is followed outside its
/// run; a task itself may run for a day.
const FOLLOW_LIMITS: CallLimits = CallLimits {
    idle: Duration::from_secs(60),
    hard_max: Duration::from_secs(24 * 60 * 60),
};
/// The characters of a late result the model reads with the next question at most (it may read
/// the rest with `read_result`): it comes outside any run, so no window's share measured it, and
/// a model with a small window must still be able to take the question.
const LATE_MODEL_CHARS: usize = 8_000;
/// Tasks asked about at once at most, until their servers first answer: a home may have left
/// hundreds. Once a task's server answered, the task is polled at the server's own pace, so a
/// long task does not hold a place a new one needs.
const FOLLOWED_AT_ONCE: usize = 32;
/// The first polls in a row a server may answer with an error, over at least
/// [`REFUSED_FOR`], before its task is said to be lost.
const MAX_REFUSALS: u32 = 5;
/// How long a server may go on refusing to say how a task stands before it is lost.
const REFUSED_FOR: Duration = Duration::from_secs(120);
/// How often the follower looks again for tasks whose servers were not running.
const LOOK_AGAIN: Duration = Duration::from_secs(30);

/// How a task followed outside its run ended, for `tasks follow`.
#[derive(Debug, Clone, Serialize)]
pub struct FollowedTask {
    pub conversation_id: String,
    pub call_id: String,
    pub tool: String,
    pub task_id: String,
    /// Where it stands now: still `background` when its server is not running.
    pub state: TaskState,
    /// What the conversation says of it (its late result, or why there is none).
    pub said: String,
    /// Its server answered the first poll with an error (counted by the follower).
    #[serde(skip)]
    refused: bool,
}

/// How far the window has heard of other processes' late results: the newest time told, and
/// the ones told at that time (another kept in the same millisecond is still told).
struct Heard {
    until: i64,
    at_until: HashSet<String>,
}

impl App {
    /// Passes a person's request to the running call `call_id` of the answer `message_id`
    /// (its card's Cancel or Go on). A Cancel of a task in the background that is not being
    /// followed right now (its server is not running, or it waits for its first poll) ends it
    /// here: it is recorded cancelled, and its server, if running, is told. Returns whether
    /// there was such a call to reach.
    ///
    /// # Errors
    /// The database.
    pub async fn control_call(
        &self,
        message_id: &str,
        call_id: &str,
        control: CallControl,
    ) -> Result<bool, CoreError> {
        let run_id = ToolRun::id_for(message_id, call_id);
        if self.controls.send(&run_id, control) {
            return Ok(true);
        }
        if control != CallControl::Cancel {
            return Ok(false);
        }
        // Only a task this process follows (or one whose process is gone): another live
        // process's task is that process's to cancel.
        let Some(run) = self
            .store()?
            .background_tasks()
            .await?
            .into_iter()
            .find(|run| run.id == run_id)
        else {
            return Ok(false);
        };
        let task_id = run.task.as_ref().map(|t| t.id.clone()).unwrap_or_default();
        let server = self.host.server(&run.server);
        let told = match &server {
            Some(_) => String::new(),
            None => format!(
                " Its server “{}” was not running, so it could not be told: the work may go on \
                 there.",
                run.server
            ),
        };
        let end = TaskEnd::words(
            TaskState::Cancelled,
            format!(
                "The person cancelled the task of “{}” before it ended.{told}",
                run.display_name
            ),
        );
        // Recorded first; the server is told only of a cancel that was kept (a call still
        // being handed over is not cancelled here: it is followed in a moment, Cancel then
        // reaches it there).
        let Some(_) = self.keep_end(&run, &task_id, end).await? else {
            return Ok(false);
        };
        if let Some(server) = server {
            server.cancel_task(&task_id).await;
        }
        Ok(true)
    }

    /// The calls that ran as tasks, newest first (at most `limit`).
    ///
    /// # Errors
    /// The database.
    pub async fn tasks(&self, limit: u32) -> Result<Vec<ToolRun>, CoreError> {
        Ok(self.store()?.recent_tasks(limit).await?)
    }

    /// The calls whose tasks are to be followed outside their runs, oldest first.
    ///
    /// # Errors
    /// The database.
    pub async fn background_tasks(&self) -> Result<Vec<ToolRun>, CoreError> {
        Ok(self.store()?.background_tasks().await?)
    }

    /// Sends the window the conversation a task's late result landed in, each time one does,
    /// until `send` says the window is gone or another watcher replaces this one.
    pub fn watch_tasks(self: &Arc<Self>, send: impl Fn(String) -> bool + Send + 'static) {
        let stop = self.replace_watcher(&self.task_watcher);
        let mut ended = self.task_ends.subscribe();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    got = ended.recv() => match got {
                        Ok(conversation) => if !send(conversation) { return },
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    },
                }
            }
        });
    }

    /// Follows, until the app quits, every task followed outside its run: those left by the
    /// last session once its servers have started, and each one a run hands over. The window
    /// hears of a late result another process kept within [`super::OTHERS_LOOK_EVERY`] (a
    /// look at the database's version), and at each look (every 30 s) besides.
    pub fn start_task_follower(self: &Arc<Self>) {
        self.follow_tasks_every(LOOK_AGAIN);
    }

    /// [`App::start_task_follower`], looking again every `look_again` (tests look more often).
    pub fn follow_tasks_every(self: &Arc<Self>, look_again: Duration) {
        let app = Arc::clone(self);
        let quitting = self.quitting.clone();
        // Late results kept by other processes from now on are told to the window.
        let mut heard = Heard {
            until: crate::store::now_ms(),
            at_until: HashSet::new(),
        };
        tokio::spawn(async move {
            app.servers_started(crate::mcp::launch::STARTUP_TIMEOUT)
                .await;
            let mut following: HashSet<String> = HashSet::new();
            // Refusals in a row, by call, and when the first of them came.
            let mut refusals: HashMap<String, (u32, tokio::time::Instant)> = HashMap::new();
            let room = Arc::new(tokio::sync::Semaphore::new(FOLLOWED_AT_ONCE));
            let (done, mut ended) = tokio::sync::mpsc::unbounded_channel::<(String, bool)>();
            let mut version = None;
            loop {
                app.others_wrote(&mut version).await;
                if !app.tell_late_results_of_others(&mut heard).await {
                    version = None;
                }
                match app.store() {
                    Ok(store) => match store.background_tasks().await {
                        Ok(open) => {
                            refusals.retain(|id, _| open.iter().any(|run| &run.id == id));
                            for run in open {
                                if !following.insert(run.id.clone()) {
                                    continue;
                                }
                                let (app, done, room) =
                                    (Arc::clone(&app), done.clone(), Arc::clone(&room));
                                let give_up = refusals.get(&run.id).is_some_and(|(n, first)| {
                                    n + 1 >= MAX_REFUSALS && first.elapsed() >= REFUSED_FOR
                                });
                                tokio::spawn(async move {
                                    let id = run.id.clone();
                                    let turn = room.acquire_owned().await.ok();
                                    let followed = app.follow_task(run, turn, give_up).await;
                                    let refused = match followed {
                                        Ok(followed) => followed.refused,
                                        Err(e) => {
                                            tracing::warn!(error = %e, "a task's end was not kept");
                                            false
                                        }
                                    };
                                    let _ = done.send((id, refused));
                                });
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "cannot list the tasks to follow"),
                    },
                    Err(_) => return,
                }
                // A follow that ends (a task whose server is not running ends at once) is not
                // looked at again before the next look: no turn of this loop spins.
                let next_look = tokio::time::Instant::now() + look_again;
                let mut others_at = tokio::time::Instant::now() + super::OTHERS_LOOK_EVERY;
                loop {
                    tokio::select! {
                        () = quitting.cancelled() => return,
                        () = app.controls.handed_over() => break,
                        () = tokio::time::sleep_until(next_look) => break,
                        // Another process's late result is heard at once, not at the next look
                        // (on a clock of its own: follows ending often do not put it off).
                        () = tokio::time::sleep_until(others_at) => {
                            others_at = tokio::time::Instant::now() + super::OTHERS_LOOK_EVERY;
                            if app.others_wrote(&mut version).await
                                && !app.tell_late_results_of_others(&mut heard).await
                            {
                                version = None;
                            }
                        }
                        Some((id, refused)) = ended.recv() => {
                            following.remove(&id);
                            if refused {
                                refusals
                                    .entry(id)
                                    .or_insert((0, tokio::time::Instant::now()))
                                    .0 += 1;
                            } else {
                                refusals.remove(&id);
                            }
                        }
                    }
                }
            }
        });
    }

    /// Tells the window of the late results other processes kept since `heard` (which moves
    /// past them, so each is told once); `false` when they could not be read.
    async fn tell_late_results_of_others(&self, heard: &mut Heard) -> bool {
        let Ok(store) = self.store() else {
            return false;
        };
        match store.late_results_of_others(heard.until).await {
            Ok(found) => {
                let mut told: Vec<String> = Vec::new();
                for (id, conversation, at) in found {
                    if at == heard.until && heard.at_until.contains(&id) {
                        continue;
                    }
                    if at > heard.until {
                        heard.until = at;
                        heard.at_until.clear();
                    }
                    heard.at_until.insert(id);
                    if !told.contains(&conversation) {
                        let _ = self.task_ends.send(conversation.clone());
                        told.push(conversation);
                    }
                }
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot look for others' late results");
                false
            }
        }
    }

    /// Follows every task left to be followed outside its run to its end (`tasks follow`);
    /// one whose server is not running is left for later and said so.
    ///
    /// # Errors
    /// The database.
    pub async fn follow_tasks_until_done(self: &Arc<Self>) -> Result<Vec<FollowedTask>, CoreError> {
        self.servers_started(crate::mcp::launch::STARTUP_TIMEOUT)
            .await;
        let open = self.background_tasks().await?;
        let room = Arc::new(tokio::sync::Semaphore::new(FOLLOWED_AT_ONCE));
        let follows = open.into_iter().map(|run| {
            let (app, room) = (Arc::clone(self), Arc::clone(&room));
            async move {
                let turn = room.acquire_owned().await.ok();
                app.follow_task(run, turn, false).await
            }
        });
        futures_util::future::join_all(follows)
            .await
            .into_iter()
            .collect()
    }

    /// Follows one task to its end and keeps its late result. A task whose server is not
    /// running stays to be followed; so does one whose server refused to say how it stands,
    /// unless it is time to `give_up` on it (then it is lost). `turn` is its place among the
    /// tasks asked about at once, held until its server first answers.
    async fn follow_task(
        self: &Arc<Self>,
        run: ToolRun,
        turn: Option<tokio::sync::OwnedSemaphorePermit>,
        give_up: bool,
    ) -> Result<FollowedTask, CoreError> {
        let task_id = run.task.as_ref().map(|t| t.id.clone()).unwrap_or_default();
        let followed = |state: TaskState, said: String| FollowedTask {
            conversation_id: run.conversation_id.clone(),
            call_id: run.call_id.clone(),
            tool: run.display_name.clone(),
            task_id: task_id.clone(),
            state,
            said,
            refused: false,
        };
        let Some(server) = self.host.server(&run.server) else {
            // A server removed from mcp.json will not run again: its task is said to be lost,
            // not followed for ever (an mcp.json that cannot be read loses nothing).
            // (A server the host is trying to run is configured: mcp.json is read only for
            // one it stopped or never knew.)
            let trying = self
                .host
                .states()
                .get(&run.server)
                .is_some_and(|state| !matches!(state, crate::mcp::host::ServerState::Stopped));
            let removed = !trying
                && self
                    .load_mcp()
                    .is_ok_and(|file| !file.specs().iter().any(|(name, _)| name == &run.server));
            if removed {
                let end = TaskEnd::words(
                    TaskState::Lost,
                    format!(
                        "The task of “{}” cannot be followed: its server “{}” is no longer among \
                         your servers. Its work may or may not have been done.",
                        run.display_name, run.server
                    ),
                );
                let (state, said) = self.kept_or_as_stored(&run, &task_id, end).await?;
                return Ok(followed(state, said));
            }
            return Ok(followed(
                TaskState::Background,
                format!(
                    "“{}” is not running: its task is followed once it is.",
                    run.server
                ),
            ));
        };
        let cancel = CancellationToken::new();
        let mut controls = self.controls.register(&run.id);
        let resumed = {
            let following = server.resume_task(&task_id, FOLLOW_LIMITS, &cancel, None, turn);
            tokio::pin!(following);
            loop {
                tokio::select! {
                    resumed = &mut following => break Some(resumed),
                    Some(control) = controls.requests.recv() => {
                        if control == CallControl::Cancel {
                            cancel.cancel();
                        }
                    }
                    // Quitting leaves it to the next start: its server is being stopped, and
                    // what that does to a poll says nothing of the task.
                    () = self.quitting.cancelled() => break None,
                }
            }
        };
        drop(controls);
        let Some(resumed) = resumed.filter(|_| !self.quitting.is_cancelled()) else {
            return Ok(followed(
                TaskState::Background,
                "Switchboard is closing: the task is followed again at the next start.".to_owned(),
            ));
        };
        let end = match resumed {
            Resumed::Later(e) => {
                tracing::warn!(server = %run.server, task = %task_id, error = %e, "a task could not be followed now; it is followed again later");
                return Ok(followed(
                    TaskState::Background,
                    format!("It could not be followed now ({e}); it is followed again later."),
                ));
            }
            Resumed::Refused(e) if !give_up => {
                tracing::warn!(server = %run.server, task = %task_id, error = %e, "a task's server refused to say how it stands");
                let mut later = followed(
                    TaskState::Background,
                    format!(
                        "Its server refused to say how it stands ({e}); it is asked again later."
                    ),
                );
                later.refused = true;
                return Ok(later);
            }
            Resumed::Refused(e) => TaskEnd::words(
                TaskState::Lost,
                format!(
                    "The task of “{}” could not be followed: its server refused to say how it \
                     stands {MAX_REFUSALS} times in a row over {} minutes (last: {e}). Its work \
                     may or may not have been done.",
                    run.display_name,
                    REFUSED_FOR.as_secs() / 60
                ),
            ),
            Resumed::Unknown(said) => TaskEnd::words(
                TaskState::Lost,
                format!(
                    "The task of “{}” could not be followed again: its server no longer knows it \
                     (it said: {said}). Its work may or may not have been done.",
                    run.display_name
                ),
            ),
            Resumed::Ended(Err(McpError::Cancelled { .. })) => TaskEnd::words(
                TaskState::Cancelled,
                format!(
                    "The person cancelled the task of “{}” before it ended.",
                    run.display_name
                ),
            ),
            Resumed::Ended(Err(e)) => TaskEnd::words(
                TaskState::Failed,
                format!("The task of “{}” did not end well: {e}", run.display_name),
            ),
            Resumed::Ended(Ok(result)) => {
                let value = serde_json::to_value(&result).unwrap_or_default();
                let text = results::for_model(&value, LATE_MODEL_CHARS);
                TaskEnd {
                    state: TaskState::Completed,
                    result: value.to_string(),
                    for_model: results::naming_call(text.text, &run.call_id),
                    is_error: text.is_error,
                    rich: results::is_rich(&value),
                }
            }
        };
        let (state, said) = self.kept_or_as_stored(&run, &task_id, end).await?;
        Ok(followed(state, said))
    }

    /// [`App::keep_end`]; when the end was not kept, where the task stands as stored.
    async fn kept_or_as_stored(
        &self,
        run: &ToolRun,
        task_id: &str,
        end: TaskEnd,
    ) -> Result<(TaskState, String), CoreError> {
        if let Some(kept) = self.keep_end(run, task_id, end).await? {
            return Ok(kept);
        }
        let state = self
            .store()?
            .task_run(run.id.clone())
            .await?
            .and_then(|r| r.task)
            .map_or(TaskState::Background, |t| t.state);
        Ok((
            state,
            "Its end was already kept (by a Cancel, or another follower), or its call is still \
             being answered: it is followed again at the next look if it is still open."
                .to_owned(),
        ))
    }

    /// Keeps how call `run`'s task ended and tells the window; returns its state and words,
    /// or `None` when it was not kept (someone else ended it, or its call is still being
    /// handed over).
    async fn keep_end(
        &self,
        run: &ToolRun,
        task_id: &str,
        end: TaskEnd,
    ) -> Result<Option<(TaskState, String)>, CoreError> {
        let said = end.for_model.clone();
        let state = end.state;
        let saved = self
            .store()?
            .end_background_task(run.id.clone(), end)
            .await?;
        if saved.is_none() {
            return Ok(None);
        }
        tracing::info!(server = %run.server, task = %task_id, state = state.as_str(), "a task followed outside its run ended");
        let _ = self.task_ends.send(run.conversation_id.clone());
        Ok(Some((state, said)))
    }
}
