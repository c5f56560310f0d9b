// Several models side by side (issue 18, seed 003): the composer's Compare sends one message to
// two to four models; each answers in a column of its own (its text, its tool calls, its
// approvals labelled with it, its Stop); once all have answered their answers are branches of
// the conversation, the one shown first and the others a click away ("Also answered by"), and
// a window that reloads meanwhile builds the columns again from the run's replay.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { invoke, type Channel } from "@tauri-apps/api/core";
import { cleanup, screen, waitFor, within } from "@testing-library/svelte";
import type { UserEvent } from "@testing-library/user-event";
import { renderApp } from "./render-app";
import { installRealBackend, type RealBackend, type Turn } from "./real-backend";
import * as ipc from "../src/lib/ipc";
import { ChatSession } from "../src/chat/session.svelte";
import type { ConversationDetail } from "../src/lib/types";
import type { RunEvent } from "../src/lib/bindings";

function option(provider: string, model: string): HTMLElement {
  const found = screen
    .getAllByTestId("compare-model-option")
    .find((o) => o.dataset.provider === provider && o.dataset.model === model);
  if (!found) throw new Error(`no option for ${provider} · ${model}`);
  return found;
}

function columns(): HTMLElement[] {
  return screen.queryAllByTestId("compare-column");
}

function columnText(lane: number): string {
  const column = columns().find((c) => c.dataset.lane === String(lane));
  return column ? within(column).queryAllByTestId("compare-column-text").map((t) => (t.textContent ?? "").trim()).join(" ") : "";
}

/** Opens the conversation, turns Compare on, checks `picked` (provider, model) and sends `text`. */
async function compare(user: UserEvent, picked: [string, string][], text = "What is the capital of France?"): Promise<void> {
  await user.click(screen.getAllByTestId("conversation-item")[0]);
  await user.click(await screen.findByTestId("compare-toggle"));
  await waitFor(() => expect(screen.getAllByTestId("compare-model-option")).toHaveLength(5));
  for (const [provider, model] of picked) await user.click(option(provider, model));
  await user.type(screen.getByTestId("composer-input"), `${text}{Enter}`);
}

describe("the composer's Compare", { timeout: 30_000 }, () => {
  let real: RealBackend;

  /** Work (gpt-a, gpt-b, gpt-c) and Local (llama3, qwen), each at a model server of its own
   *  answering "Answer."; the conversation "Compare" answered by Work · gpt-a. */
  beforeEach(async () => {
    real = await installRealBackend();
    sessionStorage.clear();
    await real.addProvider("Work", { models: [{ id: "gpt-a" }, { id: "gpt-b" }, { id: "gpt-c" }], answer: ["Answer", "."] });
    await real.addProvider("Local", { models: [{ id: "llama3" }, { id: "qwen" }], answer: ["Answer", "."] });
  });

  async function conversation(): Promise<string> {
    const c = await real.seed(() => ipc.createConversation("Compare"));
    await real.seed(() => ipc.setConversationModel(c.id, "Work", "gpt-a"));
    return c.id;
  }

  it("offers every model the providers know, two to four of them, and sends compare_models with those checked", async () => {
    const id = await conversation();
    const { user } = await renderApp();
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    const toggle = await screen.findByTestId("compare-toggle");
    expect(toggle.getAttribute("aria-pressed")).toBe("false");
    expect(screen.queryByTestId("compare-models")).toBeNull();
    await user.click(toggle);
    expect(toggle.getAttribute("aria-pressed")).toBe("true");
    await waitFor(() => expect(screen.getAllByTestId("compare-model-option")).toHaveLength(5));
    const options = screen.getAllByTestId("compare-model-option");
    // In Rust's order of the providers (by name), each one's models in its list's order.
    expect(options.map((o) => `${o.dataset.provider}/${o.dataset.model}`)).toEqual(["Local/llama3", "Local/qwen", "Work/gpt-a", "Work/gpt-b", "Work/gpt-c"]);
    expect(options.every((o) => o.getAttribute("role") === "checkbox" && o.getAttribute("aria-checked") === "false")).toBe(true);

    // One model is not a comparison: Send waits for a second.
    await user.type(screen.getByTestId("composer-input"), "Hello");
    await user.click(option("Work", "gpt-b"));
    expect(option("Work", "gpt-b").getAttribute("aria-checked")).toBe("true");
    expect(screen.getByTestId("composer-send")).toHaveProperty("disabled", true);
    for (const [p, m] of [["Local", "qwen"], ["Work", "gpt-a"], ["Local", "llama3"]]) await user.click(option(p, m));
    // Four checked: the fifth cannot be, and the hint says why.
    expect(option("Work", "gpt-c")).toHaveProperty("disabled", true);
    expect(screen.getByTestId("compare-hint").textContent).toMatch(/4 models at most/);
    // Unchecking one frees a place.
    await user.click(option("Local", "llama3"));
    expect(option("Work", "gpt-c")).toHaveProperty("disabled", false);
    expect(screen.getByTestId("composer-send")).toHaveProperty("disabled", false);
    // While comparing, "3 models ▾" stands in the model picker's place and folds the list.
    expect(screen.queryByTestId("model-picker")).toBeNull();
    const compared = screen.getByTestId("compare-models-toggle");
    expect(compared.textContent?.trim()).toBe("3 models");
    await user.click(compared);
    expect(screen.queryByTestId("compare-models")).toBeNull();
    await user.click(compared);
    expect(screen.getByTestId("compare-models")).toBeTruthy();

    await user.click(screen.getByTestId("composer-input"));
    await user.keyboard("{Enter}");
    await waitFor(() => expect(real.callsTo("compare_models")).toHaveLength(1));
    expect(real.callsTo("compare_models")[0].args).toMatchObject({
      conversationId: id,
      text: "Hello",
      attachments: [],
      models: [
        { provider: "Work", model: "gpt-b" },
        { provider: "Local", model: "qwen" },
        { provider: "Work", model: "gpt-a" },
      ],
    });
    expect(real.callsTo("send_message")).toHaveLength(0);
    // Asked (once Rust has started it): the box empties and Compare goes off (the next message
    // goes to the answer picked).
    await waitFor(() => expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).value).toBe(""));
    expect(screen.getByTestId("compare-toggle").getAttribute("aria-pressed")).toBe("false");
    await waitFor(() => expect(screen.getByTestId("composer-send")).toBeTruthy());
    // Three answers, kept as branches of the conversation.
    await waitFor(() => expect(screen.getByTestId("branch-position").textContent).toBe("Version 1 of 3"));

    // Compare off: a message goes as it always did.
    await user.type(screen.getByTestId("composer-input"), "And Spain?{Enter}");
    await waitFor(() => expect(real.callsTo("send_message")).toHaveLength(1));
    expect(real.callsTo("compare_models")).toHaveLength(1);
  });

  it("folds the list of models to compare in one conversation only, and keeps it folded there: another conversation's composer shows its own", async () => {
    const first = await conversation();
    const other = await real.seed(() => ipc.createConversation("Other"));
    const { user } = await renderApp();
    const open = async (id: string) => {
      await user.click(await waitFor(() => screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === id)!));
      await waitFor(() => expect(screen.getAllByTestId("conversation-item").find((i) => i.dataset.id === id)?.getAttribute("aria-current")).toBe("page"));
    };
    await open(first);
    await user.click(await screen.findByTestId("compare-toggle"));
    const folding = await screen.findByTestId("compare-models-toggle");
    expect(folding.getAttribute("aria-expanded")).toBe("true");
    await user.click(folding);
    expect(screen.getByTestId("compare-models-toggle").getAttribute("aria-expanded")).toBe("false");
    expect(screen.queryByTestId("compare-models")).toBeNull();

    await open(other.id);
    await user.click(await screen.findByTestId("compare-toggle"));
    await waitFor(() => expect(screen.getByTestId("compare-models")).toBeTruthy());
    expect(screen.getByTestId("compare-models-toggle").getAttribute("aria-expanded")).toBe("true");

    // Back in the first conversation: still comparing, its list still folded.
    await open(first);
    await waitFor(() => expect(screen.getByTestId("compare-models-toggle").getAttribute("aria-expanded")).toBe("false"));
    expect(screen.getByTestId("compare-toggle").getAttribute("aria-pressed")).toBe("true");
    expect(screen.queryByTestId("compare-models")).toBeNull();
    // And the other's stays open.
    await open(other.id);
    await waitFor(() => expect(screen.getByTestId("compare-models-toggle").getAttribute("aria-expanded")).toBe("true"));
    expect(screen.getByTestId("compare-models")).toBeTruthy();
  });

  it("sends the files attached with the question, which is saved once with them", async () => {
    const id = await conversation();
    const path = join(mkdtempSync(join(tmpdir(), "compare-")), "scores.csv");
    writeFileSync(path, "name,score\nAda,36\n");
    await real.host({ files: [path] });
    const { user } = await renderApp();
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    await user.click(await screen.findByTestId("composer-attach"));
    await screen.findByTestId("composer-files");
    await user.click(screen.getByTestId("compare-toggle"));
    await waitFor(() => expect(screen.getAllByTestId("compare-model-option")).toHaveLength(5));
    await user.click(option("Work", "gpt-a"));
    await user.click(option("Local", "llama3"));
    await user.type(screen.getByTestId("composer-input"), "Sum it up{Enter}");
    await waitFor(() => expect(real.callsTo("compare_models")).toHaveLength(1));
    expect(real.callsTo("compare_models")[0].args).toMatchObject({ attachments: [{ name: "scores.csv" }] });
    await waitFor(() => expect(screen.queryByTestId("composer-files")).toBeNull());
    await waitFor(() => expect(screen.getByTestId("branch-position").textContent).toBe("Version 1 of 2"));
    const questions = (await real.seed(() => ipc.getConversation(id))).messages.filter((m) => m.role === "user");
    expect(questions).toHaveLength(1);
    expect(questions[0].attachments.map((f) => f.name)).toEqual(["scores.csv"]);
    expect(within(screen.getByTestId("message-list")).getAllByTestId("message-files")).toHaveLength(1);
  });

  it("keeps the message when Rust refuses the models, and says why", async () => {
    await conversation();
    // The window offers each model once, so Rust's refusal of a model asked twice is scripted, in its words.
    real.failNext("compare_models", { kind: "invalid_input", field: "models", message: "Each model can be asked once in a comparison." });
    const { user, app } = await renderApp();
    await compare(user, [["Work", "gpt-a"], ["Local", "qwen"]], "Hi");
    await waitFor(() => expect(app.toast?.message).toBe("Each model can be asked once in a comparison."));
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).value).toBe("Hi");
    expect(screen.getByTestId("compare-toggle").getAttribute("aria-pressed")).toBe("true");
  });
});

/** Work (gpt-a, gpt-b, gpt-c) and Local (llama3, qwen) at model servers of their own, each
 *  compared model answering the turns given for it (`model` named), and the conversation
 *  "Compare" answered by Work · gpt-a; the servers' addresses. */
async function comparing(real: RealBackend, work: Turn[], local: Turn[]): Promise<{ work: string; local: string; id: string }> {
  const addresses = {
    work: await real.addProvider("Work", { models: [{ id: "gpt-a" }, { id: "gpt-b" }, { id: "gpt-c" }], turns: work }),
    local: await real.addProvider("Local", { models: [{ id: "llama3" }, { id: "qwen" }], turns: local }),
  };
  const c = await real.seed(() => ipc.createConversation("Compare"));
  await real.seed(() => ipc.setConversationModel(c.id, "Work", "gpt-a"));
  return { ...addresses, id: c.id };
}

/** What Rust sends the window on the channel of its `compare_models` from now on (as the
 *  window hears it: its own listener still gets every event). Not `attach_run` from the test:
 *  the session is one window, and attaching again takes the window's place on the feed. */
function hearComparison(real: RealBackend): RunEvent[] {
  const heard: RunEvent[] = [];
  vi.mocked(invoke).mockImplementation(((cmd: string, args?: Record<string, unknown>) => {
    if (cmd === "compare_models") {
      const channel = args?.onEvent as Channel<RunEvent>;
      const shown = channel.onmessage;
      channel.onmessage = (event) => {
        heard.push(event);
        shown(event);
      };
    }
    return real.invoke(cmd, args);
  }) as typeof invoke);
  return heard;
}

/** The comparison's run id and its lanes' (in the lanes' order), from what Rust sent, once
 *  `lanes` lanes have started. */
async function runIds(heard: RunEvent[], lanes: number): Promise<{ runId: string; lanes: string[] }> {
  return vi.waitFor(() => {
    const started = heard.find((e) => e.type === "run_started");
    const laneRuns: string[] = [];
    for (const e of heard) if (e.type === "lane" && e.event.type === "run_started") laneRuns[e.lane] = e.event.run_id;
    expect(started).toBeDefined();
    expect(laneRuns.filter(Boolean)).toHaveLength(lanes);
    return { runId: (started as { run_id: string }).run_id, lanes: laneRuns };
  });
}

/** A lane's answer: `pieces` streamed, then held until released. */
function held(model: string, ...pieces: string[]): Turn {
  return { model, answer: pieces, hold: true };
}

describe("a comparison under way", { timeout: 30_000 }, () => {
  let real: RealBackend;

  beforeEach(async () => {
    real = await installRealBackend();
    sessionStorage.clear();
  });

  it("streams each model into its own column, asks a model's approval in its name, then keeps the answers as branches to pick from", async () => {
    // Local · qwen and Work · gpt-c answer, and wait before their end; Work · gpt-b first
    // asks to run a tool, then answers with what it said, and waits too.
    const { work, local, id } = await comparing(
      real,
      [
        { model: "gpt-b", tools: [{ name: "fault__echo", arguments: { text: "noon" } }] },
        held("gpt-b", "It is **noon**", " in Paris, says the clock."),
        { model: "gpt-b", answer: ["You are welcome."] },
        held("gpt-c", "Lane 2: **Paris**", " is the capital of France."),
      ],
      [held("qwen", "Lane 0: **Paris**", " is the capital of France.")],
    );
    await real.addFaultServer();
    const { user } = await renderApp();
    await compare(user, [["Local", "qwen"], ["Work", "gpt-b"], ["Work", "gpt-c"]]);

    await waitFor(() => expect(columns()).toHaveLength(3));
    expect(columns().map((col) => [col.dataset.lane, col.dataset.model])).toEqual([["0", "qwen"], ["1", "gpt-b"], ["2", "gpt-c"]]);
    expect(columns().map((col) => within(col).getByTestId("compare-column-label").textContent)).toEqual(["Local · qwen", "Work · gpt-b", "Work · gpt-c"]);
    // The question once, before the columns.
    expect(screen.getByTestId("message-list").textContent?.match(/What is the capital of France\?/g)).toHaveLength(1);
    // Each lane streams its own text (Markdown, as answers are), while it has not ended.
    await waitFor(() => expect(columnText(0)).toBe("Lane 0: Paris is the capital of France."));
    expect(columns()[0].querySelector("strong")?.textContent).toBe("Paris");
    await waitFor(() => expect(columnText(2)).toBe("Lane 2: Paris is the capital of France."));
    expect(columns().map((col) => col.dataset.state)).toEqual(["running", "running", "running"]);
    expect(screen.getAllByTestId("compare-column-stop")).toHaveLength(3);
    expect(screen.getByTestId("compare-stop-all")).toBeTruthy();

    // The second model asks to run a tool: the dialog says which model asks.
    const dialog = await screen.findByTestId("approval-dialog");
    expect(within(dialog).getByTestId("approval-asked-by").textContent?.replace(/\s+/g, " ").trim()).toBe(
      "Work · gpt-b wants to run fault · Echo.",
    );
    expect(within(columns()[1]).getByTestId("compare-column-status").textContent).toBe("Waiting for your approval…");
    await user.click(within(dialog).getByTestId("approval-submit"));
    const answered = real.callsTo("answer_approval");
    expect(answered).toHaveLength(1);
    expect(answered[0].args).toMatchObject({ answers: [{ call_id: "call_0", decision: "allow_once" }] });
    await waitFor(() => expect(within(columns()[1]).getByTestId("tool-card").dataset.state).toBe("done"));
    await waitFor(() => expect(columnText(1)).toBe("It is noon in Paris, says the clock."));

    // All answer: the columns go, the conversation is read again, the first model's answer shown.
    const fetches = real.callsTo("get_conversation").length;
    await real.release(local);
    await real.release(work);
    await real.release(work);
    await waitFor(() => expect(screen.queryByTestId("compare-columns")).toBeNull());
    await waitFor(() => expect(real.callsTo("get_conversation").length).toBeGreaterThan(fetches));
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Lane 0: Paris is the capital of France."));
    expect(screen.getByTestId("message-list").textContent?.match(/What is the capital of France\?/g)).toHaveLength(1);
    expect(screen.getByTestId("branch-position").textContent).toBe("Version 1 of 3");
    expect(screen.getByTestId("branch-model").textContent).toBe("Local · qwen");
    // Its model answers next.
    const picker = screen.getByTestId("model-picker") as HTMLSelectElement;
    await waitFor(() => expect(picker.value).toBe(JSON.stringify(["Local", "qwen"])));

    // The others, under the answer: picking one shows it and makes its model the conversation's.
    const row = screen.getByTestId("branch-models");
    expect(row.textContent).toContain("Also answered by");
    const others = within(row).getAllByTestId("branch-model-option");
    expect(others.map((o) => [o.dataset.position, o.textContent])).toEqual([["1", "Work · gpt-b"], ["2", "Work · gpt-c"]]);
    await user.click(others[1]);
    await waitFor(() => expect(screen.getByTestId("branch-model").textContent).toBe("Work · gpt-c"));
    expect(real.callsTo("switch_branch").at(-1)?.args).toMatchObject({ id, position: 2 });
    expect(screen.getByTestId("message-list").textContent).toContain("Lane 2: Paris is the capital of France.");
    expect(screen.queryByText("Lane 0: Paris", { exact: false })).toBeNull();
    expect(screen.getByTestId("branch-position").textContent).toBe("Version 3 of 3");
    await waitFor(() => expect(picker.value).toBe(JSON.stringify(["Work", "gpt-c"])));
    expect(within(screen.getByTestId("branch-models")).getAllByTestId("branch-model-option").map((o) => o.textContent)).toEqual([
      "Local · qwen",
      "Work · gpt-b",
    ]);

    // The model that answered with a tool: its card is kept with its answer.
    await user.click(within(screen.getByTestId("branch-models")).getAllByTestId("branch-model-option")[1]);
    await waitFor(() => expect(screen.getByTestId("branch-model").textContent).toBe("Work · gpt-b"));
    expect(screen.getByTestId("tool-card").dataset.state).toBe("done");
    // Its first round is the call: the pager stands on the turn's first line all the same, once,
    // above the round's "Used 1 tool" row, never among the cards.
    const pager = screen.getByTestId("branch-switcher");
    const head = screen.getAllByTestId("answer")[0];
    expect(screen.getAllByTestId("branch-switcher")).toHaveLength(1);
    expect(pager.parentElement).toBe(head.querySelector(".meta"));
    expect(pager.closest('[data-testid="tool-card"], .tools')).toBeNull();
    expect(within(head).getByTestId("tool-round").textContent).toContain("Used 1 tool");
    expect(screen.getByTestId("message-list").textContent).toContain("It is noon in Paris, says the clock.");
    await waitFor(() => expect(picker.value).toBe(JSON.stringify(["Work", "gpt-b"])));
    // The next message goes to the model picked.
    await user.type(screen.getByTestId("composer-input"), "Thanks{Enter}");
    await waitFor(() => expect(real.callsTo("send_message")).toHaveLength(1));
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("You are welcome."));
    expect((await real.seed(() => ipc.getConversation(id))).conversation).toMatchObject({ provider: "Work", model: "gpt-b" });
    expect((await real.received(work)).at(-1)).toMatchObject({ model: "gpt-b" });
  });

  it("stops one model with its own run id, and all of them with the comparison's", async () => {
    await comparing(real, [held("gpt-a", "Answer 0 begins", " and ends.")], [held("qwen", "Answer 1 begins", " and ends.")]);
    const heard = hearComparison(real);
    const { user } = await renderApp();
    await compare(user, [["Work", "gpt-a"], ["Local", "qwen"]]);
    await waitFor(() => expect(screen.getAllByTestId("compare-column-stop")).toHaveLength(2));
    const comparison = await runIds(heard, 2);
    await waitFor(() => expect(columnText(0)).toContain("Answer 0 begins"));

    await user.click(within(columns()[0]).getByTestId("compare-column-stop"));
    expect(real.callsTo("stop_run").map((c) => c.args)).toEqual([{ runId: comparison.lanes[0] }]);
    await waitFor(() => expect(columns()[0].dataset.state).toBe("stopped"));
    expect(within(columns()[0]).getByTestId("compare-column-status").textContent).toBe("Stopped");
    expect(within(columns()[0]).queryByTestId("compare-column-stop")).toBeNull();
    // The other goes on.
    expect(columns()[1].dataset.state).toBe("running");
    expect(within(columns()[1]).getByTestId("compare-column-stop")).toBeTruthy();

    await user.click(screen.getByTestId("compare-stop-all"));
    expect(real.callsTo("stop_run").map((c) => c.args)).toEqual([{ runId: comparison.lanes[0] }, { runId: comparison.runId }]);
    await waitFor(() => expect(screen.queryByTestId("compare-columns")).toBeNull());
    // What each had written is kept, as branches.
    await waitFor(() => expect(screen.getByTestId("branch-position").textContent).toBe("Version 1 of 2"));
    expect(screen.getByTestId("message-list").textContent).toContain("Answer 0 begins");
    expect(screen.getByTestId("composer-send")).toBeTruthy();
  });

  it("the composer's Stop stops the whole comparison", async () => {
    await comparing(real, [held("gpt-a", "Answer 0", ".")], [held("qwen", "Answer 1", ".")]);
    const heard = hearComparison(real);
    const { user } = await renderApp();
    await compare(user, [["Work", "gpt-a"], ["Local", "qwen"]]);
    await waitFor(() => expect(columns()).toHaveLength(2));
    const comparison = await runIds(heard, 2);
    await user.click(screen.getByTestId("composer-stop"));
    expect(real.callsTo("stop_run").map((c) => c.args)).toEqual([{ runId: comparison.runId }]);
    await waitFor(() => expect(screen.queryByTestId("compare-columns")).toBeNull());
  });

  it("a model that fails says so in its column; the others answer", async () => {
    // Local · qwen's server is overloaded (HTTP 529): Rust tries again, then gives up.
    const { work } = await comparing(real, [held("gpt-a", "Fine", ".")], [{ model: "qwen", status: 529, message: "try again later" }]);
    const { user } = await renderApp();
    await compare(user, [["Work", "gpt-a"], ["Local", "qwen"]]);
    await waitFor(() => expect(columns()).toHaveLength(2));
    await waitFor(() => expect(within(columns()[1]).getByTestId("compare-column-error").textContent).toBe("The provider is overloaded: try again later"), { timeout: 15_000 });
    await waitFor(() => expect(columns()[1].dataset.state).toBe("failed"));
    expect(within(columns()[1]).getByTestId("compare-column-status").textContent).toBe("Failed");
    expect(columns()[0].dataset.state).toBe("running");
    await real.release(work);
    // The model that answered is shown; the failed answer is kept too (Rust keeps every lane
    // that wrote a message, and a failed turn writes its answer with the error), a click away.
    await waitFor(() => expect(screen.queryByTestId("compare-columns")).toBeNull());
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Fine."));
    expect(screen.getByTestId("branch-position").textContent).toBe("Version 1 of 2");
    expect(screen.getByTestId("branch-model").textContent).toBe("Work · gpt-a");
    const others = within(screen.getByTestId("branch-models")).getAllByTestId("branch-model-option");
    expect(others.map((o) => o.textContent)).toEqual(["Local · qwen"]);
    await user.click(others[0]);
    await waitFor(() => expect(screen.getByTestId("branch-model").textContent).toBe("Local · qwen"));
    expect(screen.getByTestId("message-list").textContent).toContain("The provider is overloaded: try again later");
    expect(screen.getByTestId("message-list").textContent).not.toContain("Fine.");
  });

  it("model text stays text: markup in a column is never run", async () => {
    const markup = ['<img src=x onerror="alert(1)"><b>bold</b><script>alert(2)</script>', " end"];
    const { work, local } = await comparing(real, [held("gpt-a", ...markup)], [held("qwen", ...markup)]);
    const { user } = await renderApp();
    await compare(user, [["Work", "gpt-a"], ["Local", "qwen"]]);
    await waitFor(() => expect(columns()).toHaveLength(2));
    await waitFor(() => expect(columnText(1)).toContain("<b>bold</b>"));
    await waitFor(() => expect(columnText(0)).toContain('<img src=x onerror="alert(1)">'));
    const all = screen.getByTestId("compare-columns");
    expect(all.querySelector("script")).toBeNull();
    expect(all.querySelector("img")).toBeNull();
    expect(all.querySelector("b")).toBeNull();
    await real.release(work);
    await real.release(local);
    await waitFor(() => expect(screen.queryByTestId("compare-columns")).toBeNull());
  });
});

describe("a window that comes back to a comparison", { timeout: 30_000 }, () => {
  let real: RealBackend;

  beforeEach(async () => {
    real = await installRealBackend();
    sessionStorage.clear();
  });

  it("builds the columns again from the replay, asks the waiting approval in the model's name, and sees the fold", async () => {
    const { work } = await comparing(
      real,
      [
        held("gpt-a", "Lane 0: **Paris**", " is the capital of France."),
        { model: "gpt-b", tools: [{ name: "fault__echo", arguments: { text: "noon" } }] },
        { model: "gpt-b", answer: ["It is **noon**", " in Paris, says the clock."] },
      ],
      [],
    );
    await real.addFaultServer();
    const first = await renderApp();
    await compare(first.user, [["Work", "gpt-a"], ["Work", "gpt-b"]]);
    await screen.findByTestId("approval-dialog");
    await waitFor(() => expect(columnText(0)).toBe("Lane 0: Paris is the capital of France."));

    // The page reloads: a new window state, the same backend with its comparison under way.
    cleanup();
    const attached = real.callsTo("attach_run").length;
    const { user } = await renderApp();
    await waitFor(() => expect(columns()).toHaveLength(2));
    expect(real.callsTo("attach_run").length).toBeGreaterThan(attached);
    expect(columns().map((col) => within(col).getByTestId("compare-column-label").textContent)).toEqual(["Work · gpt-a", "Work · gpt-b"]);
    await waitFor(() => expect(columnText(0)).toBe("Lane 0: Paris is the capital of France."));
    // The question shown once, though it was saved before the reload and replayed after.
    expect(screen.getByTestId("message-list").textContent?.match(/What is the capital of France\?/g)).toHaveLength(1);
    const dialog = await screen.findByTestId("approval-dialog");
    expect(within(dialog).getByTestId("approval-asked-by").textContent).toContain("Work · gpt-b");
    // Stop, for each model and for all, works on the runs replayed.
    expect(screen.getAllByTestId("compare-column-stop")).toHaveLength(2);
    expect(screen.getByTestId("composer-stop")).toBeTruthy();

    await user.click(within(dialog).getByTestId("approval-submit"));
    await waitFor(() => expect(within(columns()[1]).getByTestId("tool-card").dataset.state).toBe("done"));
    await waitFor(() => expect(columnText(1)).toBe("It is noon in Paris, says the clock."));
    await real.release(work);
    await waitFor(() => expect(screen.queryByTestId("compare-columns")).toBeNull());
    await waitFor(() => expect(screen.getByTestId("branch-model").textContent).toBe("Work · gpt-a"));
    expect(within(screen.getByTestId("branch-models")).getAllByTestId("branch-model-option").map((o) => o.textContent)).toEqual(["Work · gpt-b"]);
  });
});

describe("a session replaying a comparison", () => {
  it("a session replaying a comparison puts each lane's events in its own lane, whatever their ids", () => {
    const detail: ConversationDetail = {
      conversation: { id: "c1", title: "t", created_at: 1, updated_at: 1, provider: null, model: null, auto_approve: false, system_prompt: "", profile_id: null, project_id: null },
      messages: [], tool_runs: [], older: null, branches: [], draft: null, summaries: [], context: null, offers: [],
    };
    const session = new ChatSession(detail, () => {}, (callback) => callback());
    const base = {
      conversation_id: "hidden", created_at: 1, tool_call_id: null, name: null, provider: "Work", input_tokens: null, output_tokens: null,
      reasoning: null, error: null, is_error: false, full_length: null, attachments: [], cost_pico: null, tool_calls: null, finish_reason: null,
    };
    const lane = (index: number, model: string, event: Parameters<ChatSession["apply"]>[0]) =>
      session.apply({ type: "lane", lane: index, provider: "Work", model, event });
    session.apply({ type: "run_started", run_id: "cmp", conversation_id: "c1" });
    session.apply({ type: "message_saved", message: { ...base, conversation_id: "c1", id: "u1", role: "user", content: "Q", status: "complete", model: null } });
    // Lane 1 is heard of first; both answers have the same id in their hidden conversations.
    lane(1, "b", { type: "run_started", run_id: "r1", conversation_id: "hidden1" });
    lane(0, "a", { type: "run_started", run_id: "r0", conversation_id: "hidden0" });
    lane(0, "a", { type: "answer_started", message: { ...base, id: "x", role: "assistant", content: "", status: "streaming", model: "a" } });
    lane(1, "b", { type: "answer_started", message: { ...base, id: "x", role: "assistant", content: "", status: "streaming", model: "b" } });
    lane(0, "a", { type: "text_delta", message_id: "x", text: "from a" });
    lane(1, "b", { type: "text_delta", message_id: "x", text: "from b" });
    lane(1, "b", { type: "approval_required", request_id: "q1", calls: [] });

    expect(session.comparison?.lanes.map((l) => [l.index, l.label, l.runId, l.answers.map((a) => a.text)])).toEqual([
      [0, "Work · a", "r0", ["from a"]],
      [1, "Work · b", "r1", ["from b"]],
    ]);
    expect(session.items.map((i) => i.id)).toEqual(["u1"]);
    expect(session.runId).toBe("cmp");
    expect(session.asking?.askedBy).toBe("Work · b");
    expect(session.asking?.feed).toBe(session.comparison?.lanes[1]);
    lane(0, "a", { type: "run_finished", reason: "completed", message: null });
    expect(session.comparison?.lanes[0].running).toBe(false);
    expect(session.comparison?.lanes[0].ended).toBe("completed");
    expect(session.running).toBe(true);
  });
});
