//! Models on a local provider's machine (issue 58), as a person manages them: fetched by name
//! with progress (bytes, speed, time left) that can be cancelled, and removed; what a listing
//! says a model can do is learned here ([`Providers::learn_tool_modes`]). The same for the
//! window and the command line (`switchboard provider pull|rm`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::Providers;
use crate::error::CoreError;
use crate::input::InvalidInput;
use crate::providers::{ModelInfo, ProviderError, PullStep, ToolMode};

/// How far a model's download has come, for a progress bar: the server's step, and for a file
/// downloading its bytes, speed and time left.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct PullProgress {
    /// The server's words for the step (`pulling manifest`, `verifying sha256 digest`,
    /// `success`).
    pub status: String,
    /// Bytes of the file downloading so far, and in all.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub completed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub total: Option<u64>,
    /// Bytes a second over the last few seconds, once it can be told.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub bytes_per_second: Option<f64>,
    /// Seconds until the file is down at that speed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub seconds_left: Option<f64>,
    /// Bytes of every file begun so far, and their size in all: a model comes in several
    /// files, and a bar of these does not start again with each.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub all_completed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub all_total: Option<u64>,
}

/// The span of samples a download's speed is measured over.
const SPEED_SPAN: Duration = Duration::from_secs(5);

/// A download's speed from its recent samples: the bytes between the oldest and newest sample
/// kept within [`SPEED_SPAN`] over the time between them. A new file starts again.
#[derive(Debug, Default)]
pub struct Speed {
    file: Option<String>,
    samples: VecDeque<(Instant, u64)>,
    /// Each file begun: its bytes so far and in all.
    files: Vec<(String, u64, u64)>,
}

impl Speed {
    /// `step` with its speed and time left, as measured at `now`.
    pub fn progress(&mut self, step: PullStep, now: Instant) -> PullProgress {
        let mut progress = PullProgress {
            status: step.status,
            completed: step.completed,
            total: step.total,
            bytes_per_second: None,
            seconds_left: None,
            all_completed: None,
            all_total: None,
        };
        let Some(completed) = step.completed else {
            return progress;
        };
        if let (Some(file), Some(total)) = (&step.file, step.total) {
            let room = self.files.len() < MOST_FILES;
            match self.files.iter_mut().find(|(f, _, _)| f == file) {
                Some(known) => *known = (file.clone(), completed, total),
                None if room => self.files.push((file.clone(), completed, total)),
                None => {}
            }
            progress.all_completed = Some(self.files.iter().map(|(_, c, _)| c).sum());
            progress.all_total = Some(self.files.iter().map(|(_, _, t)| t).sum());
        }
        if step.file != self.file {
            self.file = step.file;
            self.samples.clear();
        }
        self.samples.push_back((now, completed));
        while self
            .samples
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > SPEED_SPAN)
            && self.samples.len() > 2
        {
            self.samples.pop_front();
        }
        let (Some((first_at, first)), Some((last_at, last))) =
            (self.samples.front(), self.samples.back())
        else {
            return progress;
        };
        let seconds = last_at.duration_since(*first_at).as_secs_f64();
        if seconds >= 0.2 && last >= first {
            #[allow(clippy::cast_precision_loss)]
            let speed = (last - first) as f64 / seconds;
            progress.bytes_per_second = Some(speed);
            if let Some(total) = step.total.filter(|_| speed > 0.0) {
                #[allow(clippy::cast_precision_loss)]
                let left = total.saturating_sub(completed) as f64 / speed;
                progress.seconds_left = Some(left);
            }
        }
        progress
    }
}

/// The key a download is known by while it runs: provider names are matched without case,
/// and Ollama takes `qwen3` for `qwen3:latest`.
fn pull_key(provider: &str, model: &str) -> (String, String) {
    let model = model.trim();
    let tagged = if model.contains(':') {
        model.to_owned()
    } else {
        format!("{model}:latest")
    };
    (provider.trim().to_lowercase(), tagged)
}

/// The least time between two progress reports of one step (a server may send thousands of
/// lines a second): a new step, and the last, are reported at once.
const REPORT_EVERY: Duration = Duration::from_millis(100);

/// The most files of one download whose bytes are added up (a model has a handful).
const MOST_FILES: usize = 64;

/// A download under way, stopped and forgotten when dropped.
struct Running {
    pulls: super::providers::Pulls,
    key: (String, String),
    cancel: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.pulls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.key);
    }
}

impl Providers {
    /// Fetches `model` onto the machine of the provider named `provider`, calling `on` with each
    /// step; ends once the server says it succeeded. [`Providers::cancel_pull`] (or the
    /// caller dropping this future) stops it; the server keeps what it fetched and goes on
    /// from there next time. Afterwards the provider's models are listed again, so what the new
    /// one can do is known: they are returned (`None` when they could not be listed).
    ///
    /// # Errors
    /// No model named; the same model of the provider already being fetched; no such
    /// provider; what the provider said ([`ProviderError::Cancelled`] when cancelled,
    /// [`ProviderError::Unsupported`] for a server that cannot fetch models).
    pub async fn pull_model(
        &self,
        provider: &str,
        model: &str,
        mut on: impl FnMut(&PullProgress),
    ) -> Result<Option<Vec<ModelInfo>>, CoreError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(InvalidInput::new("model", "Name the model to get.").into());
        }
        // Known as running before anything is awaited: a Cancel pressed at once is heard.
        let key = pull_key(provider, model);
        let cancel = CancellationToken::new();
        {
            let mut pulls = self
                .pulls
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if pulls.contains_key(&key) {
                return Err(InvalidInput::new(
                    "model",
                    format!("“{model}” is already being fetched."),
                )
                .into());
            }
            pulls.insert(key.clone(), cancel.clone());
        }
        // Forgotten (and stopped) however this ends, dropped included.
        let _forget = Running {
            pulls: self.pulls.clone(),
            key,
            cancel: cancel.clone(),
        };
        let client = self.client(provider).await?;
        let mut steps = client.pull_model(model, cancel.child_token());
        let mut speed = Speed::default();
        let mut succeeded = false;
        // The last report's time and step; a step held back for the pace is reported once
        // the next is due, or once the server has been quiet that long.
        let mut reported: Option<(Instant, String)> = None;
        let mut held: Option<PullProgress> = None;
        loop {
            let next = match (&held, &reported) {
                (Some(_), Some((at, _))) => {
                    let due = *at + REPORT_EVERY;
                    tokio::select! {
                        next = steps.next() => next,
                        () = tokio::time::sleep_until(due.into()) => {
                            if let Some(progress) = held.take() {
                                on(&progress);
                                reported = Some((Instant::now(), progress.status));
                            }
                            continue;
                        }
                    }
                }
                _ => steps.next().await,
            };
            let Some(step) = next else { break };
            let step = step?;
            succeeded = step.status == "success";
            let now = Instant::now();
            let progress = speed.progress(step, now);
            let due = reported.as_ref().is_none_or(|(at, status)| {
                *status != progress.status || now.duration_since(*at) >= REPORT_EVERY
            });
            if due || succeeded {
                held = None;
                on(&progress);
                reported = Some((now, progress.status));
            } else {
                held = Some(progress);
            }
        }
        if let Some(progress) = held {
            on(&progress);
        }
        if !succeeded {
            return Err(ProviderError::StreamInterrupted {
                partial_text: String::new(),
                detail: "the server stopped before it said the model was fetched".into(),
            }
            .into());
        }
        match self.models(provider).await {
            Ok(models) => Ok(Some(models)),
            Err(e) => {
                tracing::warn!(provider, error = %e, "the models could not be listed after a pull");
                Ok(None)
            }
        }
    }

    /// Stops the download of `model` of `provider`; `false` when none is running.
    pub fn cancel_pull(&self, provider: &str, model: &str) -> bool {
        let pulls = self
            .pulls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match pulls.get(&pull_key(provider, model)) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Deletes the installed `model` from the provider's machine.
    ///
    /// # Errors
    /// No model named; no such provider; what the provider said.
    pub async fn remove_model(&self, provider: &str, model: &str) -> Result<(), CoreError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(InvalidInput::new("model", "Name the model to remove.").into());
        }
        let client = self.client(provider).await?;
        client.remove_model(model).await?;
        Ok(())
    }

    /// Keeps what a listing said of each model's tool calling: a model whose server says it
    /// calls no tools is given them by prompt, one that says it does natively (the person's
    /// word still wins).
    pub(super) async fn learn_tool_modes(
        &self,
        provider: &str,
        models: &[ModelInfo],
    ) -> Result<(), CoreError> {
        let learned: Vec<(String, &'static str)> = models
            .iter()
            .filter_map(|m| {
                let mode = if m.takes_tools? {
                    ToolMode::Native
                } else {
                    ToolMode::Prompted
                };
                Some((m.id.clone(), mode.as_str()))
            })
            .collect();
        if learned.is_empty() {
            return Ok(());
        }
        let row = self.db.provider_row(provider).await?;
        self.db
            .store()?
            .set_learned_tool_modes(row.id, learned)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(file: &str, completed: u64, total: u64) -> PullStep {
        PullStep {
            status: format!("pulling {file}"),
            completed: Some(completed),
            total: Some(total),
            file: Some(file.to_owned()),
        }
    }

    #[test]
    fn a_downloads_speed_and_time_left_come_from_its_recent_bytes_and_start_again_per_file() {
        let mut speed = Speed::default();
        let t0 = Instant::now();
        let first = speed.progress(step("a", 0, 1_000), t0);
        assert_eq!(first.bytes_per_second, None, "one sample tells no speed");
        let later = speed.progress(step("a", 400, 1_000), t0 + Duration::from_secs(2));
        assert_eq!(later.bytes_per_second, Some(200.0));
        assert_eq!(later.seconds_left, Some(3.0));
        // Samples older than the span are left behind: the speed is the recent one.
        let _ = speed.progress(step("a", 500, 1_000), t0 + Duration::from_secs(8));
        let recent = speed.progress(step("a", 900, 1_000), t0 + Duration::from_secs(9));
        assert_eq!(recent.bytes_per_second, Some(400.0));
        assert_eq!(
            (recent.all_completed, recent.all_total),
            (Some(900), Some(1_000))
        );
        // Another file: no speed until it has two samples of its own.
        let next = speed.progress(step("b", 10, 50), t0 + Duration::from_secs(10));
        assert_eq!(next.bytes_per_second, None);
        assert_eq!(
            (next.all_completed, next.all_total),
            (Some(910), Some(1_050))
        );
        let plain = speed.progress(
            PullStep {
                status: "verifying sha256 digest".into(),
                completed: None,
                total: None,
                file: None,
            },
            t0 + Duration::from_secs(11),
        );
        assert_eq!(plain.status, "verifying sha256 digest");
        assert_eq!(plain.bytes_per_second, None);
    }
}
