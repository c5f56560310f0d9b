//! Comparisons (issue 18, seed 003): one question to two to four models at once. The question
//! is written once; each model answers in a lane of its own (see [`crate::store`]'s lanes) as
//! a run of its own — its rounds, tool calls and approvals, stopped alone with
//! [`App::stop_run`] — its events sent tagged with its model ([`RunEvent::Lane`]). The
//! comparison is itself a run of the conversation, so nothing else starts there meanwhile and
//! stopping it stops every lane. When all have ended, the answers become branches after the
//! question: of those that completed, the first in the order asked is shown (its model answers
//! the next message), and switching branch there picks another ([`App::switch_branch`]).

use std::sync::Arc;

use crate::agent::{Approver, RunServices};
use crate::app::{ToolSelection, TurnRequest};
use crate::error::{CoreError, InvalidInput};
use crate::events::{EventSink, RunEvent, StopReason};
use crate::store::new_id;

use super::{App, RunHandle};

use super::MAX_COMPARED;

/// What a caller asks of a comparison.
#[derive(Debug, Clone, Default)]
pub struct CompareRequest {
    pub conversation_id: String,
    pub text: String,
    /// Files kept already ([`crate::App::keep_attachment`]) that the question carries.
    pub attachments: Vec<crate::attachments::AttachmentRef>,
    /// The models, in the order their answers are shown: a provider by name and its model
    /// (`None`: the provider's default model).
    pub models: Vec<(String, Option<String>)>,
    pub tools: ToolSelection,
    pub max_rounds: Option<u32>,
}

/// What a comparison starts from: its question, its lanes and their runs, ready.
type Prepared = (
    crate::store::Message,
    Vec<String>,
    Vec<crate::agent::RunSetup>,
);

/// Sends one lane's events on, tagged with its model.
struct LaneSink {
    feed: Arc<super::Feed>,
    lane: u32,
    provider: String,
    model: String,
}

impl EventSink for LaneSink {
    fn send(&self, event: RunEvent) {
        self.feed.send(RunEvent::Lane {
            lane: self.lane,
            provider: self.provider.clone(),
            model: self.model.clone(),
            event: Box::new(event),
        });
    }
}

/// Asks whoever answers the comparison, saying which model asks.
struct LaneApprover {
    inner: Arc<dyn Approver>,
    label: String,
}

impl Approver for LaneApprover {
    fn ask(
        &self,
        mut request: crate::agent::ApprovalRequest,
    ) -> crate::agent::approval::Answers<'_> {
        request.asked_by = Some(self.label.clone());
        self.inner.ask(request)
    }

    fn review(
        &self,
        mut request: crate::agent::approval::ReviewRequest,
    ) -> crate::agent::approval::Reviewing<'_> {
        request.display_name = format!("{} (asked by {})", request.display_name, self.label);
        self.inner.review(request)
    }
}

impl App {
    /// [`App::start_comparison_answered_by`] with its approvals the window's to answer.
    ///
    /// # Errors
    /// As [`App::start_comparison_answered_by`].
    pub async fn start_comparison(
        self: &Arc<Self>,
        request: CompareRequest,
        sink: Arc<dyn EventSink>,
    ) -> Result<RunHandle, CoreError> {
        let approver = Arc::clone(&self.approvals) as Arc<dyn Approver>;
        self.start_comparison_answered_by(request, sink, approver)
            .await
    }

    /// [`App::start_comparison`] for the question a conversation's composer held: its kept
    /// draft goes once the comparison has started (as [`App::send_composed`]).
    ///
    /// # Errors
    /// As [`App::start_comparison`]; the draft stays then.
    pub async fn compare_composed(
        self: &Arc<Self>,
        request: CompareRequest,
        sink: Arc<dyn EventSink>,
    ) -> Result<RunHandle, CoreError> {
        let conversation_id = request.conversation_id.clone();
        let handle = self.start_comparison(request, sink).await?;
        self.forget_draft(&conversation_id).await;
        Ok(handle)
    }

    /// Starts a comparison (see the module); its events go to `sink`, the last being
    /// `run_finished` after `comparison_folded`. Approvals are answered by `approver`.
    ///
    /// # Errors
    /// Fewer than two or more than [`MAX_COMPARED`] models, or one twice; a provider or model
    /// that cannot be used; [`CoreError::RunUnderWay`]; an empty question or a refused file.
    pub async fn start_comparison_answered_by(
        self: &Arc<Self>,
        request: CompareRequest,
        sink: Arc<dyn EventSink>,
        approver: Arc<dyn Approver>,
    ) -> Result<RunHandle, CoreError> {
        let refuse = |why: &str| -> CoreError { InvalidInput::new("models", why).into() };
        if !(2..=MAX_COMPARED).contains(&request.models.len()) {
            return Err(refuse("Compare two to four models."));
        }
        let main = request.conversation_id.clone();
        self.runs.check_free(&main)?;
        let settings = self.settings.load();
        // Every model is checked before anything is written.
        let conversation = self.store()?.get_conversation(main.clone()).await?;
        let mut models: Vec<(String, String)> = Vec::with_capacity(request.models.len());
        for (provider, model) in &request.models {
            let asked = TurnRequest {
                conversation_id: main.clone(),
                provider: Some(provider.clone()),
                model: model.clone(),
                ..TurnRequest::default()
            };
            let chosen = self.choose_model(&conversation, &asked, &settings).await?;
            if models
                .iter()
                .any(|m| m.0.eq_ignore_ascii_case(&chosen.0) && m.1 == chosen.1)
            {
                return Err(refuse("Each model can be asked once in a comparison."));
            }
            models.push(chosen);
        }

        let store = self.store()?.clone();

        // The comparison owns the conversation before anything is written there: it waits
        // for what is prepared below, and ends without a word if that fails (the caller is
        // told why).
        let (prepared, ready) = tokio::sync::oneshot::channel::<Prepared>();
        let app = Arc::clone(self);
        let run_id = new_id();
        let conversation_id = main.clone();
        let supervisor_id = run_id.clone();
        let folding = store.clone();
        let lane_models = models.clone();
        let handle = self.runs.start(&run_id, &main, sink, move |cancel, feed| async move {
            let Ok((question, lanes, setups)) = ready.await else {
                return StopReason::Error;
            };
            let store = folding;
            feed.send(RunEvent::RunStarted {
                run_id: supervisor_id,
                conversation_id: conversation_id.clone(),
            });
            feed.send(RunEvent::MessageSaved { message: question });
            let mut handles = Vec::with_capacity(setups.len());
            for (lane, setup) in (0u32..).zip(setups) {
                let (provider, model) = (setup.provider_name.clone(), setup.model.clone());
                let lane_sink = Arc::new(LaneSink {
                    feed: Arc::clone(&feed),
                    lane,
                    provider,
                    model,
                });
                let (lane_run, lane_conversation) =
                    (setup.run_id.clone(), setup.conversation_id.clone());
                let runner = Arc::clone(&app);
                let approver = LaneApprover {
                    inner: Arc::clone(&approver),
                    label: format!("{} · {}", lane_sink.provider, lane_sink.model),
                };
                let started = app.runs.start(
                    &lane_run,
                    &lane_conversation,
                    lane_sink.clone(),
                    move |cancel, lane_feed| async move {
                        let Ok(store) = runner.store() else {
                            return StopReason::Error;
                        };
                        let services = RunServices {
                            store,
                            tools: &runner.host,
                            approver: &approver,
                            sink: lane_feed.as_ref(),
                            controls: &runner.controls,
                        };
                        runner.run_lending_roots(setup, services, cancel).await
                    },
                );
                match started {
                    Ok(handle) => handles.push(handle),
                    Err(e) => lane_sink.send(RunEvent::RunFinished {
                        reason: StopReason::Error,
                        message: Some(e.to_string()),
                    }),
                }
            }
            // Stopping the comparison stops every lane; each lane can be stopped alone.
            let lane_runs: Vec<String> = handles.iter().map(|h| h.run_id.clone()).collect();
            let stopper = {
                let app = Arc::clone(&app);
                let cancel = cancel.clone();
                tokio::spawn(async move {
                    cancel.cancelled().await;
                    for id in &lane_runs {
                        app.stop_run(id);
                    }
                })
            };
            let reasons =
                futures_util::future::join_all(handles.into_iter().map(RunHandle::finished)).await;
            stopper.abort();
            let answered = |r: &StopReason| matches!(r, StopReason::Completed | StopReason::MaxRounds);
            let first_answered = reasons.iter().position(answered).unwrap_or(0);
            let folded = store
                .fold_lanes(conversation_id.clone(), lanes, first_answered)
                .await;
            let shown = match folded {
                Ok(shown) => shown,
                Err(e) => {
                    feed.send(RunEvent::RunFinished {
                        reason: StopReason::Error,
                        message: Some(format!("The answers could not be kept together: {e}")),
                    });
                    return StopReason::Error;
                }
            };
            // The answer shown is the one picked until another is: its model answers next.
            if let Some((provider, model)) = shown.as_ref().and_then(|(_, lane)| lane_models.get(*lane)) {
                if let Err(e) = store
                    .set_conversation_model(
                        conversation_id.clone(),
                        Some(provider.clone()),
                        Some(model.clone()),
                    )
                    .await
                {
                    tracing::warn!(error = %e, "the compared model shown was not made the conversation's");
                }
            }
            let message_id = shown.map(|(first, _)| first);
            feed.send(RunEvent::ComparisonFolded { message_id });
            let reason = if reasons.iter().any(answered) {
                StopReason::Completed
            } else if cancel.is_cancelled() {
                StopReason::Cancelled
            } else {
                reasons.first().copied().unwrap_or(StopReason::Error)
            };
            feed.send(RunEvent::RunFinished {
                reason,
                message: None,
            });
            reason
        })?;
        match self
            .prepare_lanes(&request, &models, &settings, &store)
            .await
        {
            Ok(ready) => {
                let _ = prepared.send(ready);
                Ok(handle)
            }
            Err(e) => {
                drop(prepared);
                Err(e)
            }
        }
    }

    /// Writes the question and opens a lane per model with its run prepared.
    ///
    /// # Errors
    /// An empty question or a refused file; what [`crate::App::prepare_turn`] refuses (the
    /// lanes then go; the question stays, for Retry to answer).
    async fn prepare_lanes(
        &self,
        request: &CompareRequest,
        models: &[(String, String)],
        settings: &crate::settings::Settings,
        store: &crate::store::Store,
    ) -> Result<Prepared, CoreError> {
        let main = &request.conversation_id;
        let question = self
            .ask_question(main, &request.text, request.attachments.clone(), models)
            .await?;
        let lanes = store.open_lanes(main.clone(), models.len()).await?;
        let mut setups = Vec::with_capacity(lanes.len());
        for (lane, (provider, model)) in lanes.iter().zip(models) {
            let asked = TurnRequest {
                conversation_id: lane.clone(),
                provider: Some(provider.clone()),
                model: Some(model.clone()),
                tools: request.tools.clone(),
                max_rounds: request.max_rounds,
                ..TurnRequest::default()
            };
            match self.prepare_turn(asked, settings).await {
                Ok(setup) => setups.push(setup),
                Err(e) => {
                    let _ = store.fold_lanes(main.clone(), lanes.clone(), 0).await;
                    return Err(e);
                }
            }
        }
        Ok((question, lanes, setups))
    }
}
