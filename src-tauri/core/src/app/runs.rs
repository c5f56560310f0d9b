//! The runs under way: one per conversation, each on its own task in one `JoinSet` with its own
//! `CancellationToken`, and each with a [`Feed`] that keeps what the run has sent so far, so a
//! window that reloads (or comes back to the conversation) is given the running answer again
//! and then its live events. Owns only bookkeeping: what a run does is [`crate::agent`]'s.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::error::CoreError;
use crate::events::{EventSink, RunEvent, StopReason};

/// A run that was started: its ids, and its end (a clone waits for the same end).
#[derive(Clone)]
pub struct RunHandle {
    pub run_id: String,
    pub conversation_id: String,
    ended: watch::Receiver<Option<StopReason>>,
}

impl RunHandle {
    /// Waits for the run to end and says why (a run whose task died ends `Error`).
    pub async fn finished(mut self) -> StopReason {
        match self.ended.wait_for(Option::is_some).await {
            Ok(reason) => reason.unwrap_or(StopReason::Error),
            Err(_) => StopReason::Error,
        }
    }
}

/// Everything a run has sent so far, and who listens to it now. Consecutive text (and
/// reasoning) deltas of one answer are kept as one, so the log grows with the answer's text,
/// not with its chunk count.
#[derive(Default)]
pub struct Feed {
    state: Mutex<FeedState>,
    /// The run has sent `run_finished`: the window may send the next message at once, before
    /// the run's task has left the registry.
    finished: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct FeedState {
    log: Vec<RunEvent>,
    sinks: Vec<Arc<dyn EventSink>>,
}

impl Feed {
    fn state(&self) -> MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `sink` everything so far, then every event from now on. Under one lock, so the
    /// listener misses nothing and gets nothing twice. A sink of the same listener that was
    /// there before (a window's, before it reloaded) is dropped.
    pub fn subscribe(&self, sink: Arc<dyn EventSink>) {
        let mut state = self.state();
        for event in &state.log {
            sink.send(event.clone());
        }
        if let Some(listener) = sink.listener() {
            state.sinks.retain(|old| old.listener() != Some(listener));
        }
        state.sinks.push(sink);
    }

    /// How many sinks it sends to now.
    #[cfg(test)]
    fn listeners(&self) -> usize {
        self.state().sinks.len()
    }
}

impl EventSink for Feed {
    fn send(&self, event: RunEvent) {
        if matches!(event, RunEvent::RunFinished { .. }) {
            self.finished
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        let mut state = self.state();
        for sink in &state.sinks {
            sink.send(event.clone());
        }
        // A comparison's models stream at once: a lane's delta joins the last delta that lane
        // sent while nothing else of that lane came between.
        if let RunEvent::Lane {
            lane, event: inner, ..
        } = &event
        {
            let same_lane = |e: &RunEvent| matches!(e, RunEvent::Lane { lane: l, .. } if l == lane);
            if let Some(RunEvent::Lane { event: last, .. }) =
                state.log.iter_mut().rev().find(|e| same_lane(e))
            {
                if joined(last, inner) {
                    return;
                }
            }
            state.log.push(event);
            return;
        }
        let joined_last = state
            .log
            .last_mut()
            .is_some_and(|last| joined(last, &event));
        if !joined_last {
            state.log.push(event);
        }
    }
}

/// Adds `next` to `last` when both are text (or reasoning) of the same message; whether it did.
fn joined(last: &mut RunEvent, next: &RunEvent) -> bool {
    match (last, next) {
        (
            RunEvent::TextDelta { message_id, text },
            RunEvent::TextDelta {
                message_id: id,
                text: more,
            },
        )
        | (
            RunEvent::ReasoningDelta { message_id, text },
            RunEvent::ReasoningDelta {
                message_id: id,
                text: more,
            },
        ) if message_id == id => {
            text.push_str(more);
            true
        }
        _ => false,
    }
}

struct Entry {
    conversation_id: String,
    cancel: CancellationToken,
    feed: Arc<Feed>,
    /// Says why once the run's task has ended (what it had is saved); the same signal its
    /// [`RunHandle`] waits on.
    ended: watch::Receiver<Option<StopReason>>,
}

#[derive(Default)]
struct Inner {
    by_id: HashMap<String, Entry>,
    tasks: JoinSet<()>,
    /// The app is quitting: no run may start.
    closed: bool,
}

impl Inner {
    fn check_free(&self, conversation_id: &str) -> Result<(), CoreError> {
        if self.closed {
            return Err(CoreError::Quitting);
        }
        let running = |e: &Entry| {
            e.conversation_id == conversation_id
                && !e.feed.finished.load(std::sync::atomic::Ordering::SeqCst)
        };
        if self.by_id.values().any(running) {
            return Err(CoreError::RunUnderWay);
        }
        Ok(())
    }
}

/// The registry of runs. Cloning shares it.
#[derive(Clone, Default)]
pub struct Runs {
    inner: Arc<Mutex<Inner>>,
}

impl Runs {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops the run under way in `conversation_id`, if any, and waits until it has ended
    /// (it saves what it had first): nothing of it is written after this returns.
    pub async fn stop_in(&self, conversation_id: &str) {
        let ending: Vec<_> = self
            .inner()
            .by_id
            .values()
            .filter(|e| e.conversation_id == conversation_id)
            .map(|e| {
                e.cancel.cancel();
                e.ended.clone()
            })
            .collect();
        for mut ended in ending {
            // An error means the task is gone, which is ended too.
            let _ = ended.wait_for(Option::is_some).await;
        }
    }

    /// Refused while `conversation_id` has a run under way, or the app is quitting.
    ///
    /// # Errors
    /// [`CoreError::RunUnderWay`], [`CoreError::Quitting`].
    pub fn check_free(&self, conversation_id: &str) -> Result<(), CoreError> {
        self.inner().check_free(conversation_id)
    }

    /// Starts `work` on its own task as the run `run_id` of `conversation_id`, its events going
    /// to `sink` (and to whoever attaches later). `work` is given the run's token and its feed.
    ///
    /// # Errors
    /// As [`Runs::check_free`].
    pub fn start<F, Fut>(
        &self,
        run_id: &str,
        conversation_id: &str,
        sink: Arc<dyn EventSink>,
        work: F,
    ) -> Result<RunHandle, CoreError>
    where
        F: FnOnce(CancellationToken, Arc<Feed>) -> Fut,
        Fut: Future<Output = StopReason> + Send + 'static,
    {
        let mut inner = self.inner();
        inner.check_free(conversation_id)?;
        let cancel = CancellationToken::new();
        let feed = Arc::new(Feed::default());
        feed.subscribe(sink);
        let (end, ended) = watch::channel(None);
        inner.by_id.insert(
            run_id.to_owned(),
            Entry {
                conversation_id: conversation_id.to_owned(),
                cancel: cancel.clone(),
                feed: Arc::clone(&feed),
                ended: ended.clone(),
            },
        );
        // Finished tasks are reaped here; their results were sent through their handles.
        while inner.tasks.try_join_next().is_some() {}
        let run = work(cancel, feed);
        let (runs, id) = (self.clone(), run_id.to_owned());
        inner.tasks.spawn(async move {
            let reason = run.await;
            runs.inner().by_id.remove(&id);
            end.send_replace(Some(reason));
        });
        Ok(RunHandle {
            run_id: run_id.to_owned(),
            conversation_id: conversation_id.to_owned(),
            ended,
        })
    }

    /// Stops a run: its model stream and every running call. A run that already ended is
    /// left as it is.
    pub fn stop(&self, run_id: &str) {
        if let Some(entry) = self.inner().by_id.get(run_id) {
            entry.cancel.cancel();
        }
    }

    /// Gives `sink` the run under way in `conversation_id`: everything it sent so far, then its
    /// live events. Returns the run's id, or `None` when nothing runs there.
    pub fn attach(&self, conversation_id: &str, sink: Arc<dyn EventSink>) -> Option<String> {
        let (id, feed) = {
            let inner = self.inner();
            let (id, entry) = inner
                .by_id
                .iter()
                .find(|(_, e)| e.conversation_id == conversation_id)?;
            (id.clone(), Arc::clone(&entry.feed))
        };
        feed.subscribe(sink);
        Some(id)
    }

    /// Refuses new runs, stops every run and waits up to `deadline` for them to end (each
    /// saves what it had); those still going then are aborted.
    pub async fn shutdown(&self, deadline: Duration) {
        let mut tasks = {
            let mut inner = self.inner();
            inner.closed = true;
            for entry in inner.by_id.values() {
                entry.cancel.cancel();
            }
            std::mem::take(&mut inner.tasks)
        };
        let all_ended = async { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(deadline, all_ended).await.is_err() {
            tracing::warn!(
                left = tasks.len(),
                "runs still going at the shutdown deadline; aborting them"
            );
            tasks.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Seen(Mutex<Vec<RunEvent>>);

    impl EventSink for Seen {
        fn send(&self, event: RunEvent) {
            self.0.lock().unwrap().push(event);
        }
    }

    fn delta(text: &str) -> RunEvent {
        RunEvent::TextDelta {
            message_id: "m".into(),
            text: text.into(),
        }
    }

    #[tokio::test]
    async fn a_late_listener_gets_the_answer_so_far_in_one_piece_then_what_follows() {
        let feed = Feed::default();
        let early = Arc::new(Seen::default());
        feed.subscribe(early.clone());
        for chunk in ["Once ", "upon ", "a time"] {
            feed.send(delta(chunk));
        }
        let late = Arc::new(Seen::default());
        feed.subscribe(late.clone());
        feed.send(delta("."));
        assert_eq!(
            early.0.lock().unwrap().len(),
            4,
            "the first listener saw every chunk"
        );
        assert_eq!(
            *late.0.lock().unwrap(),
            [delta("Once upon a time"), delta(".")]
        );
    }

    #[tokio::test]
    async fn the_models_of_a_comparison_are_kept_in_one_piece_each_however_they_interleave() {
        let lane = |n: u32, event: RunEvent| RunEvent::Lane {
            lane: n,
            provider: "P".into(),
            model: format!("m{n}"),
            event: Box::new(event),
        };
        let feed = Feed::default();
        for (n, chunk) in [
            (0, "Once "),
            (1, "It "),
            (0, "upon"),
            (1, "was"),
            (0, " a time"),
        ] {
            feed.send(lane(n, delta(chunk)));
        }
        feed.send(lane(1, RunEvent::Status { text: "…".into() }));
        feed.send(lane(1, delta(" late")));
        let late = Arc::new(Seen::default());
        feed.subscribe(late.clone());
        assert_eq!(
            *late.0.lock().unwrap(),
            [
                lane(0, delta("Once upon a time")),
                lane(1, delta("It was")),
                lane(1, RunEvent::Status { text: "…".into() }),
                lane(1, delta(" late")),
            ]
        );
    }

    /// A window's sink: the window's label says who listens.
    struct WindowSink(&'static str, Seen);

    impl EventSink for WindowSink {
        fn send(&self, event: RunEvent) {
            self.1.send(event);
        }

        fn listener(&self) -> Option<&str> {
            Some(self.0)
        }
    }

    #[test]
    fn a_window_that_reloads_replaces_its_own_sink_and_no_one_elses() {
        let feed = Feed::default();
        let before = Arc::new(WindowSink("main", Seen::default()));
        let terminal = Arc::new(Seen::default());
        feed.subscribe(before.clone());
        feed.subscribe(terminal.clone());
        feed.send(delta("a"));
        let after = Arc::new(WindowSink("main", Seen::default()));
        feed.subscribe(after.clone());
        let other = Arc::new(WindowSink("second", Seen::default()));
        feed.subscribe(other.clone());
        feed.send(delta("b"));
        assert_eq!(
            feed.listeners(),
            3,
            "the reloaded window's old sink is gone"
        );
        assert_eq!(
            *before.1 .0.lock().unwrap(),
            [delta("a")],
            "not sent to after its page went"
        );
        assert_eq!(*after.1 .0.lock().unwrap(), [delta("a"), delta("b")]);
        assert_eq!(terminal.0.lock().unwrap().len(), 2);
        assert_eq!(other.1 .0.lock().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn stopping_a_conversations_run_waits_until_it_has_saved_what_it_had() {
        let runs = Runs::default();
        let sink: Arc<dyn EventSink> = Arc::new(Seen::default());
        let saved = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&saved);
        let handle = runs
            .start("r1", "c1", sink.clone(), |cancel, _| async move {
                cancel.cancelled().await;
                // Saving the partial answer takes a while.
                tokio::time::sleep(Duration::from_millis(50)).await;
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                StopReason::Cancelled
            })
            .unwrap();
        let other = runs
            .start("r2", "c2", sink.clone(), |cancel, _| async move {
                cancel.cancelled().await;
                StopReason::Cancelled
            })
            .unwrap();
        runs.stop_in("c1").await;
        assert!(saved.load(std::sync::atomic::Ordering::SeqCst));
        assert!(runs.check_free("c1").is_ok());
        assert!(
            runs.check_free("c2").is_err(),
            "another conversation's run goes on"
        );
        runs.stop_in("nowhere").await;
        assert_eq!(handle.finished().await, StopReason::Cancelled);
        runs.stop(&other.run_id);
        assert_eq!(other.finished().await, StopReason::Cancelled);
    }

    #[tokio::test]
    async fn one_run_per_conversation_and_none_once_quitting() {
        let runs = Runs::default();
        let sink: Arc<dyn EventSink> = Arc::new(Seen::default());
        let handle = runs
            .start("r1", "c1", sink.clone(), |cancel, _| async move {
                cancel.cancelled().await;
                StopReason::Cancelled
            })
            .unwrap();
        assert!(matches!(
            runs.start("r2", "c1", sink.clone(), |_, _| async {
                StopReason::Completed
            }),
            Err(CoreError::RunUnderWay)
        ));
        assert_eq!(runs.attach("c1", sink.clone()).as_deref(), Some("r1"));
        // Once a run has said it finished, the next one may start, even before its task ends.
        let _ending = runs
            .start("r0", "c0", sink.clone(), |cancel, feed| async move {
                feed.send(RunEvent::RunFinished {
                    reason: StopReason::Completed,
                    message: None,
                });
                cancel.cancelled().await;
                StopReason::Completed
            })
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while runs.check_free("c0").is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "a finished run still blocks"
            );
            tokio::task::yield_now().await;
        }
        runs.shutdown(Duration::from_secs(5)).await;
        assert_eq!(handle.finished().await, StopReason::Cancelled);
        assert_eq!(
            runs.attach("c1", sink.clone()),
            None,
            "a finished run is forgotten"
        );
        assert!(matches!(
            runs.start("r3", "c2", sink, |_, _| async { StopReason::Completed }),
            Err(CoreError::Quitting)
        ));
    }

    #[tokio::test]
    async fn a_run_that_ignores_its_stop_is_aborted_at_the_deadline() {
        let runs = Runs::default();
        let handle = runs
            .start("r1", "c1", Arc::new(Seen::default()), |_, _| async {
                std::future::pending::<()>().await;
                StopReason::Completed
            })
            .unwrap();
        runs.shutdown(Duration::from_millis(50)).await;
        assert_eq!(handle.finished().await, StopReason::Error);
    }
}
