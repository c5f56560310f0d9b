//! MCP Apps in the running app (SEP-1865): the pages handed to the shell to serve, one token
//! per app shown (the window loads `<scheme>://…/<token>` into a sandboxed frame and never
//! sees the page's HTML), and the calls an app makes to its own server's tools — judged by the
//! conversation's approvals as a model's call is, asked in a native dialog when the policy
//! asks, refused for any other server.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::App;
use crate::error::{CoreError, InvalidInput};
use crate::mcp::apps::{AppDocument, McpAppView};
use crate::mcp::server::CallLimits;
use crate::policy::confirm::{Allowance, Confirm};
use crate::policy::Verdict;

/// How many app pages are kept to serve (the most recently shown; older frames reload theirs
/// when shown again).
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

    fn get(&self, token: &str) -> Option<AppDocument> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|(t, _)| t == token)
            .map(|(_, document)| document.clone())
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
            .core
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

    /// The page kept under `token`, for the shell to serve.
    pub fn app_page(&self, token: &str) -> Option<AppDocument> {
        self.app_pages.get(token)
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
            .core
            .tool_run(conversation_id, message_id, call_id)
            .await?;
        let (entry, verdict) = self
            .core
            .app_call_verdict(&self.host, conversation_id, &run.server, tool)
            .await?;
        let refused = |why: String| -> CoreError {
            InvalidInput::new(
                "tool",
                format!("The app's call to “{tool}” was not run: {why}."),
            )
            .into()
        };
        match verdict {
            Verdict::Allow(_) => {}
            Verdict::Deny(why) => return Err(refused(why)),
            Verdict::Ask => {
                let asked = Allowance::AppToolCall {
                    server: run.server.clone(),
                    tool: entry.tool.clone(),
                    arguments: Value::Object(arguments.clone()).to_string(),
                };
                if !confirm.allow(&asked).await {
                    return Err(refused("you said no".into()));
                }
            }
        }
        tracing::info!(server = %run.server, tool = %entry.tool, "an MCP app runs a tool of its server");
        let server = self.running(&run.server)?;
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
            .await?;
        Ok(serde_json::to_value(result).unwrap_or(Value::Null))
    }
}
