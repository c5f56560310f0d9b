//! Policy and audit commands: the rules of policy.json and the organisation's file as the
//! window shows them, changed through the core's flows (a change that lets calls run without
//! asking only after the native dialog), and the record of every tool call.

use super::commands;
use crate::app::{PolicyMark, PolicyView};
use crate::policy::rules::{Outcome, Rule, Target};
use crate::store::{AuditEntry, AuditFilter};

commands! {
    /// The person's rules, the organisation's, and each in words.
    async fn get_policy(cx) -> PolicyView {
        Ok(cx.app.policy_view()?)
    }

    /// Allow, ask or block a server's tools (`tool` null) or one tool; `outcome` null takes
    /// that rule away. Allowing asks in a native dialog first.
    async fn set_tool_policy(cx, server: String, tool: Option<String>, outcome: Option<Outcome>) -> PolicyView {
        let confirm = cx.host.confirm();
        Ok(cx.app.set_tool_policy(&server, tool.as_deref(), outcome, &*confirm).await?)
    }

    /// Adds a rule (one made from an approval dialog's call, or written in Settings).
    async fn add_policy_rule(cx, rule: Rule) -> PolicyView {
        let confirm = cx.host.confirm();
        Ok(cx.app.add_policy_rule(rule, &*confirm).await?)
    }

    /// Takes away the rule at `index` (0-based).
    async fn remove_policy_rule(cx, index: u32) -> PolicyView {
        let confirm = cx.host.confirm();
        Ok(cx.app.remove_policy_rule(index as usize, &*confirm).await?)
    }

    /// Marks a server or tool untrusted or reviewed, or takes the mark away.
    async fn set_policy_mark(cx, mark: PolicyMark, target: Target, on: bool) -> PolicyView {
        let confirm = cx.host.confirm();
        Ok(cx.app.set_policy_mark(mark, target, on, &*confirm).await?)
    }

    /// Replaces policy.json with `text`, checked whole (refused with where and why).
    async fn replace_policy(cx, text: String) -> PolicyView {
        let confirm = cx.host.confirm();
        Ok(cx.app.replace_policy(&text, &*confirm).await?)
    }

    /// Entries of the record of every tool call, newest first.
    async fn list_audit(cx, filter: AuditFilter) -> Vec<AuditEntry> {
        Ok(cx.app.audit(filter).await?)
    }
}
