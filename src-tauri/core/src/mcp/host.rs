//! The supervisor of every running server, local or remote: all start at once in the
//! background (the caller never waits), each has a state a person can read, a crash restarts
//! it with exponential backoff (1 s, 2 s, 4 s, 8 s, 16 s, capped at 30 s; failed after 5 tries
//! in a row), shutdown stops them all concurrently within a deadline, and the process groups
//! of running servers are recorded so that an app killed with `kill -9` has them stopped at
//! its next start.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::Digest;
use tokio_util::sync::CancellationToken;

use super::catalogue::ListedTool;
use super::elicitation::{Elicitation, Elicitor};
use super::launch::ServerLaunch;
use super::process;
use super::server::{McpError, McpServer};

/// Tries in a row before a crashing server is left failed.
pub const MAX_TRIES: u32 = 5;
/// A server that ran this long before crashing starts its count of tries afresh.
const HEALTHY_RUN: Duration = Duration::from_secs(60);
/// How often a remote server is pinged: no process exit tells us it has gone away.
const PING_EVERY: Duration = Duration::from_secs(30);
/// How long a ping may take before the server counts as gone.
const PING_TIMEOUT: Duration = Duration::from_secs(10);

/// What a person sees of a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    Starting,
    Running {
        pid: Option<u32>,
        tools: usize,
        /// The tools that have an MCP App (their names), so a tool card asks for its app only
        /// when its tool has one.
        apps: Vec<String>,
    },
    /// Waiting `in_secs` before try `attempt` (of [`MAX_TRIES`]) after a crash.
    Restarting {
        attempt: u32,
        in_secs: u64,
        reason: String,
    },
    Failed {
        reason: String,
    },
    /// A remote server that wants a person to sign in (OAuth) before it answers; it is not
    /// retried until they have.
    NeedsSignIn {
        reason: String,
    },
    Stopped,
}

/// The first delay is 1 s, doubling, at most 30 s.
pub fn backoff(attempt: u32) -> Duration {
    backoff_in(attempt, Duration::from_secs(1))
}

/// [`backoff`] in units of `unit` instead of seconds.
fn backoff_in(attempt: u32, unit: Duration) -> Duration {
    (unit * (1u32 << attempt.saturating_sub(1).min(5))).min(unit * 30)
}

struct Slot {
    state: ServerState,
    /// The program's resolved path (a local server) or the address (a remote one).
    resolved: String,
    server: Option<Arc<McpServer>>,
    /// The running server's tools as last listed (at start and after `tools/list_changed`).
    tools: Arc<Vec<ListedTool>>,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
    /// The challenge of the call that asked for a sign-in while the server ran (a step-up),
    /// for the sign-in to ask for what it names.
    challenge: Option<String>,
}

/// The servers this app runs.
#[derive(Clone)]
pub struct McpHost {
    slots: Arc<Mutex<BTreeMap<String, Slot>>>,
    pids: Arc<PidRecords>,
    backoff_unit: Duration,
    ping_every: Duration,
    /// Who shows servers' forms to the person (none: every form is declined).
    elicitation: Elicitation,
    /// Counts every change of a state or a tool list, so watchers wake instead of polling.
    changes: Arc<tokio::sync::watch::Sender<u64>>,
    /// Set by `shutdown`: a start that comes later (a server approved in a dialog left open
    /// while the app quit) is refused, so no server outlives the app.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

impl McpHost {
    /// A host that records its servers' process groups in `pid_file`. Groups recorded there by
    /// an earlier run that did not stop them (it was killed) are stopped first.
    pub async fn new(pid_file: PathBuf) -> McpHost {
        let pids = Arc::new(PidRecords {
            path: pid_file,
            lock: Mutex::new(()),
        });
        pids.stop_leftovers().await;
        McpHost {
            slots: Arc::default(),
            pids,
            backoff_unit: Duration::from_secs(1),
            ping_every: PING_EVERY,
            elicitation: Elicitation::default(),
            changes: Arc::new(tokio::sync::watch::Sender::new(0)),
            closed: Arc::default(),
        }
    }

    /// Wakes (`changed()`) whenever a server's state or tools change: a start, a crash, a
    /// restart, a new tool list, a stop. What changed is read with [`McpHost::states`].
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Servers' forms (`elicitation/create`) are shown through `elicitor`.
    #[must_use]
    pub fn with_elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> McpHost {
        self.elicitation = Elicitation(Some(elicitor));
        self
    }

    /// Remote servers are pinged every `every` instead of every 30 s (tests use less).
    #[must_use]
    pub fn with_ping_every(mut self, every: Duration) -> McpHost {
        self.ping_every = every;
        self
    }

    /// Restarts wait `unit` × 1, 2, 4, … instead of seconds (tests use milliseconds).
    #[must_use]
    pub fn with_backoff_unit(mut self, unit: Duration) -> McpHost {
        self.backoff_unit = unit;
        self
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Slot>> {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set_state(&self, name: &str, state: ServerState, server: Option<Option<Arc<McpServer>>>) {
        {
            let mut slots = self.slots();
            if let Some(slot) = slots.get_mut(name) {
                tracing::info!(server = name, state = ?state, "MCP server state");
                slot.state = state;
                if let Some(server) = server {
                    slot.server = server;
                }
            }
        }
        self.changed();
    }

    /// Keeps `tools` as `name`'s last list; returns the state of a server running with them.
    fn set_tools(&self, name: &str, pid: Option<u32>, tools: &[rmcp::model::Tool]) -> ServerState {
        let listed: Vec<ListedTool> = tools.iter().map(ListedTool::from_rmcp).collect();
        let apps = listed
            .iter()
            .filter(|t| t.app.is_some())
            .map(|t| t.name.clone())
            .collect();
        if let Some(slot) = self.slots().get_mut(name) {
            slot.tools = Arc::new(listed);
        }
        ServerState::Running {
            pid,
            tools: tools.len(),
            apps,
        }
    }

    /// The tools of every running server as last listed, in server-name order.
    pub fn running_tools(&self) -> Vec<(String, Arc<Vec<ListedTool>>)> {
        self.slots()
            .iter()
            .filter(|(_, slot)| slot.server.is_some())
            .map(|(name, slot)| (name.clone(), Arc::clone(&slot.tools)))
            .collect()
    }

    /// Starts supervising `name` in the background; returns at once. A server already there
    /// is stopped first.
    pub async fn spawn(&self, name: &str, launch: impl Into<ServerLaunch>) {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            tracing::info!(server = name, "not started: the app is quitting");
            return;
        }
        let launch = launch.into().with_elicitation(self.elicitation.clone());
        self.stop(name).await;
        let stop = CancellationToken::new();
        self.slots().insert(
            name.to_owned(),
            Slot {
                state: ServerState::Starting,
                resolved: launch.resolved(),
                server: None,
                tools: Arc::default(),
                stop: stop.clone(),
                task: None,
                challenge: None,
            },
        );
        let host = self.clone();
        let server_name = name.to_owned();
        let task = tokio::spawn(async move { host.supervise(&server_name, launch, stop).await });
        if let Some(slot) = self.slots().get_mut(name) {
            slot.task = Some(task);
        }
        self.changed();
    }

    async fn supervise(&self, name: &str, launch: ServerLaunch, stop: CancellationToken) {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let started = tokio::select! {
                () = stop.cancelled() => {
                    // The half-started process is killed with its dropped transport.
                    self.pids.forget(name);
                    return self.set_state(name, ServerState::Stopped, Some(None));
                }
                started = launch.connect(name, |pid| self.pids.record(name, pid)) => started,
            };
            let reason = match started {
                Ok(server) => 'ran: {
                    let server = Arc::new(server);
                    let began = Instant::now();
                    let listed = tokio::select! {
                        () = stop.cancelled() => return self.stopped(name, &server).await,
                        listed = server.list_tools() => listed,
                    };
                    let tools = match listed {
                        Ok(tools) => tools,
                        // Paging without end, or too much: it cannot be used as it is.
                        Err(e @ McpError::ListTooLong { .. }) => {
                            server.stop().await;
                            self.pids.forget(name);
                            tracing::warn!(server = %name, "{e}");
                            break 'ran e.to_string();
                        }
                        // Some servers take `initialize` from anyone and ask for a sign-in
                        // at the first real request.
                        Err(e @ McpError::SignInRequired { .. }) => {
                            server.stop().await;
                            self.pids.forget(name);
                            return self.set_state(
                                name,
                                ServerState::NeedsSignIn {
                                    reason: e.to_string(),
                                },
                                Some(None),
                            );
                        }
                        Err(_) => Vec::new(),
                    };
                    let running = self.set_tools(name, server.pid(), &tools);
                    self.set_state(name, running, Some(Some(Arc::clone(&server))));
                    let mut tools_changed = server.tools_changed();
                    let mut offers_changed = server.offers_changed();
                    let mut sign_in_wanted = server.sign_in_wanted();
                    // A local server's exit is seen at once; a remote one is asked now and then.
                    let mut pings = tokio::time::interval_at(
                        tokio::time::Instant::now() + self.ping_every,
                        self.ping_every,
                    );
                    let why = loop {
                        tokio::select! {
                            () = stop.cancelled() => return self.stopped(name, &server).await,
                            why = server.exited() => break why,
                            _ = pings.tick(), if server.pid().is_none() => {
                                if let Err(e) = server.ping(PING_TIMEOUT).await {
                                    server.stop().await;
                                    break format!("it stopped answering: {e}");
                                }
                            }
                            Ok(()) = sign_in_wanted.changed() => {
                                // A call was refused for want of a sign-in (a step-up to more
                                // scope, or a token gone): nothing more will work until the
                                // person signs in, so say so now, not at the next start.
                                let wanted = sign_in_wanted.borrow_and_update().clone();
                                if let Some((challenge, more_scope)) = wanted {
                                    server.stop().await;
                                    self.pids.forget(name);
                                    if let Some(slot) = self.slots().get_mut(name) {
                                        slot.challenge = Some(challenge);
                                    }
                                    let reason = if more_scope {
                                        format!("“{name}” refused a call: it needs more permission than you gave it; sign in to it again")
                                    } else {
                                        format!("“{name}” refused a call: it no longer takes your sign-in; sign in to it again")
                                    };
                                    return self.set_state(
                                        name,
                                        ServerState::NeedsSignIn { reason },
                                        Some(None),
                                    );
                                }
                            }
                            Ok(()) = offers_changed.changed() => {
                                // Resources or prompts changed: whoever shows them reads
                                // them again when the list is sent.
                                tracing::debug!(server = name, "MCP server's resources or prompts changed");
                                self.changed();
                            }
                            Ok(()) = tools_changed.changed() => {
                                // `notifications/tools/list_changed`: list them again (a
                                // flood of them is one change waiting, not a queue).
                                let listed = tokio::select! {
                                    () = stop.cancelled() => return self.stopped(name, &server).await,
                                    listed = server.list_tools() => listed,
                                };
                                if let Ok(tools) = listed {
                                    let running = self.set_tools(name, server.pid(), &tools);
                                    self.set_state(name, running, None);
                                }
                            }
                        }
                    };
                    self.pids.forget(name);
                    if began.elapsed() >= HEALTHY_RUN {
                        attempt = 1;
                    }
                    let tail = server.stderr_tail();
                    if tail.trim().is_empty() {
                        why
                    } else {
                        format!("{why}\n{}", tail.trim_end())
                    }
                }
                Err(e @ McpError::SignInRequired { .. }) => {
                    // Asking again will not help until a person has signed in.
                    return self.set_state(
                        name,
                        ServerState::NeedsSignIn {
                            reason: e.to_string(),
                        },
                        Some(None),
                    );
                }
                Err(e @ McpError::Spawn { .. }) => {
                    self.pids.forget(name);
                    // A program that cannot run will not run on the next try either.
                    return self.set_state(
                        name,
                        ServerState::Failed {
                            reason: e.to_string(),
                        },
                        Some(None),
                    );
                }
                Err(e) => {
                    self.pids.forget(name);
                    e.to_string()
                }
            };
            if attempt >= MAX_TRIES {
                return self.set_state(
                    name,
                    ServerState::Failed {
                        reason: format!("{reason}\n(gave up after {MAX_TRIES} tries)"),
                    },
                    Some(None),
                );
            }
            let delay = backoff_in(attempt, self.backoff_unit);
            self.set_state(
                name,
                ServerState::Restarting {
                    attempt: attempt + 1,
                    in_secs: delay.as_secs().max(u64::from(!delay.is_zero())),
                    reason,
                },
                Some(None),
            );
            tokio::select! {
                () = stop.cancelled() => return self.set_state(name, ServerState::Stopped, None),
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Stops a running server on its supervisor's way out.
    async fn stopped(&self, name: &str, server: &McpServer) {
        server.stop().await;
        self.pids.forget(name);
        self.set_state(name, ServerState::Stopped, Some(None));
    }

    /// Every server's state, by name.
    pub fn states(&self) -> BTreeMap<String, ServerState> {
        self.slots()
            .iter()
            .map(|(name, slot)| (name.clone(), slot.state.clone()))
            .collect()
    }

    /// What each server runs: the resolved path of its program, or its address.
    pub fn resolved(&self) -> BTreeMap<String, String> {
        self.slots()
            .iter()
            .map(|(name, slot)| (name.clone(), slot.resolved.clone()))
            .collect()
    }

    /// The running server `name`, for calls.
    /// The challenge of the call that asked `name` for a sign-in while it ran, if one did.
    pub fn sign_in_challenge(&self, name: &str) -> Option<String> {
        self.slots()
            .get(name)
            .and_then(|slot| slot.challenge.clone())
    }

    pub fn server(&self, name: &str) -> Option<Arc<McpServer>> {
        self.slots().get(name).and_then(|s| s.server.clone())
    }

    /// Stops one server and waits for it.
    pub async fn stop(&self, name: &str) {
        let task = {
            let mut slots = self.slots();
            slots.get_mut(name).and_then(|slot| {
                slot.stop.cancel();
                slot.task.take()
            })
        };
        if let Some(task) = task {
            let _ = task.await;
        }
    }

    /// Stops every server at once; whatever has not ended by `deadline` has its group killed.
    pub async fn shutdown(&self, deadline: Duration) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        let names: Vec<String> = self.slots().keys().cloned().collect();
        let stops = names.iter().map(|name| self.stop(name));
        if tokio::time::timeout(deadline, futures_util::future::join_all(stops))
            .await
            .is_err()
        {
            tracing::warn!("MCP servers still running at the shutdown deadline; killing them");
            self.pids.stop_leftovers().await;
        }
    }
}

/// The process groups of running servers, on disk: `{server: {pgid, start_time}}`.
struct PidRecords {
    path: PathBuf,
    /// One read-modify-write at a time: servers start and stop concurrently.
    lock: Mutex<()>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct PidRecord {
    pgid: u32,
    /// The process's start time (Linux: field 22 of /proc/PID/stat), so a reused PID is not
    /// mistaken for our server.
    start_time: Option<u64>,
}

impl PidRecords {
    fn read(&self) -> BTreeMap<String, PidRecord> {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    fn write(&self, records: &BTreeMap<String, PidRecord>) {
        let result = (|| -> std::io::Result<()> {
            crate::paths::write_whole(&self.path, serde_json::to_string(records)?.as_bytes())
        })();
        if let Err(e) = result {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot record MCP server processes");
        }
    }

    fn record(&self, name: &str, pid: Option<u32>) {
        let Some(pgid) = pid else { return };
        let _one_at_a_time = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut records = self.read();
        records.insert(
            name.to_owned(),
            PidRecord {
                pgid,
                start_time: start_time(pgid),
            },
        );
        self.write(&records);
    }

    fn forget(&self, name: &str) {
        let _one_at_a_time = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut records = self.read();
        if records.remove(name).is_some() {
            self.write(&records);
        }
    }

    /// Stops every recorded group that is still the same process, and clears the records.
    async fn stop_leftovers(&self) {
        let records = self.read();
        if records.is_empty() {
            return;
        }
        for (name, record) in &records {
            let same = match (record.start_time, start_time(record.pgid)) {
                // The leader still runs: it is ours if it started when we recorded.
                (Some(recorded), Some(now)) => recorded == now,
                // The leader has exited (a server whose stdin closed with the app), but its
                // children may remain. While any process is in a group, its id cannot be
                // given to a new process, so signalling the group reaches only those.
                (_, None) => process_gone(record.pgid),
                // A start time that cannot be read now: a reused PID cannot be told apart.
                (None, Some(_)) => false,
            };
            if same {
                tracing::warn!(server = %name, pgid = record.pgid, "stopping an MCP server left running by an earlier run");
                process::end_process_group(Some(record.pgid)).await;
            }
        }
        self.write(&BTreeMap::new());
    }
}

/// The start of the name of the file where a command line records its servers' groups
/// (`mcp-processes-cli-<pid>.json`, in the data folder).
pub const CLI_RECORDS_PREFIX: &str = "mcp-processes-cli-";

/// Stops the server groups that other processes of the same home recorded and left running
/// when they were killed: each command line's `mcp-processes-cli-<pid>.json` whose process is
/// gone, and the window's `window_records` when the window that wrote `instance.json` is gone.
/// `own` (this process's file) is left alone; a reaped file is removed. Windows needs none of
/// this: a Job Object ends a server with the process that started it.
pub async fn stop_left_by_gone_processes(data_dir: &Path, own: &Path, window_records: &Path) {
    if cfg!(not(unix)) {
        return;
    }
    let mut gone = Vec::new();
    if let Ok(entries) = std::fs::read_dir(data_dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let pid = entry
                .file_name()
                .to_str()
                .and_then(|n| n.strip_prefix(CLI_RECORDS_PREFIX))
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u32>().ok());
            if pid.is_some_and(process_gone) && path != own {
                gone.push(path);
            }
        }
    }
    let window_gone = crate::instance::primary_pid(data_dir).is_none_or(process_gone);
    if window_gone && window_records != own && window_records.exists() {
        gone.push(window_records.to_path_buf());
    }
    for path in gone {
        let records = PidRecords {
            path: path.clone(),
            lock: Mutex::new(()),
        };
        records.stop_leftovers().await;
        let _ = std::fs::remove_file(&path);
    }
}

/// When the process started, as a number that stays the same for the process's life and
/// differs for a later process given the same PID; `None` if it is gone (or cannot be asked).
/// Linux: clock ticks since boot, from /proc. Other Unixes (macOS, the BSDs): a hash of the
/// start time `ps` gives. Windows has no use for it: a Job Object ends its processes when the
/// app that holds it dies.
fn start_time(pid: u32) -> Option<u64> {
    if std::path::Path::new("/proc/self/stat").exists() {
        proc_start_time(pid)
    } else {
        ps_start_time(pid)
    }
}

fn proc_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn ps_start_time(pid: u32) -> Option<u64> {
    let out = std::process::Command::new("ps")
        .args(["-o", "lstart=", "-p", &pid.to_string()])
        .env("LC_ALL", "C")
        .output()
        .ok()?;
    let started = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || started.is_empty() {
        return None;
    }
    let digest = sha2::Sha256::digest(started.as_bytes());
    Some(u64::from_le_bytes(digest[..8].try_into().ok()?))
}

/// Whether no process has this id (Unix); elsewhere nothing is known, so it is not.
fn process_gone(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        i32::try_from(pid).is_ok_and(|pid| {
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) == Err(Errno::ESRCH)
        })
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_one_second_up_to_thirty() {
        let delays: Vec<u64> = (1..=7).map(|a| backoff(a).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
    }

    #[cfg(unix)]
    #[test]
    fn a_start_time_read_with_ps_is_stable_for_a_process_and_differs_for_another() {
        let me = std::process::id();
        let first = ps_start_time(me).expect("ps knows this process");
        assert_eq!(ps_start_time(me), Some(first));
        let mut child = std::process::Command::new("sleep")
            .arg("2")
            .spawn()
            .unwrap();
        // `ps -o lstart` has one-second resolution: a process started later differs.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let mut later = std::process::Command::new("sleep")
            .arg("2")
            .spawn()
            .unwrap();
        let (a, b) = (ps_start_time(child.id()), ps_start_time(later.id()));
        let _ = (child.kill(), later.kill(), child.wait(), later.wait());
        assert!(a.is_some() && a != b, "{a:?} {b:?}");
        assert!(process_gone(child.id()));
        assert!(!process_gone(me));
    }
}
