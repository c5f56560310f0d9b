//! A project's folders lent to the servers its turns use (issue 62). MCP servers run once for
//! every conversation, so a project's folders cannot be theirs for good: while a turn in the
//! project runs, each server it offers is given the project's folders as its roots and told
//! (`notifications/roots/list_changed`); when the turn ends (or its task dies) the server gets
//! back what it had: the folders of the latest turn still lending it some, else its own from
//! mcp.json. What a server is given is decided and set under one lock, and it is told after:
//! it reads the list as it is when it asks, so the order the notices arrive in does not matter.
//! A server that restarts during a loan starts with the lent folders; one whose own folders
//! are changed meanwhile keeps the loan until it ends (decided under the same lock). The servers
//! are told beside the run, so one slow to read cannot hold the turn; the loan's guard exists
//! before they are. A server caught restarting while a loan begins or ends is not given the
//! change: it keeps the folders it was launched with until the next loan.
//!
//! Two turns on one server at once (two projects, or a project and none): the server sees the
//! later lender's folders. What keeps each turn to its own is the call check, which judges a
//! path argument against the turn's project folders (its server's own outside projects),
//! whatever the server was told. A sandboxed server's sandbox opened its own folders when it
//! started: lent folders it cannot reach are named to it but not opened.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::App;
use crate::error::{CoreError, InvalidInput};
use crate::text::one_line;

/// Each server's loans: the run that lent, and its folders, in the order they were lent.
type Loans = HashMap<String, Vec<(String, Vec<PathBuf>)>>;

/// The folders lent to each server.
#[derive(Default)]
pub(super) struct RootLoans {
    lent: Mutex<Loans>,
}

impl RootLoans {
    fn lock(&self) -> std::sync::MutexGuard<'_, Loans> {
        self.lent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A project's folders as paths (a leading "~/" is the home folder).
#[must_use]
pub fn project_folders(project: &crate::store::Project) -> Vec<PathBuf> {
    project
        .fields
        .roots
        .iter()
        .filter_map(|raw| crate::paths::folder_of(raw))
        .collect()
}

/// Folders a person gave as a list (a project's, a server's own), checked off the runtime
/// (it reads the disk): blank ones dropped, each an absolute path ("~/" is the home folder)
/// to an existing folder, written one way ("/a/" and "/a" are one), each once, at most `max`.
/// One of `already` (the folders kept until now) is kept as it is, unchecked, so a list whose
/// folder has since gone, or that was written by hand, can still be made shorter.
///
/// # Errors
/// The first that is not, said of `field`.
pub(super) async fn checked_folders(
    given: Vec<String>,
    already: Vec<String>,
    field: &'static str,
    max: usize,
) -> Result<Vec<String>, CoreError> {
    tokio::task::spawn_blocking(move || check_folders(&given, &already, field, max))
        .await
        .map_err(|e| InvalidInput::new(field, format!("The folders were not read: {e}.")))?
        .map_err(CoreError::from)
}

/// [`checked_folders`], on the thread it is called on.
fn check_folders(
    given: &[String],
    already: &[String],
    field: &'static str,
    max: usize,
) -> Result<Vec<String>, InvalidInput> {
    let bad = |message: String| InvalidInput::new(field, message);
    // What was kept, written one way ("~/a/" as the path it names), to find a given one among;
    // found, it is kept as it was written.
    let had: Vec<(String, &String)> = already
        .iter()
        .filter_map(|f| Some((written_one_way(f)?, f)))
        .collect();
    let kept_before = |path: &str| {
        had.iter()
            .find(|(h, _)| h == path)
            .map(|(_, w)| (*w).clone())
    };
    let (mut kept, mut paths, mut only_kept_before) = (Vec::new(), Vec::<String>::new(), true);
    for text in given.iter().filter(|r| !r.trim().is_empty()) {
        let (path, keep) = match written_one_way(text).and_then(|p| Some((kept_before(&p)?, p))) {
            Some((written, path)) => (path, written),
            None => {
                only_kept_before = false;
                let path = checked_folder(text).map_err(bad)?;
                (path.clone(), path)
            }
        };
        if !paths.contains(&path) {
            paths.push(path);
            kept.push(keep);
        }
    }
    // Past `max` only by keeping fewer of a list that was longer (written by hand).
    if kept.len() > max && !only_kept_before {
        return Err(bad(format!("Keep at most {max} folders.")));
    }
    Ok(kept)
}

/// A folder as a path written one way ("~/" expanded, "/a/" as "/a"), without looking at the
/// disk; `None` when it names none here.
fn written_one_way(text: &str) -> Option<String> {
    let path: PathBuf = crate::paths::folder_of(text)?.components().collect();
    Some(path.to_string_lossy().into_owned())
}

/// One folder as kept, or why not.
fn checked_folder(text: &str) -> Result<String, String> {
    let shown = one_line(text, 200);
    if text.chars().any(char::is_control) {
        return Err(format!("“{shown}” holds a control character."));
    }
    if text.starts_with("~/") && dirs::home_dir().is_none() {
        return Err("This computer has no home folder for “~/”.".into());
    }
    let Some(path) = crate::paths::folder_of(text) else {
        return Err(format!("“{shown}” is not an absolute path."));
    };
    if !path.is_dir() {
        return Err(format!("“{shown}” is not a folder."));
    }
    written_one_way(text).ok_or_else(|| format!("“{shown}” is not an absolute path."))
}

/// A run's loan: given back when dropped, also when the run's task panics or is aborted.
struct Loan {
    app: Arc<App>,
    run_id: String,
}

impl Drop for Loan {
    fn drop(&mut self) {
        let told = self.app.take_back_roots(&self.run_id);
        if told.is_empty() {
            return;
        }
        let app = Arc::clone(&self.app);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { app.tell_roots_changed(told).await });
        }
    }
}

impl App {
    /// Runs a turn ([`crate::agent::run`]) with its project's folders lent to the servers it
    /// offers while it lasts.
    pub(super) async fn run_lending_roots(
        self: &Arc<Self>,
        setup: crate::agent::RunSetup,
        services: crate::agent::RunServices<'_>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> crate::events::StopReason {
        let run_id = setup.run_id.clone();
        let mut servers: Vec<String> = setup.tools.iter().map(|t| t.server.clone()).collect();
        servers.sort_unstable();
        servers.dedup();
        let loan = if setup.project_roots.is_empty() {
            None
        } else {
            let told = self.lend_roots(&run_id, &servers, &setup.project_roots);
            // The guard first: whatever happens from here, the loan is given back.
            let loan = Loan {
                app: Arc::clone(self),
                run_id,
            };
            // Told beside the run: a server slow to read cannot hold the turn.
            let app = Arc::clone(self);
            tokio::spawn(async move { app.tell_roots_changed(told).await });
            Some(loan)
        };
        let reason = crate::agent::run(setup, services, cancel).await;
        drop(loan);
        reason
    }

    /// Gives each of `servers` that runs `folders` as its roots for the run `run_id`; the
    /// servers whose roots changed, to tell.
    fn lend_roots(&self, run_id: &str, servers: &[String], folders: &[PathBuf]) -> Vec<String> {
        let mut lent = self.root_loans.lock();
        let mut told = Vec::new();
        for server in servers {
            lent.entry(server.clone())
                .or_default()
                .push((run_id.to_owned(), folders.to_vec()));
            if self
                .host
                .server(server)
                .is_some_and(|running| running.replace_roots(folders.to_vec()))
            {
                told.push(server.clone());
            }
        }
        told
    }

    /// Takes back what the run `run_id` lent: each server gets the folders of the latest run
    /// still lending it some, else its own. The servers whose roots changed, to tell.
    fn take_back_roots(&self, run_id: &str) -> Vec<String> {
        // Read before the lock; unreadable, a server keeps what it has rather than losing its
        // own folders.
        let own = self.load_mcp().ok();
        let mut lent = self.root_loans.lock();
        let mut told = Vec::new();
        lent.retain(|server, loans| {
            let before = loans.len();
            loans.retain(|(run, _)| run != run_id);
            if loans.len() != before {
                let folders = match (loans.last(), &own) {
                    (Some((_, folders)), _) => Some(folders.clone()),
                    (None, Some(file)) => Some(
                        file.servers
                            .get(server)
                            .map(|e| e.root_folders())
                            .unwrap_or_default(),
                    ),
                    (None, None) => None,
                };
                if let (Some(folders), Some(running)) = (folders, self.host.server(server)) {
                    if running.replace_roots(folders) {
                        told.push(server.clone());
                    }
                }
            }
            !loans.is_empty()
        });
        told
    }

    /// The folders a run lends `server` now, if one does: what it starts with, and keeps while
    /// its own are changed.
    pub(super) fn lent_roots(&self, server: &str) -> Option<Vec<PathBuf>> {
        self.root_loans
            .lock()
            .get(server)
            .and_then(|loans| loans.last())
            .map(|(_, folders)| folders.clone())
    }

    /// Gives `server` its own `folders` (just written to mcp.json) unless a run lends it some,
    /// decided and set under the loans' lock; whether it is to be told.
    pub(super) fn own_roots_changed(&self, server: &str, folders: Vec<PathBuf>) -> bool {
        let lent = self.root_loans.lock();
        if lent.get(server).is_some_and(|loans| !loans.is_empty()) {
            return false;
        }
        self.host
            .server(server)
            .is_some_and(|running| running.replace_roots(folders))
    }

    /// Tells each of `servers` that still runs that its roots changed.
    pub(super) async fn tell_roots_changed(&self, servers: Vec<String>) {
        for server in servers {
            if let Some(running) = self.host.server(&server) {
                if let Err(e) = running.notify_roots_changed().await {
                    tracing::warn!(server, error = %e, "a server was not told its folders changed");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_folders;

    #[test]
    fn folders_are_absolute_existing_folders_each_kept_once() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().display().to_string();
        let check = |roots: &[String]| check_folders(roots, &[], "roots", 20);
        let kept = check(&[format!("{text}/"), text.clone(), " ".into()]).unwrap();
        assert_eq!(kept, std::slice::from_ref(&text));
        // A name's spaces are its own: a folder's name may end in one.
        assert!(check(&[format!("{text} ")]).is_err());
        let refused = |roots: &[String]| check(roots).unwrap_err().message;
        assert!(refused(&["relative/path".into()]).contains("not an absolute path"));
        assert!(refused(&["/no/such/folder".into()]).contains("is not a folder"));
        assert!(refused(&[format!("{text}\u{1b}[31m")]).contains("control character"));
        let many: Vec<String> = (0..21)
            .map(|i| {
                let sub = dir.path().join(i.to_string());
                std::fs::create_dir(&sub).unwrap();
                sub.display().to_string()
            })
            .collect();
        assert!(refused(&many).contains("at most 20 folders"));
        assert_eq!(
            check_folders(&["/nowhere/x".into()], &[], "folders", 5)
                .unwrap_err()
                .field,
            "folders"
        );
        // What was kept before passes as it is, gone or not, and a long list can shrink.
        let gone = "/nowhere/gone".to_owned();
        let had = vec![gone.clone(), text.clone(), "/b".into()];
        assert_eq!(
            check_folders(&[gone.clone(), text.clone()], &had, "roots", 1).unwrap(),
            [gone.clone(), text.clone()]
        );
        assert!(check_folders(
            &[gone.clone(), text.clone(), "/tmp".into()],
            &had[..1],
            "roots",
            2
        )
        .is_err());
        // Found however it was written ("~/x/" kept is "/home/…/x" given back), and kept as
        // it was written.
        if let Some(home) = dirs::home_dir() {
            let written = vec!["~/no-such-folder-here/".to_owned()];
            let given = vec![home.join("no-such-folder-here").display().to_string()];
            assert_eq!(
                check_folders(&given, &written, "roots", 20).unwrap(),
                written
            );
        }
        // One folder written two ways counts once.
        assert_eq!(
            check_folders(&[format!("{text}/"), text.clone()], &[], "roots", 1).unwrap(),
            std::slice::from_ref(&text)
        );
        // Of a list longer than the most, one may only take folders away.
        assert!(check_folders(&[gone.clone(), text.clone()], &had, "roots", 1).is_ok());
        assert!(check_folders(&[gone, "/tmp".into()], &had, "roots", 1).is_err());
    }
}
