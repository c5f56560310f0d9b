//! How the Servers page's Browse shows what the MCP Registry says of a server: each way to
//! run it as a line of text and each value it needs as a label. (Which ways Switchboard can
//! install, and the name a server gets here, Rust says on each entry.)

import type { RegistryNeed, RegistrySource } from "../lib/types";

const KIND_LABEL: Record<RegistrySource["kind"], string> = {
  npm: "npm",
  pypi: "PyPI",
  oci: "OCI image",
  nuget: "NuGet",
  mcpb: "MCP bundle",
  remote: "remote",
  other: "other",
};

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
