#!/usr/bin/env bash
# The tray, seen (issue 61): on a display of its own (the suite's has no window manager, and a
# tray needs one and a panel), openbox and trayer (an XEmbed tray) run; Switchboard starts with
# Settings' "keep running in the tray" on. Closing its window hides it and leaves the app
# running with an icon in the tray; the icon's menu shows the window again, and quits.
# Usage: tray.sh HOME ARTIFACTS (run by tray.test.mjs inside xvfb-run, on the suite's D-Bus).
set -euo pipefail
home=$1 artifacts=$2
: "${SWITCHBOARD_BIN:?}"
mkdir -p "$home/config"
echo '{"keep_running_in_background": true}' > "$home/config/settings.json"

pids=()
stop() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop EXIT
fail() { echo "FAIL: $*" >&2; xwininfo -root -tree >&2 || true; exit 1; }
shot() { import -window root "$artifacts/$1.png"; }
# Waits up to $1 seconds for the command after it to succeed.
until_ok() {
  local left=$(( $1 * 5 )); shift
  until "$@" >/dev/null 2>&1; do
    left=$(( left - 1 )); [ "$left" -gt 0 ] || return 1; sleep 0.2
  done
}
window_shown() { wmctrl -l | grep -q ' Switchboard$'; }
window_hidden() { ! window_shown; }
tray_icon() { xwininfo -root -tree | grep '"tray-icon tray app switchboard"'; }
app_gone() { ! kill -0 "$app" 2>/dev/null; }

openbox >/dev/null 2>&1 & pids+=($!)
until_ok 20 wmctrl -m || fail "openbox did not start"
trayer --edge bottom --align right --widthtype pixel --width 120 --height 36 \
  --transparent false --tint 0x202020 --SetDockType true >/dev/null 2>&1 & pids+=($!)
until_ok 20 sh -c 'xwininfo -root -tree | grep -q "\"panel\""' || fail "trayer did not start"

SWITCHBOARD_HOME=$home "$SWITCHBOARD_BIN" >"$artifacts/tray-app.log" 2>&1 & app=$!; pids+=($app)
until_ok 90 window_shown || fail "the window did not open"
tray_icon >/dev/null && fail "a tray icon before the window was closed"

# Closed, as the window manager's close button does: hidden, the app goes on, in the tray.
wmctrl -c Switchboard
until_ok 20 window_hidden || fail "the window was not hidden"
until_ok 20 tray_icon || fail "no tray icon"
sleep 1
app_gone && fail "the app ended when its window was closed"
shot tray-icon
echo "ok: closed to the tray"

# The icon's menu: its position is the icon's (absolute x, y and size, from xwininfo).
read -r x y w h < <(tray_icon | sed -E 's/.* ([0-9]+)x([0-9]+)\+-?[0-9]+\+-?[0-9]+ +\+(-?[0-9]+)\+(-?[0-9]+).*/\3 \4 \1 \2/')
cx=$(( x + w / 2 )) cy=$(( y + h / 2 ))
# The app's windows shown now (the menu is one of its own, shown over the rest).
shown_windows() { xdotool search --onlyvisible --pid "$app" 2>/dev/null | sort; }
open_menu() {
  local before; before=$(shown_windows | wc -l)
  xdotool mousemove "$cx" "$cy" click 1
  until_ok 20 sh -c "[ \$(xdotool search --onlyvisible --pid $app 2>/dev/null | wc -l) -gt $before ]" \
    || fail "the tray icon's menu did not open"
  sleep 0.5
}
open_menu
shot tray-menu
xdotool key Down Return
until_ok 20 window_shown || fail "Show Switchboard did not show the window"
echo "ok: shown again from the tray"

wmctrl -c Switchboard
until_ok 20 window_hidden || fail "the window was not hidden the second time"
open_menu
xdotool key Down Down Return
until_ok 20 app_gone || fail "Quit did not end the app"
echo "ok: quit from the tray"
