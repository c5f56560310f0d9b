#!/usr/bin/env bash
# Runs bench/conversation_view.mjs (the conversation view under load; what it measures is
# written at its top) in the environment the e2e tests have (tests/e2e/run.sh, session.sh): a
# virtual display (Xvfb, 1280×900), a private session D-Bus and an unlocked gnome-keyring on it,
# so nothing of the person's own desktop session is used. Owns that environment: it starts the
# keyring daemon and stops it, with its scratch folders, when the bench ends.
#
#   PATH="$HOME/.cache/switchboard-dev/tools/bin:$PATH" \
#     bash bench/conversation_view.sh --app target/release/switchboard [--runs 3] [--only stream|open|cards|short]
#
# Relative paths (--app) are taken from the repository root. Needs tauri-driver on PATH,
# WebKitWebDriver (Debian package webkit2gtk-driver), xvfb-run, dbus-run-session, gnome-keyring,
# python3 and the e2e node modules (tests/e2e: npm ci).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ -z "${SWITCHBOARD_BENCH_SESSION:-}" ]]; then
  command -v tauri-driver >/dev/null || { echo "tauri-driver is not on PATH" >&2; exit 1; }
  command -v WebKitWebDriver >/dev/null || { echo "WebKitWebDriver is missing (Debian package webkit2gtk-driver)" >&2; exit 1; }
  export SWITCHBOARD_BENCH_SESSION=1
  exec xvfb-run -a -s "-screen 0 1280x900x24 -nolisten tcp" dbus-run-session -- bash bench/conversation_view.sh "$@"
fi

# Inside Xvfb and the private bus: the Secret Service, as the e2e tests have it.
source tests/e2e/keyring.sh

node bench/conversation_view.mjs "$@"
