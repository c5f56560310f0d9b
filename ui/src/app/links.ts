//! Links in the window never navigate it: a click (any button, any modifier) on a link is
//! stopped here and handed to `open`, which asks Rust to open it in the browser after its own
//! dialog shows the address. Rust's navigation guard is the wall; this is the door.

/** The link a pointer event landed on, if any. */
function linkOf(event: Event): HTMLAnchorElement | null {
  const target = event.target;
  if (!(target instanceof Element)) return null;
  const link = target.closest("a[href]");
  return link instanceof HTMLAnchorElement ? link : null;
}

/**
 * Keeps every link of `root` inside the app: clicks, middle clicks and Enter on a link call
 * `open` with its address instead. Returns a function that removes the handlers.
 */
export function keepLinksInside(root: Document | HTMLElement, open: (href: string) => void): () => void {
  const onClick = (event: Event): void => {
    const link = linkOf(event);
    if (!link) return;
    event.preventDefault();
    if (event.type === "auxclick" && (event as MouseEvent).button !== 1) return;
    open(link.getAttribute("href") ?? "");
  };
  root.addEventListener("click", onClick);
  root.addEventListener("auxclick", onClick);
  return () => {
    root.removeEventListener("click", onClick);
    root.removeEventListener("auxclick", onClick);
  };
}
