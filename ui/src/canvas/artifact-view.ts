//! How the canvas shows a file a tool produced: which preview fits it (by its type, then by its
//! name's extension), the language its text is highlighted as, its bytes turned into what the
//! preview shows (text cut to a size a window can take, a table, a `blob:` address), and the
//! document a rendered HTML file gets. Pure functions but for the blob addresses (the caller
//! revokes them) and papaparse, loaded with the first table. Only the canvas imports this
//! module, so none of it is in the main chunk. Nothing here puts a file's text in the page as
//! markup: the caller shows text as text, Markdown through markdown.ts's sanitiser, HTML only
//! as source or inside an empty-sandboxed frame.

import { blobUrl } from "../shared/media";
import type { Attachment } from "../lib/types";

export type PreviewKind = "image" | "audio" | "pdf" | "html" | "markdown" | "csv" | "tsv" | "json" | "code" | "other";

/** The most characters of a text shown; the rest is left out (Save As… has it all). */
export const MAX_SHOWN_CHARS = 1_000_000;
/** The most characters highlighted (a longer text is shown plain: highlighting it would stall the window). */
export const MAX_HIGHLIGHTED_CHARS = 200_000;
/** The most rows of a table shown. */
export const MAX_ROWS = 1_000;

/** The image types a webview shows in an `<img>`, by extension. */
const IMAGE_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
};

const AUDIO_TYPES: Record<string, string> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/ogg",
  flac: "audio/flac",
  m4a: "audio/mp4",
  aac: "audio/aac",
  weba: "audio/webm",
};

/** highlight.js's names (its common set) for code, by extension; "" for plain text. */
const LANGUAGE_OF_EXTENSION: Record<string, string> = {
  js: "javascript", mjs: "javascript", cjs: "javascript", jsx: "javascript",
  ts: "typescript", mts: "typescript", cts: "typescript", tsx: "typescript",
  py: "python", rs: "rust", go: "go", java: "java", kt: "kotlin", kts: "kotlin", swift: "swift",
  c: "c", h: "c", cc: "cpp", cpp: "cpp", cxx: "cpp", hpp: "cpp", cs: "csharp", m: "objectivec",
  rb: "ruby", php: "php", pl: "perl", lua: "lua", r: "r", vb: "vbnet",
  sh: "bash", bash: "bash", zsh: "bash", sql: "sql", graphql: "graphql", gql: "graphql",
  yaml: "yaml", yml: "yaml", toml: "ini", ini: "ini", cfg: "ini", conf: "ini",
  xml: "xml", html: "xml", htm: "xml", xhtml: "xml", svg: "xml",
  css: "css", scss: "scss", less: "less", json: "json", md: "markdown", markdown: "markdown",
  diff: "diff", patch: "diff", mk: "makefile",
};

/** The same, by type, for a file whose name says nothing. */
const LANGUAGE_OF_TYPE: Record<string, string> = {
  "text/javascript": "javascript", "application/javascript": "javascript", "application/x-javascript": "javascript",
  "text/typescript": "typescript", "application/typescript": "typescript",
  "text/x-python": "python", "application/x-python": "python", "text/x-script.python": "python",
  "text/x-rust": "rust", "text/x-go": "go", "text/x-java": "java", "text/x-java-source": "java",
  "text/x-c": "c", "text/x-csrc": "c", "text/x-c++": "cpp", "text/x-c++src": "cpp",
  "text/css": "css", "application/xml": "xml", "text/xml": "xml", "image/svg+xml": "xml",
  "application/x-sh": "bash", "application/x-shellscript": "bash", "text/x-shellscript": "bash",
  "application/sql": "sql", "text/x-sql": "sql",
  "application/yaml": "yaml", "application/x-yaml": "yaml", "text/yaml": "yaml", "text/x-yaml": "yaml",
  "application/toml": "ini", "text/x-diff": "diff", "text/x-patch": "diff",
};

/** Types that say no more than "bytes" or "text": the name's extension decides. */
const GENERIC_TYPES = new Set(["", "application/octet-stream", "binary/octet-stream", "text/plain"]);

/** "csv" for "scores.CSV"; "" when the name has no extension. */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

function baseType(mime: string): string {
  return (mime.split(";")[0] ?? "").trim().toLowerCase();
}

function kindOfType(mime: string): PreviewKind | null {
  if (GENERIC_TYPES.has(mime)) return null;
  if (Object.values(IMAGE_TYPES).includes(mime)) return "image";
  if (mime.startsWith("audio/")) return "audio";
  if (mime === "application/pdf") return "pdf";
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html";
  if (mime === "text/markdown" || mime === "text/x-markdown") return "markdown";
  if (mime === "text/csv") return "csv";
  if (mime === "text/tab-separated-values") return "tsv";
  if (mime === "application/json" || mime.endsWith("+json")) return "json";
  if (mime in LANGUAGE_OF_TYPE) return "code";
  return null;
}

function kindOfExtension(extension: string): PreviewKind | null {
  if (extension in IMAGE_TYPES) return "image";
  if (extension in AUDIO_TYPES) return "audio";
  switch (extension) {
    case "pdf":
      return "pdf";
    case "html":
    case "htm":
    case "xhtml":
      return "html";
    case "md":
    case "markdown":
      return "markdown";
    case "csv":
      return "csv";
    case "tsv":
    case "tab":
      return "tsv";
    case "json":
      return "json";
    case "txt":
    case "log":
      return "code";
    default:
      return extension in LANGUAGE_OF_EXTENSION ? "code" : null;
  }
}

/** The preview that fits `file`: by its type, else by its name's extension, else text or nothing. */
export function previewKind(file: Pick<Attachment, "name" | "mime" | "kind">): PreviewKind {
  const mime = baseType(file.mime);
  const kind = kindOfType(mime) ?? kindOfExtension(extensionOf(file.name));
  if (kind !== null) return kind;
  if (file.kind === "pdf") return "pdf";
  return mime.startsWith("text/") || file.kind === "text" ? "code" : "other";
}

/** The highlight.js language of a text file ("" when none fits: shown plain). */
export function languageOf(file: Pick<Attachment, "name" | "mime">, kind: PreviewKind): string {
  if (kind === "html") return "xml";
  if (kind === "json") return "json";
  if (kind === "markdown") return "markdown";
  return LANGUAGE_OF_EXTENSION[extensionOf(file.name)] ?? LANGUAGE_OF_TYPE[baseType(file.mime)] ?? "";
}

/** How a person would call the file's type: "PNG image", "CSV table", else its MIME type. */
export function typeLabel(file: Pick<Attachment, "name" | "mime" | "kind">): string {
  const kind = previewKind(file);
  const extension = extensionOf(file.name).toUpperCase();
  switch (kind) {
    case "image":
      return extension ? `${extension} image` : "Image";
    case "audio":
      return extension ? `${extension} audio` : "Audio";
    case "pdf":
      return "PDF";
    case "html":
      return "HTML";
    case "markdown":
      return "Markdown";
    case "csv":
      return "CSV table";
    case "tsv":
      return "TSV table";
    case "json":
      return "JSON";
    case "code":
      return extension && extension !== "TXT" ? `${extension} text` : "Text";
    default:
      return file.mime || "File";
  }
}

/** What the preview of a file shows, once its bytes are read. */
export type Prepared =
  | { type: "image" | "audio"; url: string }
  | { type: "text"; kind: "code" | "json" | "markdown" | "html"; text: string; whole: number | null; invalid: boolean }
  | { type: "table"; header: string[]; rows: string[][]; total: number; columns: number }
  | { type: "unreadable"; message: string };

/** A text cut to what is shown: the text, and how long the whole was when it was cut. */
function cut(text: string): { text: string; whole: number | null } {
  return text.length > MAX_SHOWN_CHARS ? { text: text.slice(0, MAX_SHOWN_CHARS), whole: text.length } : { text, whole: null };
}

function bytesOf(base64: string): Uint8Array | null {
  try {
    const binary = atob(base64.replace(/\s+/g, ""));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

/**
 * Turns the bytes of `file` (base64, as Rust read them) into what its preview of kind `kind`
 * shows. An image or audio file becomes a `blob:` address the caller revokes.
 */
export async function prepare(file: Pick<Attachment, "name" | "mime">, kind: PreviewKind, base64: string): Promise<Prepared> {
  if (kind === "image" || kind === "audio") {
    const known = kind === "image" ? IMAGE_TYPES : AUDIO_TYPES;
    const mime = baseType(file.mime);
    const type = GENERIC_TYPES.has(mime) ? (known[extensionOf(file.name)] ?? mime) : mime;
    const url = blobUrl(type, base64);
    return url ? { type: kind, url } : { type: "unreadable", message: "Its bytes did not come through whole." };
  }
  const bytes = bytesOf(base64);
  if (bytes === null) return { type: "unreadable", message: "Its bytes did not come through whole." };
  const text = new TextDecoder("utf-8").decode(bytes);
  if (kind === "csv" || kind === "tsv") {
    const table = await tableOf(text, kind === "tsv" ? "\t" : "");
    if (table) return table;
    return { type: "text", kind: "code", ...cut(text), invalid: false };
  }
  if (kind === "json") {
    try {
      return { type: "text", kind: "json", ...cut(JSON.stringify(JSON.parse(text), null, 2)), invalid: false };
    } catch {
      return { type: "text", kind: "json", ...cut(text), invalid: true };
    }
  }
  const shown: "code" | "markdown" | "html" = kind === "markdown" || kind === "html" ? kind : "code";
  return { type: "text", kind: shown, ...cut(text), invalid: false };
}

/** A CSV (`delimiter` "" guesses it) or TSV as rows: the first row as the header, at most MAX_ROWS after it. */
async function tableOf(text: string, delimiter: string): Promise<Extract<Prepared, { type: "table" }> | null> {
  const { default: Papa } = await import("papaparse");
  const parsed = Papa.parse<string[]>(text, { delimiter, skipEmptyLines: "greedy" });
  const [header, ...body] = parsed.data;
  if (!header) return null;
  const rows = body.slice(0, MAX_ROWS);
  const columns = Math.max(header.length, ...rows.map((r) => r.length));
  return { type: "table", header, rows, total: body.length, columns };
}

/**
 * What a rendered HTML file may load by itself: nothing from anywhere, but its own inline
 * styles and `data:` images and fonts. A policy in the document can only add to the window's
 * own (which the frame inherits), never loosen it.
 */
const FRAME_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; media-src data:";

/** The document a rendered HTML file gets in its frame: its own text, after a policy that keeps it off the network. */
export function frameDocument(html: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${FRAME_POLICY}">`;
  const doctype = html.match(/^\s*<!doctype[^>]*>/i)?.[0] ?? "";
  return `${doctype}${meta}${html.slice(doctype.length)}`;
}
