// An in-memory stand-in for the Rust commands, used by tests through a
// `vi.mock("@tauri-apps/api/core")` in each test file. Test-only code.
//
// Hooks a test sets before rendering (besides the lists themselves):
//   failures          command name → the error that command rejects with
//   delay             command name → milliseconds before it answers
//   modelLists        provider name → the models it lists (absent: none)
//   providerFailures  provider name → how reaching it fails (test_provider reports it,
//                     list_models rejects with kind "provider")
//   connectionMs      the elapsed_ms a successful test_provider reports
//   localServers      what detect_local_providers finds
//   toolFiles         the files the scripted tool call's result carries (kept with their bytes),
//                     and toolOpensCanvas the one it asks the canvas to open at
//   saveAs            the folder the person picks in Rust's Save As dialog (null: they close it)
//   modelTakesImages  whether a model the person has said nothing of takes images, and
//                     imageWords the person's word on one ("provider/model" → takes)
//   linkFiles         what reading a link (read_tool_link) gives, by its address; a link not
//                     here fails as its server would (addToolLinks saves a call that returned links)
//   usage             every request a model answered, as Rust's usage table: the scripted run's
//                     answer adds one (priced when its model has a price); addUsage adds others
//   setPrice          a model's price, the person's or what its provider's list says (a model
//                     list's `price` is also kept, as Rust keeps it, when it is listed)
//   profiles          the profiles (addProfile adds one); profileToImport what the person picks in
//                     Rust's Open dialog for import_profile (null: they close it); export_profile
//                     answers with `saveAs` as Save As does
//   appTools          "server/tool" → the MCP App its calls have (prepare_mcp_app answers from it;
//                     charts/show_chart has one, and addToolApp saves a finished call of it);
//                     appServerTools the tools of a server its apps may call (app_call_tool), and
//                     appCallAllowed what the person answers Rust's approval of such a call
//   linkAnswer        what the person answers Rust's confirm for open_link; linksAsked every address
//   compareScript     what each compared model does in compare_models, by its lane (text in two
//                     pieces, maybe a call asked about first, maybe a failure); laneGate is awaited
//                     by each lane between its two pieces (stop_run ends a lane waiting there)
//   needSignIn        puts a server into `needs_sign_in` and pushes the list, as Rust does when a
//                     remote server refuses a call for want of (more) permission; toolWantsSignIn
//                     has the scripted call's next run refused so (the time server must be listed)
//   signInRefusal     what sign_in_mcp_server rejects with (the person said no, the sign-in
//                     failed); null: it signs in, the server restarts (`starting`, pushed) and runs
//                     signInStartsAfter ms later (pushed; null: it never gets there)
//   propose           a switchboard:// link opened: what it proposes reaches the window
//                     (an entry is then kept for accept_server_proposal)
//   pickedBundle      the .mcpb Rust's open dialog picks, as Rust read it (null: closed);
//                     bundleInstalls every install_mcp_bundle request
//   registry          the MCP Registry's servers (registryPage a page); installed every
//                     install_mcp_server request; missingRuntimes the source kinds whose program
//                     is not on the PATH

import type {
  ConnectionFailure,
  AppStatus,
  CallRef,
  CommandError,
  ConnectionReport,
  Conversation,
  Draft,
  KeychainStatus,
  LocalServer,
  McpForm,
  McpFormAnswer,
  McpServerStatus,
  McpServerView,
  ImportPreview,
  InstallRequest,
  RegistryServer,
  BundleInstallRequest,
  OfferedBundle,
  ShownProposal,
  McpAppView,
  ServerOffers,
  ToolReview,
  Attached,
  Attachment,
  AttachmentRef,
  DropEvent,
  Message,
  MessagePage,
  ModelInfo,
  ModelWindow,
  ModelPrice,
  NewProvider,
  Price,
  PriceSource,
  ResultPart,
  ResultView,
  Provider,
  ProviderKindInfo,
  ProviderPreset,
  Profile,
  ProfileChoice,
  ProfileFields,
  Settings,
  ToolRun,
  ToolToggle,
  ConversationTool,
  ConversationArtifact,
  StandingApproval,
  UsageDay,
  UsageReport,
  UsageTotal,
  UpdateProgress,
  ShellCommandStatus,
  UpdateStatus,
} from "../src/lib/types";
import type { ApprovalAnswer, RunEvent, StopReason } from "../src/lib/run-events";
import golden from "./golden/runs.json";

/** Two servers as the MCP Registry describes them (after Rust's reading of `server.json`). */
const REGISTRY: RegistryServer[] = [
  {
    name: "io.github.modelcontextprotocol/server-time",
    title: "Time",
    description: "Time and time-zone conversion.",
    version: "2026.10.19",
    repository: "https://github.com/modelcontextprotocol/servers",
    website: null,
    status: "active",
    sources: [{ kind: "pypi", identifier: "mcp-server-time", version: "2026.10.19", transport: "stdio", needs: [], installable: true }],
    suggested_name: "server-time",
  },
  {
    name: "io.github.github/github-mcp-server",
    title: null,
    description: "GitHub's own MCP server.",
    version: "1.10.1",
    repository: "javascript:alert(1)",
    website: null,
    status: "deprecated",
    sources: [
      { kind: "nuget", identifier: "GitHub.Mcp", version: "1.10.1", transport: "stdio", needs: [], installable: false },
      {
        kind: "remote",
        identifier: "https://api.githubcopilot.com/mcp/",
        version: null,
        transport: "streamable-http",
        installable: true,
        needs: [
          {
            kind: "header",
            name: "Authorization",
            description: "A GitHub token, as Bearer TOKEN",
            required: true,
            secret: true,
            default: null,
            choices: [],
          },
          {
            kind: "header",
            name: "X-MCP-Toolsets",
            description: "Which toolsets",
            required: false,
            secret: false,
            default: null,
            choices: ["repos", "issues"],
          },
        ],
      },
    ],
    suggested_name: "github-mcp-server",
  },
];

/**
 * The keys of each event type as Rust sends them, read from real runs (golden/runs.json, written
 * by the core's tests): an event this fake sends with other keys fails the test that caused it,
 * so the fake cannot drift from Rust.
 */
const GOLDEN_KEYS = new Map<string, string>();
for (const run of golden.runs) {
  for (const event of run.events as Record<string, unknown>[]) {
    GOLDEN_KEYS.set(String(event.type), Object.keys(event).sort().join(","));
    if (event.type === "message_saved") GOLDEN_KEYS.set("message", Object.keys(event.message as object).sort().join(","));
  }
  for (const r of run.saved.tool_runs) GOLDEN_KEYS.set("tool_run", Object.keys(r).sort().join(","));
}

/** Throws when `value` has other keys than Rust's `kind` has (a kind no golden run shows is not checked). */
export function checkShape(kind: string, value: object): void {
  const want = GOLDEN_KEYS.get(kind);
  const got = Object.keys(value).sort().join(",");
  if (want !== undefined && want !== got) throw new Error(`the fake backend's ${kind} is not Rust's: ${got} ≠ ${want}`);
}

/** Throws when an event (or a lane's event in it) has other keys than Rust's. */
function checkEvent(event: RunEvent): void {
  checkShape(event.type, event);
  if (event.type === "message_saved" || event.type === "answer_started") checkShape("message", event.message);
  if (event.type === "lane") checkEvent(event.event);
}

/** "Provider · model", as Rust labels a compared model's branch. */
export function labelOf(m: Pick<Message, "provider" | "model">): string | null {
  return m.model === null ? null : m.provider === null ? m.model : `${m.provider} · ${m.model}`;
}

/** What one compared model does in the fake's comparison. */
export interface LaneScript {
  /** its answer, streamed in these pieces (laneGate awaited after the first) */
  pieces: string[];
  /** first a call to the time tool, asked about */
  tool?: boolean;
  /** instead of answering, it fails with this (an `error` event, then run_finished "error") */
  fail?: string;
}

/** One request a model answered, as a row of Rust's usage table. */
export interface UsageRecord {
  /** milliseconds since 1970 */
  at: number;
  conversation_id: string | null;
  message_id: string | null;
  provider: string;
  model: string;
  purpose: "answer" | "description";
  input_tokens: number;
  output_tokens: number;
  /** of the input tokens, those read from the provider's prompt cache (absent: none) */
  cached_input_tokens?: number;
  /** null when the model had no price */
  cost_pico: number | null;
}

/** As Rust's `Price::cost`: what `input` and `output` tokens cost, in pico-dollars (pinned by
 *  golden/costs.json, fake-rules.test.ts). */
export function costOf(price: Price, input: number, output: number): number {
  return input * price.input + output * price.output;
}

/** Requests, tokens and cost added up, as Rust's TOTALS. */
function totalOf(rows: UsageRecord[]): UsageTotal {
  return {
    requests: rows.length,
    input_tokens: rows.reduce((sum, r) => sum + r.input_tokens, 0),
    output_tokens: rows.reduce((sum, r) => sum + r.output_tokens, 0),
    cached_input_tokens: rows.reduce((sum, r) => sum + (r.cached_input_tokens ?? 0), 0),
    cost_pico: rows.reduce((sum, r) => sum + (r.cost_pico ?? 0), 0),
    unpriced: rows.filter((r) => r.cost_pico === null).length,
  };
}

/** SQLite's BINARY order, near enough for ASCII names. */
function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What the mocked `Channel` of a test file looks like to the backend. */
interface FakeChannel {
  onmessage: (event: RunEvent) => void;
}

function message(partial: Partial<Message> & Pick<Message, "id" | "conversation_id" | "role">): Message {
  return {
    content: null,
    created_at: 0,
    tool_calls: null,
    tool_call_id: null,
    name: null,
    finish_reason: null,
    status: "complete",
    provider: null,
    model: null,
    input_tokens: null,
    output_tokens: null,
    reasoning: null,
    error: null,
    is_error: false,
    full_length: null,
    attachments: [],
    cost_pico: null,
    ...partial,
  };
}

/** As Rust's MESSAGE_PAGE and TOOL_PREVIEW_CHARS. */
const PAGE = 60;
const PREVIEW = 4_000;
/** As Rust's MAX_PREVIEW_BYTES: read_artifact refuses a larger file. */
const MAX_PREVIEW_BYTES = 20 * 1024 * 1024;

/** A file a tool produced, with its bytes (base64), as a test hands it to the fake. */
export interface ToolFile {
  file: Attachment;
  data: string;
}

/** A tool's file of `name` and type `mime` holding `text` (its size the text's length in UTF-8). */
export function toolFile(name: string, mime: string, text: string, kind: Attachment["kind"] = "text"): ToolFile {
  const bytes = new TextEncoder().encode(text);
  const sha256 = Array.from(name + text).reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7).toString(16).padStart(64, "f");
  return { file: { sha256, name, mime, size: bytes.length, kind }, data: btoa(String.fromCharCode(...bytes)) };
}

/** Mirrors `ProviderKind::info` in src-tauri/core/src/provider_config.rs. */
export const KINDS: ProviderKindInfo[] = [
  { kind: "openai", label: "OpenAI", default_base_url: "https://api.openai.com/v1", needs_key: true },
  { kind: "anthropic", label: "Anthropic", default_base_url: "https://api.anthropic.com", needs_key: true },
  {
    kind: "gemini",
    label: "Google Gemini",
    default_base_url: "https://generativelanguage.googleapis.com/v1beta",
    needs_key: true,
  },
  { kind: "ollama", label: "Ollama", default_base_url: "http://127.0.0.1:11434", needs_key: false },
  { kind: "openrouter", label: "OpenRouter", default_base_url: "https://openrouter.ai/api/v1", needs_key: true },
  { kind: "openai_compatible", label: "OpenAI-compatible", default_base_url: "", needs_key: false },
];

function preset(
  id: string,
  label: string,
  kind: ProviderPreset["kind"],
  base_url: string,
  needs_key: boolean,
  local: boolean,
): ProviderPreset {
  return { id, label, kind, base_url, needs_key, local };
}

/** Mirrors `PRESETS` in src-tauri/core/src/provider_config.rs: hosted first, custom last. */
export const PRESETS: ProviderPreset[] = [
  preset("openai", "OpenAI", "openai", "https://api.openai.com/v1", true, false),
  preset("anthropic", "Anthropic", "anthropic", "https://api.anthropic.com", true, false),
  preset("gemini", "Google Gemini", "gemini", "https://generativelanguage.googleapis.com/v1beta", true, false),
  preset("openrouter", "OpenRouter", "openrouter", "https://openrouter.ai/api/v1", true, false),
  preset("groq", "Groq", "openai_compatible", "https://api.groq.com/openai/v1", true, false),
  preset("deepseek", "DeepSeek", "openai_compatible", "https://api.deepseek.com", true, false),
  preset("mistral", "Mistral", "openai_compatible", "https://api.mistral.ai/v1", true, false),
  preset("ollama", "Ollama", "ollama", "http://127.0.0.1:11434", false, true),
  preset("ollama_openai", "Ollama (OpenAI API)", "openai_compatible", "http://127.0.0.1:11434/v1", false, true),
  preset("lm_studio", "LM Studio", "openai_compatible", "http://127.0.0.1:1234/v1", false, true),
  preset("llama_cpp", "llama.cpp server", "openai_compatible", "http://127.0.0.1:8080/v1", false, true),
  preset("vllm", "vLLM", "openai_compatible", "http://127.0.0.1:8000/v1", false, true),
  preset("custom", "Custom (OpenAI-compatible)", "openai_compatible", "", false, false),
];

/** Model infos with these ids (no display names). */
export function models(...ids: string[]): ModelInfo[] {
  return ids.map((id) => ({ id, name: null }));
}

/** Mirrors `is_chat_model` in app/connections.rs. */
function suggested(ids: string[]): string | null {
  return ids.find((id) => !["embed", "minilm", "bge-", "rerank", "nomic-bert"].some((w) => id.toLowerCase().includes(w))) ?? null;
}

/** Ollama answering on its default port with these models, as detect_local_providers reports it. */
export function runningOllama(...ids: string[]): LocalServer {
  return { preset_id: "ollama", label: "Ollama", kind: "ollama", base_url: "http://127.0.0.1:11434", models: models(...ids), suggested_model: suggested(ids) };
}

/** LM Studio answering on its default port with these models. */
export function runningLmStudio(...ids: string[]): LocalServer {
  return {
    preset_id: "lm_studio",
    label: "LM Studio",
    kind: "openai_compatible",
    base_url: "http://127.0.0.1:1234/v1",
    models: models(...ids),
    suggested_model: suggested(ids),
  };
}

/** How reaching a provider fails, as `ConnectionReport.error_kind` and `message` say it. */
export interface ProviderFailure {
  error_kind: ConnectionFailure;
  message: string;
}

export interface Call {
  cmd: string;
  args: Record<string, unknown> | undefined;
}

type Handler = (args: Record<string, unknown>) => unknown;

export class FakeBackend {
  status: AppStatus = {
    version: "0.1.0",
    home: "/home/test/.switchboard",
    database_error: null,
  };
  keychain: KeychainStatus = { available: true, message: "Secret Service" };
  conversations: Conversation[] = [];
  messages: Record<string, Message[]> = {};
  providers: Provider[] = [];
  settings: Settings = {
    theme: "system",
    default_provider: null,
    default_model: null,
    max_rounds: 10,
    tool_timeout_secs: 60,
    run_time_limit_secs: 600,
    describe_calls: false,
    default_system_prompt: "You can use tools when they help with the task.",
    mcp_registry: "https://registry.modelcontextprotocol.io",
  };
  calls: Call[] = [];
  /** milliseconds each command waits before answering */
  delay: (cmd: string) => number = () => 0;
  /** commands that reject with this error instead of running */
  failures = new Map<string, CommandError | string>();
  /** provider name → the models it lists, sorted or not (the fake sorts them, as Rust does) */
  modelLists: Record<string, ModelInfo[]> = {};
  /** Windows known by "provider/model" (as Rust's provider_models, the person's word winning). */
  modelWindows: Record<string, ModelWindow> = {};
  /** provider name → how reaching it fails */
  providerFailures = new Map<string, ProviderFailure>();
  /** the elapsed_ms a successful connection test reports */
  connectionMs = 312;
  /** the local model servers detect_local_providers finds */
  localServers: LocalServer[] = [];
  /** The window's listener for servers' forms, once it has asked. */
  #forms: { onmessage: (form: McpForm) => void } | null = null;
  #closedForms: { onmessage: (id: string) => void } | null = null;
  /** Answers the window sent to forms, in order. */
  formAnswers: { id: string; answer: McpFormAnswer }[] = [];
  /** Forms asked and not answered yet, by id (what Rust's broker holds). */
  #openForms = new Map<string, McpForm>();
  /** The pages Rust opened in the browser for URL-mode requests, in order. */
  formVisits: { id: string; url: string }[] = [];
  /** Rust's check of a sent form: a message refuses it (the form stays open). */
  formRefusal: (content: Record<string, unknown>) => string | null = () => null;
  /** Servers the window signed in to. */
  signIns: string[] = [];
  /** What sign_in_mcp_server rejects with; null: the sign-in works. */
  signInRefusal: CommandError | null = null;
  /** Milliseconds from a sign-in until its restarted server runs (pushed); null: it never does. */
  signInStartsAfter: number | null = 5;

  /** A remote server refused a call for want of a sign-in: Rust marks it so at once and pushes the list. */
  needSignIn(name: string, reason = `“${name}” refused a call: it needs more permission than you gave it; sign in to it again`): void {
    this.#mcpServer(name).state = { state: "needs_sign_in", reason };
    this.pushServers();
  }

  /** A server asks the person to fill in `form`. */
  /** Rust closes form `id` without the person's answer (its server said it is done, say). */
  closeForm(id: string): void {
    if (!this.#closedForms) throw new Error("the window is not listening for closed forms");
    this.#openForms.delete(id);
    this.#closedForms.onmessage(id);
  }

  askForm(form: McpForm): void {
    if (!this.#forms) throw new Error("the window is not listening for forms");
    this.#openForms.set(form.id, form);
    this.#forms.onmessage(form);
  }

  /** What `list_mcp_servers` answers, and `pushServers` sends. */
  mcpServers: McpServerStatus[] = [];
  /** What Rust's folder dialog answers (null: the person closed it). */
  pickedFolder: string | null = "/home/me/notes";
  /** The window's listener for the server list, once it has asked. */
  #serverWatch: { onmessage: (servers: McpServerStatus[]) => void } | null = null;

  /** Something changed in the supervisor: Rust pushes the list, as it is now, to the window. */
  pushServers(): void {
    this.#serverWatch?.onmessage(structuredClone(this.mcpServers));
  }
  /** What the person answers in Rust's native approval dialog. */
  approvalAnswer = true;
  /** What check_for_update answers (Rust asks the build's update address). */
  update: UpdateStatus = { state: "not_configured", current: "0.1.0" };
  /** What install_update reports as it downloads, and the error it then rejects with, if any. */
  updateInstall: { chunks: UpdateProgress[]; fails?: CommandError } = { chunks: [] };
  /** How many times the window asked to restart. */
  restarts = 0;
  /** The `switchboard` command as Rust finds it; install and remove change it as Rust would. */
  shellCommand: ShellCommandStatus = {
    binary: "/opt/Switchboard/switchboard",
    found: null,
    current: false,
    place: "/home/ann/.local/bin/switchboard",
    installed: false,
    on_path: true,
    hint: null,
    changed: null,
  };
  /** What install_shell_command and remove_shell_command reject with, if anything. */
  shellCommandFails: CommandError | null = null;
  /** The MCP Registry's servers (search_mcp_registry pages through those whose name holds the query). */
  registry: RegistryServer[] = structuredClone(REGISTRY);
  /** How many servers a page of the registry holds. */
  registryPage = 20;
  /** Every install asked for, as the window sent it (values and all). */
  installed: InstallRequest[] = [];
  /** Source kinds whose runtime is not on the PATH (install_mcp_server refuses them). */
  missingRuntimes: string[] = [];
  /** What a link proposed as an entry, by token (accept_server_proposal adds it). */
  proposalEntries = new Map<string, { name: string; command_line: string }>();
  #proposalWatch: { onmessage: (proposal: ShownProposal) => void } | null = null;

  /** A switchboard:// link was opened: Rust shows the window what it proposes. */
  propose(proposal: ShownProposal): void {
    if (proposal.kind === "entry") this.proposalEntries.set(proposal.token, { name: proposal.name, command_line: proposal.command_line });
    this.#proposalWatch?.onmessage(structuredClone(proposal));
  }

  /** The bundle the person picks in Rust's open dialog (null: they close it), as Rust read it. */
  pickedBundle: OfferedBundle | null = null;
  /** Every install_mcp_bundle request, as the window sent it. */
  bundleInstalls: BundleInstallRequest[] = [];
  /** What the person answers in Rust's native dialog about a standing approval or auto-approve. */
  allowanceAnswer = true;
  /** server name → what `mcp_server_log` answers */
  mcpLogs: Record<string, string> = {};
  /** server name → its tools as `list_mcp_tools` answers */
  mcpTools: Record<string, ToolReview[]> = {};
  /** Files Rust has kept, by SHA-256. */
  keptFiles = new Map<string, Attachment>();
  /** What the person chooses in Rust's picker. */
  picked: Attached = { kept: [], refused: [] };
  /** The bytes (base64) of files Rust has kept, by SHA-256. */
  fileBytes = new Map<string, string>();
  /** The files the scripted tool call's result carries when it works, and the one it asks the canvas to open at. */
  toolFiles: ToolFile[] = [];
  toolOpensCanvas: string | null = null;
  /** The folder the person picks in Rust's Save As dialog; null: they close it. */
  saveAs: string | null = "/home/someone/Downloads";
  /** Whether a model the person has said nothing of takes images. */
  modelTakesImages = true;
  /** "provider/model" → the person's word on whether it takes images (set_model_images, allow_model_images). */
  imageWords = new Map<string, boolean>();
  /** A link's address → the files reading it gives (read_tool_link); a link not here fails as its server would. */
  linkFiles: Record<string, ToolFile[]> = {};
  /** Every request a model answered, oldest first, as Rust's usage table. */
  usage: UsageRecord[] = [];
  /** "provider\u0000model" → the person's price and what the provider's list says, as Rust's provider_models. */
  #prices = new Map<string, { provider: string; model: string; said: Price | null; listed: Price | null }>();
  /** "server/tool" → the MCP App (SEP-1865) its calls have; a tool not here has none. */
  appTools: Record<string, { resource_uri: string; prefers_border: boolean }> = {
    "charts/show_chart": { resource_uri: "ui://charts/chart.html", prefers_border: true },
  };
  /** server → the tools its apps may call, each answering a CallToolResult for its arguments. */
  appServerTools: Record<string, Record<string, (args: Record<string, unknown>) => unknown>> = {
    charts: {
      show_chart: (args) => ({ content: [{ type: "text", text: `A chart of ${String(args.city)}.` }], structuredContent: { city: args.city, points: [3, 1, 2] } }),
      refresh_chart: (args) => ({ content: [{ type: "text", text: `Refreshed ${JSON.stringify(args)}` }], structuredContent: { points: [1, 2, 3] } }),
    },
  };
  /** What the person answers in Rust's approval of a call an app asks for. */
  appCallAllowed = true;
  /** What the person answers in Rust's confirm before a link opens; every address it was asked about. */
  linkAnswer = true;
  linksAsked: string[] = [];
  /** "message id/call id" → what get_tool_result_view answers for that call (absent: text only). */
  resultViews: Record<string, ResultView> = {};
  #drops: { onmessage: (event: DropEvent) => void } | null = null;
  /** Rust tells the window of files dragged over it (kept ones are kept first). */
  drop(event: DropEvent): void {
    if (event.type === "dropped") for (const file of event.attached.kept) this.keptFiles.set(file.sha256, file);
    if (event.type === "bundle") this.pickedBundle = structuredClone(event.offered);
    this.#drops?.onmessage(structuredClone(event));
  }
  /** server name → what `list_mcp_offers` answers (a running server not here offers nothing) */
  mcpOffers: Record<string, ServerOffers> = {};
  /** Claude Desktop's configuration file as Rust would read it; null when there is none */
  claudeConfig: string | null = null;
  /** conversation id → its tool calls, as `get_conversation` answers them */
  toolRuns: Record<string, ToolRun[]> = {};
  /** What each conversation's composer holds, as `save_draft` keeps it (none: nothing). */
  drafts: Record<string, Draft> = {};
  /** the running servers' tools, as `list_conversation_tools` starts from */
  catalogue: Omit<ConversationTool, "enabled">[] = [];
  /** conversation id → its switches: "server" or "server/tool" → on */
  toolSwitches: Record<string, Map<string, boolean>> = {};
  /** the switches a new conversation starts with */
  defaultSwitches = new Map<string, boolean>();
  /** the profiles, in no order (list_profiles sorts them by name, any case) */
  profiles: Profile[] = [];
  /** the profile file the person picks in Rust's Open dialog (import_profile); null: they close it */
  profileToImport: { name: string; fields: Partial<ProfileFields> } | null = null;
  /** awaited while the scripted tool call runs, after it reported progress */
  toolGate: (() => Promise<void>) | null = null;
  /** when set, the scripted tool call's next run fails with this error (then it is cleared) */
  toolFailure: string | null = null;
  /** when set, the scripted tool call's next run is refused by the time server for want of a
   * sign-in: the call fails and the server is marked `needs_sign_in` (then it is cleared) */
  toolWantsSignIn = false;
  /** what `list_tool_approvals` answers */
  standingApprovals: StandingApproval[] = [];
  #approvals = new Map<string, (answers: ApprovalAnswer[]) => void>();
  /** conversation id → its run under way: what it sent so far and who listens (as Rust's feed) */
  #feeds = new Map<string, { runId: string; log: RunEvent[]; channels: FakeChannel[] }>();
  /** run id → what stop_run does to it (a comparison's lanes, and the comparison itself) */
  #stops = new Map<string, () => void>();
  /** What each compared model does, by its lane (see compareScript in the header). */
  compareScript: (lane: number) => LaneScript = (lane) =>
    lane === 1 ? { pieces: ["It is **noon**", " in Paris, says the clock."], tool: true } : { pieces: [`Lane ${lane}: **Paris**`, " is the capital of France."] };
  /** Every comparison started: its run id and its lanes' run ids, in order. */
  comparisons: { runId: string; lanes: string[] }[] = [];
  /** Awaited by each compared model between the two pieces of its text. */
  laneGate: ((lane: number) => Promise<void>) | null = null;

  /** Starts the feed of a run of `conversationId` (what attach_run replays): its `emit`, which checks each event against Rust's. */
  #openFeed(conversationId: string, runId: string, channel: FakeChannel): (event: RunEvent) => void {
    const feed = { runId, log: [] as RunEvent[], channels: [channel] };
    this.#feeds.set(conversationId, feed);
    return (event: RunEvent) => {
      checkEvent(event);
      feed.log.push(event);
      for (const listener of feed.channels) listener.onmessage(event);
      if (event.type === "run_finished") this.#feeds.delete(conversationId);
    };
  }
  #clock = 1_700_000_000_000;

  /** As Rust's message_page: messages numbered from 1, about `limit` before `before`, reaching back
   * past tool results to their answer; tool results cut to a preview. */
  #page(id: string, before: number | null, limit: number): MessagePage {
    const all = this.messages[id] ?? [];
    const end = Math.min(before === null ? all.length : before - 1, all.length);
    let start = Math.max(end - limit, 0);
    while (start > 0 && all[start]?.role === "tool") start--;
    const messages = all.slice(start, end).map((m) => {
      const content = m.content ?? "";
      return m.role === "tool" && content.length > PREVIEW ? { ...m, content: content.slice(0, PREVIEW), full_length: content.length } : { ...m };
    });
    const ids = new Set(messages.map((m) => m.id));
    return {
      messages,
      tool_runs: (this.toolRuns[id] ?? []).filter((r) => ids.has(r.message_id)).map((r) => ({ ...r })),
      // Its runs never offer a choice of tools (that takes over 128 of them): no records.
      offers: [],
      older: start > 0 ? start + 1 : null,
      branches: (this.branches[id] ?? []).flatMap((point) => {
        const first = all[point.at];
        return first && ids.has(first.id)
          ? [{ message_id: first.id, position: point.shown, count: point.tails.length, models: (point.picks ?? []).map(labelOf) }]
          : [];
      }),
    };
  }

  /**
   * As Rust's branches, for one level: at message index `at`, every branch's tail (the shown one's
   * is null); at a comparison, the model that wrote each (`picks`, by position).
   */
  branches: Record<string, { at: number; shown: number; tails: (Message[] | null)[]; picks?: Pick<Message, "provider" | "model">[] }[]> = {};

  /** Keeps the tail from `at` on as a branch, as Rust's branch_off. */
  #branchOff(id: string, at: number): void {
    const all = this.messages[id];
    const points = (this.branches[id] ??= []);
    let point = points.find((p) => p.at === at);
    if (!point) {
      point = { at, shown: 0, tails: [null] };
      points.push(point);
    }
    point.tails[point.shown] = all.splice(at);
    point.tails.push(null);
    point.shown = point.tails.length - 1;
  }

  #indexOf(id: string, messageId: unknown): number {
    const at = (this.messages[id] ?? []).findIndex((m) => m.id === messageId);
    if (at < 0) throw { kind: "not_found", message: `Not found: message ${String(messageId)}` };
    return at;
  }
  #ids = 0;

  /** The commands this fake answers (each must be one of Rust's). */
  commands(): string[] {
    return Object.keys(this.#handlers);
  }

  invoke = async (cmd: string, args?: Record<string, unknown>): Promise<unknown> => {
    this.calls.push({ cmd, args });
    // The answer is worked out when the call arrives and delivered after the
    // delay, so a slow answer can be stale by the time it lands.
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      const failure = this.failures.get(cmd);
      if (failure !== undefined) throw failure;
      const handler = this.#handlers[cmd];
      if (!handler) throw { kind: "internal", message: `unknown command ${cmd}` };
      outcome = { ok: true, value: handler(args ?? {}) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const wait = this.delay(cmd);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };

  /**
   * A run as the Rust loop would play it for "What time is it?": one call to the time
   * server, asked about, then an answer in Markdown. Saves what it shows, as Rust does.
   * With `retryOf`, the run starts from that failed call run again, in an answer of its own.
   */
  #scriptedRun(
    conversationId: string,
    text: string | null,
    channel: FakeChannel,
    retryOf: CallRef | null = null,
    files: Attachment[] = [],
  ): string {
    const runId = `run${++this.#ids}`;
    const saved = this.messages[conversationId] ?? (this.messages[conversationId] = []);
    const emit = this.#openFeed(conversationId, runId, channel);
    const save = (m: Message) => {
      const at = saved.findIndex((x) => x.id === m.id);
      if (at >= 0) saved[at] = m;
      else saved.push(m);
      emit({ type: "message_saved", message: m });
    };
    void (async () => {
      await Promise.resolve();
      emit({ type: "run_started", run_id: runId, conversation_id: conversationId });
      if (text !== null) {
        save({ ...message({ id: `u${++this.#ids}`, conversation_id: conversationId, role: "user", content: text }), attachments: files });
      }
      if (retryOf === null) emit({ type: "status", text: "Thinking…" });
      // A retry's answer is the person's: saved whole at once, no model.
      const first = message({ id: `a${++this.#ids}`, conversation_id: conversationId, role: "assistant", content: "", status: retryOf === null ? "streaming" : "complete", model: retryOf === null ? "gpt-test" : null });
      saved.push(first);
      emit({ type: "answer_started", message: first });
      const args = '{"timezone":"Europe/Paris"}';
      const callId = retryOf === null ? "call_1" : `retry_${++this.#ids}`;
      save({ ...first, status: "complete", finish_reason: "tool_calls", tool_calls: [{ id: callId, name: "time__get_current_time", arguments: args }] });
      emit({
        type: "tool_call_proposed",
        call: { call_id: callId, message_id: first.id, wire_name: "time__get_current_time", server: "time", tool: "get_current_time", display_name: "time · Get Current Time", arguments: args, retry_of: retryOf },
      });
      const requestId = `req${++this.#ids}`;
      const answers = await new Promise<ApprovalAnswer[]>((resolve) => {
        this.#approvals.set(requestId, resolve);
        emit({
          type: "approval_required",
          request_id: requestId,
          calls: [{ call_id: callId, server: "time", tool: "get_current_time", display_name: "time · Get Current Time", description: "Current time in a time zone", arguments: '{\n  "timezone": "Europe/Paris"\n}', destructive: false }],
        });
      });
      const allowed = answers[0]?.decision !== "deny";
      const reason = answers[0]?.reason ?? null;
      const denial = `The user denied this call.${reason ? ` Their reason: ${reason}` : ""}`;
      const wantsSignIn = allowed && this.toolWantsSignIn;
      this.toolWantsSignIn = false;
      const failure = wantsSignIn ? "“time” needs more permission than you gave it: sign in to it again" : allowed ? this.toolFailure : null;
      this.toolFailure = null;
      const result = allowed ? (failure ?? '{"datetime": "2026-11-23T12:00:00+01:00"}') : denial;
      const isError = !allowed || failure !== null;
      // Model text, as Rust passes it on: markup in it must stay text.
      const description = allowed && this.settings.describe_calls ? "Looking up the <i>time</i> in Paris" : null;
      // As Rust does: the files a result carries are kept, and travel on its tool message.
      const produced = allowed && !isError ? this.toolFiles.map((f) => this.#keep(f)) : [];
      const openCanvas = produced.length > 0 ? this.toolOpensCanvas : null;
      // As Rust does: a result is written, then shown.
      const record = () => {
        (this.toolRuns[conversationId] ??= []).push({
          id: `tr${++this.#ids}`, conversation_id: conversationId, message_id: first.id, call_id: callId, server: "time", tool: "get_current_time", display_name: "time · Get Current Time", arguments: args,
          decision: allowed ? "allowed" : "denied", decision_scope: "once", deny_reason: allowed ? null : result,
          started_at: allowed ? 1000 : null, finished_at: 1012, is_error: isError, retry_of: retryOf, description,
          can_retry: allowed && isError, rich: false,
        });
        checkShape("tool_run", this.toolRuns[conversationId].at(-1)!);
        save(message({ id: `t${++this.#ids}`, conversation_id: conversationId, role: "tool", content: result, tool_call_id: callId, name: "time__get_current_time", is_error: isError, attachments: produced, created_at: ++this.#clock }));
      };
      if (allowed) {
        emit({ type: "tool_decided", call_id: callId, decision: "allowed", scope: "once", reason: null });
        emit({ type: "tool_started", call_id: callId });
        if (description !== null) emit({ type: "tool_described", call_id: callId, description });
        emit({ type: "tool_progress", call_id: callId, progress: 2, total: 4, message: "Asking the clock <b>twice</b>" });
        if (this.toolGate) await this.toolGate();
        // As Rust: the refusal marks the server at once (before the call's card is told).
        if (wantsSignIn) this.needSignIn("time");
        record();
        emit({ type: "tool_finished", call_id: callId, is_error: isError, content: result, full_length: null, duration_ms: 12, can_retry: isError, rich: false, artifacts: produced, open_canvas: openCanvas });
      } else {
        record();
        emit({ type: "tool_decided", call_id: callId, decision: "denied", scope: "once", reason: denial });
      }
      if (retryOf !== null && isError) {
        // As Rust does: a retry that fails again (or is denied) ends the run; the model is not asked.
        const why = allowed ? `The call failed again, so the model was not asked to go on: ${result}` : "The call did not run, so the model was not asked to go on.";
        emit({ type: "run_finished", reason: "retry_failed", message: why });
        return;
      }
      emit({ type: "status", text: "Reading results…" });
      const second = message({ id: `a${++this.#ids}`, conversation_id: conversationId, role: "assistant", content: "", status: "streaming", model: "gpt-test" });
      saved.push(second);
      emit({ type: "answer_started", message: second });
      const answer = allowed && !isError ? "It is **noon** in Paris. <script>alert(1)</script>" : "I could not look it up.";
      for (const piece of [answer.slice(0, 6), answer.slice(6)]) emit({ type: "text_delta", message_id: second.id, text: piece });
      // As Rust: the answer's tokens are priced at its model's price, and the request recorded
      // before the saved answer is shown.
      const provider = this.#providerOf(conversationId)?.name ?? null;
      const price = provider === null ? null : (this.#modelPrice(provider, "gpt-test")?.price ?? null);
      const cost = price === null ? null : costOf(price, 30, 8);
      if (provider !== null) {
        this.addUsage({ conversation_id: conversationId, message_id: second.id, provider, model: "gpt-test", input_tokens: 30, output_tokens: 8, cost_pico: cost });
      }
      save({ ...second, content: answer, status: "complete", finish_reason: "stop", input_tokens: 30, output_tokens: 8, cost_pico: cost });
      emit({ type: "run_finished", reason: "completed", message: null });
    })();
    return runId;
  }

  /**
   * A comparison as Rust's start_comparison plays it: the models checked first (two to four, each
   * once, of providers that exist), the question written once, then each model's run in a lane
   * of its own (its events wrapped in `lane`; `compareScript` says what each does), and once all
   * have ended their answers folded in as branches after the question: the first in order that
   * answered is shown, and its model becomes the conversation's.
   */
  #compare(args: Record<string, unknown>): string {
    const conversationId = String(args.conversationId);
    const conversation = this.#conversation(conversationId);
    const refuse = (message: string) => ({ kind: "invalid_input", field: "models", message });
    const asked = (args.models as { provider: string; model: string | null }[] | undefined) ?? [];
    if (asked.length < 2 || asked.length > 4) throw refuse("Compare two to four models.");
    if (this.#feeds.has(conversationId)) throw { kind: "conflict", message: "This conversation is answering already: stop it first." };
    const models: { provider: string; model: string }[] = [];
    for (const m of asked) {
      const provider = this.providers.find((p) => p.name === m.provider);
      if (!provider) throw refuse(`There is no provider named “${m.provider}”.`);
      const model = m.model ?? provider.default_model ?? this.modelLists[provider.name]?.[0]?.id ?? null;
      if (model === null) throw refuse(`“${provider.name}” names no default model: pick one of its models.`);
      if (models.some((x) => x.provider.toLowerCase() === provider.name.toLowerCase() && x.model === model)) {
        throw refuse("Each model can be asked once in a comparison.");
      }
      models.push({ provider: provider.name, model });
    }
    const files = this.#filesOf(conversationId, args.attachments as AttachmentRef[] | undefined);
    const text = String(args.text ?? "");
    if (text.trim() === "" && files.length === 0) throw { kind: "invalid_input", field: "text", message: "Write a message or attach a file." };

    const runId = `run${++this.#ids}`;
    const emit = this.#openFeed(conversationId, runId, args.onEvent as FakeChannel);
    const saved = this.messages[conversationId];
    const lanes = models.map((m, lane) => {
      let stop: () => void = () => {};
      const stopped = new Promise<"stopped">((resolve) => (stop = () => resolve("stopped")));
      const laneRun = `run${++this.#ids}`;
      this.#stops.set(laneRun, stop);
      return { ...m, lane, runId: laneRun, stop, stopped, tail: [] as Message[], runs: [] as ToolRun[] };
    });
    this.#stops.set(runId, () => lanes.forEach((l) => l.stop()));
    this.comparisons.push({ runId, lanes: lanes.map((l) => l.runId) });

    const runLane = async (l: (typeof lanes)[number]): Promise<StopReason> => {
      const hidden = `${conversationId}~lane${l.lane}`;
      const send = (event: RunEvent) => emit({ type: "lane", lane: l.lane, provider: l.provider, model: l.model, event });
      const save = (m: Message) => {
        const at = l.tail.findIndex((x) => x.id === m.id);
        if (at >= 0) l.tail[at] = m;
        else l.tail.push(m);
        send({ type: "message_saved", message: m });
      };
      const answer = () => message({ id: `a${++this.#ids}`, conversation_id: hidden, role: "assistant", content: "", status: "streaming", provider: l.provider, model: l.model, created_at: ++this.#clock });
      const end = (reason: StopReason, why: string | null = null): StopReason => {
        send({ type: "run_finished", reason, message: why });
        this.#stops.delete(l.runId);
        return reason;
      };
      const script = this.compareScript(l.lane);
      send({ type: "run_started", run_id: l.runId, conversation_id: hidden });
      send({ type: "status", text: "Thinking…" });
      if (script.fail !== undefined) {
        send({ type: "error", message: script.fail, retryable: true });
        return end("error");
      }
      if (script.tool) {
        const first = answer();
        l.tail.push(first);
        send({ type: "answer_started", message: first });
        const callId = "call_1";
        const callArgs = '{"timezone":"Europe/Paris"}';
        save({ ...first, status: "complete", finish_reason: "tool_calls", tool_calls: [{ id: callId, name: "time__get_current_time", arguments: callArgs }] });
        send({
          type: "tool_call_proposed",
          call: { call_id: callId, message_id: first.id, wire_name: "time__get_current_time", server: "time", tool: "get_current_time", display_name: "time · Get Current Time", arguments: callArgs, retry_of: null },
        });
        const requestId = `req${++this.#ids}`;
        const answers = await Promise.race([
          l.stopped,
          new Promise<ApprovalAnswer[]>((resolve) => {
            this.#approvals.set(requestId, resolve);
            send({
              type: "approval_required",
              request_id: requestId,
              calls: [{ call_id: callId, server: "time", tool: "get_current_time", display_name: "time · Get Current Time", description: "Current time in a time zone", arguments: '{\n  "timezone": "Europe/Paris"\n}', destructive: false }],
            });
          }),
        ]);
        if (answers === "stopped") {
          this.#approvals.delete(requestId);
          return end("cancelled");
        }
        const allowed = answers[0]?.decision !== "deny";
        const result = allowed ? '{"datetime": "2026-11-23T12:00:00+01:00"}' : "The user denied this call.";
        l.runs.push({
          id: `tr${++this.#ids}`, conversation_id: hidden, message_id: first.id, call_id: callId, server: "time", tool: "get_current_time", display_name: "time · Get Current Time", arguments: callArgs,
          decision: allowed ? "allowed" : "denied", decision_scope: "once", deny_reason: allowed ? null : result,
          started_at: allowed ? 1000 : null, finished_at: 1012, is_error: !allowed, retry_of: null, description: null, can_retry: false, rich: false,
        });
        send({ type: "tool_decided", call_id: callId, decision: allowed ? "allowed" : "denied", scope: "once", reason: allowed ? null : result });
        if (allowed) send({ type: "tool_started", call_id: callId });
        save(message({ id: `t${++this.#ids}`, conversation_id: hidden, role: "tool", content: result, tool_call_id: callId, name: "time__get_current_time", is_error: !allowed, created_at: ++this.#clock }));
        if (allowed) {
          send({ type: "tool_finished", call_id: callId, is_error: false, content: result, full_length: null, duration_ms: 12, can_retry: false, rich: false, artifacts: [], open_canvas: null });
        }
        send({ type: "status", text: "Reading results…" });
      }
      const last = answer();
      l.tail.push(last);
      send({ type: "answer_started", message: last });
      const [head, ...rest] = script.pieces;
      send({ type: "text_delta", message_id: last.id, text: head });
      if ((await Promise.race([l.stopped, this.laneGate?.(l.lane) ?? Promise.resolve()])) === "stopped") {
        save({ ...last, content: head, status: "interrupted", finish_reason: "stopped" });
        return end("cancelled");
      }
      for (const piece of rest) send({ type: "text_delta", message_id: last.id, text: piece });
      save({ ...last, content: script.pieces.join(""), status: "complete", finish_reason: "stop", input_tokens: 20, output_tokens: 9 });
      return end("completed");
    };

    void (async () => {
      await Promise.resolve();
      emit({ type: "run_started", run_id: runId, conversation_id: conversationId });
      const question = { ...message({ id: `u${++this.#ids}`, conversation_id: conversationId, role: "user", content: text, created_at: ++this.#clock }), attachments: files };
      saved.push(question);
      emit({ type: "message_saved", message: question });
      const reasons = await Promise.all(lanes.map(runLane));
      this.#stops.delete(runId);
      // As Rust's fold_lanes: lanes that wrote nothing leave no branch.
      const answered = (r: StopReason) => r === "completed" || r === "max_rounds";
      const shownLane = Math.max(reasons.findIndex(answered), 0);
      const kept = lanes.filter((l) => l.tail.length > 0);
      const shown = Math.max(kept.findIndex((l) => l.lane === shownLane), 0);
      const at = saved.length;
      const tails = kept.map((l) => l.tail.map((m) => ({ ...m, conversation_id: conversationId })));
      for (const l of kept) (this.toolRuns[conversationId] ??= []).push(...l.runs.map((r) => ({ ...r, conversation_id: conversationId })));
      if (tails.length > 0) saved.push(...tails[shown]);
      if (tails.length > 1) {
        (this.branches[conversationId] ??= []).push({
          at,
          shown,
          tails: tails.map((t, i) => (i === shown ? null : t)),
          picks: kept.map((l) => ({ provider: l.provider, model: l.model })),
        });
      }
      conversation.provider = models[shownLane].provider;
      conversation.model = models[shownLane].model;
      conversation.updated_at = ++this.#clock;
      emit({ type: "comparison_folded", message_id: saved[at]?.id ?? null });
      const stoppedAll = reasons.every((r) => r === "cancelled");
      emit({ type: "run_finished", reason: reasons.some(answered) ? "completed" : stoppedAll ? "cancelled" : (reasons[0] ?? "error"), message: null });
    })();
    return runId;
  }

  callsTo(cmd: string): Call[] {
    return this.calls.filter((call) => call.cmd === cmd);
  }

  addConversation(title: string, systemPrompt = ""): Conversation {
    const now = ++this.#clock;
    const conversation: Conversation = {
      id: `c${++this.#ids}`,
      title,
      created_at: now,
      updated_at: now,
      provider: null,
      model: null,
      auto_approve: false,
      system_prompt: systemPrompt,
      profile_id: null,
    };
    this.conversations.push(conversation);
    this.messages[conversation.id] = [];
    this.toolSwitches[conversation.id] = new Map(this.defaultSwitches);
    return conversation;
  }

  /** A profile named `name` (Settings' model and limits, every tool on, unless `fields` says otherwise). */
  addProfile(name: string, fields: Partial<ProfileFields> = {}, isDefault = false): Profile {
    const now = ++this.#clock;
    const profile: Profile = { id: `pr${++this.#ids}`, name, is_default: false, created_at: now, updated_at: now, ...emptyProfileFields(), ...fields };
    if (isDefault) for (const p of this.profiles) p.is_default = false;
    profile.is_default = isDefault;
    this.profiles.push(profile);
    return profile;
  }

  /** As Rust's `profile`: by id, else by name (any case); else not found. */
  #profile(key: unknown): Profile {
    const text = String(key ?? "").trim();
    const found = this.profiles.find((p) => p.id === text) ?? this.profiles.find((p) => p.name.toLowerCase() === text.toLowerCase());
    if (!found) throw { kind: "not_found", message: `Not found: profile “${text}”` };
    return found;
  }

  /** As Rust's `checked`: a profile's name and fields as kept, or the first field at fault. */
  #checkedProfile(rawName: unknown, raw: unknown): { name: string; fields: ProfileFields } {
    const oneLine = (text: unknown) => String(text ?? "").split(/\s+/).filter(Boolean).join(" ");
    const name = oneLine(rawName);
    if (name === "") throw { kind: "invalid_input", field: "name", message: "Name the profile." };
    if ([...name].length > 60) throw { kind: "invalid_input", field: "name", message: "Keep the name to 60 characters or fewer." };
    const given = { ...emptyProfileFields(), ...(raw as Partial<ProfileFields>) };
    const prompt = String(given.system_prompt ?? "").trimEnd();
    if ([...prompt].length > 32_000) {
      throw { kind: "invalid_input", field: "system_prompt", message: "A system prompt can be at most 32000 characters long." };
    }
    const providerName = (given.provider ?? "").trim();
    const provider = providerName === "" ? null : this.#provider(providerName).name;
    const model = oneLine(given.model) || null;
    if (model !== null && provider === null) throw { kind: "invalid_input", field: "provider", message: "Choose the model's provider too." };
    const limit = (field: string, label: string, value: number | null, min: number, max: number) => {
      if (value === null || value === undefined) return null;
      if (!Number.isInteger(value) || value < min || value > max) throw { kind: "invalid_input", field, message: `${label} must be between ${min} and ${max}` };
      return value;
    };
    const tools: ToolToggle[] = [];
    for (const t of given.tools ?? []) {
      const server = String(t.server ?? "").trim();
      if (server === "") throw { kind: "invalid_input", field: "tools", message: "A tool switch names no server." };
      const tool = t.tool === null || t.tool === undefined || t.tool.trim() === "" ? null : t.tool.trim();
      const at = tools.findIndex((k) => k.server.toLowerCase() === server.toLowerCase() && k.tool === tool);
      if (at >= 0) tools.splice(at, 1);
      tools.push({ server, tool, enabled: Boolean(t.enabled) });
    }
    return {
      name,
      fields: {
        system_prompt: prompt.trim() === "" ? "" : prompt,
        provider,
        model,
        max_rounds: limit("max_rounds", "Max rounds", given.max_rounds, 1, 100),
        tool_timeout_secs: limit("tool_timeout_secs", "Tool timeout (seconds)", given.tool_timeout_secs, 1, 3600),
        run_time_limit_secs: limit("run_time_limit_secs", "Run time limit (seconds)", given.run_time_limit_secs, 10, 86_400),
        tools,
      },
    };
  }

  /** A taken name (any case) among the profiles other than `except`: a conflict on "name". */
  #claimProfileName(name: string, except: string | null = null): void {
    if (this.profiles.some((p) => p.id !== except && p.name.toLowerCase() === name.toLowerCase())) {
      throw { kind: "conflict", field: "name", message: `A profile named “${name}” exists already.` };
    }
  }

  /** As Rust's free_name: `name`, else with " (2)", " (3)"… until no profile has it (any case). */
  #freeProfileName(name: string): string {
    const taken = (n: string) => this.profiles.some((p) => p.name.toLowerCase() === n.toLowerCase());
    if (!taken(name)) return name;
    for (let n = 2; ; n++) if (!taken(`${name} (${n})`)) return `${name} (${n})`;
  }

  /** As Rust's apply: the conversation follows `profile`, told its prompt, asking its model (when it names a provider), with its switches. */
  #applyProfile(conversation: Conversation, profile: Profile): void {
    conversation.profile_id = profile.id;
    conversation.system_prompt = profile.system_prompt;
    if (profile.provider !== null) {
      conversation.provider = profile.provider;
      conversation.model = profile.model;
    }
    this.toolSwitches[conversation.id] = new Map(profile.tools.map((t) => [t.tool === null ? t.server : `${t.server}/${t.tool}`, t.enabled]));
  }

  /** Questions and answers, one after the other, in `conversationId` (`texts[0]` a question). */
  addMessages(conversationId: string, texts: string[]): void {
    const saved = this.messages[conversationId];
    texts.forEach((text, i) => {
      saved.push({
        id: `m${++this.#ids}`, conversation_id: conversationId, role: i % 2 === 0 ? "user" : "assistant", content: text,
        created_at: ++this.#clock, tool_calls: null, tool_call_id: null, name: null, finish_reason: i % 2 === 0 ? null : "stop",
        status: "complete", provider: null, model: null, input_tokens: null, output_tokens: null, reasoning: null, error: null,
        is_error: false, full_length: null, attachments: [], cost_pico: null,
      });
    });
  }

  /** As Rust's switch: the tail shown at `point` is kept, and branch `position`'s is shown. */
  #showBranch(id: string, point: FakeBackend["branches"][string][number], position: number): void {
    if (position === point.shown) return;
    point.tails[point.shown] = this.messages[id].splice(point.at);
    this.messages[id].push(...(point.tails[position] ?? []));
    point.tails[position] = null;
    point.shown = position;
  }

  /** Keeps a tool's file with its bytes, as Rust keeps the files a result carries. */
  #keep(tool: ToolFile): Attachment {
    this.keptFiles.set(tool.file.sha256, tool.file);
    this.fileBytes.set(tool.file.sha256, tool.data);
    return { ...tool.file };
  }

  /**
   * A finished call of `tool` (its name as the model called it) in `conversationId` whose result
   * carried `files`, saved as Rust saves one: an answer with the call, its record, and the tool
   * message that carries the files. Returns that tool message's id.
   */
  addToolFiles(conversationId: string, files: ToolFile[], tool = "files__make"): string {
    const saved = this.messages[conversationId];
    const answerId = `a${++this.#ids}`;
    const callId = `call_${++this.#ids}`;
    saved.push(message({ id: answerId, conversation_id: conversationId, role: "assistant", content: "", created_at: ++this.#clock, finish_reason: "tool_calls", tool_calls: [{ id: callId, name: tool, arguments: "{}" }] }));
    (this.toolRuns[conversationId] ??= []).push({
      id: `tr${++this.#ids}`, conversation_id: conversationId, message_id: answerId, call_id: callId, server: tool.split("__")[0], tool: tool.split("__")[1] ?? tool,
      display_name: tool, arguments: "{}", decision: "allowed", decision_scope: "once", deny_reason: null, started_at: 1000, finished_at: 1010,
      is_error: false, retry_of: null, description: null, can_retry: false, rich: false,
    });
    const toolMessageId = `t${++this.#ids}`;
    saved.push(message({ id: toolMessageId, conversation_id: conversationId, role: "tool", content: "Made the files.", created_at: ++this.#clock, tool_call_id: callId, name: tool, attachments: files.map((f) => this.#keep(f)) }));
    return toolMessageId;
  }

  /**
   * A finished call of `tool` in `conversationId` whose result returned `links` (resource links,
   * read only on demand), saved as Rust saves one. Returns the answer's and the call's ids.
   */
  addToolLinks(conversationId: string, links: Extract<ResultPart, { kind: "link" }>[], tool = "docs__find"): { messageId: string; callId: string } {
    const saved = this.messages[conversationId];
    const messageId = `a${++this.#ids}`;
    const callId = `call_${++this.#ids}`;
    saved.push(message({ id: messageId, conversation_id: conversationId, role: "assistant", content: "", created_at: ++this.#clock, finish_reason: "tool_calls", tool_calls: [{ id: callId, name: tool, arguments: "{}" }] }));
    (this.toolRuns[conversationId] ??= []).push({
      id: `tr${++this.#ids}`, conversation_id: conversationId, message_id: messageId, call_id: callId, server: tool.split("__")[0], tool: tool.split("__")[1] ?? tool,
      display_name: tool, arguments: "{}", decision: "allowed", decision_scope: "once", deny_reason: null, started_at: 1000, finished_at: 1010,
      is_error: false, retry_of: null, description: null, can_retry: false, rich: true,
    });
    saved.push(message({ id: `t${++this.#ids}`, conversation_id: conversationId, role: "tool", content: "Found these.", created_at: ++this.#clock, tool_call_id: callId, name: tool }));
    this.resultViews[`${messageId}/${callId}`] = { parts: links.map((l) => ({ ...l })), structured: null };
    return { messageId, callId };
  }

  /**
   * A finished call of `tool` (the model's name for it, "server__tool") with `args` in
   * `conversationId`, saved as Rust saves one, its result what the server's tool answers (a tool
   * of appServerTools) or "Done." Returns the answer's and the call's ids.
   */
  addToolApp(conversationId: string, tool = "charts__show_chart", args: Record<string, unknown> = { city: "Paris" }): { messageId: string; callId: string } {
    const saved = this.messages[conversationId];
    const [server, name = tool] = tool.split("__");
    this.runServer(server);
    const messageId = `a${++this.#ids}`;
    const callId = `call_${++this.#ids}`;
    const json = JSON.stringify(args);
    saved.push(message({ id: messageId, conversation_id: conversationId, role: "assistant", content: "", created_at: ++this.#clock, finish_reason: "tool_calls", tool_calls: [{ id: callId, name: tool, arguments: json }] }));
    (this.toolRuns[conversationId] ??= []).push({
      id: `tr${++this.#ids}`, conversation_id: conversationId, message_id: messageId, call_id: callId, server, tool: name,
      display_name: `${server} · ${name}`, arguments: json, decision: "allowed", decision_scope: "once", deny_reason: null, started_at: 1000, finished_at: 1010,
      is_error: false, retry_of: null, description: null, can_retry: false, rich: false,
    });
    const answered = this.appServerTools[server]?.[name]?.(args) as { content?: { text?: string }[] } | undefined;
    const text = answered?.content?.[0]?.text ?? "Done.";
    saved.push(message({ id: `t${++this.#ids}`, conversation_id: conversationId, role: "tool", content: text, created_at: ++this.#clock, tool_call_id: callId, name: tool }));
    return { messageId, callId };
  }

  /**
   * `server` running, as Rust's list shows it: its tools with an app (appTools) named in its
   * state, so the window's tool cards ask for those apps. Added to the list if it is not there.
   */
  runServer(server: string): void {
    const apps = Object.keys(this.appTools)
      .filter((key) => key.startsWith(`${server}/`))
      .map((key) => key.slice(server.length + 1));
    const state = { state: "running" as const, pid: null, tools: apps.length || 1, apps };
    const known = this.mcpServers.find((s) => s.name === server);
    if (known) known.state = state;
    else {
      this.mcpServers = [
        ...this.mcpServers,
        {
          name: server, transport: "stdio", command_line: `uvx ${server}`, edit_text: `uvx ${server}`, roots: [], disabled: false,
          approved: true, error: null, state, resolved: null, log_file: `/logs/mcp/${server}.log`, held_back: [],
        },
      ];
    }
    this.pushServers();
  }

  /** The call `callId` of the answer `messageId` in conversation `id`, as Rust finds it (else not found). */
  #toolRun(id: unknown, messageId: unknown, callId: unknown): ToolRun {
    const run = (this.toolRuns[String(id)] ?? []).find((r) => r.message_id === messageId && r.call_id === callId);
    if (!run) throw { kind: "not_found", message: `Not found: tool call ${String(callId)}` };
    return run;
  }

  /** The provider a conversation chats with: its own, else Settings', else the first. */
  #providerOf(conversationId: unknown): Provider | undefined {
    const conversation = this.#conversation(conversationId);
    return this.providers.find((p) => p.name === (conversation.provider ?? this.settings.default_provider)) ?? this.providers[0];
  }

  /** The provider and model a conversation chats with, as "provider/model" (its own, else Settings', else the first provider's default); null when none is named. */
  #modelOf(conversationId: unknown): string | null {
    const conversation = this.#conversation(conversationId);
    const provider = this.#providerOf(conversationId);
    if (!provider) return null;
    const model =
      conversation.model ??
      (provider.name === this.settings.default_provider ? this.settings.default_model : null) ??
      provider.default_model ??
      this.modelLists[provider.name]?.[0]?.id ??
      null;
    return model === null ? null : `${provider.name}/${model}`;
  }

  /** Whether the model of `conversationId` takes images: the person's word, else `modelTakesImages`. */
  #takesImages(conversationId: unknown): boolean {
    const model = this.#modelOf(conversationId);
    return (model === null ? undefined : this.imageWords.get(model)) ?? this.modelTakesImages;
  }

  /** As Rust judges the files a message names: each must be kept, and images need a model that takes them. */
  #filesOf(conversationId: unknown, refs: AttachmentRef[] | undefined): Attachment[] {
    const files = (refs ?? []).map((ref) => {
      const kept = this.keptFiles.get(ref.sha256);
      if (!kept) throw { kind: "invalid_input", field: "attachments", message: `“${ref.name}” is no longer there to send; attach it again.` };
      return { ...kept, name: ref.name };
    });
    if (!this.#takesImages(conversationId) && files.some((f) => f.kind === "image")) {
      throw { kind: "invalid_input", field: "attachments", message: "“gpt-test” is not known to take images, so the image was not sent." };
    }
    return files;
  }

  /** As Rust's artifacts: the files the conversation's tool messages carry, oldest first. */
  #artifacts(conversationId: unknown): ConversationArtifact[] {
    this.#conversation(conversationId);
    return (this.messages[String(conversationId)] ?? []).flatMap((m) =>
      m.role === "tool"
        ? m.attachments.map((file) => ({ file: { ...file }, message_id: m.id, call_id: m.tool_call_id ?? "", tool: m.name ?? "", created_at: m.created_at }))
        : [],
    );
  }

  /** One of the conversation's artifacts, as Rust finds it (else not found). */
  #artifact(conversationId: unknown, sha256: unknown): Attachment {
    const found = this.#artifacts(conversationId).find((a) => a.file.sha256 === sha256);
    if (!found) throw { kind: "not_found", message: "Not found: that file among this conversation's tool results" };
    return found.file;
  }

  addProviderRecord(
    name: string,
    kind: Provider["kind"] = "openai",
    has_key = true,
    fields: Partial<Pick<Provider, "base_url" | "default_model">> = {},
  ): Provider {
    const info = KINDS.find((k) => k.kind === kind) ?? KINDS[0];
    const provider: Provider = {
      id: `p${++this.#ids}`,
      name,
      kind,
      base_url: info.default_base_url,
      default_model: null,
      has_key,
      created_at: ++this.#clock,
      ...fields,
    };
    this.providers.push(provider);
    return provider;
  }

  /** A price for `model` of `provider`: the person's (`said_by` "person") or its list's. */
  setPrice(provider: string, model: string, price: Price | null, saidBy: PriceSource = "person"): void {
    const key = `${provider}\u0000${model}`;
    const entry = this.#prices.get(key) ?? { provider, model, said: null, listed: null };
    if (saidBy === "person") entry.said = price;
    else entry.listed = price;
    this.#prices.set(key, entry);
  }

  /** The price that counts for `model` of `provider`, as Rust's model_price: the person's, else the list's. */
  #modelPrice(provider: string, model: string): ModelPrice | null {
    const entry = this.#prices.get(`${provider}\u0000${model}`);
    if (entry?.said) return { provider, model, price: { ...entry.said }, said_by: "person" };
    if (entry?.listed) return { provider, model, price: { ...entry.listed }, said_by: "provider" };
    return null;
  }

  /** As Rust's remember_listing: what a model list says of its models' prices is kept. */
  #rememberListing(provider: string, listed: ModelInfo[]): void {
    for (const m of listed) if (m.price) this.setPrice(provider, m.id, m.price, "provider");
  }

  /** A request a model answered (now, in no conversation, unpriced, unless `row` says otherwise). */
  addUsage(row: Partial<UsageRecord> & Pick<UsageRecord, "provider" | "model">): UsageRecord {
    const record: UsageRecord = {
      at: Date.now(),
      conversation_id: null,
      message_id: null,
      purpose: "answer",
      input_tokens: 0,
      output_tokens: 0,
      cost_pico: null,
      ...row,
    };
    this.usage.push(record);
    return record;
  }

  #sorted(): Conversation[] {
    return [...this.conversations].sort((a, b) => b.updated_at - a.updated_at);
  }

  #conversation(id: unknown): Conversation {
    const found = this.conversations.find((c) => c.id === id);
    if (!found) throw { kind: "not_found", message: "No such conversation." };
    return found;
  }

  #provider(name: unknown): Provider {
    const found = this.providers.find((p) => p.name === name);
    if (!found) throw { kind: "not_found", message: `No provider named ${String(name)}.` };
    return found;
  }

  #mcpServer(name: unknown): McpServerStatus {
    const found = this.mcpServers.find((s) => s.name === name);
    if (!found) throw { kind: "not_found", message: `Not found: server “${String(name)}”` };
    return found;
  }

  /** A simplified `ImportPreview`: `mcpServers` entries with a `command` are added, others invalid. */
  #importPreview(text: unknown): ImportPreview {
    const source = typeof text === "string" ? text : this.claudeConfig;
    if (source === null) throw { kind: "not_found", message: "Not found: Claude Desktop's settings (/home/me/.config/Claude/claude_desktop_config.json)" };
    let doc: { mcpServers?: Record<string, { command?: string; args?: string[] }> };
    try {
      doc = JSON.parse(source);
    } catch {
      throw { kind: "mcp_config", message: "the pasted text, line 1: not JSON" };
    }
    const preview: ImportPreview = { added: [], conflicts: [], invalid: [], warnings: [] };
    for (const [name, entry] of Object.entries(doc.mcpServers ?? {})) {
      const detail = [entry.command, ...(entry.args ?? [])].join(" ");
      if (!entry.command) preview.invalid.push({ name, detail: "neither command nor url" });
      else if (this.mcpServers.some((s) => s.name === name)) preview.conflicts.push({ name, detail });
      else preview.added.push({ name, detail });
    }
    return preview;
  }

  /** A server added unapproved, then Rust's native dialog, answered with `approvalAnswer`. */
  #addServer(name: string, commandLine: string | null, url: string | null): McpServerView {
    if (this.mcpServers.some((s) => s.name === name)) {
      throw { kind: "conflict", message: `A server named “${name}” already exists.`, field: "name" };
    }
    const server: McpServerStatus = {
      name,
      transport: url ? "http" : "stdio",
      command_line: url ? `streamable HTTP ${url}` : commandLine,
      edit_text: url ?? commandLine,
      roots: [],
      disabled: false,
      approved: this.approvalAnswer,
      error: null,
      state: this.approvalAnswer ? { state: "starting" } : null,
      resolved: null,
      log_file: `/logs/mcp/${name}.log`, held_back: [],
    };
    this.mcpServers = [...this.mcpServers, server];
    return this.#mcpView(server);
  }

  #mcpView(server: McpServerStatus): McpServerView {
    const { state: _state, log_file: _log, resolved: _resolved, ...view } = server;
    return { ...view };
  }

  /** What reaching a provider gives: its sorted models, or how it fails. */
  #reach(name: unknown): { ok: true; models: ModelInfo[] } | { ok: false; failure: ProviderFailure } {
    const provider = this.#provider(name);
    const failure = this.providerFailures.get(provider.name);
    if (failure) return { ok: false, failure };
    const info = KINDS.find((k) => k.kind === provider.kind);
    if (info?.needs_key && !provider.has_key) {
      return { ok: false, failure: { error_kind: "no_key", message: `No API key is stored for ${provider.name}.` } };
    }
    const list = [...(this.modelLists[provider.name] ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { ok: true, models: list };
  }

  #handlers: Record<string, Handler> = {
    app_status: () => this.status,
    keychain_status: () => this.keychain,
    list_conversations: () => this.#sorted().map((c) => ({ ...c })),
    create_conversation: (args) => {
      const title = typeof args.title === "string" ? args.title : "New conversation";
      // As Rust: absent is the default profile, if any; "none" is Settings' prompt and switches.
      const choice = (args.profile as ProfileChoice | undefined) ?? { kind: "default" };
      const profile =
        choice.kind === "named" ? this.#profile(choice.id) : choice.kind === "default" ? this.profiles.find((p) => p.is_default) : undefined;
      const conversation = this.addConversation(title, this.settings.default_system_prompt);
      if (profile) this.#applyProfile(conversation, profile);
      return { ...conversation };
    },
    list_profiles: () =>
      [...this.profiles]
        .sort((a, b) => byText(a.name.toLowerCase(), b.name.toLowerCase()))
        .map((p) => structuredClone(p)),
    create_profile: (args) => {
      const { name, fields } = this.#checkedProfile(args.name, args.fields);
      this.#claimProfileName(name);
      return structuredClone(this.addProfile(name, fields));
    },
    update_profile: (args) => {
      const profile = this.#profile(args.id);
      const { name, fields } = this.#checkedProfile(args.name, args.fields);
      this.#claimProfileName(name, profile.id);
      Object.assign(profile, fields, { name, updated_at: ++this.#clock });
      return structuredClone(profile);
    },
    duplicate_profile: (args) => {
      const original = this.#profile(args.id);
      const { id: _id, name: _name, is_default: _default, created_at: _created, updated_at: _updated, ...fields } = structuredClone(original);
      return structuredClone(this.addProfile(this.#freeProfileName(`${original.name} (copy)`), fields));
    },
    delete_profile: (args) => {
      const profile = this.#profile(args.id);
      this.profiles = this.profiles.filter((p) => p.id !== profile.id);
      for (const c of this.conversations) if (c.profile_id === profile.id) c.profile_id = null;
      return null;
    },
    set_default_profile: (args) => {
      const id = args.id === null || args.id === undefined ? null : this.#profile(args.id).id;
      for (const p of this.profiles) p.is_default = p.id === id;
      return null;
    },
    export_profile: (args) => {
      const profile = this.#profile(args.id);
      // Rust's Save As dialog, answered with `saveAs`.
      return this.saveAs === null ? null : `${this.saveAs}/${profile.name}.json`;
    },
    import_profile: () => {
      // Rust's Open dialog, answered with `profileToImport`.
      const file = this.profileToImport;
      if (file === null) return null;
      const notes: string[] = [];
      const fields = { ...emptyProfileFields(), ...structuredClone(file.fields) };
      if (fields.provider && !this.providers.some((p) => p.name === fields.provider?.trim())) {
        notes.push(`There is no provider “${fields.provider}” here, so the profile uses Settings' default model.`);
        fields.provider = null;
        fields.model = null;
      }
      const checked = this.#checkedProfile(file.name, fields);
      const free = this.#freeProfileName(checked.name);
      if (free !== checked.name) notes.push(`A profile named “${checked.name}” exists; this one is “${free}”.`);
      return { profile: structuredClone(this.addProfile(free, checked.fields)), notes };
    },
    set_conversation_profile: (args) => {
      const conversation = this.#conversation(args.conversationId);
      if (args.profileId === null || args.profileId === undefined) conversation.profile_id = null;
      else this.#applyProfile(conversation, this.#profile(args.profileId));
      return { ...conversation };
    },
    set_system_prompt: (args) => {
      const conversation = this.#conversation(args.id);
      const text = String(args.systemPrompt).trimEnd();
      if (text.length > 32_000) {
        throw { kind: "invalid_input", message: "A system prompt can be at most 32000 characters long.", field: "system_prompt" };
      }
      conversation.system_prompt = text.trim() === "" ? "" : text;
      return { ...conversation };
    },
    rename_conversation: (args) => {
      const conversation = this.#conversation(args.id);
      const title = String(args.title).trim().slice(0, 200);
      if (title === "") throw { kind: "invalid_input", message: "The title cannot be empty.", field: "title" };
      conversation.title = title;
      conversation.updated_at = ++this.#clock;
      return { ...conversation };
    },
    save_draft: (args) => {
      this.#conversation(args.id);
      const draft = args.draft as Draft;
      const empty = draft.text === "" && draft.attachments.length === 0 && !draft.comparing && draft.compared.length === 0;
      if (empty) delete this.drafts[String(args.id)];
      else this.drafts[String(args.id)] = structuredClone(draft);
      return null;
    },
    delete_conversation: (args) => {
      this.#conversation(args.id);
      this.conversations = this.conversations.filter((c) => c.id !== args.id);
      delete this.drafts[String(args.id)];
      return null;
    },
    get_conversation: (args) => ({
      conversation: { ...this.#conversation(args.id) },
      ...this.#page(String(args.id), null, PAGE),
      draft: this.drafts[String(args.id)] ?? null,
      summaries: [],
      context: null,
    }),
    get_older_messages: (args) => {
      this.#conversation(args.id);
      return this.#page(String(args.id), Number(args.before), typeof args.limit === "number" ? args.limit : PAGE);
    },
    get_message_text: (args) => {
      const found = (this.messages[String(args.id)] ?? []).find((m) => m.id === args.messageId);
      if (!found) throw { kind: "not_found", message: `Not found: message ${String(args.messageId)}` };
      return found.content ?? "";
    },
    // As Rust's search, near enough: every word, case aside; titles first, then messages newest first.
    edit_message: (args) => {
      const id = String(args.conversationId);
      const at = this.#indexOf(id, args.messageId);
      // As Rust: the files are judged before anything changes; an empty text needs a file.
      const files = this.#filesOf(id, args.attachments as AttachmentRef[] | undefined);
      if (String(args.text).trim() === "" && files.length === 0) throw { kind: "invalid_input", field: "text", message: "Write a message or attach a file." };
      this.#branchOff(id, at);
      return this.#scriptedRun(id, String(args.text), args.onEvent as FakeChannel, null, files);
    },
    switch_branch: (args) => {
      const id = String(args.id);
      const at = this.#indexOf(id, args.messageId);
      const point = (this.branches[id] ?? []).find((p) => p.at === at);
      const position = Number(args.position);
      if (!point || position < 0 || position >= point.tails.length) throw { kind: "not_found", message: "Not found: that branch" };
      this.#showBranch(id, point, position);
      // As Rust: at a comparison, the branch picked is its model's, which answers next.
      const pick = point.picks?.[position];
      if (pick) Object.assign(this.#conversation(id), { provider: pick.provider, model: pick.model });
      const first = this.messages[id][at];
      return { point: { message_id: first.id, position, count: point.tails.length, models: (point.picks ?? []).map(labelOf) }, seq: at + 1 };
    },
    reveal_message: (args) => {
      const id = String(args.id);
      const shown = (this.messages[id] ?? []).findIndex((m) => m.id === args.messageId);
      if (shown >= 0) return shown + 1;
      // As Rust: the branch holding it is switched to.
      const point = (this.branches[id] ?? []).find((p) => p.tails.some((tail) => tail?.some((m) => m.id === args.messageId)));
      if (!point) throw { kind: "not_found", message: `Not found: message ${String(args.messageId)}` };
      this.#showBranch(id, point, point.tails.findIndex((tail) => tail?.some((m) => m.id === args.messageId)));
      return this.messages[id].findIndex((m) => m.id === args.messageId) + 1;
    },
    delete_turn: (args) => {
      const all = this.messages[String(args.id)] ?? [];
      const at = all.findIndex((m) => m.id === args.messageId && m.role === "user");
      if (at < 0) throw { kind: "not_found", message: `Not found: question ${String(args.messageId)}` };
      let end = at + 1;
      while (end < all.length && all[end].role !== "user") end++;
      return all.splice(at, end - at).map((m) => m.id);
    },
    search_conversations: (args) => {
      const words = String(args.text).toLowerCase().split(/\s+/).filter(Boolean);
      const has = (text: string) => words.every((w) => text.toLowerCase().includes(w));
      const marked = (text: string) => {
        const at = text.toLowerCase().indexOf(words[0]);
        return at < 0
          ? [{ text, hit: false }]
          : [{ text: text.slice(0, at), hit: false }, { text: text.slice(at, at + words[0].length), hit: true }, { text: text.slice(at + words[0].length), hit: false }].filter((p) => p.text !== "");
      };
      const titles = this.conversations.filter((c) => has(c.title)).map((c) => ({
        conversation_id: c.id, conversation_title: c.title, message_id: null, seq: null, role: null, created_at: c.updated_at, snippet: marked(c.title), other_version: false,
      }));
      const hitsIn = (c: Conversation, messages: Message[], first: number, otherVersion: boolean) =>
        messages.flatMap((m, i) =>
          m.content && has(m.content)
            ? [{ conversation_id: c.id, conversation_title: c.title, message_id: m.id, seq: first + i + 1, role: m.role, created_at: m.created_at, snippet: marked(m.content), other_version: otherVersion }]
            : [],
        );
      // As Rust: the branches not shown are searched too, their hits marked as another version.
      const messages = this.conversations.flatMap((c) => [
        ...hitsIn(c, this.messages[c.id] ?? [], 0, false),
        ...(this.branches[c.id] ?? []).flatMap((p) => p.tails.flatMap((tail) => hitsIn(c, tail ?? [], p.at, true))),
      ]);
      return [...titles, ...messages.sort((a, b) => b.created_at - a.created_at)];
    },
    export_conversation: (args) => {
      const conversation = this.#conversation(args.id);
      return `/home/someone/${conversation.title}.${args.format === "json" ? "json" : "md"}`;
    },
    import_conversation: () => this.addConversation("Imported conversation"),
    get_tool_result_view: (args) => {
      const run = (this.toolRuns[String(args.id)] ?? []).find((r) => r.message_id === args.messageId && r.call_id === args.callId);
      if (!run) throw { kind: "not_found", message: `Not found: tool call ${String(args.callId)}` };
      // The scripted runs' results are text only; a call addToolLinks saved returned links.
      return structuredClone(this.resultViews[`${String(args.messageId)}/${String(args.callId)}`] ?? { parts: [], structured: null });
    },
    prepare_mcp_app: (args): McpAppView | null => {
      // As Rust: the call's tool names a ui:// resource, which its server (running) serves; the
      // view carries the arguments and the result the server sent (as saved).
      const run = this.#toolRun(args.id, args.messageId, args.callId);
      const app = this.appTools[`${run.server}/${run.tool}`];
      if (!app) return null;
      const result = (this.messages[String(args.id)] ?? []).find((m) => m.role === "tool" && m.tool_call_id === run.call_id);
      if (!result) throw { kind: "not_found", message: "Not found: the result of that call" };
      const answered = this.appServerTools[run.server]?.[run.tool]?.(JSON.parse(run.arguments) as Record<string, unknown>);
      return {
        src: `mcp-app://localhost/${run.call_id}-${++this.#ids}`,
        server: run.server,
        tool: run.tool,
        resource_uri: app.resource_uri,
        arguments: JSON.parse(run.arguments) as unknown,
        result: answered ?? { content: [{ type: "text", text: result.content ?? "" }], isError: result.is_error },
        prefers_border: app.prefers_border,
      };
    },
    app_call_tool: (args) => {
      // As Rust: only the app's own server's tools, after the person's approval.
      const run = this.#toolRun(args.id, args.messageId, args.callId);
      if (!this.appTools[`${run.server}/${run.tool}`]) {
        throw { kind: "invalid_input", field: "call", message: "That call's tool has no app." };
      }
      const tool = this.appServerTools[run.server]?.[String(args.tool)];
      if (!tool) throw { kind: "not_found", message: `Not found: tool “${String(args.tool)}” of “${run.server}”` };
      if (!this.appCallAllowed) throw { kind: "not_confirmed", message: `You did not allow the app to call “${String(args.tool)}”.` };
      return tool(args.arguments as Record<string, unknown>);
    },
    open_link: (args) => {
      this.linksAsked.push(String(args.url));
      return this.linkAnswer;
    },
    send_message: (args) => {
      // Rust judges each named file again: one it does not keep, or an image for a model that
      // takes none, refuses the send before anything is saved.
      const files = this.#filesOf(args.conversationId, args.attachments as AttachmentRef[] | undefined);
      return this.#scriptedRun(String(args.conversationId), args.text as string | null, args.onEvent as FakeChannel, null, files);
    },
    choose_attachments: () => {
      // Rust's picker, answered with `picked`.
      for (const file of this.picked.kept) this.keptFiles.set(file.sha256, file);
      return structuredClone(this.picked);
    },
    allow_model_images: (args) => {
      // As Rust: the person's word, for the model the conversation chats with.
      const model = this.#modelOf(args.conversationId);
      if (model === null) this.modelTakesImages = true;
      else this.imageWords.set(model, true);
      return model?.split("/").slice(1).join("/") ?? "gpt-test";
    },
    model_images: (args) => {
      const provider = this.#provider(args.provider);
      return this.imageWords.get(`${provider.name}/${String(args.model)}`) ?? this.modelTakesImages;
    },
    set_model_images: (args) => {
      const provider = this.#provider(args.provider);
      this.imageWords.set(`${provider.name}/${String(args.model)}`, Boolean(args.takes));
      return null;
    },
    attach_pasted: (args) => {
      const data = atob(String(args.data));
      if (!data.startsWith("\x89PNG")) {
        throw { kind: "invalid_input", field: "attachments", message: `“${String(args.name)}” cannot be attached: it looks like binary data.` };
      }
      const file: Attachment = { sha256: "p".repeat(64), name: String(args.name), mime: "image/png", size: data.length, kind: "image" };
      this.keptFiles.set(file.sha256, file);
      return file;
    },
    list_running_offers: () =>
      Object.entries(this.mcpOffers).map(([server, offers]) => ({ server, offers: structuredClone(offers) })),
    attach_resource: (args) => {
      const uri = String(args.uri);
      if (uri.includes("nowhere")) throw { kind: "mcp", message: `“${String(args.server)}” failed: Unknown resource: ${uri}` };
      const file: Attachment = {
        sha256: uri.length.toString(16).padStart(64, "r"),
        name: (args.name as string | null) ?? uri.split("/").pop() ?? "resource",
        mime: "text/plain",
        size: uri.length,
        kind: "text",
      };
      this.keptFiles.set(file.sha256, file);
      return { kept: [file], refused: [] };
    },
    use_prompt: (args) => {
      const given = args.arguments as Record<string, string>;
      if (args.prompt === "args-prompt") {
        if (!given.city) throw { kind: "mcp", message: `“${String(args.server)}” failed: city is required` };
        return { text: `What's weather in ${given.city}?`, attached: { kept: [], refused: [] } };
      }
      return { text: `The ${String(args.prompt)} prompt.`, attached: { kept: [], refused: [] } };
    },
    complete_argument: (args) =>
      ["Engineering", "Sales", "Marketing", "Support"].filter((d) => d.startsWith(String(args.value))),
    list_artifacts: (args) => this.#artifacts(args.conversationId),
    read_tool_link: (args) => {
      // As Rust: the link must be one the call returned; its server reads it, and what it sends
      // is kept as files of the call's tool message.
      const id = String(args.conversationId);
      const uri = String(args.uri);
      const link = this.resultViews[`${String(args.messageId)}/${String(args.callId)}`]?.parts.find((p) => p.kind === "link" && p.uri === uri);
      if (!link) throw { kind: "not_found", message: "Not found: that link among the call's result" };
      const run = (this.toolRuns[id] ?? []).find((r) => r.message_id === args.messageId && r.call_id === args.callId);
      const files = this.linkFiles[uri];
      if (!files) throw { kind: "mcp", message: `“${run?.server ?? "server"}” failed: Unknown resource: ${uri}` };
      const all = this.messages[id] ?? [];
      const result = all.slice(this.#indexOf(id, args.messageId)).find((m) => m.role === "tool" && m.tool_call_id === args.callId);
      if (!result) throw { kind: "not_found", message: "Not found: the result of that call in the conversation shown" };
      const kept = files.map((f) => this.#keep(f));
      const have = new Set(result.attachments.map((f) => f.sha256));
      result.attachments = [...result.attachments, ...kept.filter((f) => !have.has(f.sha256))];
      return kept.map((file) => ({ file, message_id: result.id, call_id: result.tool_call_id ?? "", tool: result.name ?? "", created_at: result.created_at }));
    },
    read_artifact: (args) => {
      const file = this.#artifact(args.conversationId, args.sha256);
      if (file.size > MAX_PREVIEW_BYTES) {
        throw { kind: "invalid_input", field: "artifact", message: `“${file.name}” is ${(file.size / (1024 * 1024)).toFixed(1)} MB: too large to preview; save it instead.` };
      }
      const data = this.fileBytes.get(file.sha256);
      if (data === undefined) throw { kind: "io", message: `Could not read “${file.name}”: it is not in the attachments folder.` };
      return data;
    },
    save_artifact: (args) => {
      const file = this.#artifact(args.conversationId, args.sha256);
      // Rust's Save As dialog, answered with `saveAs`.
      return this.saveAs === null ? null : `${this.saveAs}/${file.name}`;
    },
    watch_dropped_files: (args) => {
      this.#drops = args.onDrop as { onmessage: (event: DropEvent) => void };
      return null;
    },
    retry_tool_call: (args) => {
      const conversationId = String(args.conversationId);
      const run = (this.toolRuns[conversationId] ?? []).find((r) => r.message_id === args.messageId && r.call_id === args.callId);
      if (!run) throw { kind: "not_found", message: `Not found: tool call ${String(args.callId)}` };
      if (!run.is_error) throw { kind: "invalid_input", field: "call", message: "“time · Get Current Time” did not fail; there is nothing to retry." };
      if (run.decision === "denied") throw { kind: "invalid_input", field: "call", message: "“time · Get Current Time” was not allowed to run; ask the model again if you want it to." };
      return this.#scriptedRun(conversationId, null, args.onEvent as FakeChannel, run.retry_of ?? { message_id: run.message_id, call_id: run.call_id });
    },
    answer_approval: (args) => {
      const waiting = this.#approvals.get(String(args.requestId));
      if (!waiting) throw { kind: "not_found", message: "That approval is no longer waiting." };
      const broad = (args.answers as ApprovalAnswer[]).some((a) => a.decision === "allow_conversation" || a.decision === "allow_always");
      if (broad && !this.allowanceAnswer) {
        throw { kind: "not_confirmed", message: "Not done: you did not confirm that these tools may run without asking." };
      }
      this.#approvals.delete(String(args.requestId));
      waiting(args.answers as ApprovalAnswer[]);
      return null;
    },
    stop_run: (args) => {
      this.#stops.get(String(args.runId))?.();
      return null;
    },
    compare_models: (args) => this.#compare(args),
    attach_run: (args) => {
      const feed = this.#feeds.get(String(args.conversationId));
      if (!feed) return null;
      const channel = args.onEvent as FakeChannel;
      for (const event of feed.log) channel.onmessage(event);
      feed.channels.push(channel);
      return feed.runId;
    },
    list_conversation_tools: (args) => {
      this.#conversation(args.conversationId);
      const switches = this.toolSwitches[String(args.conversationId)] ?? new Map<string, boolean>();
      return this.catalogue.map((t) => ({
        ...t,
        // A tool's own switch beats its server's; anything not switched is on.
        enabled: t.held_back || (switches.get(`${t.server}/${t.tool}`) ?? switches.get(t.server) ?? true),
      }));
    },
    suggest_tools: (args) => {
      // Rust matches each file's kind and extension against the switched-off tools' names and
      // descriptions; here, only a file's extension against a tool's name.
      this.#conversation(args.conversationId);
      const switches = this.toolSwitches[String(args.conversationId)] ?? new Map<string, boolean>();
      const files = args.files as AttachmentRef[];
      return this.catalogue.flatMap((t) => {
        const on = t.held_back || (switches.get(`${t.server}/${t.tool}`) ?? switches.get(t.server) ?? true);
        const file = files.find((f) => t.tool.split(/[_-]/).includes(f.name.split(".").pop() ?? ""));
        return on || !file
          ? []
          : [{ server: t.server, tool: t.tool, display_name: t.display_name, why: `${file.name}: its name says “${file.name.split(".").pop()}”` }];
      });
    },
    set_conversation_tool: (args) => {
      this.#conversation(args.conversationId);
      const id = String(args.conversationId);
      const switches = (this.toolSwitches[id] ??= new Map());
      const server = String(args.server);
      if (args.tool === null || args.tool === undefined) {
        for (const key of [...switches.keys()]) if (key.startsWith(`${server}/`)) switches.delete(key);
        switches.set(server, Boolean(args.enabled));
      } else {
        switches.set(`${server}/${String(args.tool)}`, Boolean(args.enabled));
      }
      return null;
    },
    set_default_tools: (args) => {
      this.#conversation(args.conversationId);
      this.defaultSwitches = new Map(this.toolSwitches[String(args.conversationId)] ?? []);
      return null;
    },
    list_tool_approvals: () => [...this.standingApprovals],
    allow_tool_always: (args) => {
      const [server, tool] = [String(args.server), String(args.tool)];
      const listed = this.mcpTools[server]?.find((t) => t.tool === tool && t.offered);
      if (!listed) throw { kind: "not_found", message: `Not found: a tool “${tool}” that “${server}” offers now.` };
      // Rust's native dialog, answered with `allowanceAnswer`.
      if (!this.allowanceAnswer) throw { kind: "not_confirmed", message: "Not done: you did not confirm that this tool may run without asking." };
      this.standingApprovals = [
        { server, tool, display_name: listed.display_name, conversation_id: null, conversation_title: null, created_at: this.#clock++ },
        ...this.standingApprovals,
      ];
      return null;
    },
    revoke_tool_approval: (args) => {
      const before = this.standingApprovals.length;
      this.standingApprovals = this.standingApprovals.filter(
        (a) => !(a.server === args.server && a.tool === args.tool && a.conversation_id === (args.conversationId ?? null)),
      );
      if (this.standingApprovals.length === before) throw { kind: "not_found", message: "That approval is already gone." };
      return null;
    },
    set_auto_approve: (args) => {
      const conversation = this.#conversation(args.conversationId);
      if (args.on && !this.allowanceAnswer) {
        throw { kind: "not_confirmed", message: "Not done: you did not confirm that every tool may run without asking in this conversation." };
      }
      conversation.auto_approve = Boolean(args.on);
      return null;
    },
    set_conversation_model: (args) => {
      const conversation = this.#conversation(args.id);
      const provider = args.provider ?? null;
      const model = args.model ?? null;
      if (provider !== null) this.#provider(provider);
      if (provider === null && model !== null) {
        throw { kind: "invalid_input", message: "Choose a provider for this model.", field: "provider" };
      }
      conversation.provider = provider as string | null;
      conversation.model = model as string | null;
      return { ...conversation };
    },
    list_provider_kinds: () => KINDS,
    list_provider_presets: () => PRESETS,
    test_provider: (args): ConnectionReport => {
      const reached = this.#reach(args.name);
      if (!reached.ok) {
        return { ok: false, elapsed_ms: 40, models: [], ...reached.failure };
      }
      this.#rememberListing(String(args.name), reached.models);
      const count = reached.models.length;
      return {
        ok: true,
        elapsed_ms: this.connectionMs,
        models: reached.models,
        error_kind: null,
        message: `Connected in ${this.connectionMs} ms: ${count} ${count === 1 ? "model" : "models"}.`,
      };
    },
    list_models: (args) => {
      const reached = this.#reach(args.name);
      if (!reached.ok) throw { kind: "provider", message: reached.failure.message };
      this.#rememberListing(String(args.name), reached.models);
      return reached.models;
    },
    detect_local_providers: () => this.localServers.map((server) => ({ ...server, models: [...server.models] })),
    list_providers: () => this.providers.map((p) => ({ ...p })),
    list_mcp_servers: () => this.mcpServers.map((s) => ({ ...s })),
    watch_mcp_servers: (args) => {
      this.#serverWatch = args.onChange as { onmessage: (servers: McpServerStatus[]) => void };
      this.pushServers();
      return null;
    },
    watch_mcp_forms: (args) => {
      this.#forms = args.onForm as { onmessage: (form: McpForm) => void };
      this.#closedForms = args.onClosed as { onmessage: (id: string) => void };
      return null;
    },
    answer_mcp_form: (args) => {
      const answer = args.answer as McpFormAnswer;
      const refusal = answer.action === "accept" ? this.formRefusal(answer.content) : null;
      if (refusal) throw { kind: "invalid_input", message: refusal, field: "form" };
      this.formAnswers.push({ id: String(args.id), answer });
      this.#openForms.delete(String(args.id));
      return null;
    },
    visit_mcp_form: (args) => {
      const id = String(args.id);
      const open = this.#openForms.get(id);
      if (!open) throw { kind: "not_found", message: "Not found: that request: it is no longer open (its server stopped asking)", field: null };
      if (!open.url) throw { kind: "invalid_input", message: "this request is a form, not a page to visit", field: "form" };
      // Rust's native dialog shows the address first; the person may say no.
      if (!this.approvalAnswer) return false;
      this.formVisits.push({ id, url: open.url.url });
      this.formAnswers.push({ id, answer: { action: "accept", content: {} } });
      this.#openForms.delete(id);
      return true;
    },
    sign_in_mcp_server: (args) => {
      const server = this.#mcpServer(args.name);
      // Rust's native dialog, then the browser's sign-in: either may refuse.
      if (this.signInRefusal) throw this.signInRefusal;
      this.signIns.push(server.name);
      // As Rust: signed in, the server is started again (the command returns then), and runs a
      // moment later; each change is pushed.
      server.state = { state: "starting" };
      this.pushServers();
      const after = this.signInStartsAfter;
      if (after !== null) {
        setTimeout(() => {
          const now = this.mcpServers.find((s) => s.name === server.name);
          if (now?.state?.state !== "starting") return;
          now.state = { state: "running", pid: null, tools: 1, apps: [] };
          this.pushServers();
        }, after);
      }
      return null;
    },
    approve_mcp_server: (args) => {
      const server = this.#mcpServer(args.name);
      if (this.approvalAnswer) {
        server.approved = true;
        server.state = { state: "starting" };
      }
      return this.approvalAnswer;
    },
    set_mcp_server_enabled: (args) => {
      const server = this.#mcpServer(args.name);
      server.disabled = !args.enabled;
      server.state = server.disabled ? { state: "stopped" } : server.approved ? { state: "starting" } : null;
      return this.#mcpView(server);
    },
    add_mcp_server_root: (args) => {
      // Rust's folder dialog, answered with `pickedFolder` (null: closed).
      const server = this.#mcpServer(args.name);
      if (this.pickedFolder === null) return null;
      if (!server.roots.includes(this.pickedFolder)) server.roots = [...server.roots, this.pickedFolder];
      return this.#mcpView(server);
    },
    remove_mcp_server_root: (args) => {
      const server = this.#mcpServer(args.name);
      server.roots = server.roots.filter((f) => f !== args.folder);
      return this.#mcpView(server);
    },
    restart_mcp_server: (args) => {
      this.#mcpServer(args.name).state = { state: "starting" };
      return null;
    },
    remove_mcp_server: (args) => {
      this.#mcpServer(args.name);
      this.mcpServers = this.mcpServers.filter((s) => s.name !== args.name);
      return null;
    },
    add_mcp_server: (args) => {
      const name = String(args.name ?? "").trim();
      const commandLine = (args.commandLine as string | null) ?? null;
      const url = (args.url as string | null) ?? null;
      if (commandLine?.includes("'") && commandLine.split("'").length % 2 === 0) {
        throw { kind: "invalid_input", message: "A quote in the command line is not closed.", field: "command_line" };
      }
      return this.#addServer(name, commandLine, url);
    },
    search_mcp_registry: (args) => {
      const query = String(args.query ?? "").toLowerCase();
      const found = this.registry.filter((s) => s.name.toLowerCase().includes(query));
      const start = Number(args.cursor ?? 0);
      const end = start + this.registryPage;
      return { servers: structuredClone(found.slice(start, end)), next_cursor: end < found.length ? String(end) : null };
    },
    watch_server_proposals: (args) => {
      this.#proposalWatch = args.onProposal as { onmessage: (proposal: ShownProposal) => void };
      return null;
    },
    accept_server_proposal: (args) => {
      const proposal = this.proposalEntries.get(String(args.token));
      if (!proposal) throw { kind: "not_found", message: "Not found: that proposed server (open its link again)", field: null };
      this.proposalEntries.delete(String(args.token));
      return this.#addServer(proposal.name, proposal.command_line, null);
    },
    open_mcp_bundle: () => structuredClone(this.pickedBundle),
    install_mcp_bundle: (args) => {
      // Rust checks the values, unpacks the bundle, keeps sensitive values in the keychain and
      // asks for approval like any new server.
      const request = args.request as BundleInstallRequest;
      this.bundleInstalls.push(structuredClone(request));
      const bundle = this.pickedBundle;
      if (!bundle || bundle.token !== request.token) {
        throw { kind: "not_found", message: "Not found: that bundle (choose its file again)", field: null };
      }
      const missing = bundle.info.user_config.filter((o) => o.required && !request.values[o.key]?.length);
      if (missing.length > 0) {
        throw { kind: "install", message: `The bundle needs a value for ${missing.map((o) => o.key).join(", ")}`, field: null };
      }
      return this.#addServer(request.name ?? bundle.info.name, bundle.info.command_line.replace("<bundle>", "/data/bundles/x"), null);
    },
    install_mcp_server: (args) => {
      // Rust fetches the entry, builds the command line, checks its runtime, keeps the secrets
      // in the keychain (here: `installed`) and asks for approval like any new server.
      const request = args.request as InstallRequest;
      this.installed.push(structuredClone(request));
      const found = this.registry.find((s) => s.name === request.server);
      if (!found) throw { kind: "registry", message: `The registry has no server “${request.server}”.`, field: null };
      const source = found.sources[request.source ?? 0];
      const missing = source.needs.filter((n) => n.required && !request.values[n.name]?.length).map((n) => n.name);
      if (missing.length > 0) {
        throw { kind: "install", message: `“${found.name}” needs a value for ${missing.join(", ")}`, field: null };
      }
      if (this.missingRuntimes.includes(source.kind)) {
        throw { kind: "install", message: `This server runs with “${source.kind}”, which is not on your PATH`, field: null };
      }
      const name = request.name ?? found.name.split("/").pop()!;
      if (source.kind === "remote") return this.#addServer(name, null, source.identifier);
      const run = source.kind === "npm" ? `npx -y ${source.identifier}@${source.version}` : `uvx ${source.identifier}==${source.version}`;
      return this.#addServer(name, run, null);
    },
    edit_mcp_server: (args) => {
      const server = this.#mcpServer(args.name);
      const commandLine = (args.commandLine as string | null) ?? null;
      const url = (args.url as string | null) ?? null;
      if (server.transport === "stdio" && !commandLine) {
        throw { kind: "invalid_input", message: "This server runs a program: give its command line.", field: "url" };
      }
      server.command_line = url ? `streamable HTTP ${url}` : commandLine;
      server.edit_text = url ?? commandLine;
      // Rust stops it and shows its native dialog, answered with `approvalAnswer`.
      server.approved = this.approvalAnswer;
      server.state = this.approvalAnswer ? { state: "starting" } : { state: "stopped" };
      return this.#mcpView(server);
    },
    list_mcp_tools: (args) => {
      const tools = this.mcpTools[String(args.name)];
      if (!tools) throw { kind: "conflict", message: `“${String(args.name)}” is not running; start it to see its tools.`, field: "name" };
      return tools.map((t) => ({ ...t }));
    },
    list_mcp_offers: (args) => {
      const name = String(args.name);
      if (!this.mcpTools[name] && !this.mcpOffers[name]) {
        throw { kind: "conflict", message: `“${name}” is not running; start it to see what it offers.`, field: "name" };
      }
      return structuredClone(this.mcpOffers[name] ?? { resources: [], templates: [], prompts: [] });
    },
    accept_mcp_tool: (args) => {
      // Rust's native dialog, answered with `approvalAnswer`.
      if (!this.approvalAnswer) return false;
      this.mcpTools[String(args.name)] = (this.mcpTools[String(args.name)] ?? []).map((t) =>
        t.tool === args.tool ? { tool: t.tool, wire_name: t.wire_name, display_name: t.display_name, offered: true, status: "pinned" } : t,
      );
      return true;
    },
    preview_mcp_import: (args) => this.#importPreview(args.text),
    import_mcp_servers: (args) => {
      const preview = this.#importPreview(args.text);
      for (const item of preview.added) {
        this.mcpServers = [
          ...this.mcpServers,
          {
            name: item.name,
            transport: "stdio",
            command_line: item.detail,
            edit_text: item.detail,
            roots: [],
            disabled: false,
            approved: false,
            error: null,
            state: null,
            resolved: null,
            log_file: `/logs/mcp/${item.name}.log`, held_back: [],
          },
        ];
      }
      return preview.added.map((item) => item.name);
    },
    mcp_server_log: (args) => this.mcpLogs[String(args.name)] ?? "",
    add_provider: (args) => {
      const input = args.provider as NewProvider;
      if (this.providers.some((p) => p.name === input.name)) {
        throw { kind: "conflict", message: `A provider named ${input.name} already exists.`, field: "name" };
      }
      const kind = KINDS.find((k) => k.kind === input.kind);
      if (!kind) throw { kind: "invalid_input", message: `Unknown provider kind ${input.kind}.`, field: "kind" };
      if (!input.base_url && kind.default_base_url === "") {
        throw {
          kind: "invalid_input",
          message: "This kind of provider needs a base URL, such as http://127.0.0.1:1234/v1.",
          field: "base_url",
        };
      }
      const provider = this.addProviderRecord(input.name, kind.kind, Boolean(input.api_key));
      if (input.base_url) provider.base_url = input.base_url;
      provider.default_model = input.default_model ?? null;
      return { ...provider };
    },
    set_provider_key: (args) => {
      const provider = this.#provider(args.name);
      provider.has_key = true;
      return { ...provider };
    },
    get_model_window: (args) => {
      this.#provider(args.provider);
      const found = this.modelWindows[`${String(args.provider)}/${String(args.model)}`];
      return found ? { ...found } : null;
    },
    set_model_window: (args) => {
      this.#provider(args.provider);
      const key = `${String(args.provider)}/${String(args.model)}`;
      const tokens = args.tokens === null ? null : Number(args.tokens);
      if (tokens !== null && (tokens < 512 || tokens > 100_000_000)) {
        throw { kind: "invalid_input", field: "tokens", message: `A window of ${tokens} tokens is not one a model has: give 512 to 100000000.` };
      }
      if (tokens === null) delete this.modelWindows[key];
      else this.modelWindows[key] = { provider: String(args.provider), model: String(args.model), tokens, said_by: "person" };
      return this.modelWindows[key] ? { ...this.modelWindows[key] } : null;
    },
    delete_provider_key: (args) => {
      const provider = this.#provider(args.name);
      provider.has_key = false;
      return { ...provider };
    },
    remove_provider: (args) => {
      this.#provider(args.name);
      this.providers = this.providers.filter((p) => p.name !== args.name);
      if (this.settings.default_provider === args.name) {
        this.settings = { ...this.settings, default_provider: null, default_model: null };
      }
      return null;
    },
    list_prices: () =>
      [...this.#prices.values()]
        .filter((p) => this.providers.some((x) => x.name === p.provider))
        .sort((a, b) => a.provider.toLowerCase().localeCompare(b.provider.toLowerCase()) || byText(a.model, b.model))
        .flatMap((p) => this.#modelPrice(p.provider, p.model) ?? []),
    conversation_usage: (args) => totalOf(this.usage.filter((r) => r.conversation_id === args.conversationId)),
    usage_report: (args): UsageReport => {
      // As Rust's usage_by_day: the requests since `since`, by UTC day, provider and model, oldest day first.
      const since = Number(args.since);
      const groups = new Map<string, UsageRecord[]>();
      for (const r of this.usage.filter((r) => r.at >= since)) {
        const key = [new Date(r.at).toISOString().slice(0, 10), r.provider, r.model].join("\u0000");
        groups.set(key, [...(groups.get(key) ?? []), r]);
      }
      const days: UsageDay[] = [...groups.entries()]
        .map(([key, rows]) => {
          const [day, provider, model] = key.split("\u0000");
          return { day, provider, model, ...totalOf(rows) };
        })
        .sort((a, b) => byText(a.day, b.day) || byText(a.provider, b.provider) || byText(a.model, b.model));
      return { since, days, total: totalOf(this.usage.filter((r) => r.at >= since)) };
    },
    shell_command_status: () => ({ ...structuredClone(this.shellCommand), changed: null }),
    install_shell_command: () => {
      if (this.shellCommandFails) throw structuredClone(this.shellCommandFails);
      const s = this.shellCommand;
      // Rust changes nothing when `switchboard` already runs this app.
      const changed = !s.current;
      if (changed) {
        s.installed = true;
        if (s.found === null && s.on_path) {
          s.found = s.place;
          s.current = true;
        }
      }
      return { ...structuredClone(s), changed };
    },
    remove_shell_command: () => {
      if (this.shellCommandFails) throw structuredClone(this.shellCommandFails);
      const s = this.shellCommand;
      const changed = s.installed;
      s.installed = false;
      if (changed && s.found === s.place) {
        s.found = null;
        s.current = false;
      }
      return { ...structuredClone(s), changed };
    },
    check_for_update: () => structuredClone(this.update),
    install_update: (args) => {
      // Rust downloads the release the last check found and checks its signature first.
      if (this.update.state !== "available") {
        throw { kind: "update", message: "Check for updates first: there is no update waiting to be installed.", field: null };
      }
      const channel = args.onProgress as { onmessage: (progress: UpdateProgress) => void };
      for (const chunk of this.updateInstall.chunks) channel.onmessage(structuredClone(chunk));
      if (this.updateInstall.fails) throw structuredClone(this.updateInstall.fails);
      return this.update.version;
    },
    restart_app: () => {
      this.restarts++;
      return null;
    },
    get_settings: () => ({ ...this.settings }),
    update_settings: (args) => {
      this.settings = { ...(args.settings as Settings) };
      return { ...this.settings };
    },
  };
}

/** A profile's fields as Rust's `ProfileFields::default()`: no prompt, Settings' model and limits, every tool on. */
export function emptyProfileFields(): ProfileFields {
  return { system_prompt: "", provider: null, model: null, max_rounds: null, tool_timeout_secs: null, run_time_limit_secs: null, tools: [] };
}

/** A controllable `prefers-color-scheme: dark` query. */
export class FakeDarkQuery {
  matches: boolean;
  media = "(prefers-color-scheme: dark)";
  #listeners = new Set<() => void>();

  constructor(dark = false) {
    this.matches = dark;
  }

  addEventListener(_type: string, listener: () => void): void {
    this.#listeners.add(listener);
  }

  removeEventListener(_type: string, listener: () => void): void {
    this.#listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** The OS switched between light and dark. */
  change(dark: boolean): void {
    this.matches = dark;
    for (const listener of this.#listeners) listener();
  }

  matchMedia = (): MediaQueryList => this as unknown as MediaQueryList;
}
