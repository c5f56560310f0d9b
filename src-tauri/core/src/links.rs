//! The one way out of the window: a link from a conversation opens in the person's browser (or
//! mail program) only if it is `https:`, `http:` or `mailto:`, and only after they saw the
//! whole address, its host as the URL parser spells it (a look-alike internationalised name in
//! its `xn--` form), and said yes outside the webview.

use crate::error::{CoreError, InvalidInput};
use crate::policy::confirm::{Allowance, Confirm};

/// The longest address that is opened, as it will be opened (percent-encoded): as long as the
/// confirmation shows whole, so that no character of one is opened unseen.
const MAX_CHARS: usize = crate::policy::confirm::SHOWN_ADDRESS_CHARS;

/// `raw` as it will be opened, or why it will not be.
///
/// # Errors
/// [`InvalidInput`] on field `url`: not an address, too long, another scheme, no host.
pub fn openable(raw: &str) -> Result<String, InvalidInput> {
    let refuse = |why: &str| InvalidInput::new("url", format!("This link is not opened: {why}."));
    if raw.chars().count() > MAX_CHARS {
        return Err(refuse("it is too long"));
    }
    let parsed = url::Url::parse(raw.trim()).map_err(|_| refuse("it is not a valid address"))?;
    match parsed.scheme() {
        "https" | "http" if parsed.host_str().is_some_and(|h| !h.is_empty()) => {}
        "https" | "http" => return Err(refuse("it names no host")),
        "mailto" if parsed.path().contains('@') => {}
        "mailto" => return Err(refuse("it names no address to write to")),
        _ => return Err(refuse("only https:, http: and mailto: links open")),
    }
    let url = parsed.to_string();
    if url.chars().count() > MAX_CHARS {
        return Err(refuse("it is too long"));
    }
    Ok(url)
}

/// Asks `confirm` about `raw` as it will be opened, and if the person says yes, opens it with
/// `open`. `Ok(false)` when they said no.
///
/// # Errors
/// A link that may not be opened ([`openable`]); `open` failed.
pub async fn open(
    raw: &str,
    confirm: &dyn Confirm,
    open: &(dyn Fn(&str) -> std::io::Result<()> + Sync),
) -> Result<bool, CoreError> {
    let url = openable(raw)?;
    if !confirm
        .allow(&Allowance::OpenLink { url: url.clone() })
        .await
    {
        return Ok(false);
    }
    open(&url).map_err(|e| CoreError::Io {
        what: "the browser".into(),
        detail: e.to_string(),
    })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_and_mail_links_with_somewhere_to_go_open() {
        for refused in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "data:text/html,<script>1</script>",
            "search-ms:query=x",
            "ms-settings:privacy",
            "vscode://ext/install",
            "tauri://localhost/index.html",
            "ftp://example.com/x",
            "mailto:",
            "https://",
            "not a link",
        ] {
            assert!(openable(refused).is_err(), "{refused}");
        }
        assert_eq!(
            openable("https://example.com/a b").unwrap(),
            "https://example.com/a%20b"
        );
        assert_eq!(
            openable("mailto:me@example.com").unwrap(),
            "mailto:me@example.com"
        );
    }

    #[test]
    fn every_character_of_an_address_that_opens_is_shown_before_it_opens() {
        let longest = format!("https://example.com/{}", "a".repeat(MAX_CHARS - 20));
        assert_eq!(longest.chars().count(), MAX_CHARS);
        let url = openable(&longest).unwrap();
        let text = Allowance::OpenLink { url: url.clone() }.message();
        assert!(text.contains(&url), "the whole address is in the question");
        assert!(openable(&format!("{longest}a")).is_err());
        // Short as typed, too long once encoded: measured as it would be opened.
        let spaced = format!("https://example.com/{}x", " ".repeat(MAX_CHARS / 2));
        assert!(spaced.chars().count() < MAX_CHARS);
        assert!(openable(&spaced).is_err());
    }

    #[test]
    fn a_look_alike_host_is_shown_in_its_xn_form() {
        // "exаmple.com" with a Cyrillic "а".
        let url = openable("https://ex\u{430}mple.com/login").unwrap();
        assert!(url.starts_with("https://xn--"), "{url}");
        let title = Allowance::OpenLink { url }.title();
        assert!(title.contains("xn--"), "{title}");
    }
}
