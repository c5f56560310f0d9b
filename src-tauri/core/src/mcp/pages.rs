//! Which pages a server may send the person to (an OAuth sign-in page, a URL-mode elicitation):
//! `https:`, or `http:` on this computer's loopback. Every such address is checked here before
//! Rust opens it; the window never opens one itself.

/// Whether a page a server names for the person to visit (an OAuth sign-in page, a URL-mode
/// elicitation) may be opened: `https:`, or `http:` on this computer's loopback only. Anything
/// else (`file:`, `search-ms:`, `ms-settings:`, a custom app's scheme, plain http across a
/// network) is refused, so a hostile server cannot start a program or open a local file
/// through the browser.
///
/// # Errors
/// Why the address is refused ("is not an https:// address"), to follow its quoted address.
pub fn secure_or_loopback(url: &str) -> Result<(), &'static str> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Err("is not a valid address");
    };
    let loopback = match parsed.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match parsed.scheme() {
        "https" if parsed.host().is_some() => Ok(()),
        "http" if loopback => Ok(()),
        "http" => Err("is plain http:// on another computer"),
        _ => Err("is not an https:// address"),
    }
}
