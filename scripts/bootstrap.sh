#!/usr/bin/env bash
# Switchboard's two entry points for a fresh Debian/Ubuntu machine:
#   bash scripts/bootstrap.sh app    install what is missing, build, and open the window
#   bash scripts/bootstrap.sh test   install what is missing and run every test
# Prerequisites you install yourself: Rust (rustup) and Node.js >= 20.19 with npm.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# One cache outside the checkout, reused when present, never required.
CACHE=${SWITCHBOARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/switchboard-dev}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE/target}
TOOLS="$CACHE/tools"
mkdir -p "$CARGO_TARGET_DIR" "$TOOLS"

APT_PACKAGES=(libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev
  libxdo-dev libssl-dev libdbus-1-dev pkg-config build-essential file
  dbus dbus-x11 gnome-keyring libsecret-tools)
TEST_APT_PACKAGES=(xvfb xauth webkit2gtk-driver python3 python3-venv python3-gi gir1.2-gtk-3.0 xdotool imagemagick
  libarchive-tools desktop-file-utils openbox trayer wmctrl x11-utils)

# Each step says when it began (seconds since this script started), so a slow run shows where.
say() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS" >&2; }
die() { printf 'bootstrap: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    if [ -t 0 ]; then sudo "$@"; else sudo -n "$@" || die "needs root for: $* (run it once with sudo, or as root)"; fi
  else
    die "needs root to install Debian packages, and sudo is missing: run this as root"
  fi
}

install_apt() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

check_toolchains() {
  command -v cargo >/dev/null || die "Rust is missing: install it with rustup (https://rustup.rs), then run this again"
  rustc -vV | awk '/^release:/ { split($2, v, "."); exit !(v[1] > 1 || v[2] >= 90) }' \
    || die "Rust $(rustc -V | cut -d' ' -f2) is too old: Switchboard needs 1.90 or newer (rustup update)"
  command -v node >/dev/null || die "Node.js >= 20.19 is missing: install it, then run this again"
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
    || die "Node.js $(node --version) is too old: Switchboard's UI build needs >= 20.19"
}

# `npm install` rather than `npm ci`: the lock files leave registry addresses out, and npm then
# records no entries for other platforms' optional binaries (@tauri-apps/cli-*), which `npm ci`
# refuses as "out of sync". `npm install` installs the locked versions and leaves the lock as it is.
npm_install() { # DIR: install what the lock file says, unless already installed from it
  local dir=$1 stamp="$1/node_modules/.switchboard-lock"
  if [ ! -f "$stamp" ] || ! cmp -s "$dir/package-lock.json" "$stamp"; then
    say "installing npm packages in $dir"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
    cp "$dir/package-lock.json" "$stamp"
  fi
}

# Python peers (MCP servers written by others, the SDK for our own fault servers, and a real
# local inference engine with a small model) in a git-ignored virtual environment, reinstalled
# when either requirements file changes.
python_peers() {
  local venv=tests/peers/.venv stamp=tests/peers/.venv/.switchboard-requirements
  local wanted
  wanted=$(cat tests/peers/requirements.txt tests/peers/engine-requirements.txt)
  if [ ! -f "$stamp" ] || [ "$wanted" != "$(cat "$stamp")" ]; then
    say "installing Python MCP servers and the local model engine in $venv"
    python3 -m venv "$venv" || die "python3 -m venv failed (apt package python3-venv)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/peers/requirements.txt
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r tests/peers/engine-requirements.txt
    printf '%s' "$wanted" > "$stamp"
  fi
}

build_ui() {
  npm_install ui
  say "building the UI"
  (cd ui && npm run --silent build)
}

install_tauri_driver() {
  if [ ! -x "$TOOLS/bin/tauri-driver" ]; then
    say "installing tauri-driver (crates.io)"
    cargo install --locked --quiet --root "$TOOLS" tauri-driver --version '^2'
  fi
  export PATH="$TOOLS/bin:$PATH"
}

case "${1:-}" in
  app)
    check_toolchains
    install_apt "${APT_PACKAGES[@]}"
    build_ui
    say "building and starting Switchboard"
    exec cargo run --quiet --bin switchboard
    ;;
  test)
    check_toolchains
    install_apt "${APT_PACKAGES[@]}" "${TEST_APT_PACKAGES[@]}"
    build_ui
    npm_install tests/e2e
    npm_install tests/peers
    npm_install tests/conformance
    python_peers
    install_tauri_driver
    if command -v rustup >/dev/null; then rustup component add rustfmt clippy >/dev/null 2>&1 || true; fi
    say "rustfmt"
    cargo fmt --all -- --check
    say "clippy"
    cargo clippy --workspace --all-targets --quiet -- -D warnings
    say "the core crate stays Tauri-free"
    core_tree=$(cargo tree -p switchboard-core -e normal,build --prefix none)
    if grep -E '^(tauri|wry|webkit2gtk|gtk) ' <<<"$core_tree"; then
      die "switchboard-core depends on Tauri or WebKit"
    fi
    for var in OPENAI_API_KEY ANTHROPIC_API_KEY GEMINI_API_KEY OPENROUTER_API_KEY; do
      if [ -n "${!var:-}" ]; then say "live provider test runs: $var is set"
      else say "live provider test SKIPPED: $var is not set"; fi
    done
    say "core tests (no WebKit), with the real peers in tests/peers required"
    unset SWITCHBOARD_SKIP_PEERS
    cargo test -p switchboard-core --quiet
    say "the official MCP client conformance suite (what MCP 2025-11-25 and 2026-07-28 require) against our host"
    cargo build -p switchboard-core --example conformance_client --example ipc_serve --quiet
    bash tests/conformance/run.sh "$CARGO_TARGET_DIR/debug/examples/conformance_client"
    say "app crate tests"
    cargo test -p switchboard --quiet
    say "UI unit tests (those of the window run against the real core, through ipc_serve)"
    (cd ui && SWITCHBOARD_IPC_SERVE="$CARGO_TARGET_DIR/debug/examples/ipc_serve" npm test --silent)
    say "end-to-end tests in a real window"
    cargo build --bin switchboard --quiet
    SWITCHBOARD_BIN="$CARGO_TARGET_DIR/debug/switchboard" bash tests/e2e/run.sh
    say "every test passed"
    ;;
  *)
    die "usage: bash scripts/bootstrap.sh app|test"
    ;;
esac
