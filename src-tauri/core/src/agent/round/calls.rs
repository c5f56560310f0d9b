//! The calls of one answer on their way to a decision: each proposed to the window, checked by
//! the permission pipeline, the undecided ones put to the person in one dialog; then the
//! round as a whole (decide, record what will not run, run the rest) and a Retry's own round.

use std::collections::HashMap;

use serde_json::Value;

use super::{Answer, CallOutcome, Effect, End, Run, ToolsOutcome};
use crate::agent::approval::{ApprovalRequest, Decision};
use crate::agent::{history, status, RetryCall};
use crate::events::{ApprovalItem, ProposedCall, RunEvent, StopReason};
use crate::mcp::catalogue::CatalogueTool;
use crate::policy::{self, CallFacts, Grant, Verdict};
use crate::providers::ToolCall;
use crate::store::{new_id, ApprovalScope, Finish, NewMessage, Role, ToolDecision};

/// Where a call stands.
pub(super) enum CallState {
    /// Never up for a decision (a tool that does not exist, arguments that are not JSON): the
    /// error the model reads.
    Invalid(String),
    /// For the person to decide.
    Undecided,
    Allowed(ApprovalScope),
    /// Who or what denied it, and why (what the model reads).
    Denied(Option<ApprovalScope>, String),
}

impl CallState {
    /// The decision as recorded: whether, by whom, and why not.
    pub(super) fn decision(&self) -> (Option<ToolDecision>, Option<ApprovalScope>, Option<String>) {
        match self {
            CallState::Allowed(scope) => (Some(ToolDecision::Allowed), Some(*scope), None),
            CallState::Denied(scope, why) => {
                (Some(ToolDecision::Denied), *scope, Some(why.clone()))
            }
            CallState::Invalid(_) | CallState::Undecided => (None, None, None),
        }
    }
}

/// One call of the round and where it stands.
pub(super) struct Call<'t> {
    pub call: &'t ToolCall,
    /// `None` for a tool the model made up.
    pub tool: Option<CatalogueTool>,
    pub state: CallState,
    /// What decided (or asks), in the person's words ([`policy::Judgement::by`]).
    pub by: Option<String>,
    /// The rule the dialog offers to make from this call.
    pub suggested: Option<policy::rules::Rule>,
}

impl Run<'_> {
    /// The calls of one answer: proposed, decided (asking the person where the pipeline says
    /// so), the allowed ones run concurrently, and every result saved before it is shown.
    pub async fn use_tools(&mut self, answer: &Answer) -> ToolsOutcome {
        let mut calls: Vec<Call<'_>> = answer
            .calls
            .iter()
            .map(|call| self.propose(answer, call))
            .collect();
        self.ask_person(&mut calls).await;
        // What is shown is written first: a call that will not run is recorded, then shown as
        // decided; a call that runs is recorded as it finishes, then shown finished.
        let mut outcomes: Vec<Option<CallOutcome>> = Vec::with_capacity(calls.len());
        for call in &calls {
            let done = match &call.state {
                CallState::Allowed(_) => None,
                CallState::Invalid(why) => Some(CallOutcome::error(why.clone(), Effect::Failed)),
                CallState::Denied(_, why) => Some(CallOutcome::error(why.clone(), Effect::Neutral)),
                CallState::Undecided => {
                    unreachable!("every call is decided once the person answered")
                }
            };
            if let Some(done) = &done {
                self.record(answer, call, done).await;
            }
            self.announce_decision(call);
            outcomes.push(done);
        }
        self.execute_allowed(answer, &calls, &mut outcomes).await;
        // What an untrusted source returned is in the model's reading from now on.
        for (server, _) in calls
            .iter()
            .filter(|c| matches!(c.state, CallState::Allowed(_)))
            .filter_map(|c| c.tool.as_ref().map(|t| policy_target(c.call, t)))
            .filter(|(server, tool)| self.ctx.setup.policy.is_untrusted(server, tool))
        {
            if !self.tainted_by.iter().any(|s| s == server) {
                self.tainted_by.push(server.to_owned());
            }
        }
        let mut outcome = ToolsOutcome {
            effects: Vec::new(),
            last_error: None,
            unwritten: self.ctx.unwritten().map(str::to_owned),
        };
        for done in outcomes.into_iter().flatten() {
            if done.effect == Effect::Failed {
                outcome.last_error = Some(done.content.clone());
            }
            outcome.effects.push(done.effect);
        }
        if !self.ctx.cancelled() {
            self.ctx.status(status::READING);
        }
        outcome
    }

    /// Runs a failed call again, as the person asked from its card, in an answer of its own:
    /// through the same pipeline as the model's calls (so the person may be asked again).
    /// The model goes on only when the call succeeded.
    ///
    /// # Errors
    /// How the run ends instead: stopped, the call failed again or did not run, the database.
    pub async fn retry_call(&mut self, retry: &RetryCall) -> Result<(), End> {
        let mut start = NewMessage::text(Role::Assistant, "");
        start.tool_calls = Some(history::stored(std::slice::from_ref(&retry.call)));
        start.finish_reason = Some(Finish::ToolCalls);
        let saved = match self.save(start).await {
            Ok(saved) => saved,
            Err(e) => return Err(self.ctx.failed(&e.to_string())),
        };
        self.ctx.emit(RunEvent::AnswerStarted {
            message: saved.clone(),
        });
        let answer = Answer {
            message_id: saved.id.clone(),
            calls: vec![retry.call.clone()],
            retry_of: Some(retry.of.clone()),
        };
        self.ctx.emit(RunEvent::MessageSaved { message: saved });
        let outcome = self.use_tools(&answer).await;
        if let Some(said) = &outcome.unwritten {
            return Err(self.ctx.failed(said));
        }
        if self.ctx.cancelled() {
            return Err((StopReason::Cancelled, None));
        }
        if outcome.effects.first() == Some(&Effect::Succeeded) {
            return Ok(());
        }
        let message = match outcome.last_error {
            Some(error) => {
                format!("The call failed again, so the model was not asked to go on: {error}")
            }
            None => "The call did not run, so the model was not asked to go on.".to_owned(),
        };
        Err((StopReason::RetryFailed, Some(message)))
    }

    /// Announces a call and checks what can be checked without asking anyone.
    fn propose<'t>(&self, answer: &Answer, call: &'t ToolCall) -> Call<'t> {
        let ctx = &self.ctx;
        let tool = ctx.by_wire.get(&call.name).map(|&i| &ctx.setup.tools[i]);
        ctx.emit(RunEvent::ToolCallProposed {
            call: ProposedCall {
                call_id: call.id.clone(),
                message_id: answer.message_id.clone(),
                wire_name: call.name.clone(),
                server: tool.map(|t| t.server.clone()),
                tool: tool.map(|t| t.tool.clone()),
                display_name: tool.map_or_else(|| call.name.clone(), |t| t.display_name.clone()),
                arguments: call.raw_arguments.clone(),
                retry_of: answer.retry_of.clone(),
            },
        });
        let mut by = None;
        let mut suggested = None;
        let state = match (tool, &call.arguments) {
            (None, _) => CallState::Invalid(self.unknown_tool(&call.name)),
            (Some(_), Err(why)) => CallState::Invalid(format!(
                "The call to `{}` was not run: {why}. Send the arguments again as one JSON object that matches the tool's input schema.",
                call.name
            )),
            // Switchboard's search and reader read only what the conversation allowed already;
            // loading a server's skill reads that server's resources, which its rules may ask
            // about (or block).
            (Some(t), Ok(arguments))
                if crate::agent::builtin::needs_no_approval(&t.server, &t.tool) =>
            {
                let rule = served_skill_of(t, arguments).and_then(|server| {
                    let read = crate::agent::builtin::READ_RESOURCE;
                    let policy = &ctx.setup.policy;
                    policy
                        .blocked(server, read)
                        .or_else(|| policy.rule_for(server, read, Some(arguments), None))
                });
                match rule {
                    Some(hit) if hit.outcome == policy::rules::Outcome::Block => {
                        by = Some(hit.said.clone());
                        CallState::Denied(
                            Some(ApprovalScope::Policy),
                            format!("The call was not run: it is blocked by {}.", hit.said),
                        )
                    }
                    Some(hit) if hit.outcome == policy::rules::Outcome::Ask => {
                        by = Some(hit.said);
                        CallState::Undecided
                    }
                    _ => {
                        by = Some(
                            "Switchboard's own tool, reading what the conversation holds"
                                .to_owned(),
                        );
                        CallState::Allowed(crate::store::ApprovalScope::Policy)
                    }
                }
            }
            (Some(t), Ok(arguments)) => {
                let rules = ctx.setup.rules.get(&t.server);
                let facts = CallFacts {
                    tool: t,
                    trust: rules.map(|r| r.trust).unwrap_or_default(),
                    auto_approve: ctx.setup.auto_approve
                        && !crate::agent::builtin::not_auto_approved(&t.server, &t.tool),
                    standing: &self.standing,
                    arguments: Some(arguments),
                    policy: &ctx.setup.policy,
                    roots: rules.map_or(&[][..], |r| r.roots.as_slice()),
                    tainted_by: &self.tainted_by,
                };
                let mut judged = policy::judge(&facts);
                // Reading a resource is judged by the rules of the server it reads from too.
                if let Some(server) = read_resource_of(t, arguments) {
                    judged = match resource_verdict(t, server, arguments, &ctx.setup.policy) {
                        Some(refused) => refused,
                        None => judged,
                    };
                }
                // A skill's script asks each time: a grant, a rule that allows or
                // auto-approval does not run it unasked (a rule that blocks it stands).
                let each_time = crate::agent::builtin::asks_every_time(&t.server, &t.tool);
                if each_time && !matches!(judged.verdict, Verdict::Deny(_)) {
                    judged.verdict = Verdict::Ask;
                    judged.by = "a skill's script: you are asked before each run".to_owned();
                }
                by = Some(judged.by);
                match judged.verdict {
                    Verdict::Allow(scope) => CallState::Allowed(scope),
                    Verdict::Ask => {
                        if !each_time {
                            suggested =
                                policy::rules::suggest(&t.server, &t.tool, Some(arguments));
                        }
                        CallState::Undecided
                    }
                    Verdict::Deny(why) => CallState::Denied(Some(ApprovalScope::Policy), why),
                }
            }
        };
        Call {
            call,
            tool: tool.cloned(),
            state,
            by,
            suggested,
        }
    }

    fn unknown_tool(&self, name: &str) -> String {
        let ctx = &self.ctx;
        if let Some(rule) = ctx.setup.blocked.get(name) {
            return format!("The call to `{name}` was not run: the tool is blocked by {rule}.");
        }
        let offered = ctx.offer().offered(&ctx.setup.tools, ctx.own, false);
        let names: Vec<&str> = offered
            .iter()
            .take(50)
            .map(|&i| ctx.setup.tools[i].wire_name.as_str())
            .collect();
        if names.is_empty() {
            format!("There is no tool named `{name}`: no tools are available in this conversation.")
        } else {
            format!(
                "There is no tool named `{name}`. The tools you can use are: {}.",
                names.join(", ")
            )
        }
    }

    /// Asks the person about every undecided call, in one request, and applies the answers.
    /// An answer for a call not asked about is ignored; a call without an answer (or a run
    /// stopped while waiting) is denied.
    async fn ask_person(&mut self, calls: &mut [Call<'_>]) {
        let items: Vec<ApprovalItem> = calls
            .iter()
            .filter(|c| matches!(c.state, CallState::Undecided))
            .filter_map(|c| {
                let tool = c.tool.as_ref()?;
                Some(ApprovalItem {
                    call_id: c.call.id.clone(),
                    server: tool.server.clone(),
                    tool: tool.tool.clone(),
                    display_name: tool.display_name.clone(),
                    description: tool.description.clone(),
                    arguments: pretty(c.call.arguments.as_ref().ok()),
                    destructive: policy::is_destructive(tool),
                    asked_because: c.by.clone().unwrap_or_default(),
                    suggested_rule: c.suggested.clone(),
                    once_only: crate::agent::builtin::asks_every_time(&tool.server, &tool.tool),
                })
            })
            .collect();
        if items.is_empty() {
            return;
        }
        let request = ApprovalRequest {
            request_id: new_id(),
            conversation_id: self.ctx.setup.conversation_id.clone(),
            calls: items.clone(),
            asked_by: None,
        };
        self.ctx.emit(RunEvent::ApprovalRequired {
            request_id: request.request_id.clone(),
            calls: items,
        });
        self.ctx.status(status::WAITING_FOR_YOU);
        let answers = tokio::select! {
            answers = self.ctx.services.approver.ask(request) => answers,
            () = self.ctx.cancel.cancelled() => Vec::new(),
        };
        let by_call: HashMap<&str, _> = answers.iter().map(|a| (a.call_id.as_str(), a)).collect();
        for call in calls
            .iter_mut()
            .filter(|c| matches!(c.state, CallState::Undecided))
        {
            let Some(tool) = &call.tool else { continue };
            let Some(answer) = by_call.get(call.call.id.as_str()) else {
                let why = if self.ctx.cancelled() {
                    "The run was stopped before the user answered; the call did not run."
                } else {
                    "The user gave no answer; the call did not run."
                };
                call.state = CallState::Denied(None, why.to_owned());
                call.by = Some(if self.ctx.cancelled() {
                    "the run was stopped while you were asked".to_owned()
                } else {
                    "you gave no answer".to_owned()
                });
                continue;
            };
            let asked = call.by.take().unwrap_or_default();
            call.by = Some(format!("you, when asked ({asked})"));
            // A call asked about every time is allowed once, whatever wider answer came.
            let decision = match answer.decision {
                Decision::AllowConversation | Decision::AllowAlways
                    if crate::agent::builtin::asks_every_time(&tool.server, &tool.tool) =>
                {
                    Decision::AllowOnce
                }
                decision => decision,
            };
            call.state = match decision {
                Decision::AllowOnce => CallState::Allowed(ApprovalScope::Once),
                Decision::AllowConversation => {
                    self.stand(tool, Grant::Conversation).await;
                    CallState::Allowed(ApprovalScope::Conversation)
                }
                Decision::AllowAlways => {
                    self.stand(tool, Grant::Always).await;
                    CallState::Allowed(ApprovalScope::Always)
                }
                Decision::Deny => {
                    let reason = answer
                        .reason
                        .as_deref()
                        .map(str::trim)
                        .filter(|r| !r.is_empty());
                    let text = match reason {
                        Some(r) => format!("The user denied this call. Their reason: {r}"),
                        None => "The user denied this call.".to_owned(),
                    };
                    CallState::Denied(Some(ApprovalScope::Once), text)
                }
            };
        }
    }

    /// Lets `tool` run without asking from now on, as `grant` says ([`Standing::grant`]), and
    /// saves the approval.
    async fn stand(&mut self, tool: &CatalogueTool, grant: Grant) {
        let kept_for = self.standing.grant(tool, grant);
        let saved = self
            .ctx
            .services
            .store
            .add_tool_approval(tool.server.clone(), tool.tool.clone(), kept_for)
            .await;
        if let Err(e) = saved {
            tracing::warn!(error = %e, "cannot save a standing tool approval");
        }
    }

    /// Shows a call as allowed or denied (an unknown tool or bad arguments were never up for a
    /// decision).
    fn announce_decision(&self, call: &Call<'_>) {
        let (decision, scope, reason) = match &call.state {
            CallState::Allowed(scope) => (ToolDecision::Allowed, Some(*scope), None),
            CallState::Denied(scope, why) => (ToolDecision::Denied, *scope, Some(why.clone())),
            CallState::Invalid(_) | CallState::Undecided => return,
        };
        self.ctx.emit(RunEvent::ToolDecided {
            call_id: call.call.id.clone(),
            decision,
            scope,
            reason,
            decided_by: call.by.clone(),
        });
    }
}

/// The server a call of Switchboard's `read_resource` reads from, when `tool` is that.
pub(super) fn read_resource_of<'v>(tool: &CatalogueTool, arguments: &'v Value) -> Option<&'v str> {
    (tool.server == crate::agent::builtin::SERVER
        && tool.tool == crate::agent::builtin::READ_RESOURCE)
        .then(|| {
            arguments
                .get("server")
                .and_then(Value::as_str)
                .unwrap_or_default()
        })
}

/// The server a call of Switchboard's `load_skill` reads from, when it loads a server's skill
/// (its name is the server's, a "/", then the skill's path there).
fn served_skill_of<'v>(tool: &CatalogueTool, arguments: &'v Value) -> Option<&'v str> {
    (tool.server == crate::agent::builtin::SERVER && tool.tool == crate::agent::builtin::LOAD_SKILL)
        .then(|| arguments.get("name").and_then(Value::as_str))
        .flatten()
        .and_then(|name| name.split_once('/'))
        .map(|(server, _)| server)
}

/// The server and tool the policy judges a call as: a resource read, or the load of a server's
/// skill, as a read of that server's resources (its rules, whether it is untrusted or
/// reviewed), any other call as itself.
pub(super) fn policy_target<'t>(call: &'t ToolCall, tool: &'t CatalogueTool) -> (&'t str, &'t str) {
    let arguments = call.arguments.as_ref().ok();
    match arguments.and_then(|a| read_resource_of(tool, a).or_else(|| served_skill_of(tool, a))) {
        Some(server) => (server, crate::agent::builtin::READ_RESOURCE),
        None => (&tool.server, &tool.tool),
    }
}

/// What the rules of `server` say of reading one of its resources, when they say more than
/// the built-in tool's own verdict: a server not offered for reading is refused; a rule that
/// blocks or asks (server-wide, or on `read_resource`) stands; one that allows lets it run.
fn resource_verdict(
    tool: &CatalogueTool,
    server: &str,
    arguments: &Value,
    policy: &policy::Policy,
) -> Option<policy::Judgement> {
    let offered = tool.input_schema["properties"]["server"]["enum"]
        .as_array()
        .is_some_and(|servers| servers.iter().any(|s| s.as_str() == Some(server)));
    if !offered {
        let why = format!(
            "The call was not run: “{}” is not among the servers whose resources you can read.",
            crate::text::one_line(server, 80)
        );
        return Some(policy::Judgement {
            verdict: Verdict::Deny(why.clone()),
            by: why,
            rule: None,
        });
    }
    let read = crate::agent::builtin::READ_RESOURCE;
    let hit = policy
        .blocked(server, read)
        .or_else(|| policy.rule_for(server, read, Some(arguments), None))?;
    let verdict = match hit.outcome {
        policy::rules::Outcome::Block => Verdict::Deny(format!(
            "The call was not run: it is blocked by {}.",
            hit.said
        )),
        policy::rules::Outcome::Ask => Verdict::Ask,
        policy::rules::Outcome::Allow => Verdict::Allow(ApprovalScope::Policy),
    };
    Some(policy::Judgement {
        verdict,
        by: hit.said.clone(),
        rule: Some(hit),
    })
}

/// Arguments as the person reads them in the dialog: pretty-printed JSON.
fn pretty(arguments: Option<&Value>) -> String {
    arguments
        .and_then(|a| serde_json::to_string_pretty(a).ok())
        .unwrap_or_else(|| "{}".to_owned())
}
