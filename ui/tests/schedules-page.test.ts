// The Schedules page (issue 61) against the real core: a schedule kept through the form (its rule
// in words, its hostile name shown as text), a period Rust refuses said beside its field; Run now
// opening the run's conversation, whose tool call waits there for the person's approval (a
// scheduled run is never approved without them) and, answered, finishes; the record of runs; a
// schedule switched off and removed; and "Schedule this…" from a conversation filling the form.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp, renderAppAt } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

const HOSTILE = "<img src=x onerror=alert(1)>";
const card = (name: string) => screen.getAllByTestId("schedule-item").find((c) => c.dataset.name === name)!;

describe("the Schedules page", () => {
  it("keeps a schedule from its form, says what Rust refuses beside the field, and shows names as text", async () => {
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-schedules"));
    await screen.findByTestId("schedules-empty");

    await user.click(screen.getByTestId("schedules-new"));
    await user.type(screen.getByTestId("schedule-name"), `News ${HOSTILE}`);
    await user.type(screen.getByTestId("schedule-prompt"), "What happened overnight?");
    await user.selectOptions(screen.getByTestId("schedule-kind"), "weekdays");
    await user.clear(screen.getByTestId("schedule-at"));
    await user.type(screen.getByTestId("schedule-at"), "07:30");
    await user.click(screen.getByTestId("schedule-save"));

    const name = `News ${HOSTILE}`;
    await waitFor(() => expect(screen.getByTestId("schedules-said").textContent).toBe(`Kept “${name}”: every day at 07:30, weekdays only.`));
    // The list is read again after the save, and again as Rust says it changed.
    await waitFor(() => expect(within(card(name)).getByTestId("schedule-rule").textContent).toBe("every day at 07:30, weekdays only"));
    expect(within(card(name)).getByTestId("schedule-next").textContent).toMatch(/^Next: /);
    expect(screen.getByTestId("schedules-list").querySelector("img")).toBeNull();
    const kept = await backend.seed(() => ipc.listSchedules());
    expect(kept[0].rule).toEqual({ kind: "daily", days: 1, at: "07:30", weekdays_only: true });
    expect(kept[0].missed).toBe("run_once");
    expect(kept[0].approval_wait_minutes).toBe(30);

    // Every two minutes is too often: Rust says so beside the field.
    await user.click(screen.getByTestId("schedules-new"));
    await user.type(screen.getByTestId("schedule-name"), "Often");
    await user.type(screen.getByTestId("schedule-prompt"), "Again?");
    await user.selectOptions(screen.getByTestId("schedule-kind"), "minutes");
    await user.clear(screen.getByTestId("schedule-every"));
    await user.type(screen.getByTestId("schedule-every"), "2");
    await user.click(screen.getByTestId("schedule-save"));
    const form = screen.getByTestId("schedule-form");
    await waitFor(() => expect(form.textContent).toContain("A schedule runs at most every 5 minutes"));
    expect(screen.getByTestId("schedule-every").getAttribute("aria-describedby")).toBeTruthy();
    await user.click(screen.getByTestId("schedule-cancel"));
    expect((await backend.seed(() => ipc.listSchedules())).map((s) => s.name)).toEqual([name]);
  });

  it("runs a schedule now: its call waits in its conversation for the person, then it finishes; switched off and removed", async () => {
    await backend.addProvider("Work", {
      models: [{ id: "m" }],
      turns: [{ tools: [{ name: "fault__echo", arguments: { text: "scheduled" } }] }, { answer: ["Done on schedule."] }],
    });
    await backend.addFaultServer("fault");
    await backend.seed(() =>
      ipc.addSchedule({
        name: "Digest",
        prompt: "Make the digest",
        rule: { kind: "every", minutes: 360 },
        provider: "Work",
        model: "m",
        missed: "skip",
        approval_wait_minutes: 10,
      }),
    );
    const { user } = await renderApp();
    await user.click(screen.getByTestId("nav-schedules"));
    await waitFor(() => expect(within(card("Digest")).getByTestId("schedule-rule").textContent).toBe("every 6 hours"));
    expect(card("Digest").textContent).toContain("Missed runs are skipped");
    expect(card("Digest").textContent).toContain("Waits 10 min for an approval");

    await user.click(within(card("Digest")).getByTestId("schedule-run-now"));
    // The run's conversation opens, and its call is asked about there.
    const dialog = await screen.findByTestId("approval-dialog", undefined, { timeout: 20_000 });
    expect(within(dialog).getByTestId("approval-name").textContent).toBe("fault · Echo");
    await waitFor(async () => expect((await backend.seed(() => ipc.scheduleRuns(null, 10)))[0].status).toBe("waiting"));
    expect(await backend.seed(() => ipc.scheduleRunsWaiting())).toBe(1);
    // Rust pushed the count to the sidebar.
    await waitFor(() => expect(screen.getByTestId("schedules-waiting").textContent).toContain("1"));
    await user.click(within(dialog).getAllByTestId("approval-submit")[0]);
    await waitFor(() => expect(screen.getByTestId("message-list").textContent).toContain("Done on schedule."), { timeout: 20_000 });

    await user.click(screen.getByTestId("nav-schedules"));
    await waitFor(() => expect(screen.getAllByTestId("schedule-run")[0].dataset.status).toBe("completed"));
    const run = screen.getAllByTestId("schedule-run")[0];
    expect(run.textContent).toContain("Finished (by hand)");
    expect(run.textContent).toContain("Digest");

    await user.click(within(card("Digest")).getByTestId("schedule-switch"));
    await waitFor(() => expect(within(card("Digest")).getByTestId("schedule-next").textContent).toBe("Off"));
    expect((await backend.seed(() => ipc.listSchedules()))[0].enabled).toBe(false);

    await user.click(within(card("Digest")).getByTestId("schedule-menu"));
    await user.click(screen.getByTestId("schedule-remove"));
    await user.click(screen.getByTestId("confirm-ok"));
    await screen.findByTestId("schedules-empty");
    // Its conversation stays.
    const conversations = await backend.seed(() => ipc.listConversations());
    expect(conversations.some((c) => c.title.startsWith("Digest · "))).toBe(true);
  });

  it("opens the form from a conversation with its last message", async () => {
    await backend.addProvider("Work", { models: [{ id: "m" }], answer: ["Here is the weather."] });
    const chat = await backend.seed(() => ipc.createConversation("Weather"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
    await backend.run(chat.id, "Weather in Lisbon this morning?");
    const { user } = await renderAppAt(chat.id);
    await screen.findByText("Here is the weather.");
    await user.click(screen.getByTestId("conversation-menu"));
    await user.click(screen.getByTestId("schedule-this"));
    const prompt = await screen.findByTestId("schedule-prompt");
    expect((prompt as HTMLTextAreaElement).value).toBe("Weather in Lisbon this morning?");
    expect(screen.getByTestId("nav-schedules").getAttribute("aria-current")).toBe("page");
  });
});
