//! A project's folders lent to the servers its turns use (issue 62). MCP servers run once for
//! every conversation, so a project's folders cannot be theirs for good: while a turn in the
//! project runs, each server it offers is told the project's folders as its roots
//! (`notifications/roots/list_changed`), and when the turn ends the server gets back what it
//! had: the folders of a turn still running that lent it some, else its own from mcp.json.
//! Two projects' turns on one server at once: the server sees the later one's folders; what
//! keeps each turn to its own is the call check, which judges a path argument against the
//! turn's project folders whatever the server was told.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::App;

/// The folders lent to each server, in the order they were lent, by run.
#[derive(Default)]
pub(super) struct RootLoans {
    lent: Mutex<HashMap<String, Vec<(String, Vec<PathBuf>)>>>,
}

impl RootLoans {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<(String, Vec<PathBuf>)>>> {
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
        .filter_map(|raw| match raw.strip_prefix("~/") {
            Some(rest) => dirs::home_dir().map(|home| home.join(rest)),
            None => Some(PathBuf::from(raw)),
        })
        .filter(|path| path.is_absolute())
        .collect()
}

impl App {
    /// Runs a turn ([`crate::agent::run`]) with its project's folders lent to the servers it
    /// offers while it lasts.
    pub(super) async fn run_lending_roots(
        &self,
        setup: crate::agent::RunSetup,
        services: crate::agent::RunServices<'_>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> crate::events::StopReason {
        let run_id = setup.run_id.clone();
        let mut servers: Vec<String> = setup.tools.iter().map(|t| t.server.clone()).collect();
        servers.sort_unstable();
        servers.dedup();
        self.lend_roots(&run_id, &servers, &setup.project_roots)
            .await;
        let reason = crate::agent::run(setup, services, cancel).await;
        self.return_roots(&run_id).await;
        reason
    }

    /// Tells each of `servers` that runs that its roots are `folders` while the run `run_id`
    /// lasts. Nothing when there are no folders.
    pub(super) async fn lend_roots(&self, run_id: &str, servers: &[String], folders: &[PathBuf]) {
        if folders.is_empty() {
            return;
        }
        {
            let mut lent = self.root_loans.lock();
            for server in servers {
                lent.entry(server.clone())
                    .or_default()
                    .push((run_id.to_owned(), folders.to_vec()));
            }
        }
        for server in servers {
            self.tell_roots(server, folders.to_vec()).await;
        }
    }

    /// Takes back what the run `run_id` lent: each server gets the folders of the latest run
    /// still lending it some, else its own.
    pub(super) async fn return_roots(&self, run_id: &str) {
        let back: Vec<(String, Option<Vec<PathBuf>>)> = {
            let mut lent = self.root_loans.lock();
            let mut back = Vec::new();
            lent.retain(|server, loans| {
                let before = loans.len();
                loans.retain(|(run, _)| run != run_id);
                if loans.len() != before {
                    back.push((server.clone(), loans.last().map(|(_, f)| f.clone())));
                }
                !loans.is_empty()
            });
            back
        };
        for (server, folders) in back {
            let folders = match folders {
                Some(folders) => folders,
                None => self.own_roots(&server),
            };
            self.tell_roots(&server, folders).await;
        }
    }

    /// The folders mcp.json gives `server`.
    fn own_roots(&self, server: &str) -> Vec<PathBuf> {
        self.load_mcp()
            .ok()
            .and_then(|file| file.servers.get(server).map(|e| e.root_folders()))
            .unwrap_or_default()
    }

    async fn tell_roots(&self, server: &str, folders: Vec<PathBuf>) {
        if let Some(running) = self.host.server(server) {
            if let Err(e) = running.set_roots(folders).await {
                tracing::warn!(server, error = %e, "a server was not told its folders");
            }
        }
    }
}
