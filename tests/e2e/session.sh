#!/usr/bin/env bash
# Inside dbus-run-session and Xvfb (see run.sh): start gnome-keyring's Secret Service on this
# private bus, run the real-keychain unit test and the WebDriver tests, stop what was started.
set -euo pipefail
source tests/e2e/keyring.sh

echo "== the real OS keychain, from the core (Secret Service on this private bus)"
SWITCHBOARD_TEST_KEYCHAIN=1 cargo test -p switchboard-core --quiet --lib keychain -- --nocapture 2>&1 | grep -v '^$'

echo "== the real window over WebDriver"
node --test --test-concurrency=1 --test-timeout=300000 "$@" tests/e2e/*.test.mjs
