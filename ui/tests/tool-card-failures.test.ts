// A failed or denied tool call's card (ToolCardView.svelte) says first what happened: a human
// headline, the likely cause, and Switchboard's own words about it behind "Details"; an error the
// server answered stays its words, in red, as the result. Against the real core: the calls are
// run by Rust on the fault peer (tests/peers/fault_server.py), so the words recognised are the
// ones Rust writes now.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { cleanup, screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import * as ipc from "../src/lib/ipc";
import { failureOf } from "../src/chat/ToolCardView.svelte";
import type { ToolCard } from "../src/chat/items";
import ToolCardView from "../src/chat/ToolCardView.svelte";
import { installRealBackend, type RealBackend, type Turn } from "./real-backend";
import { renderApp } from "./render-app";
import { renderWithStores } from "./render-with-stores";

const card: ToolCard = {
  call_id: "call_1", server: "fault", tool: "echo", display_name: "fault · Echo", arguments: "{}",
  state: "error", content: null, duration_ms: 5, reason: null, progress: null, retry_of: null, description: null,
  full_length: null, result_id: "t1", can_retry: true, answered: false, rich: false, artifacts: [], decided_by: null, task: null, late: null,
};

afterEach(() => cleanup());

describe("what a failed call's card says first", () => {
  it("names Switchboard's own words about a call, and takes anything else for the tool's answer", () => {
    const of = (over: Partial<ToolCard>) => failureOf({ ...card, ...over });
    expect(of({ state: "done", content: "ok" })).toBeNull();
    expect(of({ state: "running" })).toBeNull();
    expect(of({ content: "“fault” did not answer within 1 s" })).toEqual({
      headline: "Timed out",
      cause: "The server did not answer within 1 s.",
      details: true,
    });
    expect(of({ content: "“fault” did not answer within 2.5 s" })?.cause).toBe("The server did not answer within 2.5 s.");
    expect(
      of({ content: "“fault” failed: Transport closed: the server exited with code 7\n--- Last output from the server ---\nbye" }),
    ).toEqual({ headline: "The server stopped", cause: "It stopped while the call ran; its last output is in the details.", details: true });
    expect(of({ content: "“fault” failed: Transport closed: the server exited or was killed by a signal" })?.cause).toBe(
      "It stopped while the call ran.",
    );
    expect(of({ content: "“fault” failed: it is not running right now (see the Servers page)" })?.headline).toBe(
      "The server is not running",
    );
    expect(of({ content: "“fault” failed: Invalid params: city" })).toEqual({
      headline: "The tool failed",
      cause: "The server answered the call with an error.",
      details: true,
    });
    expect(of({ server: null, tool: null, content: "There is no tool named `x`." })?.headline).toBe("No such tool");
    expect(of({ content: "The call to `fault__echo` was not run: expected an object. Send the arguments again…" })?.headline).toBe("Not run");
    expect(of({ content: "This call did not run: the run was interrupted before it finished." })?.cause).toBe(
      "The run was interrupted before this call ran.",
    );
    expect(of({ content: "The call was stopped before it finished; it may have done part of its work." })?.headline).toBe("Stopped");
    expect(of({ content: "The call to “fault” was stopped" })?.headline).toBe("Stopped");
    expect(of({ content: "“fault” asks you to sign in" })?.headline).toBe("Sign-in needed");
    expect(of({ content: "“fault” needs more permission than you gave it: sign in to it again" })?.headline).toBe("Sign-in needed");
    expect(of({ content: "Cannot start “fault”: no such file" })?.headline).toBe("The server did not start");
    // The server's own answer (isError): the result, not details.
    expect(of({ content: "Error executing tool flaky: flaky: x failed the first time, on purpose" })).toEqual({
      headline: "The tool failed",
      cause: "The server answered with an error: its words are the result below.",
      details: false,
    });
    // A server's words that only look like Switchboard's further in are still its own.
    expect(of({ content: "upstream said: “api” did not answer within 3 s" })?.details).toBe(false);
  });

  it("never reads the server's own answer for what happened, whatever it says", () => {
    // A server that ran a call and answers with Switchboard's words is still the server speaking.
    for (const content of ["This call did not run: the run was interrupted before it ran.", "“fault” did not answer within 1 s", "“fault” failed: Transport closed"]) {
      expect(failureOf({ ...card, state: "error", content, answered: true })).toEqual({
        headline: "The tool failed",
        cause: "The server answered with an error: its words are the result below.",
        details: false,
      });
    }
  });

  it("says who denied a call, and the person's reason", () => {
    const denied = (reason: string) => failureOf({ ...card, state: "denied", reason, content: reason });
    expect(denied("The user denied this call.")).toEqual({ headline: "Denied by you", cause: null, details: true });
    expect(denied("The user denied this call. Their reason: not on a Friday")?.cause).toBe("Your reason: not on a Friday");
    expect(denied("The user gave no answer; the call did not run.")?.headline).toBe("Not run");
    expect(denied("The run was stopped before the user answered; the call did not run.")?.cause).toBe(
      "The run was stopped before you answered.",
    );
    expect(denied("it is switched off in this conversation")).toEqual({
      headline: "Not allowed",
      cause: "Reason: it is switched off in this conversation",
      details: true,
    });
  });

  it("builds nothing of it while the card is folded, and a card that did not fail says none of it", async () => {
    const user = userEvent.setup();
    const failed = renderWithStores(ToolCardView, { card: { ...card, content: "“fault” did not answer within 1 s" } });
    expect(failed.queryByTestId("tool-failure")).toBeNull();
    await user.click(failed.container.querySelector("summary")!);
    expect(failed.getByTestId("tool-failure-headline").textContent).toBe("Timed out");
    failed.unmount();
    const done = renderWithStores(ToolCardView, { card: { ...card, state: "done", content: "hi" } });
    await user.click(done.container.querySelector("summary")!);
    expect(done.queryByTestId("tool-failure")).toBeNull();
    expect(done.getByTestId("tool-result").textContent).toBe("hi");
  });
});

describe("failed and denied calls in the window", { timeout: 60_000 }, () => {
  let backend: RealBackend;

  beforeEach(async () => {
    backend = await installRealBackend();
    sessionStorage.clear();
  });

  /** A conversation whose model calls `tool` (with `args`) once per turn, then answers "Done.". */
  async function calling(calls: { name: string; arguments?: Record<string, unknown> }[]): Promise<string> {
    const turns: Turn[] = calls.flatMap((call) => [{ tools: [call] }, { answer: ["Done."] }]);
    await backend.addProvider("Work", { models: [{ id: "m" }], turns });
    await backend.addFaultServer();
    const settings = await backend.seed(() => ipc.getSettings());
    await backend.seed(() => ipc.updateSettings({ ...settings, tool_timeout_secs: 1 }));
    const chat = await backend.seed(() => ipc.createConversation("Failures"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
    return chat.id;
  }

  /** Opens the conversation and each of its cards; the cards. */
  async function openCards(user: Awaited<ReturnType<typeof renderApp>>["user"], count: number): Promise<HTMLElement[]> {
    await user.click(screen.getAllByTestId("conversation-item")[0]);
    const cards = await waitFor(() => {
      const found = within(screen.getByTestId("message-list")).getAllByTestId("tool-card");
      expect(found).toHaveLength(count);
      return found;
    });
    for (const c of cards) await user.click(c.querySelector("summary")!);
    return cards;
  }

  it("a timeout, a crash and an unknown tool: a headline, the cause, and Rust's words behind Details", async () => {
    const id = await calling([{ name: "fault__hang" }, { name: "fault__crash" }, { name: "nowhere__tool" }]);
    await backend.run(id, "Hang");
    await backend.run(id, "Crash");
    await backend.serverIs("fault", "running");
    await backend.run(id, "Unknown");
    const { user } = await renderApp();
    const cards = await openCards(user, 3);
    const says = (c: HTMLElement) => [
      within(c).getByTestId("tool-failure-headline").textContent,
      within(c).queryByTestId("tool-failure-cause")?.textContent ?? null,
    ];
    expect(cards.map(says)).toEqual([
      ["Timed out", "The server did not answer within 1 s."],
      ["The server stopped", "It stopped while the call ran; its last output is in the details."],
      ["No such tool", "The model asked for a tool that no server here offers."],
    ]);
    for (const c of cards) {
      // Rust's words are there, folded under Details; no result of the tool's own is shown.
      const details = within(c).getByText("Details").closest("details")!;
      expect(details.open).toBe(false);
      expect(within(details).getByTestId("tool-result").dataset.view).toBe("details");
      expect(within(c).queryByText("Error")).toBeNull();
      expect(within(c).queryByTestId("tool-result-raw")).toBeNull();
      expect(within(c).getByTestId("tool-arguments")).toBeTruthy();
    }
    expect(within(cards[0]).getByTestId("tool-result").textContent).toBe("“fault” did not answer within 1 s");
    expect(within(cards[1]).getByTestId("tool-result").textContent).toContain("about to crash on purpose");
    expect(within(cards[2]).getByTestId("tool-result").textContent).toContain("There is no tool named `nowhere__tool`");
    await user.click(within(cards[1]).getByText("Details"));
    expect(within(cards[1]).getByText("Details").closest("details")!.open).toBe(true);
  });

  it("an error the server answered: the headline, then its words in red as the result; a denial: by you", async () => {
    const id = await calling([{ name: "fault__flaky", arguments: { key: "paris" } }, { name: "fault__echo", arguments: { text: "hi" } }]);
    await backend.run(id, "Flaky");
    await backend.run(id, "Echo", undefined, "deny");
    const { user } = await renderApp();
    const [flaky, denied] = await openCards(user, 2);

    expect(within(flaky).getByTestId("tool-failure-headline").textContent).toBe("The tool failed");
    expect(within(flaky).getByTestId("tool-failure-cause").textContent).toBe("The server answered with an error: its words are the result below.");
    expect(within(flaky).queryByText("Details")).toBeNull();
    const result = within(flaky).getByTestId("tool-result");
    expect(result.classList.contains("error")).toBe(true);
    expect(result.textContent).toContain("paris failed the first time, on purpose");
    expect(within(flaky).getByText("Error")).toBeTruthy();

    expect(denied.dataset.state).toBe("denied");
    expect(within(denied).getByTestId("tool-failure-headline").textContent).toBe("Denied by you");
    expect(within(denied).queryByTestId("tool-failure-cause")).toBeNull();
    expect(within(denied).getByTestId("tool-result").textContent).toBe("The user denied this call.");
    expect(within(denied).getByText("Details").closest("details")!.open).toBe(false);
  });
});
