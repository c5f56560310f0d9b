// The model providers: the configured ones, the kinds and presets the "Add a provider" form
// offers, each provider's models (asked for once per session), the local model servers found at
// a first start, and whether an OS keychain is reachable for their keys. Adding, re-keying,
// removing and testing a provider go through here.
//
// After every mutation the list is refreshed from Rust and only the latest-issued refresh may be
// applied (`LatestOnly`). A provider's model list carries a ticket: when the provider changes (its
// key, its existence) the list is forgotten and an answer already on its way is dropped. Removing
// a provider reloads the Settings (Rust may have cleared a default that named it); failures go to
// the UI store's toast. Whether a model is given images (the composer's switch) is asked of Rust
// per model and kept here as last read; so is how a model is given tools (the Providers page's
// Models section asks only for the rows it shows, and a list read again may have taught Rust
// anew, so its provider's are read again). A model fetched onto a local server (Ollama) is a
// pull kept here by provider, so it goes on while its dialog is hidden or the page changes; Rust
// answers a finished pull with the provider's models listed again, kept as its list.

import * as ipc from "../lib/ipc";
import { toIpcError } from "../lib/errors";
import { LatestOnly } from "../shared/latest";
import type { ModelList, ModelLists } from "../chat/model-choice";
import type {
  ConnectionFailure,
  ConnectionReport,
  KeychainStatus,
  LocalServer,
  ModelInfo,
  ModelWindow,
  NewProvider,
  Provider,
  ProviderKindInfo,
  ProviderPreset,
  PullProgress,
  ToolMode,
  ToolModeChoice,
} from "../lib/types";
import type { SettingsStore } from "../settings/settings.svelte";
import type { UiStore } from "../app/ui.svelte";

export class ProvidersStore {
  keychain = $state.raw<KeychainStatus | null>(null);
  list = $state.raw<Provider[]>([]);
  kinds = $state.raw<ProviderKindInfo[]>([]);
  presets = $state.raw<ProviderPreset[]>([]);
  /** provider name → its models, each asked for once per session (see `ensureModels`) */
  modelLists = $state.raw<ModelLists>({});
  /** local model servers found at first start and not yet used or dismissed */
  localServers = $state.raw<LocalServer[]>([]);
  /** `provider\u0000model` → whether Rust gives that model images now, as last read; absent: not known */
  imageModels = $state.raw<Readonly<Record<string, boolean>>>({});
  /** Counts the times the person said elsewhere that a model takes images: the switch reads again. */
  imagesSaid = $state(0);
  /** `provider\u0000model` → how Rust gives that model tools, as last read ("failed": it could
   *  not be read); absent: not read since its list was (re)loaded */
  toolModes = $state.raw<Readonly<Record<string, ToolModeChoice | "failed">>>({});
  /** provider name → its latest model pull (one at a time a provider here), until dismissed */
  pulls = $state.raw<Readonly<Record<string, ModelPull>>>({});

  readonly #ui: UiStore;
  readonly #settings: SettingsStore;
  readonly #guard = new LatestOnly();
  /** whether `list_providers` has answered at least once */
  #loaded = false;
  /** provider name → the ticket of its latest model request; a forgotten list's answer is dropped */
  readonly #modelTickets = new Map<string, number>();
  /** provider name → how many times its list was forgotten (its key or existence changed): a
   *  list a pull brings back from before is not kept */
  readonly #modelEpochs = new Map<string, number>();
  /** `provider\u0000model` → the ticket of its latest images read; an older answer is dropped */
  readonly #imageTickets = new Map<string, number>();
  /** `provider\u0000model` → the ticket of its latest tool mode read or write; an older answer is dropped */
  readonly #toolModeTickets = new Map<string, number>();
  /** `provider\u0000model` → the ticket of the read of its tool mode on its way, if any */
  readonly #toolModeReads = new Map<string, number>();
  /** provider name → the ticket of its latest pull; a message of an older one is dropped */
  readonly #pullTickets = new Map<string, number>();

  constructor(ui: UiStore, settings: SettingsStore) {
    this.#ui = ui;
    this.#settings = settings;
  }

  // ------------------------------------------------------------ derived

  get hasProvider(): boolean {
    return this.list.length > 0;
  }

  kindInfo(kind: string): ProviderKindInfo | undefined {
    return this.kinds.find((k) => k.kind === kind);
  }

  /**
   * The "Add a provider" choices: Rust's presets, or, should those not have
   * loaded, one per kind so the form still works.
   */
  get presetChoices(): ProviderPreset[] {
    if (this.presets.length > 0) return this.presets;
    return this.kinds.map((k) => ({
      id: k.kind,
      label: k.label,
      kind: k.kind,
      base_url: k.default_base_url,
      needs_key: k.needs_key,
      local: k.kind === "ollama",
    }));
  }

  /** Local servers to offer: only while no provider is configured. */
  get localOffers(): LocalServer[] {
    return this.list.length === 0 ? this.localServers : [];
  }

  // ------------------------------------------------------------ loading

  async refresh(): Promise<void> {
    const isLatest = this.#guard.begin();
    try {
      const list = await ipc.listProviders();
      this.#loaded = true;
      if (isLatest()) this.list = list;
    } catch (err) {
      if (isLatest()) this.#ui.report(err);
    }
  }

  async refreshKeychain(): Promise<void> {
    try {
      this.keychain = await ipc.keychainStatus();
    } catch (err) {
      this.#ui.report(err);
    }
  }

  async loadKinds(): Promise<void> {
    try {
      this.kinds = await ipc.listProviderKinds();
    } catch (err) {
      this.#ui.report(err);
    }
  }

  async loadPresets(): Promise<void> {
    try {
      this.presets = await ipc.listProviderPresets();
    } catch (err) {
      this.#ui.report(err);
    }
  }

  // ------------------------------------------------------------ providers

  #replace(updated: Provider): void {
    this.list = this.list.map((p) => (p.name === updated.name ? updated : p));
  }

  /**
   * @throws IpcError, for the form to show beside the field at fault
   */
  async add(provider: NewProvider): Promise<Provider> {
    try {
      const added = await ipc.addProvider(provider);
      this.#forgetModels(added.name);
      this.list = [...this.list.filter((p) => p.name !== added.name), added];
      return added;
    } finally {
      void this.refresh();
    }
  }

  /**
   * @throws IpcError
   */
  async setKey(name: string, apiKey: string): Promise<Provider> {
    try {
      const updated = await ipc.setProviderKey(name, apiKey);
      this.#replace(updated);
      this.#forgetModels(name);
      return updated;
    } finally {
      void this.refresh();
    }
  }

  /** The window of `model` of provider `name`, and whose word it is; null when nothing knows it. */
  async modelWindow(name: string, model: string): Promise<ModelWindow | null> {
    try {
      return await ipc.getModelWindow(name, model);
    } catch (err) {
      this.#ui.report(err);
      return null;
    }
  }

  /**
   * Sets the person's window for `model` (null forgets it); the window that counts now.
   * @throws IpcError
   */
  setModelWindow(name: string, model: string, tokens: number | null): Promise<ModelWindow | null> {
    return ipc.setModelWindow(name, model, tokens);
  }

  async deleteKey(name: string): Promise<void> {
    try {
      this.#replace(await ipc.deleteProviderKey(name));
      this.#forgetModels(name);
    } catch (err) {
      this.#ui.report(err);
    }
    await this.refresh();
  }

  async remove(name: string): Promise<void> {
    try {
      await ipc.removeProvider(name);
      this.list = this.list.filter((p) => p.name !== name);
      this.#forgetModels(name);
    } catch (err) {
      this.#ui.report(err);
    }
    // Rust may have cleared a default that named this provider.
    await Promise.all([this.refresh(), this.#settings.load()]);
  }

  /** Never rejects: a failure to reach the provider comes back as a report with `ok` false. */
  async test(name: string): Promise<ConnectionReport> {
    try {
      const report = await ipc.testProvider(name);
      if (report.ok) this.#setModels(name, { state: "ready", models: report.models });
      return report;
    } catch (err) {
      const error = toIpcError(err);
      // A failure before any answer (the backend, the keychain) is the app's own kind.
      return { ok: false, elapsed_ms: 0, models: [], error_kind: error.kind as ConnectionFailure, message: error.message };
    }
  }

  // ------------------------------------------------------------ local servers

  /** At a first start (no provider yet), asks once which local model servers are running. */
  async lookForLocalServers(): Promise<void> {
    if (!this.#loaded || this.list.length > 0) return;
    try {
      this.localServers = await ipc.detectLocalProviders();
    } catch {
      // Only an offer: a failed probe is not worth an error.
    }
  }

  /**
   * Adds a local server found at start as a provider (named as the server,
   * its first model as the default) and stops offering it. A failure goes to
   * the toast.
   */
  async useLocalServer(server: LocalServer): Promise<void> {
    try {
      const added = await this.add({
        name: server.label,
        kind: server.kind,
        base_url: server.base_url,
        default_model: server.suggested_model ?? server.models[0]?.id ?? null,
        api_key: null,
      });
      this.#setModels(added.name, { state: "ready", models: server.models });
      this.localServers = this.localServers.filter((s) => s.preset_id !== server.preset_id);
    } catch (err) {
      this.#ui.report(err);
    }
  }

  /** "Not now": no more offer of this server in this session. */
  dismissLocalServer(presetId: string): void {
    this.localServers = this.localServers.filter((s) => s.preset_id !== presetId);
  }

  // ------------------------------------------------------------ models

  #setModels(name: string, list: ModelList): void {
    this.modelLists = { ...this.modelLists, [name]: list };
  }

  /** Drops a provider's list (its key or existence changed); an answer on its way is ignored. */
  #forgetModels(name: string): void {
    this.#modelTickets.set(name, (this.#modelTickets.get(name) ?? 0) + 1);
    this.#modelEpochs.set(name, (this.#modelEpochs.get(name) ?? 0) + 1);
    if (name in this.modelLists) {
      const { [name]: _dropped, ...rest } = this.modelLists;
      this.modelLists = rest;
    }
    this.#forgetToolModes(name);
  }

  /** Asks for each named provider's models, unless this session already has (or is asking). */
  ensureModels(names: readonly string[]): void {
    for (const name of names) {
      if (!(name in this.modelLists)) void this.loadModels(name);
    }
  }

  /** Asks every provider for its models again ("Refresh models"). */
  refreshModels(): Promise<void> {
    return Promise.all(this.list.map((p) => this.loadModels(p.name))).then(() => undefined);
  }

  /** Asks one provider for its models; a failure is kept in its list, not toasted. */
  async loadModels(name: string): Promise<void> {
    const ticket = (this.#modelTickets.get(name) ?? 0) + 1;
    this.#modelTickets.set(name, ticket);
    const isLatest = () => this.#modelTickets.get(name) === ticket;
    const known: ModelInfo[] = this.modelLists[name]?.models ?? [];
    this.#setModels(name, { state: "loading", models: known });
    try {
      const models = await ipc.listModels(name);
      if (isLatest()) this.#keepListed(name, models);
    } catch (err) {
      if (isLatest()) this.#setModels(name, { state: "failed", models: known, message: toIpcError(err).message });
    }
  }

  /** Keeps `models` as provider `name`'s list, just listed by Rust; a request on its way is dropped. */
  #keepListed(name: string, models: ModelInfo[]): void {
    this.#modelTickets.set(name, (this.#modelTickets.get(name) ?? 0) + 1);
    this.#setModels(name, { state: "ready", models });
    // Rust learns from a listing how its models take tools: the modes shown are read again.
    this.#forgetToolModes(name);
  }

  // ------------------------------------------------------------ tool modes

  /** How `model` of `provider` is given tools, as last read; "failed", or undefined when not read. */
  toolModeOf(provider: string, model: string): ToolModeChoice | "failed" | undefined {
    return this.toolModes[modelKey(provider, model)];
  }

  /** Asks Rust how `model` of `provider` is given tools, unless a read of it is on its way. */
  readToolMode(provider: string, model: string): void {
    const key = modelKey(provider, model);
    if (this.#toolModeReads.has(key)) return;
    const ticket = this.#nextToolModeTicket(key);
    this.#toolModeReads.set(key, ticket);
    const isLatest = () => this.#toolModeTickets.get(key) === ticket;
    void ipc
      .modelToolMode(provider, model)
      .then(
        (choice) => {
          if (isLatest()) this.#keepToolMode(key, choice);
        },
        () => {
          // Shown as not known beside the model, not toasted for each row.
          if (isLatest()) this.toolModes = { ...this.toolModes, [key]: "failed" };
        },
      )
      .finally(() => {
        if (this.#toolModeReads.get(key) === ticket) this.#toolModeReads.delete(key);
      });
  }

  /**
   * The person's word on how `model` of `provider` is given tools (null: Automatic, their word
   * forgotten); what applies now. A read on its way meanwhile is dropped.
   * @throws IpcError
   */
  async setToolMode(provider: string, model: string, mode: ToolMode | null): Promise<ToolModeChoice> {
    const key = modelKey(provider, model);
    const ticket = this.#nextToolModeTicket(key);
    const choice = await ipc.setModelToolMode(provider, model, mode);
    if (this.#toolModeTickets.get(key) === ticket) this.#keepToolMode(key, choice);
    return choice;
  }

  #nextToolModeTicket(key: string): number {
    const ticket = (this.#toolModeTickets.get(key) ?? 0) + 1;
    this.#toolModeTickets.set(key, ticket);
    return ticket;
  }

  #keepToolMode(key: string, choice: ToolModeChoice): void {
    this.toolModes = { ...this.toolModes, [key]: choice };
  }

  /** Drops what was read of the tool modes of `provider`'s models: a row shown reads again. */
  #forgetToolModes(provider: string): void {
    const prefix = `${provider}\u0000`;
    const kept = Object.entries(this.toolModes).filter(([key]) => !key.startsWith(prefix));
    if (kept.length !== Object.keys(this.toolModes).length) this.toolModes = Object.fromEntries(kept);
    // An answer on its way is of before: dropped, and the row may ask again at once.
    for (const key of [...this.#toolModeReads.keys()]) {
      if (key.startsWith(prefix)) {
        this.#toolModeReads.delete(key);
        this.#nextToolModeTicket(key);
      }
    }
  }

  // ------------------------------------------------------------ local models

  /** `provider`'s latest pull, until dismissed. */
  pullOf(provider: string): ModelPull | null {
    return this.pulls[provider] ?? null;
  }

  #setPull(provider: string, pull: ModelPull | null): void {
    if (pull) {
      this.pulls = { ...this.pulls, [provider]: pull };
    } else if (provider in this.pulls) {
      const { [provider]: _dropped, ...rest } = this.pulls;
      this.pulls = rest;
    }
  }

  /**
   * Fetches `model` onto `provider`'s machine, its progress kept in `pulls`; once it is there,
   * the models Rust listed again are kept as the provider's list (read again if Rust could not
   * list them). Never rejects: a failure is kept in the pull (a field's, such as an empty name,
   * with its field), and a download stopped (Rust rejects it as cancelled) is "cancelled".
   */
  async pullModel(provider: string, model: string): Promise<void> {
    if (this.pulls[provider]?.state === "running") return;
    const ticket = (this.#pullTickets.get(provider) ?? 0) + 1;
    this.#pullTickets.set(provider, ticket);
    const isLatest = () => this.#pullTickets.get(provider) === ticket;
    const running = (): ModelPull | null => {
      const pull = this.pulls[provider];
      return isLatest() && pull?.state === "running" ? pull : null;
    };
    const epoch = this.#modelEpochs.get(provider) ?? 0;
    this.#setPull(provider, { model, state: "running", progress: null, cancelling: false });
    try {
      const models = await ipc.pullModel(provider, model, (progress) => {
        const pull = running();
        if (pull) this.#setPull(provider, { ...pull, progress });
      });
      if (!isLatest()) return;
      this.#setPull(provider, { model, state: "done", progress: this.pulls[provider]?.progress ?? null, cancelling: false });
      if (models && (this.#modelEpochs.get(provider) ?? 0) === epoch) this.#keepListed(provider, models);
      else if (this.list.some((p) => p.name === provider)) await this.loadModels(provider);
    } catch (err) {
      if (!isLatest()) return;
      const error = toIpcError(err);
      const pull = this.pulls[provider];
      this.#setPull(provider, {
        model,
        state: error.kind === "cancelled" ? "cancelled" : "failed",
        progress: pull?.progress ?? null,
        cancelling: false,
        message: error.message,
        field: error.field,
      });
    }
  }

  /** Asks Rust to stop `provider`'s pull; whether one was running there. */
  async cancelPull(provider: string): Promise<boolean> {
    const pull = this.pulls[provider];
    if (pull?.state !== "running") return false;
    this.#setPull(provider, { ...pull, cancelling: true });
    try {
      return await ipc.cancelModelPull(provider, pull.model);
    } catch (err) {
      this.#ui.report(err);
      // Not stopped: Cancel download is offered again.
      const now = this.pulls[provider];
      if (now?.state === "running" && now.cancelling) this.#setPull(provider, { ...now, cancelling: false });
      return false;
    }
  }

  /** Forgets `provider`'s pull once it is over (its dialog was closed). */
  dismissPull(provider: string): void {
    if (this.pulls[provider]?.state !== "running") this.#setPull(provider, null);
  }

  /**
   * Deletes `model` from `provider`'s machine, then reads its models again.
   * @throws IpcError
   */
  async removeModel(provider: string, model: string): Promise<void> {
    await ipc.removeModel(provider, model);
    await this.loadModels(provider);
  }

  // ------------------------------------------------------------ images

  /** Whether `model` of `provider` is given images, as last read; null while not known. */
  takesImages(provider: string, model: string): boolean | null {
    return this.imageModels[modelKey(provider, model)] ?? null;
  }

  /** Asks Rust whether `model` of `provider` is given images now; a failure leaves what was known. */
  async readImages(provider: string, model: string): Promise<void> {
    const key = modelKey(provider, model);
    const ticket = (this.#imageTickets.get(key) ?? 0) + 1;
    this.#imageTickets.set(key, ticket);
    try {
      const takes = await ipc.modelImages(provider, model);
      if (this.#imageTickets.get(key) === ticket) this.imageModels = { ...this.imageModels, [key]: takes };
    } catch {
      // Only a switch: a model Rust cannot judge shows none (or the word last read), and no toast each time it shows.
    }
  }

  /**
   * The person's word on whether `model` of `provider` takes images; then read again.
   * @throws IpcError
   */
  async setImages(provider: string, model: string, takes: boolean): Promise<void> {
    await ipc.setModelImages(provider, model, takes);
    await this.readImages(provider, model);
  }

  /**
   * The person says the model conversation `conversationId` chats with takes images (a send was
   * refused for them): Rust keeps that word, and the switch reads again. Resolves the model's name.
   * @throws IpcError
   */
  async allowImagesIn(conversationId: string): Promise<string> {
    const model = await ipc.allowModelImages(conversationId);
    this.imagesSaid++;
    return model;
  }
}

/** A model's download onto a local provider's machine, as the Providers page shows it. */
export interface ModelPull {
  model: string;
  state: "running" | "done" | "failed" | "cancelled";
  /** the last step the server told, if any yet */
  progress: PullProgress | null;
  /** the person asked to stop it (Rust is stopping it) */
  cancelling: boolean;
  /** why it failed (or Rust's word on its cancelling) */
  message?: string;
  /** the field Rust named at fault ("model"), if any */
  field?: string | null;
}

/** One key for a model of a provider (names may hold any character but NUL). */
function modelKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}
