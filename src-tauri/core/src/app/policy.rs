//! The policy files and the audit record as the window and the command line reach them: the
//! person's `policy.json` beside `mcp.json` (read whole for every run, written whole, one
//! writer at a time; a change that would let calls run without asking — a rule that allows
//! added, one that blocked or asked taken away, a mark taken off — only after the native
//! confirmation), the organisation's managed file (read, never written), and the record of
//! every call. Judging a call is [`crate::policy`]'s.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use super::App;
use crate::input::InvalidInput;
use crate::policy::confirm::{Allowance, Confirm};
use crate::policy::rules::{self, Outcome, PolicyFile, Rule, Source, Target};
use crate::policy::Policy;
use crate::store::{AuditEntry, AuditFilter};
use crate::CoreError;

/// Which list of servers and tools a mark puts one on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PolicyMark {
    /// A source of untrusted content: a turn that read from it asks before other servers' writes.
    Untrusted,
    /// Its results are shown to the person before the model reads them.
    Review,
}

/// The policy as the window shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct PolicyView {
    /// Where the person's file is.
    pub path: String,
    pub file: PolicyFile,
    /// The organisation's policy, merged from its files (empty when there is none).
    pub managed: PolicyFile,
    /// The managed files read, in order.
    pub managed_paths: Vec<String>,
    /// Each of the person's rules in words, in the file's order.
    pub said: Vec<String>,
    /// Each of the organisation's rules in words.
    pub managed_said: Vec<String>,
}

fn policy_invalid(file: &str, e: &rules::PolicyError) -> CoreError {
    InvalidInput::new("policy", format!("{file}: {e}")).into()
}

fn unreadable(path: &std::path::Path, e: &std::io::Error) -> CoreError {
    CoreError::Io {
        what: format!("the policy file {}", path.display()),
        detail: e.to_string(),
    }
}

/// A file's text, or `None` when there is no such file.
fn read_if_there(path: &std::path::Path) -> Result<Option<String>, CoreError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unreadable(path, &e)),
    }
}

/// Each server and tool a rule names (in either file) whose calls, whatever their arguments,
/// `after` lets through more easily than `before` did — blocked before and asked now, asked
/// before and left to standing approvals now, and so on — in words.
fn loosened_tools(before: &PolicyFile, after: &PolicyFile) -> Result<Vec<String>, CoreError> {
    let compile = |f: &PolicyFile| {
        f.compile(Source::User)
            .map_err(|e| policy_invalid("policy.json", &e))
    };
    let (was, now) = (compile(before)?, compile(after)?);
    // Strictness: block, ask, no rule (standing approvals decide), allow.
    let rank = |hit: Option<rules::RuleHit>| match hit.map(|h| h.outcome) {
        Some(Outcome::Block) => 3,
        Some(Outcome::Ask) => 2,
        None => 1,
        Some(Outcome::Allow) => 0,
    };
    let word = |rank: u8| {
        [
            "allowed",
            "left to your standing approvals",
            "asked about",
            "blocked",
        ][usize::from(rank)]
    };
    let mut named: Vec<(String, String)> = before
        .rules
        .iter()
        .chain(&after.rules)
        .map(|r| (r.server.clone(), r.tool.clone().unwrap_or_default()))
        .collect();
    named.sort();
    named.dedup();
    let mut loosened = Vec::new();
    for (server, tool) in named {
        let judged = |c: &rules::Compiled| {
            c.blocks_outright(&server, &tool)
                .or_else(|| c.judge(&server, &tool, None, None))
        };
        let (was_hit, now_hit) = (judged(&was), judged(&now));
        let (from, to) = (rank(was_hit.clone()), rank(now_hit.clone()));
        if to < from {
            let what = if tool.is_empty() {
                format!("every tool of {server}")
            } else {
                format!("{server} · {tool}")
            };
            let new_rule = |hit: &rules::RuleHit| {
                !before.rules.iter().any(|r| rules::describe(r) == hit.words)
            };
            loosened.push(match (now_hit, was_hit) {
                (Some(now), _) if new_rule(&now) => {
                    format!("add: {} (until now {what} was {})", now.words, word(from))
                }
                (None, Some(was)) => format!("take away: {}", was.words),
                _ => format!("{what}: {} until now, {} after", word(from), word(to)),
            });
        }
    }
    Ok(loosened)
}

/// The person's rules from the text of their file (none without one).
fn user_file(text: Option<&str>) -> Result<PolicyFile, CoreError> {
    match text {
        Some(text) => PolicyFile::parse(text).map_err(|e| policy_invalid("policy.json", &e)),
        None => Ok(PolicyFile::default()),
    }
}

/// The organisation's files merged, and those there were.
fn merge_managed(
    files: &[(PathBuf, Option<String>)],
) -> Result<(PolicyFile, Vec<PathBuf>), CoreError> {
    let mut merged = PolicyFile::default();
    let mut read = Vec::new();
    for (path, text) in files {
        let Some(text) = text else {
            continue;
        };
        let file: PolicyFile = serde_json::from_str(text).map_err(|e| {
            InvalidInput::new(
                "policy",
                format!(
                    "{}: line {}, column {}: {e}",
                    path.display(),
                    e.line(),
                    e.column()
                ),
            )
        })?;
        file.compile(Source::Managed)
            .map_err(|e| policy_invalid(&path.display().to_string(), &e))?;
        merged.rules.extend(file.rules);
        merged.untrusted.extend(file.untrusted);
        merged.review.extend(file.review);
        merged.allowed_servers = match (merged.allowed_servers.take(), file.allowed_servers) {
            (Some(a), Some(b)) => Some(
                a.into_iter()
                    .filter(|s| b.iter().any(|t| t.eq_ignore_ascii_case(s)))
                    .collect(),
            ),
            (a, b) => a.or(b),
        };
        read.push(path.clone());
    }
    Ok((merged, read))
}

/// The texts of the policy files, as read: the person's, then each managed file found (`None`,
/// no file there).
type Texts = Vec<Option<String>>;

/// The policy as last compiled, kept while its files say the same: a run start, the Tools
/// panel and each judged call ask for it, and compiling 1,000 rules takes about 11 ms where
/// reading and comparing the files takes microseconds. Compared by text, not by time stamp:
/// a file changed within the same second at the same size is a change.
#[derive(Default)]
pub(super) struct CompiledPolicy(Mutex<Option<(Texts, Arc<Policy>)>>);

impl CompiledPolicy {
    fn get(&self, texts: &Texts) -> Option<Arc<Policy>> {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.as_ref()
            .filter(|(read, _)| read == texts)
            .map(|(_, p)| Arc::clone(p))
    }

    fn keep(&self, texts: Texts, policy: Arc<Policy>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some((texts, policy));
    }
}

impl App {
    /// The person's `policy.json`, beside `mcp.json`.
    pub fn policy_file(&self) -> PathBuf {
        self.paths.config_dir.join(rules::FILE_NAME)
    }

    /// The person's rules as written (none without a file).
    ///
    /// # Errors
    /// A file that cannot be read, or one with a bad rule (where and why).
    pub fn user_policy(&self) -> Result<PolicyFile, CoreError> {
        user_file(read_if_there(&self.policy_file())?.as_deref())
    }

    /// The organisation's files: each managed folder's `policy.json` and its text, where
    /// there is one.
    fn managed_texts(&self) -> Result<Vec<(PathBuf, Option<String>)>, CoreError> {
        self.paths
            .managed_dirs()
            .into_iter()
            .map(|dir| {
                let path = dir.join(rules::FILE_NAME);
                let text = read_if_there(&path)?;
                Ok((path, text))
            })
            .collect()
    }

    /// The organisation's policy, its files merged (rules one after another, the lists
    /// joined, the allowed servers those every file allows), and the files read.
    ///
    /// # Errors
    /// A managed file that cannot be read or has a bad rule: no call is judged without it.
    pub fn managed_policy(&self) -> Result<(PolicyFile, Vec<PathBuf>), CoreError> {
        merge_managed(&self.managed_texts()?)
    }

    /// Both files, ready to judge calls: compiled when they changed since the last call, the
    /// same compiled policy otherwise.
    ///
    /// # Errors
    /// Either file unreadable or with a bad rule: the run does not start (no call is judged
    /// by half a policy), and the message says where and why.
    pub fn policy(&self) -> Result<Arc<Policy>, CoreError> {
        let user = read_if_there(&self.policy_file())?;
        let managed = self.managed_texts()?;
        let texts: Texts = std::iter::once(user.clone())
            .chain(managed.iter().map(|(_, t)| t.clone()))
            .collect();
        if let Some(policy) = self.compiled_policy.get(&texts) {
            return Ok(policy);
        }
        let user = user_file(user.as_deref())?
            .compile(Source::User)
            .map_err(|e| policy_invalid("policy.json", &e))?;
        let managed = merge_managed(&managed)?
            .0
            .compile(Source::Managed)
            .map_err(|e| policy_invalid("the organisation's policy", &e))?;
        let protected = vec![self.paths.config_dir.clone(), self.paths.data_dir.clone()];
        let policy = Arc::new(Policy {
            user,
            managed,
            protected,
        });
        self.compiled_policy.keep(texts, Arc::clone(&policy));
        Ok(policy)
    }

    /// The policy as the window and `policy list` show it.
    ///
    /// # Errors
    /// As [`App::policy`].
    pub fn policy_view(&self) -> Result<PolicyView, CoreError> {
        let file = self.user_policy()?;
        let (managed, paths) = self.managed_policy()?;
        Ok(PolicyView {
            path: self.policy_file().display().to_string(),
            said: file.rules.iter().map(rules::describe).collect(),
            managed_said: managed.rules.iter().map(rules::describe).collect(),
            file,
            managed,
            managed_paths: paths.iter().map(|p| p.display().to_string()).collect(),
        })
    }

    /// Whether the organisation allows a server named `name` to be added or run.
    ///
    /// # Errors
    /// Refused, naming the managed file; the managed file unreadable.
    pub fn check_server_allowed(&self, name: &str) -> Result<(), CoreError> {
        let (managed, paths) = self.managed_policy()?;
        let compiled = managed
            .compile(Source::Managed)
            .map_err(|e| policy_invalid("the organisation's policy", &e))?;
        if compiled.server_refused(name) {
            let file = paths
                .last()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            return Err(InvalidInput::new(
                "name",
                format!(
                    "Your organisation's policy ({file}) does not allow the server “{}”: it lists \
                     the servers that may be added.",
                    crate::text::escape_hidden(name)
                ),
            )
            .into());
        }
        Ok(())
    }

    /// Writes the person's file whole after checking it; a rule that lets calls run without
    /// asking and is not in the file yet is put to `confirm` first, and one the organisation's
    /// policy would overrule is refused, saying so.
    async fn write_policy(
        &self,
        file: PolicyFile,
        confirm: &dyn Confirm,
    ) -> Result<PolicyView, CoreError> {
        file.compile(Source::User)
            .map_err(|e| policy_invalid("policy.json", &e))?;
        let before = self.user_policy()?;
        let (managed, _) = self.managed_policy()?;
        let managed = managed
            .compile(Source::Managed)
            .map_err(|e| policy_invalid("the organisation's policy", &e))?;
        // Rules without tests: what each server and tool named comes to, before and after.
        let mut loosening = loosened_tools(&before, &file)?;
        // Rules with tests: one that blocked or asked, taken away, or one that allows, added.
        for rule in before.rules.iter().filter(|r| !file.rules.contains(r)) {
            if rule.outcome != Outcome::Allow && !rule.when.is_empty() {
                loosening.push(format!("take away: {}", rules::describe(rule)));
            }
        }
        for (list, was, now) in [
            ("untrusted content", &before.untrusted, &file.untrusted),
            ("results reviewed first", &before.review, &file.review),
        ] {
            for t in was.iter().filter(|t| !now.contains(t)) {
                let named = match &t.tool {
                    Some(tool) => format!("{} · {tool}", t.server),
                    None => t.server.clone(),
                };
                loosening.push(format!("take {named} off the list of {list}"));
            }
        }
        for rule in file.rules.iter().filter(|r| !before.rules.contains(r)) {
            let tool = rule.tool.as_deref().unwrap_or_default();
            if let Some(hit) = managed
                .judge(&rule.server, tool, None, None)
                .or_else(|| managed.blocks_outright(&rule.server, tool))
                .filter(|h| h.outcome > rule.outcome)
            {
                return Err(InvalidInput::new(
                    "policy",
                    format!(
                        "Your organisation's policy decides this, and a rule of yours can only \
                         be stricter: {}.",
                        hit.said
                    ),
                )
                .into());
            }
            if rule.outcome == Outcome::Allow && !rule.when.is_empty() {
                loosening.push(format!("add: {}", rules::describe(rule)));
            }
        }
        if !loosening.is_empty()
            && !confirm
                .allow(&Allowance::PolicyRules { rules: loosening })
                .await
        {
            return Err(CoreError::NotConfirmed {
                what: "the change to the rules".into(),
            });
        }
        let path = self.policy_file();
        let text = file.to_text();
        tokio::task::spawn_blocking(move || crate::paths::write_whole(&path, text.as_bytes()))
            .await
            .map_err(std::io::Error::other)
            .and_then(|r| r)
            .map_err(|e| unreadable(&self.policy_file(), &e))?;
        tracing::info!(rules = file.rules.len(), "policy.json written");
        self.policy_view()
    }

    /// Changes the person's file as `change` says, one writer at a time.
    async fn change_policy(
        &self,
        confirm: &dyn Confirm,
        change: impl FnOnce(&mut PolicyFile) -> Result<(), CoreError>,
    ) -> Result<PolicyView, CoreError> {
        let _one_at_a_time = self.policy_writes.lock().await;
        let mut file = self.user_policy()?;
        change(&mut file)?;
        self.write_policy(file, confirm).await
    }

    /// Allow, ask or block a server's tools (`tool` `None`) or one tool, whatever their
    /// arguments; `None` takes that rule away. Replaces a rule on the same server and tool
    /// without tests.
    ///
    /// # Errors
    /// Refused by the organisation's policy; not confirmed; the file.
    pub async fn set_tool_policy(
        &self,
        server: &str,
        tool: Option<&str>,
        outcome: Option<Outcome>,
        confirm: &dyn Confirm,
    ) -> Result<PolicyView, CoreError> {
        let server = server.trim().to_owned();
        let tool = tool
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        self.change_policy(confirm, |file| {
            let same = |r: &Rule| {
                r.server.eq_ignore_ascii_case(&server) && r.tool == tool && r.when.is_empty()
            };
            let at = file.rules.iter().position(same);
            match (at, outcome) {
                (Some(i), Some(outcome)) => file.rules[i].outcome = outcome,
                (Some(i), None) => {
                    file.rules.remove(i);
                }
                (None, Some(outcome)) => file.rules.push(Rule {
                    server: server.clone(),
                    tool: tool.clone(),
                    when: Default::default(),
                    outcome,
                    note: None,
                }),
                (None, None) => {}
            }
            Ok(())
        })
        .await
    }

    /// Adds a rule, in place of one on the same server, tool and tests.
    ///
    /// # Errors
    /// A bad rule (where and why); refused by the organisation's policy; not confirmed.
    pub async fn add_policy_rule(
        &self,
        rule: Rule,
        confirm: &dyn Confirm,
    ) -> Result<PolicyView, CoreError> {
        self.change_policy(confirm, |file| {
            // A rule on the same server, tool and tests is replaced: two such rules would
            // leave the stricter deciding, and the one just made would do nothing.
            let same = file.rules.iter().position(|r| {
                r.server.eq_ignore_ascii_case(&rule.server)
                    && r.tool == rule.tool
                    && r.when == rule.when
            });
            match same {
                Some(i) => file.rules[i] = rule,
                None => file.rules.push(rule),
            }
            Ok(())
        })
        .await
    }

    /// Takes away the rule at `index` (0-based, as `policy list --json` numbers them from 0);
    /// one that blocked or asked only after `confirm`.
    ///
    /// # Errors
    /// No such rule; not confirmed; the file.
    pub async fn remove_policy_rule(
        &self,
        index: usize,
        confirm: &dyn Confirm,
    ) -> Result<PolicyView, CoreError> {
        self.change_policy(confirm, |file| {
            if index >= file.rules.len() {
                return Err(CoreError::NotFound {
                    what: format!("rule {} of policy.json", index + 1),
                });
            }
            file.rules.remove(index);
            Ok(())
        })
        .await
    }

    /// Puts a server (or one tool) on the untrusted or reviewed list, or takes it off (only
    /// after `confirm`).
    ///
    /// # Errors
    /// Not confirmed; the file.
    pub async fn set_policy_mark(
        &self,
        mark: PolicyMark,
        target: Target,
        on: bool,
        confirm: &dyn Confirm,
    ) -> Result<PolicyView, CoreError> {
        if target.server.trim().is_empty() {
            return Err(InvalidInput::new("server", "Name a server.").into());
        }
        self.change_policy(confirm, |file| {
            let list = match mark {
                PolicyMark::Untrusted => &mut file.untrusted,
                PolicyMark::Review => &mut file.review,
            };
            list.retain(|t| t != &target);
            if on {
                list.push(target);
            }
            Ok(())
        })
        .await
    }

    /// Replaces the person's file with `text` (the window's editor): checked whole, refused
    /// with where and why, new allowing rules confirmed.
    ///
    /// # Errors
    /// A bad rule; refused by the organisation's policy; not confirmed; the file.
    pub async fn replace_policy(
        &self,
        text: &str,
        confirm: &dyn Confirm,
    ) -> Result<PolicyView, CoreError> {
        let file = PolicyFile::parse(text).map_err(|e| policy_invalid("policy.json", &e))?;
        let _one_at_a_time = self.policy_writes.lock().await;
        self.write_policy(file, confirm).await
    }

    /// Entries of the audit record, newest first.
    ///
    /// # Errors
    /// The database.
    pub async fn audit(&self, filter: AuditFilter) -> Result<Vec<AuditEntry>, CoreError> {
        Ok(self.store()?.audit(filter).await?)
    }

    /// Keeps a call made by `switchboard mcp call` in the audit record: `ran` is when it
    /// started and its whole result (or error), `None` when it did not run. A record that
    /// cannot be written is logged: the call happened either way.
    pub async fn audit_cli_call(
        &self,
        server: &str,
        tool: &str,
        arguments: &str,
        ran: Option<(i64, &str)>,
        is_error: Option<bool>,
        decided_by: &str,
    ) {
        let decision = if ran.is_some() {
            crate::store::AuditDecision::Allowed
        } else {
            crate::store::AuditDecision::Denied
        };
        let entry = AuditEntry::of_cli_call(
            server,
            tool,
            arguments,
            decision,
            decided_by,
            ran.map(|(at, _)| at),
            crate::store::now_ms(),
            ran.map(|(_, result)| result),
            is_error.unwrap_or(false),
        );
        let kept = match self.store() {
            Ok(store) => store.append_audit(entry).await.map_err(CoreError::from),
            Err(e) => Err(e),
        };
        if let Err(e) = kept {
            tracing::warn!(error = %e, "a command line call was not recorded in the audit record");
        }
    }

    /// Deletes the audit entries older than Settings' retention; how many went.
    ///
    /// # Errors
    /// The database.
    pub async fn prune_audit(&self) -> Result<usize, CoreError> {
        let days = self.settings().audit_retention_days;
        Ok(self.store()?.prune_audit(days).await?)
    }
}
