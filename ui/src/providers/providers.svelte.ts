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
// per model and kept here as last read.

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

  readonly #ui: UiStore;
  readonly #settings: SettingsStore;
  readonly #guard = new LatestOnly();
  /** whether `list_providers` has answered at least once */
  #loaded = false;
  /** provider name → the ticket of its latest model request; a forgotten list's answer is dropped */
  readonly #modelTickets = new Map<string, number>();
  /** `provider\u0000model` → the ticket of its latest images read; an older answer is dropped */
  readonly #imageTickets = new Map<string, number>();

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
    if (name in this.modelLists) {
      const { [name]: _dropped, ...rest } = this.modelLists;
      this.modelLists = rest;
    }
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
      if (isLatest()) this.#setModels(name, { state: "ready", models });
    } catch (err) {
      if (isLatest()) this.#setModels(name, { state: "failed", models: known, message: toIpcError(err).message });
    }
  }

  // ------------------------------------------------------------ images

  /** Whether `model` of `provider` is given images, as last read; null while not known. */
  takesImages(provider: string, model: string): boolean | null {
    return this.imageModels[imagesKey(provider, model)] ?? null;
  }

  /** Asks Rust whether `model` of `provider` is given images now; a failure leaves what was known. */
  async readImages(provider: string, model: string): Promise<void> {
    const key = imagesKey(provider, model);
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

/** One key for a model of a provider (names may hold any character but NUL). */
function imagesKey(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}
