//! A conversation taken out of the database and put back: the versioned JSON format that
//! holds everything (messages in full, every tool call with its arguments and record), its
//! Markdown rendering for people to read, and importing a file as a new conversation. An
//! imported file is untrusted: it is checked whole before anything is written, its ids are
//! replaced by new ones, and nothing in it can switch on auto-approve, approve a tool or point
//! at a file on this machine.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{
    conversations, messages, now_ms, Cached, CallRef, Conversation, MessageStatus, NewMessage,
    Role, Store, StoreError, ToolRun,
};
use base64::Engine as _;

use crate::attachments::{Attachment, AttachmentFiles};
use crate::input::InvalidInput;

/// What a file in this format says it is.
pub const FORMAT: &str = "switchboard.conversation";
/// The version this build writes; it reads this one only.
pub const VERSION: u32 = 1;
/// The most messages an imported file may hold.
pub const MAX_IMPORT_MESSAGES: usize = 200_000;

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
    /// The answers of a comparison's other models, each after its question (an import keeps
    /// the answers shown only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_answers: Vec<OtherAnswer>,
}

/// One model's answer to a question of a comparison, kept as a branch beside the one shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OtherAnswer {
    /// The question (an exported message's id).
    pub after: String,
    /// "Provider · model".
    pub model: Option<String>,
    /// Its messages: the answers, and the results of its tool calls.
    pub messages: Vec<ExportedMessage>,
}

/// A message kept in a branch (a row's columns as JSON) as exported; `None` when it does not
/// read as one.
fn kept_message(row: &serde_json::Map<String, serde_json::Value>) -> Option<ExportedMessage> {
    use serde_json::Value;
    let mut row = row.clone();
    row.remove("attachments");
    if let Some(Value::String(calls)) = row.get("tool_calls") {
        let calls = serde_json::from_str(calls).unwrap_or(Value::Null);
        row.insert("tool_calls".into(), calls);
    }
    let is_error = row.get("is_error").and_then(Value::as_i64).unwrap_or(0) != 0;
    row.insert("is_error".into(), Value::Bool(is_error));
    serde_json::from_value(Value::Object(row)).ok()
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
    pub finish_reason: Option<String>,
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
}

impl ConversationExport {
    /// The file for a conversation; the bytes of attached files are read from `files`.
    fn new(
        conversation: Conversation,
        messages: Vec<super::Message>,
        runs: Vec<ToolRun>,
        files: Option<&AttachmentFiles>,
    ) -> Self {
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
            messages: messages
                .into_iter()
                .map(|m| ExportedMessage {
                    id: m.id,
                    role: m.role,
                    content: m.content,
                    created_at: m.created_at,
                    tool_calls: m.tool_calls,
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
                })
                .collect(),
            tool_runs: runs
                .into_iter()
                .map(|r| ExportedToolRun {
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
                })
                .collect(),
            other_answers: Vec::new(),
        }
    }

    /// Checks a file before anything of it is written.
    ///
    /// # Errors
    /// Not this format or version; too many messages; two messages with one id; a tool run
    /// of a message that is not in the file.
    pub fn check(&self) -> Result<(), InvalidInput> {
        let bad = |why: String| InvalidInput::new("file", why);
        if self.format != FORMAT {
            return Err(bad(format!(
                "This is not a Switchboard conversation (its format is “{}”, not “{FORMAT}”).",
                self.format
            )));
        }
        if self.version != VERSION {
            return Err(bad(format!(
                "This conversation was exported in version {} of the format; this Switchboard reads version {VERSION}.",
                self.version
            )));
        }
        if self.messages.len() > MAX_IMPORT_MESSAGES {
            return Err(bad(format!(
                "The file holds {} messages; at most {MAX_IMPORT_MESSAGES} can be imported.",
                self.messages.len()
            )));
        }
        let mut ids = HashSet::new();
        for message in &self.messages {
            if !ids.insert(message.id.as_str()) {
                return Err(bad(format!("Two messages have the id “{}”.", message.id)));
            }
        }
        for run in &self.tool_runs {
            if !ids.contains(run.message_id.as_str()) {
                return Err(bad(format!(
                    "A tool call names the message “{}”, which is not in the file.",
                    run.message_id
                )));
            }
        }
        Ok(())
    }
}

impl Store {
    /// Everything of one conversation, for a file.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn export_conversation(&self, id: String) -> Result<ConversationExport, StoreError> {
        let conversation = self.get_conversation(id.clone()).await?;
        let messages = self.list_messages(id.clone()).await?;
        let runs = self.list_tool_runs(id.clone()).await?;
        let kept: Vec<(Option<String>, Option<String>, String)> = self
            .call(move |conn| {
                let mut stmt = conn.prepare(
                    "SELECT (SELECT m.id FROM messages m \
                             WHERE m.conversation_id = b.conversation_id AND m.seq = b.after_seq), \
                            b.model, b.snapshot FROM message_branches b \
                     WHERE b.conversation_id = ?1 AND b.snapshot IS NOT NULL \
                       AND b.model IS NOT NULL \
                     ORDER BY b.after_seq, b.position",
                )?;
                let rows =
                    stmt.query_map([&id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .await?;
        let files = self.attachment_files();
        tokio::task::spawn_blocking(move || {
            let other_answers = kept
                .into_iter()
                .filter_map(|(after, model, snapshot)| {
                    let snapshot: super::branches::Snapshot =
                        serde_json::from_str(&snapshot).ok()?;
                    Some(OtherAnswer {
                        after: after?,
                        model,
                        messages: snapshot.messages.iter().filter_map(kept_message).collect(),
                    })
                })
                .collect();
            let mut file = ConversationExport::new(conversation, messages, runs, files.as_ref());
            file.other_answers = other_answers;
            file
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
            )?;
            let mut new_ids: HashMap<String, String> = HashMap::new();
            for m in file.messages {
                let status = match m.status {
                    MessageStatus::Streaming => MessageStatus::Interrupted,
                    other => other,
                };
                let saved = messages::insert(
                    &tx,
                    &id,
                    &NewMessage {
                        role: m.role,
                        content: m.content,
                        tool_calls: m.tool_calls,
                        tool_call_id: m.tool_call_id,
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
                        attachments: imported_files(files.as_ref(), &m.attachments),
                    },
                )?;
                tx.execute_cached(
                    "UPDATE messages SET created_at = ?2, cost_pico = ?3 WHERE id = ?1",
                    rusqlite::params![saved.id, m.created_at, m.cost_pico],
                )?;
                new_ids.insert(m.id, saved.id);
            }
            for r in file.tool_runs {
                let Some(message_id) = new_ids.get(&r.message_id).cloned() else {
                    continue;
                };
                let retry_of = r.retry_of.and_then(|of| {
                    new_ids.get(&of.message_id).map(|message_id| CallRef {
                        message_id: message_id.clone(),
                        call_id: of.call_id,
                    })
                });
                let run = ToolRun {
                    id: ToolRun::id_for(&message_id, &r.call_id),
                    conversation_id: id.clone(),
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
                    rich: r.rich,
                };
                super::tool_loop::upsert_run(&tx, &run)?;
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
    // The other models' answers to the question shown last, written once its answer is.
    let mut others: Vec<&OtherAnswer> = Vec::new();
    for m in &file.messages {
        let text = m.content.as_deref().unwrap_or_default();
        match m.role {
            Role::User => {
                other_answers(&mut out, &others);
                others = file
                    .other_answers
                    .iter()
                    .filter(|o| o.after == m.id)
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
            }
            Role::System => {}
        }
    }
    other_answers(&mut out, &others);
    out
}

/// The other models' answers of a comparison, each folded under its model's name.
fn other_answers(out: &mut String, others: &[&OtherAnswer]) {
    for other in others {
        let model = other.model.as_deref().unwrap_or("another model");
        out.push_str(&format!(
            "<details>\n<summary>Also answered by {}</summary>\n\n",
            html_text(model)
        ));
        let answers: Vec<&ExportedMessage> = other
            .messages
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

    #[test]
    fn a_file_of_another_format_or_version_or_with_loose_ends_is_refused() {
        let file = ConversationExport {
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
            other_answers: vec![],
        };
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
            version: 2,
            ..file.clone()
        };
        assert!(newer.check().unwrap_err().message.contains("version 2"));
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
            }],
            ..file
        };
        assert!(loose.check().unwrap_err().message.contains("nowhere"));
    }
}
