// Math in answers: shown as written until KaTeX (a lazy chunk) arrives, then typeset as MathML;
// only the answers that asked for it render again; nothing KaTeX can be told to write links,
// loads or runs anything; a dollar amount stays text.
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render } from "@testing-library/svelte";
import AnswerText from "../src/chat/AnswerText.svelte";
import { renderMarkdown } from "../src/shared/markdown";
import { loadMath } from "../src/shared/math";

afterEach(cleanup);

function html(markdown: string): HTMLElement {
  const box = document.createElement("div");
  box.innerHTML = renderMarkdown(markdown);
  return box;
}

describe("math in answers", () => {
  // First in this file: KaTeX is not loaded yet.
  it("shows the TeX as written until KaTeX is here, then typesets it; an answer without math keeps its DOM", async () => {
    const plain = render(AnswerText, { id: "plain", text: "No math here, only **words**.", streaming: false });
    const words = plain.container.querySelector("strong")!;
    const math = render(AnswerText, {
      id: "math",
      text: "Euler: $e^{i\\pi} + 1 = 0$, and\n\n$$\\frac{a}{b} = \\sqrt{c}$$\n\nafter it.",
      streaming: false,
    });
    const streaming = render(AnswerText, { id: "streaming", text: "So far: $x^2$ and\n\nmore", streaming: true });
    expect(streaming.container.querySelector("code.math-source")).not.toBeNull();
    expect([...math.container.querySelectorAll("code.math-source")].map((c) => c.textContent)).toEqual([
      "$e^{i\\pi} + 1 = 0$",
      "$$\\frac{a}{b} = \\sqrt{c}$$",
    ]);

    await loadMath();
    await vi.waitFor(() => expect(math.container.querySelector("math")).not.toBeNull());
    const [inline, display] = [...math.container.querySelectorAll("math")];
    expect(inline.getAttribute("display")).toBeNull();
    expect(inline.querySelector("msup")).not.toBeNull();
    expect(display.getAttribute("display")).toBe("block");
    expect(display.closest(".math-block")).not.toBeNull();
    expect(display.querySelector("mfrac")).not.toBeNull();
    expect(display.querySelector("msqrt")).not.toBeNull();
    // The TeX is kept for the reader (copy, screen readers), as MathML's own annotation.
    expect(display.querySelector('annotation[encoding="application/x-tex"]')!.textContent).toBe("\\frac{a}{b} = \\sqrt{c}");
    expect(math.container.querySelector("code.math-source")).toBeNull();
    expect(math.container.textContent).toContain("after it.");
    // An answer still streaming is typeset too.
    expect(streaming.container.querySelector("math msup")).not.toBeNull();
    expect(streaming.container.querySelector("code.math-source")).toBeNull();
    // The answer without math was not rendered again.
    expect(plain.container.querySelector("strong")).toBe(words);
  });

  it("takes \\( \\) and \\[ \\] too, and leaves dollar amounts and code alone", async () => {
    await loadMath();
    const box = html("Inline \\(x_1\\) and\n\n\\[\n\\sum_{i=0}^n i\n\\]\n\nIt costs $5 and $10, or `$x$` in code.");
    const maths = [...box.querySelectorAll("math")];
    expect(maths).toHaveLength(2);
    expect(maths[0].querySelector("msub")).not.toBeNull();
    expect(maths[1].getAttribute("display")).toBe("block");
    expect(box.textContent).toContain("It costs $5 and $10, or $x$ in code.");
    expect(box.querySelector("code")!.textContent).toBe("$x$");
  });

  it("cannot be told to link, load or run anything", async () => {
    await loadMath();
    const box = html(
      [
        "$\\href{javascript:alert(1)}{click}$",
        "$\\url{https://tracker.example/x}$",
        "$$\\includegraphics{https://tracker.example/a.png}$$",
        "$\\htmlClass{evil}{x} \\htmlStyle{color:red}{y} \\htmlData{a=b}{z} \\htmlId{i}{w}$",
        "$<img src=x onerror=alert(1)>$",
        "$\\text{<script>alert(2)</script>}$",
        "$$\\def\\a{\\a\\a}\\a$$",
      ].join("\n\n"),
    );
    expect(box.querySelector("a, img, script, [href], [src], [style], [onerror], .evil, #i, annotation-xml")).toBeNull();
    expect(box.innerHTML).not.toContain("tracker.example/a.png\"");
    // Each refused command shows as an error in the text, not as nothing.
    expect(box.querySelectorAll(".katex-error, merror").length).toBeGreaterThan(0);
  });
});
