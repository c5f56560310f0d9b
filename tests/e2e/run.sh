#!/usr/bin/env bash
# Runs the end-to-end tests in a virtual display (Xvfb) and a private session D-Bus with an
# unlocked gnome-keyring, so the app uses the real OS keychain (Secret Service) and nothing of
# the person's own desktop session. Needs SWITCHBOARD_BIN (the built app) and tauri-driver on PATH.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
: "${SWITCHBOARD_BIN:?set SWITCHBOARD_BIN to the built switchboard binary}"
export SWITCHBOARD_BIN
command -v tauri-driver >/dev/null || { echo "tauri-driver is not on PATH" >&2; exit 1; }
command -v WebKitWebDriver >/dev/null || { echo "WebKitWebDriver is missing (Debian package webkit2gtk-driver)" >&2; exit 1; }
exec xvfb-run -a -s "-screen 0 1600x1000x24 -nolisten tcp" dbus-run-session -- bash tests/e2e/session.sh "$@"
