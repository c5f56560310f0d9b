// An in-memory stand-in for the Rust commands, for the few tests of the window that the real
// core (real-backend.ts, over ipc_serve) cannot be made to play: each says why beside its
// describe. It answers only the commands those tests' code paths call, and only as far as they
// need; a command it does not know rejects ("unknown command"). Test-only code.
//
// Hooks a test sets (besides the lists themselves):
//   failures          command name → the error that command rejects with
//   delay             command name → milliseconds before it answers
//   modelLists        provider name → the models list_models gives
//   localServers      what detect_local_providers finds (runningOllama, runningLmStudio)
//   mcpServers        the servers (pushServers sends the list as Rust does; needSignIn marks one)
//   toolWantsSignIn   the scripted call's next run is refused by the time server for want of a
//                     sign-in; signInRefusal what sign_in_mcp_server rejects with (null: it signs
//                     in, the server restarts and runs signInStartsAfter ms later; null: never)
//   askForm/closeForm a server asks the person to fill in a form, or Rust closes one
//   missingRuntimes   source kinds whose program is not on the PATH (install_mcp_server refuses)
//   claudeConfig      Claude Desktop's file as Rust would read it (null: there is none)
//   compareScript     what each compared model does in compare_models, by its lane (text in two
//                     pieces, maybe a call asked about first, maybe a failure); laneGate is awaited
//                     by each lane between its two pieces (stop_run ends a lane waiting there)
//   addToolLinks      a finished call whose result returned links; linkFiles what reading one
//                     gives (read_tool_link), by address (a link not there fails as its server would)
//   addUsage          a request a model answered, as a row of Rust's usage table
//   update            what check_for_update answers; updateInstall what install_update reports
//   shellCommand      the `switchboard` command as Rust finds it (shellCommandFails: refused)

import type {
  BranchPoint,
  CallRef,
  CommandError,
  Conversation,
  ConversationArtifact,
  ImportPreview,
  InstallRequest,
  LocalServer,
  McpForm,
  McpServerStatus,
  Message,
  ModelInfo,
  NewProvider,
  Provider,
  RegistryServer,
  ResultPart,
  ResultView,
  Settings,
  ShellCommandStatus,
  ToolRun,
  UpdateProgress,
  UpdateStatus,
  UsageTotal,
} from "../src/lib/types";
import type { ApprovalAnswer, RunEvent, StopReason } from "../src/lib/run-events";
import golden from "./golden/runs.json";
import { models, type ToolFile } from "./test-helpers";

/** The window's client, generated from Rust (commands.ts): each command's answer, by its name as `invoke` gets it. */
type Client = typeof import("../src/lib/commands");
type Snake<S extends string> = S extends `${infer C}${infer R}` ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${Snake<R>}` : "";
type Answers = { [K in keyof Client & string as Snake<K>]: Awaited<ReturnType<Client[K]>> };
type Args = Record<string, unknown>;

const SETTINGS: Settings = {
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

/** The MCP Registry's one server here, as Rust reads its `server.json`. */
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
function checkShape(kind: string, value: object): void {
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

/** "Provider · model", as Rust labels a compared model's branch (pinned by golden/branch-labels.json, fake-rules.test.ts). */
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
  provider: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  /** null when the model had no price */
  cost_pico: number | null;
}

/** Requests, tokens and cost added up, as Rust's TOTALS. */
function totalOf(rows: UsageRecord[]): UsageTotal {
  return {
    requests: rows.length,
    input_tokens: rows.reduce((sum, r) => sum + r.input_tokens, 0),
    output_tokens: rows.reduce((sum, r) => sum + r.output_tokens, 0),
    cached_input_tokens: 0,
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

/** The time server's tool, which the scripted runs call. */
const TIME = { server: "time", tool: "get_current_time", display_name: "time · Get Current Time" };
const TIME_ARGS = '{"timezone":"Europe/Paris"}';
const TIME_RESULT = '{"datetime": "2026-11-23T12:00:00+01:00"}';

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

export interface Call {
  cmd: string;
  args: Args | undefined;
}

/** A branch point, as Rust's branches for one level: at message index `at`, every branch's tail (the shown one's is null); at a comparison, the model that wrote each. */
interface Branches {
  at: number;
  shown: number;
  tails: (Message[] | null)[];
  picks: Pick<Message, "provider" | "model">[];
}

export class FakeBackend {
  conversations: Conversation[] = [];
  messages: Record<string, Message[]> = {};
  providers: Provider[] = [];
  calls: Call[] = [];
  /** milliseconds each command waits before answering */
  delay: (cmd: string) => number = () => 0;
  /** commands that reject with this error instead of running */
  failures = new Map<string, CommandError | string>();
  /** provider name → the models it lists, sorted or not (the fake sorts them, as Rust does) */
  modelLists: Record<string, ModelInfo[]> = {};
  /** the local model servers detect_local_providers finds */
  localServers: LocalServer[] = [];
  /** What `list_mcp_servers` answers, and `pushServers` sends. */
  mcpServers: McpServerStatus[] = [];
  /** Servers the window signed in to. */
  signIns: string[] = [];
  /** What sign_in_mcp_server rejects with; null: the sign-in works. */
  signInRefusal: CommandError | null = null;
  /** Milliseconds from a sign-in until its restarted server runs (pushed); null: it never does. */
  signInStartsAfter: number | null = 5;
  /** when set, the scripted call's next run is refused by the time server for want of a
   * sign-in: the call fails and the server is marked `needs_sign_in` (then it is cleared) */
  toolWantsSignIn = false;
  /** Source kinds whose runtime is not on the PATH (install_mcp_server refuses them). */
  missingRuntimes: string[] = [];
  /** Claude Desktop's configuration file as Rust would read it; null when there is none */
  claudeConfig: string | null = null;
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
  /** A link's address → the files reading it gives (read_tool_link). */
  linkFiles: Record<string, ToolFile[]> = {};
  /** Every request a model answered, oldest first, as Rust's usage table. */
  usage: UsageRecord[] = [];
  /** What each compared model does, by its lane (see compareScript in the header). */
  compareScript: (lane: number) => LaneScript = (lane) =>
    lane === 1 ? { pieces: ["It is **noon**", " in Paris, says the clock."], tool: true } : { pieces: [`Lane ${lane}: **Paris**`, " is the capital of France."] };
  /** Every comparison started: its run id and its lanes' run ids, in order. */
  comparisons: { runId: string; lanes: string[] }[] = [];
  /** Awaited by each compared model between the two pieces of its text. */
  laneGate: ((lane: number) => Promise<void>) | null = null;

  #ids = 0;
  #clock = 1_700_000_000_000;
  /** The window's listeners, once it has asked. */
  #serverWatch: { onmessage: (servers: McpServerStatus[]) => void } | null = null;
  #forms: { onmessage: (form: McpForm) => void } | null = null;
  #closedForms: { onmessage: (id: string) => void } | null = null;
  /** conversation id → its tool calls, as `get_conversation` answers them */
  #toolRuns: Record<string, ToolRun[]> = {};
  /** conversation id → its branch points */
  #branches: Record<string, Branches[]> = {};
  /** "message id/call id" → what get_tool_result_view answers for that call (absent: text only). */
  #resultViews: Record<string, ResultView> = {};
  /** The bytes (base64) of files Rust has kept, by SHA-256. */
  #fileBytes = new Map<string, string>();
  #approvals = new Map<string, (answers: ApprovalAnswer[]) => void>();
  /** conversation id → its run under way: what it sent so far and who listens (as Rust's feed) */
  #feeds = new Map<string, { runId: string; log: RunEvent[]; channels: FakeChannel[] }>();
  /** run id → what stop_run does to it (a comparison's lanes, and the comparison itself) */
  #stops = new Map<string, () => void>();

  /** Something changed in the supervisor: Rust pushes the list, as it is now, to the window. */
  pushServers(): void {
    this.#serverWatch?.onmessage(structuredClone(this.mcpServers));
  }

  /** A remote server refused a call for want of a sign-in: Rust marks it so at once and pushes the list. */
  needSignIn(name: string, reason = `“${name}” refused a call: it needs more permission than you gave it; sign in to it again`): void {
    this.#mcpServer(name).state = { state: "needs_sign_in", reason };
    this.pushServers();
  }

  /** A server asks the person to fill in `form`. */
  askForm(form: McpForm): void {
    if (!this.#forms) throw new Error("the window is not listening for forms");
    this.#forms.onmessage(form);
  }

  /** Rust closes form `id` without the person's answer (its server said it is done, say). */
  closeForm(id: string): void {
    if (!this.#closedForms) throw new Error("the window is not listening for closed forms");
    this.#closedForms.onmessage(id);
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
    return conversation;
  }

  /** Questions and answers, one after the other, in `conversationId` (`texts[0]` a question). */
  addMessages(conversationId: string, texts: string[]): void {
    for (const [i, text] of texts.entries()) {
      const role = i % 2 === 0 ? "user" : "assistant";
      this.messages[conversationId].push(
        message({ id: `m${++this.#ids}`, conversation_id: conversationId, role, content: text, created_at: ++this.#clock, finish_reason: role === "user" ? null : "stop" }),
      );
    }
  }

  /**
   * A finished call of `tool` in `conversationId` whose result returned `links` (resource links,
   * read only on demand), saved as Rust saves one. Returns the answer's and the call's ids.
   */
  addToolLinks(conversationId: string, links: Extract<ResultPart, { kind: "link" }>[], tool = "docs__find"): { messageId: string; callId: string } {
    const saved = this.messages[conversationId];
    const messageId = `a${++this.#ids}`;
    const callId = `call_${++this.#ids}`;
    const [server, name] = tool.split("__");
    saved.push(message({ id: messageId, conversation_id: conversationId, role: "assistant", content: "", created_at: ++this.#clock, finish_reason: "tool_calls", tool_calls: [{ id: callId, name: tool, arguments: "{}" }] }));
    (this.#toolRuns[conversationId] ??= []).push({
      id: `tr${++this.#ids}`, conversation_id: conversationId, message_id: messageId, call_id: callId, server, tool: name,
      display_name: tool, arguments: "{}", decision: "allowed", decision_scope: "once", deny_reason: null, started_at: 1000, finished_at: 1010,
      is_error: false, retry_of: null, description: null, can_retry: false, rich: true,
    });
    saved.push(message({ id: `t${++this.#ids}`, conversation_id: conversationId, role: "tool", content: "Found these.", created_at: ++this.#clock, tool_call_id: callId, name: tool }));
    this.#resultViews[`${messageId}/${callId}`] = { parts: links.map((l) => ({ ...l })), structured: null };
    return { messageId, callId };
  }

  addProviderRecord(
    name: string,
    kind: Provider["kind"] = "openai",
    has_key = true,
    fields: Partial<Pick<Provider, "base_url" | "default_model">> = {},
  ): Provider {
    const provider: Provider = { id: `p${++this.#ids}`, name, kind, base_url: `https://${kind}.example.com`, default_model: null, has_key, created_at: ++this.#clock, ...fields };
    this.providers.push(provider);
    return provider;
  }

  /** A request a model answered (now, in no conversation, unpriced, unless `row` says otherwise). */
  addUsage(row: Partial<UsageRecord> & Pick<UsageRecord, "provider" | "model">): UsageRecord {
    const record: UsageRecord = { at: Date.now(), conversation_id: null, input_tokens: 0, output_tokens: 0, cost_pico: null, ...row };
    this.usage.push(record);
    return record;
  }

  /** The commands this fake answers (each must be one of Rust's). */
  commands(): string[] {
    return Object.keys(this.#handlers);
  }

  invoke = async (cmd: string, args?: Args): Promise<unknown> => {
    this.calls.push({ cmd, args });
    // The answer is worked out when the call arrives and delivered after the
    // delay, so a slow answer can be stale by the time it lands.
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      const failure = this.failures.get(cmd);
      if (failure !== undefined) throw failure;
      const handler = (this.#handlers as Record<string, ((args: Args) => unknown) | undefined>)[cmd];
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

  /**
   * The time call of `answer` (its message already started), as Rust's loop plays it in
   * `conversationId` (a compared model's hidden one for a lane): the answer saved with the call,
   * the person asked, the call run (refused for want of a sign-in when toolWantsSignIn says so,
   * the server then marked at once), its record kept in `runs` and its result saved, then shown.
   * Resolves with how it ended; "stopped" when `stopped` came before the person's answer.
   */
  async #timeCall(
    conversationId: string,
    answer: Message,
    send: (event: RunEvent) => void,
    save: (m: Message) => void,
    runs: ToolRun[],
    retryOf: CallRef | null = null,
    stopped: Promise<"stopped"> = new Promise(() => {}),
  ): Promise<"stopped" | "failed" | "done"> {
    const callId = retryOf === null ? "call_1" : `retry_${++this.#ids}`;
    save({ ...answer, status: "complete", finish_reason: "tool_calls", tool_calls: [{ id: callId, name: "time__get_current_time", arguments: TIME_ARGS }] });
    send({ type: "tool_call_proposed", call: { call_id: callId, message_id: answer.id, wire_name: "time__get_current_time", ...TIME, arguments: TIME_ARGS, retry_of: retryOf } });
    const requestId = `req${++this.#ids}`;
    const answers = await Promise.race([
      stopped,
      new Promise<ApprovalAnswer[]>((resolve) => {
        this.#approvals.set(requestId, resolve);
        const shown = { call_id: callId, ...TIME, description: "Current time in a time zone", arguments: '{\n  "timezone": "Europe/Paris"\n}', destructive: false };
        send({ type: "approval_required", request_id: requestId, calls: [shown] });
      }),
    ]);
    if (answers === "stopped") {
      this.#approvals.delete(requestId);
      return "stopped";
    }
    const allowed = answers[0]?.decision !== "deny";
    const wantsSignIn = allowed && this.toolWantsSignIn;
    this.toolWantsSignIn = false;
    const result = !allowed ? "The user denied this call." : wantsSignIn ? "“time” needs more permission than you gave it: sign in to it again" : TIME_RESULT;
    const isError = result !== TIME_RESULT;
    if (allowed) {
      send({ type: "tool_decided", call_id: callId, decision: "allowed", scope: "once", reason: null });
      send({ type: "tool_started", call_id: callId });
      if (wantsSignIn) this.needSignIn("time");
    }
    runs.push({
      id: `tr${++this.#ids}`, conversation_id: conversationId, message_id: answer.id, call_id: callId, ...TIME, arguments: TIME_ARGS,
      decision: allowed ? "allowed" : "denied", decision_scope: "once", deny_reason: allowed ? null : result, started_at: allowed ? 1000 : null,
      finished_at: 1012, is_error: isError, retry_of: retryOf, description: null, can_retry: allowed && isError, rich: false,
    });
    checkShape("tool_run", runs.at(-1)!);
    save(message({ id: `t${++this.#ids}`, conversation_id: conversationId, role: "tool", content: result, tool_call_id: callId, name: "time__get_current_time", is_error: isError, created_at: ++this.#clock }));
    if (allowed) {
      send({ type: "tool_finished", call_id: callId, is_error: isError, content: result, full_length: null, duration_ms: 12, can_retry: isError, rich: false, artifacts: [], open_canvas: null });
    } else {
      send({ type: "tool_decided", call_id: callId, decision: "denied", scope: "once", reason: result });
    }
    send({ type: "status", text: "Reading results…" });
    return isError ? "failed" : "done";
  }

  /**
   * A run as the Rust loop would play it for "What time is it?": the time call, asked about,
   * then an answer in Markdown. Saves what it shows, as Rust does. With `retryOf`, the run
   * starts from that failed call run again, in an answer of its own (the person's, no model's).
   */
  #scriptedRun(conversationId: string, text: string | null, channel: FakeChannel, retryOf: CallRef | null = null): string {
    const runId = `run${++this.#ids}`;
    const saved = this.messages[conversationId];
    const emit = this.#openFeed(conversationId, runId, channel);
    const save = (m: Message) => {
      const at = saved.findIndex((x) => x.id === m.id);
      if (at >= 0) saved[at] = m;
      else saved.push(m);
      emit({ type: "message_saved", message: m });
    };
    const answer = (model: string | null) =>
      message({ id: `a${++this.#ids}`, conversation_id: conversationId, role: "assistant", content: "", status: model === null ? "complete" : "streaming", model });
    void (async () => {
      await Promise.resolve();
      emit({ type: "run_started", run_id: runId, conversation_id: conversationId });
      if (text !== null) save(message({ id: `u${++this.#ids}`, conversation_id: conversationId, role: "user", content: text }));
      if (retryOf === null) emit({ type: "status", text: "Thinking…" });
      const first = answer(retryOf === null ? "gpt-test" : null);
      saved.push(first);
      emit({ type: "answer_started", message: first });
      const ended = await this.#timeCall(conversationId, first, emit, save, (this.#toolRuns[conversationId] ??= []), retryOf);
      const second = answer("gpt-test");
      saved.push(second);
      emit({ type: "answer_started", message: second });
      const reply = ended === "done" ? "It is **noon** in Paris." : "I could not look it up.";
      emit({ type: "text_delta", message_id: second.id, text: reply });
      save({ ...second, content: reply, status: "complete", finish_reason: "stop", input_tokens: 30, output_tokens: 8 });
      emit({ type: "run_finished", reason: "completed", message: null });
    })();
    return runId;
  }

  /**
   * A comparison as Rust's start_comparison plays it: the question written once, then each model's
   * run in a lane of its own (its events wrapped in `lane`; `compareScript` says what each does),
   * and once all have ended their answers folded in as branches after the question: the first in
   * order that answered is shown, and its model becomes the conversation's.
   */
  #compare(args: Args): string {
    const conversationId = String(args.conversationId);
    const conversation = this.#conversation(conversationId);
    const runId = `run${++this.#ids}`;
    const emit = this.#openFeed(conversationId, runId, args.onEvent as FakeChannel);
    const saved = this.messages[conversationId];
    const lanes = (args.models as { provider: string; model: string }[]).map((m, lane) => {
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
      const answer = () => {
        const started = message({ id: `a${++this.#ids}`, conversation_id: hidden, role: "assistant", content: "", status: "streaming", provider: l.provider, model: l.model, created_at: ++this.#clock });
        l.tail.push(started);
        send({ type: "answer_started", message: started });
        return started;
      };
      const end = (reason: StopReason): StopReason => {
        send({ type: "run_finished", reason, message: null });
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
      if (script.tool && (await this.#timeCall(hidden, answer(), send, save, l.runs, null, l.stopped)) === "stopped") return end("cancelled");
      const last = answer();
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
      const question = message({ id: `u${++this.#ids}`, conversation_id: conversationId, role: "user", content: String(args.text), created_at: ++this.#clock });
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
      for (const l of kept) (this.#toolRuns[conversationId] ??= []).push(...l.runs.map((r) => ({ ...r, conversation_id: conversationId })));
      if (tails.length > 0) saved.push(...tails[shown]);
      if (tails.length > 1) {
        (this.#branches[conversationId] ??= []).push({ at, shown, tails: tails.map((t, i) => (i === shown ? null : t)), picks: kept.map((l) => ({ provider: l.provider, model: l.model })) });
      }
      conversation.provider = lanes[shownLane].provider;
      conversation.model = lanes[shownLane].model;
      conversation.updated_at = ++this.#clock;
      emit({ type: "comparison_folded", message_id: saved[at]?.id ?? null });
      const stoppedAll = reasons.every((r) => r === "cancelled");
      emit({ type: "run_finished", reason: reasons.some(answered) ? "completed" : stoppedAll ? "cancelled" : (reasons[0] ?? "error"), message: null });
    })();
    return runId;
  }

  /** A branch point as Rust shows it. */
  #branchPoint(id: string, point: Branches): BranchPoint {
    return { message_id: this.messages[id][point.at].id, position: point.shown, count: point.tails.length, models: point.picks.map(labelOf) };
  }

  #conversation(id: unknown): Conversation {
    const found = this.conversations.find((c) => c.id === id);
    if (!found) throw { kind: "not_found", message: "No such conversation." };
    return found;
  }

  #mcpServer(name: unknown): McpServerStatus {
    const found = this.mcpServers.find((s) => s.name === name);
    if (!found) throw { kind: "not_found", message: `Not found: server “${String(name)}”` };
    return found;
  }

  /** As Rust's artifacts: the files the conversation's tool messages carry, oldest first. */
  #artifacts(conversationId: unknown): ConversationArtifact[] {
    return (this.messages[String(conversationId)] ?? []).flatMap((m) =>
      m.role === "tool"
        ? m.attachments.map((file) => ({ file: { ...file }, message_id: m.id, call_id: m.tool_call_id ?? "", tool: m.name ?? "", created_at: m.created_at }))
        : [],
    );
  }

  /** What the window's code paths under these tests call, answered as Rust would, near enough. */
  #handlers: { [K in keyof Answers]?: (args: Args) => Answers[K] } = {
    // What the window reads as it starts: a sound database and keychain, no profiles, prices,
    // standing approvals or Add-a-provider choices (no test here uses them).
    app_status: () => ({ version: "0.1.0", home: "/home/test/.switchboard", database_error: null }),
    keychain_status: () => ({ available: true, message: "Secret Service" }),
    get_settings: () => ({ ...SETTINGS }),
    list_profiles: () => [],
    list_provider_kinds: () => [],
    list_provider_presets: () => [],
    list_prices: () => [],
    list_tool_approvals: () => [],
    list_conversations: () => [...this.conversations].sort((a, b) => b.updated_at - a.updated_at).map((c) => ({ ...c })),
    list_providers: () => this.providers.map((p) => ({ ...p })),
    detect_local_providers: () => structuredClone(this.localServers),
    list_models: (args) => {
      if (!this.providers.some((p) => p.name === args.name)) throw { kind: "not_found", message: `No provider named ${String(args.name)}.` };
      return [...(this.modelLists[String(args.name)] ?? [])].sort((a, b) => byText(a.id, b.id));
    },
    // Every model takes images here, and no conversation has tools to switch.
    model_images: () => true,
    list_conversation_tools: () => [],
    add_provider: (args) => {
      const input = args.provider as NewProvider;
      const provider = this.addProviderRecord(input.name, input.kind as Provider["kind"], Boolean(input.api_key), { base_url: input.base_url ?? "", default_model: input.default_model ?? null });
      return { ...provider };
    },

    create_conversation: (args) => ({ ...this.addConversation(typeof args.title === "string" ? args.title : "New conversation", SETTINGS.default_system_prompt) }),
    get_conversation: (args) => {
      const id = String(args.id);
      const all = this.messages[id];
      const shown = new Set(all.map((m) => m.id));
      return {
        conversation: { ...this.#conversation(id) },
        messages: all.map((m) => ({ ...m })),
        tool_runs: (this.#toolRuns[id] ?? []).filter((r) => shown.has(r.message_id)).map((r) => ({ ...r })),
        offers: [],
        older: null,
        branches: (this.#branches[id] ?? []).map((point) => this.#branchPoint(id, point)),
        draft: null,
        summaries: [],
        context: null,
      };
    },
    // The fake keeps no composer's draft: no test here reopens one.
    save_draft: () => null,
    conversation_usage: (args) => totalOf(this.usage.filter((r) => r.conversation_id === args.conversationId)),
    usage_report: (args) => {
      // As Rust's usage_by_day: the requests since `since`, by UTC day, provider and model, oldest day first.
      const since = Number(args.since);
      const rows = this.usage.filter((r) => r.at >= since);
      const groups = new Map<string, UsageRecord[]>();
      for (const r of rows) {
        const key = [new Date(r.at).toISOString().slice(0, 10), r.provider, r.model].join("\u0000");
        groups.set(key, [...(groups.get(key) ?? []), r]);
      }
      const days = [...groups.entries()]
        .map(([key, group]) => {
          const [day, provider, model] = key.split("\u0000");
          return { day, provider, model, ...totalOf(group) };
        })
        .sort((a, b) => byText(a.day, b.day) || byText(a.provider, b.provider) || byText(a.model, b.model));
      return { since, days, total: totalOf(rows) };
    },

    send_message: (args) => this.#scriptedRun(String(args.conversationId), String(args.text), args.onEvent as FakeChannel),
    retry_tool_call: (args) => {
      const conversationId = String(args.conversationId);
      const run = (this.#toolRuns[conversationId] ?? []).find((r) => r.message_id === args.messageId && r.call_id === args.callId);
      if (!run) throw { kind: "not_found", message: `Not found: tool call ${String(args.callId)}` };
      return this.#scriptedRun(conversationId, null, args.onEvent as FakeChannel, run.retry_of ?? { message_id: run.message_id, call_id: run.call_id });
    },
    answer_approval: (args) => {
      const waiting = this.#approvals.get(String(args.requestId));
      if (!waiting) throw { kind: "not_found", message: "That approval is no longer waiting." };
      this.#approvals.delete(String(args.requestId));
      waiting(args.answers as ApprovalAnswer[]);
      return null;
    },
    compare_models: (args) => this.#compare(args),
    stop_run: (args) => {
      this.#stops.get(String(args.runId))?.();
      return null;
    },
    attach_run: (args) => {
      const feed = this.#feeds.get(String(args.conversationId));
      if (!feed) return null;
      const channel = args.onEvent as FakeChannel;
      for (const event of feed.log) channel.onmessage(event);
      feed.channels.push(channel);
      return feed.runId;
    },
    switch_branch: (args) => {
      // As Rust's switch: the tail shown at the point is kept, and branch `position`'s is shown;
      // at a comparison, the branch picked is its model's, which answers next.
      const id = String(args.id);
      const all = this.messages[id];
      const at = all.findIndex((m) => m.id === args.messageId);
      const point = (this.#branches[id] ?? []).find((p) => p.at === at);
      const position = Number(args.position);
      if (!point || position < 0 || position >= point.tails.length) throw { kind: "not_found", message: "Not found: that branch" };
      if (position !== point.shown) {
        point.tails[point.shown] = all.splice(point.at);
        all.push(...(point.tails[position] ?? []));
        point.tails[position] = null;
        point.shown = position;
      }
      Object.assign(this.#conversation(id), point.picks[position]);
      return { point: this.#branchPoint(id, point), seq: at + 1 };
    },

    list_artifacts: (args) => this.#artifacts(args.conversationId),
    read_artifact: (args) => {
      const data = this.#fileBytes.get(String(args.sha256));
      if (!this.#artifacts(args.conversationId).some((a) => a.file.sha256 === args.sha256) || data === undefined) {
        throw { kind: "not_found", message: "Not found: that file among this conversation's tool results" };
      }
      return data;
    },
    get_tool_result_view: (args) => structuredClone(this.#resultViews[`${String(args.messageId)}/${String(args.callId)}`] ?? { parts: [], structured: null }),
    read_tool_link: (args) => {
      // As Rust: the link must be one the call returned; its server reads it, and what it sends
      // is kept as files of the call's tool message.
      const id = String(args.conversationId);
      const uri = String(args.uri);
      const link = this.#resultViews[`${String(args.messageId)}/${String(args.callId)}`]?.parts.find((p) => p.kind === "link" && p.uri === uri);
      const result = this.messages[id].find((m) => m.role === "tool" && m.tool_call_id === args.callId);
      if (!link || !result) throw { kind: "not_found", message: "Not found: that link among the call's result" };
      const server = (this.#toolRuns[id] ?? []).find((r) => r.call_id === args.callId)?.server;
      const files = this.linkFiles[uri];
      if (!files) throw { kind: "mcp", message: `“${server}” failed: Unknown resource: ${uri}` };
      for (const f of files) this.#fileBytes.set(f.file.sha256, f.data);
      const have = new Set(result.attachments.map((f) => f.sha256));
      result.attachments = [...result.attachments, ...files.map((f) => ({ ...f.file })).filter((f) => !have.has(f.sha256))];
      return files.map((f) => ({ file: { ...f.file }, message_id: result.id, call_id: result.tool_call_id ?? "", tool: result.name ?? "", created_at: result.created_at }));
    },
    // Nothing is dropped on the fake's window, and no link proposes a server to it.
    watch_dropped_files: () => null,
    watch_server_proposals: () => null,

    list_mcp_servers: () => structuredClone(this.mcpServers),
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
    search_mcp_registry: (args) => {
      const query = String(args.query ?? "").toLowerCase();
      return { servers: structuredClone(REGISTRY.filter((s) => s.name.toLowerCase().includes(query))), next_cursor: null };
    },
    install_mcp_server: (args) => {
      // Rust checks the source's runtime is on the PATH before anything is added; installing
      // itself is the real core's (registry-browse.test.ts).
      const request = args.request as InstallRequest;
      const source = REGISTRY.find((s) => s.name === request.server)?.sources[request.source ?? 0];
      if (source && this.missingRuntimes.includes(source.kind)) {
        throw { kind: "install", message: `This server runs with “${source.kind}”, which is not on your PATH`, field: null };
      }
      throw { kind: "internal", message: "the fake backend installs nothing" };
    },
    preview_mcp_import: () => {
      // Rust reads Claude Desktop's file; here each entry is added as its command line.
      if (this.claudeConfig === null) throw { kind: "not_found", message: "Not found: Claude Desktop's settings (/home/me/.config/Claude/claude_desktop_config.json)" };
      const doc = JSON.parse(this.claudeConfig) as { mcpServers: Record<string, { command: string; args?: string[] }> };
      const added = Object.entries(doc.mcpServers).map(([name, entry]) => ({ name, detail: [entry.command, ...(entry.args ?? [])].join(" ") }));
      return { added, conflicts: [], invalid: [], warnings: [] } satisfies ImportPreview;
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
  };
}
