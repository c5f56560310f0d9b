import { describe, expect, it } from "vitest";
import {
  draftToSettings,
  emptyProviderDraft,
  isHttpUrl,
  isKeepAlive,
  providerInputFor,
  settingsInputFor,
  settingsToDraft,
  toNewProvider,
  uniqueProviderName,
  validateProviderDraft,
  validateSettingsDraft,
} from "../src/shared/validation";

describe("provider form checks", () => {
  it("the base URL check accepts http and https only", () => {
    expect(isHttpUrl("https://api.openai.com/v1")).toBe(true);
    expect(isHttpUrl("http://localhost:11434")).toBe(true);
    expect(isHttpUrl("  HTTPS://Example.com  ")).toBe(true);
    expect(isHttpUrl("ftp://example.com")).toBe(false);
    expect(isHttpUrl("api.openai.com")).toBe(false);
    expect(isHttpUrl("javascript:alert(1)")).toBe(false);
    expect(isHttpUrl("https://")).toBe(false);
    expect(isHttpUrl("")).toBe(false);
  });

  it("refuses an empty name and a non-http base URL, and allows an empty base URL", () => {
    const draft = { ...emptyProviderDraft("openai"), name: "   ", base_url: "file:///etc" };
    expect(Object.keys(validateProviderDraft(draft)).sort()).toEqual(["base_url", "name"]);
    expect(validateProviderDraft({ ...draft, name: "Work", base_url: "" })).toEqual({});
  });

  it("refuses an empty base URL for a server that has no usual address", () => {
    const draft = { ...emptyProviderDraft("openai_compatible"), name: "Box", base_url: "  " };
    expect(validateProviderDraft(draft, { baseUrlRequired: true }).base_url).toMatch(/address/);
    expect(validateProviderDraft({ ...draft, base_url: "http://10.0.0.2:5000/v1" }, { baseUrlRequired: true })).toEqual(
      {},
    );
  });

  it("sends empty optional fields as null and trims the name", () => {
    const draft = { ...emptyProviderDraft("openai"), name: "  Work ", api_key: "sk-1" };
    expect(toNewProvider(draft, "openai")).toEqual({
      name: "Work",
      kind: "openai",
      base_url: null,
      default_model: null,
      api_key: "sk-1",
    });
  });

  it("sends a key typed for a local server (it may sit behind a proxy that asks for one)", () => {
    const draft = { ...emptyProviderDraft("ollama"), name: "Local", api_key: "proxy-key" };
    expect(toNewProvider(draft, "ollama").api_key).toBe("proxy-key");
    expect(toNewProvider({ ...draft, api_key: "" }, "ollama").api_key).toBeNull();
  });

  it("shows a kind error Rust reports beside the provider select", () => {
    expect(providerInputFor("kind")).toBe("preset");
    expect(providerInputFor("base_url")).toBe("base_url");
  });

  it("names a new provider after its preset, numbered when the name is taken", () => {
    expect(uniqueProviderName("Ollama", [])).toBe("Ollama");
    expect(uniqueProviderName("Ollama", ["Ollama", "Ollama 2"])).toBe("Ollama 3");
  });
});

describe("settings checks", () => {
  const settings = {
    theme: "dark" as const,
    default_provider: "Work",
    default_model: null,
    max_rounds: 10,
    tool_timeout_secs: 60,
    run_time_limit_secs: 600,
    describe_calls: false,
    default_system_prompt: "Be brief.",
    mcp_registry: "https://registry.modelcontextprotocol.io",
    keep_alive: "5m",
    audit_retention_days: 90,
    keep_running_in_background: false,
    memory: false,
  };

  it("shows the run time limit in minutes and stores it in seconds", () => {
    const draft = settingsToDraft(settings);
    expect(draft.run_time_limit_minutes).toBe(10);
    expect(draft.default_model).toBe("");
    expect(draftToSettings({ ...draft, run_time_limit_minutes: 90 })).toEqual({
      ...settings,
      run_time_limit_secs: 5400,
    });
  });

  it("sends no default provider as null", () => {
    const draft = { ...settingsToDraft(settings), default_provider: "" };
    expect(draftToSettings(draft).default_provider).toBeNull();
  });

  it("accepts the limits at their bounds and refuses just past them", () => {
    const base = settingsToDraft(settings);
    const ok = [
      { max_rounds: 1, tool_timeout_secs: 1, run_time_limit_minutes: 1, audit_retention_days: 1 },
      { max_rounds: 100, tool_timeout_secs: 3600, run_time_limit_minutes: 1440, audit_retention_days: 36_500 },
    ];
    for (const limits of ok) expect(validateSettingsDraft({ ...base, ...limits })).toEqual({});
    const bad = validateSettingsDraft({
      ...base,
      max_rounds: 101,
      tool_timeout_secs: 0,
      run_time_limit_minutes: 1441,
      audit_retention_days: 36_501,
    });
    expect(Object.keys(bad).sort()).toEqual(["audit_retention_days", "max_rounds", "run_time_limit_minutes", "tool_timeout_secs"]);
    expect(validateSettingsDraft({ ...base, audit_retention_days: 0 }).audit_retention_days).toBe("Enter a number from 1 to 36500.");
    expect(validateSettingsDraft({ ...base, max_rounds: null }).max_rounds).toMatch(/Enter/);
    expect(validateSettingsDraft({ ...base, max_rounds: 2.5 }).max_rounds).toMatch(/whole number/);
  });

  it("takes a keep_alive as Rust does (a duration Ollama reads, or empty), trimmed", () => {
    for (const good of ["", "5m", "1h", "30s", "300", "0", "-1", " 10m "]) expect(isKeepAlive(good)).toBe(true);
    for (const bad of ["5 minutes", "m", "-5m", "1d", "1e9", "12345678901", "٣m"]) expect(isKeepAlive(bad)).toBe(false);
    const base = settingsToDraft(settings);
    // In Rust's own words (settings.rs), so either check says the same.
    expect(validateSettingsDraft({ ...base, keep_alive: "1d" }).keep_alive).toBe(
      "Enter how long as 30s, 5m or 1h, 0 to unload at once, or -1 to keep it loaded; or leave it empty.",
    );
    expect(draftToSettings({ ...base, keep_alive: " 1h " }).keep_alive).toBe("1h");
  });

  it("shows an error Rust reports on run_time_limit_secs beside the minutes field", () => {
    expect(settingsInputFor("run_time_limit_secs")).toBe("run_time_limit_minutes");
    expect(settingsInputFor("max_rounds")).toBe("max_rounds");
  });
});
