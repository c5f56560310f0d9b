#!/usr/bin/env bash
# Inside dbus-run-session and Xvfb (see run.sh): start gnome-keyring's Secret Service on this
# private bus, run the real-keychain unit test and the WebDriver tests, stop what was started.
set -euo pipefail
scratch=$(mktemp -d)
export XDG_DATA_HOME="$scratch/data" XDG_RUNTIME_DIR="$scratch/run" XDG_CONFIG_HOME="$scratch/config"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" && install -d -m 0700 "$XDG_RUNTIME_DIR"
export NO_AT_BRIDGE=1 GTK_A11Y=none

printf 'switchboard-e2e' | gnome-keyring-daemon --foreground --unlock --components=secrets >"$scratch/keyring.log" 2>&1 &
keyring_pid=$!
cleanup() { kill "$keyring_pid" 2>/dev/null || true; wait "$keyring_pid" 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT

for _ in $(seq 1 100); do
  if dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
       string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then
    break
  fi
  sleep 0.1
done
secret-tool store --label='switchboard e2e probe' switchboard-e2e probe <<<'probe' \
  || { echo "gnome-keyring did not start:" >&2; cat "$scratch/keyring.log" >&2; exit 1; }

echo "== the real OS keychain, from the core (Secret Service on this private bus)"
SWITCHBOARD_TEST_KEYCHAIN=1 cargo test -p switchboard-core --quiet --lib keychain -- --nocapture 2>&1 | grep -v '^$'

echo "== the real window over WebDriver"
node --test --test-concurrency=1 --test-timeout=300000 "$@" tests/e2e/*.test.mjs
