// The Settings page against the real core: its defaults, its checks and what it keeps.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { Settings } from "../src/lib/types";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;
let defaults: Settings;

beforeEach(async () => {
  backend = await installRealBackend();
  defaults = await backend.seed(() => ipc.getSettings());
});

async function openSettings() {
  const { app, user } = await renderApp();
  await user.click(screen.getByTestId("nav-settings"));
  const form = screen.getByTestId("settings-form");
  const field = (name: string) => form.querySelector(`[name="${name}"]`) as HTMLInputElement | HTMLSelectElement;
  return { app, user, field };
}

describe("settings", () => {
  it("refuses a default system prompt over 32,000 characters beside its box", async () => {
    const { user } = await openSettings();
    const prompt = screen.getByTestId("settings-system-prompt") as HTMLTextAreaElement;
    await user.clear(prompt);
    await user.click(prompt);
    await user.paste("x".repeat(32_001));
    await user.click(screen.getByTestId("settings-save"));
    expect((await screen.findByTestId("error-default_system_prompt")).textContent).toContain("at most 32000");
    expect(backend.callsTo("update_settings")).toHaveLength(0);
  });

  it("takes an organisation's own MCP Registry address and refuses one that is not http(s) beside its box", async () => {
    const { user, field } = await openSettings();
    const registry = screen.getByTestId("settings-mcp-registry") as HTMLInputElement;
    expect(registry.value).toBe("https://registry.modelcontextprotocol.io");
    await user.clear(registry);
    await user.type(registry, "registry.example.com");
    await user.click(screen.getByTestId("settings-save"));
    expect((await screen.findByTestId("error-mcp_registry")).textContent).toContain("http:// or https://");
    expect(backend.callsTo("update_settings")).toHaveLength(0);
    await user.clear(field("mcp_registry"));
    await user.type(field("mcp_registry"), " https://mcp.example.com/registry ");
    await user.click(screen.getByTestId("settings-save"));
    await screen.findByTestId("settings-saved");
    expect((backend.callsTo("update_settings")[0].args as { settings: { mcp_registry: string } }).settings.mcp_registry).toBe(
      "https://mcp.example.com/registry",
    );
  });

  it("shows the run time limit in minutes and the saved values", async () => {
    await backend.addProvider("Work");
    await backend.seed(() => ipc.updateSettings({ ...defaults, default_provider: "Work", run_time_limit_secs: 1800, max_rounds: 7 }));
    const { field } = await openSettings();
    expect(field("theme").value).toBe("system");
    expect([...(field("theme") as HTMLSelectElement).options].map((o) => o.value)).toEqual(["light", "dark", "system"]);
    expect(field("default_provider").value).toBe("Work");
    expect(field("max_rounds").value).toBe("7");
    expect(field("tool_timeout_secs").value).toBe("60");
    expect(field("run_time_limit_minutes").value).toBe("30");
  });

  it("saves minutes as seconds, applies the theme and says Saved", async () => {
    await backend.addProvider("Work");
    const { user, field } = await openSettings();
    await user.selectOptions(field("theme"), "dark");
    await user.selectOptions(field("default_provider"), "Work");
    await user.type(field("default_model"), "gpt-4o");
    await user.clear(field("run_time_limit_minutes"));
    await user.type(field("run_time_limit_minutes"), "45");
    expect((field("describe_calls") as HTMLInputElement).checked).toBe(false);
    await user.click(field("describe_calls"));
    const prompt = screen.getByTestId("settings-system-prompt") as HTMLTextAreaElement;
    expect(prompt.value).toBe(defaults.default_system_prompt);
    await user.type(prompt, " Answer briefly.");
    expect(screen.getByTestId("settings-unsaved").textContent).toBe("Unsaved changes");
    await user.click(screen.getByTestId("settings-save"));

    await screen.findByTestId("settings-saved");
    expect(screen.queryByTestId("settings-unsaved")).toBeNull();
    expect(backend.callsTo("update_settings")[0].args).toEqual({
      settings: {
        theme: "dark",
        default_provider: "Work",
        default_model: "gpt-4o",
        max_rounds: 10,
        tool_timeout_secs: 60,
        run_time_limit_secs: 2700,
        describe_calls: true,
        default_system_prompt: `${defaults.default_system_prompt} Answer briefly.`,
        mcp_registry: "https://registry.modelcontextprotocol.io",
        keep_alive: "",
        audit_retention_days: 365,
        keep_running_in_background: false,
        memory: false,
      },
    });
    expect(document.documentElement.dataset.theme).toBe("dark");

    await user.type(field("max_rounds"), "1");
    expect(screen.queryByTestId("settings-saved")).toBeNull();
  });

  it("refuses out-of-range limits beside their fields without saving", async () => {
    const { user, field } = await openSettings();
    await user.clear(field("max_rounds"));
    await user.type(field("max_rounds"), "101");
    await user.clear(field("tool_timeout_secs"));
    await user.clear(field("run_time_limit_minutes"));
    await user.type(field("run_time_limit_minutes"), "1441");
    await user.click(screen.getByTestId("settings-save"));
    expect(screen.getByTestId("error-max_rounds").textContent).toContain("1 to 100");
    expect(screen.getByTestId("error-tool_timeout_secs")).toBeTruthy();
    expect(screen.getByTestId("error-run_time_limit_minutes").textContent).toContain("1 to 1440");
    expect(backend.callsTo("update_settings")).toHaveLength(0);
    expect(screen.queryByTestId("settings-saved")).toBeNull();
  });

  it("keeps local models loaded for the time typed, and refuses one Ollama would not read beside its field", async () => {
    const { user, field } = await openSettings();
    const keep = screen.getByTestId("settings-keep-alive") as HTMLInputElement;
    expect(keep.value).toBe("");
    expect(keep.getAttribute("name")).toBe("keep_alive");
    expect(keep.labels?.[0]?.textContent?.trim()).toBe("Keep local models loaded for");
    const hint = document.getElementById(keep.getAttribute("aria-describedby")!)!;
    expect(hint.textContent).toContain("5m, 1h, 0 to unload at once, -1 to keep it loaded; empty for the server's default");

    await user.type(keep, "5 minutes");
    await user.click(screen.getByTestId("settings-save"));
    const error = screen.getByTestId("error-keep_alive");
    expect(error.textContent).toContain("30s, 5m or 1h");
    expect(keep.getAttribute("aria-invalid")).toBe("true");
    expect(keep.getAttribute("aria-describedby")).toBe(error.id);
    expect(document.activeElement).toBe(keep);
    expect(backend.callsTo("update_settings")).toHaveLength(0);

    await user.clear(field("keep_alive"));
    await user.type(field("keep_alive"), " 10m ");
    expect(screen.queryByTestId("error-keep_alive")).toBeNull();
    await user.click(screen.getByTestId("settings-save"));
    await screen.findByTestId("settings-saved");
    expect((backend.callsTo("update_settings")[0].args as { settings: Settings }).settings.keep_alive).toBe("10m");
    expect((await backend.seed(() => ipc.getSettings())).keep_alive).toBe("10m");
    expect(field("keep_alive").value).toBe("10m");

    await user.clear(field("keep_alive"));
    await user.type(field("keep_alive"), "-1");
    await user.click(screen.getByTestId("settings-save"));
    await waitFor(async () => expect((await backend.seed(() => ipc.getSettings())).keep_alive).toBe("-1"));
  });

  it("shows Rust's refusal of a keep_alive beside its field", async () => {
    // What Rust refuses, it refuses on this field, in the form's own words: the form shows it there.
    await expect(backend.seed(() => ipc.updateSettings({ ...defaults, keep_alive: "1d" }))).rejects.toMatchObject({
      kind: "invalid_input",
      field: "keep_alive",
      message: "Enter how long as 30s, 5m or 1h, 0 to unload at once, or -1 to keep it loaded; or leave it empty.",
    });
    backend.failNext("update_settings", { kind: "invalid_input", message: "Ollama cannot read this.", field: "keep_alive" });
    const { user } = await openSettings();
    await user.type(screen.getByTestId("settings-keep-alive"), "5m");
    await user.click(screen.getByTestId("settings-save"));
    expect((await screen.findByTestId("error-keep_alive")).textContent).toBe("Ollama cannot read this.");
    expect(screen.queryByTestId("settings-saved")).toBeNull();
  });

  it("shows a server error on run_time_limit_secs beside the minutes field", async () => {
    backend.failNext("update_settings", {
      kind: "invalid_input",
      message: "The run time limit is out of range.",
      field: "run_time_limit_secs",
    });
    const { user } = await openSettings();
    await user.click(screen.getByTestId("settings-save"));
    expect((await screen.findByTestId("error-run_time_limit_minutes")).textContent).toBe(
      "The run time limit is out of range.",
    );
    expect(screen.queryByTestId("settings-saved")).toBeNull();
  });
});

describe("settings › the list of sections", () => {
  /** The elements scrolled into view, in order (jsdom scrolls nothing). */
  let scrolled: Element[];

  beforeEach(() => {
    scrolled = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this);
    };
  });

  afterEach(() => {
    delete (Element.prototype as Partial<Element>).scrollIntoView;
  });

  const current = (nav: HTMLElement) =>
    within(nav)
      .getAllByRole("button")
      .filter((b) => b.getAttribute("aria-current") === "true")
      .map((b) => b.textContent?.trim());

  it("lists every section, moves to the one pressed (by mouse or keyboard) and marks it current", async () => {
    const { user } = await openSettings();
    const nav = screen.getByRole("navigation", { name: "Settings sections" });
    await waitFor(() => expect(within(nav).getAllByRole("button")).toHaveLength(12));
    expect(within(nav).getAllByRole("button").map((b) => b.textContent?.trim())).toEqual([
      "Appearance",
      "New chats",
      "Tool run limits",
      "Activity record",
      "Local models",
      "MCP registry",
      "Profiles",
      "Tool approvals",
      "Policies",
      "Command line",
      "Updates",
      "About",
    ]);
    expect(current(nav)).toEqual(["Appearance"]);

    await user.click(within(nav).getByRole("button", { name: "Updates" }));
    const updates = screen.getByTestId("updates-section");
    expect(current(nav)).toEqual(["Updates"]);
    expect(scrolled).toEqual([updates]);
    // The focus moves into the section, so Tab goes on from there.
    expect(document.activeElement).toBe(updates);

    within(nav).getByRole("button", { name: "Tool run limits" }).focus();
    await user.keyboard("{Enter}");
    const limits = screen.getByTestId("settings-form").querySelector('[data-section="tool-runs"]');
    expect(limits?.querySelector("h2")?.textContent).toBe("Tool run limits");
    expect(current(nav)).toEqual(["Tool run limits"]);
    expect(scrolled.at(-1)).toBe(limits);
    expect(document.activeElement).toBe(limits);
    await user.tab();
    expect(document.activeElement).toBe(screen.getByTestId("settings-form").querySelector('[name="max_rounds"]'));

    // Each section's title is inside its card, a heading (no legend, which WebKitGTK drew on the
    // card's border); the form's cards are groups named by it.
    for (const testid of ["standing-approvals", "policies-section", "command-line-section", "updates-section"]) {
      const card = screen.getByTestId(testid);
      expect(card.classList.contains("card")).toBe(true);
      expect(card.querySelector("h2")).toBeTruthy();
    }
    const form = screen.getByTestId("settings-form");
    expect(form.querySelector("legend")).toBeNull();
    for (const title of ["Appearance", "Defaults for new chats", "Tool run limits", "Activity record", "Local models", "MCP registry"]) {
      const group = within(form).getByRole("group", { name: title });
      expect(group.classList.contains("card")).toBe(true);
      expect(group.querySelector("h2")?.textContent).toBe(title);
    }
  });
});
