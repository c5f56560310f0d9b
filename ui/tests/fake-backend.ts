// An in-memory stand-in for the Rust commands, used by tests through a
// `vi.mock("@tauri-apps/api/core")` in each test file. Test-only code.

import type {
  AppStatus,
  CommandError,
  Conversation,
  KeychainStatus,
  Message,
  NewProvider,
  Provider,
  ProviderKindInfo,
  Settings,
} from "../src/lib/types";

export const KINDS: ProviderKindInfo[] = [
  { kind: "openai", label: "OpenAI", default_base_url: "https://api.openai.com/v1", needs_key: true },
  { kind: "anthropic", label: "Anthropic", default_base_url: "https://api.anthropic.com", needs_key: true },
  { kind: "ollama", label: "Ollama", default_base_url: "http://localhost:11434", needs_key: false },
];

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
  };
  calls: Call[] = [];
  /** milliseconds each command waits before answering */
  delay: (cmd: string) => number = () => 0;
  /** commands that reject with this error instead of running */
  failures = new Map<string, CommandError | string>();
  #clock = 1_700_000_000_000;
  #ids = 0;

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

  callsTo(cmd: string): Call[] {
    return this.calls.filter((call) => call.cmd === cmd);
  }

  addConversation(title: string): Conversation {
    const now = ++this.#clock;
    const conversation = { id: `c${++this.#ids}`, title, created_at: now, updated_at: now };
    this.conversations.push(conversation);
    this.messages[conversation.id] = [];
    return conversation;
  }

  addProviderRecord(name: string, kind: Provider["kind"] = "openai", has_key = true): Provider {
    const info = KINDS.find((k) => k.kind === kind) ?? KINDS[0];
    const provider: Provider = {
      id: `p${++this.#ids}`,
      name,
      kind,
      base_url: info.default_base_url,
      default_model: null,
      has_key,
      created_at: ++this.#clock,
    };
    this.providers.push(provider);
    return provider;
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

  #handlers: Record<string, Handler> = {
    app_status: () => this.status,
    keychain_status: () => this.keychain,
    list_conversations: () => this.#sorted(),
    create_conversation: (args) => {
      const title = typeof args.title === "string" ? args.title : "New conversation";
      return this.addConversation(title);
    },
    rename_conversation: (args) => {
      const conversation = this.#conversation(args.id);
      const title = String(args.title).trim().slice(0, 200);
      if (title === "") throw { kind: "invalid_input", message: "The title cannot be empty.", field: "title" };
      conversation.title = title;
      conversation.updated_at = ++this.#clock;
      return { ...conversation };
    },
    delete_conversation: (args) => {
      this.#conversation(args.id);
      this.conversations = this.conversations.filter((c) => c.id !== args.id);
      return null;
    },
    get_conversation: (args) => ({
      conversation: { ...this.#conversation(args.id) },
      messages: this.messages[String(args.id)] ?? [],
    }),
    list_provider_kinds: () => KINDS,
    list_providers: () => this.providers.map((p) => ({ ...p })),
    add_provider: (args) => {
      const input = args.provider as NewProvider;
      if (this.providers.some((p) => p.name === input.name)) {
        throw { kind: "conflict", message: `A provider named ${input.name} already exists.`, field: "name" };
      }
      const provider = this.addProviderRecord(input.name, input.kind, Boolean(input.api_key));
      if (input.base_url) provider.base_url = input.base_url;
      provider.default_model = input.default_model ?? null;
      return { ...provider };
    },
    set_provider_key: (args) => {
      const provider = this.#provider(args.name);
      provider.has_key = true;
      return { ...provider };
    },
    delete_provider_key: (args) => {
      const provider = this.#provider(args.name);
      provider.has_key = false;
      return { ...provider };
    },
    remove_provider: (args) => {
      this.#provider(args.name);
      this.providers = this.providers.filter((p) => p.name !== args.name);
      return null;
    },
    get_settings: () => ({ ...this.settings }),
    update_settings: (args) => {
      this.settings = { ...(args.settings as Settings) };
      return { ...this.settings };
    },
  };
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
