//! Servers proposed by `switchboard://` links (the app started with one, or a later start
//! handing one over): kept until the window is there to show them, shown to it by token, and
//! — only when the person asks, from the window — an entry added unapproved and put to the
//! native approval dialog. A link never adds or starts anything by itself.

use std::sync::Mutex;

use super::App;
use crate::app::McpServerView;
use crate::error::CoreError;
use crate::mcp::proposal::{self, Proposal, ShownProposal};
use crate::policy::confirm::Confirm;

/// How many proposals are kept at once (a flood of links forgets the oldest).
const KEPT: usize = 16;

type Listener = Box<dyn Fn(ShownProposal) -> bool + Send + Sync>;

pub(super) struct Proposals {
    kept: super::kept::Kept<Proposal>,
    /// Not shown yet: no window listened when they came.
    waiting: Mutex<Vec<ShownProposal>>,
    listener: Mutex<Option<Listener>>,
}

impl Default for Proposals {
    fn default() -> Self {
        Self {
            kept: super::kept::Kept::new(KEPT),
            waiting: Mutex::default(),
            listener: Mutex::default(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl App {
    /// Reads `link` and shows what it proposes to the window (now, or when it next listens).
    ///
    /// # Errors
    /// [`CoreError::Invalid`] on field `link` when it proposes nothing.
    pub fn propose(&self, link: &str) -> Result<ShownProposal, CoreError> {
        let proposal = match proposal::parse(link) {
            Ok(proposal) => proposal,
            Err(e) => {
                // Said to the window too: the person clicked a link and should hear why
                // nothing came of it.
                tracing::info!("a link was refused: {e}");
                self.show_proposal(ShownProposal::Refused {
                    token: uuid::Uuid::new_v4().to_string(),
                    reason: e.to_string(),
                });
                return Err(crate::input::InvalidInput::new("link", e.to_string()).into());
            }
        };
        let token = self.proposals.kept.keep(proposal.clone());
        let shown = proposal.shown(token);
        tracing::info!("a link proposed an MCP server");
        self.show_proposal(shown.clone());
        Ok(shown)
    }

    /// Sends `shown` to the window now, or keeps it for when it listens.
    fn show_proposal(&self, shown: ShownProposal) {
        // Under the listener's lock, so a window starting to listen meanwhile misses nothing.
        let listener = lock(&self.proposals.listener);
        if !listener.as_ref().is_some_and(|send| send(shown.clone())) {
            let mut waiting = lock(&self.proposals.waiting);
            if waiting.len() >= KEPT {
                waiting.remove(0);
            }
            waiting.push(shown);
        }
    }

    /// The window listens for proposals: those that came before it are sent at once; a later
    /// call replaces the listener (a reloaded window).
    pub fn watch_proposals(&self, send: impl Fn(ShownProposal) -> bool + Send + Sync + 'static) {
        let mut listener = lock(&self.proposals.listener);
        let waiting = std::mem::take(&mut *lock(&self.proposals.waiting));
        let mut missed = Vec::new();
        for shown in waiting {
            if !send(shown.clone()) {
                missed.push(shown);
            }
        }
        lock(&self.proposals.waiting).extend(missed);
        *listener = Some(Box::new(send));
    }

    /// Adds the server the link under `token` proposed as an entry, not approved, and asks
    /// `confirm` about it as it now is (the full command line); the token is spent. A
    /// registry proposal is installed from Browse instead.
    ///
    /// # Errors
    /// [`CoreError::NotFound`] for a token not kept or not an entry; as
    /// [`App::add_typed_server`].
    pub async fn accept_proposal(
        &self,
        token: &str,
        confirm: &dyn Confirm,
    ) -> Result<McpServerView, CoreError> {
        let taken = self
            .proposals
            .kept
            .take_if(token, |p| matches!(p, Proposal::Entry { .. }));
        let Some((name, plan)) = taken.and_then(Proposal::into_plan) else {
            return Err(CoreError::NotFound {
                what: "that proposed server (open its link again)".to_owned(),
            });
        };
        let view = self.mcp_install(&name, plan).await?;
        self.ask_about_changed(view.name, confirm).await
    }
}
