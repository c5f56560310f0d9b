//! One running app per home. The first instance holds an OS file lock in the data folder and
//! listens on a loopback port for "show your window" requests; a second instance started on
//! the same home asks the first to show itself and exits, instead of opening the same
//! database twice. Different homes (`SWITCHBOARD_HOME`) run side by side.
//!
//! Owns `<data dir>/switchboard.lock` and `<data dir>/instance.json`; nothing else.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

const LOCK_FILE: &str = "switchboard.lock";
const INFO_FILE: &str = "instance.json";
const REPLY: &str = "shown";
/// The most a request may hold: the token's line and a link's (links are read up to 16 KiB).
const MAX_REQUEST_BYTES: u64 = 64 * 1024;
/// How long a request may take to arrive whole, however slowly it drips in.
const REQUEST_TIME: Duration = Duration::from_secs(3);
/// How many requests are answered at once; a connection past that is closed unread, so a
/// flood of silent clients holds a few threads for [`REQUEST_TIME`] at most, and memory for
/// [`MAX_REQUEST_BYTES`] each.
const MAX_ANSWERING: usize = 8;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstanceError {
    #[error("Cannot use {path}: {detail}")]
    Io { path: PathBuf, detail: String },
}

#[derive(Serialize, Deserialize)]
struct InstanceInfo {
    pid: u32,
    port: u16,
    token: String,
}

/// Held by the first instance for its whole life; dropping it releases the lock.
pub struct PrimaryGuard {
    _lock: File,
    info_path: PathBuf,
}

impl Drop for PrimaryGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.info_path);
    }
}

pub enum Instance {
    /// This is the only instance on this home; keep the guard.
    Primary(PrimaryGuard),
    /// Another instance runs on this home. `shown` says whether it answered and showed its
    /// window; `detail` says what happened, for the person.
    Secondary { shown: bool, detail: String },
}

/// The process id the window on this home wrote when it took the lock, if it did (the file is
/// removed when the window ends well; a killed window leaves it, naming a process now gone).
pub fn primary_pid(data_dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(data_dir.join(INFO_FILE)).ok()?;
    serde_json::from_str::<InstanceInfo>(&text)
        .ok()
        .map(|info| info.pid)
}

/// Takes the home's lock, or asks the instance holding it to show its window (handing it
/// `link`, the `switchboard://` link this start was given, if any). `on_show` runs (on a
/// listener thread) each time a later instance asks, with the link it handed over, and says
/// whether it could show the window; only then is the asker told it was shown.
///
/// # Errors
/// The lock file cannot be created or locked for a reason other than another instance.
pub fn acquire(
    data_dir: &Path,
    link: Option<&str>,
    on_show: impl Fn(Option<String>) -> bool + Send + Sync + 'static,
) -> Result<Instance, InstanceError> {
    let io_err = |path: &Path, e: std::io::Error| InstanceError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    crate::paths::create_private_dirs(data_dir).map_err(|e| io_err(data_dir, e))?;
    let lock_path = data_dir.join(LOCK_FILE);
    let info_path = data_dir.join(INFO_FILE);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| io_err(&lock_path, e))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(ask_the_first_to_show(&info_path, link)),
        Err(TryLockError::Error(e)) => return Err(io_err(&lock_path, e)),
    }

    let listener =
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| io_err(&info_path, e))?;
    let port = listener
        .local_addr()
        .map_err(|e| io_err(&info_path, e))?
        .port();
    let token = uuid::Uuid::new_v4().to_string();
    let info = InstanceInfo {
        pid: std::process::id(),
        port,
        token: token.clone(),
    };
    let json = serde_json::to_vec(&info).unwrap_or_default();
    // Written aside and renamed, so a second copy never reads half a file; the person's alone,
    // as it holds the token.
    crate::paths::write_whole(&info_path, &json).map_err(|e| io_err(&info_path, e))?;

    let on_show = Arc::new(on_show);
    let token = Arc::new(token);
    let answering = Arc::new(AtomicUsize::new(0));
    std::thread::Builder::new()
        .name("instance-listener".into())
        .spawn(move || {
            // Each request on a thread of its own, so a slow or silent one blocks no other.
            for stream in listener.incoming().flatten() {
                let (slot, before) = Slot::take(&answering);
                if before >= MAX_ANSWERING {
                    continue; // dropped, the slot with it: closed unread
                }
                let (token, on_show) = (Arc::clone(&token), Arc::clone(&on_show));
                // The slot goes with the thread, given back however the answer ends (a panic
                // in `on_show` too), or with the closure when no thread could be made.
                let _ = std::thread::Builder::new()
                    .name("instance-request".into())
                    .spawn(move || {
                        let _slot = slot;
                        answer(&stream, &token, &*on_show);
                    });
            }
        })
        .map_err(|e| io_err(&info_path, e))?;
    Ok(Instance::Primary(PrimaryGuard {
        _lock: lock,
        info_path,
    }))
}

/// One of the [`MAX_ANSWERING`] places, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// Takes a place in `count`, with how many were taken before it.
    fn take(count: &Arc<AtomicUsize>) -> (Slot, usize) {
        let before = count.fetch_add(1, Ordering::SeqCst);
        (Slot(Arc::clone(count)), before)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reads a request — at most [`MAX_REQUEST_BYTES`], within [`REQUEST_TIME`] — then checks it:
/// a first line that is the token asks to show the window, and the second is the link it hands
/// over (empty for none); answered with [`REPLY`] only when the window was shown.
fn answer(stream: &TcpStream, token: &str, on_show: &dyn Fn(Option<String>) -> bool) {
    let Some(request) = read_request(stream, Instant::now() + REQUEST_TIME) else {
        return;
    };
    let mut lines = request.split('\n');
    if lines.next().map(str::trim) != Some(token) {
        return;
    }
    let link = lines
        .next()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned);
    let reply = if on_show(link) { REPLY } else { "not-ready" };
    let mut out = stream;
    let _ = out.write_all(format!("{reply}\n").as_bytes());
}

/// The request's two lines, read until both are in, the sender stops, [`MAX_REQUEST_BYTES`]
/// are read or `deadline` passes (then `None`).
fn read_request(stream: &TcpStream, deadline: Instant) -> Option<String> {
    let mut limited = stream.take(MAX_REQUEST_BYTES);
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    while bytes.iter().filter(|b| **b == b'\n').count() < 2 {
        let left = deadline.checked_duration_since(Instant::now())?;
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        match limited.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(_) => return None,
        }
    }
    String::from_utf8(bytes).ok()
}

fn ask_the_first_to_show(info_path: &Path, link: Option<&str>) -> Instance {
    let secondary = |shown: bool, detail: String| Instance::Secondary { shown, detail };
    let info: InstanceInfo = match std::fs::read(info_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
    {
        Some(info) => info,
        None => {
            return secondary(
                false,
                "Switchboard is already running on this home, but it did not say how to reach it (it may still be starting)."
                    .into(),
            )
        }
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, info.port));
    let result = (|| -> std::io::Result<bool> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(3)))?;
        // One line each, so a link cannot smuggle in another line.
        let link: String = link
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        (&stream).write_all(format!("{}\n{link}\n", info.token).as_bytes())?;
        let mut reply = String::new();
        BufReader::new(&stream).read_line(&mut reply)?;
        Ok(reply.trim() == REPLY)
    })();
    match result {
        Ok(true) => secondary(
            true,
            format!(
                "Switchboard is already running on this home (process {}); its window was brought to the front.",
                info.pid
            ),
        ),
        Ok(false) => secondary(
            false,
            format!("Switchboard is already running on this home (process {}) but has no window to show yet; try again in a moment.", info.pid),
        ),
        Err(e) => secondary(
            false,
            format!(
                "Switchboard is already running on this home (process {}) and could not be reached: {e}.",
                info.pid
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_second_instance_on_the_same_home_asks_the_first_to_show_itself() {
        let dir = tempfile::tempdir().unwrap();
        let shown = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&shown);
        let links = Arc::new(std::sync::Mutex::new(Vec::new()));
        let heard = Arc::clone(&links);
        let first = acquire(dir.path(), None, move |link| {
            counter.fetch_add(1, Ordering::SeqCst);
            heard.lock().unwrap().push(link);
            true
        })
        .unwrap();
        assert!(matches!(first, Instance::Primary(_)));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let info = std::fs::metadata(dir.path().join(INFO_FILE)).unwrap();
            assert_eq!(
                info.permissions().mode() & 0o777,
                0o600,
                "its token is the person's alone"
            );
        }

        match acquire(dir.path(), None, |_| true).unwrap() {
            Instance::Secondary { shown: true, .. } => {}
            Instance::Secondary { detail, .. } => panic!("not shown: {detail}"),
            Instance::Primary(_) => panic!("two primaries on one home"),
        }
        assert_eq!(shown.load(Ordering::SeqCst), 1);
        // A later start given a link hands it over, one line however it is written.
        let link = "switchboard://install?registry=a/b\nforged";
        assert!(matches!(
            acquire(dir.path(), Some(link), |_| true).unwrap(),
            Instance::Secondary { shown: true, .. }
        ));
        assert_eq!(
            *links.lock().unwrap(),
            [
                None,
                Some("switchboard://install?registry=a/bforged".to_owned())
            ]
        );

        drop(first);
        assert!(matches!(
            acquire(dir.path(), None, |_| true).unwrap(),
            Instance::Primary(_)
        ));
    }

    #[test]
    fn a_first_instance_without_a_window_yet_does_not_claim_it_was_shown() {
        let dir = tempfile::tempdir().unwrap();
        let _first = acquire(dir.path(), None, |_| false).unwrap();
        match acquire(dir.path(), None, |_| true).unwrap() {
            Instance::Secondary { shown, .. } => assert!(!shown),
            Instance::Primary(_) => panic!("two primaries on one home"),
        }
    }

    #[test]
    fn a_slow_or_silent_client_blocks_no_second_start_and_grows_no_memory() {
        let dir = tempfile::tempdir().unwrap();
        let _first = acquire(dir.path(), None, |_| true).unwrap();
        let info: InstanceInfo =
            serde_json::from_slice(&std::fs::read(dir.path().join(INFO_FILE)).unwrap()).unwrap();
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, info.port));
        // A client dripping a byte every 100 ms (each read's timeout alone never fires), one
        // that says nothing, and one that sends far more than a request without a newline.
        let drip = {
            let stream = TcpStream::connect(addr).unwrap();
            std::thread::spawn(move || {
                // At most 30 s of dripping, so a listener that never hangs up fails the test
                // below instead of hanging it.
                let mut sent = 0usize;
                while sent < 300 && (&stream).write_all(b"x").is_ok() {
                    sent += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                sent
            })
        };
        let _silent = TcpStream::connect(addr).unwrap();
        let flood = std::thread::spawn(move || {
            let stream = TcpStream::connect(addr).unwrap();
            let block = vec![b'a'; 64 * 1024];
            let mut sent = 0usize;
            while sent < 16 * 1024 * 1024 && (&stream).write_all(&block).is_ok() {
                sent += block.len();
            }
            sent
        });
        // A second start is shown all the same, while they hang on.
        match acquire(dir.path(), None, |_| true).unwrap() {
            Instance::Secondary { shown, detail } => assert!(shown, "{detail}"),
            Instance::Primary(_) => panic!("two primaries on one home"),
        }
        // The flood was cut off after what a request may hold, not read to its end.
        let flooded = flood.join().unwrap();
        assert!(flooded < 16 * 1024 * 1024, "{flooded} bytes were taken in");
        // The dripping client is hung up on once its time is up.
        let dripped = drip.join().unwrap();
        assert!(dripped < 200, "still read after {dripped} drips");
    }

    #[test]
    fn different_homes_run_side_by_side() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let _first = acquire(a.path(), None, |_| true).unwrap();
        assert!(matches!(
            acquire(b.path(), None, |_| true).unwrap(),
            Instance::Primary(_)
        ));
    }
}
