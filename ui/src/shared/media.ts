//! Media from tool results as the window shows them: base64 from a server decoded into a blob
//! of the type the core checked (`ResultPart`), shown through a `blob:` address. An SVG is only
//! ever an `<img>` source this way — never markup in the page, so nothing in it can run. Also
//! the sizes the cards print. Pure functions but for the blob addresses the caller revokes.

/** A `blob:` address for base64 `data` of type `mimeType`; null when `data` is not base64. */
export function blobUrl(mimeType: string, data: string): string | null {
  let bytes: Uint8Array;
  try {
    const binary = atob(data.replace(/\s+/g, ""));
    bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  } catch {
    return null;
  }
  return URL.createObjectURL(new Blob([bytes as BlobPart], { type: mimeType }));
}

/** "812 B", "3.4 KB", "1.2 MB": a count of bytes as people read it. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The bytes base64 `data` decodes to, near enough for a label. */
export function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4);
}
