//! The proxy a server with a list of hosts reaches the network through: one per start,
//! listening on 127.0.0.1 at a port the system chose, the only TCP port the sandbox lets the
//! server connect to. It answers `CONNECT host:port` (HTTPS and any other TLS) and plain
//! `GET http://…` requests, opens what its [`HostList`] lists and refuses the rest with a 403
//! whose words say why; each refusal is put on the server's card as it happens ("connect
//! evil.example:443"), exactly, unlike what a refused file leaves. It reads no traffic past
//! the request head and changes none: TLS stays between the server and the host.
//!
//! The request head is parsed by `httparse`; what follows is copied both ways by tokio.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::hosts::HostList;
use super::Refusals;

/// The longest request head read (a longer one is refused).
const MAX_HEAD: usize = 32 * 1024;
/// How long a client has to send its request head, and a host to take the connection.
const WAIT: Duration = Duration::from_secs(30);
/// The most connections through one proxy at once: a server that opens more has the rest
/// closed at once, so it cannot use up Switchboard's own files.
pub const MAX_CONNECTIONS: usize = 128;

/// A running proxy; it stops, with every connection through it, when this is dropped.
#[derive(Debug)]
pub struct Proxy {
    port: u16,
    _stop: DropGuard,
}

impl Proxy {
    /// Starts a proxy for `list` on 127.0.0.1, noting what it refuses in `refusals`.
    ///
    /// # Errors
    /// It could not listen.
    pub async fn start(list: HostList, refusals: Arc<Refusals>) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await?;
        Self::serve(listener, list, refusals)
    }

    /// A proxy for `list` accepting on `listener` (one a sandboxed server made inside its own
    /// network and handed over), noting what it refuses in `refusals`.
    ///
    /// # Errors
    /// The socket is not a listening one.
    pub fn on(
        listener: std::net::TcpListener,
        list: HostList,
        refusals: Arc<Refusals>,
    ) -> std::io::Result<Proxy> {
        listener.set_nonblocking(true)?;
        Self::serve(TcpListener::from_std(listener)?, list, refusals)
    }

    fn serve(
        listener: TcpListener,
        list: HostList,
        refusals: Arc<Refusals>,
    ) -> std::io::Result<Proxy> {
        let port = listener.local_addr()?.port();
        let stop = CancellationToken::new();
        let list = Arc::new(list);
        let running = stop.clone();
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    () = running.cancelled() => return,
                    accepted = listener.accept() => accepted,
                };
                let Ok((client, _)) = accepted else {
                    continue;
                };
                let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                    drop(client);
                    continue;
                };
                let (list, refusals, running) =
                    (Arc::clone(&list), Arc::clone(&refusals), running.clone());
                tokio::spawn(async move {
                    let _slot = slot;
                    tokio::select! {
                        () = running.cancelled() => {}
                        () = serve(client, &list, &refusals) => {}
                    }
                });
            }
        });
        Ok(Proxy {
            port,
            _stop: stop.drop_guard(),
        })
    }

    /// The port it listens on, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The environment that sends a server's programs through it: the variables Python, Go,
    /// curl, uv, pip and Rust read, npm's own, and Node's (22 and newer, with
    /// `NODE_USE_ENV_PROXY`). Nothing is exempt from it: `NO_PROXY` is emptied.
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        environment(self.port)
    }
}

/// The environment that sends a server's programs through a proxy at 127.0.0.1:`port`: see
/// [`Proxy::environment`].
pub fn environment(port: u16) -> Vec<(&'static str, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut env: Vec<(&'static str, String)> = [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        "PIP_PROXY",
        "GLOBAL_AGENT_HTTP_PROXY",
    ]
    .into_iter()
    .map(|name| (name, url.clone()))
    .collect();
    env.extend(
        ["NO_PROXY", "no_proxy", "npm_config_noproxy"]
            .into_iter()
            .map(|name| (name, String::new())),
    );
    env.push(("NODE_USE_ENV_PROXY", "1".to_owned()));
    env
}

/// The host and port of `authority` (`host:port`, `[v6]:port`), `default` when it has none.
fn host_and_port(authority: &str, default: u16) -> Option<(String, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default,
        };
        return Some((host.to_owned(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_owned(), port.parse().ok()?)),
        None => Some((authority.to_owned(), default)),
    }
}

/// What a request head asks: where to, and for plain HTTP the head to send on.
struct Asked {
    host: String,
    port: u16,
    /// `None` for a tunnel (`CONNECT`).
    forward: Option<Vec<u8>>,
}

/// Reads what `head` asks; `Err` is the status and words to answer with.
fn asked(head: &[u8]) -> Result<Asked, (u16, String)> {
    let mut headers = [httparse::EMPTY_HEADER; 96];
    let mut request = httparse::Request::new(&mut headers);
    let bad = |why: &str| (400, why.to_owned());
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(bad("not an HTTP request")),
    }
    let (Some(method), Some(target)) = (request.method, request.path) else {
        return Err(bad("not an HTTP request"));
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = host_and_port(target, 443).ok_or_else(|| bad("no host:port"))?;
        return Ok(Asked {
            host,
            port,
            forward: None,
        });
    }
    let url = url::Url::parse(target).map_err(|_| bad("a proxy is asked for http://host/…"))?;
    if url.scheme() != "http" {
        return Err(bad("only http:// is forwarded; HTTPS goes by CONNECT"));
    }
    let host = url
        .host_str()
        .ok_or_else(|| bad("no host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = url.port_or_known_default().unwrap_or(80);
    let mut path = url.path().to_owned();
    if let Some(query) = url.query() {
        path.push('?');
        path.push_str(query);
    }
    // The host asked for is the one named to it (the client's own Host could name another
    // site behind the same address).
    let authority = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    };
    let mut forward = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\n").into_bytes();
    for header in request.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if name.starts_with("proxy-")
            || name == "connection"
            || name == "keep-alive"
            || name == "host"
        {
            continue;
        }
        forward.extend_from_slice(header.name.as_bytes());
        forward.extend_from_slice(b": ");
        forward.extend_from_slice(header.value);
        forward.extend_from_slice(b"\r\n");
    }
    // One request per connection: the next may be for another host.
    forward.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Asked {
        host,
        port,
        forward: Some(forward),
    })
}

async fn answer(client: &mut TcpStream, status: u16, words: &str) {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        431 => "Request Header Fields Too Large",
        _ => "Bad Gateway",
    };
    let body = format!("{words}\n");
    let reply = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(reply.as_bytes()).await;
    let _ = client.shutdown().await;
}

/// One connection from the server: its request head read, the host checked against `list`
/// (and, resolved, the address it leads to), then the bytes copied both ways.
async fn serve(mut client: TcpStream, list: &HostList, refusals: &Refusals) {
    let mut head = Vec::with_capacity(2048);
    let end = loop {
        if let Some(at) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if head.len() > MAX_HEAD {
            answer(&mut client, 431, "the request head is too long").await;
            return;
        }
        match tokio::time::timeout(WAIT, client.read_buf(&mut head)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return,
        }
    };
    let asked = match asked(&head[..end]) {
        Ok(asked) => asked,
        Err((status, words)) => {
            answer(&mut client, status, &words).await;
            return;
        }
    };
    // Only a name or an address is asked for (never `*.com`): anything else is not a
    // refusal to put on the card, whose Allow would make it a rule.
    if super::hosts::rule(&asked.host).is_err() || asked.host.starts_with('*') {
        answer(&mut client, 400, "not a host").await;
        return;
    }
    let destination = if asked.host.contains(':') {
        format!("[{}]:{}", asked.host, asked.port)
    } else {
        format!("{}:{}", asked.host, asked.port)
    };
    if !list.lists(&asked.host, asked.port) {
        refusals.record(format!("connect {destination}"));
        answer(
            &mut client,
            403,
            &format!(
                "blocked by the sandbox: {destination} is not on this server's list of \
                 hosts (Switchboard, the server's settings)"
            ),
        )
        .await;
        return;
    }
    let addresses: Vec<SocketAddr> = match tokio::time::timeout(
        WAIT,
        tokio::net::lookup_host((asked.host.as_str(), asked.port)),
    )
    .await
    {
        Ok(Ok(found)) => found.collect(),
        _ => {
            answer(
                &mut client,
                502,
                &format!("{} could not be found", asked.host),
            )
            .await;
            return;
        }
    };
    let reachable: Vec<SocketAddr> = addresses
        .iter()
        .copied()
        .filter(|a| list.reaches(&asked.host, a.ip()))
        .collect();
    if reachable.is_empty() {
        refusals.record(format!("connect {destination}"));
        answer(
            &mut client,
            403,
            &format!(
                "blocked by the sandbox: {destination} leads to this computer (or a \
                 link-local address), which this server may not reach"
            ),
        )
        .await;
        return;
    }
    let mut upstream = None;
    for address in reachable {
        if let Ok(Ok(stream)) = tokio::time::timeout(WAIT, TcpStream::connect(address)).await {
            upstream = Some(stream);
            break;
        }
    }
    let Some(mut upstream) = upstream else {
        answer(&mut client, 502, &format!("{destination} did not answer")).await;
        return;
    };
    let rest = &head[end..];
    let sent = match &asked.forward {
        None => {
            client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await
        }
        Some(forward) => upstream.write_all(forward).await,
    };
    if sent.is_err() || (!rest.is_empty() && upstream.write_all(rest).await.is_err()) {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Network, SandboxPlan};

    fn refusals() -> Arc<Refusals> {
        Arc::new(Refusals::new(SandboxPlan {
            read: Vec::new(),
            write: Vec::new(),
            network: Network::Hosts,
            hosts: Vec::new(),
            loopback: false,
            unix_sockets: false,
            stays_in_group: false,
            private_dir: "/tmp/x".into(),
            home: "/home/a".into(),
        }))
    }

    /// A server on 127.0.0.1 that answers each connection with what it was sent, upper-cased.
    async fn shouting() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let n = s.read(&mut buf).await.unwrap_or(0);
                    let _ = s.write_all(&buf[..n].to_ascii_uppercase()).await;
                });
            }
        });
        port
    }

    async fn through(proxy: u16, request: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut got = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut got)).await;
        String::from_utf8_lossy(&got).into_owned()
    }

    #[tokio::test]
    async fn a_listed_host_is_tunnelled_and_another_refused_on_the_card() {
        let open = shouting().await;
        let closed = shouting().await;
        let refusals = refusals();
        let proxy = Proxy::start(
            HostList::new(&[format!("127.0.0.1:{open}")], false),
            Arc::clone(&refusals),
        )
        .await
        .unwrap();
        let got = through(
            proxy.port(),
            &format!("CONNECT 127.0.0.1:{open} HTTP/1.1\r\nHost: x\r\n\r\nhello"),
        )
        .await;
        assert!(got.starts_with("HTTP/1.1 200"), "{got}");
        assert!(got.ends_with("HELLO"), "{got}");

        let got = through(
            proxy.port(),
            &format!("CONNECT 127.0.0.1:{closed} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(got.starts_with("HTTP/1.1 403"), "{got}");
        assert!(got.contains("blocked by the sandbox"), "{got}");
        // A name that leads here is not its address.
        let got = through(
            proxy.port(),
            &format!("CONNECT localhost:{open} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(got.starts_with("HTTP/1.1 403"), "{got}");
        assert_eq!(
            refusals.seen(),
            vec![
                format!("connect 127.0.0.1:{closed}"),
                format!("connect localhost:{open}")
            ]
        );

        // Plain HTTP is forwarded in origin form, one request to a connection.
        let got = through(
            proxy.port(),
            &format!(
                "GET http://127.0.0.1:{open}/a?b=1 HTTP/1.1\r\nHost: x\r\nProxy-Connection: \
                 keep-alive\r\n\r\n"
            ),
        )
        .await;
        assert!(
            got.starts_with(&format!(
                "GET /A?B=1 HTTP/1.1\r\nHOST: 127.0.0.1:{open}\r\n"
            )),
            "{got}"
        );
        assert!(!got.contains("HOST: X"), "{got}");
        assert!(got.contains("CONNECTION: CLOSE"), "{got}");
        assert!(!got.contains("PROXY-CONNECTION"), "{got}");

        assert!(through(proxy.port(), "nonsense\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 400"));
        // Not a host: not a refusal whose Allow would become a rule.
        let got = through(proxy.port(), "CONNECT *.com:443 HTTP/1.1\r\n\r\n").await;
        assert!(got.starts_with("HTTP/1.1 400"), "{got}");
        assert_eq!(refusals.seen().len(), 2);
        drop(proxy);
    }

    #[tokio::test]
    async fn a_server_that_opens_too_many_connections_has_the_rest_closed() {
        let proxy = Proxy::start(HostList::new(&[], false), refusals())
            .await
            .unwrap();
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            let s = TcpStream::connect(("127.0.0.1", proxy.port()))
                .await
                .unwrap();
            idle.push(s);
        }
        // Each of those waits for its request head; one more is closed without a word.
        let mut extra = TcpStream::connect(("127.0.0.1", proxy.port()))
            .await
            .unwrap();
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), extra.read_to_end(&mut got)).await;
        assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");
        // One let go, a new one is served (once the proxy has seen it go).
        drop(idle.pop());
        let until = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = through(
                proxy.port(),
                "CONNECT elsewhere.example:443 HTTP/1.1\r\n\r\n",
            )
            .await;
            if got.starts_with("HTTP/1.1 403") {
                break;
            }
            assert!(
                std::time::Instant::now() < until,
                "no slot came free: {got:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(idle);
    }

    #[tokio::test]
    async fn with_loopback_on_this_computer_s_ports_are_open_through_it() {
        let open = shouting().await;
        let proxy = Proxy::start(HostList::new(&[], true), refusals())
            .await
            .unwrap();
        let got = through(
            proxy.port(),
            &format!("CONNECT localhost:{open} HTTP/1.1\r\n\r\nhi"),
        )
        .await;
        assert!(got.ends_with("HI"), "{got}");
        let env = proxy.environment();
        assert!(env.contains(&("HTTPS_PROXY", format!("http://127.0.0.1:{}", proxy.port()))));
        assert!(env.contains(&("NO_PROXY", String::new())));
    }
}
