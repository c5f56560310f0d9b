// Profiles (issue 18) against the real core: the store, Settings › Profiles (the list, its
// actions and the form, with Rust's refusals beside their fields), the sidebar's menu that starts
// a conversation from a profile, and the conversation header's switch of profile. The MCP
// servers are the fault peer (tests/peers/fault_server.py) under the names the tests give it.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import { IpcError } from "../src/lib/errors";
import * as ipc from "../src/lib/ipc";
import { draftToFields, profileToDraft, toolsOffLabel, validateProfileDraft, withServer, withTool } from "../src/profiles/profiles";
import type { Profile, ProfileFields } from "../src/lib/types";
import { emptyProfileFields } from "./test-helpers";
import { installRealBackend, peer, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";
import { newStores } from "./render-with-stores";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** A profile Rust keeps, made its default when `isDefault`. */
async function addProfile(name: string, fields: Partial<ProfileFields> = {}, isDefault = false): Promise<Profile> {
  const profile = await backend.seed(() => ipc.createProfile(name, { ...emptyProfileFields(), ...fields }));
  if (isDefault) await backend.seed(() => ipc.setDefaultProfile(profile.id));
  return profile;
}

/** The profiles Rust keeps, and its conversations (newest first), as they are now. */
const profilesNow = () => backend.seed(() => ipc.listProfiles());
const conversationsNow = () => backend.seed(async () => Promise.all((await ipc.listConversations()).map(async (c) => (await ipc.getConversation(c.id)).conversation)));

/** A folder of its own under the system's temporary folder. */
const folder = () => mkdtempSync(join(tmpdir(), "switchboard-profiles-"));

/** From now on the person picks, at Rust's Open dialog, a profile file holding `name` and `fields`. */
async function pickProfileFile(name: string, fields: Partial<ProfileFields>): Promise<void> {
  const file = join(folder(), `${name}.json`);
  writeFileSync(file, JSON.stringify({ kind: "switchboard.profile", version: 1, name, ...fields }));
  await backend.host({ file });
}

async function openSettings() {
  const view = await renderApp();
  await view.user.click(screen.getByTestId("nav-settings"));
  // The section is a chunk of its own, loaded the first time Settings opens.
  const section = await screen.findByTestId("profiles-section", undefined, { timeout: 10000 });
  return { ...view, section };
}

function item(name: string): HTMLElement {
  const found = screen.queryAllByTestId("profile-item").find((el) => el.dataset.name === name);
  if (!found) throw new Error(`no profile item named ${name}`);
  return found;
}

function names(): string[] {
  return screen.queryAllByTestId("profile-item").map((el) => el.dataset.name ?? "");
}

describe("the profiles store", () => {
  it("lists by name, creates, refuses a taken name (any case) on the name field, copies, and keeps one default", async () => {
    await addProfile("research");
    const stores = newStores();
    const { profiles } = stores;
    await profiles.load();
    expect(profiles.all.map((p) => p.name)).toEqual(["research"]);

    const coding = await profiles.create("Coding", { ...emptyProfileFields(), max_rounds: 5 });
    expect(coding).toMatchObject({ name: "Coding", max_rounds: 5, is_default: false });
    expect(profiles.all.map((p) => p.name)).toEqual(["Coding", "research"]);

    const refused = await profiles.create("RESEARCH", emptyProfileFields()).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(IpcError);
    expect(refused).toMatchObject({ kind: "conflict", field: "name" });

    const copy = await profiles.duplicate(coding.id);
    expect(copy?.name).toBe("Coding (copy)");
    expect((await profiles.duplicate(coding.id))?.name).toBe("Coding (copy) (2)");

    await profiles.setDefault(coding.id);
    expect(profiles.defaultProfile?.id).toBe(coding.id);
    await profiles.setDefault(copy!.id);
    expect(profiles.all.filter((p) => p.is_default).map((p) => p.id)).toEqual([copy!.id]);
    await profiles.setDefault(null);
    expect(profiles.defaultProfile).toBeNull();
    expect(backend.callsTo("set_default_profile").at(-1)?.args).toEqual({ id: null });
  });

  it("deletes a profile: the conversations that followed it follow none and keep what they had", async () => {
    const coding = await addProfile("Coding", { system_prompt: "Write code." });
    const stores = newStores();
    await stores.profiles.load();
    await stores.conversations.create({ kind: "named", id: coding.id });
    const [created] = await conversationsNow();
    expect(created).toMatchObject({ profile_id: coding.id, system_prompt: "Write code." });
    await waitFor(() => expect(stores.conversations.list[0]?.profile_id).toBe(coding.id));

    await stores.profiles.remove(coding.id);
    expect(stores.profiles.all).toEqual([]);
    expect(stores.conversations.list[0]).toMatchObject({ profile_id: null, system_prompt: "Write code." });
    expect((await conversationsNow())[0]).toMatchObject({ profile_id: null, system_prompt: "Write code." });
  });

  it("imports a profile with Rust's notes, and resolves null when the dialog is closed", async () => {
    await addProfile("Coding");
    await pickProfileFile("coding", { provider: "Elsewhere", model: "m-1", max_rounds: 7 });
    const stores = newStores();
    const result = await stores.profiles.importFile();
    expect(result?.profile).toMatchObject({ name: "coding (2)", provider: null, model: null, max_rounds: 7 });
    expect(result?.notes).toHaveLength(2);
    expect(stores.profiles.all.map((p) => p.name)).toEqual(["Coding", "coding (2)"]);

    await backend.host({ file: null });
    expect(await stores.profiles.importFile()).toBeNull();
  });
});

describe("the form's draft", () => {
  it("sends blank limits as null, a model only with its provider, and flips switches as a conversation's", () => {
    const draft = { ...profileToDraft(null), name: "Coding", max_rounds: " 5 ", provider: "", model: "" };
    expect(validateProfileDraft(draft)).toEqual({});
    expect(draftToFields(draft)).toEqual({ ...emptyProfileFields(), max_rounds: 5 });
    expect(validateProfileDraft({ ...draft, max_rounds: "2.5", run_time_limit_secs: "5", model: "x" })).toEqual({
      max_rounds: expect.stringContaining("1 to 100"),
      run_time_limit_secs: expect.stringContaining("10 to 86400"),
      provider: "Choose the model's provider too.",
    });

    let tools = withTool([], "fs", "write_file", false);
    expect(tools).toEqual([{ server: "fs", tool: "write_file", enabled: false }]);
    tools = withServer(tools, "git", false);
    expect(toolsOffLabel(tools)).toBe("1 server and 1 tool off");
    // A tool switched back to what its server says is not listed; a server switched on drops its tools' switches.
    expect(withTool(tools, "fs", "write_file", true)).toEqual([{ server: "git", tool: null, enabled: false }]);
    expect(withServer(withTool(tools, "git", "log", true), "git", true)).toEqual([{ server: "fs", tool: "write_file", enabled: false }]);
    expect(toolsOffLabel([])).toBe("All on");
  });
});

// The Settings page's chunk loads the first time it opens, and slowly on a busy machine.
describe("Settings › Profiles", { timeout: 20_000 }, () => {
  it("lists each profile with its default badge, model and what it switches off", async () => {
    await backend.addProvider("Work");
    await addProfile("Research", { provider: "Work", model: "gpt-4o", tools: [{ server: "git", tool: null, enabled: false }] }, true);
    await addProfile("Coding");
    const { user } = await openSettings();
    await waitFor(() => expect(names()).toEqual(["Coding", "Research"]));

    const research = item("Research");
    expect(within(research).getByTestId("profile-default-badge").textContent).toBe("Default");
    expect(within(research).getByTestId("profile-model-label").textContent).toBe("Work · gpt-4o");
    expect(within(research).getByTestId("profile-tools-off").textContent).toBe("1 server off");
    expect(within(research).queryByTestId("profile-default")).toBeNull();
    await user.click(within(research).getByTestId("profile-menu"));
    expect(within(research).getByTestId("profile-default").textContent).toContain("Unset default");
    // One button style on the row: Edit and the "⋯" menu; Delete last in the menu, in red.
    const menuItems = within(research).getAllByRole("menuitem");
    expect(menuItems.map((el) => el.dataset.testid)).toEqual(["profile-duplicate", "profile-default", "profile-export", "profile-delete"]);
    expect(menuItems.at(-1)?.classList.contains("danger")).toBe(true);
    expect(within(research).getByTestId("profile-menu").getAttribute("aria-label")).toBe("More actions for Research");

    const coding = item("Coding");
    expect(within(coding).queryByTestId("profile-default-badge")).toBeNull();
    expect(within(coding).getByTestId("profile-model-label").textContent).toBe("Settings' default");
    expect(within(coding).getByTestId("profile-tools-off").textContent).toBe("All on");
    expect(within(coding).getByTestId("profile-prompt").textContent?.replace(/\s+/g, " ").trim()).toBe("Prompt: empty");
  });

  it("creates a profile: blank limits go as null, the switches as flipped", async () => {
    await backend.addProvider("Work", { models: [{ id: "gpt-4o" }] });
    // Two servers that run (the fault peer as "fs" and as "git") and one switched off ("time").
    await backend.addFaultServer("fs");
    await backend.addFaultServer("git");
    await backend.seed(async () => {
      await ipc.addMcpServer("time", peer("fault_server.py"));
      await ipc.setMcpServerEnabled("time", false);
    });
    const { user, section } = await openSettings();
    await user.click(within(section).getByTestId("profile-new"));
    const form = within(section).getByTestId("profile-form");
    const get = (id: string) => within(form).getByTestId(id);

    // Blank limits show Settings' values.
    expect((get("profile-max-rounds") as HTMLInputElement).placeholder).toBe("Settings: 10");
    expect((get("profile-tool-timeout") as HTMLInputElement).placeholder).toBe("Settings: 60");
    expect((get("profile-time-limit") as HTMLInputElement).placeholder).toBe("Settings: 600");
    // The composer's model picker: Settings' default model, then each provider's default model,
    // its models and a way to type one it does not list.
    const model = get("profile-model") as HTMLSelectElement;
    await waitFor(() => expect([...model.options].map((o) => o.textContent)).toEqual(["Settings' default model", "Default model", "gpt-4o", "Other model…"]));
    expect([...model.querySelectorAll("optgroup")].map((g) => g.label)).toEqual(["Work"]);
    expect(model.value).toBe("");

    await user.type(get("profile-name"), "Coding");
    await user.type(get("profile-system-prompt"), "Write small diffs.");
    await user.selectOptions(model, JSON.stringify(["Work", "gpt-4o"]));
    await user.type(get("profile-max-rounds"), "25");

    // Every server shows on; a stopped server has no tools to unfold.
    const serverSwitch = (name: string) =>
      within(form).getAllByTestId("profile-server-switch").find((el) => el.dataset.server === name) as HTMLInputElement;
    expect(["fs", "git", "time"].map((name) => serverSwitch(name).checked)).toEqual([true, true, true]);
    await user.click(serverSwitch("git"));
    const expand = await waitFor(() => {
      const found = within(form).getAllByTestId("profile-server-expand").find((el) => el.dataset.server === "fs");
      if (!found) throw new Error("fs's tools are not listed yet");
      return found;
    }, { timeout: 5000 });
    expect(within(form).queryAllByTestId("profile-server-expand").some((el) => el.dataset.server === "time")).toBe(false);
    await user.click(expand);
    expect(expand.getAttribute("aria-expanded")).toBe("true");
    const writeFile = within(form)
      .getAllByTestId("profile-tool-switch")
      .find((el) => el.dataset.server === "fs" && el.dataset.tool === "echo") as HTMLInputElement;
    expect(writeFile.checked).toBe(true);
    await user.click(writeFile);
    expect(serverSwitch("fs").indeterminate).toBe(true);

    await user.click(get("profile-save"));
    await waitFor(() => expect(names()).toEqual(["Coding"]));
    expect(backend.callsTo("create_profile")[0].args).toEqual({
      name: "Coding",
      fields: {
        system_prompt: "Write small diffs.",
        provider: "Work",
        model: "gpt-4o",
        max_rounds: 25,
        tool_timeout_secs: null,
        run_time_limit_secs: null,
        // Every server shown is named, on or off: one added later follows the defaults.
        tools: [
          { server: "git", tool: null, enabled: false },
          { server: "fs", tool: "echo", enabled: false },
          { server: "fs", tool: null, enabled: true },
          { server: "time", tool: null, enabled: true },
        ],
      },
    });
    expect(screen.queryByTestId("profile-form")).toBeNull();
    expect(within(item("Coding")).getByTestId("profile-tools-off").textContent).toBe("1 server and 1 tool off");
    await waitFor(() => expect(screen.getByTestId("profile-message").textContent).toBe("Created “Coding”."));
  }, 30_000);

  it("switches a skill off for the conversations that follow the profile", async () => {
    const dir = join(folder(), "notes-style");
    mkdirSync(dir);
    writeFileSync(join(dir, "SKILL.md"), "---\nname: notes-style\ndescription: How notes are written.\n---\nShort.\n");
    await backend.host({ folder: dir });
    await backend.seed(() => ipc.addSkill(false));
    const { user, section } = await openSettings();
    await user.click(within(section).getByTestId("profile-new"));
    const form = within(section).getByTestId("profile-form");
    const skill = (await within(form).findByTestId("profile-skill-switch")) as HTMLInputElement;
    expect(skill.dataset.skill).toBe("notes-style");
    expect(skill.checked).toBe(true);
    // Not a server among the tools, before or after it is switched.
    expect(within(form).queryAllByTestId("profile-server-switch").some((el) => el.dataset.server === "switchboard/skills")).toBe(false);
    await user.click(skill);
    expect(within(form).queryAllByTestId("profile-server-switch").some((el) => el.dataset.server === "switchboard/skills")).toBe(false);
    await user.type(within(form).getByTestId("profile-name"), "Terse");
    await user.click(within(form).getByTestId("profile-save"));
    await waitFor(() => expect(names()).toEqual(["Terse"]));
    expect(within(item("Terse")).getByTestId("profile-tools-off").textContent).toBe("1 skill off");

    // Rust reads the switch as the skill's: a conversation following the profile has it off.
    const [terse] = await profilesNow();
    const chat = await backend.seed(() => ipc.createConversation("Chat", { kind: "named", id: terse.id }));
    const skills = await backend.seed(() => ipc.conversationSkills(chat.id));
    expect(skills.map((s) => [s.skill.name, s.on])).toEqual([["notes-style", false]]);
  });

  it("picks the model in the composer's picker: a provider's default, a listed model, none, and a provider not configured", async () => {
    await backend.addProvider("Work", { models: [{ id: "gpt-4o" }, { id: "o3" }] });
    await addProfile("Coding", { provider: "Work", model: null });
    // A profile keeps naming a provider removed since.
    await backend.addProvider("Gone");
    await addProfile("Old", { provider: "Gone", model: "llama3" });
    await backend.seed(() => ipc.removeProvider("Gone"));
    const { user } = await openSettings();
    await waitFor(() => expect(names()).toEqual(["Coding", "Old"]));

    // A profile naming a provider's default model shows it picked; a listed model replaces it.
    await user.click(within(item("Coding")).getByTestId("profile-edit"));
    let form = screen.getByTestId("profile-form");
    const model = within(form).getByTestId("profile-model") as HTMLSelectElement;
    // The form's own picker: no images switch (a pick here is no model in use), a label of the form's.
    expect(within(form).queryByTestId("model-images")).toBeNull();
    expect(within(form).getByLabelText("Model")).toBe(model);
    await waitFor(() => expect([...model.options].map((o) => o.textContent)).toEqual(["Settings' default model", "Default model", "gpt-4o", "o3", "Other model…"]));
    expect(model.value).toBe(JSON.stringify(["Work", null]));
    await user.selectOptions(model, JSON.stringify(["Work", "o3"]));
    await user.click(within(form).getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(backend.callsTo("update_profile")[0].args).toMatchObject({ fields: { provider: "Work", model: "o3" } });
    expect(within(item("Coding")).getByTestId("profile-model-label").textContent).toBe("Work · o3");

    // Back to Settings' default model: no provider and no model.
    await user.click(within(item("Coding")).getByTestId("profile-edit"));
    form = screen.getByTestId("profile-form");
    await user.selectOptions(within(form).getByTestId("profile-model"), "");
    await user.click(within(form).getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(backend.callsTo("update_profile")[1].args).toMatchObject({ fields: { provider: null, model: null } });

    // A provider that is not configured is kept as it is, said so; Rust's word on it is said at the picker.
    await user.click(within(item("Old")).getByTestId("profile-edit"));
    form = screen.getByTestId("profile-form");
    const old = within(form).getByTestId("profile-model") as HTMLSelectElement;
    expect([...old.querySelectorAll("optgroup")].map((g) => g.label)).toEqual(["Work", "Gone (not configured)"]);
    expect(old.value).toBe(JSON.stringify(["Gone", "llama3"]));
    backend.failNext("update_profile", { kind: "invalid_input", field: "provider", message: "No provider is named “Gone”." });
    await user.click(within(form).getByTestId("profile-save"));
    const error = await within(form).findByTestId("error-model");
    expect(error.textContent).toBe("No provider is named “Gone”.");
    expect(old.getAttribute("aria-invalid")).toBe("true");
    expect(document.activeElement).toBe(old);
    await user.selectOptions(old, JSON.stringify(["Work", "gpt-4o"]));
    expect(within(form).queryByTestId("error-model")).toBeNull();
  });

  it("takes a model the provider does not list, typed after Other model…: Enter picks it (no Save yet), Esc goes back", async () => {
    await backend.addProvider("Work", { models: [{ id: "gpt-4o" }] });
    await backend.addProvider("Local", { models: [{ id: "llama3" }] });
    const { user, section } = await openSettings();
    await user.click(within(section).getByTestId("profile-new"));
    const form = within(section).getByTestId("profile-form");
    await user.type(within(form).getByTestId("profile-name"), "Preview");
    let model = within(form).getByTestId("profile-model") as HTMLSelectElement;
    const otherOf = (select: HTMLSelectElement, provider: string) => {
      const group = [...select.querySelectorAll("optgroup")].find((g) => g.label === provider);
      return within(group!).getByRole("option", { name: "Other model…" });
    };
    await waitFor(() => expect(model.querySelectorAll("[data-testid='model-picker-other']")).toHaveLength(2));

    // Esc: the list again, nothing picked.
    await user.selectOptions(model, otherOf(model, "Local"));
    const localBox = await within(form).findByRole("textbox", { name: "Model name for Local" });
    await waitFor(() => expect(document.activeElement).toBe(localBox));
    await user.keyboard("phi4{Escape}");
    model = (await within(form).findByTestId("profile-model")) as HTMLSelectElement;
    await waitFor(() => expect(document.activeElement).toBe(model));
    expect(model.value).toBe("");

    // Enter: the name typed is the pick, under its provider; the form is not sent by it.
    await user.selectOptions(model, otherOf(model, "Work"));
    const box = await within(form).findByRole("textbox", { name: "Model name for Work" });
    expect(within(form).getByRole("group", { name: "Model not listed by Work" })).toBeTruthy();
    await user.type(box, "gpt-5-preview{Enter}");
    model = (await within(form).findByTestId("profile-model")) as HTMLSelectElement;
    expect(model.value).toBe(JSON.stringify(["Work", "gpt-5-preview"]));
    expect(model.selectedOptions[0]?.textContent).toBe("gpt-5-preview");
    expect((model.selectedOptions[0]?.parentElement as HTMLOptGroupElement).label).toBe("Work");
    await waitFor(() => expect(document.activeElement).toBe(model));
    expect(backend.callsTo("create_profile")).toHaveLength(0);

    await user.click(within(form).getByTestId("profile-save"));
    await waitFor(() => expect(names()).toEqual(["Preview"]));
    expect(backend.callsTo("create_profile")[0].args).toMatchObject({ name: "Preview", fields: { provider: "Work", model: "gpt-5-preview" } });
    expect(within(item("Preview")).getByTestId("profile-model-label").textContent).toBe("Work · gpt-5-preview");
  });

  it("edits a profile in place: a limit cleared goes as null, Cancel keeps it as it was", async () => {
    await addProfile("Coding", { max_rounds: 5, system_prompt: "Be brief." });
    const { user } = await openSettings();
    await waitFor(() => expect(names()).toEqual(["Coding"]));

    await user.click(within(item("Coding")).getByTestId("profile-edit"));
    let form = screen.getByTestId("profile-form");
    await user.type(within(form).getByTestId("profile-name"), " v2");
    await user.click(within(form).getByTestId("profile-cancel"));
    expect(screen.queryByTestId("profile-form")).toBeNull();
    expect(backend.callsTo("update_profile")).toHaveLength(0);

    await user.click(within(item("Coding")).getByTestId("profile-edit"));
    form = screen.getByTestId("profile-form");
    expect((within(form).getByTestId("profile-name") as HTMLInputElement).value).toBe("Coding");
    expect((within(form).getByTestId("profile-system-prompt") as HTMLTextAreaElement).value).toBe("Be brief.");
    const rounds = within(form).getByTestId("profile-max-rounds") as HTMLInputElement;
    expect(rounds.value).toBe("5");
    await user.clear(rounds);
    await user.click(within(form).getByTestId("profile-save"));
    await waitFor(() => expect(screen.queryByTestId("profile-form")).toBeNull());
    expect(backend.callsTo("update_profile")[0].args).toMatchObject({ name: "Coding", fields: { max_rounds: null, system_prompt: "Be brief." } });
    expect((await profilesNow())[0].max_rounds).toBeNull();
  });

  it("shows Rust's refusals under the field they name, and the form's own checks before sending", async () => {
    await addProfile("Research");
    const { user, section } = await openSettings();
    await user.click(within(section).getByTestId("profile-new"));
    const form = within(section).getByTestId("profile-form");
    const name = within(form).getByTestId("profile-name");

    // A taken name (any case): Rust's conflict, under the name.
    await user.type(name, "research");
    await user.click(within(form).getByTestId("profile-save"));
    const error = await within(form).findByTestId("error-name");
    expect(error.textContent).toBe("A profile named “research” exists already.");
    expect(error.closest(".field")?.contains(name)).toBe(true);
    expect(name.getAttribute("aria-invalid")).toBe("true");
    expect(document.activeElement).toBe(name);
    await user.type(name, " 2");
    expect(within(form).queryByTestId("error-name")).toBeNull();

    // Rust's refusal of the prompt, under the prompt.
    // (The form checks the prompt's length itself, so no prompt it sends is refused: scripted.)
    backend.failNext("create_profile", { kind: "invalid_input", field: "system_prompt", message: "Too long for Rust." });
    await user.click(within(form).getByTestId("profile-save"));
    const promptError = await within(form).findByTestId("error-system_prompt");
    expect(promptError.textContent).toBe("Too long for Rust.");
    expect(promptError.closest(".field")?.contains(within(form).getByTestId("profile-system-prompt"))).toBe(true);

    // A limit out of range is not sent.
    const calls = backend.callsTo("create_profile").length;
    const timeLimit = within(form).getByTestId("profile-time-limit");
    await user.type(timeLimit, "5");
    await user.click(within(form).getByTestId("profile-save"));
    const limitError = await within(form).findByTestId("error-run_time_limit_secs");
    expect(limitError.textContent).toContain("from 10 to 86400");
    expect(limitError.closest(".field")?.contains(timeLimit)).toBe(true);
    expect(backend.callsTo("create_profile")).toHaveLength(calls);
  });

  it("duplicates, makes default, exports, and deletes after asking", async () => {
    const coding = await addProfile("Coding");
    await backend.seed(() => ipc.createConversation("Chat", { kind: "named", id: coding.id }));
    const downloads = folder();
    await backend.host({ file: downloads });
    const { user } = await openSettings();
    await waitFor(() => expect(names()).toEqual(["Coding"]));

    await user.click(within(item("Coding")).getByTestId("profile-menu"));
    await user.click(within(item("Coding")).getByTestId("profile-duplicate"));
    await waitFor(() => expect(names()).toEqual(["Coding", "Coding (copy)"]));
    // (The list is read again before the message is said.)
    await waitFor(() => expect(screen.getByTestId("profile-message").textContent).toBe("Copied “Coding” as “Coding (copy)”."));

    await user.click(within(item("Coding")).getByTestId("profile-menu"));
    await user.click(within(item("Coding")).getByTestId("profile-default"));
    await waitFor(() => expect(within(item("Coding")).queryByTestId("profile-default-badge")).not.toBeNull());
    expect(backend.callsTo("set_default_profile")[0].args).toEqual({ id: coding.id });
    await user.click(within(item("Coding (copy)")).getByTestId("profile-menu"));
    await user.click(within(item("Coding (copy)")).getByTestId("profile-default"));
    await waitFor(() => expect(within(item("Coding")).queryByTestId("profile-default-badge")).toBeNull());
    expect(within(item("Coding (copy)")).getByTestId("profile-default-badge")).toBeTruthy();

    await user.click(within(item("Coding")).getByTestId("profile-menu"));
    await user.click(within(item("Coding")).getByTestId("profile-export"));
    await waitFor(() => expect(screen.getByTestId("profile-message").textContent).toBe(`Saved “Coding” to ${join(downloads, "Coding.json")}`));
    expect(backend.callsTo("export_profile")[0].args).toEqual({ id: coding.id });
    expect(JSON.parse(readFileSync(join(downloads, "Coding.json"), "utf8"))).toMatchObject({ kind: "switchboard.profile", name: "Coding" });

    await user.click(within(item("Coding")).getByTestId("profile-menu"));
    await user.click(within(item("Coding")).getByTestId("profile-delete"));
    const dialog = screen.getByTestId("confirm-dialog");
    expect(dialog.textContent).toContain("“Coding” will be deleted");
    await user.click(within(dialog).getByTestId("confirm-cancel"));
    expect(backend.callsTo("delete_profile")).toHaveLength(0);
    await user.click(within(item("Coding")).getByTestId("profile-menu"));
    await user.click(within(item("Coding")).getByTestId("profile-delete"));
    await user.click(within(screen.getByTestId("confirm-dialog")).getByTestId("confirm-ok"));
    await waitFor(() => expect(names()).toEqual(["Coding (copy)"]));
    expect((await conversationsNow())[0].profile_id).toBeNull();
  });

  it("imports a profile and shows what Rust changed", async () => {
    await addProfile("Coding");
    await pickProfileFile("Coding", { provider: "Elsewhere", model: "m-1" });
    const { user, section } = await openSettings();
    await user.click(within(section).getByTestId("profile-import"));
    const notes = await screen.findByTestId("profile-import-notes");
    expect(notes.textContent).toContain("Imported “Coding (2)”.");
    expect(notes.textContent).toContain("There is no provider “Elsewhere” here");
    expect(notes.textContent).toContain("A profile named “Coding” exists; this one is “Coding (2)”.");
    await waitFor(() => expect(names()).toEqual(["Coding", "Coding (2)"]));
  });
});

describe("the sidebar's profile menu", () => {
  it("is shown only once a profile exists", async () => {
    await renderApp();
    expect(screen.queryByTestId("new-conversation-profile")).toBeNull();
  });

  it("starts a conversation from the profile chosen, or from none; New conversation keeps the default", async () => {
    const coding = await addProfile("Coding", { system_prompt: "Write code." });
    const research = await addProfile("Research", { system_prompt: "Cite sources." }, true);
    const { default_system_prompt } = await backend.seed(() => ipc.getSettings());
    const { user } = await renderApp();

    const chooser = screen.getByTestId("new-conversation-profile");
    expect(chooser.getAttribute("aria-expanded")).toBe("false");
    await user.click(chooser);
    const options = screen.getAllByTestId("new-conversation-profile-option");
    expect(options.map((o) => o.dataset.id ?? o.dataset.kind)).toEqual([coding.id, research.id, "none"]);
    expect(document.activeElement).toBe(options[0]);
    await user.click(options[0]);

    await waitFor(() => expect(backend.callsTo("create_conversation")).toHaveLength(1));
    expect(backend.callsTo("create_conversation")[0].args).toEqual({ title: null, profile: { kind: "named", id: coding.id } });
    // Each new conversation is the one Rust did not have before; the one before it, left with
    // nothing in it, is not kept.
    const seen: string[] = [];
    const newest = async () => {
      const made = await vi.waitFor(async () => {
        const all = await conversationsNow();
        expect(all).toHaveLength(1);
        expect(seen).not.toContain(all[0].id);
        return all[0];
      });
      seen.push(made.id);
      return made;
    };
    expect(await newest()).toMatchObject({ profile_id: coding.id, system_prompt: "Write code." });
    expect(screen.queryByTestId("new-conversation-profile-option")).toBeNull();

    // From the keyboard: the arrow opens the menu, Down and Enter pick "No profile".
    chooser.focus();
    await user.keyboard("{ArrowDown}");
    expect(document.activeElement?.getAttribute("data-id")).toBe(coding.id);
    await user.keyboard("{End}{Enter}");
    await waitFor(() => expect(backend.callsTo("create_conversation")).toHaveLength(2));
    expect(backend.callsTo("create_conversation")[1].args).toEqual({ title: null, profile: { kind: "none" } });
    expect(await newest()).toMatchObject({ profile_id: null, system_prompt: default_system_prompt });

    // Escape closes the menu and gives the focus back.
    await user.click(chooser);
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("new-conversation-profile-option")).toBeNull();
    expect(document.activeElement).toBe(chooser);

    await user.click(screen.getByTestId("new-conversation"));
    await waitFor(() => expect(backend.callsTo("create_conversation")).toHaveLength(3));
    expect(backend.callsTo("create_conversation")[2].args).toEqual({ title: null, profile: null });
    expect(await newest()).toMatchObject({ profile_id: research.id, system_prompt: "Cite sources." });
  });
});

describe("the conversation header's profile", () => {
  it("shows the profile followed and switches to another or none, reading the tools and prompt again", async () => {
    await backend.addProvider("Work", { models: [{ id: "gpt-4o" }] });
    const coding = await addProfile("Coding", {
      system_prompt: "Write code.",
      provider: "Work",
      model: "gpt-4o",
      tools: [{ server: "time", tool: null, enabled: false }],
    });
    await addProfile("Research");
    // The one server, "time" (the fault peer): all its tools are offered, none once it is off.
    await backend.addFaultServer("time");
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    await backend.seed(() => ipc.setSystemPrompt(chat.id, "Be nice."));
    const offered = (await backend.seed(() => ipc.listConversationTools(chat.id))).length;
    expect(offered).toBeGreaterThan(0);
    const { user } = await renderApp();
    await user.click(screen.getAllByTestId("conversation-item").find((el) => el.dataset.id === chat.id)!);

    const header = await screen.findByTestId("conversation-profile");
    expect(within(header).getByTestId("conversation-profile-name").textContent).toBe("No profile");
    await user.click(screen.getByTestId("system-prompt-button"));
    expect((screen.getByTestId("system-prompt-input") as HTMLTextAreaElement).value).toBe("Be nice.");
    await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe(`${offered}/${offered}`), { timeout: 5000 });
    const toolReads = backend.callsTo("list_conversation_tools").length;

    await user.click(header);
    const options = screen.getAllByTestId("conversation-profile-option");
    expect(options.find((o) => o.dataset.kind === "none")?.getAttribute("aria-checked")).toBe("true");
    await user.click(options.find((o) => o.dataset.id === coding.id)!);

    await waitFor(() => expect(within(header).getByTestId("conversation-profile-name").textContent).toBe("Coding"));
    expect(backend.callsTo("set_conversation_profile")[0].args).toEqual({ conversationId: chat.id, profileId: coding.id });
    expect(screen.getByTestId("conversation-profile-note").textContent).toContain("Tools and prompt change from the next message.");
    await waitFor(() => expect(backend.callsTo("list_conversation_tools").length).toBeGreaterThan(toolReads));
    await waitFor(() => expect(screen.getByTestId("tools-count").textContent).toBe(`0/${offered}`));
    await waitFor(() => expect((screen.getByTestId("system-prompt-input") as HTMLTextAreaElement).value).toBe("Write code."));
    expect(screen.getByTestId("model-picker")).toBeTruthy();
    expect((await conversationsNow())[0]).toMatchObject({ provider: "Work", model: "gpt-4o" });

    await user.click(header);
    expect(screen.getAllByTestId("conversation-profile-option").find((o) => o.dataset.id === coding.id)?.getAttribute("aria-checked")).toBe("true");
    await user.click(screen.getAllByTestId("conversation-profile-option").find((o) => o.dataset.kind === "none")!);
    await waitFor(() => expect(within(header).getByTestId("conversation-profile-name").textContent).toBe("No profile"));
    expect(backend.callsTo("set_conversation_profile")[1].args).toEqual({ conversationId: chat.id, profileId: null });
    // Following no profile keeps what the conversation has.
    expect((await conversationsNow())[0]).toMatchObject({ profile_id: null, system_prompt: "Write code.", model: "gpt-4o" });
  }, 30_000);
});

describe("switching a conversation's profile", () => {
  it("keeps the transcript: what was said in this window since it opened stays shown", async () => {
    await backend.addProvider("Work", { models: [{ id: "m" }], answer: ["Noon in Paris."] });
    const coding = await addProfile("Coding", { system_prompt: "Write code." });
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
    const { user } = await renderApp();
    // Opened while empty: the conversation as first read holds no message.
    await user.click(screen.getAllByTestId("conversation-item").find((el) => el.dataset.id === chat.id)!);
    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    const list = screen.getByTestId("message-list");
    await waitFor(() => expect(list.textContent).toContain("Noon in Paris."));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());

    const header = screen.getByTestId("conversation-profile");
    await user.click(header);
    await user.click(screen.getAllByTestId("conversation-profile-option").find((o) => o.dataset.id === coding.id)!);
    await waitFor(() => expect(within(header).getByTestId("conversation-profile-name").textContent).toBe("Coding"));
    // Rust's answer and the next reads of the list have come: the transcript is as it was.
    await waitFor(() => expect(backend.callsTo("list_conversations").length).toBeGreaterThan(1));
    expect(screen.getByTestId("message-list").textContent).toContain("What time is it?");
    expect(screen.getByTestId("message-list").textContent).toContain("Noon in Paris.");

    // And back to none.
    await user.click(header);
    await user.click(screen.getAllByTestId("conversation-profile-option").find((o) => o.dataset.kind === "none")!);
    await waitFor(() => expect(within(header).getByTestId("conversation-profile-name").textContent).toBe("No profile"));
    expect(screen.getByTestId("message-list").textContent).toContain("Noon in Paris.");
  }, 30_000);
});

describe("switching a conversation's model", () => {
  it("keeps the transcript too", async () => {
    await backend.addProvider("Work", { models: [{ id: "m" }, { id: "n" }], answer: ["Noon in Paris."] });
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
    const { user } = await renderApp();
    await user.click(screen.getAllByTestId("conversation-item").find((el) => el.dataset.id === chat.id)!);
    await user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Noon in Paris."));
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    const picker = screen.getByTestId("model-picker") as HTMLSelectElement;
    await waitFor(() => expect([...picker.options].map((o) => o.textContent)).toEqual(["m", "n", "Other model…"]));
    await user.selectOptions(picker, JSON.stringify(["Work", "n"]));
    await waitFor(() => expect(backend.callsTo("set_conversation_model")).toHaveLength(1));
    await waitFor(() => expect(backend.callsTo("list_conversations").length).toBeGreaterThan(1));
    expect(screen.getByTestId("message-list").textContent).toContain("What time is it?");
    expect(screen.getByTestId("message-list").textContent).toContain("Noon in Paris.");
  }, 30_000);
});
