// Generated from Rust by switchboard-core's `bindings` test (crate::ipc): never edit by hand.
// After changing a type that crosses the IPC edge, run
//   UPDATE_BINDINGS=1 cargo test -p switchboard-core bindings
// and commit the result; the test command fails while this file and Rust disagree.

import { call, channel } from "./invoke";
import type { AddedFiles, AppStatus, ApprovalAnswer, Attached, Attachment, AttachmentRef, AuditEntry, AuditFilter, BundleInstallRequest, CallControl, ComparedModel, ConnectionReport, Conversation, ConversationArtifact, ConversationDetail, ConversationSkill, ConversationTool, Draft, DropEvent, ElicitationAnswer, ElicitationRequest, ExportFormat, FilesProgress, ImportPreview, ImportedProfile, ImportedProject, InstallRequest, JsonValue, KeychainStatus, LocalServer, McpAppView, McpServerStatus, McpServerView, Memory, MessagePage, ModelInfo, ModelPrice, ModelWindow, NewProvider, NewSchedule, OfferedBundle, OffersOf, Outcome, PolicyMark, PolicyView, Preset, Profile, ProfileChoice, ProfileFields, Project, ProjectFile, ProjectInput, PromptUse, Provider, ProviderKindInfo, PullProgress, Reach, ResultView, ReviewVerdict, Rule, RunEvent, Schedule, ScheduleRun, ScheduleRunStarted, SearchHit, SearchPage, ServerOffers, Settings, ShellCommandStatus, ShownProposal, Skill, SkillDetail, StandingApproval, SwitchedBranch, Target, ToolMode, ToolModeChoice, ToolReview, ToolSuggestion, UpdateProgress, UpdateStatus, UsageReport, UsageTotal } from "./bindings";

export function appStatus(): Promise<AppStatus> {
  return call("app_status");
}

export function keychainStatus(): Promise<KeychainStatus> {
  return call("keychain_status");
}

/**
 * Opens a link from the conversation in the person's browser (or mail program): `https:`,
 * `http:` or `mailto:` only, after a native dialog shows the whole address. Resolves with
 * whether it was opened (`false`: the person said no).
 */
export function openLink(url: string): Promise<boolean> {
  return call("open_link", { url });
}

/**
 * Opens the folder holding the database file in the person's file manager.
 */
export function showDatabaseFolder(): Promise<void> {
  return call("show_database_folder");
}

/**
 * Only while the database could not be opened: sets its file aside (kept whole beside
 * it, under a `.damaged-…` name) and starts the app again with a fresh database. Resolves
 * with the kept file's path just before the app restarts.
 */
export function startFreshDatabase(): Promise<string> {
  return call("start_fresh_database");
}

/**
 * Quits the app.
 */
export function quitApp(): Promise<void> {
  return call("quit_app");
}

/**
 * The app of a finished tool call, or `null` when its tool has none.
 */
export function prepareMcpApp(id: string, messageId: string, callId: string): Promise<McpAppView | null> {
  return call("prepare_mcp_app", { id, messageId, callId });
}

/**
 * A tool of the same server, run for the app shown in that call's card.
 */
export function appCallTool(id: string, messageId: string, callId: string, tool: string, arguments_: { [key in string]: JsonValue }): Promise<JsonValue> {
  return call("app_call_tool", { id, messageId, callId, tool, arguments: arguments_ });
}

/**
 * The files tools produced in the conversation, oldest first.
 */
export function listArtifacts(conversationId: string): Promise<Array<ConversationArtifact>> {
  return call("list_artifacts", { conversationId });
}

/**
 * One of them as base64, for its preview.
 */
export function readArtifact(conversationId: string, sha256: string): Promise<string> {
  return call("read_artifact", { conversationId, sha256 });
}

/**
 * Asks where to save one of them (suggesting its name) and writes it there; the path, or
 * `null` when the person closed the dialog.
 */
export function saveArtifact(conversationId: string, sha256: string): Promise<string | null> {
  return call("save_artifact", { conversationId, sha256 });
}

/**
 * Reads the link `uri` that call `call_id` of answer `message_id` returned, through the
 * server that returned it, and keeps what it reads among the conversation's files; returns
 * them.
 */
export function readToolLink(conversationId: string, messageId: string, callId: string, uri: string): Promise<Array<ConversationArtifact>> {
  return call("read_tool_link", { conversationId, messageId, callId, uri });
}

/**
 * Opens the native picker (several files at once) and keeps what the person chose;
 * nothing when they closed it.
 */
export function chooseAttachments(): Promise<Attached> {
  return call("choose_attachments");
}

/**
 * The person says the model the conversation uses takes images (after a send with an
 * image was refused for it); returns the model's name.
 */
export function allowModelImages(conversationId: string): Promise<string> {
  return call("allow_model_images", { conversationId });
}

/**
 * Whether `model` of `provider` is given images: the person's word, else what the
 * provider's model list says, else what its family is known to take.
 */
export function modelImages(provider: string, model: string): Promise<boolean> {
  return call("model_images", { provider, model });
}

/**
 * The person says whether `model` of `provider` takes images (the composer's switch).
 */
export function setModelImages(provider: string, model: string, takes: boolean): Promise<void> {
  return call("set_model_images", { provider, model, takes });
}

/**
 * Keeps a pasted file, given as base64.
 */
export function attachPasted(name: string, data: string): Promise<Attachment> {
  return call("attach_pasted", { name, data });
}

/**
 * The tools switched off in the conversation that fit the files `files` names (seed 002):
 * the composer offers to switch them on.
 */
export function suggestTools(conversationId: string, files: Array<AttachmentRef>): Promise<Array<ToolSuggestion>> {
  return call("suggest_tools", { conversationId, files });
}

/**
 * The window listens for files dragged over it and dropped on it; a later call replaces
 * the listener (a reloaded window).
 */
export function watchDroppedFiles(onDrop: (message: DropEvent) => void): Promise<void> {
  return call("watch_dropped_files", { onDrop: channel(onDrop) });
}

/**
 * Every running server's resources, resource templates and prompts, for the pickers.
 */
export function listRunningOffers(): Promise<Array<OffersOf>> {
  return call("list_running_offers");
}

/**
 * Reads a resource of a running server and keeps its contents as files (named `name`, the
 * resource's listed name, when it is one).
 */
export function attachResource(server: string, uri: string, name?: string | null): Promise<Attached> {
  return call("attach_resource", { server, uri, name: name ?? null });
}

/**
 * A prompt of a running server, got with `arguments`, made ready for the composer.
 */
export function usePrompt(server: string, prompt: string, arguments_: { [key in string]: JsonValue }): Promise<PromptUse> {
  return call("use_prompt", { server, prompt, arguments: arguments_ });
}

/**
 * What a running server suggests for an argument of a prompt (`prompt`) or of a resource
 * template (`template`), given what is typed of it and the arguments already chosen.
 */
export function completeArgument(server: string, prompt: string | null, template: string | null, argument: string, value: string, context: { [key in string]: string }): Promise<Array<string>> {
  return call("complete_argument", { server, prompt, template, argument, value, context });
}

/**
 * Starts a turn (`text` `null` retries from the conversation as it is), carrying the kept
 * files `attachments` names, and returns its run id; every event of the run arrives on
 * `on_event`, the last being `run_finished`.
 */
export function sendMessage(conversationId: string, text: string | null, onEvent: (message: RunEvent) => void, attachments?: Array<AttachmentRef> | null): Promise<string> {
  return call("send_message", { conversationId, text, onEvent: channel(onEvent), attachments: attachments ?? null });
}

/**
 * Runs a failed call again (its card's Retry), through the same approvals, and lets the
 * model go on when it works; returns the run id like `send_message`.
 */
export function retryToolCall(conversationId: string, messageId: string, callId: string, onEvent: (message: RunEvent) => void): Promise<string> {
  return call("retry_tool_call", { conversationId, messageId, callId, onEvent: channel(onEvent) });
}

/**
 * Asks two to four models the same question at once (each its own tool loop and
 * approvals); returns the comparison's run id. Every event arrives on `on_event`, those of
 * each model's run wrapped in `lane` with its model; `comparison_folded` says where the
 * answers are kept, and `run_finished` ends it. Stop with `stop_run`: the comparison's id
 * stops all, a lane's one.
 */
export function compareModels(conversationId: string, text: string, attachments: Array<AttachmentRef> | null, models: Array<ComparedModel>, onEvent: (message: RunEvent) => void): Promise<string> {
  return call("compare_models", { conversationId, text, attachments, models, onEvent: channel(onEvent) });
}

/**
 * A window that shows a conversation (again: after a reload, or coming back to it) is
 * given the run under way there, if any: everything it sent so far, then its live events
 * on `on_event`. Returns the run id, or `null` when nothing runs there.
 */
export function attachRun(conversationId: string, onEvent: (message: RunEvent) => void): Promise<string | null> {
  return call("attach_run", { conversationId, onEvent: channel(onEvent) });
}

/**
 * Stops a run: its model stream and every running tool call. Stopping a run that already
 * ended does nothing.
 */
export function stopRun(runId: string): Promise<void> {
  return call("stop_run", { runId });
}

/**
 * A running call's card: Cancel (the run goes on, and the model is told) or Go on (a call
 * its server runs as a task is answered now, and the task is followed outside the run;
 * its result comes later in the conversation). Returns whether the call was running.
 */
export function controlCall(messageId: string, callId: string, control: CallControl): Promise<boolean> {
  return call("control_call", { messageId, callId, control });
}

/**
 * Sends the conversation a task's late result landed in, each time one does (followed
 * outside its run), until the window goes: the window reloads it if it shows it.
 */
export function watchTasks(onChange: (message: string) => void): Promise<void> {
  return call("watch_tasks", { onChange: channel(onChange) });
}

/**
 * Answers an approval request. Only the calls it asked about can be answered; the loop
 * checks. "For this conversation" and "always" are confirmed in a native dialog first.
 */
export function answerApproval(requestId: string, answers: Array<ApprovalAnswer>): Promise<void> {
  return call("answer_approval", { requestId, answers });
}

/**
 * The person's word on a result the policy put to them before the model reads it: pass
 * it, cut parts out (the text the model reads), or withhold it.
 */
export function answerResultReview(requestId: string, verdict: ReviewVerdict): Promise<void> {
  return call("answer_result_review", { requestId, verdict });
}

export function listConversationTools(conversationId: string): Promise<Array<ConversationTool>> {
  return call("list_conversation_tools", { conversationId });
}

/**
 * Switches a server (`tool` `null`) or one tool on or off for a conversation.
 */
export function setConversationTool(conversationId: string, server: string, tool: string | null, enabled: boolean): Promise<void> {
  return call("set_conversation_tool", { conversationId, server, tool, enabled });
}

/**
 * Makes this conversation's tool switches the ones new conversations start with.
 */
export function setDefaultTools(conversationId: string): Promise<void> {
  return call("set_default_tools", { conversationId });
}

/**
 * Turning auto-approve on is confirmed in a native dialog first; off is not.
 */
export function setAutoApprove(conversationId: string, on: boolean): Promise<void> {
  return call("set_auto_approve", { conversationId, on });
}

export function listToolApprovals(): Promise<Array<StandingApproval>> {
  return call("list_tool_approvals");
}

/**
 * Adding a standing approval from Settings is confirmed in a native dialog first.
 */
export function allowToolAlways(server: string, tool: string): Promise<void> {
  return call("allow_tool_always", { server, tool });
}

export function revokeToolApproval(server: string, tool: string, conversationId?: string | null): Promise<void> {
  return call("revoke_tool_approval", { server, tool, conversationId: conversationId ?? null });
}

/**
 * Sends `text` with `attachments` (the files the message had that the person kept, and any
 * added) in place of the message of yours `message_id` and goes on from there; what
 * followed it is kept as another branch. Returns the run id like `send_message`.
 */
export function editMessage(conversationId: string, messageId: string, text: string, attachments: Array<AttachmentRef>, onEvent: (message: RunEvent) => void): Promise<string> {
  return call("edit_message", { conversationId, messageId, text, attachments, onEvent: channel(onEvent) });
}

/**
 * Asks again for the answer that starts at `message_id` (the first message after a message
 * of yours); the old answer is kept as another branch. Returns the run id like
 * `send_message`.
 */
export function regenerate(conversationId: string, messageId: string, onEvent: (message: RunEvent) => void): Promise<string> {
  return call("regenerate", { conversationId, messageId, onEvent: channel(onEvent) });
}

export function listConversations(): Promise<Array<Conversation>> {
  return call("list_conversations");
}

export function createConversation(title?: string | null, profile?: ProfileChoice | null): Promise<Conversation> {
  return call("create_conversation", { title: title ?? null, profile: profile ?? null });
}

/**
 * What the model is told before this conversation; blank for nothing.
 */
export function setSystemPrompt(id: string, systemPrompt: string): Promise<Conversation> {
  return call("set_system_prompt", { id, systemPrompt });
}

/**
 * Keeps what the composer of this conversation holds (an empty draft: forgets it).
 */
export function saveDraft(id: string, draft: Draft): Promise<void> {
  return call("save_draft", { id, draft });
}

export function renameConversation(id: string, title: string): Promise<Conversation> {
  return call("rename_conversation", { id, title });
}

/**
 * Deletes the conversation if nobody used it (made by New, left with nothing in it): the
 * window calls it when the person leaves one. True when it went.
 */
export function discardIfUnused(id: string): Promise<boolean> {
  return call("discard_if_unused", { id });
}

export function deleteConversation(id: string): Promise<void> {
  return call("delete_conversation", { id });
}

export function getConversation(id: string): Promise<ConversationDetail> {
  return call("get_conversation", { id });
}

/**
 * The page of messages before `before` (a page's `older`), as the person scrolls back.
 */
export function getOlderMessages(id: string, before: number, limit?: number | null): Promise<MessagePage> {
  return call("get_older_messages", { id, before, limit: limit ?? null });
}

/**
 * The whole text of a message a page showed in part (a long tool result).
 */
export function getMessageText(id: string, messageId: string): Promise<string> {
  return call("get_message_text", { id, messageId });
}

/**
 * What a tool card shows beyond a result's text (images, audio, links, structured
 * content).
 */
export function getToolResultView(id: string, messageId: string, callId: string): Promise<ResultView> {
  return call("get_tool_result_view", { id, messageId, callId });
}

/**
 * `null` provider clears the choice: the Settings default applies.
 */
export function setConversationModel(id: string, provider?: string | null, model?: string | null): Promise<Conversation> {
  return call("set_conversation_model", { id, provider: provider ?? null, model: model ?? null });
}

/**
 * Deletes a question and everything that answered it; refused while the conversation
 * answers. Resolves with the ids of the messages deleted.
 */
export function deleteTurn(id: string, messageId: string): Promise<Array<string>> {
  return call("delete_turn", { id, messageId });
}

/**
 * Shows branch `position` (from 0) where `message_id` is the first message shown; refused
 * while the conversation answers.
 */
export function switchBranch(id: string, messageId: string, position: number): Promise<SwitchedBranch> {
  return call("switch_branch", { id, messageId, position });
}

/**
 * Shows message `message_id` (a search hit), switching to the branch that holds it;
 * returns its number. Refused while the conversation answers.
 */
export function revealMessage(id: string, messageId: string): Promise<number> {
  return call("reveal_message", { id, messageId });
}

/**
 * Every configured server with its state (starting, running, restarting, failed, stopped,
 * or none when it is not run: disabled, needs approval, invalid).
 */
export function listMcpServers(): Promise<Array<McpServerStatus>> {
  return call("list_mcp_servers");
}

/**
 * The window listens for the server list: every configured server with its state arrives
 * on `on_change` now and again after every change (no polling); a later call replaces the
 * listener (a reloaded window).
 */
export function watchMcpServers(onChange: (message: Array<McpServerStatus>) => void): Promise<void> {
  return call("watch_mcp_servers", { onChange: channel(onChange) });
}

/**
 * Shows the native approval dialog for `name` and, if the person approves exactly what it
 * showed, records the approval and starts the server. Returns whether it was approved.
 */
export function approveMcpServer(name: string): Promise<boolean> {
  return call("approve_mcp_server", { name });
}

/**
 * Switches a server on (it starts if approved) or off (it stops).
 */
export function setMcpServerEnabled(name: string, enabled: boolean): Promise<McpServerView> {
  return call("set_mcp_server_enabled", { name, enabled });
}

/**
 * Adds a folder, chosen in the native folder dialog, to those a server is given as its
 * roots (the window cannot name a folder to give); the server as it now is, or `null` when
 * the person closed the dialog.
 */
export function addMcpServerRoot(name: string): Promise<McpServerView | null> {
  return call("add_mcp_server_root", { name });
}

/**
 * Takes a folder away from a server's roots (only ever fewer folders from the window).
 */
export function removeMcpServerRoot(name: string, folder: string): Promise<McpServerView> {
  return call("remove_mcp_server_root", { name, folder });
}

/**
 * Turns a local server's sandbox on or off and sets its network (`null`: as it is, or
 * for a sandbox newly on, the network its runtime needs: a package runner's registry),
 * keeping its folders. Turning it on or narrowing it keeps the server's approval;
 * anything that gives it more leaves it to be approved again in the native dialog, which
 * shows the sandbox in words.
 */
export function setMcpServerSandbox(name: string, enabled: boolean, network?: Reach | null): Promise<McpServerView> {
  return call("set_mcp_server_sandbox", { name, enabled, network: network ?? null });
}

/**
 * Gives a local server's sandbox a folder, chosen in the native folder dialog, to read
 * (`writable` false) or to read and write; `null` when the person closed the dialog. It
 * gives the server more: it is approved again before it starts.
 */
export function addMcpServerSandboxFolder(name: string, writable: boolean): Promise<McpServerView | null> {
  return call("add_mcp_server_sandbox_folder", { name, writable });
}

/**
 * Takes a folder away from a local server's sandbox (read or write).
 */
export function removeMcpServerSandboxFolder(name: string, folder: string): Promise<McpServerView> {
  return call("remove_mcp_server_sandbox_folder", { name, folder });
}

/**
 * Gives a running server what its sandbox refused it (one of its `sandbox_refused`),
 * after the native approval dialog shows the widened sandbox; whether it was approved.
 */
export function widenMcpServerSandbox(name: string, refused: string): Promise<boolean> {
  return call("widen_mcp_server_sandbox", { name, refused });
}

/**
 * Stops a server and starts it again (a failed one gets a fresh count of tries).
 */
export function restartMcpServer(name: string): Promise<void> {
  return call("restart_mcp_server", { name });
}

/**
 * Signs in to a remote server that asks for OAuth: the person's browser opens the server's
 * authorization page (once the person said yes in a native dialog showing its host), the
 * answer comes back to a one-time listener on 127.0.0.1, the tokens go to the OS keychain,
 * and the server is started again with them.
 */
export function signInMcpServer(name: string): Promise<void> {
  return call("sign_in_mcp_server", { name });
}

/**
 * Forgets a remote server's OAuth tokens and starts it again without them.
 */
export function signOutMcpServer(name: string): Promise<void> {
  return call("sign_out_mcp_server", { name });
}

/**
 * The window listens for servers' forms: each arrives on `on_form` (those already open
 * first), and the id of each closed without its answer (its server said it is done, it
 * timed out, its call stopped) on `on_closed`; a later call replaces the listeners (a
 * reloaded window).
 */
export function watchMcpForms(onForm: (message: ElicitationRequest) => void, onClosed: (message: string) => void): Promise<void> {
  return call("watch_mcp_forms", { onForm: channel(onForm), onClosed: channel(onClosed) });
}

/**
 * The person's answer to a server's form, checked against the form in Rust.
 */
export function answerMcpForm(id: string, answer: ElicitationAnswer): Promise<void> {
  return call("answer_mcp_form", { id, answer });
}

/**
 * Opens the page a server's URL-mode request names in the person's browser (they clicked
 * Open in its card, then said yes in the native dialog showing the address) and answers
 * the request `accept`; `false` when they said no (the request stays open). The window
 * names the request, never the address: Rust opens only what it checked when the request
 * arrived (`https:`, or `http:` on loopback).
 */
export function visitMcpForm(id: string): Promise<boolean> {
  return call("visit_mcp_form", { id });
}

/**
 * Stops a server and removes it from mcp.json, with its keychain secrets and approval.
 */
export function removeMcpServer(name: string): Promise<void> {
  return call("remove_mcp_server", { name });
}

/**
 * Adds a server from a command line (`KEY=value … program args…`, shell quoting) or a
 * URL, then asks for its approval in the native dialog: nothing the window sends starts a
 * program by itself. Returns the server as it now is (approved or not).
 */
export function addMcpServer(name: string, commandLine?: string | null, url?: string | null): Promise<McpServerView> {
  return call("add_mcp_server", { name, commandLine: commandLine ?? null, url: url ?? null });
}

/**
 * Changes how a server runs (its command line, or its address) to what the person typed,
 * stops it, and asks for approval of the new one in the native dialog.
 */
export function editMcpServer(name: string, commandLine?: string | null, url?: string | null): Promise<McpServerView> {
  return call("edit_mcp_server", { name, commandLine: commandLine ?? null, url: url ?? null });
}

/**
 * A running server's tools, each as new (not pinned yet), as pinned, or changed since
 * pinned (held back from models, with the diff).
 */
export function listMcpTools(name: string): Promise<Array<ToolReview>> {
  return call("list_mcp_tools", { name });
}

/**
 * What a running server offers beside its tools: its resources, resource templates and
 * prompts.
 */
export function listMcpOffers(name: string): Promise<ServerOffers> {
  return call("list_mcp_offers", { name });
}

/**
 * Offers a changed tool to models again, once the person accepts its diff in the native
 * dialog (the window can only ask). Returns whether it was accepted.
 */
export function acceptMcpTool(name: string, tool: string): Promise<boolean> {
  return call("accept_mcp_tool", { name, tool });
}

/**
 * What importing would add: from `text` (pasted JSON: Claude Desktop's or VS Code's shape,
 * or a bare map of servers), or, without text, from Claude Desktop's own file.
 */
export function previewMcpImport(text?: string | null): Promise<ImportPreview> {
  return call("preview_mcp_import", { text: text ?? null });
}

/**
 * Imports what `preview_mcp_import` showed for the same source, read again here. Imported
 * servers wait for approval (one native dialog each, from the Servers page).
 */
export function importMcpServers(text?: string | null): Promise<Array<string>> {
  return call("import_mcp_servers", { text: text ?? null });
}

/**
 * The end of a server's stderr log.
 */
export function mcpServerLog(name: string): Promise<string> {
  return call("mcp_server_log", { name });
}

/**
 * One page of the MCP Registry's servers (the registry Settings names) matching `query`.
 */
export function searchMcpRegistry(query: string, cursor?: string | null): Promise<SearchPage> {
  return call("search_mcp_registry", { query, cursor: cursor ?? null });
}

/**
 * Adds the server the registry describes, built from its `server.json` and the values the
 * person gave (secret ones go to the keychain, never back to the window), then asks for
 * its approval in the native dialog with the full command line. Returns the server as it
 * now is.
 */
export function installMcpServer(request: InstallRequest): Promise<McpServerView> {
  return call("install_mcp_server", { request });
}

/**
 * Asks for an MCP bundle (`.mcpb`) in the native open dialog and reads it, nothing
 * unpacked: what the consent screen shows, with the token to install it by; `null` when
 * the dialog was closed. The window never names a file.
 */
export function openMcpBundle(): Promise<OfferedBundle | null> {
  return call("open_mcp_bundle");
}

/**
 * Unpacks the bundle offered under `request.token` and adds its server with the values the
 * person gave (sensitive ones to the keychain), then asks for its approval in the native
 * dialog with the full command line. Returns the server as it now is.
 */
export function installMcpBundle(request: BundleInstallRequest): Promise<McpServerView> {
  return call("install_mcp_bundle", { request });
}

/**
 * The window listens for servers proposed by `switchboard://` links: those that came
 * before it are sent at once; a later call replaces the listener (a reloaded window).
 */
export function watchServerProposals(onProposal: (message: ShownProposal) => void): Promise<void> {
  return call("watch_server_proposals", { onProposal: channel(onProposal) });
}

/**
 * Adds the server a link proposed (by its token), not approved, and asks for its approval
 * in the native dialog with the full command line: only ever because the person asked.
 */
export function acceptServerProposal(token: string): Promise<McpServerView> {
  return call("accept_server_proposal", { token });
}

/**
 * Every memory's facts, newest first.
 */
export function listMemories(): Promise<Array<Memory>> {
  return call("list_memories");
}

/**
 * Keeps a fact the person wrote, in a project's memory or (`null`) their own.
 */
export function addMemory(projectId: string | null, text: string): Promise<Memory> {
  return call("add_memory", { projectId, text });
}

export function updateMemory(id: string, text: string): Promise<Memory> {
  return call("update_memory", { id, text });
}

export function deleteMemory(id: string): Promise<void> {
  return call("delete_memory", { id });
}

/**
 * Switches a project's memory on or off.
 */
export function setProjectMemory(projectId: string, on: boolean): Promise<Project> {
  return call("set_project_memory", { projectId, on });
}

/**
 * The person's rules, the organisation's, and each in words.
 */
export function getPolicy(): Promise<PolicyView> {
  return call("get_policy");
}

/**
 * Allow, ask or block a server's tools (`tool` null) or one tool; `outcome` null takes
 * that rule away. Allowing asks in a native dialog first.
 */
export function setToolPolicy(server: string, tool?: string | null, outcome?: Outcome | null): Promise<PolicyView> {
  return call("set_tool_policy", { server, tool: tool ?? null, outcome: outcome ?? null });
}

/**
 * Adds a rule (one made from an approval dialog's call, or written in Settings).
 */
export function addPolicyRule(rule: Rule): Promise<PolicyView> {
  return call("add_policy_rule", { rule });
}

/**
 * Takes away the rule at `index` (0-based).
 */
export function removePolicyRule(index: number): Promise<PolicyView> {
  return call("remove_policy_rule", { index });
}

/**
 * Marks a server or tool untrusted or reviewed, or takes the mark away.
 */
export function setPolicyMark(mark: PolicyMark, target: Target, on: boolean): Promise<PolicyView> {
  return call("set_policy_mark", { mark, target, on });
}

/**
 * Replaces policy.json with `text`, checked whole (refused with where and why).
 */
export function replacePolicy(text: string): Promise<PolicyView> {
  return call("replace_policy", { text });
}

/**
 * Entries of the record of every tool call, newest first.
 */
export function listAudit(filter: AuditFilter): Promise<Array<AuditEntry>> {
  return call("list_audit", { filter });
}

export function listProfiles(): Promise<Array<Profile>> {
  return call("list_profiles");
}

export function createProfile(name: string, fields: ProfileFields): Promise<Profile> {
  return call("create_profile", { name, fields });
}

export function updateProfile(id: string, name: string, fields: ProfileFields): Promise<Profile> {
  return call("update_profile", { id, name, fields });
}

export function duplicateProfile(id: string): Promise<Profile> {
  return call("duplicate_profile", { id });
}

export function deleteProfile(id: string): Promise<void> {
  return call("delete_profile", { id });
}

/**
 * Makes a profile the one new conversations start from; `null`: none is.
 */
export function setDefaultProfile(id?: string | null): Promise<void> {
  return call("set_default_profile", { id: id ?? null });
}

/**
 * Asks where to save the profile's JSON and writes it; the path, or `null` when the person
 * closed the dialog.
 */
export function exportProfile(id: string): Promise<string | null> {
  return call("export_profile", { id });
}

/**
 * Asks for a profile's JSON file and keeps the profile; `null` when the dialog was closed.
 */
export function importProfile(): Promise<ImportedProfile | null> {
  return call("import_profile");
}

/**
 * Puts a profile on a conversation (its prompt, model and tools from the next message);
 * `null`: it follows no profile and keeps what it has.
 */
export function setConversationProfile(conversationId: string, profileId?: string | null): Promise<Conversation> {
  return call("set_conversation_profile", { conversationId, profileId: profileId ?? null });
}

export function listProjects(): Promise<Array<Project>> {
  return call("list_projects");
}

export function createProject(project: ProjectInput): Promise<Project> {
  return call("create_project", { project });
}

export function updateProject(id: string, project: ProjectInput): Promise<Project> {
  return call("update_project", { id, project });
}

/**
 * Deletes a project; its conversations stay, in no project. Resolves with how many.
 */
export function deleteProject(id: string): Promise<number> {
  return call("delete_project", { id });
}

/**
 * Moves a conversation into a project, or out of any (`null`).
 */
export function moveConversation(conversationId: string, projectId?: string | null): Promise<Conversation> {
  return call("move_conversation", { conversationId, projectId: projectId ?? null });
}

/**
 * A new conversation in a project, from the project's profile (else the default one).
 */
export function createConversationIn(projectId: string, title?: string | null): Promise<Conversation> {
  return call("create_conversation_in", { projectId, title: title ?? null });
}

export function listProjectFiles(projectId: string): Promise<Array<ProjectFile>> {
  return call("list_project_files", { projectId });
}

/**
 * Opens the native picker (several files at once) and adds what the person chose to the
 * project, telling `on_progress` of each file as it is read and of the end; `null` when
 * they closed the picker.
 */
export function addProjectFiles(projectId: string, onProgress: (message: FilesProgress) => void): Promise<AddedFiles | null> {
  return call("add_project_files", { projectId, onProgress: channel(onProgress) });
}

export function removeProjectFile(projectId: string, name: string): Promise<void> {
  return call("remove_project_file", { projectId, name });
}

/**
 * Asks where to save the project's export (settings, files, conversations) and writes it;
 * the path, or `null` when the person closed the dialog.
 */
export function exportProject(id: string): Promise<string | null> {
  return call("export_project", { id });
}

/**
 * Asks for a project's export and keeps it as a new project; `null` when the dialog was
 * closed.
 */
export function importProject(): Promise<ImportedProject | null> {
  return call("import_project");
}

export function listProviderKinds(): Promise<Array<ProviderKindInfo>> {
  return call("list_provider_kinds");
}

export function listProviderPresets(): Promise<Array<Preset>> {
  return call("list_provider_presets");
}

/**
 * Resolves with a report even when the connection failed; rejects only when there is
 * nothing to test.
 */
export function testProvider(name: string): Promise<ConnectionReport> {
  return call("test_provider", { name });
}

export function listModels(name: string): Promise<Array<ModelInfo>> {
  return call("list_models", { name });
}

export function detectLocalProviders(): Promise<Array<LocalServer>> {
  return call("detect_local_providers");
}

export function listProviders(): Promise<Array<Provider>> {
  return call("list_providers");
}

export function addProvider(provider: NewProvider): Promise<Provider> {
  return call("add_provider", { provider });
}

export function updateProvider(name: string, baseUrl?: string | null, defaultModel?: string | null): Promise<Provider> {
  return call("update_provider", { name, baseUrl: baseUrl ?? null, defaultModel: defaultModel ?? null });
}

export function setProviderKey(name: string, apiKey: string): Promise<Provider> {
  return call("set_provider_key", { name, apiKey });
}

export function deleteProviderKey(name: string): Promise<Provider> {
  return call("delete_provider_key", { name });
}

/**
 * Also removes the provider's key from the keychain.
 */
export function removeProvider(name: string): Promise<void> {
  return call("remove_provider", { name });
}

/**
 * The model's window in tokens and whose word it is; `null` when nothing knows it.
 */
export function getModelWindow(provider: string, model: string): Promise<ModelWindow | null> {
  return call("get_model_window", { provider, model });
}

/**
 * Sets the person's window for the model; `null` forgets it (and one learned from a
 * refusal). The window that counts now.
 */
export function setModelWindow(provider: string, model: string, tokens?: number | null): Promise<ModelWindow | null> {
  return call("set_model_window", { provider, model, tokens: tokens ?? null });
}

/**
 * How the model is given tools (native, prompted, off), and whose word that is.
 */
export function modelToolMode(provider: string, model: string): Promise<ToolModeChoice> {
  return call("model_tool_mode", { provider, model });
}

/**
 * Sets how the model is given tools; `null` forgets the person's word. What applies now.
 */
export function setModelToolMode(provider: string, model: string, mode?: ToolMode | null): Promise<ToolModeChoice> {
  return call("set_model_tool_mode", { provider, model, mode: mode ?? null });
}

/**
 * Fetches a model onto a local provider's machine (Ollama), sending each step to
 * `on_progress`; resolves once the model is there. `cancel_model_pull` stops it (it
 * rejects then, as cancelled); so does a page that stops listening. The provider's models
 * listed again (`null` when they could not be).
 */
export function pullModel(provider: string, model: string, onProgress: (message: PullProgress) => void): Promise<Array<ModelInfo> | null> {
  return call("pull_model", { provider, model, onProgress: channel(onProgress) });
}

/**
 * Stops a model's download; `false` when none is running.
 */
export function cancelModelPull(provider: string, model: string): Promise<boolean> {
  return call("cancel_model_pull", { provider, model });
}

/**
 * Deletes an installed model from a local provider's machine (Ollama).
 */
export function removeModel(provider: string, model: string): Promise<void> {
  return call("remove_model", { provider, model });
}

export function listSchedules(): Promise<Array<Schedule>> {
  return call("list_schedules");
}

export function addSchedule(schedule: NewSchedule): Promise<Schedule> {
  return call("add_schedule", { schedule });
}

export function removeSchedule(id: string): Promise<void> {
  return call("remove_schedule", { id });
}

export function setScheduleEnabled(id: string, enabled: boolean): Promise<Schedule> {
  return call("set_schedule_enabled", { id, enabled });
}

/**
 * Starts a run now; its approvals wait for the window as a due run's do. The window
 * follows it by opening its conversation.
 */
export function runScheduleNow(id: string): Promise<ScheduleRunStarted> {
  return call("run_schedule_now", { id });
}

/**
 * The latest runs, newest first: of one schedule (`id`), or of all.
 */
export function scheduleRuns(id: string | null, limit: number): Promise<Array<ScheduleRun>> {
  return call("schedule_runs", { id, limit });
}

export function scheduleRunsWaiting(): Promise<number> {
  return call("schedule_runs_waiting");
}

/**
 * Sends how many runs wait for an approval now, and again at each change of a schedule
 * or a run (the sidebar's badge, the page's lists), until the window goes.
 */
export function watchSchedules(onChange: (message: number) => void): Promise<void> {
  return call("watch_schedules", { onChange: channel(onChange) });
}

export function getSettings(): Promise<Settings> {
  return call("get_settings");
}

export function updateSettings(settings: Settings): Promise<Settings> {
  return call("update_settings", { settings });
}

/**
 * What `switchboard` runs in a terminal, and where it would be put.
 */
export function shellCommandStatus(): Promise<ShellCommandStatus> {
  return call("shell_command_status");
}

/**
 * Makes `switchboard` in new terminals run this app, once the person said yes in the
 * native dialog naming the binary and where it goes; on a no, the status as it was
 * (`changed`: false).
 */
export function installShellCommand(): Promise<ShellCommandStatus> {
  return call("install_shell_command");
}

/**
 * Takes away what `install_shell_command` put.
 */
export function removeShellCommand(): Promise<ShellCommandStatus> {
  return call("remove_shell_command");
}

export function listSkills(): Promise<Array<Skill>> {
  return call("list_skills");
}

export function skillDetail(name: string): Promise<SkillDetail> {
  return call("skill_detail", { name });
}

/**
 * Asks for a skill's folder (`from_zip` false) or `.zip` and keeps the skill; `null` when
 * the dialog was closed.
 */
export function addSkill(fromZip: boolean): Promise<Skill | null> {
  return call("add_skill", { fromZip });
}

export function removeSkill(name: string): Promise<void> {
  return call("remove_skill", { name });
}

/**
 * Asks where to write the skill's `.zip` and writes it; the path, or `null` when closed.
 */
export function exportSkill(name: string): Promise<string | null> {
  return call("export_skill", { name });
}

/**
 * Switches a skill on or off for one conversation, or (`conversationId` null) for every
 * conversation; switching a server's skill on sends the `approval` it was shown with.
 */
export function setSkillEnabled(name: string, enabled: boolean, conversationId?: string | null, approval?: string | null): Promise<void> {
  return call("set_skill_enabled", { name, enabled, conversationId: conversationId ?? null, approval: approval ?? null });
}

/**
 * Lets the model ask to run a skill's scripts (each run asks, in a sandbox), or no
 * longer; allowing sends the `filesDigest` of the skill as it was shown, and holds for
 * those files.
 */
export function setSkillScripts(name: string, allowed: boolean, asShown?: string | null): Promise<void> {
  return call("set_skill_scripts", { name, allowed, asShown: asShown ?? null });
}

export function conversationSkills(conversationId: string): Promise<Array<ConversationSkill>> {
  return call("conversation_skills", { conversationId });
}

/**
 * Conversations whose title, and messages whose text, hold every word of `text`.
 */
export function searchConversations(text: string, limit?: number | null, projectId?: string | null): Promise<Array<SearchHit>> {
  return call("search_conversations", { text, limit: limit ?? null, projectId: projectId ?? null });
}

/**
 * Asks where to save conversation `id` and writes it there; resolves with the file's path,
 * or `null` when the person closed the dialog.
 */
export function exportConversation(id: string, format: ExportFormat): Promise<string | null> {
  return call("export_conversation", { id, format });
}

/**
 * Asks for an exported conversation (JSON) and keeps it as a new conversation; `null` when
 * the person closed the dialog.
 */
export function importConversation(): Promise<Conversation | null> {
  return call("import_conversation");
}

/**
 * Asks the update address whether there is a newer release.
 */
export function checkForUpdate(): Promise<UpdateStatus> {
  return call("check_for_update");
}

/**
 * Downloads the release the last check found, telling `on_progress` how far it has come,
 * and installs it once its signature is checked. Returns the version installed.
 */
export function installUpdate(onProgress: (message: UpdateProgress) => void): Promise<string> {
  return call("install_update", { onProgress: channel(onProgress) });
}

/**
 * Quits (stopping every run and server, as at any quit) and starts the app again.
 */
export function restartApp(): Promise<void> {
  return call("restart_app");
}

/**
 * Every model with a price: the person's, or what its provider's list says.
 */
export function listPrices(): Promise<Array<ModelPrice>> {
  return call("list_prices");
}

/**
 * Sets the person's price for `model` of `provider` (dollars per million tokens, as typed:
 * input and output together, cached input optional); all three empty forgets it. Returns
 * the price that counts now.
 */
export function setModelPrice(provider: string, model: string, input?: string | null, output?: string | null, cached?: string | null): Promise<ModelPrice | null> {
  return call("set_model_price", { provider, model, input: input ?? null, output: output ?? null, cached: cached ?? null });
}

/**
 * A conversation's requests added up (every round, description and branch).
 */
export function conversationUsage(conversationId: string): Promise<UsageTotal> {
  return call("conversation_usage", { conversationId });
}

/**
 * The use of every model since `since` (milliseconds since 1970), by day (UTC).
 */
export function usageReport(since: number): Promise<UsageReport> {
  return call("usage_report", { since });
}
