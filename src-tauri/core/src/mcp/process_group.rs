//! A local server's process group: everything it started lives in one group (a Job Object on
//! Windows), and ending the server ends the group — politely first, then by force. Used by the
//! stdio start, by a server's stop and by the host's clean-up of groups a killed app left.

use std::time::Duration;

/// Kills the group led by its pid when dropped, unless disarmed (set to `None`).
pub(crate) struct GroupGuard(pub(crate) Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self.0.take().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// TERM to every process left in the group led by `pgid`, then KILL to any still there after
/// a second. Nothing happens when the group is already empty. (Windows: the Job Object ends
/// every process in it when its handle closes.)
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
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if killpg(group, None).is_err() {
            return;
        }
    }
    tracing::warn!(
        pgid,
        "processes of a stopped MCP server ignored TERM; killing them"
    );
    let _ = killpg(group, Signal::SIGKILL);
}

#[cfg(not(unix))]
pub(crate) async fn end_process_group(_pgid: Option<u32>) {}
