//! Schedules (issue 61): the Schedules page's list, adding, switching and removing one, running
//! one now (in the background: the window opens its conversation and follows it there), the
//! record of runs, and how many runs wait for an approval (the page's badge).

use std::sync::Arc;

use serde::Serialize;

use super::{commands, Sink};
use crate::events::{EventSink, RunEvent};
use crate::schedules::{NewSchedule, Schedule};
use crate::store::ScheduleRun;

/// A run asked for from the window: its record and the conversation it landed in.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct ScheduleRunStarted {
    pub run_id: String,
    pub conversation_id: String,
}

commands! {
    async fn list_schedules(cx) -> Vec<Schedule> {
        Ok(cx.app.schedules().await?)
    }

    async fn add_schedule(cx, schedule: NewSchedule) -> Schedule {
        Ok(cx.app.add_schedule(schedule).await?)
    }

    async fn remove_schedule(cx, id: String) -> () {
        Ok(cx.app.remove_schedule(&id).await?)
    }

    async fn set_schedule_enabled(cx, id: String, enabled: bool) -> Schedule {
        Ok(cx.app.set_schedule_enabled(&id, enabled).await?)
    }

    /// Starts a run now; its approvals wait for the window as a due run's do. The window
    /// follows it by opening its conversation.
    async fn run_schedule_now(cx, id: String) -> ScheduleRunStarted {
        // The run's feed keeps its events for whoever opens the conversation.
        let sink: Arc<dyn EventSink> = Arc::new(|_: RunEvent| {});
        let started = cx.app.run_schedule_now(&id, sink, None).await?;
        Ok(ScheduleRunStarted {
            run_id: started.run_id,
            conversation_id: started.handle.conversation_id,
        })
    }

    /// The latest runs, newest first: of one schedule (`id`), or of all.
    async fn schedule_runs(cx, id: Option<String>, limit: u32) -> Vec<ScheduleRun> {
        Ok(cx.app.schedule_runs(id.as_deref(), limit).await?)
    }

    async fn schedule_runs_waiting(cx) -> u32 {
        Ok(cx.app.schedule_runs_waiting().await?)
    }

    /// Sends how many runs wait for an approval now, and again at each change of a schedule
    /// or a run (the sidebar's badge, the page's lists), until the window goes.
    async fn watch_schedules(cx, on_change: Sink<u32>) -> () {
        cx.app.watch_schedules(move |waiting| on_change.send(&waiting));
        Ok(())
    }
}
