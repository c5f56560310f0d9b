//! A 2026-07-28 server's news of change. That protocol sends no notification outside a
//! request: a client that wants to hear that the tools, prompts or resources changed opens a
//! `subscriptions/listen` stream and keeps it open. This follows one for each modern server,
//! for what its capabilities say it announces, and counts what arrives in the same
//! [`Changes`] a 2025-11-25 connection's notifications are counted in. A stream the server
//! ends is opened again after a pause, while the connection stands.

use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient};

use super::client::Changes;

/// The longest pause between a stream that ended and the next.
const MOST_PAUSE: Duration = Duration::from_secs(30);

/// Whether the connection speaks a protocol without `initialize`, where changes are heard
/// only on a `subscriptions/listen` stream.
pub(crate) fn is_modern(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| !info.protocol_version.has_initialize())
}

/// What to ask for: the lists the server says it announces changes to (none: no stream).
fn filter(peer: &Peer<RoleClient>) -> Option<SubscriptionFilter> {
    let info = peer.peer_info()?;
    let caps = &info.capabilities;
    let mut filter = SubscriptionFilter::builder();
    let mut any = false;
    if caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true) {
        filter = filter.tools_list_changed();
        any = true;
    }
    if caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true) {
        filter = filter.prompts_list_changed();
        any = true;
    }
    if caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true) {
        filter = filter.resources_list_changed();
        any = true;
    }
    any.then(|| filter.build())
}

/// Follows the server's changes until `ended` fires (the connection closed).
pub(crate) async fn follow(
    server: String,
    peer: Peer<RoleClient>,
    changes: Changes,
    ended: tokio_util::sync::CancellationToken,
) {
    let Some(wanted) = filter(&peer) else {
        return;
    };
    let mut pause = Duration::from_millis(250);
    for round in 0u64.. {
        if round > 0 {
            // What changed while no stream was open went unheard: read the lists again.
            changes.tools();
            changes.offers();
        }
        let heard = tokio::select! {
            () = ended.cancelled() => return,
            heard = listen_once(&peer, wanted.clone(), &changes) => heard,
        };
        match heard {
            // A stream that carried news and ended is opened again at once.
            Ok(true) => pause = Duration::from_millis(250),
            Ok(false) => {}
            // The server refused the stream (it does not offer `subscriptions/listen`): asking
            // again would only be refused again.
            Err(rmcp::service::ServiceError::McpError(e)) => {
                tracing::info!(server = %server, error = %e, "a server refused its change stream; its changes are not heard");
                return;
            }
            Err(e) => {
                tracing::debug!(server = %server, error = %e, "a server's change stream failed");
            }
        }
        tokio::select! {
            () = ended.cancelled() => return,
            () = tokio::time::sleep(pause) => {}
        }
        pause = (pause * 2).min(MOST_PAUSE);
    }
}

/// One stream, until it ends: whether it carried anything.
async fn listen_once(
    peer: &Peer<RoleClient>,
    wanted: SubscriptionFilter,
    changes: &Changes,
) -> Result<bool, rmcp::service::ServiceError> {
    let mut stream = peer.listen(wanted).await?;
    let mut carried = false;
    while let Some(notification) = stream.next().await? {
        carried = true;
        match notification {
            ServerNotification::ToolListChangedNotification(_) => changes.tools(),
            ServerNotification::PromptListChangedNotification(_)
            | ServerNotification::ResourceListChangedNotification(_)
            | ServerNotification::ResourceUpdatedNotification(_) => changes.offers(),
            _ => {}
        }
    }
    Ok(carried)
}
