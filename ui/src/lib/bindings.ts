// Generated from Rust by switchboard-core's `bindings` test: never edit by hand.
// After changing a type that crosses the IPC edge, run
//   UPDATE_BINDINGS=1 cargo test -p switchboard-core bindings
// and commit the result; the test command fails while this file and Rust disagree.

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

/**
 * What kind of error it is, for code to tell apart ([`CoreError::kind`]); the words are
 * the message's.
 */
export type ErrorKind = "invalid_input" | "not_found" | "conflict" | "database" | "keychain" | "settings" | "provider" | "mcp_config" | "mcp" | "registry" | "install" | "update" | "needs_approval" | "io" | "not_confirmed" | "cancelled";

/**
 * The one error shape the window sees: every command rejects with `{ kind, message, field }`.
 */
export type IpcError = { kind: ErrorKind, message: string, 
/**
 * For `invalid_input` and `conflict`: the form field at fault.
 */
field: string | null, };

/**
 * What the window needs to know before anything else.
 */
export type AppStatus = { version: string, 
/**
 * The home in use, as a person would write it.
 */
home: string, 
/**
 * Why the database could not be opened, when it could not.
 */
database_error: IpcError | null, 
/**
 * Whether a fresh start is offered ([`App::set_aside_database`]): only for a file that is
 * not a database SQLite can read. A locked one (another program has it) or one a newer
 * Switchboard wrote is good and is never set aside.
 */
fresh_start: boolean, };

export type KeychainStatus = { available: boolean, message: string, };

/**
 * Why the database is not available, kept for the app's lifetime so every caller can say so.
 */
export type DatabaseUnavailable = { 
/**
 * `locked`, `corrupt`, `too_new` or `open`.
 */
reason: string, message: string, };

export type Theme = "light" | "dark" | "system";

export type Settings = { theme: Theme, default_provider: string | null, default_model: string | null, max_rounds: number, tool_timeout_secs: number, run_time_limit_secs: number, 
/**
 * Ask the model for a few words on what each tool call does, for the status line (one
 * more small request per call, waited for at most [`DESCRIBE_WITHIN`]).
 */
describe_calls: boolean, 
/**
 * The system prompt a new conversation starts with (each conversation keeps its own copy,
 * edited from its header); empty for none.
 */
default_system_prompt: string, 
/**
 * The MCP Registry servers are found in (an organisation may run its own).
 */
mcp_registry: string, 
/**
 * How long a local server (Ollama) keeps a model loaded after an answer: `5m`, `1h`,
 * `30s`, a number of seconds, `0` (unload at once) or `-1` (for ever); empty for the
 * server's own default (Ollama's is five minutes).
 */
keep_alive: string, 
/**
 * How many days the audit record keeps each tool call (the last day's always).
 */
audit_retention_days: number, 
/**
 * Closing the window keeps the app running in the tray, so schedules go on; Quit in the
 * tray's menu ends it.
 */
keep_running_in_background: boolean, 
/**
 * The model may save short facts (the `remember` tool) and is told those relevant to a
 * question, in conversations outside projects (a project has its own switch). Off: nothing
 * is remembered, and nothing remembered is told.
 */
memory: boolean, };

export type Conversation = { id: string, title: string, created_at: number, updated_at: number, 
/**
 * The provider (by name) and model picked for this conversation, if any.
 */
provider: string | null, model: string | null, 
/**
 * Every tool call runs without asking (shown as a badge).
 */
auto_approve: boolean, 
/**
 * What the model is told before the conversation (empty: nothing).
 */
system_prompt: string, 
/**
 * The profile this conversation follows (its prompt, model, tools and limits), if any.
 */
profile_id: string | null, 
/**
 * The project it is in, if any (its instructions are added to the system prompt).
 */
project_id: string | null, };

/**
 * A conversation's switch for one server (`tool` is `None`) or one tool.
 */
export type ToolToggle = { server: string, tool: string | null, enabled: boolean, };

/**
 * What the person sets in a profile (and what its JSON export holds).
 */
export type ProfileFields = { system_prompt: string, 
/**
 * The provider (by name) and model; none for Settings' default model.
 */
provider: string | null, model: string | null, 
/**
 * The loop's limits; none for Settings' value.
 */
max_rounds: number | null, tool_timeout_secs: number | null, run_time_limit_secs: number | null, 
/**
 * Switches for servers (`tool` null) and tools; anything not listed is on.
 */
tools: Array<ToolToggle>, };

/**
 * A profile: what a conversation that follows it is told, asks and may use.
 */
export type Profile = { id: string, name: string, 
/**
 * New conversations start from it.
 */
is_default: boolean, created_at: number, updated_at: number, system_prompt: string, 
/**
 * The provider (by name) and model; none for Settings' default model.
 */
provider: string | null, model: string | null, 
/**
 * The loop's limits; none for Settings' value.
 */
max_rounds: number | null, tool_timeout_secs: number | null, run_time_limit_secs: number | null, 
/**
 * Switches for servers (`tool` null) and tools; anything not listed is on.
 */
tools: Array<ToolToggle>, };

/**
 * A profile read from a file, and what was changed to keep it here.
 */
export type ImportedProfile = { profile: Profile, 
/**
 * Each change in a sentence (a name taken, a provider this machine does not have).
 */
notes: Array<string>, };

/**
 * What a project holds besides its name, as the person set it.
 */
export type ProjectFields = { 
/**
 * Added to the system prompt of each of its conversations, after the profile's.
 */
instructions: string, 
/**
 * The profile a conversation made in the project starts from (none: the default's).
 */
profile_id: string | null, 
/**
 * The model may save facts to the project's memory and is told those relevant.
 */
memory: boolean, 
/**
 * Switches for servers (`tool` null) and tools, put over the profile's on each
 * conversation that starts in the project or moves into it; a server not named stays as
 * the conversation has it.
 */
tools: Array<ToolToggle>, 
/**
 * Its folders (absolute paths): while a turn in the project runs, the servers it uses are
 * given them as their roots in place of their own, and a path argument outside them asks.
 */
roots: Array<string>, };

/**
 * A project, with how many conversations are in it.
 */
export type Project = { id: string, name: string, created_at: number, updated_at: number, 
/**
 * Its conversations (a comparison's lanes not counted).
 */
conversations: number, 
/**
 * Added to the system prompt of each of its conversations, after the profile's.
 */
instructions: string, 
/**
 * The profile a conversation made in the project starts from (none: the default's).
 */
profile_id: string | null, 
/**
 * The model may save facts to the project's memory and is told those relevant.
 */
memory: boolean, 
/**
 * Switches for servers (`tool` null) and tools, put over the profile's on each
 * conversation that starts in the project or moves into it; a server not named stays as
 * the conversation has it.
 */
tools: Array<ToolToggle>, 
/**
 * Its folders (absolute paths): while a turn in the project runs, the servers it uses are
 * given them as their roots in place of their own, and a path argument outside them asks.
 */
roots: Array<string>, };

/**
 * A project as the window or the command line gives it: the profile by id or name.
 */
export type ProjectInput = { name: string, instructions: string, 
/**
 * The profile (id or name) its new conversations start from; none: the default profile.
 */
profile: string | null, 
/**
 * Its memory is on: the model may save facts to it and is told those relevant.
 */
memory: boolean, 
/**
 * Its tool switches, put over the profile's on each conversation that starts in it or
 * moves into it.
 */
tools: Array<ToolToggle>, 
/**
 * Its folders (absolute paths), given to the servers its turns use as their roots.
 */
roots: Array<string>, };

/**
 * A file of a project, as its list shows it.
 */
export type ProjectFile = { id: string, name: string, mime: string, size: number, 
/**
 * Its text's length, in characters.
 */
chars: number, passages: number, added_at: number, };

/**
 * How far adding files to a project has come: `done` of `total`, `file` the one being read.
 */
export type FilesProgress = { done: number, total: number, file: string, };

/**
 * The files added to a project, and why each other one was not (a sentence each).
 */
export type AddedFiles = { added: Array<ProjectFile>, refused: Array<string>, };

/**
 * A project kept from an export, and what was changed to keep it here.
 */
export type ImportedProject = { project: Project, 
/**
 * Each change in a sentence (a name taken, a profile this machine does not have, a file
 * or conversation that could not be kept).
 */
notes: Array<string>, };

/**
 * A fact kept in memory.
 */
export type Memory = { id: string, 
/**
 * The project whose memory it is in; none: the person's own.
 */
project_id: string | null, text: string, 
/**
 * The conversation it came from (none: written by the person, or that conversation was
 * deleted), and its title.
 */
conversation_id: string | null, conversation_title: string | null, 
/**
 * Kept by the model in a conversation (which may since have been deleted); else written
 * by the person.
 */
from_conversation: boolean, created_at: number, updated_at: number, };

/**
 * Which profile a new conversation starts from.
 */
export type ProfileChoice = { "kind": "default" } | { "kind": "none" } | { "kind": "named", "id": string };

/**
 * One model of a comparison, as the window names it.
 */
export type ComparedModel = { provider: string, 
/**
 * `None`: the provider's default model.
 */
model: string | null, };

/**
 * What the composer of one conversation holds.
 */
export type Draft = { text: string, 
/**
 * Files kept already that the message is to carry.
 */
attachments: Array<Attachment>, 
/**
 * Compare is on: the message is to go to the models in `compared`.
 */
comparing: boolean, compared: Array<ComparedModel>, };

export type Role = "user" | "assistant" | "system" | "tool";

export type MessageStatus = "streaming" | "complete" | "interrupted" | "error";

/**
 * A tool call an answer made, as kept: its id, the tool's name (as the model was given it) and
 * exactly the argument text the model sent.
 */
export type StoredCall = { id: string, name: string, arguments: string, };

/**
 * Why an answer ended, as kept: what its provider said, or `stopped` when the person stopped
 * it. A reason this version does not know reads as `other`.
 */
export type Finish = "stop" | "tool_calls" | "length" | "content_filter" | "stopped" | "other";

/**
 * What kind of file an attachment is, which decides how a model is given it.
 */
export type AttachmentKind = "image" | "pdf" | "text" | "other";

/**
 * A file attached to a message, as the message keeps it.
 */
export type Attachment = { 
/**
 * The SHA-256 of its bytes, in hex: its name in the folder.
 */
sha256: string, 
/**
 * Its file name as the person had it (shown, and given to the model with text files).
 */
name: string, 
/**
 * Its media type, from its content.
 */
mime: string, size: number, kind: AttachmentKind, };

/**
 * A kept file a message is to carry, as the window or the command line names it: only its
 * SHA-256 and name are taken; what it is comes from its bytes again.
 */
export type AttachmentRef = { sha256: string, name: string, };

/**
 * What became of files a person chose or dropped: those kept, and why each other one was not.
 */
export type Attached = { kept: Array<Attachment>, refused: Array<string>, };

/**
 * Files dragged over the window, as the window is told: something is over it, it left, or it
 * was dropped. Dropped files are attached (kept, or refused with the reason), except MCP
 * bundles, each offered for install as if chosen with the button (or refused with the reason).
 */
export type DropEvent = { "type": "over" } | { "type": "left" } | { "type": "dropped", attached: Attached, } | { "type": "bundle", offered: OfferedBundle, } | { "type": "bundle_refused", file_name: string, reason: string, };

export type Message = { id: string, conversation_id: string, role: Role, content: string | null, created_at: number, tool_calls: Array<StoredCall> | null, tool_call_id: string | null, name: string | null, finish_reason: Finish | null, status: MessageStatus, provider: string | null, model: string | null, input_tokens: number | null, output_tokens: number | null, 
/**
 * The model's reasoning text, where it showed any.
 */
reasoning: string | null, 
/**
 * Why an answer failed (status `error`), as the person reads it.
 */
error: string | null, 
/**
 * A tool message whose result is an error.
 */
is_error: boolean, 
/**
 * Set when `content` is only the start of a long tool result ([`TOOL_PREVIEW_CHARS`]):
 * how many characters the whole has. [`Store::message_content`] reads the whole.
 */
full_length: number | null, 
/**
 * Files attached to a message of the person's (their bytes are in the attachments folder).
 */
attachments: Array<Attachment>, 
/**
 * What the answer cost in pico-dollars, when its model had a price.
 */
cost_pico: number | null, 
/**
 * What of its project's files and its memory the answer's request was given, when any.
 */
given?: KnowledgeUse, };

/**
 * One summary of a conversation's earlier messages.
 */
export type Summary = { id: string, conversation_id: string, 
/**
 * The last message it covers; it covers every message before it too.
 */
through_message_id: string, text: string, 
/**
 * How many messages it covers in its own words (beside those an earlier summary covered).
 */
summarised: number, 
/**
 * How many messages it covers only by saying they were left out (they were too many to
 * summarise at once).
 */
left_out: number, provider: string | null, model: string | null, created_at: number, };

/**
 * What a request to the model holds, in tokens, and of how much.
 */
export type ContextUse = { 
/**
 * The whole request.
 */
tokens: number, 
/**
 * The model's window, when known.
 */
window: number | null, system: number, 
/**
 * The offered tools' definitions.
 */
tools: number, 
/**
 * The messages' text, tool calls and results.
 */
history: number, 
/**
 * Images and documents attached to messages or carried by results.
 */
attachments: number, 
/**
 * Of [`ContextUse::tools`], the list of skills the model may load (issue 61).
 */
skills: number, 
/**
 * How it was counted: the tokenizer's name, or "estimate"; "calibrated" when scaled by
 * what the provider reported.
 */
counted_by: string, 
/**
 * What the whole conversation would have taken, when it was more than the window and the
 * request was fitted to it (older messages summarised or left out): the header says the
 * model runs with a window smaller than the conversation needs.
 */
needed?: number, 
/**
 * What of its project's files and its memory the request was given (issue 62), when it
 * was given any: the system prompt holds them.
 */
given?: KnowledgeUse, };

/**
 * The tools one answer's request offered the model, when it was given a choice of the
 * conversation's tools and a search for the rest (an answer with no record was offered every
 * tool switched on).
 */
export type ToolOffer = { 
/**
 * The answer.
 */
message_id: string, 
/**
 * The tools offered, in the order the request listed them (display names).
 */
offered: Array<string>, 
/**
 * How many tools the conversation had switched on.
 */
of: number, 
/**
 * Why a choice was made.
 */
why: string, };

/**
 * What a turn was given of its project's files (which files whole, or which passages) and of
 * its memory (which facts): kept with what the model was given, so that the conversation's
 * header says it.
 */
export type KnowledgeUse = { 
/**
 * Files given whole, by name.
 */
whole: Array<string>, 
/**
 * Passages given, as "file, passage N of M".
 */
passages: Array<string>, 
/**
 * Remembered facts given, as they read.
 */
facts: Array<string>, };

/**
 * One model's window: how many tokens a request to it may hold, and whose word that is.
 */
export type ModelWindow = { provider: string, model: string, tokens: number, said_by: WindowSource, };

/**
 * How a model is given tools: through its API's own tool calling, described in its system
 * prompt and called in text ([`prompted`]), or not at all.
 */
export type ToolMode = "native" | "prompted" | "off";

/**
 * How a model is given tools, and whose word that is.
 */
export type ToolModeChoice = { mode: ToolMode, source: ToolModeSource, 
/**
 * What would apply without the person's word: what was learned, else native.
 */
automatic: ToolMode, };

/**
 * Whose word a model's [`ToolMode`] is.
 */
export type ToolModeSource = "person" | "learned" | "default";

/**
 * Whose word a window is.
 */
export type WindowSource = "person" | "learned" | "provider" | "table";

/**
 * Whether a call was let run; the values of `tool_runs.decision`.
 */
export type ToolDecision = "allowed" | "denied";

/**
 * Why a call was allowed or denied; the values of `tool_runs.decision_scope`.
 */
export type ApprovalScope = "once" | "conversation" | "always" | "trusted" | "auto_approve" | "policy";

/**
 * One tool call as it happened.
 */
export type ToolRun = { id: string, conversation_id: string, 
/**
 * The assistant message that asked for the call.
 */
message_id: string, call_id: string, server: string, tool: string, 
/**
 * "Server · Tool Name" as the person saw it when the call ran; the name the model used
 * for a tool that does not exist. Rows older than the column get the server's name and the
 * tool's, title-cased.
 */
display_name: string, 
/**
 * The argument text exactly as the model sent it.
 */
arguments: string, 
/**
 * `None` when the call never got that far (an unknown tool).
 */
decision: ToolDecision | null, decision_scope: ApprovalScope | null, deny_reason: string | null, started_at: number | null, finished_at: number | null, is_error: boolean, 
/**
 * The failed call this one ran again, from a Retry (the first of a chain of retries).
 */
retry_of: CallRef | null, 
/**
 * The model's few words on what the call did, when Settings asked for them.
 */
description: string | null, 
/**
 * Whether a Retry can run it again ([`ToolRun::retry_refusal`] has nothing to say); worked
 * out from the rest whenever a run is read or made, never saved.
 */
can_retry: boolean, 
/**
 * Whether the words the card shows are the server's answer (its result, an error it
 * reported included), not Switchboard's own about the call (a timeout, a crash, a refusal,
 * a denial): the card reads Switchboard's words for what happened, and never the server's,
 * which are hostile text. Worked out like `can_retry`: `result` holds the server's whole
 * answer as a JSON object, and Switchboard's words as plain text.
 */
answered: boolean, 
/**
 * Whether the result has more than text for a person to see (images, audio, resources,
 * links, structured content: [`crate::mcp::results::is_rich`]); the card then asks for
 * its [`crate::mcp::results::view`].
 */
rich: boolean, 
/**
 * Who asked for the call when the model did not: the MCP App shown in the card of another
 * call ([`Store::record_app_call`]). Such a call has no tool message: the model never
 * asked, and does not read its result.
 */
asked_by?: string, 
/**
 * What decided whether it ran, in the person's words: the rule of a policy file, the
 * standing approval, the person, … ([`crate::policy::Judgement::by`]).
 */
decided_by?: string, 
/**
 * The task the server answered the call with (the Tasks extension), and where it stands:
 * kept, so a task outlives its run and Switchboard ([`super::tasks`]).
 */
task?: CallTask, };

/**
 * One piece of a result that is not plain text, as a tool card shows it. Base64 data is passed
 * on as the server sent it; the window decodes it into a blob of the named type.
 */
export type ResultPart = { "kind": "image", mime_type: string, data: string, } | { "kind": "audio", mime_type: string, data: string, } | { "kind": "unshown", label: string, } | { "kind": "resource", uri: string, mime_type: string | null, text: string, } | { "kind": "link", uri: string, name: string, title: string | null, description: string | null, mime_type: string | null, };

/**
 * What a tool card shows of a result beyond its text.
 */
export type ResultView = { 
/**
 * The result's non-text content, in its order.
 */
parts: Array<ResultPart>, 
/**
 * The result's `structuredContent`, as sent.
 */
structured: JsonValue | null, };

/**
 * A tool the person allowed to run without asking.
 */
export type StandingApproval = { server: string, tool: string, 
/**
 * "Server · Tool Name", as the Settings list shows it.
 */
display_name: string, 
/**
 * The conversation it holds in; `None` for every conversation.
 */
conversation_id: string | null, 
/**
 * That conversation's title, for the Settings list.
 */
conversation_title: string | null, created_at: number, };

/**
 * One piece of a hit's text: matched, or around the match.
 */
export type SnippetPart = { text: string, hit: boolean, };

/**
 * A conversation whose title or one of whose messages matched.
 */
export type SearchHit = { conversation_id: string, conversation_title: string, 
/**
 * The message that matched; `None` when the title did.
 */
message_id: string | null, 
/**
 * Where that message sits in its conversation: a window opens the conversation at it by
 * reading pages back until one starts at or before it (a page's `older`).
 */
seq: number | null, role: Role | null, 
/**
 * When the message (or the conversation) was written, ms since the epoch.
 */
created_at: number, 
/**
 * The words around the match (the title for a title hit).
 */
snippet: Array<SnippetPart>, 
/**
 * The message is in a branch not shown now (another answer, or the question before an
 * edit): opening it shows that branch (`reveal_message`).
 */
other_version: boolean, };

/**
 * The two ways a conversation is exported.
 */
export type ExportFormat = "markdown" | "json";

export type ConversationDetail = { conversation: Conversation, 
/**
 * The newest messages (a page of them, oldest first; tool results as previews).
 */
messages: Array<Message>, 
/**
 * The calls of the answers in `messages`, for the tool cards.
 */
tool_runs: Array<ToolRun>, 
/**
 * The records of the tools offered by the answers in `messages`, where the model was
 * given a choice of them.
 */
offers: Array<ToolOffer>, 
/**
 * Where the page before this one ends
 * ([`Conversations::older_messages`](super::Conversations::older_messages)); `None` when
 * `messages` starts at the first message.
 */
older: number | null, 
/**
 * Where branches part among `messages`.
 */
branches: Array<BranchPoint>, 
/**
 * What the composer held when the conversation was left (none: nothing).
 */
draft: Draft | null, 
/**
 * The summaries of earlier messages made to fit the model's window, oldest first: the
 * newest whose last message is in the conversation is the one the model reads.
 */
summaries: Array<Summary>, 
/**
 * What the conversation's model was last given, in tokens (the header's "18.2k of 128k").
 */
context: ContextUse | null, };

/**
 * Where the branches of a conversation part, as a page of messages shows it: the message
 * shown at that point, which of the branches it is, and how many there are.
 */
export type BranchPoint = { 
/**
 * The first message of the branch shown at this point (a question that was edited, or
 * an answer asked for again).
 */
message_id: string, 
/**
 * Which branch is shown, from 0 (the first one written).
 */
position: number, count: number, 
/**
 * At a comparison, the model (“Provider · model”) that wrote each branch, by position;
 * empty elsewhere.
 */
models: Array<string | null>, };

/**
 * A branch point after a switch: the point as it is now, and the number of its first message
 * (read pages back to it to show it).
 */
export type SwitchedBranch = { point: BranchPoint, seq: number, };

/**
 * A run of consecutive messages of one conversation, oldest first, with the tool calls their
 * answers made.
 */
export type MessagePage = { 
/**
 * The page's messages, then the late results of its calls' tasks that came after it
 * (kept where the conversation stood when each task ended, maybe pages later).
 */
messages: Array<Message>, 
/**
 * The calls of the answers in `messages` (without their results: those are the tool
 * messages).
 */
tool_runs: Array<ToolRun>, 
/**
 * The records of the tools offered by the answers in `messages`, where the model was
 * given a choice of them.
 */
offers: Array<ToolOffer>, 
/**
 * Pass as `before` to read the page before this one; `None` when this page starts at the
 * conversation's first message.
 */
older: number | null, 
/**
 * Where branches part among `messages` (an edited question, an answer asked for again).
 */
branches: Array<BranchPoint>, };

/**
 * A conversation's tools as the tools panel shows them.
 */
export type ConversationTool = { server: string, tool: string, wire_name: string, display_name: string, description: string, 
/**
 * On for this conversation (its own switch, else its server's, else on).
 */
enabled: boolean, 
/**
 * Not offered: changed since pinned (until accepted on the Servers page), or left out of
 * its server's list ([`crate::mcp::server::HeldBackTool`]).
 */
held_back: boolean, 
/**
 * Why it is held back, for the person.
 */
held_reason: string | null, 
/**
 * Rough tokens its definition costs in every request (characters / 4).
 */
estimated_tokens: number, 
/**
 * The rule that decides every call of it whatever its arguments (allow, ask, block), of
 * the person's policy.json or the organisation's; a blocked tool is never offered.
 */
rule: RuleHit | null, };

/**
 * Where a skill comes from.
 */
export type SkillOrigin = { "kind": "folder", path: string, } | { "kind": "server", server: string, uri: string, };

/**
 * One file of a skill.
 */
export type SkillFile = { 
/**
 * Its path inside the skill, with `/` between its parts.
 */
path: string, bytes: number, 
/**
 * It is a program ([`is_script`]).
 */
script: boolean, };

/**
 * A skill as the window and the command line see it.
 */
export type Skill = { 
/**
 * Its name (for a folder that is not a valid skill, the folder's name).
 */
name: string, description: string, origin: SkillOrigin, 
/**
 * Every file, `SKILL.md` first.
 */
files: Array<SkillFile>, bytes: number, 
/**
 * Conversations may use it (unless one, or its profile, switches it off).
 */
enabled: boolean, 
/**
 * The front matter's other fields (license, metadata, compatibility…), as written: shown,
 * not acted on.
 */
fields: Record<string, unknown>, 
/**
 * Fields of its front matter Switchboard never acts on (`hooks`, `allowed-tools`, …).
 */
ignored: Array<string>, 
/**
 * It has files that are programs (scripts): the model can read them, and run them only
 * where the person allowed it ([`scripts`]).
 */
has_scripts: boolean, 
/**
 * Whether the model may ask to run its scripts.
 */
scripts: ScriptsAllowed, 
/**
 * A server's skill the person switched on whose files changed since: off until they
 * switch it on again (their approval was bound to the files it had).
 */
changed: boolean, 
/**
 * A server's skill: what switching it on approves (the hash of its URI, front matter and
 * files' digests as listed), sent back with the switch so that what is approved is what
 * was shown. `None` for the person's own skills.
 */
approval: string | null, 
/**
 * Why the folder is not a skill Switchboard can use; `None` for a good one.
 */
problem: string | null, };

/**
 * Whether the person lets the model ask to run a skill's scripts.
 */
export type ScriptsAllowed = "none" | "off" | "on" | "changed";

/**
 * A conversation that used a skill.
 */
export type SkillUse = { conversation_id: string, title: string, 
/**
 * When its model last loaded the skill (ms since the epoch).
 */
at: number, };

/**
 * A skill in full, as its page shows it.
 */
export type SkillDetail = { skill: Skill, 
/**
 * Its instructions (what follows the front matter), as the model is given them.
 */
instructions: string, 
/**
 * The conversations whose model loaded it, newest first.
 */
used_in: Array<SkillUse>, 
/**
 * One of the person's skills with scripts: the digest of its files as read here, which
 * allowing its scripts sends back ([`App::set_skill_scripts`]).
 */
files_digest: string | null, 
/**
 * Its scripts as read here (each up to [`SHOWN_SCRIPT_BYTES`]), shown before they are
 * allowed.
 */
scripts: Array<ShownScript>, };

/**
 * A skill and whether a conversation may use it.
 */
export type ConversationSkill = { skill: Skill, 
/**
 * On in this conversation: on for every conversation, and not switched off here.
 */
on: boolean, 
/**
 * Switched off in this conversation (or by the profile it follows).
 */
switched_off_here: boolean, };

/**
 * A script as the person reads it before allowing it.
 */
export type ShownScript = { path: string, 
/**
 * Its text (not UTF-8: said so), up to [`SHOWN_SCRIPT_BYTES`].
 */
text: string, 
/**
 * More of it is not shown.
 */
cut: boolean, };

/**
 * When a schedule runs.
 */
export type TimeRule = { "kind": "every", minutes: number, } | { "kind": "daily", days: number, at: string, weekdays_only: boolean, } | { "kind": "once", at: number, };

/**
 * What happens to a run that was missed (the computer was off or asleep at its time).
 */
export type Missed = "run_once" | "skip";

/**
 * A schedule as the person writes it.
 */
export type NewSchedule = { name: string, prompt: string, rule: TimeRule, 
/**
 * The profile its conversations start from (its model, tools, system prompt and skills);
 * `None`: the default profile.
 */
profile?: string | null, 
/**
 * A provider (and model) in place of the profile's.
 */
provider?: string | null, model?: string | null, missed: Missed, 
/**
 * How long a call that would ask waits for the person before it is denied.
 */
approval_wait_minutes: number, };

/**
 * A schedule as kept.
 */
export type Schedule = { id: string, enabled: boolean, 
/**
 * When it was made (ms): where `every` and `daily` rules count from.
 */
created_at: number, 
/**
 * When it runs next (ms); `None`: never again (a `once` that ran, or one switched off).
 */
next_at: number | null, 
/**
 * The rule in words ("every day at 08:00, weekdays only").
 */
rule_text: string, name: string, prompt: string, rule: TimeRule, 
/**
 * The profile its conversations start from (its model, tools, system prompt and skills);
 * `None`: the default profile.
 */
profile?: string | null, 
/**
 * A provider (and model) in place of the profile's.
 */
provider?: string | null, model?: string | null, missed: Missed, 
/**
 * How long a call that would ask waits for the person before it is denied.
 */
approval_wait_minutes: number, };

/**
 * What became of a run.
 */
export type RunStatus = "running" | "waiting" | "completed" | "failed" | "stopped" | "skipped" | "interrupted";

/**
 * One run of a schedule.
 */
export type ScheduleRun = { id: string, schedule_id: string, schedule_name: string, 
/**
 * The time it was due (ms); for a run asked for by hand, when it was asked.
 */
due_at: number, started_at: number, finished_at: number | null, status: RunStatus, 
/**
 * It was missed and ran at the next start.
 */
late: boolean, 
/**
 * Someone asked for it (`schedule run`, "Run now").
 */
manual: boolean, conversation_id?: string | null, 
/**
 * Why it failed, what waits for approval, or how it ended.
 */
message?: string | null, };

/**
 * A run asked for from the window: its record and the conversation it landed in.
 */
export type ScheduleRunStarted = { run_id: string, conversation_id: string, };

/**
 * Where a call's task stands; the values of `tool_runs.task_state`.
 */
export type TaskState = "running" | "background" | "completed" | "failed" | "cancelled" | "lost";

/**
 * The task a call was answered with.
 */
export type CallTask = { 
/**
 * The server's id for it.
 */
id: string, state: TaskState, };

/**
 * A person's request for one running call.
 */
export type CallControl = "cancel" | "go_on";

/**
 * A tool switched off in a conversation that fits a file attached to it (seed 002), and why.
 */
export type ToolSuggestion = { server: string, tool: string, display_name: string, 
/**
 * Which file it fits and why: "scores.csv: its name says “csv”".
 */
why: string, };

/**
 * One file a tool produced in a conversation.
 */
export type ConversationArtifact = { file: Attachment, 
/**
 * The tool message that carries it.
 */
message_id: string, 
/**
 * The call that produced it.
 */
call_id: string, 
/**
 * The tool's name as the model called it.
 */
tool: string, created_at: number, };

/**
 * A resource link a tool's result carries (MCP `resource_link`): read on demand.
 */
export type ToolLink = { 
/**
 * The assistant message that asked for the call.
 */
message_id: string, call_id: string, 
/**
 * The server that ran the call, and reads the link.
 */
server: string, tool: string, uri: string, name: string, mime_type: string | null, };

/**
 * A model's price, in pico-dollars per token.
 */
export type Price = { input: number, output: number, 
/**
 * Input read from the provider's cache, where it prices that apart.
 */
cached_input: number | null, };

/**
 * Whose word a price is.
 */
export type PriceSource = "person" | "provider";

/**
 * One model's price, as the price table shows it.
 */
export type ModelPrice = { provider: string, model: string, price: Price, said_by: PriceSource, };

/**
 * Requests, tokens and cost added up (of a conversation, or of one day, provider and model).
 */
export type UsageTotal = { requests: number, input_tokens: number, output_tokens: number, 
/**
 * The cost of the requests whose model had a price.
 */
cost_pico: number, 
/**
 * Requests whose model had no price (their tokens are counted, their cost is not).
 */
unpriced: number, 
/**
 * Of the input tokens, those read from the provider's prompt cache.
 */
cached_input_tokens: number, };

/**
 * One day's use of one model (days in UTC).
 */
export type UsageDay = { 
/**
 * `YYYY-MM-DD`.
 */
day: string, provider: string, model: string, requests: number, input_tokens: number, output_tokens: number, 
/**
 * The cost of the requests whose model had a price.
 */
cost_pico: number, 
/**
 * Requests whose model had no price (their tokens are counted, their cost is not).
 */
unpriced: number, 
/**
 * Of the input tokens, those read from the provider's prompt cache.
 */
cached_input_tokens: number, };

/**
 * Use since a time: by day, provider and model, and all of it added up.
 */
export type UsageReport = { 
/**
 * Milliseconds since 1970.
 */
since: number, days: Array<UsageDay>, total: UsageTotal, };

/**
 * One call of a conversation: the call `call_id` of the answer `message_id` (a model's call
 * ids are only unique within one answer; Ollama and Gemini number them from 0 each time).
 */
export type CallRef = { message_id: string, call_id: string, };

/**
 * Why a run ended.
 */
export type StopReason = "completed" | "max_rounds" | "too_many_failures" | "time_limit" | "cancelled" | "error" | "retry_failed";

/**
 * A tool call as the model proposed it, before any decision.
 */
export type ProposedCall = { call_id: string, 
/**
 * The assistant message that asked for it.
 */
message_id: string, 
/**
 * The name the model used.
 */
wire_name: string, 
/**
 * The server and tool it maps to; `None` for a name that was never offered.
 */
server: string | null, tool: string | null, 
/**
 * "Server · Tool Name", or the wire name of an unknown tool.
 */
display_name: string, 
/**
 * The argument text exactly as the model sent it.
 */
arguments: string, 
/**
 * The failed call this one runs again (the first of a chain of retries), when the person
 * pressed a Retry.
 */
retry_of: CallRef | null, };

/**
 * One call in an approval dialog: everything the person needs to decide, and exactly what
 * will run if they allow it.
 */
export type ApprovalItem = { call_id: string, server: string, tool: string, display_name: string, 
/**
 * The tool's description, as its server gave it (hostile text: shown as plain text).
 */
description: string, 
/**
 * The arguments, pretty-printed: what runs is exactly this.
 */
arguments: string, 
/**
 * The server marked the tool `destructiveHint`.
 */
destructive: boolean, 
/**
 * Why the person is asked: the rule that says ask, what the turn has read, a path outside
 * the server's roots, or that nothing lets the call run.
 */
asked_because: string, 
/**
 * The rule the dialog offers to make from this call (allow this tool, with these
 * arguments' folders or hosts); made only after the native confirmation.
 */
suggested_rule: Rule | null, 
/**
 * It is asked about every time (a skill's script): the dialog offers Allow once and
 * Deny only, and Rust takes any wider answer as once.
 */
once_only: boolean, };

/**
 * What a rule does to the calls it applies to.
 */
export type Outcome = "allow" | "ask" | "block";

/**
 * A test on one argument. Written as an object with one key: `{"inside": ["~/notes"]}`.
 */
export type Test = { "inside": Array<string> } | { "host": Array<string> } | { "matches": string } | { "range": { min?: number, max?: number, } } | { "one_of": Array<JsonValue> } | { "not": Test };

/**
 * One rule of a policy file.
 */
export type Rule = { 
/**
 * A server's name in mcp.json, or `*` for every server.
 */
server: string, 
/**
 * One tool of the server; every tool when absent.
 */
tool?: string, 
/**
 * Tests on the call's arguments, each by the argument's name or a JSON pointer
 * (`/options/path`); all must hold for the rule to apply.
 */
when?: { [key in string]: Test }, outcome: Outcome, 
/**
 * Why the rule exists, in the person's words: shown with every decision it makes.
 */
note?: string, };

/**
 * A server, or one of its tools, named by a list (untrusted content, results reviewed).
 */
export type Target = { server: string, tool?: string, };

/**
 * The whole of a policy file.
 */
export type PolicyFile = { rules?: Array<Rule>, 
/**
 * Sources of untrusted content (web fetchers, mail and chat readers, search): once a turn
 * has read from one, another server's tools that are not read-only ask.
 */
untrusted?: Array<Target>, 
/**
 * Results the person sees, and may cut or withhold, before the model reads them.
 */
review?: Array<Target>, 
/**
 * The managed file only: the servers that may be added or run at all (`None`: any).
 */
allowedServers?: Array<string>, };

/**
 * Whose file a rule is in.
 */
export type RuleSource = "user" | "managed";

/**
 * The rule that decided a call, in words a person reads.
 */
export type RuleHit = { outcome: Outcome, source: RuleSource, 
/**
 * Its place in its file (`rules[2]`).
 */
index: number, 
/**
 * "rule 3 of policy.json: ask before fs · write_file when path is not inside ~/notes".
 */
said: string, };

/**
 * Which list of servers and tools a mark puts one on.
 */
export type PolicyMark = "untrusted" | "review";

/**
 * The policy as the window shows it.
 */
export type PolicyView = { 
/**
 * Where the person's file is.
 */
path: string, file: PolicyFile, 
/**
 * The organisation's policy, merged from its files (empty when there is none).
 */
managed: PolicyFile, 
/**
 * The managed files read, in order.
 */
managed_paths: Array<string>, 
/**
 * Each of the person's rules in words, in the file's order.
 */
said: Array<string>, 
/**
 * Each of the organisation's rules in words.
 */
managed_said: Array<string>, };

/**
 * Who asked for a call.
 */
export type AuditOrigin = "model" | "retry" | "app" | "cli";

/**
 * Whether a call ran.
 */
export type AuditDecision = "allowed" | "denied" | "not_run";

/**
 * One call in the audit record.
 */
export type AuditEntry = { 
/**
 * Its place in the record (0 until written).
 */
seq: number, 
/**
 * When it was decided (ms since the epoch).
 */
at: number, origin: AuditOrigin, conversation_id: string | null, conversation_title: string | null, server: string, tool: string, 
/**
 * The arguments exactly as sent.
 */
arguments: string, decision: AuditDecision, 
/**
 * What decided: a rule, a standing approval, the person, the organisation's policy.
 */
decided_by: string, duration_ms: number | null, is_error: boolean, 
/**
 * SHA-256 of the whole result as the server sent it (hex), and its size in bytes.
 */
result_sha256: string | null, result_bytes: number | null, };

/**
 * Which entries to read.
 */
export type AuditFilter = { 
/**
 * From this time on (ms since the epoch).
 */
since?: number, 
/**
 * Before this entry (`seq`): the next page back.
 */
before?: number, server?: string, conversation_id?: string, decision?: AuditDecision, 
/**
 * The most entries, newest first (at most 10,000; default 200).
 */
limit?: number, };

export type RunEvent = { "type": "run_started", run_id: string, conversation_id: string, } | { "type": "result_review_required", request_id: string, call_id: string, display_name: string, 
/**
 * What the model would read.
 */
content: string, } | { "type": "status", text: string, } | { "type": "answer_started", message: Message, } | { "type": "text_delta", message_id: string, text: string, } | { "type": "reasoning_delta", message_id: string, text: string, } | { "type": "tool_warning", tool: string, message: string, } | { "type": "tools_offered", offered: Array<string>, of: number, found: Array<string>, why: string, } | { "type": "context_used", used: ContextUse, } | { "type": "history_fitted", summary: Summary | null, left_out: number, message: string, } | { "type": "tool_call_proposed", call: ProposedCall, } | { "type": "approval_required", request_id: string, calls: Array<ApprovalItem>, } | { "type": "tool_decided", call_id: string, decision: ToolDecision, 
/**
 * Who or what decided; `None` for a call denied before anyone was asked.
 */
scope: ApprovalScope | null, reason: string | null, 
/**
 * What decided, in the person's words ([`crate::store::ToolRun::decided_by`]).
 */
decided_by?: string, } | { "type": "tool_started", call_id: string, } | { "type": "tool_described", call_id: string, description: string, } | { "type": "tool_task", call_id: string, task_id: string, } | { "type": "tool_progress", call_id: string, progress: number, total: number | null, message: string | null, } | { "type": "tool_finished", call_id: string, is_error: boolean, 
/**
 * What the model gets (capped, with a visible marker when cut), or its first
 * [`crate::store::TOOL_PREVIEW_CHARS`] characters when longer.
 */
content: string, 
/**
 * How many characters the whole has when `content` is only its start (the tool
 * message, saved next, has it whole).
 */
full_length: number | null, duration_ms: number, 
/**
 * Whether its Retry can run it again (it failed; see [`crate::store::ToolRun::retry_refusal`]).
 */
can_retry: boolean, 
/**
 * Whether `content` is the server's answer, not Switchboard's words about the call
 * ([`crate::store::ToolRun::answered`]).
 */
answered: boolean, 
/**
 * Whether the result has more than text to show ([`crate::store::ToolRun::rich`]).
 */
rich: boolean, 
/**
 * The files the result carried, kept (the tool message carries them too): the canvas
 * lists them.
 */
artifacts: Array<Attachment>, 
/**
 * The SHA-256 of the file the result asked the canvas to open at (seed 002's
 * `display.open_canvas` and `primary_file`).
 */
open_canvas: string | null, 
/**
 * What decided it ran, and what the person did with its result when they reviewed it
 * ([`crate::store::ToolRun::decided_by`], as saved).
 */
decided_by?: string, 
/**
 * The server's task the call ran as, and where it stands: `background` when the
 * person went on without it (its result comes later in the conversation).
 */
task?: CallTask, } | { "type": "message_saved", message: Message, } | { "type": "run_finished", reason: StopReason, 
/**
 * What a person should know about why it ended, when it is not the usual.
 */
message: string | null, } | { "type": "error", message: string, retryable: boolean, } | { "type": "lane", lane: number, provider: string, model: string, event: RunEvent, } | { "type": "comparison_folded", message_id: string | null, };

/**
 * The person's choice for one call.
 */
export type Decision = "allow_once" | "allow_conversation" | "allow_always" | "deny";

export type ApprovalAnswer = { call_id: string, decision: Decision, 
/**
 * Why the person denied it, passed on to the model.
 */
reason?: string | null, };

/**
 * The person's word on a result they review before the model reads it.
 */
export type ReviewVerdict = { "kind": "pass" } | { "kind": "cut", text: string, } | { "kind": "withhold" };

export type ProviderKind = "openai" | "anthropic" | "gemini" | "ollama" | "openrouter" | "openai_compatible";

export type ProviderKindInfo = { kind: ProviderKind, label: string, 
/**
 * Empty when the kind has no usual address and the person must give one.
 */
default_base_url: string, needs_key: boolean, };

/**
 * A starting point in the "Add a provider" form: which API a host speaks and where it usually
 * listens. Only the kind and base URL are stored; the preset is not remembered.
 */
export type Preset = { id: string, label: string, kind: ProviderKind, 
/**
 * Empty only for the custom preset.
 */
base_url: string, needs_key: boolean, 
/**
 * Runs on this computer.
 */
local: boolean, };

/**
 * A provider as the UI and the command line see it: never with its key, only whether one is
 * stored.
 */
export type Provider = { id: string, name: string, kind: ProviderKind, base_url: string, default_model: string | null, has_key: boolean, created_at: number, };

/**
 * A provider as typed into the form or the command line.
 */
export type NewProvider = { name: string, kind?: string | null, 
/**
 * Empty or missing: the kind's usual address.
 */
base_url?: string | null, default_model?: string | null, 
/**
 * Moved into the keychain and dropped; never stored anywhere else.
 */
api_key?: string | null, };

/**
 * One model a provider offers.
 */
export type ModelInfo = { 
/**
 * What goes in a request's `model`.
 */
id: string, 
/**
 * A human name, where the provider gives one.
 */
name: string | null, 
/**
 * Whether it takes images, where the list says (OpenRouter's
 * `architecture.input_modalities`); absent when it does not say.
 */
takes_images?: boolean, 
/**
 * What it costs, where the list says (OpenRouter's `pricing`, dollars per token).
 */
price?: Price, 
/**
 * Its window in tokens, where the list says (OpenRouter's `context_length`, LM Studio's
 * `max_context_length`, Groq's `context_window`, Gemini's `inputTokenLimit`).
 */
window?: number, 
/**
 * Whether it calls tools through its API, where the server says (Ollama's `/api/show`
 * `capabilities`); absent when it does not say.
 */
takes_tools?: boolean, 
/**
 * What a local server says of the model's file: its size on disk, family, parameter count
 * and quantisation (Ollama's `/api/tags` `size` and `details`).
 */
local?: LocalModel, };

/**
 * What a local server says of an installed model.
 */
export type LocalModel = { 
/**
 * Bytes on disk.
 */
size_bytes?: number, 
/**
 * Its family (`llama`, `qwen3`).
 */
family?: string, 
/**
 * Its parameter count as the server writes it (`8.0B`).
 */
parameters?: string, 
/**
 * Its quantisation (`Q4_K_M`).
 */
quantisation?: string, };

/**
 * How far a model's download has come, for a progress bar: the server's step, and for a file
 * downloading its bytes, speed and time left.
 */
export type PullProgress = { 
/**
 * The server's words for the step (`pulling manifest`, `verifying sha256 digest`,
 * `success`).
 */
status: string, 
/**
 * Bytes of the file downloading so far, and in all.
 */
completed?: number, total?: number, 
/**
 * Bytes a second over the last few seconds, once it can be told.
 */
bytes_per_second?: number, 
/**
 * Seconds until the file is down at that speed.
 */
seconds_left?: number, 
/**
 * Bytes of every file begun so far, and their size in all: a model comes in several
 * files, and a bar of these does not start again with each.
 */
all_completed?: number, all_total?: number, };

/**
 * What kind of failure a [`ProviderError`] is, for the window and `--json` output.
 */
export type ProviderFailure = "unauthorized" | "rate_limited" | "context_too_long" | "too_many_tools" | "overloaded" | "server" | "network" | "redirected" | "stream_interrupted" | "bad_response" | "cancelled" | "no_key" | "unsupported";

/**
 * Why a connection test failed: the provider's answer, or something of the app's own.
 */
export type ConnectionFailure = ProviderFailure | ErrorKind;

/**
 * What "Test connection" found: the models, or exactly what failed.
 */
export type ConnectionReport = { ok: boolean, elapsed_ms: number, models: Array<ModelInfo>, 
/**
 * `None` when it worked; else what kind of failure: the provider's, or the app's own (the
 * keychain…).
 */
error_kind: ConnectionFailure | null, 
/**
 * One sentence for a person.
 */
message: string, };

/**
 * A model server answering on its usual local address.
 */
export type LocalServer = { preset_id: string, label: string, kind: ProviderKind, base_url: string, models: Array<ModelInfo>, 
/**
 * The model to start with: the first that looks like a chat model (not an embedding or
 * reranking model, which cannot answer), if any.
 */
suggested_model: string | null, };

/**
 * What a person sees of a server.
 */
export type ServerState = { "state": "starting" } | { "state": "running", pid: number | null, tools: number, 
/**
 * The tools that have an MCP App (their names), so a tool card asks for its app only
 * when its tool has one.
 */
apps: Array<string>, } | { "state": "restarting", attempt: number, in_secs: number, reason: string, } | { "state": "failed", reason: string, } | { "state": "needs_sign_in", reason: string, } | { "state": "stopped" };

/**
 * How a server is reached: a child process's stdin and stdout, streamable HTTP, or the older
 * HTTP with server-sent events.
 */
export type Transport = "stdio" | "http" | "sse";

/**
 * One configured server as lists show it.
 */
export type McpServerView = { name: string, 
/**
 * How it is reached; `None` when the entry cannot be used.
 */
transport: Transport | null, 
/**
 * The exact command line or address (secrets shown as keychain references).
 */
command_line: string | null, disabled: boolean, 
/**
 * Approved as it is now; a new or changed server is not.
 */
approved: boolean, 
/**
 * Why the entry cannot be used.
 */
error: string | null, 
/**
 * What an edit starts from: the program and its arguments as one shell-quoted line, or
 * the address; `None` for an entry that cannot be used.
 */
edit_text: string | null, 
/**
 * The folders it is given as its roots.
 */
roots: Array<string>, 
/**
 * A local server's command in its parts, as `command_line` shows them (the Servers page
 * shows them as chips); `None` for a remote server or an entry that cannot be used.
 */
command: CommandParts | null, 
/**
 * A local server's sandbox (`None`: a remote server, or an entry that cannot be used).
 */
sandbox: ServerSandbox | null, };

/**
 * A local server's sandbox as its card shows it.
 */
export type ServerSandbox = { 
/**
 * As mcp.json has it (`None`: none written, so it runs with all the person's rights).
 */
entry: SandboxEntry | null, 
/**
 * In plain words: "can read and write: ~/notes; can read: the system; network: none".
 */
said: string, 
/**
 * Why this system cannot enforce a sandbox (`None`: it can).
 */
unavailable: string | null, };

/**
 * A server's `"sandbox"` in mcp.json.
 */
export type SandboxEntry = { enabled: boolean, 
/**
 * What it may reach over the network.
 */
network?: Network, 
/**
 * With `network: hosts`, the hosts (`example.com`, `*.example.com`, either with
 * `:PORT`).
 */
hosts?: Array<string>, 
/**
 * With `network: hosts`, whether this computer's own ports are open to it as well.
 */
loopback?: boolean, 
/**
 * More folders it may read (`~/` is the home folder).
 */
allowRead?: Array<string>, 
/**
 * More folders it may read and write, besides its roots.
 */
allowWrite?: Array<string>, 
/**
 * Start it even where this system cannot sandbox it (its card then says so).
 */
allowUnsandboxed?: boolean, };

/**
 * What a sandboxed server may reach over the network.
 */
export type Network = "none" | "any" | "hosts";

/**
 * A sandbox's network as set in one go: none, any, or a list of hosts with loopback on or
 * off.
 */
export type Reach = { network: Network, hosts: Array<string>, loopback: boolean, };

/**
 * The parts of a local server's command line, each as it will run (a secret variable as its
 * keychain reference).
 */
export type CommandParts = { 
/**
 * `KEY=value`, in the order they are set.
 */
env: Array<string>, 
/**
 * The folder it runs in, when it has one of its own.
 */
folder: string | null, program: string, args: Array<string>, };

/**
 * A configured server with what the supervisor says about it, for the Servers page.
 */
export type McpServerStatus = { 
/**
 * `None` when the supervisor does not run it (disabled, needs approval, invalid).
 */
state: ServerState | null, 
/**
 * What the supervisor runs: the program's resolved path (found on the login shell's
 * `PATH`), or the address; `None` when it is not run.
 */
resolved: string | null, 
/**
 * Where its stderr is logged.
 */
log_file: string, 
/**
 * The tools its last list held that are not offered to models, and why.
 */
held_back: Array<HeldBackTool>, 
/**
 * What its sandbox refused it while it ran, as its messages said ("read
 * ~/.ssh/id_ed25519"), newest last.
 */
sandbox_refused: Array<string>, name: string, 
/**
 * How it is reached; `None` when the entry cannot be used.
 */
transport: Transport | null, 
/**
 * The exact command line or address (secrets shown as keychain references).
 */
command_line: string | null, disabled: boolean, 
/**
 * Approved as it is now; a new or changed server is not.
 */
approved: boolean, 
/**
 * Why the entry cannot be used.
 */
error: string | null, 
/**
 * What an edit starts from: the program and its arguments as one shell-quoted line, or
 * the address; `None` for an entry that cannot be used.
 */
edit_text: string | null, 
/**
 * The folders it is given as its roots.
 */
roots: Array<string>, 
/**
 * A local server's command in its parts, as `command_line` shows them (the Servers page
 * shows them as chips); `None` for a remote server or an entry that cannot be used.
 */
command: CommandParts | null, 
/**
 * A local server's sandbox (`None`: a remote server, or an entry that cannot be used).
 */
sandbox: ServerSandbox | null, };

/**
 * One page of a search.
 */
export type SearchPage = { servers: Array<FoundServer>, 
/**
 * What to ask for the next page with; `None` on the last.
 */
next_cursor: string | null, };

/**
 * A server as the registry describes it.
 */
export type FoundServer = { 
/**
 * Its registry name (`io.github.owner/name`).
 */
name: string, title: string | null, description: string, version: string, 
/**
 * Its source repository's address.
 */
repository: string | null, website: string | null, 
/**
 * `active`, `deprecated`, … as the registry says.
 */
status: string | null, 
/**
 * The ways to run it, as published: packages first, then remote addresses.
 */
sources: Array<Source>, 
/**
 * The name it gets here unless the person gives one ([`suggested_name`]): the window
 * and `switchboard mcp install` both use it.
 */
suggested_name: string, 
/**
 * The icon it names, fetched by [`search`] as a `data:` URL the window shows as it is
 * (its CSP loads no remote image); `None` when it names none or it could not be had.
 */
icon: string | null, };

/**
 * One way to run a server.
 */
export type Source = { kind: SourceKind, 
/**
 * The package's name, the image (with its tag) or the remote address.
 */
identifier: string, 
/**
 * The package's version, where the package names one.
 */
version: string | null, 
/**
 * `stdio`, `streamable-http` or `sse`.
 */
transport: string, 
/**
 * What the person gives it to run.
 */
needs: Array<Need>, 
/**
 * Whether Switchboard can install it: a stdio package of npm, PyPI or an OCI image, or a
 * remote address over streamable HTTP or SSE.
 */
installable: boolean, };

/**
 * Where a source comes from.
 */
export type SourceKind = "npm" | "pypi" | "oci" | "nuget" | "mcpb" | "remote" | "other";

/**
 * Something a source needs from the person: a value for an environment variable, an
 * argument or a header (or for a `{variable}` inside one of those).
 */
export type Need = { kind: NeedKind, name: string, description: string | null, required: boolean, 
/**
 * A key or a token: kept in the OS keychain, never shown.
 */
secret: boolean, default: string | null, choices: Array<string>, };

export type NeedKind = "environment" | "argument" | "header";

/**
 * What the person asked to install.
 */
export type InstallRequest = { 
/**
 * The registry's name of the server (`io.github.owner/name`).
 */
server: string, 
/**
 * A published version; `None` for the newest.
 */
version: string | null, 
/**
 * Which of its sources (an index into [`FoundServer::sources`]); `None` for the first
 * one Switchboard can install.
 */
source: number | null, 
/**
 * Its name here; `None` for the last part of its registry name.
 */
name: string | null, 
/**
 * The values it needs, by name (several for a repeated argument).
 */
values: { [key in string]: Array<string> }, };

/**
 * What the consent screen shows of a bundle before anything is unpacked. Every text is the
 * bundle author's: hostile, shown as text.
 */
export type BundleInfo = { name: string, display_name: string | null, version: string, description: string, author: string, author_url: string | null, repository: string | null, homepage: string | null, 
/**
 * `node`, `python`, `binary` or `uv`.
 */
server_type: string, 
/**
 * The command line it runs, the bundle's folder written `<bundle>`.
 */
command_line: string, tools: Array<BundleTool>, 
/**
 * It says it makes more tools than those listed once it runs.
 */
tools_generated: boolean, prompts: Array<string>, 
/**
 * What it asks the person for.
 */
user_config: Array<BundleOption>, files: number, 
/**
 * What it unpacks to, in bytes.
 */
unpacked_bytes: number, };

export type BundleTool = { name: string, description: string | null, };

/**
 * One value the bundle asks for (`user_config`).
 */
export type BundleOption = { key: string, title: string, description: string | null, 
/**
 * `string`, `number`, `boolean`, `directory` or `file`.
 */
kind: string, required: boolean, 
/**
 * A key or a token: kept in the OS keychain, never shown.
 */
sensitive: boolean, 
/**
 * Several values (folders, files).
 */
multiple: boolean, 
/**
 * Its default, `${HOME}` and the like put in.
 */
default: Array<string>, min: number | null, max: number | null, };

/**
 * A bundle the person chose in the window, shown for consent.
 */
export type OfferedBundle = { 
/**
 * What the window names it by when installing it.
 */
token: string, 
/**
 * The file's name (not its folder).
 */
file_name: string, 
/**
 * The name its server gets here unless the person gives one.
 */
suggested_name: string, info: BundleInfo, };

/**
 * Installing a bundle offered to the window, with the person's values.
 */
export type BundleInstallRequest = { token: string, 
/**
 * Its name here; `None` for one made from its manifest name.
 */
name: string | null, 
/**
 * By `user_config` key (several for a `multiple` one).
 */
values: { [key in string]: Array<string> }, };

/**
 * What the window is told after a check.
 */
export type UpdateStatus = { "state": "not_configured", current: string, } | { "state": "up_to_date", current: string, } | { "state": "available", current: string, version: string, 
/**
 * When it was published, as the address says.
 */
date: string | null, 
/**
 * What it changes, as the address says (plain text, shown as such).
 */
notes: string | null, 
/**
 * `false` when this copy cannot replace itself (not installed from a package).
 */
installable: boolean, };

/**
 * How far a download has come.
 */
export type UpdateProgress = { received: number, total: number | null, };

/**
 * What a new terminal finds, and where `install` puts (or has put) the command.
 */
export type ShellCommandStatus = { 
/**
 * The program `switchboard` should run: this app's binary (the AppImage when run from one).
 */
binary: string, 
/**
 * What `switchboard` runs in a terminal now, if anything.
 */
found: string | null, 
/**
 * Whether that is this app's binary.
 */
current: boolean, 
/**
 * Where the command is put: the link (Linux, macOS), or the folder added to the user's
 * PATH (Windows).
 */
place: string, 
/**
 * Whether the command is there (the link points at `binary`; on Windows, the folder is on
 * the user's PATH).
 */
installed: boolean, 
/**
 * Whether a new terminal looks in the place's folder.
 */
on_path: boolean, 
/**
 * How to put the place's folder on the PATH, when it is not.
 */
hint: string | null, 
/**
 * What the last `install` or `remove` changed (`None` from `status`).
 */
changed: boolean | null, };

/**
 * A proposal as the window shows it, by the token it is accepted with.
 */
export type ShownProposal = { "kind": "registry", token: string, name: string, version: string | null, } | { "kind": "entry", token: string, name: string, 
/**
 * What it would run, every environment value whole.
 */
command_line: string, } | { "kind": "refused", token: string, reason: string, };

/**
 * What a listed tool is, against its pin.
 */
export type ToolStatus = { "status": "new" } | { "status": "pinned" } | { "status": "changed", diff: string, };

/**
 * One tool of a server, against its pin.
 */
export type ToolReview = { tool: string, 
/**
 * The name models see.
 */
wire_name: string, 
/**
 * "Server · Tool Name".
 */
display_name: string, 
/**
 * Whether it may be offered to a model (not while held back).
 */
offered: boolean, } & ({ "status": "new" } | { "status": "pinned" } | { "status": "changed", diff: string, });

/**
 * A tool left out of a server's list because it cannot be used as sent, and why: said on
 * the Servers page, in a conversation's tools panel and at a run's start.
 */
export type HeldBackTool = { 
/**
 * Its name as the server sent it, hidden characters written as escapes.
 */
tool: string, reason: string, };

/**
 * A resource a server lists.
 */
export type OfferedResource = { uri: string, 
/**
 * Its title, else its name.
 */
name: string, description: string | null, mime_type: string | null, 
/**
 * In bytes, where the server says.
 */
size: number | null, };

/**
 * A resource template a server lists: resources made from arguments.
 */
export type OfferedTemplate = { uri_template: string, name: string, description: string | null, mime_type: string | null, };

/**
 * An argument of a prompt.
 */
export type OfferedArgument = { name: string, description: string | null, required: boolean, };

/**
 * A prompt a server lists, with its arguments.
 */
export type OfferedPrompt = { 
/**
 * What `prompts/get` takes.
 */
name: string, 
/**
 * Its title, else its name.
 */
title: string, description: string | null, arguments: Array<OfferedArgument>, };

/**
 * What a running server offers beside its tools, as its Servers entry shows it: every text
 * the server wrote with its hidden characters written out, descriptions cut to
 * [`DESCRIPTION_CHARS`].
 */
export type ServerOffers = { resources: Array<OfferedResource>, templates: Array<OfferedTemplate>, prompts: Array<OfferedPrompt>, };

/**
 * One running server's offers, for the pickers.
 */
export type OffersOf = { server: string, offers: ServerOffers, };

/**
 * A prompt made ready for the composer: its messages' text, and its images and embedded
 * resources as files.
 */
export type PromptUse = { text: string, attached: Attached, };

export type ImportItem = { name: string, detail: string, };

/**
 * What an import would do, for the person to confirm before anything changes.
 */
export type ImportPreview = { 
/**
 * New servers, with the command line or address each would run.
 */
added: Array<ImportItem>, 
/**
 * Servers whose name is already taken; not imported.
 */
conflicts: Array<ImportItem>, 
/**
 * Entries that cannot be used, with why.
 */
invalid: Array<ImportItem>, 
/**
 * Things to know about servers that are added (VS Code `${input:…}` values, …).
 */
warnings: Array<string>, };

export type ChoiceOption = { value: string, label: string, };

export type FieldKind = { "type": "text", 
/**
 * `email`, `uri`, `date` or `date-time`.
 */
format: string | null, min_length: number | null, max_length: number | null, } | { "type": "number", integer: boolean, minimum: number | null, maximum: number | null, } | { "type": "boolean" } | { "type": "choice", options: Array<ChoiceOption>, } | { "type": "multi_choice", options: Array<ChoiceOption>, min_items: number | null, max_items: number | null, };

export type ElicitField = { name: string, title: string | null, description: string | null, required: boolean, 
/**
 * What the form starts with.
 */
default: JsonValue | null, } & ({ "type": "text", 
/**
 * `email`, `uri`, `date` or `date-time`.
 */
format: string | null, min_length: number | null, max_length: number | null, } | { "type": "number", integer: boolean, minimum: number | null, maximum: number | null, } | { "type": "boolean" } | { "type": "choice", options: Array<ChoiceOption>, } | { "type": "multi_choice", options: Array<ChoiceOption>, min_items: number | null, max_items: number | null, });

/**
 * The page of a URL-mode request: the whole address, and its host as the URL parser spells
 * it (a look-alike internationalised name in its `xn--` form), which the window shows large.
 */
export type UrlVisit = { url: string, host: string, };

/**
 * A server's question, as the window shows it. Every text in it is the server's: shown as
 * text only.
 */
export type ElicitationRequest = { id: string, server: string, message: string, fields: Array<ElicitField>, 
/**
 * URL mode: the server asks the person to visit this page (an out-of-band sign-in or
 * payment) instead of filling in fields. Opened in the browser only when they click, by
 * Rust ([`ElicitationBroker::visit`]); the window never opens it itself.
 */
url: UrlVisit | null, };

/**
 * What the window needs to show a call's app: where to load it from, and what to hand it.
 */
export type McpAppView = { 
/**
 * The address the shell serves the page at (its own scheme).
 */
src: string, server: string, tool: string, resource_uri: string, 
/**
 * The arguments the tool was called with.
 */
arguments: unknown, 
/**
 * The call's result as the server sent it (`content`, `structuredContent`, `isError`).
 */
result: unknown, prefers_border: boolean, };

/**
 * What the person did with a form.
 */
export type ElicitationAnswer = { "action": "accept", content: { [key in string]: JsonValue }, } | { "action": "decline" } | { "action": "cancel" };
