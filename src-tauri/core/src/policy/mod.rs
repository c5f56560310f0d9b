//! The permission pipeline: for each tool call the model asks for, in order, the checks that
//! say Allow, Ask or Deny, and the most restrictive answer wins. Pure code over facts the
//! caller gathered (the conversation's toggles, the server's trust, the tool's pin, the
//! person's standing approvals, auto-approve); it decides, it never asks — asking is the
//! loop's job, and what the person answers is enforced there, in Rust. Which standing approvals
//! hold in a conversation, and what a grant given while asked adds to them, are [`Standing`]'s;
//! saving a grant is the caller's.
//!
//! Which tools are *offered* at all (toggles, held-back pins) is [`offered`]; a call to a tool
//! that was not offered never reaches [`decide`]: the loop answers it as an unknown tool.

pub mod confirm;
pub mod pins;
pub mod rules;
pub mod servers;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::mcp::catalogue::CatalogueTool;
use crate::mcp::config::Trust;
use crate::store::{ApprovalScope, Conversation, StandingApproval, ToolToggle};
use rules::{Compiled, Outcome, RuleHit};

/// What the pipeline says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow(ApprovalScope),
    Ask,
    Deny(String),
}

impl Verdict {
    fn strictness(&self) -> u8 {
        match self {
            Verdict::Allow(_) => 0,
            Verdict::Ask => 1,
            Verdict::Deny(_) => 2,
        }
    }

    /// The more restrictive of two verdicts (the first on a tie).
    #[must_use]
    pub fn and(self, other: Verdict) -> Verdict {
        if other.strictness() > self.strictness() {
            other
        } else {
            self
        }
    }
}

/// The standing approvals that hold in one conversation, and where one given there is kept.
#[derive(Debug, Clone, Default)]
pub struct Standing {
    /// (server, tool) allowed in every conversation.
    pub always: HashSet<(String, String)>,
    /// (server, tool) allowed in this conversation.
    pub conversation: HashSet<(String, String)>,
    /// The conversation whose approvals "for this conversation" these are, and where one given
    /// during a run is kept: the conversation itself, or, for a lane of a comparison, the
    /// conversation it answers for (what is allowed there is allowed in the lane).
    pub kept_in: String,
}

/// What the person allows when asked about a call, beyond the call itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// The tool runs without asking in this conversation from now on.
    Conversation,
    /// The tool runs without asking in every conversation from now on.
    Always,
}

impl Standing {
    /// Of the person's standing approvals, those that hold in `conversation`.
    pub fn in_conversation(
        approvals: &[StandingApproval],
        conversation: &Conversation,
    ) -> Standing {
        let kept_in = conversation
            .lane_of
            .clone()
            .unwrap_or_else(|| conversation.id.clone());
        let mut standing = Standing {
            kept_in,
            ..Standing::default()
        };
        for a in approvals {
            let key = (a.server.clone(), a.tool.clone());
            match a.conversation_id.as_deref() {
                None => {
                    standing.always.insert(key);
                }
                Some(id) if id == standing.kept_in => {
                    standing.conversation.insert(key);
                }
                Some(_) => {}
            }
        }
        standing
    }

    /// Lets `tool` run without asking from now on, as `grant` says; returns the conversation
    /// the approval is to be saved for (`None`: every conversation), as the store keeps it.
    pub fn grant(&mut self, tool: &CatalogueTool, grant: Grant) -> Option<String> {
        let key = (tool.server.clone(), tool.tool.clone());
        match grant {
            Grant::Conversation => {
                self.conversation.insert(key);
                Some(self.kept_in.clone())
            }
            Grant::Always => {
                self.always.insert(key);
                None
            }
        }
    }
}

/// The rules in force: the person's `policy.json` and the organisation's managed file. The
/// stricter word of the two stands, so the person can tighten what the organisation set and
/// never loosen it.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub user: Compiled,
    pub managed: Compiled,
    /// Switchboard's own folders (its settings, rules and database): a call whose path
    /// argument lies in one asks, whatever allowed it — a tool that can write policy.json can
    /// rewrite what may run.
    pub protected: Vec<PathBuf>,
}

impl Policy {
    /// The rule that decides a call, of either file (the stricter when both have one).
    pub fn rule_for(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<&Value>,
        cwd: Option<&Path>,
    ) -> Option<RuleHit> {
        let managed = self.managed.judge(server, tool, arguments, cwd);
        let user = self.user.judge(server, tool, arguments, cwd);
        match (managed, user) {
            (Some(m), Some(u)) => Some(if m.outcome >= u.outcome { m } else { u }),
            (m, u) => m.or(u),
        }
    }

    /// The rule that blocks every call of a tool, whatever its arguments: it is not offered.
    pub fn blocked(&self, server: &str, tool: &str) -> Option<RuleHit> {
        self.managed
            .blocks_outright(server, tool)
            .or_else(|| self.user.blocks_outright(server, tool))
    }

    /// Whether what `tool` of `server` returns is untrusted content (it taints the turn).
    pub fn is_untrusted(&self, server: &str, tool: &str) -> bool {
        self.managed.is_untrusted(server, tool) || self.user.is_untrusted(server, tool)
    }

    /// Whether the person sees what `tool` of `server` returns before the model does.
    pub fn is_reviewed(&self, server: &str, tool: &str) -> bool {
        self.managed.is_reviewed(server, tool) || self.user.is_reviewed(server, tool)
    }
}

/// Everything known about one call.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    pub tool: &'a CatalogueTool,
    pub trust: Trust,
    pub auto_approve: bool,
    pub standing: &'a Standing,
    /// The call's arguments (`None`: not an object, or unknown).
    pub arguments: Option<&'a Value>,
    pub policy: &'a Policy,
    /// The folders the server was given as roots (none: paths are not judged by them).
    pub roots: &'a [PathBuf],
    /// The untrusted sources this turn has read from, if any (their servers' names).
    pub tainted_by: &'a [String],
}

/// A verdict and what decided it, in words the person reads (the dialog, the audit record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub verdict: Verdict,
    pub by: String,
    /// The rule that decided, when one did.
    pub rule: Option<RuleHit>,
}

fn hint(annotations: Option<&Value>, name: &str) -> bool {
    annotations
        .and_then(|a| a.get(name))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Whether the server marked the tool as destructive. Only an explicit `destructiveHint: true`
/// counts: the spec's default (true when a tool is not read-only) would make every tool of
/// every unannotated server "destructive" and auto-approve meaningless.
pub fn is_destructive(tool: &CatalogueTool) -> bool {
    hint(tool.annotations.as_ref(), "destructiveHint")
}

/// Whether the server marked the tool as read-only.
pub fn is_read_only(tool: &CatalogueTool) -> bool {
    hint(tool.annotations.as_ref(), "readOnlyHint")
}

/// The verdict for one call ([`judge`] without its words).
pub fn decide(facts: &CallFacts<'_>) -> Verdict {
    judge(facts).verdict
}

/// The verdict for one call and what decided it. In order: a rule of either policy file (a
/// block refuses, an ask asks, an allow runs); without one, the person's standing choices
/// (standing approvals, auto-approve, a trusted server's read-only tool), a destructive tool
/// asking unless always allowed, and a path outside the server's roots asking. Last, a turn
/// that read untrusted content makes any call to another server's tool that is not read-only
/// ask, whatever allowed it.
pub fn judge(facts: &CallFacts<'_>) -> Judgement {
    let tool = facts.tool;
    let rule = facts.policy.blocked(&tool.server, &tool.tool).or_else(|| {
        facts
            .policy
            .rule_for(&tool.server, &tool.tool, facts.arguments, None)
    });
    let (verdict, by) = match &rule {
        Some(hit) if hit.outcome == Outcome::Block => (
            Verdict::Deny(format!(
                "The call was not run: it is blocked by {}.",
                hit.said
            )),
            hit.said.clone(),
        ),
        Some(hit) if hit.outcome == Outcome::Ask => (Verdict::Ask, hit.said.clone()),
        // A rule that allows every tool of a server does not speak for a destructive one:
        // only a rule naming the tool, or the person's "always", lets that run unasked.
        Some(hit)
            if !hit.names_tool
                && is_destructive(tool)
                && !facts
                    .standing
                    .always
                    .contains(&(tool.server.clone(), tool.tool.clone())) =>
        {
            (
                Verdict::Ask,
                format!(
                    "the server marks this tool destructive, and {} names every tool, not this one",
                    hit.said
                ),
            )
        }
        Some(hit) => (Verdict::Allow(ApprovalScope::Policy), hit.said.clone()),
        None => standing_verdict(facts),
    };
    // Another server's content taints the call; the server's own does not.
    let others: Vec<String> = facts
        .tainted_by
        .iter()
        .filter(|source| !source.eq_ignore_ascii_case(&tool.server))
        .map(|source| crate::text::escape_hidden(source).into_owned())
        .collect();
    let (verdict, by) = match verdict {
        Verdict::Allow(_) if !others.is_empty() && !is_read_only(tool) => (
            Verdict::Ask,
            format!(
                "this turn read content from {}, which can carry instructions the model should not follow",
                crate::text::and_list(&others)
            ),
        ),
        verdict => (verdict, by),
    };
    let (verdict, by) = match (verdict, rules::path_inside(facts.arguments, &facts.policy.protected)) {
        (Verdict::Allow(_), Some(path)) => (
            Verdict::Ask,
            format!("its path “{path}” is among Switchboard's own settings and records, where a change changes what may run"),
        ),
        (verdict, _) => (verdict, by),
    };
    Judgement { verdict, by, rule }
}

/// What the person's standing choices say, with no rule: see [`judge`].
fn standing_verdict(facts: &CallFacts<'_>) -> (Verdict, String) {
    let key = (facts.tool.server.clone(), facts.tool.tool.clone());
    let always = facts.standing.always.contains(&key);
    let in_conversation = facts.standing.conversation.contains(&key);
    let read_only_and_trusted = facts.trust == Trust::Trusted && is_read_only(facts.tool);

    // What the person's standing choices allow; with none, ask.
    let granted = if always {
        (
            Verdict::Allow(ApprovalScope::Always),
            "your standing approval in every conversation",
        )
    } else if in_conversation {
        (
            Verdict::Allow(ApprovalScope::Conversation),
            "your standing approval in this conversation",
        )
    } else if facts.auto_approve {
        (
            Verdict::Allow(ApprovalScope::AutoApprove),
            "auto-approve in this conversation",
        )
    } else if read_only_and_trusted {
        (
            Verdict::Allow(ApprovalScope::Trusted),
            "a read-only tool of a server you trust",
        )
    } else {
        (Verdict::Ask, "no rule or standing approval lets it run")
    };
    // A destructive tool asks every time unless the person always allows it.
    if is_destructive(facts.tool) && !always {
        return (
            Verdict::Ask,
            "the server marks this tool destructive".into(),
        );
    }
    if let Some(path) = rules::path_outside_roots(facts.arguments, facts.roots, None) {
        if matches!(granted.0, Verdict::Allow(_)) {
            return (
                Verdict::Ask,
                format!(
                    "its path “{path}” lies outside the roots given to {}",
                    crate::text::escape_hidden(&facts.tool.server)
                ),
            );
        }
    }
    (granted.0, granted.1.to_owned())
}

/// The tools a conversation offers: every tool of the catalogue, less the ones held back
/// (changed since pinned) and the ones switched off for this conversation (a tool's own switch
/// wins over its server's).
pub fn offered<'a>(
    tools: &'a [CatalogueTool],
    held_back: &HashSet<(String, String)>,
    toggles: &[ToolToggle],
) -> Vec<&'a CatalogueTool> {
    tools
        .iter()
        .filter(|t| !held_back.contains(&(t.server.clone(), t.tool.clone())))
        .filter(|t| switched_on(toggles, &t.server, &t.tool))
        .collect()
}

/// Whether a conversation's `toggles` leave `tool` of `server` on: its own switch, else its
/// server's, else on.
pub fn switched_on(toggles: &[ToolToggle], server: &str, tool: &str) -> bool {
    let switch = |tool: Option<&str>| {
        toggles
            .iter()
            .find(|t| t.server.eq_ignore_ascii_case(server) && t.tool.as_deref() == tool)
            .map(|t| t.enabled)
    };
    switch(Some(tool)).or_else(|| switch(None)).unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(server: &str, name: &str, annotations: Option<Value>) -> CatalogueTool {
        CatalogueTool {
            title: None,
            wire_name: format!("{server}__{name}"),
            server: server.into(),
            tool: name.into(),
            display_name: name.into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            hash: "h".into(),
            annotations,
        }
    }

    fn facts<'a>(tool: &'a CatalogueTool, standing: &'a Standing) -> CallFacts<'a> {
        static NO_POLICY: std::sync::LazyLock<Policy> = std::sync::LazyLock::new(Policy::default);
        CallFacts {
            tool,
            trust: Trust::Ask,
            auto_approve: false,
            standing,
            arguments: None,
            policy: &NO_POLICY,
            roots: &[],
            tainted_by: &[],
        }
    }

    fn policy(user: &str, managed: &str) -> Policy {
        Policy {
            user: rules::PolicyFile::parse(user)
                .unwrap()
                .compile(rules::Source::User)
                .unwrap(),
            managed: serde_json::from_str::<rules::PolicyFile>(managed)
                .unwrap()
                .compile(rules::Source::Managed)
                .unwrap(),
            protected: Vec::new(),
        }
    }

    #[test]
    fn a_rule_decides_over_standing_choices_and_says_so() {
        let write = tool("fs", "write_file", None);
        let mut standing = Standing::default();
        standing.always.insert(("fs".into(), "write_file".into()));
        let p = policy(
            r#"{"rules": [{"server": "fs", "tool": "write_file", "when": {"path": {"matches": "/etc/.*"}}, "outcome": "block"},
                          {"server": "fs", "tool": "write_file", "when": {"path": {"matches": "/tmp/.*"}}, "outcome": "ask"},
                          {"server": "fs", "tool": "write_file", "when": {"path": {"matches": "/home/.*"}}, "outcome": "allow"}]}"#,
            "{}",
        );
        let call = |path: &str, standing: &Standing| {
            let args = json!({"path": path});
            judge(&CallFacts {
                arguments: Some(&args),
                policy: &p,
                ..facts(&write, standing)
            })
        };
        let blocked = call("/etc/passwd", &standing);
        assert!(
            matches!(&blocked.verdict, Verdict::Deny(why) if why.contains("blocked by rule 1 of your policy.json")),
            "{blocked:?}"
        );
        // An ask rule asks even though the tool is always allowed.
        let asked = call("/tmp/x", &standing);
        assert_eq!(asked.verdict, Verdict::Ask);
        assert!(
            asked
                .by
                .starts_with("rule 2 of your policy.json: ask before"),
            "{}",
            asked.by
        );
        let none = Standing::default();
        let allowed = call("/home/me/x", &none);
        assert_eq!(allowed.verdict, Verdict::Allow(ApprovalScope::Policy));
        assert_eq!(allowed.rule.as_ref().unwrap().index, 2);
        // No rule applies: the standing approval decides, and says so.
        let standing_word = call("/srv/x", &standing);
        assert_eq!(standing_word.verdict, Verdict::Allow(ApprovalScope::Always));
        assert_eq!(
            standing_word.by,
            "your standing approval in every conversation"
        );
    }

    #[test]
    fn the_organisations_word_can_be_tightened_never_loosened() {
        let t = tool("git", "push", None);
        let none = Standing::default();
        let p = policy(
            r#"{"rules": [{"server": "git", "outcome": "allow"}, {"server": "git", "tool": "status", "outcome": "block"}]}"#,
            r#"{"rules": [{"server": "git", "tool": "push", "outcome": "ask"}, {"server": "git", "tool": "status", "outcome": "allow"}]}"#,
        );
        let with = |t: &CatalogueTool| {
            judge(&CallFacts {
                policy: &p,
                ..facts(t, &none)
            })
        };
        let push = with(&t);
        assert_eq!(push.verdict, Verdict::Ask);
        assert!(
            push.by.contains("your organisation's policy"),
            "{}",
            push.by
        );
        assert!(matches!(
            with(&tool("git", "status", None)).verdict,
            Verdict::Deny(_)
        ));
        assert_eq!(
            with(&tool("git", "log", None)).verdict,
            Verdict::Allow(ApprovalScope::Policy)
        );
        assert!(p.blocked("git", "status").is_some());
        assert!(p.blocked("git", "push").is_none());
    }

    #[test]
    fn a_turn_that_read_untrusted_content_asks_before_another_servers_writes() {
        let write = tool("mail", "send", None);
        let read = tool("mail", "list", Some(json!({"readOnlyHint": true})));
        let same = tool("fetch", "fetch", None);
        let none = Standing::default();
        let p = policy(
            r#"{"rules": [{"server": "mail", "outcome": "allow"}]}"#,
            "{}",
        );
        let sources = vec!["fetch".to_owned()];
        let tainted = |t: &CatalogueTool| {
            judge(&CallFacts {
                auto_approve: true,
                policy: &p,
                tainted_by: &sources,
                ..facts(t, &none)
            })
        };
        let asked = tainted(&write);
        assert_eq!(asked.verdict, Verdict::Ask);
        assert!(
            asked.by.starts_with("this turn read content from fetch"),
            "{}",
            asked.by
        );
        assert_eq!(
            tainted(&read).verdict,
            Verdict::Allow(ApprovalScope::Policy)
        );
        assert_eq!(
            tainted(&same).verdict,
            Verdict::Allow(ApprovalScope::AutoApprove)
        );
        // Two sources read: each is named, and the first one's own write is tainted by the
        // second.
        let both = vec!["fetch".to_owned(), "mail".to_owned()];
        let asked = judge(&CallFacts {
            auto_approve: true,
            policy: &p,
            tainted_by: &both,
            ..facts(&same, &none)
        });
        assert_eq!(asked.verdict, Verdict::Ask);
        assert!(
            asked.by.starts_with("this turn read content from mail,"),
            "{}",
            asked.by
        );
        let asked = judge(&CallFacts {
            auto_approve: true,
            policy: &p,
            tainted_by: &both,
            ..facts(&tool("notes", "save", None), &none)
        });
        assert!(
            asked
                .by
                .starts_with("this turn read content from fetch and mail,"),
            "{}",
            asked.by
        );
    }

    #[test]
    fn a_path_outside_the_servers_roots_asks_even_when_allowed_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let t = tool("fs", "read_file", None);
        let none = Standing::default();
        let roots = [dir.path().to_path_buf()];
        let with = |path: PathBuf| {
            let args = json!({"path": path});
            judge(&CallFacts {
                auto_approve: true,
                arguments: Some(&args),
                roots: &roots,
                ..facts(&t, &none)
            })
        };
        assert_eq!(
            with(dir.path().join("a")).verdict,
            Verdict::Allow(ApprovalScope::AutoApprove)
        );
        let out = with(dir.path().join("../elsewhere"));
        assert_eq!(out.verdict, Verdict::Ask);
        assert!(
            out.by.contains("lies outside the roots given to fs"),
            "{}",
            out.by
        );
    }

    #[test]
    fn with_no_standing_choice_every_call_is_asked_about() {
        let t = tool("fs", "read", None);
        assert_eq!(decide(&facts(&t, &Standing::default())), Verdict::Ask);
    }

    #[test]
    fn standing_approvals_and_auto_approve_allow_with_their_scope() {
        let t = tool("fs", "read", None);
        let mut standing = Standing::default();
        standing.conversation.insert(("fs".into(), "read".into()));
        assert_eq!(
            decide(&facts(&t, &standing)),
            Verdict::Allow(ApprovalScope::Conversation)
        );
        standing.always.insert(("fs".into(), "read".into()));
        assert_eq!(
            decide(&facts(&t, &standing)),
            Verdict::Allow(ApprovalScope::Always)
        );
        let nothing = Standing::default();
        let auto = CallFacts {
            auto_approve: true,
            ..facts(&t, &nothing)
        };
        assert_eq!(decide(&auto), Verdict::Allow(ApprovalScope::AutoApprove));
    }

    fn conversation(id: &str, lane_of: Option<&str>) -> Conversation {
        Conversation {
            id: id.into(),
            title: String::new(),
            created_at: 0,
            updated_at: 0,
            provider: None,
            model: None,
            auto_approve: false,
            system_prompt: String::new(),
            profile_id: None,
            project_id: None,
            lane_of: lane_of.map(Into::into),
        }
    }

    fn approval(tool: &str, conversation: Option<&str>) -> StandingApproval {
        StandingApproval {
            server: "fs".into(),
            tool: tool.into(),
            display_name: String::new(),
            conversation_id: conversation.map(Into::into),
            conversation_title: None,
            created_at: 0,
        }
    }

    #[test]
    fn a_lane_of_a_comparison_stands_for_its_conversation_and_keeps_its_grants_there() {
        let approvals = [
            approval("read", Some("c1")),
            approval("write", Some("c2")),
            approval("list", None),
        ];
        let key = |t: &str| ("fs".to_owned(), t.to_owned());
        for (here, lane_of) in [("c1", None), ("lane-1", Some("c1"))] {
            let mut standing = Standing::in_conversation(&approvals, &conversation(here, lane_of));
            assert_eq!(standing.kept_in, "c1", "{here}");
            assert_eq!(
                standing.conversation,
                HashSet::from([key("read")]),
                "{here}"
            );
            assert_eq!(standing.always, HashSet::from([key("list")]), "{here}");
            // What the person allows while asked holds at once, and is saved where it is kept.
            let stat = tool("fs", "stat", None);
            assert_eq!(
                standing.grant(&stat, Grant::Conversation),
                Some("c1".to_owned())
            );
            assert_eq!(
                decide(&facts(&stat, &standing)),
                Verdict::Allow(ApprovalScope::Conversation)
            );
            let rm = tool("fs", "rm", None);
            assert_eq!(standing.grant(&rm, Grant::Always), None);
            assert_eq!(
                decide(&facts(&rm, &standing)),
                Verdict::Allow(ApprovalScope::Always)
            );
        }
        let elsewhere = Standing::in_conversation(&approvals, &conversation("c3", None));
        assert!(elsewhere.conversation.is_empty());
    }

    #[test]
    fn read_only_is_believed_only_from_a_trusted_server() {
        let t = tool("fs", "read", Some(json!({"readOnlyHint": true})));
        let none = Standing::default();
        assert_eq!(decide(&facts(&t, &none)), Verdict::Ask);
        let trusted = CallFacts {
            trust: Trust::Trusted,
            ..facts(&t, &none)
        };
        assert_eq!(decide(&trusted), Verdict::Allow(ApprovalScope::Trusted));
    }

    #[test]
    fn a_destructive_tool_asks_even_in_auto_approve_unless_always_allowed() {
        let t = tool("fs", "delete", Some(json!({"destructiveHint": true})));
        let mut standing = Standing::default();
        standing.conversation.insert(("fs".into(), "delete".into()));
        let auto = CallFacts {
            auto_approve: true,
            ..facts(&t, &standing)
        };
        assert_eq!(decide(&auto), Verdict::Ask);
        standing.always.insert(("fs".into(), "delete".into()));
        assert_eq!(
            decide(&facts(&t, &standing)),
            Verdict::Allow(ApprovalScope::Always)
        );
    }

    #[test]
    fn held_back_and_switched_off_tools_are_not_offered() {
        let tools = vec![
            tool("fs", "read", None),
            tool("fs", "write", None),
            tool("git", "log", None),
            tool("git", "status", None),
        ];
        let held: HashSet<_> = [("fs".to_owned(), "write".to_owned())].into();
        let toggles = vec![
            ToolToggle {
                server: "git".into(),
                tool: None,
                enabled: false,
            },
            ToolToggle {
                server: "git".into(),
                tool: Some("status".into()),
                enabled: true,
            },
        ];
        let names: Vec<_> = offered(&tools, &held, &toggles)
            .iter()
            .map(|t| t.wire_name.clone())
            .collect();
        assert_eq!(names, ["fs__read", "git__status"]);
    }
}
