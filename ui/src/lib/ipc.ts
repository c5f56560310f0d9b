//! The only module that talks to the Rust side. One typed async function per
//! command; every rejection becomes an `IpcError` (defined in `errors.ts`,
//! re-exported here). Components never call `invoke` nor this module
//! themselves (house style, point 14): they go through the stores in
//! `stores/`, which go through here.

import { Channel, invoke } from "@tauri-apps/api/core";
import type { ApprovalAnswer, RunEvent } from "./run-events";
import type {
  Attached,
  ConversationArtifact,
  Attachment,
  AttachmentRef,
  DropEvent,
  AppStatus,
  CommandError,
  ComparedModel,
  Conversation,
  ConversationDetail,
  Draft,
  MessagePage,
  ConversationTool,
  StandingApproval,
  ConnectionReport,
  KeychainStatus,
  McpAppView,
  McpForm,
  McpFormAnswer,
  McpServerStatus,
  McpServerView,
  NewMcpServer,
  InstallRequest,
  RegistryPage,
  BundleInstallRequest,
  OfferedBundle,
  ShownProposal,
  ImportPreview,
  OffersOf,
  PromptUse,
  ServerOffers,
  ToolReview,
  ToolSuggestion,
  LocalServer,
  ModelInfo,
  ModelPrice,
  ModelWindow,
  NewProvider,
  Provider,
  ProviderKindInfo,
  ProviderPreset,
  ExportFormat,
  ImportedProfile,
  Profile,
  ProfileChoice,
  ProfileFields,
  ResultView,
  SearchHit,
  Settings,
  SwitchedBranch,
  TypedPrice,
  UpdateProgress,
  ShellCommandStatus,
  UpdateStatus,
  UsageReport,
  UsageTotal,
} from "./types";
import { IpcError, toIpcError } from "./errors";

export { IpcError, toIpcError };

/** Outside the Tauri webview (a plain browser) there is nothing to invoke. */
function outsideTheApp(): boolean {
  return typeof window !== "undefined" && !("__TAURI_INTERNALS__" in window);
}

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (raw) {
    if (raw instanceof TypeError && outsideTheApp()) {
      throw new IpcError("internal", "Switchboard's backend is not reachable: this page is running outside the app.");
    }
    throw toIpcError(raw);
  }
}

/** Version, home folder, database and keychain health. */
export function appStatus(): Promise<AppStatus> {
  return call("app_status");
}

/** Whether an OS keychain is reachable (asked separately: it may take a D-Bus round trip). */
export function keychainStatus(): Promise<KeychainStatus> {
  return call("keychain_status");
}

/**
 * Opens a link in the person's browser: https, http or mailto only, after Rust's native dialog
 * shows the whole address. Resolves with whether it was opened.
 */
export function openLink(url: string): Promise<boolean> {
  return call("open_link", { url });
}

/** All conversations, newest first by `updated_at`. */
export function listConversations(): Promise<Conversation[]> {
  return call("list_conversations");
}

/**
 * `null` title: Rust names it "New conversation". `profile` absent: the default profile if there
 * is one, else Settings' system prompt and tool switches.
 */
export function createConversation(title: string | null, profile?: ProfileChoice): Promise<Conversation> {
  return call("create_conversation", profile === undefined ? { title } : { title, profile });
}

/** Rust trims the title and caps it at 200 characters; empty → invalid_input on "title". */
export function renameConversation(id: string, title: string): Promise<Conversation> {
  return call("rename_conversation", { id, title });
}

/** What the model is told before this conversation; blank for nothing. Too long → invalid_input
 *  on "system_prompt". */
export function setSystemPrompt(id: string, systemPrompt: string): Promise<Conversation> {
  return call("set_system_prompt", { id, systemPrompt });
}

/** Keeps what the composer of conversation `id` holds (an empty draft: forgets it). */
export function saveDraft(id: string, draft: Draft): Promise<void> {
  return call("save_draft", { id, draft });
}

export function deleteConversation(id: string): Promise<void> {
  return call("delete_conversation", { id });
}

/** The conversation with its newest page of messages (tool results as previews). */
export function getConversation(id: string): Promise<ConversationDetail> {
  return call("get_conversation", { id });
}

/** The page of messages before `before` (a page's `older`), oldest first. */
export function getOlderMessages(id: string, before: number, limit?: number): Promise<MessagePage> {
  return call("get_older_messages", { id, before, limit: limit ?? null });
}

/** The whole text of a message a page showed in part (a long tool result). */
export function getMessageText(id: string, messageId: string): Promise<string> {
  return call("get_message_text", { id, messageId });
}

/** What the card of call `callId` of the answer `messageId` shows beyond the result's text. */
export function getToolResultView(id: string, messageId: string, callId: string): Promise<ResultView> {
  return call("get_tool_result_view", { id, messageId, callId });
}

/**
 * The MCP App (SEP-1865) of the call `callId` of the answer `messageId`: where Rust serves its
 * HTML, with what the call took and returned; null when the call's tool has none. Rejects when
 * the app cannot be read (its server is not running…).
 */
export function prepareMcpApp(id: string, messageId: string, callId: string): Promise<McpAppView | null> {
  return call("prepare_mcp_app", { id, messageId, callId });
}

/**
 * The MCP App of the call `callId` asks to call `tool` of the same server with `args`: Rust
 * applies the conversation's approvals (it may ask in its native dialog) and resolves the raw
 * CallToolResult; rejects when denied, or the tool is unknown or another server's.
 */
export function appCallTool(id: string, messageId: string, callId: string, tool: string, args: Record<string, unknown>): Promise<unknown> {
  return call("app_call_tool", { id, messageId, callId, tool, arguments: args });
}

/**
 * Sends `text` with the kept files `attachments` names in place of the message of yours
 * `messageId`; what followed is kept as another branch. Resolves with the run id. The text may
 * be empty when files go; refusals are sendMessage's.
 */
export function editMessage(
  conversationId: string,
  messageId: string,
  text: string,
  attachments: AttachmentRef[],
  onEvent: (event: RunEvent) => void,
): Promise<string> {
  return call("edit_message", { conversationId, messageId, text, attachments, onEvent: eventChannel(onEvent) });
}

/** Asks again for the answer that starts at `messageId`; the old one is kept as another branch. Resolves with the run id. */
export function regenerate(conversationId: string, messageId: string, onEvent: (event: RunEvent) => void): Promise<string> {
  return call("regenerate", { conversationId, messageId, onEvent: eventChannel(onEvent) });
}

/** Shows branch `position` (from 0) where `messageId` is the first message shown. */
export function switchBranch(id: string, messageId: string, position: number): Promise<SwitchedBranch> {
  return call("switch_branch", { id, messageId, position });
}

/** Shows message `messageId` (a search hit), switching to the branch that holds it: its number. */
export function revealMessage(id: string, messageId: string): Promise<number> {
  return call("reveal_message", { id, messageId });
}

/** Deletes the question `messageId` and everything that answered it: the ids of the messages deleted. */
export function deleteTurn(id: string, messageId: string): Promise<string[]> {
  return call("delete_turn", { id, messageId });
}

/** Conversations whose title, and messages whose text, hold every word of `text`, newest first. */
export function searchConversations(text: string, limit?: number): Promise<SearchHit[]> {
  return call("search_conversations", { text, limit: limit ?? null });
}

/** Asks where to save conversation `id` and writes it there: the path, or null when the person closed the dialog. */
export function exportConversation(id: string, format: ExportFormat): Promise<string | null> {
  return call("export_conversation", { id, format });
}

/** Asks for an exported conversation (JSON) and keeps it as a new one; null when the person closed the dialog. */
export function importConversation(): Promise<Conversation | null> {
  return call("import_conversation", {});
}

/** The model this conversation chats with; both null: back to the defaults. */
export function setConversationModel(id: string, provider: string | null, model: string | null): Promise<Conversation> {
  return call("set_conversation_model", { id, provider, model });
}

// ------------------------------------------------------------ profiles

/** Every profile, by name (any case). */
export function listProfiles(): Promise<Profile[]> {
  return call("list_profiles");
}

/**
 * invalid_input names `name`, `system_prompt`, `provider`, `model`, `max_rounds`,
 * `tool_timeout_secs`, `run_time_limit_secs` or `tools` in `field`; a taken name is a conflict
 * on `name`.
 */
export function createProfile(name: string, fields: ProfileFields): Promise<Profile> {
  return call("create_profile", { name, fields });
}

/** Refusals as createProfile's. */
export function updateProfile(id: string, name: string, fields: ProfileFields): Promise<Profile> {
  return call("update_profile", { id, name, fields });
}

/** A copy named "… (copy)" (or "… (copy) (2)"…), not the default. */
export function duplicateProfile(id: string): Promise<Profile> {
  return call("duplicate_profile", { id });
}

/** Conversations that followed it keep their prompt, model and tools, and follow no profile. */
export function deleteProfile(id: string): Promise<void> {
  return call("delete_profile", { id });
}

/** Makes a profile the one new conversations start from; null: none is. */
export function setDefaultProfile(id: string | null): Promise<void> {
  return call("set_default_profile", { id });
}

/** Rust asks where to save the profile's JSON and writes it: the path, or null when the person closed the dialog. */
export function exportProfile(id: string): Promise<string | null> {
  return call("export_profile", { id });
}

/** Rust asks for a profile's JSON file and keeps it (renamed, or without its provider, as `notes` say); null when closed. */
export function importProfile(): Promise<ImportedProfile | null> {
  return call("import_profile");
}

/**
 * Puts a profile on a conversation: its system prompt, its model (when it names a provider) and
 * its tool switches replace the conversation's, from the next message. null: it follows no
 * profile and keeps what it has.
 */
export function setConversationProfile(conversationId: string, profileId: string | null): Promise<Conversation> {
  return call("set_conversation_profile", { conversationId, profileId });
}

export function listProviderKinds(): Promise<ProviderKindInfo[]> {
  return call("list_provider_kinds");
}

/** The choices of the "Add a provider" form: hosted services, local servers, then "custom". */
export function listProviderPresets(): Promise<ProviderPreset[]> {
  return call("list_provider_presets");
}

/** Resolves even when the connection failed (`ok` false, `message` says what failed). */
export function testProvider(name: string): Promise<ConnectionReport> {
  return call("test_provider", { name });
}

/** Sorted by id. Rejects with kind "provider" and a human message when the provider cannot be reached. */
export function listModels(name: string): Promise<ModelInfo[]> {
  return call("list_models", { name });
}

/** Ollama and LM Studio answering on their default local ports (about a second at most); often empty. */
export function detectLocalProviders(): Promise<LocalServer[]> {
  return call("detect_local_providers");
}

export function listProviders(): Promise<Provider[]> {
  return call("list_providers");
}

/** If the key cannot be stored in the keychain, nothing is saved (kind "keychain"). */
export function addProvider(provider: NewProvider): Promise<Provider> {
  return call("add_provider", { provider });
}

export function updateProvider(
  name: string,
  baseUrl: string | null,
  defaultModel: string | null,
): Promise<Provider> {
  return call("update_provider", { name, baseUrl, defaultModel });
}

export function setProviderKey(name: string, apiKey: string): Promise<Provider> {
  return call("set_provider_key", { name, apiKey });
}

export function deleteProviderKey(name: string): Promise<Provider> {
  return call("delete_provider_key", { name });
}

/** The model's window in tokens and whose word it is; null when nothing knows it. */
export function getModelWindow(provider: string, model: string): Promise<ModelWindow | null> {
  return call("get_model_window", { provider, model });
}

/** Sets the person's window for the model; null forgets it (and one learned from a refusal). The window that counts now. */
export function setModelWindow(provider: string, model: string, tokens: number | null): Promise<ModelWindow | null> {
  return call("set_model_window", { provider, model, tokens });
}

/** Also removes the provider's key from the keychain. */
export function removeProvider(name: string): Promise<void> {
  return call("remove_provider", { name });
}

/**
 * Listens for the server list: every configured server with its state arrives on `onChange`
 * now and again after each change (a start, a crash, a restart, a new tool, a stop).
 */
export function watchMcpServers(onChange: (servers: McpServerStatus[]) => void): Promise<void> {
  const channel = new Channel<McpServerStatus[]>();
  channel.onmessage = onChange;
  return call("watch_mcp_servers", { onChange: channel });
}

/** Every configured MCP server with its state. */
export function listMcpServers(): Promise<McpServerStatus[]> {
  return call("list_mcp_servers");
}

/**
 * Asks Rust to show its native approval dialog for the server; resolves true when the
 * person approved (the server then starts), false when they declined.
 */
export function approveMcpServer(name: string): Promise<boolean> {
  return call("approve_mcp_server", { name });
}

/** Switches a server on (it starts if approved) or off (it stops). */
export function setMcpServerEnabled(name: string, enabled: boolean): Promise<McpServerView> {
  return call("set_mcp_server_enabled", { name, enabled });
}

/** Rust's folder dialog, then the chosen folder is given to the server as a root; null when closed. */
export function addMcpServerRoot(name: string): Promise<McpServerView | null> {
  return call("add_mcp_server_root", { name });
}

/** Takes a folder away from those a server is given as its roots. */
export function removeMcpServerRoot(name: string, folder: string): Promise<McpServerView> {
  return call("remove_mcp_server_root", { name, folder });
}

export function restartMcpServer(name: string): Promise<void> {
  return call("restart_mcp_server", { name });
}

/** Stops the server and removes it, with its keychain secrets and approval. */
export function removeMcpServer(name: string): Promise<void> {
  return call("remove_mcp_server", { name });
}

/** One page of the MCP Registry's servers (the registry Settings names) matching `query`. */
export function searchMcpRegistry(query: string, cursor: string | null): Promise<RegistryPage> {
  return call("search_mcp_registry", { query, cursor });
}

/**
 * Adds the server the registry describes with the values given (secret ones go to the
 * keychain), then Rust asks for its approval in its own dialog; the server as it then is.
 */
export function installMcpServer(request: InstallRequest): Promise<McpServerView> {
  return call("install_mcp_server", { request });
}

/**
 * Rust's open dialog asks for an MCP bundle (.mcpb) and reads it, nothing unpacked; null when
 * the dialog was closed.
 */
export function openMcpBundle(): Promise<OfferedBundle | null> {
  return call("open_mcp_bundle");
}

/** Unpacks the offered bundle and adds its server; Rust then asks for approval in its own dialog. */
export function installMcpBundle(request: BundleInstallRequest): Promise<McpServerView> {
  return call("install_mcp_bundle", { request });
}

/**
 * Listens for servers proposed by switchboard:// links: those that came before are sent at
 * once, the others as they come.
 */
export function watchServerProposals(onProposal: (proposal: ShownProposal) => void): Promise<void> {
  const channel = new Channel<ShownProposal>();
  channel.onmessage = onProposal;
  return call("watch_server_proposals", { onProposal: channel });
}

/** Adds the server a link proposed; Rust then asks for approval in its own dialog. */
export function acceptServerProposal(token: string): Promise<McpServerView> {
  return call("accept_server_proposal", { token });
}

/**
 * Adds a server from a command line or an address (exactly one), then Rust asks for its
 * approval in the native dialog; resolves the server as it then is.
 * invalid_input names `command_line` or `url` in `field`; a taken name is a conflict on `name`.
 */
export function addMcpServer(server: NewMcpServer): Promise<McpServerView> {
  return call("add_mcp_server", {
    name: server.name,
    commandLine: server.command_line ?? null,
    url: server.url ?? null,
  });
}

/**
 * Changes a server's command line (or address) to `typed`; Rust stops it and asks for approval
 * of the new one in its native dialog. invalid_input names `command_line` or `url` in `field`.
 */
export function editMcpServer(name: string, typed: { command_line?: string; url?: string }): Promise<McpServerView> {
  return call("edit_mcp_server", { name, commandLine: typed.command_line ?? null, url: typed.url ?? null });
}

/** A running server's tools, each against its pin. */
export function listMcpTools(name: string): Promise<ToolReview[]> {
  return call("list_mcp_tools", { name });
}

/** What a running server offers beside its tools: resources, resource templates, prompts. */
export function listMcpOffers(name: string): Promise<ServerOffers> {
  return call("list_mcp_offers", { name });
}

/** Rust shows the tool's diff in its native dialog; resolves whether the change was accepted. */
export function acceptMcpTool(name: string, tool: string): Promise<boolean> {
  return call("accept_mcp_tool", { name, tool });
}

/** What importing would add: from pasted `text`, or (null) from Claude Desktop's own file. */
export function previewMcpImport(text: string | null): Promise<ImportPreview> {
  return call("preview_mcp_import", { text });
}

/** Imports the same source again, read by Rust; the servers wait for approval. Resolves their names. */
export function importMcpServers(text: string | null): Promise<string[]> {
  return call("import_mcp_servers", { text });
}

/**
 * Signs in to a remote server that asks for OAuth: Rust opens the person's browser at the
 * server's authorization page and waits (up to 5 minutes) for it to send them back; the
 * tokens go to the OS keychain and the server starts again.
 */
export function signInMcpServer(name: string): Promise<void> {
  return call("sign_in_mcp_server", { name });
}

/** Forgets a remote server's OAuth tokens and starts it again without them. */
export function signOutMcpServer(name: string): Promise<void> {
  return call("sign_out_mcp_server", { name });
}

/**
 * Servers' forms arrive on `onForm` from now on (those already open first); the id of each one
 * closed without the person's answer (its server said it is done, it timed out, its call
 * stopped) on `onClosed`.
 */
export function watchMcpForms(onForm: (form: McpForm) => void, onClosed: (id: string) => void): Promise<void> {
  const forms = new Channel<McpForm>();
  forms.onmessage = onForm;
  const closed = new Channel<string>();
  closed.onmessage = onClosed;
  return call("watch_mcp_forms", { onForm: forms, onClosed: closed });
}

/** The person's answer to a form; invalid when the values do not fit it (the form stays open). */
export function answerMcpForm(id: string, answer: McpFormAnswer): Promise<void> {
  return call("answer_mcp_form", { id, answer });
}

/**
 * The person clicked Open on a server's URL-mode request: Rust shows the address in its native
 * dialog and, on yes, opens the page it checked (in the system browser) and answers the
 * request `accept`; `false` when the person said no. Only the id goes; never the address.
 */
export function visitMcpForm(id: string): Promise<boolean> {
  return call("visit_mcp_form", { id });
}

/** The end of the server's stderr log (empty when it has written nothing). */
export function mcpServerLog(name: string): Promise<string> {
  return call("mcp_server_log", { name });
}

/** Every model with a price (the person's, else what its provider's list says), by provider and model. */
export function listPrices(): Promise<ModelPrice[]> {
  return call("list_prices");
}

/**
 * The person's price for `model` of `provider`, as typed (dollars per million tokens); all three
 * null forgets it. Resolves the price that counts now (after forgetting: the provider list's, or
 * null). invalid_input names `input`, `output` or `cached` (a price missing or not a number) or
 * `model` in `field`.
 */
export function setModelPrice(provider: string, model: string, price: TypedPrice): Promise<ModelPrice | null> {
  return call("set_model_price", { provider, model, input: price.input, output: price.output, cached: price.cached });
}

/** A conversation's requests added up: every round of every answer, branches and descriptions too. */
export function conversationUsage(conversationId: string): Promise<UsageTotal> {
  return call("conversation_usage", { conversationId });
}

/** Every model's use since `since` (milliseconds since 1970), by day (UTC), provider and model. */
export function usageReport(since: number): Promise<UsageReport> {
  return call("usage_report", { since });
}

export function getSettings(): Promise<Settings> {
  return call("get_settings");
}

/** invalid_input names the Settings key at fault in `field`. */
export function updateSettings(settings: Settings): Promise<Settings> {
  return call("update_settings", { settings });
}

/** Asks this build's update address whether there is a newer release (update: it failed). */
export function checkForUpdate(): Promise<UpdateStatus> {
  return call("check_for_update");
}

/**
 * Downloads the release the last check found and installs it once Rust has checked its
 * signature; resolves its version. update: refused (a bad signature, a copy not installed from a
 * package) or failed.
 */
export function installUpdate(onProgress: (progress: UpdateProgress) => void): Promise<string> {
  const channel = new Channel<UpdateProgress>();
  channel.onmessage = onProgress;
  return call("install_update", { onProgress: channel });
}

/** What `switchboard` runs in a terminal, and where Switchboard would put it. */
export function shellCommandStatus(): Promise<ShellCommandStatus> {
  return call("shell_command_status");
}

/** Makes `switchboard` in new terminals run this app (install: it could not). */
export function installShellCommand(): Promise<ShellCommandStatus> {
  return call("install_shell_command");
}

/** Takes away the `switchboard` this app put on the PATH (install: it could not). */
export function removeShellCommand(): Promise<ShellCommandStatus> {
  return call("remove_shell_command");
}

/** Quits (stopping every run and server) and starts again, into an installed update. */
export function restartApp(): Promise<void> {
  return call("restart_app");
}

/** A channel for a run's events, each handed to `onEvent`. */
function eventChannel(onEvent: (event: RunEvent) => void): Channel<RunEvent> {
  const channel = new Channel<RunEvent>();
  channel.onmessage = onEvent;
  return channel;
}

/**
 * Sends a message (`text` null: retry from the conversation as it is) with the kept files
 * `attachments` names, and resolves the run's id once it has started; its events arrive on
 * `onEvent`, the last being `run_finished`. invalid_input names `provider`, `model`, `text` or
 * `attachments` in `field` (a model that cannot take a file is refused before anything is saved).
 */
export function sendMessage(
  conversationId: string,
  text: string | null,
  onEvent: (event: RunEvent) => void,
  attachments: AttachmentRef[] = [],
): Promise<string> {
  return call("send_message", { conversationId, text, attachments, onEvent: eventChannel(onEvent) });
}

/**
 * Asks two to four `models` the question `text` (with the kept files `attachments`) at once, each
 * in a lane of its own with its own rounds, tool calls and approvals; resolves the comparison's
 * run id. Its events arrive on `onEvent`: `run_started`, the question's `message_saved`, each
 * model's events wrapped in `lane`, then `comparison_folded` (the answers are branches of the
 * conversation now) and `run_finished`. `stopRun` with the comparison's id stops every model, with
 * a lane's run id that model only. invalid_input names `models` in `field` (fewer than two or
 * more than four, one twice, a provider that does not exist); a conflict when the conversation
 * is already answering.
 */
export function compareModels(
  conversationId: string,
  text: string,
  attachments: AttachmentRef[],
  models: ComparedModel[],
  onEvent: (event: RunEvent) => void,
): Promise<string> {
  return call("compare_models", { conversationId, text, attachments, models, onEvent: eventChannel(onEvent) });
}

/** Rust's native picker (several files); what was kept, and why any other was not. */
export function chooseAttachments(): Promise<Attached> {
  return call("choose_attachments");
}

/** The person says the model this conversation uses takes images; Rust keeps that and returns the model's name. */
export function allowModelImages(conversationId: string): Promise<string> {
  return call("allow_model_images", { conversationId });
}

/**
 * Whether `model` of `provider` is given images now: the person's word, else what the
 * provider's model list says, else what its family is known to take.
 */
export function modelImages(provider: string, model: string): Promise<boolean> {
  return call("model_images", { provider, model });
}

/** The person says whether `model` of `provider` takes images; Rust keeps that word. */
export function setModelImages(provider: string, model: string, takes: boolean): Promise<void> {
  return call("set_model_images", { provider, model, takes });
}

/** Keeps a pasted file, given as base64 (the page never names a path). */
export function attachPasted(name: string, data: string): Promise<Attachment> {
  return call("attach_pasted", { name, data });
}

/** The files tools produced in a conversation (its canvas), oldest first. */
export function listArtifacts(conversationId: string): Promise<ConversationArtifact[]> {
  return call("list_artifacts", { conversationId });
}

/** One of a conversation's artifacts as base64, for its preview (refused above 20 MB). */
export function readArtifact(conversationId: string, sha256: string): Promise<string> {
  return call("read_artifact", { conversationId, sha256 });
}

/** Rust's Save As dialog for one of a conversation's artifacts; the path written, or null when closed. */
export function saveArtifact(conversationId: string, sha256: string): Promise<string | null> {
  return call("save_artifact", { conversationId, sha256 });
}

/**
 * Reads the link (an MCP resource_link) `uri` that the call `callId` of the answer `messageId`
 * returned, through the server that returned it; what it reads is kept as files of that call's
 * result (list_artifacts lists them from then on). Resolves with those files.
 */
export function readToolLink(conversationId: string, messageId: string, callId: string, uri: string): Promise<ConversationArtifact[]> {
  return call("read_tool_link", { conversationId, messageId, callId, uri });
}

/** The tools switched off in the conversation that fit these kept files, and why each. */
export function suggestTools(conversationId: string, files: AttachmentRef[]): Promise<ToolSuggestion[]> {
  return call("suggest_tools", { conversationId, files });
}

/** Every running server's resources, resource templates and prompts, for the "/" and "@" pickers. */
export function listRunningOffers(): Promise<OffersOf[]> {
  return call("list_running_offers");
}

/** Reads a running server's resource and keeps its contents as files (named `name` when one). */
export function attachResource(server: string, uri: string, name: string | null): Promise<Attached> {
  return call("attach_resource", { server, uri, name });
}

/** A running server's prompt, got with `args`: its text for the composer and its files. */
export function usePrompt(server: string, prompt: string, args: Record<string, string>): Promise<PromptUse> {
  return call("use_prompt", { server, prompt, arguments: args });
}

/** What a running server suggests for an argument of a prompt or a resource template. */
export function completeArgument(
  server: string,
  of: { prompt: string } | { template: string },
  argument: string,
  value: string,
  context: Record<string, string>,
): Promise<string[]> {
  return call("complete_argument", {
    server,
    prompt: "prompt" in of ? of.prompt : null,
    template: "template" in of ? of.template : null,
    argument,
    value,
    context,
  });
}

/** Files dragged over the window: over, left, or dropped (kept by Rust, or refused). */
export function watchDroppedFiles(onDrop: (event: DropEvent) => void): Promise<void> {
  const channel = new Channel<DropEvent>();
  channel.onmessage = onDrop;
  return call("watch_dropped_files", { onDrop: channel });
}

/**
 * Runs a failed call (the call `callId` of the answer `messageId`) again, through the same
 * approvals, and lets the model go on when it works; resolves the run's id like sendMessage.
 * invalid_input (field `call`) says why a call cannot run again.
 */
export function retryToolCall(conversationId: string, messageId: string, callId: string, onEvent: (event: RunEvent) => void): Promise<string> {
  return call("retry_tool_call", { conversationId, messageId, callId, onEvent: eventChannel(onEvent) });
}

/**
 * Attaches to the run under way in a conversation: its events so far, then live, arrive on
 * `onEvent`. Resolves the run's id, or null when nothing runs there.
 */
export function attachRun(conversationId: string, onEvent: (event: RunEvent) => void): Promise<string | null> {
  return call("attach_run", { conversationId, onEvent: eventChannel(onEvent) });
}

/** Stops the run: its answer stream and every running tool call. */
export function stopRun(runId: string): Promise<void> {
  return call("stop_run", { runId });
}

/** Answers an approval request; Rust runs only what it asked about and was allowed. */
export function answerApproval(requestId: string, answers: ApprovalAnswer[]): Promise<void> {
  return call("answer_approval", { requestId, answers });
}

/** The running servers' tools with this conversation's switches. */
export function listConversationTools(conversationId: string): Promise<ConversationTool[]> {
  return call("list_conversation_tools", { conversationId });
}

/** `tool` null switches the whole server. */
export function setConversationTool(conversationId: string, server: string, tool: string | null, enabled: boolean): Promise<void> {
  return call("set_conversation_tool", { conversationId, server, tool, enabled });
}

/** Makes this conversation's tool switches the ones new conversations start with. */
export function setDefaultTools(conversationId: string): Promise<void> {
  return call("set_default_tools", { conversationId });
}

export function setAutoApprove(conversationId: string, on: boolean): Promise<void> {
  return call("set_auto_approve", { conversationId, on });
}

export function listToolApprovals(): Promise<StandingApproval[]> {
  return call("list_tool_approvals");
}

/** Rust confirms in its native dialog first; rejects `not_confirmed` when the person says no. */
export function allowToolAlways(server: string, tool: string): Promise<void> {
  return call("allow_tool_always", { server, tool });
}

export function revokeToolApproval(server: string, tool: string, conversationId: string | null): Promise<void> {
  return call("revoke_tool_approval", { server, tool, conversationId });
}

export type { CommandError };
