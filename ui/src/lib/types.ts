// Types mirrored from the Rust side (switchboard-core). Keep in step with
// src-tauri/core/src/{store,providers_config,settings,status}.rs and the
// commands in src-tauri/commands/.

/** Every command rejects with this shape. */
export interface CommandError {
  /** machine-readable: "invalid_input" | "not_found" | "conflict" | "database" | "keychain" | "provider" | "internal" */
  kind: string;
  message: string;
  /** for "invalid_input": the form field at fault ("name", "base_url", "title", "api_key", ...) */
  field?: string | null;
}

export interface Conversation {
  id: string;
  title: string;
  /** milliseconds since the Unix epoch */
  created_at: number;
  updated_at: number;
  /** the provider picked for this conversation (its name); null: the defaults apply */
  provider: string | null;
  /** the model picked for this conversation; null: the provider's default */
  model: string | null;
  /** every tool call runs without asking (shown as a badge) */
  auto_approve: boolean;
}

export type Role = "user" | "assistant" | "system" | "tool";
export type MessageStatus = "streaming" | "complete" | "interrupted" | "error";

export interface Message {
  id: string;
  conversation_id: string;
  role: Role;
  content: string | null;
  created_at: number;
  tool_calls: unknown | null;
  tool_call_id: string | null;
  name: string | null;
  finish_reason: string | null;
  status: MessageStatus;
  provider: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  reasoning: string | null;
  /** why an answer failed (status "error") */
  error: string | null;
  /** a tool message whose result is an error */
  is_error: boolean;
}

/** One tool call as it happened (src-tauri/core/src/store/tool_loop.rs). */
/** One call of a conversation: a model's call ids are unique only within one answer. */
export interface CallRef {
  message_id: string;
  call_id: string;
}

export interface ToolRun {
  id: string;
  conversation_id: string;
  message_id: string;
  call_id: string;
  server: string;
  tool: string;
  /** "Server · Tool Name" as shown when the call ran */
  display_name: string | null;
  arguments: string;
  decision: "allowed" | "denied" | null;
  decision_scope: string | null;
  deny_reason: string | null;
  started_at: number | null;
  finished_at: number | null;
  is_error: boolean;
  result: string | null;
  /** the failed call this one ran again, from a Retry (the first of a chain of retries) */
  retry_of: CallRef | null;
  /** the model's few words on what the call did, when Settings asked for them (model text) */
  description: string | null;
}

export interface ConversationDetail {
  conversation: Conversation;
  messages: Message[];
  tool_runs: ToolRun[];
}

/** A tool in a conversation's tools panel. */
export interface ConversationTool {
  server: string;
  tool: string;
  wire_name: string;
  display_name: string;
  description: string;
  enabled: boolean;
  held_back: boolean;
  estimated_tokens: number;
}

/** A tool the person allowed without asking, in one conversation or in all. */
export interface StandingApproval {
  server: string;
  tool: string;
  conversation_id: string | null;
  conversation_title: string | null;
  created_at: number;
}

export type ProviderKind =
  | "openai"
  | "anthropic"
  | "gemini"
  | "ollama"
  | "openrouter"
  | "openai_compatible";

export interface ProviderKindInfo {
  kind: ProviderKind;
  label: string;
  default_base_url: string;
  /** false for Ollama (local, no key) */
  needs_key: boolean;
}

/** A starting point in the "Add a provider" form: which API a host speaks and where it usually listens. */
export interface ProviderPreset {
  /** "openai" | "anthropic" | "gemini" | "ollama" | "openrouter" | "lm_studio" | "llama_cpp" | "vllm" | "groq" | "deepseek" | "mistral" | "ollama_openai" | "custom" */
  id: string;
  /** e.g. "LM Studio" */
  label: string;
  /** the API it speaks (LM Studio → "openai_compatible") */
  kind: ProviderKind;
  /** "" only for "custom" */
  base_url: string;
  needs_key: boolean;
  /** runs on this computer (Ollama, LM Studio, llama.cpp, vLLM) */
  local: boolean;
}

export interface ModelInfo {
  id: string;
  /** a display name, when the provider gives one */
  name: string | null;
}

/** What `test_provider` found; it resolves with this even when the connection failed. */
export interface ConnectionReport {
  ok: boolean;
  elapsed_ms: number;
  /** sorted by id; empty when !ok */
  models: ModelInfo[];
  /** null when ok; else "unauthorized" | "rate_limited" | "context_too_long" | "overloaded" | "server" | "network" | "bad_response" | "no_key" | "keychain" | "cancelled" */
  error_kind: string | null;
  /** one human sentence: "Connected in 312 ms: 14 models." or exactly what failed */
  message: string;
}

/** A model server found answering on its default port on this computer. */
export interface LocalServer {
  /** "ollama" | "lm_studio" */
  preset_id: string;
  /** "Ollama" | "LM Studio" */
  label: string;
  /** "ollama" | "openai_compatible" */
  kind: ProviderKind;
  /** "http://127.0.0.1:11434" | "http://127.0.0.1:1234/v1" */
  base_url: string;
  models: ModelInfo[];
  /** the first model that can chat (embedding / reranking models skipped); null if none */
  suggested_model: string | null;
}

export interface Provider {
  id: string;
  name: string;
  kind: ProviderKind;
  base_url: string;
  default_model: string | null;
  /** whether a key is stored in the OS keychain; the key itself never reaches the UI */
  has_key: boolean;
  created_at: number;
}

export interface NewProvider {
  name: string;
  kind: ProviderKind;
  /** empty or missing: the kind's default */
  base_url?: string | null;
  default_model?: string | null;
  /** goes straight to the OS keychain */
  api_key?: string | null;
}

export type Theme = "light" | "dark" | "system";

export interface Settings {
  theme: Theme;
  default_provider: string | null;
  default_model: string | null;
  /** 1..=100, default 10 */
  max_rounds: number;
  /** 1..=3600, default 60 */
  tool_timeout_secs: number;
  /** 10..=86400, default 600 */
  run_time_limit_secs: number;
  /** ask the model for a few words on what each tool call does (default off) */
  describe_calls: boolean;
}

export interface KeychainStatus {
  available: boolean;
  /** human text: which backend, or why none is reachable */
  message: string;
}

export interface AppStatus {
  version: string;
  /** the home folder in use (SWITCHBOARD_HOME or the OS default) */
  home: string;
  /** null when the database opened; else why it could not (the app shows it and does not touch the file) */
  database_error: CommandError | null;
}

/** What the supervisor says of a running (or once-running) MCP server. */
export type McpServerState =
  | { state: "starting" }
  | { state: "running"; pid: number | null; tools: number }
  | { state: "restarting"; attempt: number; in_secs: number; reason: string }
  | { state: "failed"; reason: string }
  | { state: "needs_sign_in"; reason: string }
  | { state: "stopped" };

/** One field of a server's form (mirrors core `ElicitField`); every text is the server's. */
export type FormField = {
  name: string;
  title: string | null;
  description: string | null;
  required: boolean;
  default: unknown;
} & (
  | { type: "text"; format: "email" | "uri" | "date" | "date-time" | null; min_length: number | null; max_length: number | null }
  | { type: "number"; integer: boolean; minimum: number | null; maximum: number | null }
  | { type: "boolean" }
  | { type: "choice"; options: { value: string; label: string }[] }
  | { type: "multi_choice"; options: { value: string; label: string }[]; min_items: number | null; max_items: number | null }
);

/** A form an MCP server asks the person to fill in (mirrors core `ElicitationRequest`). */
export interface McpForm {
  id: string;
  server: string;
  message: string;
  fields: FormField[];
}

/** What the person did with a form (mirrors core `ElicitationAnswer`). */
export type McpFormAnswer = { action: "accept"; content: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };

/** One configured MCP server as mcp.json has it (mirrors core `McpServerView`). */
export interface McpServerView {
  name: string;
  transport: string | null;
  command_line: string | null;
  disabled: boolean;
  approved: boolean;
  error: string | null;
  /** what an edit starts from: program and arguments as one shell-quoted line, or the address */
  edit_text: string | null;
}

/** One tool of a running server against its pin (mirrors core `ToolReview`). */
export type ToolReview = {
  /** the server's own name for it */
  tool: string;
  /** the name models see: server__tool */
  wire_name: string;
  /** "Server · Tool Name", for people */
  display_name: string;
  /** false while a change is held back */
  offered: boolean;
} & ({ status: "new" } | { status: "pinned" } | { status: "changed"; diff: string });

/** One server in an import preview: its name and the command line or address it would run (or why not). */
export interface ImportItem {
  name: string;
  detail: string;
}

/** What importing a configuration would do (mirrors core `ImportPreview`). */
export interface ImportPreview {
  added: ImportItem[];
  /** names already taken: not imported */
  conflicts: ImportItem[];
  /** entries that cannot be used, with why */
  invalid: ImportItem[];
  warnings: string[];
}

/** A server typed in on the Servers page: a command line or an address. */
export interface NewMcpServer {
  name: string;
  command_line?: string;
  url?: string;
}

/** One configured MCP server, as the Servers page shows it (mirrors core `McpServerStatus`). */
export interface McpServerStatus {
  name: string;
  /** "stdio" | "http" | "sse"; null when the entry cannot be used */
  transport: string | null;
  /** the exact command line or address; secrets appear as <keychain:…> references */
  command_line: string | null;
  disabled: boolean;
  /** approved exactly as it is now */
  approved: boolean;
  /** why the entry cannot be used */
  error: string | null;
  /** what an edit starts from: program and arguments as one shell-quoted line, or the address */
  edit_text: string | null;
  /** null when the app does not run it (disabled, needs approval, invalid) */
  state: McpServerState | null;
  /** what runs: the program's resolved path (login-shell PATH) or the address; null when not run */
  resolved: string | null;
  log_file: string;
}
