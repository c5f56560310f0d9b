//! The permission pipeline: for each tool call the model asks for, in order, the checks that
//! say Allow, Ask or Deny, and the most restrictive answer wins. Pure code over facts the
//! caller gathered (the conversation's toggles, the server's trust, the tool's pin, the
//! person's standing approvals, auto-approve); it decides, it never asks — asking is the
//! loop's job, and what the person answers is enforced there, in Rust.
//!
//! Which tools are *offered* at all (toggles, held-back pins) is [`offered`]; a call to a tool
//! that was not offered never reaches [`decide`]: the loop answers it as an unknown tool.

pub mod confirm;
pub mod pins;
pub mod servers;

use std::collections::HashSet;

use serde_json::Value;

use crate::mcp::catalogue::CatalogueTool;
use crate::mcp::config::Trust;
use crate::store::{ApprovalScope, StandingApproval, ToolToggle};

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

/// The standing approvals that hold in one conversation.
#[derive(Debug, Clone, Default)]
pub struct Standing {
    /// (server, tool) allowed in every conversation.
    pub always: HashSet<(String, String)>,
    /// (server, tool) allowed in this conversation.
    pub conversation: HashSet<(String, String)>,
}

impl Standing {
    /// Of the person's standing approvals, those that hold in `conversation_id`.
    pub fn in_conversation(approvals: &[StandingApproval], conversation_id: &str) -> Standing {
        let mut standing = Standing::default();
        for a in approvals {
            let key = (a.server.clone(), a.tool.clone());
            match a.conversation_id.as_deref() {
                None => {
                    standing.always.insert(key);
                }
                Some(id) if id == conversation_id => {
                    standing.conversation.insert(key);
                }
                Some(_) => {}
            }
        }
        standing
    }
}

/// Everything known about one call.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    pub tool: &'a CatalogueTool,
    pub trust: Trust,
    pub auto_approve: bool,
    pub standing: &'a Standing,
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

/// The verdict for one call: each check in turn, the most restrictive wins.
pub fn decide(facts: &CallFacts<'_>) -> Verdict {
    let key = (facts.tool.server.clone(), facts.tool.tool.clone());
    let always = facts.standing.always.contains(&key);
    let in_conversation = facts.standing.conversation.contains(&key);
    let read_only_and_trusted =
        facts.trust == Trust::Trusted && hint(facts.tool.annotations.as_ref(), "readOnlyHint");

    // What the person's standing choices allow; with none, ask.
    let granted = if always {
        Verdict::Allow(ApprovalScope::Always)
    } else if in_conversation {
        Verdict::Allow(ApprovalScope::Conversation)
    } else if facts.auto_approve {
        Verdict::Allow(ApprovalScope::AutoApprove)
    } else if read_only_and_trusted {
        Verdict::Allow(ApprovalScope::Trusted)
    } else {
        Verdict::Ask
    };
    // A destructive tool asks every time unless the person always allows it.
    let destructive = if is_destructive(facts.tool) && !always {
        Verdict::Ask
    } else {
        Verdict::Allow(ApprovalScope::Policy)
    };
    granted.and(destructive)
}

/// The tools a conversation offers: every tool of the catalogue, less the ones held back
/// (changed since pinned) and the ones switched off for this conversation (a tool's own switch
/// wins over its server's).
pub fn offered<'a>(
    tools: &'a [CatalogueTool],
    held_back: &HashSet<(String, String)>,
    toggles: &[ToolToggle],
) -> Vec<&'a CatalogueTool> {
    let switch = |server: &str, tool: Option<&str>| {
        toggles
            .iter()
            .find(|t| t.server.eq_ignore_ascii_case(server) && t.tool.as_deref() == tool)
            .map(|t| t.enabled)
    };
    tools
        .iter()
        .filter(|t| !held_back.contains(&(t.server.clone(), t.tool.clone())))
        .filter(|t| {
            switch(&t.server, Some(&t.tool))
                .or_else(|| switch(&t.server, None))
                .unwrap_or(true)
        })
        .collect()
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
        CallFacts {
            tool,
            trust: Trust::Ask,
            auto_approve: false,
            standing,
        }
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
