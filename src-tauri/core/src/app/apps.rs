//! MCP Apps in the running app (SEP-1865): the pages handed to the shell to serve, one token
//! per app shown (the window loads `<scheme>://…/<token>` into a sandboxed frame and never
//! sees the page's HTML), and the calls an app makes to its own server's tools — judged by the
//! conversation's approvals as a model's call is, asked in a native dialog when the policy
//! asks, refused for any other server, and paced (an app calling in a loop is stopped; one
//! dialog at a time per app).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::App;
use crate::error::{CoreError, InvalidInput};
use crate::mcp::apps::{AppDocument, McpAppView};
use crate::mcp::server::CallLimits;
use crate::policy::confirm::{Allowance, Confirm};
use crate::policy::Verdict;
use crate::store::{ApprovalScope, ToolDecision, ToolRun};

/// How many app pages are kept to serve until their frames load them (the most recently
/// shown).
const KEPT_PAGES: usize = 64;

/// The app pages the shell may serve, by token.
#[derive(Default)]
pub struct AppPages(Mutex<VecDeque<(String, AppDocument)>>);

impl AppPages {
    fn keep(&self, document: AppDocument) -> String {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let mut pages = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if pages.len() >= KEPT_PAGES {
            pages.pop_front();
        }
        pages.push_back((token.clone(), document));
        token
    }

    /// The page kept under `token`, no longer kept: a token opens its page once (a frame
    /// shown again asks for a new one), so an address seen elsewhere opens nothing.
    fn take(&self, token: &str) -> Option<AppDocument> {
        let mut pages = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = pages.iter().position(|(t, _)| t == token)?;
        pages.remove(at).map(|(_, document)| document)
    }
}

/// How many tool calls the app of one card may make within [`PACE_WINDOW`].
const CALLS_PER_WINDOW: usize = 30;
const PACE_WINDOW: Duration = Duration::from_secs(60);

/// What the apps shown have been calling, by card: how often (an app calling in a loop is
/// stopped, not followed), and whether one is waiting on the person (one dialog at a time per
/// app, not a stack of them).
#[derive(Default)]
pub struct AppCallPace(Mutex<Pace>);

#[derive(Default)]
struct Pace {
    recent: HashMap<String, VecDeque<Instant>>,
    /// When each card's app was first refused in the present window.
    refused: HashMap<String, Instant>,
    asking: HashSet<String>,
}

/// An app's call refused for its pace.
#[derive(Debug)]
struct Paced {
    why: String,
    /// The first refusal of the window (the one the audit record keeps).
    first: bool,
}

impl AppCallPace {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pace> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts a call of the app in `card`, or says why it is refused: too many calls of late.
    fn admit(&self, card: &str, now: Instant) -> Result<(), Paced> {
        let mut pace = self.lock();
        pace.recent.retain(|_, calls| {
            while calls
                .front()
                .is_some_and(|t| now.duration_since(*t) >= PACE_WINDOW)
            {
                calls.pop_front();
            }
            !calls.is_empty()
        });
        pace.refused
            .retain(|_, at| now.duration_since(*at) < PACE_WINDOW);
        let calls = pace.recent.entry(card.to_owned()).or_default();
        if calls.len() >= CALLS_PER_WINDOW {
            let first = !pace.refused.contains_key(card);
            if first {
                pace.refused.insert(card.to_owned(), now);
            }
            return Err(Paced {
                why: format!(
                    "the app asked to run tools more than {CALLS_PER_WINDOW} times in {} s",
                    PACE_WINDOW.as_secs()
                ),
                first,
            });
        }
        calls.push_back(now);
        Ok(())
    }

    /// Marks the app in `card` as waiting on the person until the guard is dropped; `None`
    /// when it already is.
    fn asking<'a>(&'a self, card: &str) -> Option<Asking<'a>> {
        self.lock().asking.insert(card.to_owned()).then(|| Asking {
            pace: self,
            card: card.to_owned(),
        })
    }
}

/// An app waiting on the person, no longer once dropped.
struct Asking<'a> {
    pace: &'a AppCallPace,
    card: String,
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.pace.lock().asking.remove(&self.card);
    }
}

impl App {
    /// The app of a finished tool call, read from its running server and kept to be served
    /// under a new token; `None` when the call's tool has no app. The view's `src` is left
    /// for the shell to fill (it knows its scheme).
    ///
    /// # Errors
    /// Not found; the server is not running; it could not give the page.
    pub async fn open_app(
        &self,
        conversation_id: &str,
        message_id: &str,
        call_id: &str,
    ) -> Result<Option<(String, McpAppView)>, CoreError> {
        let run = self
            .conversations()
            .tool_run(conversation_id, message_id, call_id)
            .await?;
        let app = self
            .host
            .running_tools()
            .into_iter()
            .find(|(server, _)| *server == run.server)
            .and_then(|(_, tools)| {
                tools
                    .iter()
                    .find(|t| t.name == run.tool)
                    .and_then(|t| t.app.clone())
            });
        let Some(uri) = app else {
            return Ok(None);
        };
        let server = self.running(&run.server)?;
        let document = crate::mcp::apps::read_app(&server, &uri, self.answer_within()).await?;
        let view = McpAppView {
            src: String::new(),
            server: run.server.clone(),
            tool: run.tool.clone(),
            resource_uri: uri,
            arguments: serde_json::from_str(&run.arguments).unwrap_or(Value::Null),
            result: run
                .result
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok())
                .unwrap_or(Value::Null),
            prefers_border: document.prefers_border,
        };
        Ok(Some((self.app_pages.keep(document), view)))
    }

    /// The page kept under `token`, for the shell to serve once.
    pub fn app_page(&self, token: &str) -> Option<AppDocument> {
        self.app_pages.take(token)
    }

    /// Runs `tool` with `arguments` for the app shown in the card of the call `call_id` (of
    /// `message_id` in `conversation_id`): only a tool of that call's own server, as the
    /// conversation's approvals say — asked with `confirm` when they ask, refused when they
    /// refuse. Returns the `tools/call` result's JSON.
    ///
    /// # Errors
    /// Not found; refused (the person said no, the tool is switched off or held back); the
    /// server failed.
    pub async fn app_call_tool(
        &self,
        conversation_id: &str,
        message_id: &str,
        call_id: &str,
        tool: &str,
        arguments: Map<String, Value>,
        confirm: &dyn Confirm,
    ) -> Result<Value, CoreError> {
        let run = self
            .conversations()
            .tool_run(conversation_id, message_id, call_id)
            .await?;
        let card = format!("{conversation_id}/{message_id}/{call_id}");
        let refused = |why: String| -> CoreError {
            InvalidInput::new(
                "tool",
                format!("The app's call to “{tool}” was not run: {why}."),
            )
            .into()
        };
        let arguments_text = Value::Object(arguments.clone()).to_string();
        let call_id = format!("app-{}", uuid::Uuid::new_v4());
        let mut record = ToolRun {
            id: ToolRun::id_for(message_id, &call_id),
            conversation_id: conversation_id.to_owned(),
            message_id: message_id.to_owned(),
            call_id,
            server: run.server.clone(),
            tool: tool.to_owned(),
            display_name: tool.to_owned(),
            arguments: arguments_text.clone(),
            asked_by: Some(crate::store::asked_by_app(&run.display_name, &run.call_id)),
            ..ToolRun::default()
        };
        if let Err(paced) = self.app_calls.admit(&card, Instant::now()) {
            // The first refusal of a window is recorded; an app calling in a loop does not
            // write a row per try.
            if paced.first {
                record.decided_by = Some("the pace of app calls".into());
                self.keep_app_call(denied(record, &paced.why)).await;
            }
            return Err(refused(paced.why));
        }
        let arguments_value = Value::Object(arguments.clone());
        let (entry, judged) = self
            .app_call_verdict(conversation_id, &run.server, tool, Some(&arguments_value))
            .await?;
        // The call is kept with the conversation's, saying which app asked, whatever happens.
        record.tool.clone_from(&entry.tool);
        record.display_name.clone_from(&entry.display_name);
        record.decided_by = Some(judged.by.clone());
        let scope = match judged.verdict {
            Verdict::Allow(scope) => scope,
            Verdict::Deny(why) => {
                self.keep_app_call(denied(record, &why)).await;
                return Err(refused(why));
            }
            Verdict::Ask => {
                let asked = Allowance::AppToolCall {
                    server: run.server.clone(),
                    tool: entry.tool.clone(),
                    arguments: arguments_text,
                };
                let Some(_asking) = self.app_calls.asking(&card) else {
                    let why = "the app is already waiting for your answer about another call";
                    self.keep_app_call(denied(record, why)).await;
                    return Err(refused(why.into()));
                };
                let because = judged.by.clone();
                record.decided_by = Some(format!("you, when asked ({because})"));
                if !confirm.allow(&asked).await {
                    self.keep_app_call(denied(record, "you said no")).await;
                    return Err(refused("you said no".into()));
                }
                ApprovalScope::Once
            }
        };
        tracing::info!(server = %run.server, tool = %entry.tool, "an MCP app runs a tool of its server");
        record.decision = Some(ToolDecision::Allowed);
        record.decision_scope = Some(scope);
        record.started_at = Some(crate::store::now_ms());
        let server = match self.running(&run.server) {
            Ok(server) => server,
            Err(e) => {
                record.is_error = true;
                record.result = Some(e.to_string());
                record.finished_at = record.started_at;
                self.keep_app_call(record).await;
                return Err(e);
            }
        };
        // Recorded as started: should Switchboard stop mid-call, the next start records it
        // as cut off (`Store::recover_unfinished`).
        let started = match self.store() {
            Ok(store) => store
                .record_tool_started(record.clone())
                .await
                .map_err(CoreError::from),
            Err(e) => Err(e),
        };
        if let Err(e) = started {
            tracing::warn!(error = %e, "an MCP app's call could not be recorded as started");
            return Err(e);
        }
        let idle = self.answer_within();
        let result = server
            .call_tool_limited(
                &entry.tool,
                arguments,
                CallLimits {
                    idle,
                    hard_max: idle * 10,
                },
                &self.quitting,
                None,
            )
            .await;
        record.finished_at = Some(crate::store::now_ms());
        let result = match result {
            Ok(result) => {
                let json = serde_json::to_value(result).unwrap_or(Value::Null);
                record.is_error = json["isError"] == Value::Bool(true);
                record.rich = crate::mcp::results::is_rich(&json);
                record.result = Some(json.to_string());
                self.keep_app_call(record).await;
                json
            }
            Err(e) => {
                record.is_error = true;
                record.result = Some(e.to_string());
                self.keep_app_call(record).await;
                return Err(e.into());
            }
        };
        Ok(result)
    }

    /// Keeps the record of an app's call; a database that fails is logged, not the app's
    /// problem (its call ran, or was refused, either way).
    async fn keep_app_call(&self, record: ToolRun) {
        let kept = match self.store() {
            Ok(store) => store.record_app_call(record).await.map_err(CoreError::from),
            Err(e) => Err(e),
        };
        if let Err(e) = kept {
            tracing::warn!(error = %e, "an MCP app's call was not recorded");
        }
    }
}

/// `record` as a call that was refused, and why, now.
fn denied(mut record: ToolRun, why: &str) -> ToolRun {
    record.decision = Some(ToolDecision::Denied);
    record.deny_reason = Some(why.to_owned());
    record.finished_at = Some(crate::store::now_ms());
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_calling_in_a_loop_is_stopped_and_let_go_a_minute_later() {
        let pace = AppCallPace::default();
        let start = Instant::now();
        for _ in 0..CALLS_PER_WINDOW {
            pace.admit("c/m/1", start).unwrap();
        }
        let refused = pace.admit("c/m/1", start).unwrap_err();
        assert!(
            refused.why.contains("more than 30 times in 60 s"),
            "{refused:?}"
        );
        assert!(refused.first, "the first refusal is the one recorded");
        let again = pace
            .admit("c/m/1", start + Duration::from_secs(1))
            .unwrap_err();
        assert!(!again.first, "a loop does not write a row per try");
        // Another card's app is counted on its own.
        pace.admit("c/m/2", start).unwrap();
        pace.admit("c/m/1", start + PACE_WINDOW).unwrap();
        assert_eq!(
            pace.lock().recent.len(),
            1,
            "cards gone quiet are forgotten"
        );
    }

    #[test]
    fn one_dialog_at_a_time_per_app() {
        let pace = AppCallPace::default();
        let first = pace.asking("c/m/1").expect("the first ask");
        assert!(pace.asking("c/m/1").is_none());
        assert!(pace.asking("c/m/2").is_some());
        drop(first);
        assert!(pace.asking("c/m/1").is_some());
    }
}
