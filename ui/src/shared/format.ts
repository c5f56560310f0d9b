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

/** The units of `bytes`, each a thousand of the one before (decimal, as disks and downloads say). */
const BYTE_UNITS = ["B", "KB", "MB", "GB", "TB", "PB"];

/**
 * A size in bytes, in decimal units: "812 B", "2.0 GB", "523 MB" (one decimal under 10, whole
 * from 10 on).
 */
export function bytes(n: number): string {
  let value = Number.isFinite(n) && n > 0 ? n : 0;
  let unit = 0;
  while (unit < BYTE_UNITS.length - 1 && Math.round(value) >= 1000) {
    value /= 1000;
    unit++;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  const shown = value < 9.95 ? value.toFixed(1) : String(Math.round(value));
  return `${shown} ${BYTE_UNITS[unit]}`;
}

/** A speed in bytes a second: "45 MB/s". */
export function bytesPerSecond(n: number): string {
  return `${bytes(n)}/s`;
}

/** Seconds to go, rounded up: "12 s left", "4 min left", "1 h 5 min left". */
export function timeLeft(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return `${s} s left`;
  const minutes = Math.ceil(s / 60);
  if (minutes < 60) return `${minutes} min left`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h left` : `${hours} h ${rest} min left`;
}
