import { afterEach, describe, expect, it } from "vitest";
import { keepLinksInside } from "../src/app/links";

describe("links in the window", () => {
  let stop: (() => void) | null = null;
  afterEach(() => {
    stop?.();
    document.body.replaceChildren();
  });

  function page(html: string): string[] {
    document.body.innerHTML = html;
    const opened: string[] = [];
    stop = keepLinksInside(document, (href) => opened.push(href));
    return opened;
  }

  it("never navigate the window: a click is handed to open with the address as written", () => {
    const opened = page(`<p>See <a href="https://example.com/a?b=1"><strong>the docs</strong></a></p>`);
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    document.querySelector("strong")!.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(opened).toEqual(["https://example.com/a?b=1"]);
  });

  it("a middle click or a modified click opens the same way; a right click opens nothing", () => {
    const opened = page(`<a href="mailto:me@example.com">mail</a>`);
    const link = document.querySelector("a")!;
    const middle = new MouseEvent("auxclick", { bubbles: true, cancelable: true, button: 1 });
    link.dispatchEvent(middle);
    const ctrl = new MouseEvent("click", { bubbles: true, cancelable: true, ctrlKey: true });
    link.dispatchEvent(ctrl);
    const right = new MouseEvent("auxclick", { bubbles: true, cancelable: true, button: 2 });
    link.dispatchEvent(right);
    expect([middle.defaultPrevented, ctrl.defaultPrevented, right.defaultPrevented]).toEqual([true, true, true]);
    expect(opened).toEqual(["mailto:me@example.com", "mailto:me@example.com"]);
  });

  it("clicks elsewhere are left alone", () => {
    const opened = page(`<button>Send</button><a>no address</a>`);
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    document.querySelector("button")!.dispatchEvent(click);
    document.querySelector("a")!.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
    expect(click.defaultPrevented).toBe(false);
    expect(opened).toEqual([]);
  });
});
