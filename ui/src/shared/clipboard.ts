//! Copying text for the person: the webview's clipboard API, or where it refuses (no secure
//! context, no permission), a hidden text area and the old copy command. Also the Copy
//! buttons' "Copied" moment.

/** Puts `text` on the clipboard; rejects when neither way works. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    // fall back below
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  const done = document.execCommand("copy");
  area.remove();
  if (!done) throw new Error("The clipboard is not available.");
}

/** How long a Copy button says "Copied". */
export const COPIED_MS = 1500;

/** Copies `text` and has `button` say so for a moment (or say it failed). */
export async function copyFrom(button: HTMLElement, text: string): Promise<void> {
  const label = button.dataset.label ?? button.textContent ?? "Copy";
  button.dataset.label = label;
  try {
    await copyText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Could not copy";
  }
  setTimeout(() => {
    button.textContent = label;
  }, COPIED_MS);
}
