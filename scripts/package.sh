#!/usr/bin/env bash
# Release packages of Switchboard, built with Tauri's bundler (version from Cargo.toml):
#   bash scripts/package.sh             this OS's packages: .deb and .rpm on Linux (add
#                                       --appimage for an AppImage: its tools are downloaded
#                                       from GitHub), .msi and NSIS on Windows, .app and .dmg on macOS
#   bash scripts/package.sh --check     Linux: build the .deb and prove it — unpack it into a
#                                       scratch root, run the packaged `switchboard --version` and
#                                       `switchboard mcp list`, start the packaged app under Xvfb and
#                                       see its window, then remove the scratch root (nothing is left)
# Needs what `bash scripts/bootstrap.sh app` installs. Packages land in
# $CARGO_TARGET_DIR/release/bundle/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CACHE=${SWITCHBOARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/switchboard-dev}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE/target}

say() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'package: %s\n' "$*" >&2; exit 1; }

check=false
bundles=
case "$(uname -s)" in
  Linux) bundles=deb,rpm ;;
  Darwin) bundles=app,dmg ;;
  MINGW* | MSYS* | CYGWIN*) bundles=msi,nsis ;;
esac
for arg in "$@"; do
  case "$arg" in
    --check) check=true; bundles=deb ;;
    --appimage) bundles="$bundles,appimage" ;;
    *) die "usage: bash scripts/package.sh [--check] [--appimage]" ;;
  esac
done

[ -x ui/node_modules/.bin/tauri ] || (cd ui && npm install --no-audit --no-fund --loglevel=error)
say "building release packages ($bundles); the release build takes a while"
(cd ui && npm run --silent build)
# The UI is built above: the bundler would look for it from the wrong folder (it picks the
# first package.json it finds, which may be a test's).
ui/node_modules/.bin/tauri build --ci --bundles "$bundles" --config '{"build":{"beforeBuildCommand":""}}'
say "packages:"
find "$CARGO_TARGET_DIR/release/bundle" -maxdepth 2 -type f \( -name '*.deb' -o -name '*.rpm' -o -name '*.AppImage' -o -name '*.msi' -o -name '*.exe' -o -name '*.dmg' \) -newer Cargo.toml -print >&2

$check || exit 0

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
deb=$(ls -t "$CARGO_TARGET_DIR"/release/bundle/deb/*"_${version}_"*.deb 2>/dev/null | head -1 || true)
[ -n "$deb" ] && [ -f "$deb" ] || die "no .deb of version $version was built"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
say "checking $(basename "$deb") in a scratch root"
dpkg-deb -x "$deb" "$scratch/root"
bin="$scratch/root/usr/bin/switchboard"
[ -x "$bin" ] || die "the package has no usr/bin/switchboard"
ls "$scratch"/root/usr/share/applications/*.desktop >/dev/null || die "the package has no desktop entry"
ls "$scratch"/root/usr/share/icons/hicolor/*/apps/* >/dev/null || die "the package has no icons"
said=$("$bin" --version)
[ "$said" = "switchboard $version" ] || die "switchboard --version said “$said”, not “switchboard $version”"
echo "$said"
home="$scratch/home"
SWITCHBOARD_HOME="$home" "$bin" mcp list
# The packaged app, started as the desktop would, shows its window.
SWITCHBOARD_HOME="$home" BIN="$bin" SHOT="$scratch/window.png" xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- bash -c '
  "$BIN" & app=$!
  for _ in $(seq 120); do
    if xdotool search --onlyvisible --name "^Switchboard$" >/dev/null 2>&1; then
      sleep 2
      import -window root "$SHOT"
      kill "$app"; wait "$app" 2>/dev/null || true
      exit 0
    fi
    kill -0 "$app" 2>/dev/null || { echo "package: the packaged app exited before showing its window" >&2; exit 1; }
    sleep 0.5
  done
  kill "$app"; echo "package: no Switchboard window within 60 s" >&2; exit 1
'
[ -s "$scratch/window.png" ] || die "no picture of the window"
mkdir -p tests/e2e/artifacts && cp "$scratch/window.png" tests/e2e/artifacts/packaged-window.png
rm -rf "$scratch"
trap - EXIT
[ ! -e "$scratch" ] || die "the scratch root was left behind"
say "the .deb installs, runs its command line and its window, and is removed without a trace"
