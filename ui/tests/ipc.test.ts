import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn() }));

import { invoke } from "@tauri-apps/api/core";
import * as ipc from "../src/lib/ipc";
import { IpcError } from "../src/lib/ipc";

const invokeMock = vi.mocked(invoke);

beforeEach(() => {
  invokeMock.mockReset();
});

describe("ipc", () => {
  it("is called by the stores, never by a component (house style, point 14)", () => {
    const svelteFiles = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? svelteFiles(join(dir, entry.name)) : entry.name.endsWith(".svelte") ? [join(dir, entry.name)] : [],
      );
    const files = svelteFiles(join(__dirname, "../src"));
    expect(files.length).toBeGreaterThan(20);
    const callers = files.filter((file) => /(from\s+|import\s*\(\s*)["'][./]*(lib\/)?ipc["']|@tauri-apps\/api\/core/.test(readFileSync(file, "utf8")));
    expect(callers).toEqual([]);
  });

  it("turns a rejected {kind,message,field} into an IpcError", async () => {
    invokeMock.mockRejectedValueOnce({ kind: "invalid_input", message: "Name is empty.", field: "name" });
    const error = await ipc.listProviders().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IpcError);
    expect(error).toMatchObject({ kind: "invalid_input", message: "Name is empty.", field: "name" });
  });

  it("gives an IpcError without a field a null field", async () => {
    invokeMock.mockRejectedValueOnce({ kind: "not_found", message: "No such conversation." });
    const error = (await ipc.getConversation("x").catch((e: unknown) => e)) as IpcError;
    expect(error.kind).toBe("not_found");
    expect(error.field).toBeNull();
  });

  it("turns a rejected plain string into an IpcError of kind internal", async () => {
    invokeMock.mockRejectedValueOnce("command list_things not found");
    const error = (await ipc.appStatus().catch((e: unknown) => e)) as IpcError;
    expect(error).toBeInstanceOf(IpcError);
    expect(error.kind).toBe("internal");
    expect(error.message).toBe("command list_things not found");
  });

  it("reads a string holding a JSON command error as that error", async () => {
    invokeMock.mockRejectedValueOnce('{"kind":"conflict","message":"Name taken.","field":"name"}');
    const error = (await ipc.addProvider({ name: "a", kind: "openai" }).catch((e: unknown) => e)) as IpcError;
    expect(error).toMatchObject({ kind: "conflict", message: "Name taken.", field: "name" });
  });

  it("turns a thrown Error into an IpcError with its message", async () => {
    invokeMock.mockRejectedValueOnce(new RangeError("too deep"));
    const error = (await ipc.appStatus().catch((e: unknown) => e)) as IpcError;
    expect(error).toBeInstanceOf(IpcError);
    expect(error.message).toBe("too deep");
  });

  it("explains a missing backend when the page runs outside the app", async () => {
    invokeMock.mockRejectedValueOnce(new TypeError("Cannot read properties of undefined (reading 'invoke')"));
    const error = (await ipc.appStatus().catch((e: unknown) => e)) as IpcError;
    expect(error.message).toBe("Switchboard's backend is not reachable: this page is running outside the app.");
  });

  it("returns what the command resolved with", async () => {
    const conversations = [{ id: "a", title: "T", created_at: 1, updated_at: 2 }];
    invokeMock.mockResolvedValueOnce(conversations);
    await expect(ipc.listConversations()).resolves.toEqual(conversations);
  });

  it("calls each command by its Rust name with camelCase argument keys", async () => {
    invokeMock.mockResolvedValue(null);
    const settings = {
      theme: "dark" as const,
      default_provider: null,
      default_model: null,
      max_rounds: 10,
      tool_timeout_secs: 60,
      run_time_limit_secs: 600,
      describe_calls: false,
      default_system_prompt: "",
      mcp_registry: "https://registry.modelcontextprotocol.io",
      keep_alive: "",
      audit_retention_days: 365,
      keep_running_in_background: false,
      memory: false,
    };
    const provider = { name: "Work", kind: "openai" as const, base_url: null, default_model: "gpt", api_key: "sk" };
    await ipc.appStatus();
    await ipc.listConversations();
    await ipc.createConversation(null);
    await ipc.renameConversation("c1", "New title");
    await ipc.setSystemPrompt("c1", "Be brief.");
    await ipc.deleteConversation("c1");
    await ipc.getConversation("c1");
    await ipc.keychainStatus();
    await ipc.listProviderKinds();
    await ipc.listProviders();
    await ipc.addProvider(provider);
    await ipc.updateProvider("Work", null, "gpt-4o");
    await ipc.setProviderKey("Work", "sk-new");
    await ipc.deleteProviderKey("Work");
    await ipc.removeProvider("Work");
    await ipc.getSettings();
    await ipc.updateSettings(settings);
    await ipc.listProviderPresets();
    await ipc.testProvider("Work");
    await ipc.listModels("Work");
    await ipc.detectLocalProviders();
    await ipc.setConversationModel("c1", "Work", "gpt-4o");
    await ipc.setConversationModel("c1", null, null);

    expect(invokeMock.mock.calls).toEqual([
      ["app_status", undefined],
      ["list_conversations", undefined],
      ["create_conversation", { title: null, profile: null }],
      ["rename_conversation", { id: "c1", title: "New title" }],
      ["set_system_prompt", { id: "c1", systemPrompt: "Be brief." }],
      ["delete_conversation", { id: "c1" }],
      ["get_conversation", { id: "c1" }],
      ["keychain_status", undefined],
      ["list_provider_kinds", undefined],
      ["list_providers", undefined],
      ["add_provider", { provider }],
      ["update_provider", { name: "Work", baseUrl: null, defaultModel: "gpt-4o" }],
      ["set_provider_key", { name: "Work", apiKey: "sk-new" }],
      ["delete_provider_key", { name: "Work" }],
      ["remove_provider", { name: "Work" }],
      ["get_settings", undefined],
      ["update_settings", { settings }],
      ["list_provider_presets", undefined],
      ["test_provider", { name: "Work" }],
      ["list_models", { name: "Work" }],
      ["detect_local_providers", undefined],
      ["set_conversation_model", { id: "c1", provider: "Work", model: "gpt-4o" }],
      ["set_conversation_model", { id: "c1", provider: null, model: null }],
    ]);
  });

  it("calls the price and usage commands with the prices as typed and camelCase keys", async () => {
    invokeMock.mockResolvedValue(null);
    await ipc.listPrices();
    await ipc.setModelPrice("Work", "gpt-4o", "2.50", "10", null);
    await ipc.setModelPrice("Work", "gpt-4o", null, null, null);
    await ipc.conversationUsage("c1");
    await ipc.usageReport(1_700_000_000_000);

    expect(invokeMock.mock.calls).toEqual([
      ["list_prices", undefined],
      ["set_model_price", { provider: "Work", model: "gpt-4o", input: "2.50", output: "10", cached: null }],
      ["set_model_price", { provider: "Work", model: "gpt-4o", input: null, output: null, cached: null }],
      ["conversation_usage", { conversationId: "c1" }],
      ["usage_report", { since: 1_700_000_000_000 }],
    ]);
  });
});
