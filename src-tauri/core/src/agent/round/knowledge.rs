//! The run's answers to Switchboard's own `search_project_files` and `remember` (issue 62):
//! the passages of the conversation's project's files that match the model's words, best first
//! (only the files of the project the conversation was in when the run began); and a fact kept
//! in the memory the conversation used when the run began, from this conversation (only while
//! that memory is on: the tool is not offered otherwise, and a call of it is refused, also when
//! the memory was switched off while the call waited for approval).

use serde_json::{Map, Value};

use super::own::{refuse, text_argument, text_result};
use super::Ctx;
use crate::mcp::server::McpError;

/// Passages a search returns when the model does not say how many.
const DEFAULT_LIMIT: usize = 8;
/// The most it may ask for.
const MAX_LIMIT: usize = 20;

impl Ctx<'_> {
    /// `search_project_files(query, limit?)`.
    pub(super) async fn search_project_files(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<Value, McpError> {
        let Some(project) = self.setup.project_id.clone() else {
            return Err(refuse("this conversation is in no project".to_owned()));
        };
        let query = text_argument(arguments, "query").ok_or_else(|| {
            refuse("search_project_files needs “query” (the words to look for)".to_owned())
        })?;
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_LIMIT, |n| usize::try_from(n).unwrap_or(MAX_LIMIT))
            .clamp(1, MAX_LIMIT);
        let words = crate::knowledge::query_words(query);
        if words.is_empty() {
            return Ok(text_result(format!(
                "“{}” has no word to search for: use distinctive words.",
                crate::text::one_line(query, 200)
            )));
        }
        let found = self
            .services
            .store
            .search_passages(project, words, limit)
            .await
            .map_err(|e| refuse(format!("the project's files could not be searched ({e})")))?;
        Ok(text_result(crate::knowledge::found_text(query, &found)))
    }

    /// `remember(fact)`.
    pub(super) async fn remember(&self, arguments: &Map<String, Value>) -> Result<Value, McpError> {
        let Some(scope) = self.setup.memory.clone() else {
            return Err(refuse("memory is off in this conversation".to_owned()));
        };
        let fact = text_argument(arguments, "fact")
            .ok_or_else(|| refuse("remember needs “fact” (a sentence)".to_owned()))?;
        let fact = crate::knowledge::check_fact(fact).map_err(|e| refuse(e.message))?;
        // The switch as it is now: it may have been turned off while the call waited.
        let still_on = match &scope {
            crate::store::MemoryScope::Own => match self.setup.settings.clone() {
                Some(settings) => tokio::task::spawn_blocking(move || settings.load().memory)
                    .await
                    .unwrap_or(false),
                None => true,
            },
            crate::store::MemoryScope::Project(id) => self
                .services
                .store
                .get_project(id.clone())
                .await
                .is_ok_and(|p| p.fields.memory),
        };
        if !still_on {
            return Err(refuse(
                "memory was switched off in this conversation: nothing was kept".to_owned(),
            ));
        }
        let kept = self
            .services
            .store
            .add_memory(
                scope,
                fact,
                // A lane of a comparison keeps it as its conversation's.
                Some(
                    self.setup
                        .history_from
                        .clone()
                        .unwrap_or_else(|| self.setup.conversation_id.clone()),
                ),
            )
            .await
            .map_err(|e| refuse(format!("the fact could not be kept ({e})")))?;
        Ok(text_result(format!("Remembered: {}", kept.text)))
    }
}
