//! How a task's late result (issue 61) is told apart from other messages in SQL: its name,
//! the test that keeps it with its call when a later turn goes, and the one that finds those
//! of a turn's calls. A leaf: the messages, pages and tasks of the store read it.

/// The `name` of a late result's message (role `system`; its `tool_call_id` names the call
/// as `store::late_result_call` reads it).
pub const LATE_RESULT: &str = "task_result";

/// SQL that holds for a message of conversation `?1` that is not the late result of a call
/// made before message number `?2` (`before` is `<` or `<=`): such a late result belongs with
/// its call, wherever it landed, so a later turn deleted leaves it where it is. Never NULL: a
/// message with no name or no `tool_call_id` passes.
pub(crate) fn not_late_result_of_calls(before: &str) -> String {
    format!(
        "NOT COALESCE(name = '{LATE_RESULT}' AND role = 'system' AND \
         substr(tool_call_id, 1, instr(tool_call_id, ':') - 1) IN \
         (SELECT id FROM messages WHERE conversation_id = ?1 AND seq {before} ?2), 0)"
    )
}

/// SQL that holds for the late results (of conversation `?1`) of the calls made by messages
/// numbered `?2` to before `?3`: they go with their calls' turn, wherever they landed.
pub(crate) const LATE_RESULTS_OF_TURN: &str = "conversation_id = ?1 AND name = 'task_result' \
     AND role = 'system' AND substr(tool_call_id, 1, instr(tool_call_id, ':') - 1) IN \
     (SELECT id FROM messages WHERE conversation_id = ?1 AND seq >= ?2 AND seq < ?3)";
