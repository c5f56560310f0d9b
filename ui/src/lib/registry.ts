//! How the Servers page's Browse shows what the MCP Registry says of a server: each way to
//! run it as a line of text, each value it needs as a label, and which ways Switchboard can
//! install (the same rule as Rust's `install::installable`; Rust decides, this only greys out
//! the others).

import type { RegistryNeed, RegistrySource } from "./types";

const KIND_LABEL: Record<RegistrySource["kind"], string> = {
  npm: "npm",
  pypi: "PyPI",
  oci: "OCI image",
  nuget: "NuGet",
  mcpb: "MCP bundle",
  remote: "remote",
  other: "other",
};

/** Whether Switchboard can install this source: a stdio package of npm, PyPI or OCI, or a remote address. */
export function installable(source: RegistrySource): boolean {
  if (source.kind === "remote") return source.transport === "streamable-http" || source.transport === "sse";
  return (source.kind === "npm" || source.kind === "pypi" || source.kind === "oci") && source.transport === "stdio";
}

/** "npm · @scope/pkg@1.2.3 · stdio" */
export function sourceLabel(source: RegistrySource): string {
  const what = source.version ? `${source.identifier}@${source.version}` : source.identifier;
  return `${KIND_LABEL[source.kind]} · ${what} · ${source.transport}`;
}

/** "GITHUB_TOKEN (environment variable)" */
export function needLabel(need: RegistryNeed): string {
  const kind = need.kind === "environment" ? "environment variable" : need.kind;
  return `${need.name} (${kind}${need.secret ? ", secret" : ""})`;
}
