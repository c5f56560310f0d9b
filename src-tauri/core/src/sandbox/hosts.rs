//! A sandbox's list of hosts: what a rule may be (`example.com`, `*.example.com` for its
//! subdomains, either with `:PORT` for that port alone, an IP address), and whether a
//! destination asked of the server's proxy is on the list — and, once its name is resolved,
//! whether the address it leads to may be reached: this computer (loopback), a link-local
//! address (a cloud's metadata service) or the unspecified address only when loopback is on
//! or the rule named that address itself, so a listed name that resolves to 127.0.0.1 does
//! not open this computer's ports.

use std::net::IpAddr;

/// One rule, as written and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    /// Lower case, without a trailing dot; for `*.x`, `x`.
    host: String,
    subdomains: bool,
    port: Option<u16>,
}

/// The hosts a sandboxed server may reach through its proxy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostList {
    rules: Vec<Rule>,
    loopback: bool,
}

/// `text` as a rule written the one way (`*.Example.COM.:443` is `*.example.com:443`).
///
/// # Errors
/// Not a host name, a `*.` name or an IP address, with an optional port; in words.
pub fn rule(text: &str) -> Result<String, String> {
    let parsed = parse(text)?;
    let host = if parsed.host.contains(':') {
        format!("[{}]", parsed.host)
    } else {
        parsed.host.clone()
    };
    let star = if parsed.subdomains { "*." } else { "" };
    Ok(match parsed.port {
        Some(port) => format!("{star}{host}:{port}"),
        None => format!("{star}{host}"),
    })
}

fn parse(text: &str) -> Result<Rule, String> {
    let text = text.trim().to_ascii_lowercase();
    let bad = || {
        format!(
            "“{text}” is not a host: write a name (registry.npmjs.org), a name's subdomains \
             (*.github.com) or an address, each with :PORT if only that port"
        )
    };
    // `[v6]:port`, `[v6]`, a bare v6 address, `host:port`, `host`.
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or_else(bad)?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(bad()),
        };
        (inside.to_owned(), port)
    } else if text.parse::<IpAddr>().is_ok() {
        (text.clone(), None)
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), Some(port)),
            None => (text.clone(), None),
        }
    };
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(bad)?),
        None => None,
    };
    let (host, subdomains) = match host.strip_prefix("*.") {
        Some(rest) => (rest.to_owned(), true),
        None => (host, false),
    };
    let host = host.trim_end_matches('.').to_owned();
    let is_ip = host.parse::<IpAddr>().is_ok();
    let name_ok = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    let fits = if is_ip { !subdomains } else { name_ok };
    if !fits {
        return Err(bad());
    }
    Ok(Rule {
        host,
        subdomains,
        port,
    })
}

/// Whether `host` (as asked) names this computer: `localhost` or a loopback address.
fn names_loopback(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// An address only loopback or its own rule opens: this computer, link-local, unspecified.
fn special(ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    ip.is_loopback()
        || ip.is_unspecified()
        || match ip {
            IpAddr::V4(v4) => v4.is_link_local(),
            IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
        }
}

impl HostList {
    /// The list of `hosts` (rules that do not parse are left out: they were checked when
    /// written), with this computer's own ports open or not.
    pub fn new(hosts: &[String], loopback: bool) -> HostList {
        HostList {
            rules: hosts.iter().filter_map(|h| parse(h).ok()).collect(),
            loopback,
        }
    }

    /// `host` as asked (a name or an address, brackets taken off), lower case and without a
    /// trailing dot.
    fn asked(host: &str) -> String {
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.')
            .to_ascii_lowercase()
    }

    /// Whether `host:port` is on the list (before its name is resolved).
    pub fn lists(&self, host: &str, port: u16) -> bool {
        let host = Self::asked(host);
        if self.loopback && names_loopback(&host) {
            return true;
        }
        self.rules.iter().any(|rule| {
            rule.port.is_none_or(|p| p == port)
                && if rule.subdomains {
                    // A name's subdomains, never an address (`*.0.1` is not 127.0.0.1).
                    host.parse::<IpAddr>().is_err()
                        && host
                            .strip_suffix(&rule.host)
                            .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1)
                } else {
                    host == rule.host
                        || host
                            .parse::<IpAddr>()
                            .ok()
                            .zip(rule.host.parse::<IpAddr>().ok())
                            .is_some_and(|(a, b)| a.to_canonical() == b.to_canonical())
                }
        })
    }

    /// Whether `address`, which the listed `host` resolved to, may be reached: an ordinary
    /// address always; this computer, link-local or unspecified only with loopback on or when
    /// `host` itself named it.
    pub fn reaches(&self, host: &str, address: IpAddr) -> bool {
        if !special(address) {
            return true;
        }
        let host = Self::asked(host);
        let named_itself = host
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.to_canonical() == address.to_canonical());
        named_itself
            || (address.to_canonical().is_loopback() && (self.loopback || names_loopback(&host)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_a_name_its_subdomains_or_an_address_with_a_port_or_not() {
        assert_eq!(rule(" Registry.NPMjs.org. ").unwrap(), "registry.npmjs.org");
        assert_eq!(rule("*.GitHub.com:443").unwrap(), "*.github.com:443");
        assert_eq!(rule("127.0.0.1:8080").unwrap(), "127.0.0.1:8080");
        assert_eq!(rule("::1").unwrap(), "[::1]");
        assert_eq!(rule("[::1]:22").unwrap(), "[::1]:22");
        for bad in [
            "",
            "*.",
            "http://x.com",
            "x.com:0",
            "x.com:99999",
            "a b.com",
            "*.1.2.3.4",
            "-x.com",
            "x..com",
            "[::1",
        ] {
            assert!(rule(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_destination_is_listed_by_name_subdomain_port_or_loopback() {
        let list = HostList::new(
            &[
                "registry.npmjs.org".into(),
                "*.github.com".into(),
                "api.example.com:8443".into(),
                "127.0.0.1:5000".into(),
            ],
            false,
        );
        assert!(list.lists("registry.npmjs.org", 443));
        assert!(list.lists("REGISTRY.npmjs.org.", 80));
        assert!(!list.lists("evil-registry.npmjs.org", 443));
        assert!(!list.lists("npmjs.org", 443));
        assert!(list.lists("api.github.com", 443));
        assert!(list.lists("a.b.github.com", 443));
        assert!(!list.lists("github.com", 443), "*. is for subdomains");
        assert!(!list.lists("xgithub.com", 443));
        assert!(list.lists("api.example.com", 8443));
        assert!(!list.lists("api.example.com", 443));
        assert!(list.lists("127.0.0.1", 5000));
        assert!(!list.lists("127.0.0.1", 5001));
        assert!(!list.lists("localhost", 5000), "a name is not its address");
        let numbers = HostList::new(&["*.0.1".into()], false);
        assert!(
            !numbers.lists("127.0.0.1", 80),
            "a subdomain rule is for names"
        );

        let with_loopback = HostList::new(&[], true);
        assert!(with_loopback.lists("localhost", 1));
        assert!(with_loopback.lists("127.0.0.9", 22));
        assert!(with_loopback.lists("[::1]", 22));
        assert!(!with_loopback.lists("example.com", 443));
    }

    #[test]
    fn a_listed_name_that_leads_to_this_computer_does_not_open_it() {
        let list = HostList::new(
            &["rebind.example.com".into(), "127.0.0.1:5000".into()],
            false,
        );
        let here: IpAddr = "127.0.0.1".parse().unwrap();
        let metadata: IpAddr = "169.254.169.254".parse().unwrap();
        let far: IpAddr = "93.184.216.34".parse().unwrap();
        assert!(list.reaches("rebind.example.com", far));
        assert!(!list.reaches("rebind.example.com", here));
        assert!(!list.reaches("rebind.example.com", metadata));
        assert!(!list.reaches("rebind.example.com", "::ffff:127.0.0.1".parse().unwrap()));
        assert!(!list.reaches("rebind.example.com", "0.0.0.0".parse().unwrap()));
        assert!(list.reaches("127.0.0.1", here), "named itself");
        let with_loopback = HostList::new(&["rebind.example.com".into()], true);
        assert!(with_loopback.reaches("rebind.example.com", here));
        assert!(!with_loopback.reaches("rebind.example.com", metadata));
    }
}
