//! The one place HTTP clients are made (model providers, remote MCP servers): TLS by rustls on
//! the `ring` provider, checked against the operating system's trust store (so a company's own
//! certificate authority works as it does in the browser), and our user agent.
//!
//! rustls needs a crypto provider; reqwest asks for the process's default one, which
//! [`client_builder`] installs (once, idempotently) before any client is built. Nothing else
//! in the app installs or reads it.

/// The user agent every request carries.
pub const USER_AGENT: &str = concat!("Switchboard/", env!("CARGO_PKG_VERSION"));

/// A client builder with TLS ready and our user agent; callers add their timeouts.
pub fn client_builder() -> reqwest::ClientBuilder {
    // Fails only when a provider is already installed, which is what we want either way.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().user_agent(USER_AGENT)
}

/// What went wrong reaching a server, for a person: the kind of failure, where (scheme,
/// host and port only: some hosts take a key in the query), and the lowest cause the operating
/// system gave ("Connection refused (os error 111)").
pub fn describe_error(e: &reqwest::Error) -> String {
    let place = e
        .url()
        .and_then(|u| {
            let host = u.host_str()?;
            Some(match u.port_or_known_default() {
                Some(port) => format!(" at {host}:{port}"),
                None => format!(" at {host}"),
            })
        })
        .unwrap_or_default();
    let mut cause = None;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = Some(s.to_string());
        source = s.source();
    }
    let what = if e.is_timeout() {
        "no answer in time"
    } else if e.is_connect() {
        "cannot connect"
    } else if e.is_body() || e.is_decode() {
        "the answer broke off"
    } else {
        "the request failed"
    };
    match cause {
        Some(cause) => format!("{what}{place} ({cause})"),
        None => format!("{what}{place}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clients_build_with_tls_whatever_the_order() {
        super::client_builder().build().expect("first client");
        super::client_builder()
            .https_only(true)
            .build()
            .expect("second client");
    }
}
