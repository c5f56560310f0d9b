# Sourced inside dbus-run-session and Xvfb (tests/e2e/session.sh, bench/conversation_view.sh):
# starts gnome-keyring's Secret Service, unlocked, on this private bus with scratch XDG folders,
# waits until it answers, and stops it (removing the folders) when the sourcing shell exits.
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
