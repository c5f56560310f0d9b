//! Desktop notifications: a scheduled run that finished, failed, or waits for the person's
//! approval says so, whether the window or the command line ran it. Sent off the runtime and
//! never waited for; a desktop with no notification service logs why and goes on. Title and
//! body are plain text (the freedesktop service may read markup, so `<`, `>` and `&` are
//! written as entities, and nothing a model said can make a link). Keys are hidden by the
//! caller, which knows them (`App::notify` scrubs with the keychain's values and key shapes).

/// How much of a body is sent.
const MAX_BODY_CHARS: usize = 300;

/// Shows a notification from Switchboard.
pub fn desktop(title: &str, body: &str) {
    let title = crate::text::one_line(title, 120);
    let body = crate::text::one_line(body, MAX_BODY_CHARS);
    // The summary is plain text everywhere; only the body may be read as markup.
    let body = plain(&body);
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
