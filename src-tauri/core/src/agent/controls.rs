//! What a person can do to one running call from its card, besides stopping the whole run:
//! cancel it (the run goes on, and the model is told), or, for a call the server runs as a
//! task, go on without waiting (the task is then followed outside the run and its result comes
//! later in the conversation). [`CallControls`] routes each request to the call by its record
//! id, whether a run or the background follower of tasks runs it, and wakes that follower when
//! a run hands a task over.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::{mpsc, Notify};

/// A person's request for one running call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum CallControl {
    /// Cancel the call (a task is cancelled on its server too).
    Cancel,
    /// Answer the call now with "its task goes on", and follow the task outside the run.
    GoOn,
    /// The same, as the app quits: the task is followed again at the next start.
    #[serde(skip)]
    #[ts(skip)]
    Closing,
}

/// The running calls that can be controlled, by their record id
/// ([`crate::store::ToolRun::id_for`]); one per app.
#[derive(Debug, Default)]
pub struct CallControls {
    calls: Mutex<HashMap<String, Reachable>>,
    handed_over: Notify,
}

#[derive(Debug)]
struct Reachable {
    send: mpsc::UnboundedSender<CallControl>,
    /// It waits for a task of its server's: at quit it goes on without it.
    task: bool,
}

/// A call's place in [`CallControls`], taken down when the call ends however it ends.
pub struct Registered<'a> {
    controls: &'a CallControls,
    id: String,
    /// Its own sender, to know its place from a later one.
    own: mpsc::UnboundedSender<CallControl>,
    pub requests: mpsc::UnboundedReceiver<CallControl>,
}

impl Drop for Registered<'_> {
    /// Takes down its own place only: a later registration of the same call (a follower after
    /// the run handed it over) stays.
    fn drop(&mut self) {
        let mut calls = self.controls.lock();
        if calls
            .get(&self.id)
            .is_some_and(|call| call.send.is_closed() || call.send.same_channel(&self.own))
        {
            calls.remove(&self.id);
        }
    }
}

impl CallControls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Reachable>> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes call `id` reachable while the returned guard lives.
    pub fn register(&self, id: &str) -> Registered<'_> {
        let (send, requests) = mpsc::unbounded_channel();
        self.lock().insert(
            id.to_owned(),
            Reachable {
                send: send.clone(),
                task: false,
            },
        );
        Registered {
            controls: self,
            id: id.to_owned(),
            own: send,
            requests,
        }
    }

    /// Passes `control` to call `id`; `false` when no such call is running.
    pub fn send(&self, id: &str, control: CallControl) -> bool {
        self.lock()
            .get(id)
            .is_some_and(|call| call.send.send(control).is_ok())
    }

    /// Says call `id` waits for its server's task (a run's call, not a follower's).
    pub fn waits_for_task(&self, id: &str) {
        if let Some(call) = self.lock().get_mut(id) {
            call.task = true;
        }
    }

    /// At quit: every call of a run that waits for a task goes on without it, so the task is
    /// not cancelled with the run but followed again at the next start. Waits, `within` at
    /// most, until those calls are answered.
    pub async fn go_on_without_tasks(&self, within: std::time::Duration) {
        let waiting: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, call)| call.task && call.send.send(CallControl::Closing).is_ok())
            .map(|(id, _)| id.clone())
            .collect();
        let answered = async {
            while waiting.iter().any(|id| self.lock().contains_key(id)) {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        let _ = tokio::time::timeout(within, answered).await;
    }

    /// Says a task was handed over to be followed outside its run.
    pub fn hand_over(&self) {
        self.handed_over.notify_one();
    }

    /// Waits until a task is handed over (one said before this wait counts).
    pub async fn handed_over(&self) {
        self.handed_over.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_reaches_the_call_while_it_is_registered_and_not_after() {
        let controls = CallControls::default();
        assert!(!controls.send("r1", CallControl::Cancel));
        let mut call = controls.register("r1");
        assert!(controls.send("r1", CallControl::GoOn));
        assert_eq!(call.requests.recv().await, Some(CallControl::GoOn));
        drop(call);
        assert!(!controls.send("r1", CallControl::Cancel));
        // A hand-over said before anyone waits is not lost.
        controls.hand_over();
        tokio::time::timeout(std::time::Duration::from_secs(1), controls.handed_over())
            .await
            .unwrap();
    }
}
