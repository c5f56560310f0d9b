//! Scheduled runs (issue 61), as the window and the command line run them: keeping schedules,
//! finding what is due ([`App::run_due`]), running one (a new conversation of its own, started
//! from its profile, sent its prompt) and recording what became of it. The window runs its
//! home's schedules while it is open ([`App::start_scheduler`]); with the window closed, the
//! system's scheduler runs `switchboard schedule run-due`. Whichever holds the home's
//! [`RunnerLock`] runs them; each due time is claimed in the database besides, so none runs
//! twice.
//!
//! Nothing is approved silently: a call the policies would ask about waits for the person
//! (a desktop notification says so, the Schedules page counts it) for as long as the schedule
//! says, then is denied, the model told why. With no window to ask in (`run-due`), it is
//! denied at once.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{App, ProfileChoice, RunHandle, ToolSelection, TurnRequest};
use crate::agent::approval::{Answers, ReviewRequest, Reviewing};
use crate::agent::{ApprovalAnswer, ApprovalRequest, Approver, Decision, PendingApprovals};
use crate::error::CoreError;
use crate::events::{EventSink, RunEvent, StopReason};
use crate::schedules::{
    due_now, local_zone, moment_text, DueNow, NewSchedule, RunnerLock, Schedule,
};
use crate::store::{now_ms, NewRun, RunStatus, ScheduleRow, ScheduleRun};

/// How often the window looks for due schedules, at most.
const LOOK_EVERY: Duration = Duration::from_secs(30);
/// What the window last saw of the schedules ([`App::watch_schedules`]).
struct SchedulesLook {
    changes: i64,
    live: usize,
}

/// How many runs the record of one schedule keeps on show.
pub const RUNS_SHOWN: u32 = 200;

/// Who can answer a scheduled run's approvals.
#[derive(Clone)]
pub enum Asker {
    /// The window: a call waits there, as long as the schedule says.
    Window(Arc<PendingApprovals>),
    /// No one (the window is closed): a call that would ask is denied at once.
    NoOne,
}

/// What a runner did with one due schedule.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DueOutcome {
    pub schedule: String,
    pub run_id: String,
    pub status: RunStatus,
    pub conversation_id: Option<String>,
    pub message: Option<String>,
}

/// The end of a run under way: it records what became of the run, and says it.
type RunEnd = std::pin::Pin<Box<dyn std::future::Future<Output = DueOutcome> + Send>>;

/// A run asked for by hand, started.
pub struct StartedRun {
    pub run_id: String,
    pub handle: RunHandle,
    /// Resolves once the run's end is recorded (and notified).
    pub settled: tokio::task::JoinHandle<DueOutcome>,
}

/// A schedule as shown: its row, the rule in words.
fn shown(row: ScheduleRow) -> Schedule {
    let rule_text = row.fields.rule.text(&local_zone());
    Schedule {
        id: row.id,
        fields: row.fields,
        enabled: row.enabled,
        created_at: row.created_at,
        next_at: row.next_at,
        rule_text,
    }
}

impl App {
    /// Every schedule, by name.
    ///
    /// # Errors
    /// The database.
    pub async fn schedules(&self) -> Result<Vec<Schedule>, CoreError> {
        let rows = self.store()?.schedules().await?;
        Ok(rows.into_iter().map(shown).collect())
    }

    /// Keeps a new schedule; it first runs at its rule's next time from now.
    ///
    /// # Errors
    /// A field out of range; a profile that does not exist; a name another schedule has.
    pub async fn add_schedule(&self, fields: NewSchedule) -> Result<Schedule, CoreError> {
        let mut fields = fields.validated()?;
        // Kept by id: a profile renamed later is still the schedule's.
        if let Some(profile) = &fields.profile {
            fields.profile = Some(self.profiles().get(profile).await?.id);
        }
        if let Some(provider) = &fields.provider {
            let known = self.providers().list().await?;
            if !known
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(provider.trim()))
            {
                return Err(crate::error::InvalidInput::new(
                    "provider",
                    format!("No provider is called “{provider}”."),
                )
                .into());
            }
        }
        let now = now_ms();
        let next = fields.rule.next_after(now, now, &local_zone());
        if next.is_none() {
            return Err(crate::error::InvalidInput::new(
                "once",
                "That moment has passed: pick one still to come.",
            )
            .into());
        }
        let row = self.store()?.add_schedule(fields, now, next).await?;
        self.schedules_changed();
        tracing::info!(schedule = %row.fields.name, next_at = ?row.next_at, "schedule added");
        Ok(shown(row))
    }

    /// Removes a schedule (by id or name) and the record of its runs; the conversations its
    /// runs landed in stay.
    ///
    /// # Errors
    /// No such schedule; the database.
    pub async fn remove_schedule(&self, key: &str) -> Result<(), CoreError> {
        let store = self.store()?;
        let row = store.schedule(key.to_owned()).await?;
        // Its runs under way here stop first (what they said stays in their conversations).
        for run in store.live_schedule_runs().await? {
            if let (true, Some(conversation)) = (run.schedule_id == row.id, &run.conversation_id) {
                self.runs.stop_in(conversation).await;
            }
        }
        let removed = store.remove_schedule(row.id).await?;
        self.schedules_changed();
        tracing::info!(schedule = %removed.fields.name, "schedule removed");
        Ok(())
    }

    /// Switches a schedule on (it next runs at its rule's next time from now) or off.
    ///
    /// # Errors
    /// No such schedule; the database.
    pub async fn set_schedule_enabled(
        &self,
        key: &str,
        enabled: bool,
    ) -> Result<Schedule, CoreError> {
        let store = self.store()?;
        let row = store.schedule(key.to_owned()).await?;
        let now = now_ms();
        let next = enabled
            .then(|| {
                row.fields
                    .rule
                    .next_after(row.created_at, now, &local_zone())
            })
            .flatten();
        let changed = store.set_schedule_enabled(row.id, enabled, next).await?;
        self.schedules_changed();
        Ok(shown(changed))
    }

    /// The latest runs, newest first: of one schedule (by id or name), or of all.
    ///
    /// # Errors
    /// No such schedule; the database.
    pub async fn schedule_runs(
        &self,
        key: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ScheduleRun>, CoreError> {
        let store = self.store()?;
        let id = match key {
            Some(key) => Some(store.schedule(key.to_owned()).await?.id),
            None => None,
        };
        Ok(store.schedule_runs(id, limit.min(RUNS_SHOWN)).await?)
    }

    /// How many runs wait for the person's approval now (the Schedules page's badge).
    ///
    /// # Errors
    /// The database.
    pub async fn schedule_runs_waiting(&self) -> Result<u32, CoreError> {
        let runs = self.store()?.live_schedule_runs().await?;
        let waiting = runs
            .iter()
            .filter(|r| r.status == RunStatus::Waiting)
            .count();
        Ok(u32::try_from(waiting).unwrap_or(u32::MAX))
    }

    /// Runs a schedule now, asked for by hand: its run is recorded like a due one, and its
    /// approvals answered by `approver` (the window's, or the terminal's). Returns the run's id
    /// and its handle (the conversation it landed in is the handle's), and its record's end.
    ///
    /// # Errors
    /// No such schedule; what starting its turn refuses (a profile or provider gone).
    pub async fn run_schedule_now(
        self: &Arc<Self>,
        key: &str,
        sink: Arc<dyn EventSink>,
        approver: Option<Arc<dyn Approver>>,
    ) -> Result<StartedRun, CoreError> {
        let store = self.store()?;
        let row = store.schedule(key.to_owned()).await?;
        let run = NewRun {
            due_at: now_ms(),
            status: RunStatus::Running,
            late: false,
            manual: true,
            message: None,
        };
        let run_id = store
            .claim_schedule_run(row.id.clone(), None, None, run)
            .await?
            .ok_or_else(|| CoreError::Conflict {
                field: "schedule",
                message: "That schedule was just started; try again.".into(),
            })?;
        let approver = approver.unwrap_or_else(|| {
            Arc::new(Unattended::new(
                self,
                &run_id,
                &row,
                Asker::Window(Arc::clone(&self.approvals)),
            ))
        });
        let ending = Arc::new(Ending::new(Some(sink)));
        let handle = self.launch(&row, &run_id, approver, ending.clone()).await?;
        let settled = tokio::spawn(self.run_end(&run_id, &row, &handle, ending));
        Ok(StartedRun {
            run_id,
            handle,
            settled,
        })
    }

    /// Runs every schedule due at `now`: a run missed long enough ago runs once or is skipped,
    /// as its schedule says; a schedule whose last run still goes is skipped this time. With
    /// `wait`, returns when every run it started has ended; otherwise as soon as they started.
    ///
    /// # Errors
    /// The database.
    pub async fn run_due(
        self: &Arc<Self>,
        now: i64,
        asker: &Asker,
        wait: bool,
    ) -> Result<Vec<DueOutcome>, CoreError> {
        let (mut outcomes, started) = self.start_due(now, asker).await?;
        let going: Vec<_> = started.into_iter().map(tokio::spawn).collect();
        if wait {
            for run in going {
                if let Ok(outcome) = run.await {
                    outcomes.push(outcome);
                }
            }
        }
        Ok(outcomes)
    }

    /// Claims and starts what is due at `now`: what became of those that did not start
    /// (skipped, failed), and the ends of those that did (each records its run).
    async fn start_due(
        self: &Arc<Self>,
        now: i64,
        asker: &Asker,
    ) -> Result<(Vec<DueOutcome>, Vec<RunEnd>), CoreError> {
        let store = self.store()?;
        let tz = local_zone();
        let mut outcomes = Vec::new();
        let mut running: Vec<RunEnd> = Vec::new();
        let live: Vec<String> = store
            .live_schedule_runs()
            .await?
            .into_iter()
            .map(|r| r.schedule_id)
            .collect();
        for row in store.schedules().await? {
            let Some(due) = row.next_at.filter(|_| row.enabled) else {
                continue;
            };
            let verdict = due_now(due, now, row.fields.missed);
            if verdict == DueNow::Wait {
                continue;
            }
            let next = row.fields.rule.next_after(row.created_at, now, &tz);
            let still_going = live.contains(&row.id);
            let (status, message) = match verdict {
                _ if still_going => (
                    RunStatus::Skipped,
                    Some("Skipped: its last run was still going.".to_owned()),
                ),
                DueNow::Skip => (
                    RunStatus::Skipped,
                    Some(format!(
                        "Missed (due {}); this schedule skips missed runs.",
                        moment_text(due, &tz).unwrap_or_default()
                    )),
                ),
                _ => (RunStatus::Running, None),
            };
            let late = matches!(verdict, DueNow::Run { late: true } | DueNow::Skip);
            let claim = NewRun {
                due_at: due,
                status,
                late,
                manual: false,
                message: message.clone(),
            };
            let Some(run_id) = store
                .claim_schedule_run(row.id.clone(), Some(due), next, claim)
                .await?
            else {
                continue; // another runner claimed it
            };
            if status == RunStatus::Skipped {
                outcomes.push(DueOutcome {
                    schedule: row.fields.name.clone(),
                    run_id,
                    status,
                    conversation_id: None,
                    message,
                });
                continue;
            }
            let approver = Arc::new(Unattended::new(self, &run_id, &row, asker.clone()));
            let ending = Arc::new(Ending::new(None));
            match self.launch(&row, &run_id, approver, ending.clone()).await {
                Ok(handle) => running.push(self.run_end(&run_id, &row, &handle, ending)),
                Err(e) => {
                    let message = format!("It could not start: {e}");
                    let _ = store
                        .set_schedule_run(
                            run_id.clone(),
                            RunStatus::Failed,
                            None,
                            Some(message.clone()),
                        )
                        .await;
                    self.notify(&format!("“{}” failed", row.fields.name), &message);
                    outcomes.push(DueOutcome {
                        schedule: row.fields.name.clone(),
                        run_id,
                        status: RunStatus::Failed,
                        conversation_id: None,
                        message: Some(message),
                    });
                }
            }
        }
        if !outcomes.is_empty() || !running.is_empty() {
            self.schedules_changed();
        }
        Ok((outcomes, running))
    }

    /// Shows a desktop notification, with any key it holds hidden (a model's answer or a
    /// server's error may quote one): the values the keychain gave this run, and key shapes.
    /// Hidden before the text is cut to length, so no key is cut in part.
    fn notify(&self, title: &str, body: &str) {
        crate::notify::desktop(title, body, self.keychain.store().as_ref());
    }

    /// Tells the window's watcher that a schedule or a run changed.
    fn schedules_changed(&self) {
        self.schedule_changes
            .send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Sends the window how many runs wait for an approval now, then again after each change
    /// of a schedule or a run: this process's at once, another process's (the command line's)
    /// within [`super::OTHERS_LOOK_EVERY`]; until `send` says the window is gone or another watcher
    /// replaces this one.
    pub fn watch_schedules(self: &Arc<Self>, send: impl Fn(u32) -> bool + Send + 'static) {
        let stop = self.replace_watcher(&self.schedule_watcher);
        let mut changes = self.schedule_changes.subscribe();
        let app = Arc::clone(self);
        tokio::spawn(async move {
            let mut version = None;
            loop {
                changes.borrow_and_update();
                // The version before the look: a write between the two is seen again, not lost.
                app.others_wrote(&mut version).await;
                let mut seen = app.schedules_look().await;
                match app.schedule_runs_waiting().await {
                    Ok(waiting) => {
                        if !send(waiting) {
                            return;
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot count the runs waiting"),
                }
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        Ok(()) = changes.changed() => break,
                        () = tokio::time::sleep(super::OTHERS_LOOK_EVERY) => {
                            if app.others_changed_schedules(&mut seen, &mut version).await {
                                break;
                            }
                        }
                    }
                }
            }
        });
    }

    /// What the window last saw of the schedules: the count of their changes, and how many
    /// runs are live.
    async fn schedules_look(&self) -> Option<SchedulesLook> {
        let store = self.store().ok()?;
        Some(SchedulesLook {
            changes: store.schedule_changes().await.ok()?,
            live: store.live_schedule_runs().await.ok()?.len(),
        })
    }

    /// Whether another process changed a schedule or a run since `seen` (which is brought up
    /// to date). The count is read only when another process wrote (the database's version
    /// moved past `version`); while runs are live they are counted at each look, as one whose
    /// process died (which writes nothing) then reads as interrupted.
    async fn others_changed_schedules(
        &self,
        seen: &mut Option<SchedulesLook>,
        version: &mut Option<i64>,
    ) -> bool {
        let wrote = self.others_wrote(version).await;
        if !wrote && seen.as_ref().is_some_and(|s| s.live == 0) {
            return false;
        }
        let Some(now) = self.schedules_look().await else {
            // Looked at again at the next tick, not taken as seen.
            *version = None;
            return false;
        };
        let changed = seen
            .as_ref()
            .is_none_or(|s| s.changes != now.changes || s.live != now.live);
        *seen = Some(now);
        changed
    }

    /// [`App::run_due`] until every run it started has ended, looking again meanwhile for
    /// schedules that fall due (`schedule run-due`, which holds the home's runner lock for as
    /// long: a run due while another goes is not left to be missed); what became of each.
    ///
    /// # Errors
    /// The database.
    pub async fn run_due_until_done(
        self: &Arc<Self>,
        asker: &Asker,
    ) -> Result<Vec<DueOutcome>, CoreError> {
        let mut outcomes = Vec::new();
        let mut going = tokio::task::JoinSet::new();
        loop {
            let (done, started) = self.start_due(now_ms(), asker).await?;
            outcomes.extend(done);
            for run in started {
                going.spawn(run);
            }
            if going.is_empty() {
                return Ok(outcomes);
            }
            let wait = self.until_next_due().await;
            tokio::select! {
                Some(ended) = going.join_next() => {
                    if let Ok(outcome) = ended {
                        outcomes.push(outcome);
                    }
                }
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Looks for due schedules from now until the app quits, whenever this process holds the
    /// home's runner lock (the window; a `run-due` holding it meanwhile is waited out).
    pub fn start_scheduler(self: &Arc<Self>) {
        let app = Arc::clone(self);
        let quitting: CancellationToken = self.quitting.clone();
        tokio::spawn(async move {
            // A run missed while the app was closed gets the tools of the servers starting now.
            app.servers_started(crate::mcp::launch::STARTUP_TIMEOUT)
                .await;
            let mut lock: Option<RunnerLock> = None;
            loop {
                if lock.is_none() {
                    lock = RunnerLock::try_take(&app.paths.data_dir)
                        .map_err(|e| tracing::warn!(error = %e, "the schedules' lock"))
                        .ok()
                        .flatten();
                }
                if lock.is_some() {
                    let asker = Asker::Window(Arc::clone(&app.approvals));
                    if let Err(e) = app.run_due(now_ms(), &asker, false).await {
                        tracing::warn!(error = %e, "looking for due schedules");
                    }
                }
                let wait = app.until_next_due().await;
                tokio::select! {
                    () = quitting.cancelled() => break,
                    () = tokio::time::sleep(wait) => {}
                }
            }
        });
    }

    /// How long until the next schedule is due, at most [`LOOK_EVERY`].
    async fn until_next_due(&self) -> Duration {
        let Ok(store) = self.store() else {
            return LOOK_EVERY;
        };
        let next = store
            .schedules()
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|s| s.enabled)
            .filter_map(|s| s.next_at)
            .min();
        match next {
            Some(at) => {
                let ms = u64::try_from(at.saturating_sub(now_ms())).unwrap_or(0);
                Duration::from_millis(ms).clamp(Duration::from_secs(1), LOOK_EVERY)
            }
            None => LOOK_EVERY,
        }
    }

    /// Starts a run of `row` in a new conversation of its own; the run's record names it.
    async fn launch(
        self: &Arc<Self>,
        row: &ScheduleRow,
        run_id: &str,
        approver: Arc<dyn Approver>,
        sink: Arc<dyn EventSink>,
    ) -> Result<RunHandle, CoreError> {
        let started = async {
            let fields = &row.fields;
            let choice = match &fields.profile {
                Some(profile) => ProfileChoice::Named(profile.clone()),
                None => ProfileChoice::Default,
            };
            let title = format!(
                "{} · {}",
                fields.name,
                moment_text(now_ms(), &local_zone()).unwrap_or_default()
            );
            let conversation = self
                .create_conversation(Some(&title), None, &choice)
                .await?;
            let request = TurnRequest {
                conversation_id: conversation.id.clone(),
                text: Some(fields.prompt.clone()),
                attachments: Vec::new(),
                provider: fields.provider.clone(),
                model: fields.model.clone(),
                tools: ToolSelection::All,
                max_rounds: None,
                retry_call: None,
                branch_from: None,
                require_tool: false,
            };
            match self.start_turn_answered_by(request, sink, approver).await {
                Ok(handle) => Ok(handle),
                Err(e) => {
                    // Nothing was said in it: the run's record keeps why.
                    let _ = self.delete_conversation(&conversation.id).await;
                    Err(e)
                }
            }
        };
        let handle = started.await;
        let store = self.store()?;
        match &handle {
            Ok(handle) => {
                store
                    .set_schedule_run_conversation(
                        run_id.to_owned(),
                        handle.conversation_id.clone(),
                    )
                    .await?;
            }
            Err(e) => {
                store
                    .set_schedule_run(
                        run_id.to_owned(),
                        RunStatus::Failed,
                        None,
                        Some(format!("It could not start: {e}")),
                    )
                    .await?;
            }
        }
        self.schedules_changed();
        handle
    }

    /// The end of run `run_id` of `row`, under way as `handle`: waits for it, then records and
    /// says how it ended.
    fn run_end(
        self: &Arc<Self>,
        run_id: &str,
        row: &ScheduleRow,
        handle: &RunHandle,
        ending: Arc<Ending>,
    ) -> RunEnd {
        let (app, id, name) = (Arc::clone(self), run_id.to_owned(), row.fields.name.clone());
        let conversation = handle.conversation_id.clone();
        let ended = handle.clone().finished();
        Box::pin(async move {
            let reason = ended.await;
            app.settle(&id, &name, reason, &ending, Some(conversation))
                .await
        })
    }

    /// Records how a run ended and says so on the desktop.
    async fn settle(
        &self,
        run_id: &str,
        name: &str,
        reason: StopReason,
        ending: &Ending,
        conversation_id: Option<String>,
    ) -> DueOutcome {
        let said = ending.message();
        let (status, message) = match reason {
            StopReason::Completed | StopReason::MaxRounds => (RunStatus::Completed, said),
            StopReason::Cancelled => (
                RunStatus::Stopped,
                Some(said.unwrap_or_else(|| "Stopped.".into())),
            ),
            _ => (
                RunStatus::Failed,
                Some(said.unwrap_or_else(|| "The run failed.".into())),
            ),
        };
        if let Ok(store) = self.store() {
            // Its conversation was recorded when it started (and may be deleted since).
            if let Err(e) = store
                .set_schedule_run(run_id.to_owned(), status, None, message.clone())
                .await
            {
                tracing::warn!(error = %e, "recording a scheduled run's end");
            }
        }
        let (title, body) = match status {
            RunStatus::Completed => (format!("“{name}” finished"), ending.answer_start()),
            RunStatus::Stopped => (
                format!("“{name}” was stopped"),
                message.clone().unwrap_or_default(),
            ),
            _ => (
                format!("“{name}” failed"),
                message.clone().unwrap_or_default(),
            ),
        };
        self.schedules_changed();
        self.notify(&title, &body);
        tracing::info!(schedule = name, ?status, "scheduled run ended");
        DueOutcome {
            schedule: name.to_owned(),
            run_id: run_id.to_owned(),
            status,
            conversation_id,
            message,
        }
    }
}

/// Passes a run's events on (to the window's feed, the terminal) and keeps what its end said
/// and how its answer began, for the record and the notification.
struct Ending {
    inner: Option<Arc<dyn EventSink>>,
    said: Mutex<(Option<String>, String)>,
}

/// How much of the answer's start is kept for its notification: far more than it shows, so
/// that a key the shown part begins is whole when keys are hidden (the cut comes after).
const KEPT_FOR_NOTICE_BYTES: usize = 8 * 1024;

impl Ending {
    fn new(inner: Option<Arc<dyn EventSink>>) -> Ending {
        Ending {
            inner,
            said: Mutex::new((None, String::new())),
        }
    }

    fn said(&self) -> std::sync::MutexGuard<'_, (Option<String>, String)> {
        self.said.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn message(&self) -> Option<String> {
        self.said().0.clone()
    }

    /// How the answer began (cut to length by the notification, after its keys are hidden).
    fn answer_start(&self) -> String {
        self.said().1.clone()
    }
}

impl EventSink for Ending {
    fn send(&self, event: RunEvent) {
        match &event {
            RunEvent::RunFinished {
                message: Some(m), ..
            }
            | RunEvent::Error { message: m, .. } => self.said().0 = Some(m.clone()),
            RunEvent::TextDelta { text, .. } => {
                let mut said = self.said();
                let room = KEPT_FOR_NOTICE_BYTES.saturating_sub(said.1.len());
                let mut cut = room.min(text.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                said.1.push_str(&text[..cut]);
            }
            _ => {}
        }
        if let Some(inner) = &self.inner {
            inner.send(event);
        }
    }
}

/// Answers a scheduled run's approvals: never silently. A call waits for the window's answer
/// as long as the schedule says (the run reads "waiting", and a notification says so), then is
/// denied; with no window, it is denied at once. Results a policy would put to the person are
/// put to the window the same way, and withheld when no one answers.
struct Unattended {
    app: std::sync::Weak<App>,
    run_id: String,
    name: String,
    wait: Duration,
    asker: Asker,
}

impl Unattended {
    fn new(app: &Arc<App>, run_id: &str, row: &ScheduleRow, asker: Asker) -> Unattended {
        Unattended {
            app: Arc::downgrade(app),
            run_id: run_id.to_owned(),
            name: row.fields.name.clone(),
            wait: Duration::from_secs(u64::from(row.fields.approval_wait_minutes) * 60),
            asker,
        }
    }

    async fn mark(&self, status: RunStatus, message: Option<String>) {
        let Some(app) = self.app.upgrade() else {
            return;
        };
        if let Ok(store) = app.store() {
            let _ = store
                .set_schedule_run(self.run_id.clone(), status, None, message)
                .await;
        }
        app.schedules_changed();
    }

    /// [`App::notify`], while the app is there to hide its keys.
    fn notify(&self, title: &str, body: &str) {
        if let Some(app) = self.app.upgrade() {
            app.notify(title, body);
        }
    }

    fn denied(request: &ApprovalRequest, reason: &str) -> Vec<ApprovalAnswer> {
        request
            .calls
            .iter()
            .map(|c| ApprovalAnswer {
                call_id: c.call_id.clone(),
                decision: Decision::Deny,
                reason: Some(reason.to_owned()),
            })
            .collect()
    }
}

impl Approver for Unattended {
    fn ask(&self, request: ApprovalRequest) -> Answers<'_> {
        Box::pin(async move {
            let tools: Vec<&str> = request
                .calls
                .iter()
                .map(|c| c.display_name.as_str())
                .collect();
            let tools = tools.join(", ");
            let pending = match &self.asker {
                Asker::Window(_) if self.wait.is_zero() => {
                    return Self::denied(
                        &request,
                        &format!(
                            "Not run: {tools} needs the person's approval, and this schedule \
                             waits for none."
                        ),
                    );
                }
                Asker::NoOne => {
                    let reason = format!(
                        "Not run: {tools} needs the person's approval, and this scheduled run \
                         had no one to ask (Switchboard's window was closed)."
                    );
                    self.notify(&format!("“{}” could not ask", self.name), &reason);
                    return Self::denied(&request, &reason);
                }
                Asker::Window(pending) => Arc::clone(pending),
            };
            let minutes = self.wait.as_secs() / 60;
            let request_id = request.request_id.clone();
            // Asked before it is said to wait, so an answer given at once finds it.
            let waiting = pending.ask(request.clone());
            self.mark(
                RunStatus::Waiting,
                Some(format!(
                    "Waiting for your approval of {tools} (for {minutes} min, then denied)."
                )),
            )
            .await;
            self.notify(
                &format!("“{}” waits for your approval", self.name),
                &format!("{tools}: open its conversation in Switchboard to answer."),
            );
            let answered = tokio::time::timeout(self.wait, waiting).await;
            let answers = match answered {
                Ok(answers) => answers,
                Err(_) => {
                    pending.withdraw(&request_id);
                    Self::denied(
                        &request,
                        &format!(
                            "Not run: no one answered within {minutes} min, and a scheduled \
                             run is never approved without the person."
                        ),
                    )
                }
            };
            self.mark(RunStatus::Running, None).await;
            answers
        })
    }

    fn review(&self, request: ReviewRequest) -> Reviewing<'_> {
        Box::pin(async move {
            let Asker::Window(pending) = &self.asker else {
                return None;
            };
            let pending = Arc::clone(pending);
            let what = request.display_name.clone();
            let reviewing = pending.review(request);
            self.mark(
                RunStatus::Waiting,
                Some(format!("Waiting for your word on what {what} returned.")),
            )
            .await;
            self.notify(
                &format!("“{}” waits for you", self.name),
                &format!("{what} returned something to look at before the model reads it."),
            );
            let verdict = tokio::time::timeout(self.wait, reviewing)
                .await
                .ok()
                .flatten();
            self.mark(RunStatus::Running, None).await;
            verdict
        })
    }
}
