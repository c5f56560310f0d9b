import { describe, expect, it } from "vitest";
import { contextLabel, givenLabel, givenLines, shortTokens } from "../src/chat/context-use";

describe("how full the model's window is", () => {
  it("says tokens in a few characters", () => {
    expect([950, 18_204, 128_000, 131_072, 1_048_576].map(shortTokens)).toEqual(["950", "18.2k", "128k", "131k", "1.05M"]);
  });

  it("says the share of the window, what fills it and how it was counted", () => {
    const said = contextLabel({ tokens: 18_204, window: 128_000, system: 204, tools: 3_000, history: 14_000, attachments: 1_000, skills: 400, counted_by: "o200k_base, calibrated" });
    expect(said.label).toBe("18.2k of 128k");
    expect(said.full).toBe(false);
    expect(said.title.split("\n")).toEqual([
      "The model was last given about 18,204 tokens of its window of 128,000 (14 %).",
      "System prompt: 204",
      "Tools' definitions: 3,000 (of which the list of skills: 400)",
      "Messages: 14,000",
      "Attached files and images: 1,000",
      "Counted with o200k_base, scaled to what the provider counted.",
    ]);
    const unknown = contextLabel({ tokens: 7_000, window: null, system: 0, tools: 0, history: 7_000, attachments: 0, skills: 0, counted_by: "estimate" });
    expect(unknown.label).toBe("7k tokens");
    expect(unknown.title).toContain("its window is not known");
    expect(unknown.title).toContain("Estimated at four bytes a token.");
    expect(contextLabel({ tokens: 7_000, window: 8_192, system: 0, tools: 0, history: 7_000, attachments: 0, skills: 0, counted_by: "estimate" }).full).toBe(true);
  });

  it("says what the conversation needs when it was fitted to a smaller window, marked as full", () => {
    const fitted = { tokens: 15_800, window: 16_384, system: 300, tools: 1_500, history: 14_000, attachments: 0, skills: 0, counted_by: "estimate" };
    const said = contextLabel({ ...fitted, needed: 31_000 });
    expect(said.label).toBe("15.8k of 16.4k · needs 31k");
    expect(said.full).toBe(true);
    const lines = said.title.split("\n");
    expect(lines[0]).toBe(
      "The conversation needs about 31,000 tokens; this model runs with a window of 16,384: older messages were summarised or left out. A model with a larger window (or a larger window for this one, on Providers) keeps them all.",
    );
    expect(lines.slice(1)).toEqual(contextLabel(fitted).title.split("\n"));

    // Marked even where the request itself takes little of the window.
    const small = contextLabel({ ...fitted, tokens: 6_000, history: 4_200, needed: 40_000 });
    expect(small.label).toBe("6k of 16.4k · needs 40k");
    expect(small.full).toBe(true);

    // What fitted whole says nothing more.
    for (const needed of [undefined, 12_000, 11_000]) {
      const whole = contextLabel({ ...fitted, tokens: 12_000, history: 10_200, needed });
      expect(whole.label).toBe("12k of 16.4k");
      expect(whole.full).toBe(false);
      expect(whole.title).not.toContain("needs");
    }
  });

  it("says what of the project's files and the memory the model was given, and which", () => {
    const base = { tokens: 9_000, window: 8_192, system: 4_000, tools: 0, history: 5_000, attachments: 0, skills: 0, counted_by: "estimate" };
    expect(givenLabel(base)).toBeNull();
    expect(givenLabel({ ...base, given: { whole: [], passages: [], facts: [] } })).toBeNull();
    const used = { ...base, given: { whole: [], passages: ["manual.txt, passage 3 of 400", "manual.txt, passage 9 of 400"], facts: ["The bike is blue."] } };
    const said = givenLabel(used);
    expect(said?.label).toBe("2 passages · 1 fact");
    expect(said?.title).toBe("The model was last given 2 passages, 1 fact with the system prompt. Click to see which.");
    expect(said?.lists).toEqual([
      { heading: "Passages of the project's files", items: ["manual.txt, passage 3 of 400", "manual.txt, passage 9 of 400"] },
      { heading: "Remembered facts", items: ["The bike is blue."] },
    ]);
    expect(givenLabel({ ...base, given: { whole: ["notes.md"], passages: [], facts: [] } })?.label).toBe("1 file");
    expect(contextLabel(used).title.split("\n")[1]).toBe("System prompt: 4,000 (with 2 passages, 1 fact)");
  });

  it("says on an answer's tokens what its request was given, one line an item", () => {
    expect(givenLines(null)).toEqual([]);
    expect(givenLines({ whole: [], passages: [], facts: [] })).toEqual([]);
    expect(givenLines({ whole: ["notes.md"], passages: [], facts: ["The bike is blue."] })).toEqual([
      "Given with the system prompt: 1 file, 1 fact",
      "· notes.md",
      "· The bike is blue.",
    ]);
  });
});
