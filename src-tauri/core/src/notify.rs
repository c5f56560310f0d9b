//! Desktop notifications: a scheduled run that finished, failed, or waits for the person's
//! approval says so, whether the window or the command line ran it. Sent off the runtime and
//! never waited for; a desktop with no notification service logs why and goes on. Title and
//! body are plain text (the freedesktop service may read markup, so `<`, `>` and `&` are
//! written as entities, and nothing a model said can make a link). Keys are hidden before the
//! text is cut to length, so none shows in part.

/// How much of a body is sent.
const MAX_BODY_CHARS: usize = 300;

/// Shows a notification from Switchboard, with any key it holds hidden by `secrets` (the
/// values the keychain gave this run, and key shapes).
pub fn desktop(title: &str, body: &str, secrets: &dyn crate::secrets::SecretStore) {
    let (title, body) = shown(title, body, secrets);
    std::thread::spawn(move || {
        let shown = notify_rust::Notification::new()
            .appname("Switchboard")
            .summary(&title)
            .body(&body)
            .show();
        if let Err(e) = shown {
            tracing::info!(error = %e, %title, "no desktop notification");
        }
    });
}

/// The title and body as shown: keys hidden first, then each cut to one line of its length,
/// so no key is shown in part; the body as plain text.
fn shown(title: &str, body: &str, secrets: &dyn crate::secrets::SecretStore) -> (String, String) {
    let title = crate::text::one_line(&secrets.scrub(title), 120);
    let body = crate::text::one_line(&secrets.scrub(body), MAX_BODY_CHARS);
    // The summary is plain text everywhere; only the body may be read as markup.
    (title, plain(&body))
}

/// `text` with the characters markup reads written as entities (on the freedesktop service,
/// which may read a body as markup); elsewhere as it is.
fn plain(text: &str) -> String {
    if cfg!(all(unix, not(target_os = "macos"))) {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use secrecy::SecretString;

    use crate::secrets::{Masking, MemoryStore, SecretStore};

    #[test]
    fn a_key_is_hidden_whole_even_where_the_text_is_cut() {
        let secrets = Masking::new(MemoryStore::new(), crate::logging::Masks::default());
        let key = "plainvalue-0123456789abcdef";
        secrets
            .set("mcp:docs:TOKEN", &SecretString::from(key))
            .unwrap();
        // The key begins just before the body's cut and ends after it.
        let body = format!("{}{key} and more", "x".repeat(super::MAX_BODY_CHARS - 5));
        let (title, shown) = super::shown(&format!("“{key}” failed"), &body, &secrets);
        assert_eq!(title, "“[redacted]” failed");
        // Cut first, the key's first characters would show.
        assert!(shown.contains("[red") && !shown.contains("pla"), "{shown}");
    }

    #[test]
    fn markup_is_written_as_text() {
        if cfg!(all(unix, not(target_os = "macos"))) {
            assert_eq!(
                super::plain("<a href=x>&</a>"),
                "&lt;a href=x&gt;&amp;&lt;/a&gt;"
            );
        }
    }
}
