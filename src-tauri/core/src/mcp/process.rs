//! A local server's process: its group — everything it started lives in one group (a Job
//! Object on Windows), and ending the server ends the group, politely first, then by force —
//! and the last of what it wrote on stderr ([`StderrRing`]), for the errors a person reads.
//! Used by the stdio start, by a server's stop and by the host's clean-up of groups a killed
//! app left.

use std::collections::VecDeque;
use std::sync::Mutex;

/// How much of a server's stderr is kept in memory.
pub const STDERR_RING_BYTES: usize = 1024 * 1024;

/// The last [`STDERR_RING_BYTES`] a server wrote to stderr.
#[derive(Debug, Default)]
pub struct StderrRing {
    bytes: Mutex<VecDeque<u8>>,
}

impl StderrRing {
    pub(crate) fn push(&self, chunk: &[u8]) {
        let mut bytes = self
            .bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        bytes.extend(chunk);
        let excess = bytes.len().saturating_sub(STDERR_RING_BYTES);
        bytes.drain(..excess);
    }

    /// The last `max_chars` characters, as text.
    pub fn tail(&self, max_chars: usize) -> String {
        let bytes = self
            .bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (a, b) = bytes.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        let count = text.chars().count();
        text.chars().skip(count.saturating_sub(max_chars)).collect()
    }
}

pub(crate) use crate::sandbox::command::GroupGuard;

/// How long a local server is given to leave on its own once its stdin has closed, before its
/// group is sent TERM. Short: a person quitting or a script that has its answer must not wait
/// on it. The cost: a server that saves its state only once stdin has closed has 40 ms to do
/// it, since TERM ends a Node or Python program at once unless it handles it (the servers
/// tested here save as they go; server-everything keeps timers running and leaves only on
/// TERM).
pub(crate) const STDIN_GRACE: std::time::Duration = std::time::Duration::from_millis(40);

/// How long a group is given after TERM before KILL.
#[cfg(unix)]
const TERM_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Sends TERM to every process in the group led by `pgid`. False when the group is gone.
#[cfg(unix)]
pub(crate) fn term_group(pgid: Option<u32>) -> bool {
    use nix::sys::signal::{killpg, Signal};
    pgid.and_then(|p| i32::try_from(p).ok())
        .is_some_and(|pgid| killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGTERM).is_ok())
}

#[cfg(not(unix))]
pub(crate) fn term_group(_pgid: Option<u32>) -> bool {
    false
}

/// TERM to every process left in the group led by `pgid`, then KILL to any still there after
/// [`TERM_GRACE`]. Nothing happens when the group is already empty. The group is looked at
/// again soon after TERM and then less often, so a group that leaves at once is not waited
/// for. The caller reaps a leader that is its own child before this: an exited leader not yet
/// reaped still counts as in the group. (Windows: the Job Object ends every process in it when
/// its handle closes.)
#[cfg(unix)]
pub(crate) async fn end_process_group(pgid: Option<u32>) {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;
    let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let group = Pid::from_raw(pgid);
    if killpg(group, Signal::SIGTERM).is_err() {
        return; // no such group: everything has exited
    }
    let until = std::time::Instant::now() + TERM_GRACE;
    let mut pause = std::time::Duration::from_millis(2);
    while std::time::Instant::now() < until {
        tokio::time::sleep(pause).await;
        if killpg(group, None).is_err() {
            return;
        }
        pause = (pause * 2).min(std::time::Duration::from_millis(50));
    }
    tracing::warn!(
        pgid,
        "processes of a stopped MCP server ignored TERM; killing them"
    );
    let _ = killpg(group, Signal::SIGKILL);
}

#[cfg(not(unix))]
pub(crate) async fn end_process_group(_pgid: Option<u32>) {}
