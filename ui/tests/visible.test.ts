// The approval dialog's rule for hidden characters: each one is named, nothing else changes.
import { describe, expect, it } from "vitest";
import { visibleWhitespace } from "../src/shared/visible";

describe("visibleWhitespace", () => {
  it("names bidi overrides and isolates, so a reversed file name reads as it is", () => {
    expect(visibleWhitespace("rm \u202efdp.exe \u2066x\u2069")).toBe("rm ⟨U+202E⟩fdp.exe ⟨U+2066⟩x⟨U+2069⟩");
  });

  it("names tag characters, variation selectors, soft hyphens and separators", () => {
    expect(visibleWhitespace("a\u{e0041}b\u{fe0f}c\u00add\u2028e\u061cf\u180eg\u{e0100}")).toBe(
      "a⟨U+E0041⟩b⟨U+FE0F⟩c⟨U+00AD⟩d⟨U+2028⟩e⟨U+061C⟩f⟨U+180E⟩g⟨U+E0100⟩",
    );
  });

  it("names what Unicode calls default-ignorable or format, by property: Hangul fillers, joiners, other format characters", () => {
    expect(visibleWhitespace("a\u3164b\u115fc\uffa0d\u034fe\u17b4f\ufff9g\u{1d173}h")).toBe(
      "a⟨U+3164⟩b⟨U+115F⟩c⟨U+FFA0⟩d⟨U+034F⟩e⟨U+17B4⟩f⟨U+FFF9⟩g⟨U+1D173⟩h",
    );
  });

  it("names DEL, C1 and C0 controls, and shows tabs, carriage returns and trailing spaces", () => {
    expect(visibleWhitespace("\u001b[2J\u007f\u009b\u0007")).toBe("⟨U+001B⟩[2J⟨U+007F⟩⟨U+009B⟩⟨U+0007⟩");
    expect(visibleWhitespace("a\tb\rc  \nd")).toBe("a⇥\tb␍c··\nd");
  });

  it("leaves ordinary text, accents, scripts and emoji as they are", () => {
    const plain = 'path "/tmp/日本語/é" 👍 {"n": 1}';
    expect(visibleWhitespace(plain)).toBe(plain);
  });
});
