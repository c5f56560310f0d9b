//! Words and dates as the UI shows them. Pure functions.

import type { MessageStatus, Role } from "../lib/types";

/** `text` safe inside HTML, in an element or a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A conversation's title as shown: "Untitled" when it has none or only spaces (DESIGN.md). */
export function conversationTitle(title: string | null | undefined): string {
  return title?.trim() || "Untitled";
}

export function roleLabel(role: Role): string {
  switch (role) {
    case "user":
      return "You";
    case "assistant":
      return "Assistant";
    case "system":
      return "System";
    case "tool":
      return "Tool";
  }
}

export function statusLabel(status: MessageStatus): string | null {
  switch (status) {
    case "streaming":
      return "Writing…";
    case "interrupted":
      return "Interrupted";
    case "error":
      return "Failed";
    case "complete":
      return null;
  }
}

/** "14:05" today, "Mon" this week, else "3 Mar" (or "3 Mar 2023" in another year). */
export function shortWhen(epochMs: number, now: Date = new Date()): string {
  const date = new Date(epochMs);
  if (Number.isNaN(date.getTime())) return "";
  const sameDay = date.toDateString() === now.toDateString();
  if (sameDay) return date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  const ageMs = now.getTime() - date.getTime();
  if (ageMs >= 0 && ageMs < 6 * 24 * 3600 * 1000) {
    return date.toLocaleDateString(undefined, { weekday: "short" });
  }
  if (date.getFullYear() === now.getFullYear()) {
    return date.toLocaleDateString(undefined, { day: "numeric", month: "short" });
  }
  return date.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

export function fullWhen(epochMs: number): string {
  const date = new Date(epochMs);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** Mac keyboards say ⌘, the others Ctrl. */
export function isMac(): boolean {
  return typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
}
