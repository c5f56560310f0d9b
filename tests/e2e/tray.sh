#!/usr/bin/env bash
# The tray, seen (issue 61): on a display of its own (the suite's has no window manager, and a
# tray needs one and a panel), openbox and trayer (an XEmbed tray) run; Switchboard starts with
# Settings' "keep running in the tray" on. Closing its window hides it and leaves the app
# running with an icon in the tray; the icon's menu shows the window again, and quits.
# Usage: tray.sh HOME ARTIFACTS (run by tray.test.mjs inside xvfb-run, on the suite's D-Bus,
# under `timeout`, which ends this script's whole process group).
set -euo pipefail
home=$1 artifacts=$2
: "${SWITCHBOARD_BIN:?}"
mkdir -p "$home/config"
echo '{"keep_running_in_background": true}' > "$home/config/settings.json"

pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  # The app takes up to 5 s to stop its work; the display goes when this script ends.
  for _ in $(seq 1 35); do
    local left=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left=1; done
    [ "$left" = 0 ] && return 0
    sleep 0.2
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}
trap stop EXIT
trap 'exit 143' TERM INT HUP
fail() { echo "FAIL: $*" >&2; xwininfo -root -tree >&2 || true; exit 1; }
shot() { import -window root "$artifacts/$1.png" || echo "no picture $1" >&2; }
# Waits up to $1 seconds (of the clock, whatever each try costs) for the command after it.
until_ok() {
  local end=$(( SECONDS + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.2
  done
}
window_shown() { wmctrl -l | grep -q ' Switchboard$'; }
window_hidden() { local list; list=$(wmctrl -l) && ! grep -q ' Switchboard$' <<<"$list"; }
# The icon's window, by the class the tray-icon crate gives it on Linux (its XEmbed fallback).
icon_id() { xdotool search --onlyvisible --class '^tray-icon tray app switchboard$' | head -n 1; }
has_icon() { [ -n "$(icon_id)" ]; }
app_gone() { ! kill -0 "$app" 2>/dev/null; }
# The X geometry of window $1 as "x y w h"; fails if it has none (gone).
geometry() {
  local X= Y= WIDTH= HEIGHT=
  eval "$(xdotool getwindowgeometry --shell "$1" 2>/dev/null | grep -E '^(X|Y|WIDTH|HEIGHT)=-?[0-9]+$')"
  [ -n "$X" ] && [ -n "$Y" ] && [ -n "$WIDTH" ] && [ -n "$HEIGHT" ] || return 1
  echo "$X $Y $WIDTH $HEIGHT"
}

openbox >/dev/null 2>&1 & pids+=($!)
until_ok 20 wmctrl -m || fail "openbox did not start"
trayer --edge bottom --align right --widthtype pixel --width 120 --height 36 \
  --transparent false --tint 0x202020 --SetDockType true >/dev/null 2>&1 & pids+=($!)
until_ok 20 sh -c 'xwininfo -root -tree | grep -q "\"panel\""' || fail "trayer did not start"

SWITCHBOARD_HOME=$home "$SWITCHBOARD_BIN" >"$artifacts/tray-app.log" 2>&1 & app=$!; pids+=($app)
until_ok 90 window_shown || fail "the window did not open"
[ -z "$(icon_id)" ] || fail "a tray icon before the window was closed"

# Closed, as the window manager's close button does: hidden, the app goes on, in the tray.
wmctrl -c Switchboard || fail "the window could not be closed"
until_ok 15 window_hidden || fail "the window was not hidden"
until_ok 15 has_icon || fail "no tray icon"
icon=$(icon_id) || fail "the tray icon went"
# Embedded and laid out: inside trayer's panel (the screen's bottom right), the same twice.
settled() {
  local a b x y w h
  a=$(geometry "$icon") || return 1
  sleep 0.3
  b=$(geometry "$icon") || return 1
  [ "$a" = "$b" ] || return 1
  read -r x y w h <<<"$a"
  [ "$x" -ge 1160 ] && [ "$y" -ge 764 ] && [ "$w" -gt 4 ] && [ "$h" -gt 4 ]
}
until_ok 15 settled || fail "the tray icon was not laid out in the tray: $(geometry "$icon" || true)"
read -r _ _ icon_w icon_h <<<"$(geometry "$icon")" || fail "the tray icon went"
app_gone && fail "the app ended when its window was closed"
shot tray-icon
echo "ok: closed to the tray"

# The icon's menu, found as the app's shown popup-menu window; its items are clicked where
# they are (the first in its upper half, the second in its lower half).
menu_id() {
  local id
  for id in $(xdotool search --onlyvisible --pid "$app" 2>/dev/null); do
    [ "$id" = "$icon" ] && continue
    xprop -id "$id" _NET_WM_WINDOW_TYPE 2>/dev/null | grep -q POPUP_MENU && { echo "$id"; return 0; }
  done
  return 1
}
choose() {
  local item=$1 menu place mx my mw mh
  xdotool mousemove --window "$icon" $(( icon_w / 2 )) $(( icon_h / 2 )) click 1
  until_ok 10 menu_id || fail "the tray icon's menu did not open"
  menu=$(menu_id) || fail "the tray icon's menu closed"
  # GTK takes no click on a menu in its first half second.
  sleep 0.7
  place=$(geometry "$menu") || fail "the tray icon's menu closed"
  read -r mx my mw mh <<<"$place"
  [ "$item" = first ] && shot tray-menu
  local at=$(( mh * 3 / 4 ))
  [ "$item" = first ] && at=$(( mh / 4 ))
  xdotool mousemove $(( mx + mw / 2 )) $(( my + at )) sleep 0.2 click 1
  xdotool mousemove 0 0
}
choose first
until_ok 15 window_shown || fail "Show Switchboard did not show the window"
echo "ok: shown again from the tray"

wmctrl -c Switchboard || fail "the window could not be closed again"
until_ok 15 window_hidden || fail "the window was not hidden the second time"
choose second
until_ok 15 app_gone || fail "Quit did not end the app"
echo "ok: quit from the tray"
