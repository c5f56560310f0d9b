// The approval dialog says why it asks, and makes the rule Rust offers from the call ("Always
// allow calls like this…"): added once Rust's own dialog confirms it, then the call allowed once;
// a "no" there adds nothing and leaves the call waiting. Against the real core: a provider at a
// scripted model server that calls the fault peer's echo, then answers.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { Conversation } from "../src/lib/types";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderAppAt } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

/** A conversation on a model that calls the fault peer's echo with "noon", then answers "It is
 *  **noon**." (twice over: two questions); with the fault peer running. */
async function chatCallingEcho(): Promise<Conversation> {
  const turn = [{ tools: [{ name: "fault__echo", arguments: { text: "noon" } }] }, { answer: ["It is **noon**."] }];
  await backend.addProvider("Work", { models: [{ id: "m" }], turns: [...turn, ...turn] });
  await backend.addFaultServer();
  const chat = await backend.seed(() => ipc.createConversation("Chat"));
  await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
  return chat;
}

const texts = (elements: HTMLElement[]) => elements.map((e) => e.textContent);

/** The window with `chat` open, a question sent, and the approval dialog it asks. */
async function asked(chat: Conversation) {
  const view = await renderAppAt(chat.id);
  await view.user.type(await screen.findByTestId("composer-input"), "What time is it?{Enter}");
  const dialog = await screen.findByTestId("approval-dialog");
  return { ...view, dialog };
}

describe("the approval dialog and the policy", () => {
  it("says why it asks, makes the rule it offers once Rust's dialog confirms it, then allows the call once", async () => {
    const chat = await chatCallingEcho();
    await backend.host({ confirm: true });
    const { user, dialog } = await asked(chat);

    expect(within(dialog).getByTestId("approval-asked-because").textContent).toBe(
      "Asked because: no rule or standing approval lets it run",
    );
    expect(within(dialog).getByTestId("approval-rule-words").textContent).toBe("Adds the rule: allow fault · echo");
    // The focus starts on Deny, and Tab stays inside the dialog.
    expect(document.activeElement).toBe(within(dialog).getByTestId("approval-deny-all"));
    within(dialog).getByTestId("approval-submit").focus();
    await user.tab();
    expect(document.activeElement).toBe(within(dialog).getByTestId("approval-allow-like"));

    await user.click(within(dialog).getByTestId("approval-allow-like"));
    await waitFor(() => expect(backend.callsTo("answer_approval")).toHaveLength(1));
    expect(backend.callsTo("add_policy_rule").map((c) => c.args)).toEqual([{ rule: { server: "fault", tool: "echo", outcome: "allow" } }]);
    const answered = backend.callsTo("answer_approval")[0].args as { answers: { call_id: string; decision: string }[] };
    expect(answered.answers.map((a) => a.decision)).toEqual(["allow_once"]);
    // Rust asked in its own dialog, naming the rule.
    const questions = (await backend.asked()).filter((q) => q.dialog === "allow");
    expect(questions).toHaveLength(1);
    expect(questions[0].message).toContain("allow fault · echo");

    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
    expect(screen.queryByTestId("approval-dialog")).toBeNull();
    expect((await backend.seed(() => ipc.getPolicy())).said).toEqual(["allow fault · echo"]);

    // The next call like it runs without asking: the rule decides it.
    await user.type(screen.getByTestId("composer-input"), "And now?{Enter}");
    await waitFor(() => expect(screen.getByTestId("message-list").querySelectorAll("strong")).toHaveLength(2));
    expect(backend.callsTo("answer_approval")).toHaveLength(1);
    const record = await backend.seed(() => ipc.listAudit({}));
    expect(record.map((e) => [e.tool, e.decision])).toEqual([
      ["echo", "allowed"],
      ["echo", "allowed"],
    ]);
    expect(record[0].decided_by).toBe("rule 1 of your policy.json: allow fault · echo");
  });

  it("with several calls, makes the rule and leaves each call's choice to the person, that one allowed once", async () => {
    await backend.addProvider("Work", {
      models: [{ id: "m" }],
      turns: [
        { tools: [{ name: "fault__echo", arguments: { text: "a" } }, { name: "fault__crash", arguments: {} }] },
        { answer: ["Done."] },
      ],
    });
    await backend.addFaultServer();
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
    const { user, dialog } = await asked(chat);
    const calls = within(dialog).getAllByTestId("approval-call");
    expect(calls).toHaveLength(2);
    expect(texts(within(dialog).getAllByTestId("approval-rule-words"))).toEqual([
      "Adds the rule: allow fault · echo",
      "Adds the rule: allow fault · crash",
    ]);

    await user.click(within(calls[0]).getByTestId("approval-allow-like"));
    expect((await within(calls[0]).findByTestId("approval-rule-note")).textContent).toBe("Rule added. This call is allowed once below.");
    expect(backend.callsTo("answer_approval")).toHaveLength(0);
    expect((within(calls[0]).getByTestId("choice-allow_once") as HTMLInputElement).checked).toBe(true);
    await user.click(within(calls[1]).getByTestId("choice-deny"));
    await user.click(within(dialog).getByTestId("approval-submit"));
    await waitFor(() => expect(backend.callsTo("answer_approval")).toHaveLength(1));
    const answered = backend.callsTo("answer_approval")[0].args as { answers: { decision: string }[] };
    expect(answered.answers.map((a) => a.decision)).toEqual(["allow_once", "deny"]);
    expect((await backend.seed(() => ipc.getPolicy())).said).toEqual(["allow fault · echo"]);
  });

  it("adds nothing when the person says no in Rust's dialog, and leaves the call waiting", async () => {
    const chat = await chatCallingEcho();
    await backend.host({ confirm: false });
    const { user, dialog } = await asked(chat);

    await user.click(within(dialog).getByTestId("approval-allow-like"));
    expect((await within(dialog).findByTestId("approval-rule-note")).textContent?.trim()).toBe("Not added: not confirmed in the dialog.");
    expect(backend.callsTo("add_policy_rule")).toHaveLength(1);
    expect(backend.callsTo("answer_approval")).toHaveLength(0);
    expect(screen.getByTestId("approval-dialog")).toBe(dialog);
    expect(screen.queryByTestId("error-toast")).toBeNull();
    expect((await backend.seed(() => ipc.getPolicy())).said).toEqual([]);

    // The call still waits for the person's word.
    await user.click(within(dialog).getByTestId("approval-submit"));
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
  });

  it("says which rule of the organisation asks, and why Rust refuses a looser one beside the call", async () => {
    const managed = join(await backend.home(), "managed");
    mkdirSync(managed, { recursive: true });
    writeFileSync(join(managed, "policy.json"), JSON.stringify({ rules: [{ server: "fault", tool: "echo", outcome: "ask" }] }));
    const chat = await chatCallingEcho();
    const { user, dialog } = await asked(chat);
    expect(within(dialog).getByTestId("approval-asked-because").textContent).toBe(
      "Asked because: rule 1 of your organisation's policy: ask before fault · echo",
    );

    await user.click(within(dialog).getByTestId("approval-allow-like"));
    const note = await within(dialog).findByTestId("approval-rule-note");
    expect(note.textContent?.trim()).toMatch(/^Not added: .*Your organisation's policy decides this, and a rule of yours can only be stricter/);
    expect(note.classList.contains("error")).toBe(true);
    expect(backend.callsTo("answer_approval")).toHaveLength(0);
    expect((await backend.seed(() => ipc.getPolicy())).said).toEqual([]);
  });
});
