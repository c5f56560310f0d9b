// The header's chip that says what of its project's files and its memory the model was last
// given (issue 62): it opens a panel of them as text, Escape closes it and gives the focus back,
// and the focus leaving it closes it.
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import GivenKnowledge from "../src/chat/GivenKnowledge.svelte";
import { givenOf } from "../src/chat/context-use";

afterEach(cleanup);

describe("what the model was given, in the header", () => {
  const given = givenOf({ whole: [], passages: ["<img src=x onerror=alert(1)>, passage 1 of 2"], facts: ["The bike is blue."] })!;

  it("opens a panel of them as text, closed by Escape (the focus back on the chip) and by the focus leaving", async () => {
    const user = userEvent.setup();
    render(GivenKnowledge, { given });
    // What Tab reaches after the chip in a header.
    const next = document.body.appendChild(document.createElement("button"));
    next.textContent = "Next";
    const chip = screen.getByTestId("conversation-given");
    expect(chip.getAttribute("aria-label")).toBe("Given with the system prompt: 1 passage · 1 fact");
    expect(chip.getAttribute("aria-controls")).toBeNull();
    await user.click(chip);
    const panel = screen.getByTestId("conversation-given-panel");
    expect(chip.getAttribute("aria-expanded")).toBe("true");
    expect(chip.getAttribute("aria-controls")).toBe(panel.id);
    expect(panel.querySelector("img")).toBeNull();
    expect(panel.textContent).toContain("<img src=x onerror=alert(1)>, passage 1 of 2");
    expect(panel.textContent).toContain("The bike is blue.");
    await user.keyboard("{Escape}");
    expect(screen.queryByTestId("conversation-given-panel")).toBeNull();
    expect(document.activeElement).toBe(chip);

    await user.click(chip);
    await user.tab(); // into the panel, to scroll it
    expect(document.activeElement).toBe(screen.getByTestId("conversation-given-panel"));
    await user.tab(); // past it
    expect(document.activeElement).toBe(next);
    expect(screen.queryByTestId("conversation-given-panel")).toBeNull();
    next.remove();
  });

  it("closes on a click of the chip where pressing it blurs it with no new focus (WebKit on macOS)", async () => {
    const user = userEvent.setup();
    render(GivenKnowledge, { given });
    const chip = screen.getByTestId("conversation-given");
    await user.click(chip);
    await fireEvent.focusOut(chip, { relatedTarget: null });
    expect(screen.getByTestId("conversation-given-panel")).toBeTruthy();
    await user.click(chip);
    expect(screen.queryByTestId("conversation-given-panel")).toBeNull();
  });
});
