//! The one place HTTP clients are made (model providers, remote MCP servers), and where
//! server-sent events are read from their responses: TLS by rustls on
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
    install_crypto_provider();
    reqwest::Client::builder().user_agent(USER_AGENT)
}

/// The most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 10;

/// Whether a redirect stays on the origin (scheme, host and port) its request was first sent
/// to: only then may what the request carries for that server (a key, a configured header)
/// go along.
pub fn same_origin(attempt: &reqwest::redirect::Attempt<'_>) -> bool {
    attempt
        .previous()
        .first()
        .is_some_and(|first| first.origin() == attempt.url().origin())
}

/// Whether two addresses have one origin (scheme, host and port); an address that does not
/// parse has none.
#[must_use]
pub fn same_origin_urls(a: &str, b: &str) -> bool {
    match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin().is_tuple() && a.origin() == b.origin(),
        _ => false,
    }
}

/// A redirect to another origin, refused. `to` is where it pointed: scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "it redirected to another address ({to}), where Switchboard sends nothing meant for this one"
)]
pub struct CrossOriginRedirect {
    pub to: String,
}

/// The redirects of a client whose requests carry a key (a model provider's): one that stays
/// on the origin is followed with every header; one to another origin fails the request with
/// [`CrossOriginRedirect`] (reqwest itself drops only `Authorization` across hosts, not
/// `x-api-key` or `x-goog-api-key`).
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        if !same_origin(&attempt) {
            let to = attempt.url().origin().ascii_serialization();
            attempt.error(CrossOriginRedirect { to })
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// The [`CrossOriginRedirect`] a request failed with, if that is why.
pub fn cross_origin_redirect(e: &reqwest::Error) -> Option<&CrossOriginRedirect> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(ours) = s.downcast_ref::<CrossOriginRedirect>() {
            return Some(ours);
        }
        source = s.source();
    }
    None
}

/// Whether `url`'s host is this computer or a private network: `localhost` (and names under
/// it), a loopback address, a private IPv4 range (10/8, 172.16/12, 192.168/16), a link-local
/// address, or an IPv6 unique local one (fc00::/7). Only there may a key travel over plain
/// `http:`. Any other name is not known to be local without asking DNS, so it is not.
pub fn is_local_address(url: &url::Url) -> bool {
    use std::net::Ipv4Addr;
    let v4 = |ip: Ipv4Addr| ip.is_loopback() || ip.is_private() || ip.is_link_local();
    match url.host() {
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => v4(ip),
        Some(url::Host::Ipv6(ip)) => {
            let first = ip.segments()[0];
            ip.is_loopback()
                || first & 0xfe00 == 0xfc00
                || first & 0xffc0 == 0xfe80
                || ip.to_ipv4_mapped().is_some_and(v4)
        }
        None => false,
    }
}

/// [`is_local_address`], or a name that only a local network resolves: one without a dot (a
/// host on the LAN, a compose service) or under `.local`, `.lan`, `.internal` or `.home.arpa`.
/// For a server of the person's own; a public name over plain `http:` is not.
pub fn is_local_network_name(url: &url::Url) -> bool {
    is_local_address(url)
        || matches!(url.host(), Some(url::Host::Domain(name)) if {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            !name.contains('.')
                || [".local", ".lan", ".internal", ".home.arpa"]
                    .iter()
                    .any(|tail| name.ends_with(tail))
        })
}

/// Makes `ring` the process's TLS provider, for clients built elsewhere (rmcp's OAuth client).
pub fn install_crypto_provider() {
    // Fails only when a provider is already installed, which is what we want either way.
    let _ = rustls::crypto::ring::default_provider().install_default();
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

/// The server-sent events of a response, parsed by sse-stream (each byte read once, so a long
/// event costs linear time). An event longer than `max_event` bytes ends the stream with an
/// error instead of being buffered. Errors arrive as text for a person: what failed and where,
/// never the URL's path or query.
pub fn sse_events(
    response: reqwest::Response,
    max_event: usize,
) -> impl futures_util::Stream<Item = Result<sse_stream::Sse, String>> + Send {
    use futures_util::StreamExt;
    sse_stream::SseStream::from_bytes_stream(capped(response.bytes_stream(), max_event)).map(|r| {
        r.map_err(|e| match e {
            sse_stream::Error::Body(inner) => match inner.downcast_ref::<ReadError>() {
                Some(ours) => ours.to_string(),
                None => inner.to_string(),
            },
            other => format!("the event stream is malformed ({other})"),
        })
    })
}

/// Why reading a response body failed: the network, or an event over the cap.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("no data arrived before the read timeout")]
    Timeout,
    #[error("{0}")]
    Http(String),
    #[error("the server sent a single event longer than {} MiB", .0 / (1024 * 1024))]
    TooLong(usize),
}

/// `bytes`, failing once more than `cap` bytes arrive without a blank line (the end of an
/// event).
fn capped<B: AsRef<[u8]>>(
    bytes: impl futures_util::Stream<Item = Result<B, reqwest::Error>>,
    cap: usize,
) -> impl futures_util::Stream<Item = Result<B, ReadError>> {
    use futures_util::StreamExt;
    let (mut since_end, mut last) = (0usize, 0u8);
    bytes.map(move |chunk| {
        let chunk = chunk.map_err(|e| {
            if e.is_timeout() {
                ReadError::Timeout
            } else {
                ReadError::Http(describe_error(&e))
            }
        })?;
        for &byte in chunk.as_ref().iter().filter(|&&b| b != b'\r') {
            since_end = if byte == b'\n' && last == b'\n' {
                0
            } else {
                since_end + 1
            };
            last = byte;
        }
        if since_end > cap {
            return Err(ReadError::TooLong(cap));
        }
        Ok(chunk)
    })
}

/// A loopback port where nothing listens, and nothing will while the returned socket lives: it
/// is bound but not listening, so connections to it are refused. (A port probed free and then
/// let go can be taken by a parallel test before the check that expects a refusal.)
#[cfg(test)]
pub(crate) fn refused_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_this_computer_and_private_networks_are_local() {
        for local in [
            "http://127.0.0.1:11434",
            "http://127.8.9.10",
            "http://localhost:8080/v1",
            "http://LOCALHOST./v1",
            "http://ollama.localhost",
            "http://10.0.0.5",
            "http://172.16.1.1",
            "http://172.31.255.255",
            "http://192.168.1.20:1234/v1",
            "http://169.254.10.10",
            "http://[::1]:8000",
            "http://[fd12:3456::1]",
            "http://[fe80::1]",
            "http://[::ffff:192.168.0.1]",
        ] {
            assert!(super::is_local_address(&local.parse().unwrap()), "{local}");
        }
        for remote in [
            "http://api.openai.com/v1",
            "http://8.8.8.8",
            "http://172.32.0.1",
            "http://100.64.0.1",
            "http://[2001:db8::1]",
            "http://[::ffff:8.8.8.8]",
            "http://localhost.example.com",
            "http://ollama",
        ] {
            assert!(
                !super::is_local_address(&remote.parse().unwrap()),
                "{remote}"
            );
        }
    }

    #[test]
    fn clients_build_with_tls_whatever_the_order() {
        super::client_builder().build().expect("first client");
        super::client_builder()
            .https_only(true)
            .build()
            .expect("second client");
    }
}
