//! How the Servers page's Browse shows what the MCP Registry says of a server: which entry it
//! is (a name at a version), each way to run it as a line of text and as a chip, each value it
//! needs as a label, and who publishes it. (Which ways Switchboard can install, and the name it
//! gets here by default, made from its title, Rust says on each entry.)

import type { RegistryNeed, RegistryServer, RegistrySource } from "../lib/types";

const KIND_LABEL: Record<RegistrySource["kind"], string> = {
  npm: "npm",
  pypi: "PyPI",
  oci: "OCI image",
  nuget: "NuGet",
  mcpb: "MCP bundle",
  remote: "remote",
  other: "other",
};

/** One entry of the registry's list: a server at one version (the registry lists each version
 *  of a server as an entry of its own). */
export function entryKey(server: Pick<RegistryServer, "name" | "version">): string {
  return JSON.stringify([server.name, server.version]);
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

/** A remote address (rather than a package run on this computer). */
export function isRemote(source: RegistrySource): boolean {
  return source.kind === "remote";
}

const CHIP_OF_KIND: Record<RegistrySource["kind"], string | null> = {
  npm: "npm",
  pypi: "PyPI",
  oci: "Docker",
  nuget: "NuGet",
  mcpb: "Bundle",
  remote: null,
  other: null,
};

/** How a server can be run, as short chips: "stdio", "npm", "PyPI", "Docker", "Remote HTTP"… (each once). */
export function transportChips(server: RegistryServer): string[] {
  const chips = new Set<string>();
  for (const source of server.sources) {
    if (isRemote(source)) {
      chips.add(source.transport === "sse" ? "Remote SSE" : "Remote HTTP");
    } else {
      if (source.transport === "stdio") chips.add("stdio");
      const kind = CHIP_OF_KIND[source.kind];
      if (kind) chips.add(kind);
    }
  }
  return [...chips];
}

/** The secrets a server's sources ask for, each as "Authorization (header)"; none: []. */
export function secretsNeeded(server: RegistryServer): string[] {
  const names = new Set<string>();
  for (const source of server.sources) {
    for (const need of source.needs) {
      if (need.secret && need.required) names.add(`${need.name} (${need.kind === "environment" ? "environment variable" : need.kind})`);
    }
  }
  return [...names];
}

/** Who publishes it, from its namespace: "octo (GitHub)" for io.github.octo, "example.com" for com.example. */
export function publisherOf(server: RegistryServer): { publisher: string; namespace: string } {
  const slash = server.name.indexOf("/");
  const namespace = slash > 0 ? server.name.slice(0, slash) : server.name;
  const github = /^(?:io|com)\.github\.(.+)$/.exec(namespace);
  const publisher = github ? `${github[1]} (GitHub)` : namespace.split(".").reverse().join(".");
  return { publisher, namespace };
}

/** Its name for people: the title it gives, else the last part of its registry name. */
export function titleOf(server: RegistryServer): string {
  return server.title?.trim() || server.name.slice(server.name.lastIndexOf("/") + 1) || server.name;
}

/** The letter its avatar shows. */
export function initialOf(server: RegistryServer): string {
  const letter = [...titleOf(server)].find((c) => /[\p{L}\p{N}]/u.test(c));
  return (letter ?? "?").toLocaleUpperCase();
}

