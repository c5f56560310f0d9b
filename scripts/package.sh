#!/usr/bin/env bash
# Release packages of Switchboard, built with Tauri's bundler (version from Cargo.toml):
#   bash scripts/package.sh             this OS's packages: .deb and .rpm on Linux (add
#                                       --appimage for an AppImage: its tools are downloaded
#                                       from GitHub), .msi and NSIS on Windows, .app and .dmg on macOS
#   bash scripts/package.sh --check     Linux: build the .deb and .rpm and prove them — unpack each
#                                       into a scratch root, check the desktop entry (switchboard://
#                                       links included) and icons, run the packaged `switchboard
#                                       --version`, `switchboard mcp list` and `switchboard
#                                       shell-command install|remove`, start the packaged app
#                                       under Xvfb with a scratch HOME and see its window, then
#                                       remove the scratch root (nothing is left)
# Needs what `bash scripts/bootstrap.sh test` installs. Packages land in
# $CARGO_TARGET_DIR/release/bundle/.
#
# Updates (Settings › Updates) are built in only when the release environment names them:
#   SWITCHBOARD_UPDATE_URL      the address of the update manifest (https)
#   SWITCHBOARD_UPDATE_PUBKEY   the public key of `tauri signer generate`
#   TAURI_SIGNING_PRIVATE_KEY   (and _PASSWORD) its private key: the bundler then signs each
#                               package and writes its .sig beside it
# Without them the packages say they are updated by whatever installed them.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CACHE=${SWITCHBOARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/switchboard-dev}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE/target}

say() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS" >&2; }
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
    --check) check=true; bundles=deb,rpm ;;
    --appimage) bundles="$bundles,appimage" ;;
    *) die "usage: bash scripts/package.sh [--check] [--appimage]" ;;
  esac
done

# The Windows installers' parts that put `switchboard` on the PATH cannot be built here; what
# can be checked is that they are what the bundler and Windows Installer read.
if $check; then
  python3 - <<'PY' || die "the Windows installer parts in src-tauri/windows are not well formed"
import json, re, xml.dom.minidom
conf = json.load(open("tauri.conf.json"))["bundle"]["windows"]
wix = xml.dom.minidom.parse(conf["wix"]["fragmentPaths"][0])
ids = [c.getAttribute("Id") for c in wix.getElementsByTagName("Component")]
assert ids == conf["wix"]["componentRefs"], ids
env = wix.getElementsByTagName("Environment")[0]
assert env.getAttribute("Name") == "PATH" and env.getAttribute("Value") == "[INSTALLDIR]"
nsh = open(conf["nsis"]["installerHooks"]).read()
for hook, verb in (("NSIS_HOOK_POSTINSTALL", "install"), ("NSIS_HOOK_PREUNINSTALL", "remove")):
    assert re.search(r"!macro %s\n(?:[ \t]+[^\n]*\n)*?[ \t]+ExecWait '\"\$INSTDIR\\\$\{MAINBINARYNAME\}\.exe\" shell-command %s'" % (hook, verb), nsh), hook
PY
fi
[ -x ui/node_modules/.bin/tauri ] || (cd ui && npm install --no-audit --no-fund --loglevel=error)
say "building release packages ($bundles); the release build takes a while"
(cd ui && npm run --silent build)
# The UI is built above: the bundler would look for it from the wrong folder (it picks the
# first package.json it finds, which may be a test's).
config=$(node -e '
  const env = process.env, config = { build: { beforeBuildCommand: "" } };
  if (env.SWITCHBOARD_UPDATE_URL || env.SWITCHBOARD_UPDATE_PUBKEY) {
    if (!env.SWITCHBOARD_UPDATE_URL || !env.SWITCHBOARD_UPDATE_PUBKEY) {
      console.error("package: set both SWITCHBOARD_UPDATE_URL and SWITCHBOARD_UPDATE_PUBKEY, or neither");
      process.exit(1);
    }
    const endpoints = env.SWITCHBOARD_UPDATE_URL.split(/\s+/).filter(Boolean);
    if (!endpoints.every((u) => u.startsWith("https://"))) {
      console.error("package: a release names https update addresses only");
      process.exit(1);
    }
    config.plugins = { updater: { endpoints, pubkey: env.SWITCHBOARD_UPDATE_PUBKEY.trim() } };
  }
  if (env.TAURI_SIGNING_PRIVATE_KEY) config.bundle = { createUpdaterArtifacts: true };
  console.log(JSON.stringify(config));
')
# The variables are the build's, not the packaged app's: it must not read them again at run time.
env -u SWITCHBOARD_UPDATE_URL -u SWITCHBOARD_UPDATE_PUBKEY \
  ui/node_modules/.bin/tauri build --ci --bundles "$bundles" --config "$config"
say "packages:"
find "$CARGO_TARGET_DIR/release/bundle" -maxdepth 2 -type f \( -name '*.deb' -o -name '*.rpm' -o -name '*.AppImage' -o -name '*.msi' -o -name '*.exe' -o -name '*.dmg' -o -name '*.sig' \) -newer Cargo.toml -print >&2

$check || exit 0

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
newest() { ls -t "$CARGO_TARGET_DIR"/release/bundle/"$1"/*"$2" 2>/dev/null | head -1 || true; }
deb=$(newest deb "_${version}_amd64.deb")
rpm=$(newest rpm "-${version}-1.x86_64.rpm")
[ -n "$deb" ] && [ -f "$deb" ] || die "no .deb of version $version was built"
[ -n "$rpm" ] && [ -f "$rpm" ] || die "no .rpm of version $version was built"
command -v bsdtar >/dev/null || die "bsdtar is missing (Debian package libarchive-tools) to unpack the .rpm"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# What a package must hold, wherever it was unpacked.
check_root() { # ROOT NAME
  local root=$1 name=$2 bin="$1/usr/bin/switchboard" desktop said
  [ -x "$bin" ] || die "$name has no usr/bin/switchboard"
  desktop=$(ls "$root"/usr/share/applications/*.desktop 2>/dev/null | head -1)
  [ -n "$desktop" ] || die "$name has no desktop entry"
  # `%u`: the desktop hands the link it opens to the app (Tauri's stock entry has none).
  grep -qx 'Exec=switchboard %u' "$desktop" || die "$name's desktop entry does not hand links to switchboard: $(grep '^Exec' "$desktop")"
  grep -q '^MimeType=.*x-scheme-handler/switchboard' "$desktop" \
    || die "$name's desktop entry does not take switchboard:// links"
  if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$desktop" || die "$name's desktop entry is not valid"; fi
  ls "$root"/usr/share/icons/hicolor/*/apps/* >/dev/null || die "$name has no icons"
  said=$("$bin" --version)
  [ "$said" = "switchboard $version" ] || die "$name: switchboard --version said “$said”, not “switchboard $version”"
  echo "$name: $said; $(grep '^Exec' "$desktop"); $(grep '^MimeType' "$desktop")"
}

say "checking $(basename "$rpm") in a scratch root"
mkdir -p "$scratch/rpm"
bsdtar -xf "$rpm" -C "$scratch/rpm"
check_root "$scratch/rpm" "$(basename "$rpm")"

say "checking $(basename "$deb") in a scratch root"
dpkg-deb -x "$deb" "$scratch/root"
check_root "$scratch/root" "$(basename "$deb")"
bin="$scratch/root/usr/bin/switchboard"
# Everything the packaged app writes goes under the scratch root: its home, and HOME itself.
user="$scratch/user"
mkdir -p "$user"
run_packaged() { env HOME="$user" XDG_CACHE_HOME="$user/.cache" XDG_CONFIG_HOME="$user/.config" XDG_DATA_HOME="$user/.local/share" SWITCHBOARD_HOME="$scratch/home" "$@"; }
run_packaged "$bin" mcp list
# The command line on the PATH: the package's own /usr/bin/switchboard is enough, and
# `shell-command install` leaves it alone; off the PATH, it links ~/.local/bin/switchboard to
# the binary (what the macOS app and the AppImage do), which runs, and `remove` takes it away.
said=$(run_packaged PATH="$scratch/root/usr/bin:/usr/bin:/bin" "$bin" shell-command install --json)
node -e 'const s = JSON.parse(process.argv[1]); if (!s.current || s.changed !== false) { console.error("package: shell-command install changed a packaged switchboard: " + process.argv[1]); process.exit(1); }' "$said"
said=$(run_packaged PATH=/usr/bin:/bin "$bin" shell-command install --json)
node -e 'const s = JSON.parse(process.argv[1]); if (!s.installed || s.changed !== true || s.on_path || !s.hint) { console.error("package: shell-command install off the PATH: " + process.argv[1]); process.exit(1); }' "$said"
[ "$(readlink "$user/.local/bin/switchboard")" = "$bin" ] || die "shell-command install made no link at ~/.local/bin/switchboard"
said=$(run_packaged PATH="$user/.local/bin:/usr/bin:/bin" switchboard --version)
[ "$said" = "switchboard $version" ] || die "the linked switchboard said “$said”"
run_packaged PATH=/usr/bin:/bin "$bin" shell-command remove
[ ! -e "$user/.local/bin/switchboard" ] && [ ! -L "$user/.local/bin/switchboard" ] || die "shell-command remove left the link"
# The packaged app, started as the desktop would, shows its window.
run_packaged BIN="$bin" SHOT="$scratch/window.png" xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- bash -c '
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
say "the .deb and .rpm hold the app, its command line, its desktop entry and its window, and are removed without a trace"
