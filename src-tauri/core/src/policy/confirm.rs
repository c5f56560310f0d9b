//! [`Confirm`]: how the person is asked about what only they may allow — a server's exact
//! command line before it first runs (or runs changed), a changed tool before it is offered
//! to models again, and each [`Allowance`]: what would let tools run without asking or send
//! the person's browser somewhere. The window answers with a native dialog drawn by Rust (never the webview,
//! which renders hostile text), the command line on the terminal. The flows that ask live once,
//! in [`crate::app::App`]; this module owns only the question's shape.

use std::sync::Arc;

use serde::Serialize;

/// What a person is asked to approve before a server first runs (or runs changed). Approving
/// it approves exactly `fingerprint`: an entry changed while the question was open is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerApprovalRequest {
    pub server: String,
    /// The full command line or address, untruncated, secrets as their keychain reference.
    pub command_line: String,
    /// Reached over HTTP rather than run as a program.
    pub remote: bool,
    /// Run in a sandbox (what it may reach is a line of `command_line`).
    pub sandboxed: bool,
    pub fingerprint: String,
}

/// A changed tool, held back until the person accepts its change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolChange {
    pub server: String,
    pub tool: String,
    /// What changed since it was pinned, as a unified diff (hostile text: shown as text).
    pub diff: String,
}

impl ToolChange {
    /// The most of a diff a dialog shows; the Servers page shows all of it.
    pub const SHOWN_DIFF_CHARS: usize = 3_000;
    /// The most of a diff a dialog with a scrolled view shows.
    pub const SCROLLED_DIFF_CHARS: usize = 200_000;

    /// The question, one line: a dialog's title.
    #[must_use]
    pub fn title(&self) -> String {
        format!("Offer the changed tool “{}” again?", shown(&self.tool))
    }

    /// The question whole: the server and tool as one line each, and the diff (a hint that now
    /// claims more safety called out first), every hidden character of them written as an
    /// escape, the diff cut at [`ToolChange::SHOWN_DIFF_CHARS`].
    #[must_use]
    pub fn message(&self) -> String {
        let count = self.diff.chars().count();
        let mut diff: String = self.diff.chars().take(Self::SHOWN_DIFF_CHARS).collect();
        if count > Self::SHOWN_DIFF_CHARS {
            diff.push_str(&format!(
                "\n… ({} more characters: the whole diff is on the Servers page)",
                count - Self::SHOWN_DIFF_CHARS
            ));
        }
        format!("{}\n\n{}", self.lead(), crate::text::escape_hidden(&diff))
    }

    /// The question without its diff: what changed and what accepting means, for a dialog that
    /// shows the diff apart ([`ToolChange::shown_diff`]).
    #[must_use]
    pub fn lead(&self) -> String {
        format!(
            "The MCP server “{}” changed its tool “{}” since you first saw it. A changed \
             description can tell the model to do something else. It was held back; accept it \
             only if this change is expected:",
            shown(&self.server),
            shown(&self.tool),
        )
    }

    /// The diff for a dialog that scrolls: whole up to [`ToolChange::SCROLLED_DIFF_CHARS`] (a
    /// hostile description of megabytes is cut, and says so), every hidden character written
    /// as an escape.
    #[must_use]
    pub fn shown_diff(&self) -> String {
        let count = self.diff.chars().count();
        let mut diff: String = self.diff.chars().take(Self::SCROLLED_DIFF_CHARS).collect();
        if count > Self::SCROLLED_DIFF_CHARS {
            diff.push_str(&format!(
                "\n… ({} more characters: the whole diff is on the Servers page)",
                count - Self::SCROLLED_DIFF_CHARS
            ));
        }
        crate::text::escape_hidden(&diff).into_owned()
    }
}

/// A tool the person would stop being asked about: in one conversation, or in all
/// (`everywhere`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandingTool {
    pub server: String,
    pub tool: String,
    pub everywhere: bool,
}

/// What the webview may ask for but only the person may allow: each widens what runs without
/// asking, or sends the browser somewhere. The window asks in a native dialog; a script in the
/// webview can only make the dialog appear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowance {
    /// Stop asking before these tools run, from the conversation `conversation` (its title).
    StandingApproval {
        conversation: String,
        tools: Vec<StandingTool>,
    },
    /// Every tool call of the conversation `conversation` (its title) runs without asking.
    AutoApprove { conversation: String },
    /// Open a sign-in page that the server `server` named, in the browser.
    SignIn { server: String, url: String },
    /// Open a link from the conversation in the browser (`url` as it will be opened, with a
    /// look-alike domain in its `xn--` form).
    OpenLink { url: String },
    /// Run the tool `tool` of `server` with `arguments` (JSON text), as the server's own app
    /// (MCP Apps) in a tool card asks.
    AppToolCall {
        server: String,
        tool: String,
        arguments: String,
    },
    /// Open the page the server `server` asks the person to visit (a URL-mode form: an
    /// out-of-band sign-in or payment), `url` as it will be opened.
    FormPage { server: String, url: String },
    /// Make `switchboard` in new terminals run `binary`, put at `place` (a link, or a folder
    /// added to the PATH).
    ShellCommand { binary: String, place: String },
    /// Change policy.json so that calls run without asking that did not: each change in words
    /// ("add: allow …", "take away: block …", "take web off the list of untrusted content").
    PolicyRules { rules: Vec<String> },
    /// Keep the audit record of tool calls for `to_days` instead of `from_days`: entries
    /// older go at the next start.
    ShorterAuditRecord { from_days: u32, to_days: u32 },
}

impl Allowance {
    /// The question, one line: a dialog's title.
    #[must_use]
    pub fn title(&self) -> String {
        match self {
            Allowance::StandingApproval { tools, .. } => match tools.as_slice() {
                [one] => format!("Stop asking before “{}” runs?", shown(&one.tool)),
                many => format!("Stop asking before {} tools run?", many.len()),
            },
            Allowance::AutoApprove { conversation } => format!(
                "Run every tool without asking in “{}”?",
                shown(conversation)
            ),
            Allowance::SignIn { server, url } => {
                format!("Sign in to “{}” at {}?", shown(server), host_of(url))
            }
            Allowance::OpenLink { url } if url.starts_with("mailto:") => {
                format!("Write an email to {}?", shown(&url["mailto:".len()..]))
            }
            Allowance::OpenLink { url } => format!("Open {} in your browser?", host_of(url)),
            Allowance::AppToolCall { server, tool, .. } => {
                format!("Let the “{}” app run “{}”?", shown(server), shown(tool))
            }
            Allowance::FormPage { server, url } => format!(
                "Open the page “{}” asks for, at {}?",
                shown(server),
                host_of(url)
            ),
            Allowance::ShellCommand { .. } => {
                "Make “switchboard” in a terminal run this app?".to_owned()
            }
            Allowance::PolicyRules { .. } => {
                "Let tool calls run without asking that asked or were blocked?".to_owned()
            }
            Allowance::ShorterAuditRecord { to_days, .. } => {
                format!("Keep the record of tool calls for only {}?", days(*to_days))
            }
        }
    }

    /// What saying yes does, in full: a dialog's text. Names are hostile text, so their
    /// invisible characters are shown as escapes.
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            Allowance::StandingApproval {
                conversation,
                tools,
            } => {
                let list: Vec<String> = tools
                    .iter()
                    .map(|t| {
                        let scope = if t.everywhere {
                            "in every conversation".to_owned()
                        } else {
                            format!("in “{}”", shown(conversation))
                        };
                        format!("• “{}” of “{}”, {scope}", shown(&t.tool), shown(&t.server))
                    })
                    .collect();
                format!(
                    "These tools would run without asking you first:\n\n{}\n\nSay yes only if you \
                     chose this yourself. You can take it back in Settings.",
                    list.join("\n")
                )
            }
            Allowance::AutoApprove { conversation } => format!(
                "Every tool call in “{}”, of every server, would run without asking you first, \
                 including calls that change or delete things. Say yes only if you turned this on.",
                shown(conversation)
            ),
            Allowance::SignIn { server, url } => format!(
                "The MCP server “{}” asks you to sign in. Your browser would open:\n\n{}\n\nGo on only \
                 if you expect to sign in at {}.",
                shown(server),
                shown_within(url, SHOWN_ADDRESS_CHARS),
                host_of(url)
            ),
            Allowance::OpenLink { url } => format!(
                "Your browser (or mail program) would open:\n\n{}\n\nCheck the address: a name \
                 made to look like another is shown in its xn-- form.",
                shown_within(url, SHOWN_ADDRESS_CHARS)
            ),
            Allowance::AppToolCall {
                server,
                tool,
                arguments,
            } => format!(
                "The app that the MCP server “{}” showed in a tool card asks to run its tool “{}” \
                 with:\n\n{}\n\nSay yes only if you just asked the app to do this.",
                shown(server),
                shown(tool),
                crate::text::escape_hidden(&crate::text::one_line(arguments, 2000))
            ),
            Allowance::FormPage { server, url } => format!(
                "The MCP server “{}” asks you to visit a page. Your browser would open:\n\n{}\n\n\
                 Go on only if you expect to continue at {}: a page can ask for a password or a \
                 payment.",
                shown(server),
                shown_within(url, SHOWN_ADDRESS_CHARS),
                host_of(url)
            ),
            Allowance::ShellCommand { binary, place } => format!(
                "Typing “switchboard” in a new terminal would run\n\n{}\n\nput there as\n\n{}\n\n\
                 Say yes only if you asked for this in Settings. You can take it away there.",
                shown_within(binary, SHOWN_ADDRESS_CHARS),
                shown_within(place, SHOWN_ADDRESS_CHARS)
            ),
            Allowance::PolicyRules { rules } => {
                let list: Vec<String> = rules
                    .iter()
                    .take(20)
                    .map(|r| format!("• {}", shown_within(r, 600)))
                    .collect();
                let more = rules.len().saturating_sub(20);
                format!(
                    "After these changes to your rules, the calls they name would run without \
                     asking you first:\n\n{}{}\n\n\
                     Say yes only if you made these changes yourself. The rules are kept in policy.json.",
                    list.join("\n"),
                    if more > 0 { format!("\n… and {more} more") } else { String::new() }
                )
            }
            Allowance::ShorterAuditRecord { from_days, to_days } => format!(
                "The record of every tool call is kept for {} now. Shortened to {}, the \
                 entries older than that are deleted the next time Switchboard starts, and \
                 cannot be brought back.\n\nSay yes only if you changed this in Settings \
                 yourself.",
                days(*from_days),
                days(*to_days)
            ),
        }
    }
}

fn days(n: u32) -> String {
    if n == 1 {
        "1 day".to_owned()
    } else {
        format!("{n} days")
    }
}

/// Hostile text for a native dialog or a terminal: one line at most 300 characters, its
/// invisible characters as escapes.
fn shown(text: &str) -> String {
    shown_within(text, 300)
}

/// The longest address a question shows whole (links.rs opens none longer).
pub const SHOWN_ADDRESS_CHARS: usize = 2_000;

fn shown_within(text: &str, max_chars: usize) -> String {
    crate::text::escape_hidden(&crate::text::one_line(text, max_chars)).into_owned()
}

/// The host an address leads to, as the URL parser spells it (an internationalised name in
/// its `xn--` form), or the whole address when it has none.
#[must_use]
pub fn host_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) => match parsed.host_str() {
            Some(host) => shown(host),
            None => shown(url),
        },
        Err(_) => shown(url),
    }
}

/// What a sign-in to `server` asks before its page opens: [`Allowance::SignIn`], naming the
/// page's host, put to `confirm`.
pub fn ask_before_sign_in(confirm: Arc<dyn Confirm>, server: &str) -> crate::mcp::oauth::AskFirst {
    let server = server.to_owned();
    Arc::new(move |url| {
        let (confirm, server) = (Arc::clone(&confirm), server.clone());
        Box::pin(async move { confirm.allow(&Allowance::SignIn { server, url }).await })
    })
}

/// Asks the person; `true` only for a clear yes. A way of asking that has no one to ask (no
/// terminal, no window) answers no.
#[async_trait::async_trait]
pub trait Confirm: Send + Sync {
    /// May `request.server` run `request.command_line`?
    async fn approve_server(&self, request: &ServerApprovalRequest) -> bool;

    /// May the changed tool be offered to models again?
    async fn accept_tool(&self, change: &ToolChange) -> bool;

    /// May this happen?
    async fn allow(&self, allowance: &Allowance) -> bool;
}

/// Says the same to every question: `--yes` on the command line, and tests.
#[derive(Debug, Clone, Copy)]
pub struct Always(pub bool);

#[async_trait::async_trait]
impl Confirm for Always {
    async fn approve_server(&self, _: &ServerApprovalRequest) -> bool {
        self.0
    }

    async fn accept_tool(&self, _: &ToolChange) -> bool {
        self.0
    }

    async fn allow(&self, _: &Allowance) -> bool {
        self.0
    }
}

#[cfg(test)]
mod tool_change_tests {
    use super::ToolChange;

    #[test]
    fn a_tool_change_is_asked_about_with_its_hidden_characters_shown() {
        let change = ToolChange {
            server: "files\u{202e}txt.exe".into(),
            tool: "read\u{200b}file".into(),
            diff: format!("-old\n+new \u{e0041}\u{e0042}\n{}", "x".repeat(4_000)),
        };
        let title = change.title();
        assert!(title.contains("read\\u200bfile"), "{title}");
        let message = change.message();
        assert!(message.contains("files\\u202etxt.exe"), "{message}");
        assert!(
            message.contains("+new \\udb40\\udc41\\udb40\\udc42"),
            "{message}"
        );
        assert!(!message.chars().any(crate::text::is_hidden), "{message:?}");
        assert!(message.contains("more characters: the whole diff is on the Servers page"));
        // A scrolled dialog shows the lead and the whole diff apart, escaped the same.
        assert!(message.starts_with(&change.lead()));
        let whole = change.shown_diff();
        assert!(whole.starts_with("-old\n+new \\udb40\\udc41"), "{whole}");
        assert!(whole.ends_with(&"x".repeat(4_000)));
        assert!(!whole.chars().any(crate::text::is_hidden));
    }

    #[test]
    fn a_diff_of_megabytes_is_cut_for_the_scrolled_dialog_and_says_so() {
        let change = ToolChange {
            server: "s".into(),
            tool: "t".into(),
            diff: "+".repeat(ToolChange::SCROLLED_DIFF_CHARS + 10),
        };
        let whole = change.shown_diff();
        assert!(whole.ends_with("(10 more characters: the whole diff is on the Servers page)"));
    }
}
