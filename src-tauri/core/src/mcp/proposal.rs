//! `switchboard://` links that propose an MCP server — from the registry by name, or as an
//! mcp.json entry — read into what the person is shown. A link only ever proposes: nothing
//! here adds or starts anything. What the window is shown of a proposed entry is all of it,
//! every environment and header value whole: a link cannot bring a secret (a secret-looking
//! value is refused, and the person types it in the server's settings), nor a variable that
//! changes how the runtime loads code, nor arguments that widen a container
//! ([`super::config::outside`]).
//!
//!   switchboard://install?registry=io.github.owner/name[&version=1.2.3]
//!   switchboard://install?name=NAME&config=ENTRY
//!
//! ENTRY is an mcp.json server entry as JSON, or that JSON in base64 (URL-safe or not), as
//! other clients' install links write it.

use base64::Engine;
use serde::Serialize;

use super::config::{outside, ServerEntry};

/// The scheme Switchboard's links use.
pub const SCHEME: &str = "switchboard";
/// The longest link read.
const MAX_CHARS: usize = 16 * 1024;

/// Why a link proposes nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("This switchboard:// link proposes no server: {0}")]
pub struct ProposalError(String);

/// What a link proposes.
#[derive(Debug, Clone, PartialEq)]
pub enum Proposal {
    /// A server of the MCP Registry (its newest version unless one is named).
    Registry {
        name: String,
        version: Option<String>,
    },
    /// A server as an mcp.json entry.
    Entry {
        name: String,
        entry: Box<ServerEntry>,
    },
}

/// A proposal as the window shows it, by the token it is accepted with.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ShownProposal {
    Registry {
        token: String,
        name: String,
        version: Option<String>,
    },
    Entry {
        token: String,
        name: String,
        /// What it would run, every environment value whole.
        command_line: String,
    },
    /// A link that proposes nothing, and why (said in the window, so that a link the person
    /// clicked does not vanish unexplained); `token` only tells one from another.
    Refused { token: String, reason: String },
}

/// Whether `arg` is a Switchboard link (what the app is started with when one is opened).
#[must_use]
pub fn is_link(arg: &str) -> bool {
    arg.get(..SCHEME.len() + 1)
        .is_some_and(|head| head.eq_ignore_ascii_case(&format!("{SCHEME}:")))
}

/// What `link` proposes.
///
/// # Errors
/// Not a `switchboard://install` link; no server named; an entry that cannot be read or run.
pub fn parse(link: &str) -> Result<Proposal, ProposalError> {
    let refuse = |why: &str| ProposalError(why.to_owned());
    if link.chars().count() > MAX_CHARS {
        return Err(refuse("it is too long"));
    }
    let url = url::Url::parse(link).map_err(|e| refuse(&e.to_string()))?;
    if url.scheme() != SCHEME {
        return Err(refuse("it is not a switchboard:// link"));
    }
    // `switchboard://install?…` (host `install`) or `switchboard:install?…`.
    let action = url
        .host_str()
        .unwrap_or_else(|| url.path().trim_matches('/'));
    if action != "install" {
        return Err(refuse("Switchboard's links only install servers"));
    }
    let query = |key: &str| {
        url.query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if let Some(name) = query("registry") {
        return Ok(Proposal::Registry {
            name,
            version: query("version"),
        });
    }
    let name = query("name").ok_or_else(|| refuse("it names no server"))?;
    let config = query("config").ok_or_else(|| refuse("it has neither registry= nor config="))?;
    let json = if config.starts_with('{') {
        config
    } else {
        // A query reads `+` as a space: standard base64 written unescaped has them.
        let config = config.replace(' ', "+");
        let engines = [
            base64::engine::general_purpose::STANDARD,
            base64::engine::general_purpose::URL_SAFE,
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        let bytes = engines
            .iter()
            .find_map(|e| e.decode(config.as_bytes()).ok())
            .ok_or_else(|| refuse("its config is neither JSON nor base64"))?;
        String::from_utf8(bytes).map_err(|_| refuse("its config is not text"))?
    };
    // serde's messages quote the values they met: a key in the config would be repeated.
    let given: ServerEntry = serde_json::from_str(&json)
        .map_err(|_| refuse("its config is not an mcp.json server entry"))?;
    // How it runs, and nothing else: a link gives no folders, trust or other settings.
    let entry = ServerEntry {
        command: given.command,
        args: given.args,
        env: given.env,
        cwd: given.cwd,
        url: given.url,
        headers: given.headers,
        transport: given.transport,
        ..ServerEntry::default()
    };
    entry.resolve(&name).map_err(|e| refuse(&e.to_string()))?;
    if entry.cwd.as_deref().is_some_and(|c| !c.trim().is_empty()) {
        // A folder of the link's choosing decides what runs (a project's `.npmrc`,
        // `node_modules/.bin`, `uv.toml`, Python's path).
        return Err(refuse(
            "a link cannot choose the folder a server runs in; add the server yourself if you mean it",
        ));
    }
    let from = "this link";
    outside::check_entry(&entry, from)
        .and_then(|()| outside::check_no_secrets(&entry.env, "variable", from))
        .and_then(|()| outside::check_no_secrets(&entry.headers, "header", from))
        .and_then(|()| outside::check_no_secret_words(&entry.args, entry.url.as_deref(), from))
        .map_err(|e| refuse(&e.message))?;
    Ok(Proposal::Entry {
        name,
        entry: Box::new(entry),
    })
}

impl Proposal {
    /// A proposed entry as an install: every value it carries stays in the entry as shown
    /// (a link brings no secret); `None` for a registry proposal.
    #[must_use]
    pub fn into_plan(self) -> Option<(String, super::install::InstallPlan)> {
        let Proposal::Entry { name, entry } = self else {
            return None;
        };
        Some((
            name,
            super::install::InstallPlan {
                entry: *entry,
                secrets: Vec::new(),
                runtime: None,
            },
        ))
    }

    /// How the window shows it, with `token`.
    #[must_use]
    pub fn shown(&self, token: String) -> ShownProposal {
        match self {
            Proposal::Registry { name, version } => ShownProposal::Registry {
                token,
                name: name.clone(),
                version: version.clone(),
            },
            Proposal::Entry { name, entry } => {
                // Every value whole, each header on a line of its own, hidden characters as
                // escapes: what the link brings is all shown.
                let command_line = entry
                    .resolve(name)
                    .map(|spec| spec.launch.display_whole())
                    .unwrap_or_default();
                ShownProposal::Entry {
                    token,
                    name: name.clone(),
                    command_line,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_propose_a_registry_server_or_an_entry() {
        assert_eq!(
            parse("switchboard://install?registry=io.github.owner/time&version=1.0.0").unwrap(),
            Proposal::Registry {
                name: "io.github.owner/time".into(),
                version: Some("1.0.0".into())
            }
        );
        let config = r#"{"command":"uvx","args":["mcp-server-time"],"env":{"TZ":"Europe/Oslo"}}"#;
        let encoded = base64::engine::general_purpose::STANDARD.encode(config);
        for link in [
            format!(
                "switchboard://install?name=time&config={}",
                urlencode(config)
            ),
            format!(
                "switchboard://install?name=time&config={}",
                urlencode(&encoded)
            ),
        ] {
            let Proposal::Entry { name, entry } = parse(&link).unwrap() else {
                panic!("an entry");
            };
            assert_eq!(name, "time");
            assert_eq!(entry.command.as_deref(), Some("uvx"));
            let shown = Proposal::Entry { name, entry }.shown("t".into());
            let ShownProposal::Entry { command_line, .. } = shown else {
                panic!("shown as an entry");
            };
            // Every value the link brings is shown whole.
            assert_eq!(command_line, "TZ=Europe/Oslo uvx mcp-server-time");
        }
        // Standard base64 with `+` written unescaped, and a config that tries to give folders.
        let greedy = r#"{"command":"uvx","args":["a>>>b"],"roots":["~/"],"trust":"trusted"}"#;
        let encoded = base64::engine::general_purpose::STANDARD.encode(greedy);
        assert!(encoded.contains('+'), "{encoded}");
        let Proposal::Entry { entry, .. } =
            parse(&format!("switchboard://install?name=g&config={encoded}")).unwrap()
        else {
            panic!("an entry");
        };
        assert!(entry.roots.is_empty());
        assert!(entry.trust.is_none());
        assert_eq!(entry.args, ["a>>>b"]);
        assert!(is_link("SWITCHBOARD://install?x"));
        assert!(!is_link("mcp"));
    }

    #[test]
    fn links_that_propose_nothing_say_why() {
        for (link, why) in [
            (
                "https://example.com/install?registry=x",
                "not a switchboard",
            ),
            ("switchboard://delete?name=x", "only install"),
            (
                "switchboard://install?name=x",
                "neither registry= nor config=",
            ),
            (
                "switchboard://install?name=x&config=%7Bnot",
                "not an mcp.json server entry",
            ),
            ("switchboard://install?name=x&config=%7B%7D", "command"),
        ] {
            let err = parse(link).unwrap_err().to_string();
            assert!(err.contains(why), "{link}: {err}");
        }
        assert!(parse(&format!(
            "switchboard://install?registry={}",
            "a".repeat(20_000)
        ))
        .is_err());
    }

    fn entry_link(config: &str) -> String {
        format!("switchboard://install?name=x&config={}", urlencode(config))
    }

    #[test]
    fn a_link_cannot_bring_a_secret_or_change_what_the_runtime_loads() {
        for (config, why) in [
            (
                r#"{"command":"uvx","args":["t"],"env":{"GITHUB_TOKEN":"ghp_x"}}"#,
                "GITHUB_TOKEN",
            ),
            (
                r#"{"command":"uvx","args":["t"],"env":{"X":"sk-proj-0123456789abcdef"}}"#,
                "looks like a secret",
            ),
            (
                r#"{"url":"https://e.example/mcp","headers":{"Authorization":"Bearer abc"}}"#,
                "Authorization",
            ),
            (
                r#"{"url":"https://e.example/mcp?api_key=abcdefgh123"}"#,
                "cannot bring a secret",
            ),
            (
                r#"{"command":"npx","args":["-y","harmless"],"env":{"NODE_OPTIONS":"--require /tmp/x.js"}}"#,
                "NODE_OPTIONS",
            ),
            (
                r#"{"command":"uvx","args":["t"],"env":{"LD_PRELOAD":"/tmp/x.so"}}"#,
                "dynamic loader",
            ),
            (
                r#"{"command":"uvx","args":["t"],"env":{"UV_INDEX_URL":"https://evil.example"}}"#,
                "uv",
            ),
            (
                r#"{"command":"docker","args":["run","-i","--rm","-v","/:/host","img"]}"#,
                "/:/host",
            ),
            (
                r#"{"command":"npx","args":["-y","harmless"],"cwd":"/tmp/evil"}"#,
                "cannot choose the folder",
            ),
            (
                r#"{"command":"env","args":["LD_PRELOAD=/tmp/x.so","npx","-y","harmless"]}"#,
                "LD_PRELOAD",
            ),
            (
                r#"{"command":"npx","args":["-y","harmless","--api-key=sk-proj-0123456789abcdef"]}"#,
                "command line",
            ),
            (
                r#"{"url":"https://e.example/mcp?token=abc123"}"#,
                "in its address",
            ),
        ] {
            let err = parse(&entry_link(config)).unwrap_err().to_string();
            assert!(err.contains(why), "{config}: {err}");
        }
        // An empty secret is the person's to type; a header that is not secret is shown.
        let link = entry_link(
            r#"{"url":"https://e.example/mcp","headers":{"X-Region":"eu","Authorization":""}}"#,
        );
        let proposal = parse(&link).unwrap();
        let ShownProposal::Entry { command_line, .. } = proposal.shown("t".into()) else {
            panic!("an entry");
        };
        assert!(
            command_line.contains("header X-Region: eu"),
            "{command_line}"
        );
        let (_, plan) = proposal.into_plan().unwrap();
        assert!(plan.secrets.is_empty());
    }

    fn urlencode(text: &str) -> String {
        url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
    }
}
