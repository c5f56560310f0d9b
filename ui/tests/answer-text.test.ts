// An answer's Markdown, block by block: while it streams, the blocks that can no longer change
// keep their DOM and are not parsed again, and whatever pieces it comes in, the blocks show
// what renderMarkdown shows for the whole text.
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render } from "@testing-library/svelte";
import DOMPurify from "dompurify";
import AnswerText from "../src/chat/AnswerText.svelte";
import { markdown, renderMarkdown } from "../src/shared/markdown";
import { AnswerBlocks } from "../src/chat/markdown-blocks";
import { loadHighlighter } from "../src/shared/highlight";

/** HTML as the DOM holds it: the sanitiser leaves text without tags as written ("&#60;"), the DOM writes "&lt;". */
function dom(html: string): string {
  const box = document.createElement("div");
  box.innerHTML = html;
  return box.innerHTML;
}

/** The raw text of each token the parser renders. */
function parsedRaws() {
  const raws: string[] = [];
  const parser = markdown.parser.bind(markdown);
  const spy = vi.spyOn(markdown, "parser").mockImplementation((tokens, options) => {
    raws.push(...tokens.map((t) => t.raw));
    return parser(tokens, options);
  });
  return { raws, spy };
}

const SAMPLES = [
  "# Heading\n\nA paragraph with **bold**, *em*, `code` and a [link](https://example.com).\n\n## Second\nText right under it.\n",
  "Intro:\n- one\n- two\n  - nested\n- three\n\n1. first\n2. second\n\nAfter the lists.",
  "Code:\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\nAnd `inline`.\n\n    indented code\n\nEnd.",
  "| Name | Value |\n|------|------:|\n| a    | 1     |\n| b    | 2     |\n\nBelow the table.\n\n> A quote\n> that goes on\n\n---\n\nLast.",
  "Raw <b>html</b> stays text.\n\n<div onclick=\"x()\">block html</div>\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>",
  "Setext\n======\n\nSub\n---\n\n***\n\n- [ ] task\n- [x] done\n\nA line  \nbreak and ~~struck~~ text.",
];

/** `text` fed in `size`-character pieces; returns the blocks after each. */
function stream(text: string, size: number, blocks = new AnswerBlocks()): string[][] {
  const steps: string[][] = [];
  for (let end = size; end < text.length + size; end += size) steps.push(blocks.render(text.slice(0, Math.min(end, text.length))));
  return steps;
}

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("an answer rendered block by block", () => {
  it("joins its blocks into what renderMarkdown gives for the whole text", () => {
    for (const text of SAMPLES) {
      expect(dom(new AnswerBlocks().render(text).join(""))).toBe(dom(renderMarkdown(text)));
    }
  });

  it("shows what renderMarkdown shows for the text so far, whatever pieces it streams in", () => {
    for (const text of SAMPLES) {
      for (const size of [3, 17]) {
        const blocks = new AnswerBlocks();
        for (let end = size; end < text.length + size; end += size) {
          const sofar = text.slice(0, Math.min(end, text.length));
          expect(dom(blocks.render(sofar).join("")), JSON.stringify(sofar)).toBe(dom(renderMarkdown(sofar)));
        }
      }
    }
  });

  it("shows what renderMarkdown shows for random mixes of block starts, streamed in random pieces", () => {
    const lines = [
      "", "", "text with *em*", "# Heading", "#", "#x", "- item", "-", "* star", "1. one", "2. two", "  - nested",
      "    indented", "```", "~~~", "> quote", "| a | b |", "|---|---|", "|-", "---", "***", "===", "<div>", "<pre>", "</pre>",
    ];
    // This seed's mixes catch a block kept as soon as another follows it (no blank line asked).
    let seed = 2;
    const random = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
    for (let doc = 0; doc < 40; doc++) {
      const text = Array.from({ length: 4 + Math.floor(random() * 16) }, () => lines[Math.floor(random() * lines.length)]).join("\n");
      const blocks = new AnswerBlocks();
      for (let end = 0; end < text.length; ) {
        end = Math.min(text.length, end + 1 + Math.floor(random() * 8));
        const sofar = text.slice(0, end);
        expect(dom(blocks.render(sofar).join("")), JSON.stringify(sofar)).toBe(dom(renderMarkdown(sofar)));
      }
    }
  }, 20_000);

  it("keeps blocks only once a blank line and a whole line follow them (lines can still join what is above)", () => {
    // Each pair: text streamed so far, then the text it becomes. Were the first block kept too
    // early, the second render would differ from renderMarkdown.
    const cases = [
      ["Para\n#", "Para\n#x\n"], // "#" is a heading, "#x" a line of the paragraph
      ["> a\n#", "> a\n#x\n"], // ... or of the quote
      ["Para\n| a |\n|-", "Para\n| a |\n|-x\n"], // a table's start, then not a table
      ["foo\n***\nbar", "foo\n***\nbar\n---\n"], // a setext underline takes the lines above it
      ["1. a\n\n2", "1. a\n\n2. b\n\nc\n"], // after a blank line, "2" is a paragraph, "2. b" the list's next item
    ];
    for (const [before, after] of cases) {
      const blocks = new AnswerBlocks();
      blocks.render(before);
      expect(dom(blocks.render(after).join("")), after).toBe(dom(renderMarkdown(after)));
    }
  });

  it("starts over when the text is not the text before with more after it", () => {
    const blocks = new AnswerBlocks();
    stream("# One\n\nFirst answer.\n\nMore of it.\n", 5, blocks);
    expect(dom(blocks.render("Another answer.").join(""))).toBe(dom(renderMarkdown("Another answer.")));
  });

  it("reads \\r\\n line ends as marked does", () => {
    const text = "# Title\r\n\r\nOne\r\ntwo\r\n\r\n- a\r\n- b\r\n\r\nEnd.";
    const steps = stream(text, 3);
    expect(dom(steps.at(-1)!.join(""))).toBe(dom(renderMarkdown(text)));
  });

  it("resolves link references across blocks once the answer is finished", () => {
    const text = "See [the docs][1] first.\n\nMore text here.\n\nAnd more.\n\n[1]: https://example.com/docs\n";
    const blocks = new AnswerBlocks();
    stream(text, 4, blocks);
    const finished = blocks.finish(text).join("");
    expect(dom(finished)).toBe(dom(renderMarkdown(text)));
    expect(finished).toContain('href="https://example.com/docs"');
  });
});

describe("AnswerText", () => {
  it("finished blocks are rendered once and their DOM is kept while the answer grows", async () => {
    const { raws } = parsedRaws();
    const first = "# Title\n\nThe first paragraph.\n\n";
    const view = render(AnswerText, { id: "grow", text: first + "The sec", streaming: true });
    const heading = view.container.querySelector("h1")!;
    const paragraph = view.container.querySelector("p")!;
    expect(heading.textContent).toBe("Title");

    // The second paragraph's first line is whole: the first paragraph is finished.
    let text = first + "The second paragraph.\n";
    await view.rerender({ id: "grow", text, streaming: true });
    raws.length = 0;
    for (const piece of ["It goes on.\n\n", "- a list\n", "- that grows\n\n", "Done."]) {
      text += piece;
      await view.rerender({ id: "grow", text, streaming: true });
    }
    expect(view.container.querySelector("h1")).toBe(heading);
    expect(view.container.querySelector("p")).toBe(paragraph);
    expect(view.container.querySelectorAll("li")).toHaveLength(2);
    expect(raws.length).toBeGreaterThan(0);
    expect(raws.filter((raw) => raw.startsWith("# Title") || raw.startsWith("The first"))).toEqual([]);
  });

  it("an unclosed code fence renders as code while streaming and the final render equals renderMarkdown of the whole text", async () => {
    const start = "Here is the code:\n\n```ts\nconst a = 1;\nconst b";
    const view = render(AnswerText, { id: "fence", text: start, streaming: true });
    expect(view.container.querySelector("pre code")?.textContent).toBe("const a = 1;\nconst b\n");

    const whole = start + " = 2;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThat is all.";
    await view.rerender({ id: "fence", text: whole, streaming: true });
    await view.rerender({ id: "fence", text: whole, streaming: false });
    expect(view.container.innerHTML.replace(/<!---->/g, "")).toBe(dom(renderMarkdown(whole)));
  });

  it("a finished answer is rendered once, however often it is shown", () => {
    const text = "# Kept\n\nA finished answer.\n\n- with\n- a list\n";
    const spy = vi.spyOn(DOMPurify, "sanitize");
    const first = render(AnswerText, { id: "done", text, streaming: false });
    const html = first.container.innerHTML;
    const calls = spy.mock.calls.length;
    expect(calls).toBeGreaterThan(0);
    first.unmount();

    const again = render(AnswerText, { id: "done", text, streaming: false });
    expect(again.container.innerHTML).toBe(html);
    expect(spy.mock.calls.length).toBe(calls);
  });

  it("keeps raw HTML as text and drops what could run", () => {
    const view = render(AnswerText, { id: "unsafe", text: SAMPLES[4], streaming: true });
    expect(view.container.querySelector("script, img, div, b")).toBeNull();
    expect(view.container.textContent).toContain("<script>alert(1)</script>");
  });
});

describe("an answer's code, tables, task lists and images", () => {
  const ANSWER = [
    "| Step | Status |\n|------|:------:|\n| 1 | done |",
    "- [x] read the notes\n- [ ] write the report",
    "```rust\nfn main() {\n    let x = \"hi\";\n}\n```",
    "![a chart](https://tracker.example.net/pixel.png?user=secret) and ![](data:image/png;base64,AAAA)",
  ].join("\n\n");

  it("never loads an image from an answer: it is a link that shows its address", () => {
    const box = document.createElement("div");
    box.innerHTML = renderMarkdown(ANSWER);
    expect(box.querySelector("img")).toBeNull();
    const links = [...box.querySelectorAll("a.image-link")];
    expect(links.map((a) => a.textContent)).toEqual([
      "Image “a chart”: https://tracker.example.net/pixel.png?user=secret",
      "Image: data:image/png;base64,AAAA",
    ]);
    expect(links[0].getAttribute("href")).toBe("https://tracker.example.net/pixel.png?user=secret");
    // Only https:, http: and mailto: stay links; the data: address is only shown.
    expect(links[1].hasAttribute("href")).toBe(false);
  });

  it("renders tables and task lists without form controls", () => {
    const box = document.createElement("div");
    box.innerHTML = renderMarkdown(ANSWER);
    expect([...box.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["Step", "Status"]);
    expect(box.querySelector("input")).toBeNull();
    const boxes = [...box.querySelectorAll(".task-box")];
    expect(boxes.map((b) => [b.textContent, b.classList.contains("task-done")])).toEqual([
      ["☑", true],
      ["☐", false],
    ]);
  });

  it("a code block has its language and a Copy button, and is highlighted once the highlighter has loaded", async () => {
    const view = render(AnswerText, { id: "code", text: ANSWER, streaming: false });
    const block = view.container.querySelector(".code-block")!;
    expect(block.querySelector(".code-lang")!.textContent).toBe("rust");
    expect(block.querySelector("button.code-copy")!.textContent).toBe("Copy");
    expect(block.querySelector("code")!.textContent).toBe('fn main() {\n    let x = "hi";\n}\n');
    // The first render asked for the highlighter; the answer renders again when it is here.
    await loadHighlighter();
    await vi.waitFor(() => expect(view.container.querySelector(".code-block .hljs-keyword")).not.toBeNull());
    const code = view.container.querySelector(".code-block code")!;
    expect(code.textContent).toBe('fn main() {\n    let x = "hi";\n}\n');
    expect(code.querySelector(".hljs-string")!.textContent).toBe('"hi"');
  });

  it("a table keeps its columns' alignment, and a code block's Copy button is a plain button", () => {
    const box = document.createElement("div");
    box.innerHTML = renderMarkdown("| a | b | c |\n| :-- | :-: | --: |\n| 1 | 2 | 3 |\n\n```\nx\n```");
    expect([...box.querySelectorAll("td")].map((td) => td.getAttribute("align"))).toEqual(["left", "center", "right"]);
    expect(box.querySelector("button.code-copy")!.getAttribute("type")).toBe("button");
  });

  it("highlighted code is still sanitised: a fence cannot smuggle markup in", async () => {
    await loadHighlighter();
    const box = document.createElement("div");
    box.innerHTML = renderMarkdown('```html\n<img src=x onerror="alert(1)"><script>alert(2)</script>\n```\n\n```"><img src=x onerror=alert(3)>\nx\n```');
    expect(box.querySelector("img, script, [onerror]")).toBeNull();
    expect(box.querySelectorAll(".code-block")).toHaveLength(2);
    expect(box.textContent).toContain('<img src=x onerror="alert(1)">');
  });
});
