//! A conversation taken out of the database and put back: the versioned JSON format that
//! holds everything (messages in full, every tool call with its arguments and record, and every
//! branch kept beside the one shown), its Markdown rendering for people to read, and importing
//! a file as a new conversation. An imported file is untrusted: it is checked whole before
//! anything is written, its ids are replaced by new ones, and nothing in it can switch on
//! auto-approve, approve a tool or point at a file on this machine.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use rusqlite::{params, OptionalExtension, Transaction};

use super::branches::{put_tail, take_tail, take_tail_kept, Snapshot};
use super::{
    conversations, messages, now_ms, tool_loop, Cached, CallRef, Conversation, Finish, Message,
    MessageStatus, NewMessage, Role, Store, StoreError, StoredCall, ToolRun,
};
use base64::Engine as _;

use crate::attachments::{Attachment, AttachmentFiles};
use crate::input::InvalidInput;

/// What a file in this format says it is.
pub const FORMAT: &str = "switchboard.conversation";
/// The version this build writes; it reads this one and those before it. Version 2 added the
/// branches (a file of version 1 held a comparison's other answers only, which an import left
/// out).
pub const VERSION: u32 = 2;
/// The most messages an imported file may hold.
pub const MAX_IMPORT_MESSAGES: usize = 200_000;
/// The longest summary an imported file may hold, in characters: one made here is at most
/// about 1,000 words (its note of what was left out included), and the model reads the one in
/// force with every request, so a longer one could fill a window for good.
pub const MAX_IMPORT_SUMMARY_CHARS: usize = 32_768;
/// The most summaries, and the most tool names in one record of the tools offered, an imported
/// file may hold.
pub const MAX_IMPORT_SUMMARIES: usize = 10_000;
pub const MAX_IMPORT_OFFERED: usize = 10_000;

/// A whole conversation, as exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationExport {
    pub format: String,
    pub version: u32,
    /// ms since the epoch.
    pub exported_at: i64,
    pub conversation: ExportedConversation,
    pub messages: Vec<ExportedMessage>,
    #[serde(default)]
    pub tool_runs: Vec<ExportedToolRun>,
    /// Where the messages above part into branches, with the branches not shown there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<ExportedBranchPoint>,
    /// The summaries of earlier messages made to fit the model's window, oldest first; the
    /// messages they cover are in `messages` too, whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summaries: Vec<ExportedSummary>,
    /// Which tools each answer's request offered, where the model was given a choice of them
    /// and a search for the rest (an answer not here was offered every tool switched on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_offers: Vec<super::ToolOffer>,
}

/// A summary of earlier messages (issue 55).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedSummary {
    /// The last message it covers (an exported message's id); it covers those before it too.
    pub through: String,
    pub text: String,
    pub summarised: u32,
    #[serde(default)]
    pub left_out: u32,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    pub created_at: i64,
}

/// A point where a conversation parts into branches: a question edited and sent again, an
/// answer asked for again, or the models of a comparison. The branch shown goes on in the
/// messages of the line the point is on; the others are kept here whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedBranchPoint {
    /// The message right before the point, one of its line's (an exported message's id);
    /// none at the very start of the conversation.
    pub after: Option<String>,
    /// Which branch the line goes on with, from 0 (the first one written).
    pub shown: i64,
    /// At a comparison, the model (“Provider · model”) that wrote each branch, by position;
    /// empty elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<Option<String>>,
    /// The branches not shown.
    pub others: Vec<ExportedBranch>,
}

/// A branch not shown, whole: its messages, their calls and the points further down it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedBranch {
    /// Its place among the point's branches, from 0.
    pub position: i64,
    pub messages: Vec<ExportedMessage>,
    #[serde(default)]
    pub tool_runs: Vec<ExportedToolRun>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub branches: Vec<ExportedBranchPoint>,
}

impl ExportedBranchPoint {
    /// The model that wrote branch `position` of a comparison.
    pub fn model(&self, position: i64) -> Option<&str> {
        usize::try_from(position)
            .ok()
            .and_then(|i| self.models.get(i))
            .and_then(Option::as_deref)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedConversation {
    pub title: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub provider: Option<String>,
    pub model: Option<String>,
    #[serde(default)]
    pub system_prompt: String,
}

/// A message in full (a tool result whole, not its preview).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMessage {
    /// Unique within the file; tool runs name their answer by it.
    pub id: String,
    pub role: Role,
    pub content: Option<String>,
    pub created_at: i64,
    #[serde(default)]
    pub tool_calls: Option<serde_json::Value>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub finish_reason: Option<Finish>,
    pub status: MessageStatus,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub input_tokens: Option<i64>,
    #[serde(default)]
    pub output_tokens: Option<i64>,
    /// What the answer cost, in pico-dollars (none: its model had no price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_pico: Option<i64>,
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub is_error: bool,
    /// The files attached to a message of the person's, their bytes included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<ExportedAttachment>,
    /// What of its project's files and its memory an answer was given, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given: Option<crate::knowledge::KnowledgeUse>,
}

/// A file attached to a message, whole. An import keeps it only as what its bytes are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedAttachment {
    pub name: String,
    pub mime: String,
    pub size: u64,
    /// Its bytes in base64; `None` when it could not be read at export.
    pub data: Option<String>,
}

/// One tool call as it happened, with its record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedToolRun {
    /// The answer (an exported message's id) that asked for the call.
    pub message_id: String,
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub display_name: String,
    pub arguments: String,
    #[serde(default)]
    pub decision: Option<super::ToolDecision>,
    #[serde(default)]
    pub decision_scope: Option<super::ApprovalScope>,
    #[serde(default)]
    pub deny_reason: Option<String>,
    #[serde(default)]
    pub started_at: Option<i64>,
    #[serde(default)]
    pub finished_at: Option<i64>,
    #[serde(default)]
    pub is_error: bool,
    /// The result as the server sent it (JSON text), or the error text.
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub retry_of: Option<CallRef>,
    #[serde(default)]
    pub description: Option<String>,
    /// Whether the result has more than text to show ([`ToolRun::rich`]); an import works it
    /// out again from the result.
    #[serde(default)]
    pub rich: bool,
    /// Who asked for it when the model did not ([`ToolRun::asked_by`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
}

/// A message as exported, the bytes of its attached files read from `files`.
fn exported_message(m: Message, files: Option<&AttachmentFiles>) -> ExportedMessage {
    ExportedMessage {
        id: m.id,
        role: m.role,
        content: m.content,
        created_at: m.created_at,
        tool_calls: m.tool_calls.map(|calls| serde_json::json!(calls)),
        tool_call_id: m.tool_call_id,
        name: m.name,
        finish_reason: m.finish_reason,
        status: m.status,
        provider: m.provider,
        model: m.model,
        input_tokens: m.input_tokens,
        output_tokens: m.output_tokens,
        cost_pico: m.cost_pico,
        reasoning: m.reasoning,
        error: m.error,
        is_error: m.is_error,
        given: m.given,
        attachments: m
            .attachments
            .iter()
            .map(|a| ExportedAttachment {
                name: a.name.clone(),
                mime: a.mime.clone(),
                size: a.size,
                data: files.and_then(|files| match files.read(&a.sha256) {
                    Ok(bytes) => Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                    Err(e) => {
                        tracing::warn!(file = %a.name, error = %e, "an attached file could not be exported");
                        None
                    }
                }),
            })
            .collect(),
    }
}

/// A call as exported (a record kept in a result file of this machine's is left out).
fn exported_run(r: ToolRun) -> ExportedToolRun {
    ExportedToolRun {
        message_id: r.message_id,
        call_id: r.call_id,
        server: r.server,
        tool: r.tool,
        display_name: r.display_name,
        arguments: r.arguments,
        decision: r.decision,
        decision_scope: r.decision_scope,
        deny_reason: r.deny_reason,
        started_at: r.started_at,
        finished_at: r.finished_at,
        is_error: r.is_error,
        result: r.result.filter(|text| super::file_pointer(text).is_none()),
        retry_of: r.retry_of,
        description: r.description,
        rich: r.rich,
        asked_by: r.asked_by,
    }
}

/// A line of a conversation as read from the database: its messages, their calls, and the
/// points along it with every branch not shown there.
struct ReadLine {
    messages: Vec<Message>,
    runs: Vec<ToolRun>,
    points: Vec<ReadPoint>,
}

struct ReadPoint {
    after: Option<String>,
    shown: i64,
    models: Vec<Option<String>>,
    others: Vec<(i64, ReadLine)>,
}

/// The messages of `conversation_id` numbered after `after`, their calls, and the branch
/// points numbered over `points_over` with their branches. A branch not shown is read by
/// showing it in `tx` for a moment (its point's shown tail set aside, then put back): the
/// readers of what is shown read it, whatever columns its snapshot was taken with. `tx` is
/// the reader's own and is never committed.
fn read_line(
    tx: &Transaction<'_>,
    conversation_id: &str,
    after: i64,
    points_over: i64,
) -> Result<ReadLine, StoreError> {
    let messages = messages::tail(tx, conversation_id, after)?;
    let runs = tool_loop::runs_after(tx, conversation_id, after)?;
    type Row = (i64, i64, Option<String>, Option<String>);
    let rows: Vec<Row> = tx
        .prepare(
            "SELECT after_seq, position, model, snapshot FROM message_branches \
             WHERE conversation_id = ?1 AND after_seq > ?2 ORDER BY after_seq, position",
        )?
        .query_map(params![conversation_id, points_over], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut grouped: Vec<(i64, Vec<Row>)> = Vec::new();
    for row in rows {
        match grouped.last_mut() {
            Some((at, group)) if *at == row.0 => group.push(row),
            _ => grouped.push((row.0, vec![row])),
        }
    }
    let mut points = Vec::new();
    for (at, group) in grouped {
        // The message before the point; within a branch it must be one of the branch's own.
        let before: Option<(String, i64)> = tx
            .query_row(
                "SELECT id, seq FROM messages WHERE conversation_id = ?1 AND seq <= ?2 \
                 ORDER BY seq DESC LIMIT 1",
                params![conversation_id, at],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        if points_over >= 0 && before.as_ref().is_none_or(|(_, seq)| *seq <= points_over) {
            tracing::warn!(
                conversation = conversation_id,
                at,
                "a branch point with no message of its branch before it is left out of the export"
            );
            continue;
        }
        let shown = group
            .iter()
            .find(|(_, _, _, snapshot)| snapshot.is_none())
            .map_or(0, |(_, position, _, _)| *position);
        let models = if group.iter().any(|(_, _, model, _)| model.is_some()) {
            group.iter().map(|(_, _, model, _)| model.clone()).collect()
        } else {
            Vec::new()
        };
        let mut others = Vec::new();
        for (_, position, _, snapshot) in group {
            let Some(snapshot) = snapshot else { continue };
            let snapshot: Snapshot = match serde_json::from_str(&snapshot) {
                Ok(snapshot) => snapshot,
                Err(e) => {
                    tracing::warn!(conversation = conversation_id, at, position, error = %e, "a kept branch that does not read is left out of the export");
                    continue;
                }
            };
            let shown_tail = take_tail(tx, conversation_id, at)?;
            put_tail(tx, &snapshot)?;
            let line = read_line(tx, conversation_id, at, at)?;
            take_tail(tx, conversation_id, at)?;
            put_tail(tx, &shown_tail)?;
            others.push((position, line));
        }
        points.push(ReadPoint {
            after: before.map(|(id, _)| id),
            shown,
            models,
            others,
        });
    }
    Ok(ReadLine {
        messages,
        runs,
        points,
    })
}

impl ReadLine {
    /// The line as exported: its messages, their calls and its branch points.
    fn exported(
        self,
        files: Option<&AttachmentFiles>,
    ) -> (
        Vec<ExportedMessage>,
        Vec<ExportedToolRun>,
        Vec<ExportedBranchPoint>,
    ) {
        let messages = self
            .messages
            .into_iter()
            .map(|m| exported_message(m, files))
            .collect();
        let runs = self.runs.into_iter().map(exported_run).collect();
        let points = self
            .points
            .into_iter()
            .map(|point| ExportedBranchPoint {
                after: point.after,
                shown: point.shown,
                models: point.models,
                others: point
                    .others
                    .into_iter()
                    .map(|(position, line)| {
                        let (messages, tool_runs, branches) = line.exported(files);
                        ExportedBranch {
                            position,
                            messages,
                            tool_runs,
                            branches,
                        }
                    })
                    .collect(),
            })
            .collect();
        (messages, runs, points)
    }
}

impl ConversationExport {
    /// The file for a conversation; the bytes of attached files are read from `files`.
    fn new(
        conversation: Conversation,
        line: ReadLine,
        summaries: Vec<super::Summary>,
        tool_offers: Vec<super::ToolOffer>,
        files: Option<&AttachmentFiles>,
    ) -> Self {
        let (messages, tool_runs, branches) = line.exported(files);
        // Those of the line exported (the other branches' answers are in `branches`, whole,
        // without them).
        let ids: std::collections::HashSet<&str> = messages.iter().map(|m| m.id.as_str()).collect();
        let tool_offers = tool_offers
            .into_iter()
            .filter(|o| ids.contains(o.message_id.as_str()))
            .collect();
        let summaries = summaries
            .into_iter()
            .map(|s| ExportedSummary {
                through: s.through_message_id,
                text: s.text,
                summarised: s.summarised,
                left_out: s.left_out,
                provider: s.provider,
                model: s.model,
                created_at: s.created_at,
            })
            .collect();
        Self {
            format: FORMAT.to_owned(),
            version: VERSION,
            exported_at: now_ms(),
            conversation: ExportedConversation {
                title: conversation.title,
                created_at: conversation.created_at,
                updated_at: conversation.updated_at,
                provider: conversation.provider,
                model: conversation.model,
                system_prompt: conversation.system_prompt,
            },
            messages,
            tool_runs,
            branches,
            summaries,
            tool_offers,
        }
    }

    /// Checks a file before anything of it is written.
    ///
    /// # Errors
    /// Not this format or a version this build reads; too many messages; two messages with
    /// one id; a tool run of a message that is not in its line; a branch point after a
    /// message that is not one of its line's, two at one place, or whose branches are not
    /// numbered one each from 0.
    pub fn check(&self) -> Result<(), InvalidInput> {
        let bad = |why: String| InvalidInput::new("file", why);
        if self.format != FORMAT {
            return Err(bad(format!(
                "This is not a Switchboard conversation (its format is “{}”, not “{FORMAT}”).",
                self.format
            )));
        }
        if !(1..=VERSION).contains(&self.version) {
            return Err(bad(format!(
                "This conversation was exported in version {} of the format; this Switchboard reads versions 1 to {VERSION}.",
                self.version
            )));
        }
        let mut ids = HashSet::new();
        check_line(
            &self.messages,
            &self.tool_runs,
            &self.branches,
            true,
            &mut ids,
        )
        .map_err(bad)?;
        if ids.len() > MAX_IMPORT_MESSAGES {
            return Err(bad(format!(
                "The file holds {} messages; at most {MAX_IMPORT_MESSAGES} can be imported.",
                ids.len()
            )));
        }
        if self.summaries.len() > MAX_IMPORT_SUMMARIES {
            return Err(bad(format!(
                "The file holds {} summaries; at most {MAX_IMPORT_SUMMARIES} can be imported.",
                self.summaries.len()
            )));
        }
        if self
            .summaries
            .iter()
            .any(|s| s.text.chars().count() > MAX_IMPORT_SUMMARY_CHARS)
        {
            return Err(bad(format!(
                "A summary in the file is longer than {MAX_IMPORT_SUMMARY_CHARS} characters; \
                 Switchboard's are far shorter."
            )));
        }
        if self.tool_offers.len() > MAX_IMPORT_MESSAGES
            || self
                .tool_offers
                .iter()
                .any(|o| o.offered.len() > MAX_IMPORT_OFFERED)
        {
            return Err(bad(
                "The file's records of the tools offered are larger than any conversation's."
                    .to_owned(),
            ));
        }
        Ok(())
    }
}

/// Checks one line of a file (the conversation shown, or a branch) and the branches along it,
/// adding its messages' ids to `ids` (every id of the file once). Only the conversation's own
/// line may have a point at its very start: a branch's points come after a message of its.
fn check_line<'a>(
    messages: &'a [ExportedMessage],
    runs: &[ExportedToolRun],
    points: &'a [ExportedBranchPoint],
    top: bool,
    ids: &mut HashSet<&'a str>,
) -> Result<(), String> {
    let mut own = HashSet::new();
    for message in messages {
        if !ids.insert(message.id.as_str()) {
            return Err(format!("Two messages have the id “{}”.", message.id));
        }
        own.insert(message.id.as_str());
        if ids.len() > MAX_IMPORT_MESSAGES {
            return Ok(());
        }
    }
    for run in runs {
        if !own.contains(run.message_id.as_str()) {
            return Err(format!(
                "A tool call names the message “{}”, which is not in the file beside it.",
                run.message_id
            ));
        }
    }
    let mut places = HashSet::new();
    for point in points {
        match point.after.as_deref() {
            Some(after) if !own.contains(after) => {
                return Err(format!(
                    "A branch point follows the message “{after}”, which is not in the file beside it."
                ));
            }
            None if !top => {
                return Err("A branch point inside a branch names no message before it.".to_owned());
            }
            _ => {}
        }
        if !places.insert(point.after.as_deref()) {
            return Err(format!(
                "Two branch points follow the message “{}”.",
                point.after.as_deref().unwrap_or("(the start)")
            ));
        }
        let count = point.others.len() + 1;
        let mut positions: Vec<i64> = point.others.iter().map(|b| b.position).collect();
        positions.push(point.shown);
        positions.sort_unstable();
        let numbered = positions
            .iter()
            .enumerate()
            .all(|(i, &p)| i64::try_from(i) == Ok(p));
        if !numbered || !(point.models.is_empty() || point.models.len() == count) {
            return Err(format!(
                "The branches after the message “{}” are not numbered one each from 1 to {count}.",
                point.after.as_deref().unwrap_or("(the start)")
            ));
        }
        for branch in &point.others {
            check_line(
                &branch.messages,
                &branch.tool_runs,
                &branch.branches,
                false,
                ids,
            )?;
        }
    }
    Ok(())
}

impl Store {
    /// Everything of one conversation, for a file.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn export_conversation(&self, id: String) -> Result<ConversationExport, StoreError> {
        let (conversation, line, offers) = self
            .call(move |conn| {
                let tx = conn.transaction()?;
                let conversation = conversations::get(&tx, &id)?;
                let line = read_line(&tx, &id, 0, -1)?;
                // The branches were read by showing each for a moment: none of it is kept.
                tx.rollback()?;
                let offers = super::context::offers_between(conn, &id, 0, i64::MAX)?;
                Ok((conversation, line, offers))
            })
            .await?;
        let summaries = self.summaries(conversation.id.clone()).await?;
        let files = self.attachment_files();
        tokio::task::spawn_blocking(move || {
            ConversationExport::new(conversation, line, summaries, offers, files.as_ref())
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))
    }

    /// Writes a checked export as a new conversation (new ids, the default tool switches, no
    /// auto-approve, no approvals), newest in the list. A message that was still streaming
    /// when exported comes in as interrupted.
    ///
    /// # Errors
    /// A failed query (nothing is written then).
    pub async fn import_conversation(
        &self,
        file: ConversationExport,
    ) -> Result<Conversation, StoreError> {
        let files = self.attachment_files();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let c = &file.conversation;
            let id = conversations::insert(
                &tx,
                &c.title,
                Some(c.created_at),
                c.provider.as_deref(),
                c.model.as_deref(),
                &c.system_prompt,
                true,
            )?;
            let mut placed = Placed::new();
            import_line(
                &tx,
                &id,
                file.messages,
                file.tool_runs,
                file.branches,
                files.as_ref(),
                &mut placed,
            )?;
            // The summaries and the records of the tools offered come with the messages they
            // name (the model reads the same summary as before the export).
            for s in file.summaries {
                if let Some((through, _)) = placed.get(&s.through) {
                    let summary = super::Summary {
                        id: super::new_id(),
                        conversation_id: id.clone(),
                        through_message_id: through.clone(),
                        text: s.text,
                        summarised: s.summarised,
                        left_out: s.left_out,
                        provider: s.provider,
                        model: s.model,
                        created_at: s.created_at,
                    };
                    super::summaries::insert(&tx, &summary)?;
                }
            }
            for mut offer in file.tool_offers {
                if let Some((message_id, _)) = placed.get(&offer.message_id) {
                    offer.message_id.clone_from(message_id);
                    super::context::record_offer(&tx, &id, &offer)?;
                }
            }
            // The import is the newest thing in the list, whatever its messages' times.
            tx.execute(
                &format!(
                    "UPDATE conversations SET updated_at = {} WHERE id = ?1",
                    conversations::touch("?2")
                ),
                rusqlite::params![id, now_ms()],
            )?;
            let created = conversations::get(&tx, &id)?;
            tx.commit()?;
            Ok(created)
        })
        .await
    }
}

/// Where an import put each message of the file: its new id and number, by its id in the file.
type Placed = HashMap<String, (String, i64)>;

/// Writes one line of a checked file (the conversation shown, or a branch) after what is shown
/// now, then each branch along it: a branch is written where its point is, as if shown, and
/// kept as that point's snapshot (the tail shown there set aside meanwhile), so it is kept
/// exactly as a branch made in this app is.
fn import_line(
    tx: &Transaction<'_>,
    id: &str,
    messages: Vec<ExportedMessage>,
    runs: Vec<ExportedToolRun>,
    points: Vec<ExportedBranchPoint>,
    files: Option<&AttachmentFiles>,
    placed: &mut Placed,
) -> Result<(), StoreError> {
    for m in messages {
        let status = match m.status {
            MessageStatus::Streaming => MessageStatus::Interrupted,
            other => other,
        };
        // A task's late result names its call by the answer's id, which is new here.
        let tool_call_id = match (&m.tool_call_id, m.name.as_deref()) {
            (Some(of), Some(super::LATE_RESULT)) if m.role == Role::System => of
                .split_once(':')
                .and_then(|(answer, call)| {
                    placed
                        .get(answer)
                        .map(|(new_id, _)| format!("{new_id}:{call}"))
                })
                .or(m.tool_call_id),
            _ => m.tool_call_id,
        };
        let saved = messages::insert(
            tx,
            id,
            &NewMessage {
                role: m.role,
                content: m.content,
                tool_calls: m.tool_calls.as_ref().map(StoredCall::read_all),
                tool_call_id,
                name: m.name,
                finish_reason: m.finish_reason,
                status,
                provider: m.provider,
                model: m.model,
                input_tokens: m.input_tokens,
                output_tokens: m.output_tokens,
                reasoning: m.reasoning,
                error: m.error,
                is_error: m.is_error,
                attachments: imported_files(files, &m.attachments),
                given: m.given,
            },
        )?;
        let seq: i64 = tx.query_row_cached(
            "UPDATE messages SET created_at = ?2, cost_pico = ?3 WHERE id = ?1 RETURNING seq",
            rusqlite::params![saved.id, m.created_at, m.cost_pico],
            |row| row.get(0),
        )?;
        placed.insert(m.id, (saved.id, seq));
    }
    for r in runs {
        let Some((message_id, _)) = placed.get(&r.message_id).cloned() else {
            continue;
        };
        let retry_of = r.retry_of.and_then(|of| {
            placed.get(&of.message_id).map(|(message_id, _)| CallRef {
                message_id: message_id.clone(),
                call_id: of.call_id,
            })
        });
        let run = ToolRun {
            id: ToolRun::id_for(&message_id, &r.call_id),
            conversation_id: id.to_owned(),
            message_id,
            call_id: r.call_id,
            server: r.server,
            tool: r.tool,
            display_name: r.display_name,
            arguments: r.arguments,
            decision: r.decision,
            decision_scope: r.decision_scope,
            deny_reason: r.deny_reason,
            started_at: r.started_at,
            finished_at: r.finished_at,
            is_error: r.is_error,
            result: r.result.filter(|text| super::file_pointer(text).is_none()),
            retry_of,
            description: r.description,
            can_retry: false,
            answered: false,
            rich: r.rich,
            asked_by: r.asked_by,
            decided_by: None,
            original: None,
            // A task is its home's to follow: an imported call's task is not followed here.
            task: None,
        };
        tool_loop::upsert_run(tx, &run)?;
    }
    for mut point in points {
        let at = match &point.after {
            None => 0,
            Some(after) => match placed.get(after) {
                Some(&(_, seq)) => seq,
                // `check` lets no such file through.
                None => continue,
            },
        };
        let mut rows: Vec<(i64, Option<String>)> = vec![(point.shown, None)];
        for branch in std::mem::take(&mut point.others) {
            let shown_tail = take_tail(tx, id, at)?;
            import_line(
                tx,
                id,
                branch.messages,
                branch.tool_runs,
                branch.branches,
                files,
                placed,
            )?;
            let kept = take_tail_kept(tx, id, at)?;
            put_tail(tx, &shown_tail)?;
            rows.push((branch.position, Some(kept)));
        }
        for (position, snapshot) in rows {
            tx.execute(
                "INSERT INTO message_branches (conversation_id, after_seq, position, snapshot, model) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, at, position, snapshot, point.model(position)],
            )?;
        }
    }
    Ok(())
}

/// The two ways a conversation is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// Readable: each message under its author, tool calls as collapsible sections.
    Markdown,
    /// Everything (messages in full, tool calls and their records), in a versioned format that
    /// import reads back.
    Json,
}

impl ExportFormat {
    /// The file name extension of this format.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Json => "json",
        }
    }
}

/// An export as the text of its file.
pub fn export_text(file: &ConversationExport, format: ExportFormat) -> String {
    match format {
        ExportFormat::Markdown => to_markdown(file),
        ExportFormat::Json => {
            // A value of plain data always serialises.
            let mut text = serde_json::to_string_pretty(file).unwrap_or_default();
            text.push('\n');
            text
        }
    }
}

/// An answer's tokens and cost as one line ("120 tokens in · 30 out · $0.0006"); `None` when
/// the provider said no tokens.
fn spent(m: &ExportedMessage) -> Option<String> {
    if m.input_tokens.is_none() && m.output_tokens.is_none() {
        return None;
    }
    let mut parts = vec![
        format!("{} tokens in", m.input_tokens.unwrap_or(0)),
        format!("{} out", m.output_tokens.unwrap_or(0)),
    ];
    parts.push(match m.cost_pico {
        Some(pico) => crate::price::usd(u64::try_from(pico).unwrap_or(0)),
        None => "no price".to_owned(),
    });
    Some(parts.join(" · "))
}

/// A file name for an export of the conversation titled `title`: its words, without what a
/// file system refuses, and the format's extension.
pub fn export_file_name(title: &str, format: ExportFormat) -> String {
    let stem: String = title
        .chars()
        .map(|c| {
            if c.is_control() || "/\\:*?\"<>|".contains(c) {
                ' '
            } else {
                c
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let stem: String = stem.chars().take(80).collect();
    let stem = stem.trim_matches(|c: char| c == '.' || c.is_whitespace());
    let stem = if stem.is_empty() {
        "Conversation"
    } else {
        stem
    };
    format!("{stem}.{}", format.extension())
}

/// A conversation as Markdown for people: the system prompt quoted, each message under its
/// author, each tool call as a collapsible section with its arguments and result.
/// The attached files of an imported message, kept as what their bytes are; one that cannot be
/// decoded, kept, or is refused is left out.
fn imported_files(
    files: Option<&AttachmentFiles>,
    exported: &[ExportedAttachment],
) -> Vec<Attachment> {
    let Some(files) = files else {
        return Vec::new();
    };
    exported
        .iter()
        .filter_map(|a| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(a.data.as_deref()?)
                .ok()?;
            // A file a tool produced may be of a kind a person cannot attach.
            files
                .keep(&a.name, &bytes)
                .or_else(|_| files.keep_produced(&a.name, Some(&a.mime), &bytes))
                .map_err(|e| tracing::warn!(file = %a.name, error = %e, "an imported attachment was left out"))
                .ok()
        })
        .collect()
}

pub fn to_markdown(file: &ConversationExport) -> String {
    let mut out = String::new();
    let c = &file.conversation;
    out.push_str(&format!(
        "# {}\n\n",
        crate::text::one_line(&c.title, usize::MAX)
    ));
    let mut about = vec![format!(
        "Exported from Switchboard on {}",
        when(file.exported_at)
    )];
    if let Some(model) = &c.model {
        about.push(match &c.provider {
            Some(provider) => format!("{provider} · {model}"),
            None => model.clone(),
        });
    }
    out.push_str(&format!("*{}*\n\n", about.join(" · ")));
    if !c.system_prompt.is_empty() {
        out.push_str("**System prompt**\n\n");
        for line in c.system_prompt.lines() {
            out.push_str(&format!("> {line}\n"));
        }
        out.push('\n');
    }
    let runs: HashMap<(&str, &str), &ExportedToolRun> = file
        .tool_runs
        .iter()
        .map(|r| ((r.message_id.as_str(), r.call_id.as_str()), r))
        .collect();
    let mut answer: Option<&str> = None;
    // The branches not shown after the question shown last (other answers to it), written
    // once its answer is.
    let mut pending: Vec<&ExportedBranchPoint> = Vec::new();
    let mut previous: Option<&str> = None;
    for m in &file.messages {
        let text = m.content.as_deref().unwrap_or_default();
        match m.role {
            Role::User => {
                branch_sections(&mut out, &pending);
                // Other versions of this question (it was edited and sent again).
                let edited: Vec<&ExportedBranchPoint> = file
                    .branches
                    .iter()
                    .filter(|p| p.after.as_deref() == previous)
                    .collect();
                branch_sections(&mut out, &edited);
                pending = file
                    .branches
                    .iter()
                    .filter(|p| p.after.as_deref() == Some(m.id.as_str()))
                    .collect();
                out.push_str(&format!("## You\n\n{}\n\n", text.trim_end()));
                for a in &m.attachments {
                    out.push_str(&format!(
                        "- Attached: {} ({}, {})\n",
                        html_text(&a.name),
                        a.mime,
                        crate::text::byte_size(a.size)
                    ));
                }
                if !m.attachments.is_empty() {
                    out.push('\n');
                }
            }
            Role::Assistant => {
                answer = Some(&m.id);
                let by = m.model.as_deref().map(|model| format!(" ({model})"));
                out.push_str(&format!("## Assistant{}\n\n", by.unwrap_or_default()));
                if !text.trim().is_empty() {
                    out.push_str(&format!("{}\n\n", text.trim_end()));
                }
                if let Some(line) = spent(m) {
                    out.push_str(&format!("*{line}*\n\n"));
                }
                if let Some(error) = &m.error {
                    out.push_str(&format!(
                        "> **Failed:** {}\n\n",
                        crate::text::one_line(error, usize::MAX)
                    ));
                }
            }
            Role::Tool => {
                let call = m.tool_call_id.as_deref().unwrap_or_default();
                let run = answer.and_then(|a| runs.get(&(a, call)).copied());
                let name = run
                    .map(|r| r.display_name.clone())
                    .or_else(|| m.name.clone())
                    .unwrap_or_else(|| "Tool".to_owned());
                let state = if m.is_error { " — failed" } else { "" };
                out.push_str(&format!(
                    "<details>\n<summary>Tool call: {}{state}</summary>\n\n",
                    html_text(&name)
                ));
                if let Some(run) = run {
                    out.push_str(&format!(
                        "Arguments:\n\n{}\n",
                        fenced(&pretty(&run.arguments), "json")
                    ));
                }
                out.push_str(&format!("Result:\n\n{}\n</details>\n\n", fenced(text, "")));
                // What the app shown in this call's card ran, and what it was told.
                if let (Some(a), Some(run)) = (answer, run) {
                    let by = super::tool_loop::asked_by_app(&run.display_name, &run.call_id);
                    for made in file
                        .tool_runs
                        .iter()
                        .filter(|r| r.message_id == a && r.asked_by.as_deref() == Some(&by))
                    {
                        app_call_section(&mut out, made);
                    }
                }
            }
            Role::System => {}
        }
        for summary in file.summaries.iter().filter(|s| s.through == m.id) {
            let by = summary.model.as_deref().map(|model| format!(" by {model}"));
            out.push_str(&format!(
                "<details>\n<summary>Earlier messages summarised{} (to fit the model's window)</summary>\n\n{}\n</details>\n\n",
                html_text(&by.unwrap_or_default()),
                fenced(&summary.text, "")
            ));
        }
        previous = Some(m.id.as_str());
    }
    branch_sections(&mut out, &pending);
    out
}

/// A call an MCP App made, folded: who asked, whether it ran, its arguments and result.
fn app_call_section(out: &mut String, made: &ExportedToolRun) {
    let how = match (&made.decision, &made.deny_reason) {
        (Some(super::ToolDecision::Denied), Some(why)) => format!(" — refused: {}", html_text(why)),
        (Some(super::ToolDecision::Denied), None) => " — refused".to_owned(),
        _ if made.is_error => " — failed".to_owned(),
        _ => String::new(),
    };
    out.push_str(&format!(
        "<details>\n<summary>Tool call by {}: {}{how}</summary>\n\n",
        html_text(made.asked_by.as_deref().unwrap_or("an app")),
        html_text(&made.display_name)
    ));
    out.push_str(&format!(
        "Arguments:\n\n{}\n",
        fenced(&pretty(&made.arguments), "json")
    ));
    if let Some(result) = &made.result {
        out.push_str(&format!("Result:\n\n{}\n", fenced(result, "")));
    }
    out.push_str("</details>\n\n");
}

/// The branches not shown at `points`, each folded: a comparison's other answers under their
/// model's name, another version of a question with what answered it, another answer.
fn branch_sections(out: &mut String, points: &[&ExportedBranchPoint]) {
    for point in points {
        let count = point.others.len() + 1;
        for branch in &point.others {
            if !point.models.is_empty() {
                let model = point.model(branch.position).unwrap_or("another model");
                also_answered(out, model, &branch.messages);
                continue;
            }
            let which = format!("{} of {count}", branch.position + 1);
            let summary = if branch
                .messages
                .first()
                .is_some_and(|m| m.role == Role::User)
            {
                format!("Another version of this question ({which})")
            } else {
                format!("Another answer ({which})")
            };
            out.push_str(&format!("<details>\n<summary>{summary}</summary>\n\n"));
            for m in &branch.messages {
                let text = m.content.as_deref().unwrap_or_default().trim_end();
                match m.role {
                    Role::User => out.push_str(&format!("**You:** {text}\n\n")),
                    Role::Assistant if !text.is_empty() => out.push_str(&format!("{text}\n\n")),
                    _ => {}
                }
            }
            out.push_str("</details>\n\n");
        }
    }
}

/// Another model's answer of a comparison, folded under the model's name.
fn also_answered(out: &mut String, model: &str, messages: &[ExportedMessage]) {
    out.push_str(&format!(
        "<details>\n<summary>Also answered by {}</summary>\n\n",
        html_text(model)
    ));
    let answers: Vec<&ExportedMessage> = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .collect();
    for m in &answers {
        let text = m.content.as_deref().unwrap_or_default().trim_end();
        if !text.is_empty() {
            out.push_str(&format!("{text}\n\n"));
        }
    }
    // What the whole answer spent, its rounds added up (a cost only when each had one).
    let sum = |of: fn(&ExportedMessage) -> Option<i64>| {
        answers.iter().filter_map(|m| of(m)).reduce(|a, b| a + b)
    };
    if let Some(first) = answers.first() {
        let total = ExportedMessage {
            input_tokens: sum(|m| m.input_tokens),
            output_tokens: sum(|m| m.output_tokens),
            cost_pico: answers.iter().map(|m| m.cost_pico).sum::<Option<i64>>(),
            ..(*first).clone()
        };
        if let Some(line) = spent(&total) {
            out.push_str(&format!("*{line}*\n\n"));
        }
    }
    out.push_str("</details>\n\n");
}

/// Text safe inside an HTML element (the `<summary>` of a section).
fn html_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn pretty(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| arguments.to_owned())
}

/// `text` in a code fence longer than any run of backticks inside it.
fn fenced(text: &str, language: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!(
        "{fence}{language}\n{}\n{fence}\n",
        text.trim_end_matches('\n')
    )
}

fn when(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_outlasts_the_backticks_inside() {
        assert_eq!(fenced("a ``` b", ""), "````\na ``` b\n````\n");
        assert_eq!(fenced("plain\n", "json"), "```json\nplain\n```\n");
    }

    /// A file of this version with no messages.
    fn empty_file() -> ConversationExport {
        ConversationExport {
            format: FORMAT.into(),
            version: VERSION,
            exported_at: 0,
            conversation: ExportedConversation {
                title: "t".into(),
                created_at: 0,
                updated_at: 0,
                provider: None,
                model: None,
                system_prompt: String::new(),
            },
            messages: vec![],
            tool_runs: vec![],
            branches: vec![],
            summaries: vec![],
            tool_offers: vec![],
        }
    }

    #[test]
    fn a_file_of_another_format_or_version_or_with_loose_ends_is_refused() {
        let file = empty_file();
        assert!(file.check().is_ok());
        let other = ConversationExport {
            format: "chatgpt".into(),
            ..file.clone()
        };
        assert!(other
            .check()
            .unwrap_err()
            .message
            .contains("not a Switchboard conversation"));
        let newer = ConversationExport {
            version: VERSION + 1,
            ..file.clone()
        };
        assert!(newer
            .check()
            .unwrap_err()
            .message
            .contains(&format!("version {}", VERSION + 1)));
        let first = ConversationExport {
            version: 1,
            ..file.clone()
        };
        assert!(first.check().is_ok(), "a file of version 1 is still read");
        let loose = ConversationExport {
            tool_runs: vec![ExportedToolRun {
                message_id: "nowhere".into(),
                call_id: "c".into(),
                server: "s".into(),
                tool: "t".into(),
                display_name: "s · t".into(),
                arguments: "{}".into(),
                decision: None,
                decision_scope: None,
                deny_reason: None,
                started_at: None,
                finished_at: None,
                is_error: false,
                result: None,
                retry_of: None,
                description: None,
                rich: false,
                asked_by: None,
            }],
            ..file
        };
        assert!(loose.check().unwrap_err().message.contains("nowhere"));
    }

    #[test]
    fn a_file_whose_summary_could_fill_a_window_for_good_is_refused() {
        let summary = |chars: usize| ExportedSummary {
            through: "m1".into(),
            text: "é".repeat(chars),
            summarised: 1,
            left_out: 0,
            provider: None,
            model: None,
            created_at: 0,
        };
        let mut file = empty_file();
        file.summaries = vec![summary(MAX_IMPORT_SUMMARY_CHARS)];
        file.check().unwrap();
        file.summaries = vec![summary(MAX_IMPORT_SUMMARY_CHARS + 1)];
        assert!(file
            .check()
            .unwrap_err()
            .to_string()
            .contains("A summary in the file is longer than 32768 characters"));
        file.summaries.clear();
        file.tool_offers = vec![super::super::ToolOffer {
            message_id: "m1".into(),
            offered: vec![String::new(); MAX_IMPORT_OFFERED + 1],
            of: 1,
            why: String::new(),
        }];
        assert!(file.check().is_err());
    }

    #[test]
    fn a_file_whose_branches_do_not_hold_together_is_refused() {
        let message = |id: &str, role: &str| -> ExportedMessage {
            serde_json::from_value(serde_json::json!({
                "id": id, "role": role, "content": id, "created_at": 0, "status": "complete",
            }))
            .unwrap()
        };
        let branch = |position: i64, ids: &[&str]| ExportedBranch {
            position,
            messages: ids.iter().map(|id| message(id, "assistant")).collect(),
            tool_runs: vec![],
            branches: vec![],
        };
        let point =
            |after: Option<&str>, shown: i64, others: Vec<ExportedBranch>| ExportedBranchPoint {
                after: after.map(Into::into),
                shown,
                models: vec![],
                others,
            };
        let file = |branches: Vec<ExportedBranchPoint>| ConversationExport {
            messages: vec![message("q", "user"), message("a", "assistant")],
            branches,
            ..empty_file()
        };
        let refused = |branches| file(branches).check().unwrap_err().message;
        assert!(file(vec![point(Some("q"), 1, vec![branch(0, &["a0"])])])
            .check()
            .is_ok());
        assert!(
            refused(vec![point(Some("elsewhere"), 1, vec![branch(0, &["a0"])])])
                .contains("elsewhere")
        );
        assert!(
            refused(vec![point(Some("q"), 1, vec![branch(0, &["a"])])]).contains("Two messages")
        );
        assert!(refused(vec![point(Some("q"), 1, vec![branch(1, &["a0"])])]).contains("numbered"));
        assert!(refused(vec![point(Some("q"), 2, vec![branch(0, &["a0"])])]).contains("numbered"));
        assert!(refused(vec![
            point(Some("q"), 1, vec![branch(0, &["a0"])]),
            point(Some("q"), 1, vec![branch(0, &["a1"])]),
        ])
        .contains("Two branch points"));
        // A point inside a branch names a message of that branch, not one of the line above.
        let mut nested = branch(0, &["a0"]);
        nested.branches = vec![point(Some("q"), 1, vec![branch(0, &["a00"])])];
        assert!(refused(vec![point(Some("q"), 1, vec![nested])]).contains("“q”"));
        let mut nested = branch(0, &["a0"]);
        nested.branches = vec![point(None, 1, vec![branch(0, &["a00"])])];
        assert!(refused(vec![point(Some("q"), 1, vec![nested])]).contains("names no message"));
        let mut nested = branch(0, &["a0"]);
        nested.branches = vec![point(Some("a0"), 1, vec![branch(0, &["a00"])])];
        assert!(file(vec![point(Some("q"), 1, vec![nested])])
            .check()
            .is_ok());
    }
}
