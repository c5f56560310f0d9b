//! Asking the person about tool calls. The loop sends [`crate::events::RunEvent::ApprovalRequired`]
//! and waits on an [`Approver`]; what comes back is checked against the request in the loop
//! (an answer for a call that was not asked about is ignored, a call with no answer is denied),
//! so a window can only answer, never widen, what it was asked.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::events::ApprovalItem;

/// The person's choice for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    /// Allow this tool without asking again in this conversation.
    AllowConversation,
    /// Allow this tool without asking again, everywhere.
    AllowAlways,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ApprovalAnswer {
    pub call_id: String,
    pub decision: Decision,
    /// Why the person denied it, passed on to the model.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub reason: Option<String>,
}

/// The calls of one round that need the person's answer, all in one dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub request_id: String,
    pub conversation_id: String,
    pub calls: Vec<ApprovalItem>,
    /// The model asking, in a comparison ("Provider · model"); `None` otherwise.
    pub asked_by: Option<String>,
}

pub type Answers<'a> = Pin<Box<dyn Future<Output = Vec<ApprovalAnswer>> + Send + 'a>>;

/// The person's word on a result they review before the model reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReviewVerdict {
    /// The model reads it as it is.
    Pass,
    /// The model reads `text` (the result with parts cut out), told that parts were.
    Cut { text: String },
    /// The model is told the result was withheld, and reads none of it.
    Withhold,
}

/// A call's result put to the person before the model reads it (a policy's `review`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRequest {
    pub request_id: String,
    pub conversation_id: String,
    pub call_id: String,
    /// "Server · Tool".
    pub display_name: String,
    /// What the model would read.
    pub content: String,
}

pub type Reviewing<'a> = Pin<Box<dyn Future<Output = Option<ReviewVerdict>> + Send + 'a>>;

/// Whoever answers approval requests: the window, the terminal, or a fixed rule.
pub trait Approver: Send + Sync {
    /// Resolves with the answers; a call left out is denied.
    fn ask(&self, request: ApprovalRequest) -> Answers<'_>;

    /// Resolves with the person's word on a result; `None` (no one to ask, no answer) withholds
    /// it.
    fn review(&self, request: ReviewRequest) -> Reviewing<'_> {
        let _ = request;
        Box::pin(std::future::ready(None))
    }
}

/// Answers every call the same way without asking (`--approve all|none`, tests).
#[derive(Debug, Clone, Copy)]
pub struct FixedApprover(pub Decision);

impl Approver for FixedApprover {
    fn ask(&self, request: ApprovalRequest) -> Answers<'_> {
        let decision = self.0;
        let answers = request
            .calls
            .into_iter()
            .map(|c| match decision {
                Decision::Deny => ApprovalAnswer {
                    call_id: c.call_id,
                    decision,
                    reason: Some("Tool calls are turned off for this run.".to_owned()),
                },
                // A call asked about every time (a skill's script) needs a person's word:
                // a fixed answer given beforehand does not cover it.
                _ if c.once_only => ApprovalAnswer {
                    call_id: c.call_id,
                    decision: Decision::Deny,
                    reason: Some(
                        "A skill's script runs only when a person allows that run; no one was \
                         asked here."
                            .to_owned(),
                    ),
                },
                _ => ApprovalAnswer {
                    call_id: c.call_id,
                    decision,
                    reason: None,
                },
            })
            .collect();
        Box::pin(std::future::ready(answers))
    }

    /// Passes every result when calls are allowed, withholds it when they are denied.
    fn review(&self, _: ReviewRequest) -> Reviewing<'_> {
        let verdict = match self.0 {
            Decision::Deny => ReviewVerdict::Withhold,
            _ => ReviewVerdict::Pass,
        };
        Box::pin(std::future::ready(Some(verdict)))
    }
}

/// Requests waiting for an answer from elsewhere (the window): [`PendingApprovals::answer`]
/// delivers one by its id. A request that is dropped unanswered (the run was stopped) denies.
#[derive(Debug, Default)]
pub struct PendingApprovals {
    waiting: Mutex<HashMap<String, Waiting>>,
    /// Results waiting for the person's word, by request id.
    reviews: Mutex<HashMap<String, oneshot::Sender<ReviewVerdict>>>,
}

#[derive(Debug)]
struct Waiting {
    conversation_id: String,
    calls: Vec<ApprovalItem>,
    answer: oneshot::Sender<Vec<ApprovalAnswer>>,
}

impl PendingApprovals {
    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Delivers the answers to request `request_id`; `false` when nothing waits for it.
    pub fn answer(&self, request_id: &str, answers: Vec<ApprovalAnswer>) -> bool {
        match self.waiting().remove(request_id) {
            Some(waiting) => waiting.answer.send(answers).is_ok(),
            None => false,
        }
    }

    /// Delivers the person's word on the result request `request_id` put to them; `false`
    /// when nothing waits for it.
    pub fn answer_review(&self, request_id: &str, verdict: ReviewVerdict) -> bool {
        let waiting = self
            .reviews
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(request_id);
        waiting.is_some_and(|tx| tx.send(verdict).is_ok())
    }

    /// Takes back a request no one answered in time (a scheduled run's wait ran out): the
    /// window can no longer answer it.
    pub fn withdraw(&self, request_id: &str) {
        self.waiting().remove(request_id);
    }

    /// Whether a request is waiting (for tests and the window's state).
    pub fn is_waiting(&self, request_id: &str) -> bool {
        self.waiting().contains_key(request_id)
    }

    /// What request `request_id` asks about, while it waits: its conversation and its calls.
    pub fn asked(&self, request_id: &str) -> Option<(String, Vec<ApprovalItem>)> {
        self.waiting()
            .get(request_id)
            .map(|w| (w.conversation_id.clone(), w.calls.clone()))
    }
}

impl Approver for PendingApprovals {
    fn ask(&self, request: ApprovalRequest) -> Answers<'_> {
        let (tx, rx) = oneshot::channel();
        let id = request.request_id;
        self.waiting().insert(
            id.clone(),
            Waiting {
                conversation_id: request.conversation_id,
                calls: request.calls,
                answer: tx,
            },
        );
        Box::pin(async move {
            let answers = rx.await.unwrap_or_default();
            self.waiting().remove(&id);
            answers
        })
    }

    fn review(&self, request: ReviewRequest) -> Reviewing<'_> {
        let (tx, rx) = oneshot::channel();
        let id = request.request_id;
        let reviews = || {
            self.reviews
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        reviews().insert(id.clone(), tx);
        /// Takes the request off the map however its future ends (answered, or dropped with
        /// the run).
        struct Forget<'a>(&'a PendingApprovals, String);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                self.0
                    .reviews
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&self.1);
            }
        }
        let forget = Forget(self, id);
        Box::pin(async move {
            let _forget = forget;
            rx.await.ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &str) -> ApprovalRequest {
        ApprovalRequest {
            request_id: id.into(),
            conversation_id: "c".into(),
            calls: vec![],
            asked_by: None,
        }
    }

    #[tokio::test]
    async fn an_answer_reaches_the_request_that_waits_for_it() {
        let pending = PendingApprovals::default();
        let waiting = pending.ask(request("r1"));
        assert!(pending.is_waiting("r1"));
        let answer = vec![ApprovalAnswer {
            call_id: "c1".into(),
            decision: Decision::AllowOnce,
            reason: None,
        }];
        assert!(pending.answer("r1", answer.clone()));
        assert_eq!(waiting.await, answer);
        assert!(!pending.answer("r1", vec![]), "answered only once");
    }

    #[test]
    fn answers_are_read_as_the_window_sends_them() {
        let answer: ApprovalAnswer =
            serde_json::from_str(r#"{"call_id": "c1", "decision": "allow_conversation"}"#).unwrap();
        assert_eq!(answer.decision, Decision::AllowConversation);
        assert_eq!(answer.reason, None);
    }
}
