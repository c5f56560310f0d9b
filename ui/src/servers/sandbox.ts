// What the Servers page says of a local server's sandbox besides Rust's own words: Rust's words
// starting with a capital. (The network a server newly put in a sandbox gets is Rust's to choose:
// `set_mcp_server_sandbox` with no network.)

/** Rust's words ("can read and write: ~/notes; …") as a line of their own: a capital first. */
export function sentence(said: string): string {
  return said.charAt(0).toUpperCase() + said.slice(1);
}
